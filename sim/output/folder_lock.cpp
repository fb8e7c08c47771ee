#include "sim/output/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace sp::output {

namespace fs = std::filesystem;

namespace {

constexpr const char* kLockName = ".scalepoint.lock";

struct Held {
  int fd = -1;
  int count = 0;
  fs::path file;
};

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, Held>& registry() {
  static std::map<std::string, Held> r;
  return r;
}

std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "another process" : "pid " + pid;
}

}  // namespace

FolderLock::FolderLock(const fs::path& dir, const std::string& option) {
  std::error_code ec;
  key_ = fs::weakly_canonical(dir, ec).string();
  if (ec) key_ = fs::absolute(dir).string();
  const std::lock_guard<std::mutex> guard(registry_mutex());
  auto it = registry().find(key_);
  if (it != registry().end()) {
    ++it->second.count;
    return;
  }
  const fs::path file = fs::path(key_) / kLockName;
  // Locked, and still the file the name refers to (a holder that let go removes it: a lock on a
  // removed file would lock nothing).
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw InputError(SourceLocation{option, 0, 0}, "",
                       "cannot lock " + dir.string() + " for writing: " + std::error_code(errno, std::generic_category()).message());
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const std::string who = holder_of(fd);
      ::close(fd);
      throw InputError(SourceLocation{option, 0, 0}, "",
                       dir.string() + " is being written by another scalepoint (" + who + ")",
                       "wait for it to finish, or choose another folder");
    }
    struct stat opened {}, named {};
    if (::fstat(fd, &opened) == 0 && ::stat(file.c_str(), &named) == 0 && opened.st_ino == named.st_ino &&
        opened.st_dev == named.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) == 0) (void)::pwrite(fd, pid.data(), pid.size(), 0);
      registry().emplace(key_, Held{fd, 1, file});
      return;
    }
    ::close(fd);  // the holder removed it between our open and our lock: again, on the new file
  }
  throw InputError(SourceLocation{option, 0, 0}, "", "cannot lock " + dir.string() + " for writing: its lock file keeps changing");
}

FolderLock::~FolderLock() {
  const std::lock_guard<std::mutex> guard(registry_mutex());
  auto it = registry().find(key_);
  if (it == registry().end() || --it->second.count > 0) return;
  ::unlink(it->second.file.c_str());  // while still locked: no one can lock the name we remove
  ::close(it->second.fd);
  registry().erase(it);
}

void check_output_folder(const fs::path& dir, const std::string& option) {
  // A name the file system cannot hold (a component over NAME_MAX, 255 bytes on Linux) is said as
  // such, before the canonical path below fails on it.
  constexpr std::size_t kNameMax = 255;
  for (const fs::path& part : dir) {
    if (part.native().size() > kNameMax) {
      const std::string shown = dir.string().size() > 80 ? dir.string().substr(0, 80) + "..." : dir.string();
      throw InputError(SourceLocation{option, 0, 0}, "",
                       fmt::format("{}: a name of {} bytes in the path; the file system allows {}", shown,
                                   part.native().size(), kNameMax),
                       "use a shorter folder name");
    }
  }
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) {
    throw InputError(SourceLocation{option, 0, 0}, "", dir.string() + ": " + ec.message(), "name a folder you can write");
  }
  const std::string p = real.string();
  // The trees of programs, libraries, configuration and the kernel, at any depth (a sweep's files
  // in /usr/bin or /etc/cron.d would be written as root without a word); the folders above
  // everyone's own, themselves only: checkouts and CI workspaces live below them
  // (/usr/local/src, /var/lib/jenkins/workspace), and a file's folder comes here too
  // (`--out /tmp/fit.yaml` checks /tmp, which stays open).
  static const char* const kOwned[] = {"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc",
                                       "/sbin", "/sys", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64",
                                       "/usr/libexec", "/usr/include"};
  static const char* const kAbove[] = {"/usr", "/usr/local", "/usr/share", "/var", "/var/lib", "/var/log", "/var/cache",
                                       "/var/spool"};
  bool system = p == "/" || p.empty();
  for (const char* s : kOwned) system = system || p == s || p.rfind(std::string(s) + "/", 0) == 0;
  for (const char* s : kAbove) system = system || p == s;
  if (system) {
    throw InputError(SourceLocation{option, 0, 0}, "", dir.string() + " is the file system's root or a system folder, not an output folder",
                     "name a folder of your own, e.g. results/run1");
  }
}

void refuse_link(const fs::path& file, const std::string& option) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(file, ec))) {
    throw InputError(SourceLocation{option, 0, 0}, "",
                     file.string() + " is a symbolic link; scalepoint writes its outputs as files of their own, never through a link",
                     "remove the link");
  }
}

}  // namespace sp::output
