#include "sim/sweep/sweep_runner.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/output/folder_lock.hpp"
#include "sim/output/hdf5_writer.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/output/table.hpp"
#include "sim/scenario/scaling_table.hpp"
#include "sim/scenario/scenario.hpp"

namespace sp {

namespace fs = std::filesystem;

namespace {

std::string point_prefix(const SweepSpec& spec, const SweepPoint& p) {
  std::string out = std::to_string(p.id);
  for (const auto& key : spec.keys) out += "," + output::csv_field(spec.value(p, key));
  return out;
}

// One row saying why the point has no result: empty cells but status and message.
std::string failed_row(const SweepSpec& spec, const SweepPoint& p, const std::string& status,
                       const std::string& message) {
  std::string row = point_prefix(spec, p);
  for (const auto& c : scaling_table({}).columns) {
    row += "," + (c.name == "status" ? status : c.name == "message" ? output::csv_field(message) : std::string());
  }
  return row + "\n";
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A failed write (disk full, a file size limit, an I/O error) ends the sweep with the system's
// reason; the progress file still describes only rows that were written whole and synced, so
// --resume cuts the partial tail and goes on.
[[noreturn]] void write_failed(const std::string& file, int error) {
  throw std::system_error(error, std::generic_category(), "cannot write " + file);
}

void write_all(int fd, const std::string& text, const std::string& file) {
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) write_failed(file, n < 0 ? errno : ENOSPC);
    off += static_cast<std::size_t>(n);
  }
}

void sync(int fd, const std::string& file) {
  if (::fsync(fd) != 0 && errno != EINVAL) write_failed(file, errno);
}

}  // namespace

std::string sweep_header(const SweepSpec& spec) {
  std::string h = "point";
  // Swept keys as sweep.<key>: they may share a name with a result column (accelerators).
  for (const auto& key : spec.keys) h += "," + output::csv_field("sweep." + key);
  for (const auto& c : scaling_table({}).columns) h += "," + c.name;
  return h + "\n";
}

PointResult run_point(const SweepSpec& spec, const SweepPoint& p, const models::Catalog& catalog) {
  try {
    const ScenarioSpec s = load_scenario(spec.base_of(p), spec.overrides_of(p), catalog);
    const output::Table t = scaling_table(run_scenario(s));
    const std::string prefix = point_prefix(spec, p);
    std::string rows;
    for (std::size_t i = 0; i < t.rows(); ++i) {
      rows += prefix;
      for (const auto& c : t.columns) rows += "," + output::format_cell(c, i);
      rows += "\n";
    }
    return {rows, false};
  } catch (const InputError& e) {
    return {failed_row(spec, p, "invalid", e.what()), true};
  } catch (const ModelError& e) {
    return {failed_row(spec, p, "error", e.what()), true};
  } catch (const std::exception& e) {
    // Whatever else one point throws (a library's invalid_argument, an allocation failure) is
    // that point's error row, not the end of the sweep.
    return {failed_row(spec, p, "error", std::string("internal error: ") + e.what()), true};
  }
}

