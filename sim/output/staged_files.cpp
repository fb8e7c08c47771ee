#include "sim/output/staged_files.hpp"

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <set>
#include <sstream>
#include <fstream>
#include <system_error>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include "sim/core/error.hpp"
#include "sim/output/manifest.hpp"

namespace sp::output {

namespace fs = std::filesystem;

StagedFiles::StagedFiles(fs::path dir, std::string option) : dir_(std::move(dir)), option_(std::move(option)) {
  // A control character in a path would be changed on its way into a gnuplot script (or end a
  // line of it): refused, as the names the scenarios give are.
  if (has_control_chars(dir_.string())) {
    throw InputError(SourceLocation{option_, 0, 0}, "", "the folder's name must not hold control characters (tab, newline)");
  }
  check_output_folder(dir_, option_);
  std::error_code ec, probe;
  created_ = !fs::exists(dir_, probe);
  fs::create_directories(dir_, ec);
  if (ec || !fs::is_directory(dir_, probe)) {
    const bool file = fs::exists(dir_, probe) && !fs::is_directory(dir_, probe);
    throw InputError(SourceLocation{option_, 0, 0}, "",
                     dir_.string() + " cannot be the output folder: " +
                         (file ? std::string("it is a file") : (ec ? ec : probe).message()));
  }
  lock_ = std::make_unique<FolderLock>(dir_, option_);
}

StagedFiles::~StagedFiles() {
  if (committed_) return;
  std::error_code ec;
  for (const auto& [tmp, final_path] : staged_) fs::remove(tmp, ec);
  // A folder made for outputs that never came is not left behind: its lock goes first, then the
  // folder, only if empty (fs::remove leaves a folder that holds anything).
  if (created_) {
    lock_.reset();
    fs::remove(dir_, ec);
  }
}

fs::path StagedFiles::stage(const std::string& name) {
  const fs::path final_path = dir_ / name;
  const fs::path tmp = dir_ / ("." + name + ".tmp." + std::to_string(::getpid()));
  if (has_control_chars(name)) {
    throw InputError(SourceLocation{option_, 0, 0}, "", "file names must not hold control characters (tab, newline)");
  }
  // The rename replaces whatever has the name: only ever an earlier output, never a folder, a
  // device (as root, /dev/null itself), a pipe or a link someone planted there.
  refuse_link(final_path, option_);
  std::error_code ec;
  const fs::file_status st = fs::status(final_path, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) {
    throw InputError(SourceLocation{option_, 0, 0}, "",
                     final_path.string() + " exists and is not a regular file; scalepoint replaces only files");
  }
  if (tmp.filename().string().size() > 255) {
    throw InputError(SourceLocation{option_, 0, 0}, "", name + ": file name too long (at most about 230 characters)");
  }
  // Whatever has the temporary's name (a killed run's, a planted link) goes: the file is new.
  fs::remove(tmp, ec);
  staged_.emplace_back(tmp, final_path);
  return tmp;
}

void StagedFiles::write(const std::string& name, const std::string& content) {
  const fs::path tmp = stage(name);
  // A new file (never through a link), every byte written and the close checked: disk full, a
  // size limit or a read-only folder is the system's reason; nothing is renamed, and the
  // destructor removes what was staged.
  const auto failed = [&](int err) {
    return std::system_error(err ? err : EIO, std::generic_category(), "cannot write " + tmp.string());
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw failed(errno);
  for (std::size_t done = 0; done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      throw failed(err);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) throw failed(errno);
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

namespace {
// Whether a PNG another program (gnuplot) wrote is whole: it ends with the IEND chunk, which a
// full disk or a file-size limit cuts off (the program may exit 0 all the same).
bool png_complete(const fs::path& png) {
  static constexpr unsigned char kIend[] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  std::ifstream in(png, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  if (size < static_cast<std::streamoff>(sizeof kIend)) return false;
  in.seekg(size - static_cast<std::streamoff>(sizeof kIend));
  char tail[sizeof kIend];
  in.read(tail, sizeof tail);
  return in && std::equal(std::begin(kIend), std::end(kIend), reinterpret_cast<const unsigned char*>(tail));
}
std::string read_small_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return in ? s.str() : std::string();
}
}  // namespace

void StagedFiles::commit() {
  // Nothing is renamed unless every file is whole: the files written here are checked as they are
  // written, a plot only now.
  for (const auto& [tmp, final_path] : staged_) {
    if (final_path.extension() == ".png" && !png_complete(tmp)) {
      throw std::system_error(EIO, std::generic_category(),
                              "cannot write " + final_path.string() + ": the plot is incomplete (disk full or a file-size limit?)");
    }
  }
  // A new manifest replaces an old one: the files the old one listed and the new one does not
  // (a timeline of an N no longer run) would be left beside outputs they do not belong to.
  std::set<std::string> stale;
  for (const auto& [tmp, final_path] : staged_) {
    if (final_path.filename() != "manifest.yaml") continue;
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(final_path, ec))) break;
    stale = manifest_files(read_small_file(final_path));
    for (const std::string& kept : manifest_files(read_small_file(tmp))) stale.erase(kept);
  }
  for (const auto& [tmp, final_path] : staged_) fs::rename(tmp, final_path);
  committed_ = true;
  for (const std::string& name : stale) {
    std::error_code ec;
    const fs::path old = dir_ / name;
    if (fs::is_regular_file(fs::symlink_status(old, ec))) fs::remove(old, ec);
  }
}

bool StagedFiles::keep_if(bool made, const std::string& name, std::vector<std::string>& listed) {
  if (made) {
    listed.push_back(name);
  } else {
    drop(name);
  }
  return made;
}

void refuse_output_over_input(const std::string& out, const std::vector<std::string>& inputs, const std::string& option) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::weakly_canonical(out, ec);
  if (ec) return;  // a path the system cannot resolve is reported where it is written
  for (const std::string& in : inputs) {
    std::error_code e;
    if (std::filesystem::weakly_canonical(in, e) == target && !e) {
      throw InputError(SourceLocation{option, 0, 0}, "",
                       out + " is also an input (" + in + "): writing it would replace the data it is computed from",
                       "name another file");
    }
  }
}

}  // namespace sp::output
