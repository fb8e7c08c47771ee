// scalepoint-bench: MPI collective and point-to-point timings for calibrating a platform's
// network (`scalepoint calibrate network`). Run as
//   mpirun -np N build/scalepoint-bench --out bench.csv
// Per operation and message size: warm-up calls, then timed repetitions (batches of calls), each
// the slowest rank's time between two barriers; written as min, median, p10 and p90. Two scopes: `intra`, ranks
// that share a node (MPI_Comm_split_type shared memory; every node runs at once and node 0's
// figures are kept), and `inter`, one rank per node. Sizes follow nccl-tests: the per-rank
// buffer of all_reduce and broadcast, the whole gathered buffer of all_gather and reduce_scatter.
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "calibration/bench/bench_stats.hpp"
#include "sim/config/quantity.hpp"
#include "sim/output/staged_files.hpp"

namespace {

struct Options {
  std::string out = "bench.csv";
  std::string min_bytes = "8 B", max_bytes = "1 GiB";
  int factor = 2;
  int iterations = 20, warmup = 5;
  double max_seconds = 2.0;  // per size: stop repeating once this much time has gone (>= 3 repetitions)
  std::vector<std::string> ops = {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "ping_pong"};
  std::vector<std::string> scopes = {"intra", "inter"};
};

double bus_factor(const std::string& op, int p) {
  if (op == "all_reduce") return 2.0 * (p - 1) / p;
  if (op == "reduce_scatter" || op == "all_gather") return static_cast<double>(p - 1) / p;
  return 1.0;  // broadcast, ping_pong
}

// One timed call of `op` on `comm` with `bytes` in nccl-tests' convention; returns the bytes
// actually moved (sizes round down to whole floats per rank).
struct Buffers {
  std::vector<float> send, recv;
};

std::size_t run_op(const std::string& op, std::size_t bytes, MPI_Comm comm, Buffers& b) {
  int p = 0, rank = 0;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  const std::size_t floats = std::max<std::size_t>(1, bytes / sizeof(float));
  if (op == "all_reduce") {
    b.send.resize(floats), b.recv.resize(floats);
    MPI_Allreduce(b.send.data(), b.recv.data(), static_cast<int>(floats), MPI_FLOAT, MPI_SUM, comm);
    return floats * sizeof(float);
  }
  if (op == "broadcast") {
    b.send.resize(floats);
    MPI_Bcast(b.send.data(), static_cast<int>(floats), MPI_FLOAT, 0, comm);
    return floats * sizeof(float);
  }
  const std::size_t per_rank = std::max<std::size_t>(1, floats / static_cast<std::size_t>(p));
  if (op == "all_gather") {
    b.send.resize(per_rank), b.recv.resize(per_rank * static_cast<std::size_t>(p));
    MPI_Allgather(b.send.data(), static_cast<int>(per_rank), MPI_FLOAT, b.recv.data(), static_cast<int>(per_rank),
                  MPI_FLOAT, comm);
    return per_rank * static_cast<std::size_t>(p) * sizeof(float);
  }
  if (op == "reduce_scatter") {
    b.send.resize(per_rank * static_cast<std::size_t>(p)), b.recv.resize(per_rank);
    MPI_Reduce_scatter_block(b.send.data(), b.recv.data(), static_cast<int>(per_rank), MPI_FLOAT, MPI_SUM, comm);
    return per_rank * static_cast<std::size_t>(p) * sizeof(float);
  }
  // ping_pong between ranks 0 and 1: one message each way; the time reported is half the round trip.
  b.send.resize(floats);
  if (rank == 0) {
    MPI_Send(b.send.data(), static_cast<int>(floats), MPI_FLOAT, 1, 0, comm);
    MPI_Recv(b.send.data(), static_cast<int>(floats), MPI_FLOAT, 1, 0, comm, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(b.send.data(), static_cast<int>(floats), MPI_FLOAT, 0, 0, comm, MPI_STATUS_IGNORE);
    MPI_Send(b.send.data(), static_cast<int>(floats), MPI_FLOAT, 0, 0, comm);
  }
  return floats * sizeof(float);
}

// Times `op` at `bytes` on `comm` (every member calls it); the summary is valid on all members.
// A repetition is a batch of back-to-back calls between two barriers, long enough (~100 us) that
// the barrier's skew between ranks does not swamp sub-microsecond operations (as OSU and
// nccl-tests time loops, not single calls); its time is the slowest rank's over the batch size.
sp::bench::TimingSummary time_op(const std::string& op, std::size_t bytes, MPI_Comm comm, const Options& o,
                                 Buffers& b, std::size_t& moved) {
  const auto batch_time = [&](int calls) {
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    for (int c = 0; c < calls; ++c) moved = run_op(op, bytes, comm, b);
    double local = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return (op == "ping_pong" ? slowest / 2 : slowest) / calls;
  };
  double one = 0;
  for (int rep = 0; rep < std::max(1, o.warmup); ++rep) one = batch_time(1);
  int calls = static_cast<int>(std::clamp(std::ceil(100e-6 / std::max(one, 1e-9)), 1.0, 1000.0));
  MPI_Bcast(&calls, 1, MPI_INT, 0, comm);
  std::vector<double> samples;
  const double start = MPI_Wtime();
  for (int rep = 0; rep < o.iterations; ++rep) {
    samples.push_back(batch_time(calls));
    // Rank 0 of the communicator decides, so every member leaves the loop together.
    int stop = samples.size() >= 3 && MPI_Wtime() - start > o.max_seconds ? 1 : 0;
    MPI_Bcast(&stop, 1, MPI_INT, 0, comm);
    if (stop) break;
  }
  return sp::bench::summarise_timings(samples);
}

std::string hostname() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  return std::string(name, static_cast<std::size_t>(len));
}

// The largest message: every rank holds a send and a receive buffer of it (all_gather's receive
// buffer is the whole gathered one), and nccl-tests' own sweeps stop at a few GiB.
constexpr double kMaxMessageBytes = 16.0 * (1ull << 30);

// A size option's bytes, or an error naming the option (the same on every rank, before any
// collective, so that all ranks stop together).
std::size_t message_bytes(const std::string& option, const std::string& text) {
  double b = 0;
  try {
    b = sp::config::parse_bytes(text).value();
  } catch (const std::exception& e) {
    throw std::invalid_argument(option + ": " + e.what());
  }
  if (!(b >= 1)) throw std::invalid_argument(option + ": must be at least 1 B, got \"" + text + "\"");
  if (b > kMaxMessageBytes) throw std::invalid_argument(option + ": at most 16 GiB a message, got \"" + text + "\"");
  return static_cast<std::size_t>(b);
}

int run(const Options& o, int argc, char** argv) {
  const std::size_t lo = message_bytes("--min-bytes", o.min_bytes);
  const std::size_t hi = message_bytes("--max-bytes", o.max_bytes);
  if (lo > hi) throw std::invalid_argument("--min-bytes (" + o.min_bytes + ") is above --max-bytes (" + o.max_bytes + ")");
  if (!(o.max_seconds > 0 && o.max_seconds <= 3600)) {
    throw std::invalid_argument(fmt::format("--max-seconds: must be in (0, 3600] seconds, got {}", o.max_seconds));
  }
  int world_rank = 0, world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);

  MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node);
  int node_rank = 0, node_size = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_split(MPI_COMM_WORLD, node_rank == 0 ? 0 : MPI_UNDEFINED, world_rank, &leaders);
  int nodes = node_rank == 0 ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

  // Every rank knows the scopes' sizes: nothing to measure is an error on all of them, no file.
  bool measurable = false;
  for (const std::string& scope : o.scopes) measurable = measurable || (scope == "intra" ? node_size : nodes) >= 2;
  if (!measurable) {
    if (leaders != MPI_COMM_NULL) MPI_Comm_free(&leaders);
    MPI_Comm_free(&node);
    throw std::invalid_argument(fmt::format(
        "--scopes: nothing to measure with {} rank(s) on {} node(s) (intra needs 2 ranks on a node, inter 2 nodes)",
        world_size, nodes));
  }

  // Where every rank runs, for the record.
  std::string host = hostname();
  host.resize(MPI_MAX_PROCESSOR_NAME, '\0');
  std::vector<char> hosts(static_cast<std::size_t>(world_size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Gather(host.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
             MPI_COMM_WORLD);

  std::string rows;
  Buffers buffers;
  for (const std::string& scope : o.scopes) {
    const bool intra = scope == "intra";
    const int members = intra ? node_size : nodes;
    if (members < 2) continue;  // one rank per node, or one node: nothing to measure at this scope
    MPI_Comm comm = intra ? node : leaders;
    for (const std::string& op : o.ops) {
      for (std::size_t bytes = lo; bytes <= hi; bytes *= static_cast<std::size_t>(o.factor)) {
        sp::bench::TimingSummary s;
        std::size_t moved = bytes;
        if (comm != MPI_COMM_NULL) s = time_op(op, bytes, comm, o, buffers, moved);
        // Node 0's figures (world rank 0 is its node's and the leaders' rank 0).
        if (world_rank == 0) {
          const int p = op == "ping_pong" ? 2 : members;
          const double algbw = static_cast<double>(moved) / s.median_s / 1e9;
          rows += fmt::format("{},{},{},{},{},{},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f}\n", scope, op, p,
                              intra ? 1 : p, moved, s.repetitions, s.min_s * 1e6, s.median_s * 1e6, s.p10_s * 1e6,
                              s.p90_s * 1e6, algbw, algbw * bus_factor(op, p));
        }
        if (o.factor < 2) break;
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }

  if (world_rank == 0) {
    std::map<std::string, int> per_host;
    for (int r = 0; r < world_size; ++r) per_host[std::string(&hosts[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME])]++;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string lib(version, static_cast<std::size_t>(len));
    lib = lib.substr(0, lib.find('\n'));
    while (!lib.empty() && (lib.back() == '\0' || std::isspace(static_cast<unsigned char>(lib.back())))) lib.pop_back();
    std::string text = "# scalepoint-bench";
    for (int i = 1; i < argc; ++i) text += std::string(" ") + argv[i];
    text += fmt::format("\n# mpi: {}\n# ranks: {}, nodes: {}, ranks on node 0: {}\n", lib, world_size, nodes, node_size);
    for (const auto& [h, n] : per_host) text += fmt::format("# host: {} ranks: {}\n", h, n);
    text += "scope,op,ranks,nodes,bytes,repetitions,time_min_us,time_median_us,time_p10_us,time_p90_us,"
            "algbw_GB_per_s,busbw_GB_per_s\n" + rows;
    // All or nothing: a temporary file renamed into place.
    const std::filesystem::path out(o.out);
    sp::output::StagedFiles files(out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path());
    files.write(out.filename().string(), text);
    files.commit();
    std::printf("wrote %s (%d ranks on %d node(s))\n", o.out.c_str(), world_size, nodes);
  }
  if (leaders != MPI_COMM_NULL) MPI_Comm_free(&leaders);
  MPI_Comm_free(&node);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Options o;
  CLI::App app{"scalepoint-bench: MPI collective timings for `scalepoint calibrate network`"};
  app.add_option("--out,-o", o.out, "CSV to write")->capture_default_str();
  app.add_option("--min-bytes", o.min_bytes, "smallest message, with a unit")->capture_default_str();
  app.add_option("--max-bytes", o.max_bytes, "largest message, with a unit")->capture_default_str();
  app.add_option("--factor", o.factor, "size step factor")->capture_default_str()->check(CLI::Range(2, 1024));
  app.add_option("--iterations,-n", o.iterations, "timed repetitions per size")->capture_default_str()
      ->check(CLI::Range(1, 100000));
  app.add_option("--warmup,-w", o.warmup, "untimed repetitions first")->capture_default_str()->check(CLI::Range(0, 1000));
  app.add_option("--max-seconds", o.max_seconds, "per size, stop after this long (at least 3 repetitions)")
      ->capture_default_str();
  app.add_option("--ops", o.ops, "all_reduce reduce_scatter all_gather broadcast ping_pong")
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast", "ping_pong"}));
  app.add_option("--scopes", o.scopes, "intra (ranks sharing a node) and/or inter (one rank per node)")
      ->check(CLI::IsMember({"intra", "inter"}));
  int status = 0;
  try {
    app.parse(argc, argv);
    status = run(o, argc, argv);
  } catch (const CLI::ParseError& e) {
    status = rank == 0 ? app.exit(e) : 0;
    status = status == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    if (rank == 0) std::fprintf(stderr, "scalepoint-bench: error: %s\n", e.what());
    status = 2;
  }
  MPI_Finalize();
  return status;
}