SweepWriter::SweepWriter(const std::string& dir, const SweepSpec& spec, bool resume) : dir_(dir), sha_(spec.sha256) {
  output::check_output_folder(dir_, "--out");
  fs::create_directories(dir_);
  lock_ = std::make_unique<output::FolderLock>(dir_, "--out");
  const fs::path csv = fs::path(dir_) / "sweep.csv", progress = fs::path(dir_) / "sweep.progress";
  const std::string header = sweep_header(spec);
  // Checked before anything is truncated or written: the two files are replaced, never a folder,
  // and never written through a link planted in their place.
  for (const fs::path& f : {csv, progress}) {
    output::refuse_link(f, "--out");
    if (config::exists_quietly(f.string()) && !config::regular_file_quietly(f.string())) {
      throw InputError(SourceLocation{"--out", 0, 0}, "", f.string() + " exists and is not a regular file");
    }
  }
  if (resume && config::exists_quietly(progress.string())) {
    const std::optional<SweepProgress> recorded = read_sweep_progress(progress.string());
    const SourceLocation where{"--resume", 0, 0};
    if (!recorded || recorded->sha != sha_) {
      throw InputError(where, "", progress.string() + " belongs to another sweep file (or is damaged)",
                       "run without --resume to start again");
    }
    bytes_ = recorded->bytes;
    checksum_ = recorded->checksum;
    const std::string written = config::read_text_file(csv.string());
    if (written.compare(0, header.size(), header) != 0) {
      throw InputError(where, "", csv.string() + " has another header than this sweep's");
    }
    // Trust the recorded prefix only if it is all there and unchanged.
    if (written.size() < bytes_) {
      throw InputError(where, "",
                       fmt::format("{} has {} bytes, but {} records {} finished", csv.string(), written.size(),
                                   progress.string(), bytes_),
                       "run without --resume to start again");
    }
    if (checksum(kChecksumStart, std::string_view(written).substr(0, bytes_)) != checksum_) {
      throw InputError(where, "", csv.string() + " has changed in the rows " + progress.string() + " records",
                       "run without --resume to start again");
    }
    // The count of points done is not under the checksum: it must be what the rows say (points
    // 0 .. done - 1, each with its rows), or a damaged count would repeat or skip points.
    const config::CsvTable rows(written.substr(0, bytes_), csv.string());
    std::set<std::int64_t> points;
    for (std::size_t i = 0; i < rows.rows(); ++i) points.insert(rows.integer(i, "point").value_or(-1));
    const long long done = recorded->done;
    const bool consistent = done >= 0 && done <= static_cast<long long>(spec.points.size()) && recorded->failed >= 0 &&
                            recorded->failed <= done && points.size() == static_cast<std::size_t>(done) &&
                            (points.empty() || (*points.begin() == 0 && *points.rbegin() == done - 1));
    if (!consistent) {
      throw InputError(where, "", progress.string() + " does not match the rows of " + csv.string() + " (damaged)",
                       "run without --resume to start again");
    }
    done_ = static_cast<int>(done);
    failed_ = static_cast<int>(recorded->failed);
    fs::resize_file(csv, bytes_);  // drops whatever a killed run wrote after its last finished point
    fd_ = ::open(csv.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  } else {
    fd_ = ::open(csv.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      write_all(fd_, header, csv.string());
      bytes_ = header.size();
      checksum_ = checksum(kChecksumStart, header);
      ::fsync(fd_);
      write_progress();
    }
  }
  if (fd_ < 0) throw InputError(SourceLocation{"--out", 0, 0}, "", "cannot write " + csv.string());
}

SweepWriter::~SweepWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void SweepWriter::add(int point, PointResult result) {
  pending_[point] = std::move(result);
  for (auto it = pending_.find(done_); it != pending_.end(); it = pending_.find(done_)) {
    const std::string& text = it->second.rows;
    if (it->second.failed) ++failed_;
    write_all(fd_, text, dir_ + "/sweep.csv");
    sync(fd_, dir_ + "/sweep.csv");  // the rows are on disk before the progress says so
    bytes_ += text.size();
    checksum_ = checksum(checksum_, text);
    ++done_;
    pending_.erase(it);
    write_progress();
  }
}

std::uint64_t SweepWriter::checksum(std::uint64_t state, std::string_view text) {
  for (unsigned char c : text) state = (state ^ c) * 1099511628211ull;
  return state;
}

std::optional<SweepProgress> read_sweep_progress(const std::string& path) {
  if (!config::exists_quietly(path)) return std::nullopt;
  std::istringstream in(config::read_text_file(path));
  SweepProgress p;
  // Read as signed: an unsigned read takes "-5" for 2^64 - 5, which a damaged file would then
  // report as a byte count.
  long long bytes = 0;
  in >> p.done >> bytes >> p.sha >> std::hex >> p.checksum >> std::dec >> p.failed;
  if (!in || bytes < 0) return std::nullopt;
  p.bytes = static_cast<std::uint64_t>(bytes);
  return p;
}

void SweepWriter::write_progress() {
  // Written whole and renamed: a kill leaves the old progress or the new one, never half.
  const fs::path tmp = fs::path(dir_) / "sweep.progress.tmp";
  const std::string text = fmt::format("{} {} {} {:016x} {}\n", done_, bytes_, sha_, checksum_, failed_);
  ::unlink(tmp.c_str());  // a killed run's, or a planted link: the file is new
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) write_failed(tmp.string(), errno);
  write_all(fd, text, tmp.string());
  sync(fd, tmp.string());
  ::close(fd);
  fs::rename(tmp, fs::path(dir_) / "sweep.progress");
}

