// Running a sweep: every point is the base scenario with its overrides, simulated as
// `scalepoint run` would, and written as rows of one CSV in point order, whatever order the
// points finish in, so that the bytes never depend on the rank count. After each point the
// CSV is flushed to disk and a progress file records how far it is complete; --resume truncates
// the CSV there and goes on. A point that fails is one row with its status and message.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "models/catalog.hpp"
#include "sim/output/folder_lock.hpp"
#include "sim/sweep/sweep_spec.hpp"

namespace sp {

/// point, one column per swept key (sweep.<key>), then the columns of `scalepoint run`'s summary.csv.
std::string sweep_header(const SweepSpec& spec);

struct PointResult {
  std::string rows;     // CSV lines, each ending in '\n'
  bool failed = false;  // one row saying why the point has no result
};

/// One point, simulated; never throws for a bad point.
PointResult run_point(const SweepSpec& spec, const SweepPoint& point, const models::Catalog& catalog);

/// What sweep.progress records (SweepWriter writes it after every point): points done, the bytes
/// of sweep.csv they fill, the sweep file's SHA-256, the FNV-1a checksum of those bytes, failures.
struct SweepProgress {
  long long done = 0;
  std::uint64_t bytes = 0;
  std::string sha;
  std::uint64_t checksum = 0;
  long long failed = 0;
};
/// The progress file at `path`; nullopt where it is missing or unreadable.
std::optional<SweepProgress> read_sweep_progress(const std::string& path);

/// sweep.csv and sweep.progress in `dir`, written strictly in point order.
class SweepWriter {
 public:
  /// Starts afresh, or with `resume` continues where sweep.progress says. InputError, with
  /// nothing changed, when the progress belongs to another sweep file, or sweep.csv has another
  /// header, is shorter than the progress records, or its recorded part has other bytes than were
  /// written (the progress keeps a checksum of them).
  SweepWriter(const std::string& dir, const SweepSpec& spec, bool resume);
  ~SweepWriter();
  SweepWriter(const SweepWriter&) = delete;
  SweepWriter& operator=(const SweepWriter&) = delete;

  /// Points [0, done()) are on disk.
  int done() const { return done_; }
  /// Buffers `point`'s result; writes (and syncs) every point that is now next in order.
  void add(int point, PointResult result);
  /// Points of the whole sweep (a resumed one's earlier points too) whose row says they failed.
  int failed() const { return failed_; }

 private:
  void write_progress();

  std::string dir_, sha_;
  std::unique_ptr<output::FolderLock> lock_;  // one writer per folder
  int fd_ = -1;
  int done_ = 0, failed_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t checksum_ = kChecksumStart;  // FNV-1a 64 of sweep.csv's first bytes_ bytes
  std::map<int, PointResult> pending_;

 public:
  static constexpr std::uint64_t kChecksumStart = 14695981039346656037ull;
  /// FNV-1a (64 bit) of `text` continued from `state`: integrity of the recorded rows, not security.
  static std::uint64_t checksum(std::uint64_t state, std::string_view text);
};

/// Points done / total, rate and ETA on stderr: redrawn in place on a terminal, a line every
/// few seconds otherwise.
class Progress {
 public:
  Progress(int total, int already_done, bool quiet);
  /// `done` may hold a share of the point in progress (3.4), shown to one decimal.
  void update(double done);
  void finish(double done);

 private:
  int total_, start_done_;
  double shown_ = -1;
  bool quiet_, tty_;
  double start_s_, last_s_ = -1e9;
};

struct SweepResult {
  int points = 0, ran = 0, failed = 0;
};

/// Serial, or with MPI ranks when launched under mpirun (rank 0 hands out points on demand and
/// writes; every rank computes). Returns on every rank; only rank 0's result is complete.
/// `finish` (may be empty) runs on rank 0 after the last point, while the folder is still locked
/// (the files written from the finished rows).
SweepResult run_sweep(const SweepSpec& spec, const std::string& dir, bool resume, bool quiet,
                      const std::function<void(const SweepResult&)>& finish = {});

/// sweep.h5 from the finished sweep.csv: the same columns as HDF5 datasets, with the units and
/// descriptions of `scalepoint run`'s results.h5 (the CSV, synced point by point, is the record
/// a killed sweep resumes from; the HDF5 file is derived from it, so it is the same bytes
/// however the sweep was run).
void write_sweep_hdf5(const SweepSpec& spec, const std::string& dir);

/// True when the process was started by an MPI launcher (mpirun, srun).
bool launched_by_mpi();

}  // namespace sp
