// One writer per output folder: a second scalepoint writing into a folder another is writing
// (two sweeps started into one --out) is refused at once, naming the folder and the holder's pid,
// before it touches anything. An advisory flock on `.scalepoint.lock` in the folder, released
// (and the file removed) when the last holder in this process lets go; the kernel releases it
// when a process dies, so a killed run leaves no lock behind. Re-entrant within a process: a
// sweep holds its folder while the files it writes at the end lock it again.
#pragma once

#include <filesystem>
#include <string>

namespace sp::output {

class FolderLock {
 public:
  /// `option` names the folder in messages (the option that gave it).
  FolderLock(const std::filesystem::path& dir, const std::string& option);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::string key_;
};

/// InputError (at `option`) where `dir` cannot be an output folder: the file system's root or a
/// system folder (/bin, /boot, /dev, /etc, /lib*, /proc, /sbin, /sys, /usr, /var and what lies
/// under /dev, /proc and /sys), resolved through links.
void check_output_folder(const std::filesystem::path& dir, const std::string& option);

/// InputError (at `option`) where `file`, an output about to be written or replaced, is a
/// symbolic link: its target would be written, not the folder's file.
void refuse_link(const std::filesystem::path& file, const std::string& option);

}  // namespace sp::output