void write_sweep_hdf5(const SweepSpec& spec, const std::string& dir) {
  const config::CsvTable csv = config::CsvTable::read((fs::path(dir) / "sweep.csv").string());
  const output::Table shape = scaling_table({});
  output::Table t;
  for (const std::string& name : csv.header()) {
    output::Column c{name, "", "", false, {}, {}};
    // Numeric when every cell is a number (failed points leave cells empty).
    bool numeric = name.rfind("sweep.", 0) != 0;
    for (std::size_t r = 0; r < csv.rows() && numeric; ++r) {
      const std::string& cell = csv.cell(r, name);
      char* end = nullptr;
      std::strtod(cell.c_str(), &end);
      numeric = cell.empty() || (end != cell.c_str() && *end == '\0');
    }
    if (name == "point") c = {name, "count", "point id in the sweep's expansion order", true, {}, {}};
    if (name.rfind("sweep.", 0) == 0) c.description = "the swept value of " + name.substr(6) + " (YAML)";
    for (const auto& sc : shape.columns) {
      if (sc.name != name) continue;
      c.description = sc.description;
      if (numeric) c = {sc.name, sc.unit, sc.description, sc.integer, {}, {}};
    }
    for (std::size_t r = 0; r < csv.rows(); ++r) {
      if (numeric) {
        c.values.push_back(csv.cell(r, name).empty() ? std::nan("") : csv.number(r, name).value_or(std::nan("")));
      } else {
        c.text.push_back(csv.cell(r, name));
      }
    }
    t.columns.push_back(std::move(c));
  }
  output::StagedFiles files(dir);
  files.write("sweep.h5", output::hdf5_image(t, {{"sweep_name", spec.name}, {"sweep_file", spec.file}, {"sweep_sha256", spec.sha256}}));
  files.commit();
}

Progress::Progress(int total, int already_done, bool quiet)
    : total_(total), start_done_(already_done), quiet_(quiet), tty_(::isatty(2) != 0), start_s_(now_s()) {}

void Progress::update(double done) {
  if (quiet_ || done == shown_) return;
  const double t = now_s();
  if (t - last_s_ < (tty_ ? 0.2 : 5.0) && done < total_) return;
  shown_ = done;
  last_s_ = t;
  const double rate = (done - start_done_) / std::max(1e-9, t - start_s_);
  const double eta = rate > 0 ? (total_ - done) / rate : 0;
  // Whole points as they are; a point in progress to a tenth, rounded down (never "8.0/8").
  const double whole = std::floor(done);
  const std::string count =
      done == whole ? fmt::format("{:.0f}", done) : fmt::format("{:.1f}", std::floor(done * 10) / 10);
  // A slow run's rate in two figures rather than "0.0 points/s".
  const std::string per_s = rate >= 1 ? fmt::format("{:.1f}", rate) : fmt::format("{:.2g}", rate);
  const std::string line =
      fmt::format("{}/{} points, {} points/s, ETA {:.0f} s", count, total_, per_s, std::max(0.0, eta));
  std::fprintf(stderr, tty_ ? "\r%s\033[K" : "%s\n", line.c_str());
}

void Progress::finish(double done) {
  if (quiet_) return;
  last_s_ = -1e9;
  update(done);
  if (tty_ && shown_ >= 0) std::fputc('\n', stderr);
}

}  // namespace sp
