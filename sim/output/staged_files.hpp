// All-or-nothing output: every file is written under a temporary name in its final folder and
// renamed into place only when all of them are complete, so a failure never leaves partial
// results next to complete ones. Temporary files are removed if commit() is never reached. The
// folder is locked against a second scalepoint while the files are staged (folder_lock.hpp); it
// may not be the root or a system folder, and an output's name may not be a planted link.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "sim/output/folder_lock.hpp"

namespace sp::output {

/// Refuses (InputError at `option`) an output file that is one of `inputs`: writing it would
/// replace the data it was computed from.
void refuse_output_over_input(const std::string& out, const std::vector<std::string>& inputs,
                              const std::string& option = "--out");

class StagedFiles {
 public:
  /// `option` names the folder in messages: the command-line option that gave it.
  explicit StagedFiles(std::filesystem::path dir, std::string option = "--out");
  ~StagedFiles();
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  /// A temporary path to write `name` to; it becomes dir/name on commit().
  std::filesystem::path stage(const std::string& name);
  /// Writes `content` to the staged path of `name`.
  void write(const std::string& name, const std::string& content);
  /// Forgets a staged file (e.g. a plot that could not be made) and removes its temporary.
  void drop(const std::string& name);
  /// A staged plot: kept and added to `listed` (a manifest's files) when `made`, else dropped.
  bool keep_if(bool made, const std::string& name, std::vector<std::string>& listed);
  /// Renames every staged file into place.
  void commit();

  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::string option_;
  std::unique_ptr<FolderLock> lock_;
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> staged_;  // tmp, final
  bool committed_ = false;
  bool created_ = false;  // the folder did not exist: removed again, if empty, when nothing is committed
};

}  // namespace sp::output
