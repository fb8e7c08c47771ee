#include "sim/output/staged_files.hpp"

#include <cerrno>
#include <fstream>
#include <system_error>
#include <stdexcept>

#include <unistd.h>

#include "sim/core/error.hpp"

namespace sp::output {

namespace fs = std::filesystem;

StagedFiles::StagedFiles(fs::path dir, std::string option) : dir_(std::move(dir)), option_(std::move(option)) {
  // A control character in a path would be changed on its way into a gnuplot script (or end a
  // line of it): refused, as the names the scenarios give are.
  if (has_control_chars(dir_.string())) {
    throw InputError(SourceLocation{option_, 0, 0}, "", "the folder's name must not hold control characters (tab, newline)");
  }
  std::error_code ec, probe;
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_, probe)) {
    const bool file = fs::exists(dir_, probe) && !fs::is_directory(dir_, probe);
    throw InputError(SourceLocation{option_, 0, 0}, "",
                     dir_.string() + " cannot be the output folder: " +
                         (file ? std::string("it is a file") : (ec ? ec : probe).message()));
  }
}

StagedFiles::~StagedFiles() {
  if (committed_) return;
  std::error_code ec;
  for (const auto& [tmp, final_path] : staged_) fs::remove(tmp, ec);
}

fs::path StagedFiles::stage(const std::string& name) {
  const fs::path final_path = dir_ / name;
  const fs::path tmp = dir_ / ("." + name + ".tmp." + std::to_string(::getpid()));
  if (has_control_chars(name)) {
    throw InputError(SourceLocation{option_, 0, 0}, "", "file names must not hold control characters (tab, newline)");
  }
  // The rename replaces whatever has the name: only ever an earlier output, never a folder, a
  // device (as root, /dev/null itself) or a pipe.
  std::error_code ec;
  const fs::file_status st = fs::status(final_path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    throw InputError(SourceLocation{option_, 0, 0}, "",
                     final_path.string() + " exists and is not a regular file; scalepoint replaces only files");
  }
  if (tmp.filename().string().size() > 255) {
    throw InputError(SourceLocation{option_, 0, 0}, "", name + ": file name too long (at most about 230 characters)");
  }
  staged_.emplace_back(tmp, final_path);
  return tmp;
}

void StagedFiles::write(const std::string& name, const std::string& content) {
  const fs::path tmp = stage(name);
  errno = 0;
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  // Disk full, a size limit or a read-only folder: the system's reason; nothing is renamed, and
  // the destructor removes what was staged.
  if (!out) throw std::system_error(errno ? errno : EIO, std::generic_category(), "cannot write " + tmp.string());
}

void StagedFiles::drop(const std::string& name) {
  const fs::path final_path = dir_ / name;
  std::erase_if(staged_, [&](const auto& entry) {
    if (entry.second != final_path) return false;
    std::error_code ec;
    fs::remove(entry.first, ec);
    return true;
  });
}

void StagedFiles::commit() {
  for (const auto& [tmp, final_path] : staged_) fs::rename(tmp, final_path);
  committed_ = true;
}

}  // namespace sp::output
