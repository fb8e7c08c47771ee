// scalepoint-bench under mpirun (2 ranks, and 4 oversubscribed on this 2-core machine), its CSV
// read back by the importer, and `calibrate network` from the committed localhost measurement:
// reproducible, and the platform it writes reproduces the measured times (the round trip).
#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "calibration/network/measurements.hpp"
#include "shell.hpp"
#include "models/catalog.hpp"
#include "models/collective/collective.hpp"
#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"

namespace {

namespace fs = std::filesystem;

std::pair<int, std::string> shell(const std::string& cmd) {
  // Open MPI refuses root in containers, and 4 ranks on 2 cores, unless told (DEVELOPERS.md).
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 0);
  // Under the sanitizer build, Open MPI's own start-up allocations (in MCA components it has
  // unloaded by exit) read as leaks; nothing of scalepoint's is in them.
  setenv("LSAN_OPTIONS", "detect_leaks=0", 0);
  const auto r = sp::testing::shell(cmd);
  return {r.status, r.output};
}

using sp::testing::slurp;

void expect_bench_run(int ranks) {
  const fs::path out = fs::temp_directory_path() / ("sp_bench_" + std::to_string(::getpid()) + "_np" + std::to_string(ranks) + ".csv");
  fs::remove(out);
  const auto [status, text] = shell(std::string(SP_MPIEXEC) + " -np " + std::to_string(ranks) + " " + SP_BENCH +
                                    " --out " + out.string() +
                                    " --max-bytes 32KiB --factor 4 --iterations 3 --warmup 1 --max-seconds 0.2");
  ASSERT_EQ(status, 0) << text;
  const std::string csv = slurp(out);
  EXPECT_NE(csv.find("# mpi: "), std::string::npos);
  EXPECT_NE(csv.find("# ranks: " + std::to_string(ranks) + ", nodes: 1"), std::string::npos) << csv;
  // 5 operations x sizes 8, 32, ..., 32768 (7) inside the one node; no inter-node line.
  const auto rows = sp::calibration::read_measurements(out.string());
  ASSERT_EQ(rows.size(), 35u);
  for (const auto& m : rows) {
    EXPECT_EQ(m.scope, "intra");
    EXPECT_EQ(m.ranks, m.op == "ping_pong" ? 2 : ranks);
    EXPECT_GT(m.time_us, 0) << m.op << " " << m.bytes;
  }
  // The summaries are ordered: min <= p10 <= median <= p90.
  std::string body;
  std::istringstream lines(csv);
  for (std::string l; std::getline(lines, l);) body += l.rfind('#', 0) == 0 ? "" : l + "\n";
  const auto table = sp::config::CsvTable(body, out.string());
  for (std::size_t r = 0; r < table.rows(); ++r) {
    const double mn = *table.number(r, "time_min_us"), p10 = *table.number(r, "time_p10_us"),
                 med = *table.number(r, "time_median_us"), p90 = *table.number(r, "time_p90_us");
    EXPECT_LE(mn, p10 + 1e-9);
    EXPECT_LE(p10, med + 1e-9);
    EXPECT_LE(med, p90 + 1e-9);
  }
}

const std::string kSource = SP_SOURCE_DIR;
const std::vector<std::string> kMeasured = {"results/calibration/localhost/bench_np2.csv",
                                            "results/calibration/localhost/bench_np4.csv"};

}  // namespace

TEST(Bench, TwoRanksUnderMpirun) { expect_bench_run(2); }
TEST(Bench, FourRanksOversubscribed) { expect_bench_run(4); }

TEST(Bench, BadArgumentsExitWithTwo) {
  EXPECT_EQ(shell(std::string(SP_MPIEXEC) + " -np 1 " + SP_BENCH + " --max-bytes 12parsecs").first, 2);
  EXPECT_EQ(shell(std::string(SP_MPIEXEC) + " -np 1 " + SP_BENCH + " --ops all_to_some").first, 2);
  // Found by a hostile-input review: 0 B looped forever (0 x factor), 1 TiB died allocating,
  // min above max, a NaN time limit or a scope with nothing to measure wrote a header-only CSV
  // and exited 0. Each is refused on every rank, naming the option, and no file is written.
  const fs::path out = fs::temp_directory_path() / ("sp_bench_bad_" + std::to_string(::getpid()) + ".csv");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--min-bytes '0 B'", "--min-bytes: must be at least 1 B"},
      {"--max-bytes '1 TiB'", "--max-bytes: at most 16 GiB a message"},
      {"--min-bytes '1 KiB' --max-bytes '8 B'", "--min-bytes (1 KiB) is above --max-bytes (8 B)"},
      {"--max-seconds nan", "--max-seconds: must be in (0, 3600] seconds"},
      {"--min-bytes '8 us'", "--min-bytes: \"8 us\" is a time"},
      {"--scopes inter", "--scopes: nothing to measure with 2 rank(s) on 1 node(s)"},
  };
  for (const auto& [args, said] : cases) {
    fs::remove(out);
    const auto [status, text] = shell("timeout 60 " + std::string(SP_MPIEXEC) + " -np 2 " + SP_BENCH + " -n 1 -w 0 --ops ping_pong -o " +
                                      out.string() + " " + args);
    EXPECT_EQ(status, 2) << args << "\n" << text;
    EXPECT_NE(text.find(said), std::string::npos) << args << "\n" << text;
    EXPECT_FALSE(fs::exists(out)) << args;
  }
}

TEST(CalibrateNetwork, TheCommittedLocalhostPlatformIsWhatTheCommittedMeasurementGives) {
  const fs::path out = fs::temp_directory_path() / ("sp_" + std::to_string(::getpid()) + "_localhost.calibrated.yaml");
  std::string cmd = "cd " + kSource + " && " + SP_CLI + " calibrate network --base localhost --out " + out.string();
  for (const auto& f : kMeasured) cmd += " --input " + f;
  const auto [status, text] = shell(cmd);
  ASSERT_EQ(status, 0) << text;
  EXPECT_NE(text.find("scale_up, 2 ranks"), std::string::npos) << text;
  // Everything but the first comment line (it names the output path) is identical.
  const auto body = [](const std::string& s) { return s.substr(s.find('\n')); };
  EXPECT_EQ(body(slurp(out)), body(slurp(kSource + "/scenarios/platforms/localhost.calibrated.yaml")));
}

TEST(CalibrateNetwork, TheFittedPlatformReproducesTheMeasuredTimes) {
  // Simulate every measured all-reduce on the calibrated platform (analytic fidelity) and
  // compare with the measurement. Two ranks share no core; four are oversubscribed on two
  // cores, with p10-p90 spreads of +-20-50 %, so the bound is on the median and on 85 %.
  const sp::models::Catalog catalog(fs::path(kSource) / "models");
  const sp::models::Platform p = sp::models::parse_platform(
      sp::config::load_file(kSource + "/scenarios/platforms/localhost.calibrated.yaml"), catalog);
  std::vector<double> errors;
  for (const auto& f : kMeasured) {
    for (const auto& m : sp::calibration::read_measurements(kSource + "/" + f)) {
      if (m.op != "all_reduce") continue;
      const sp::models::Group g{{m.ranks, 1}};
      const double sim = sp::to_seconds(
          sp::models::select_collective(p, g, sp::models::CollectiveOp::all_reduce, sp::Bytes(m.bytes)).time);
      errors.push_back(std::abs(sim * 1e6 / m.time_us - 1));
    }
  }
  ASSERT_EQ(errors.size(), 52u);
  std::sort(errors.begin(), errors.end());
  EXPECT_LT(errors[errors.size() / 2], 0.05);
  EXPECT_LT(errors[static_cast<std::size_t>(0.85 * static_cast<double>(errors.size()))], 0.10);
  EXPECT_LT(errors.back(), 0.15);
}

TEST(CalibrateCompute, TheCommittedH100FragmentComesFromTheCommittedMeasurements) {
  // The same command as the fragment's first line; only the date in `source` may differ.
  const fs::path out = fs::temp_directory_path() / ("sp_" + std::to_string(::getpid()) + "_h100.compute.yaml");
  fs::remove(out);
  const std::string data = std::string(SP_SOURCE_DIR) + "/calibration/data/gpu/h100/";
  auto [status, text] = shell(std::string(SP_CLI) + " calibrate compute --accelerator H100-SXM5-80GB --input " + data +
                              "gpu_bench.csv --input " + data + "workloads.jsonl --out " + out.string());
  ASSERT_EQ(status, 0) << text;
  EXPECT_NE(text.find("not used: 28 GEMMs of a first-version bench file"), std::string::npos) << text;
  const auto body = [](std::string t) {  // without the comment lines, the source line and the input paths
    std::string kept, line;
    std::istringstream in(t);
    while (std::getline(in, line)) {
      if (line.rfind('#', 0) == 0 || line.rfind("source:", 0) == 0 || line.find("file:") != std::string::npos) continue;
      kept += line + "\n";
    }
    return kept;
  };
  EXPECT_EQ(body(slurp(out)),
            body(slurp(std::string(SP_SOURCE_DIR) + "/models/hardware/measured/h100_sxm5_80gb.compute.yaml")));
  std::tie(status, text) = shell(std::string(SP_CLI) + " calibrate compute --input " + data + "workloads.jsonl" +
                                 " --accelerator H1000 --out " + out.string() + ".x");
  EXPECT_EQ(status, 2) << text;
  EXPECT_NE(text.find("no hardware file in models/hardware names 'H1000'"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out.string() + ".x"));
  // A --report that cannot be a folder is said of --report, before the fit, and --out is not
  // written either (it once was, and the message named --out).
  const fs::path a_file = out.string() + ".file";
  std::ofstream(a_file) << "x\n";
  std::tie(status, text) = shell(std::string(SP_CLI) + " calibrate compute --input " + data + "workloads.jsonl" +
                                 " --accelerator H100-SXM5-80GB --out " + out.string() + ".y --report " + a_file.string());
  EXPECT_EQ(status, 2) << text;
  EXPECT_NE(text.find("--report: " + a_file.string() + " cannot be the output folder: it is a file"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out.string() + ".y"));
  fs::remove(a_file);
  // One shape cannot be fitted: said of the input (it was exit 1 without a file).
  const fs::path one = out.string() + ".one.jsonl";
  std::ofstream(one) << "{\"kind\": \"gemm\", \"dtype\": \"bf16\", \"m\": 1024, \"n\": 1024, \"k\": 1024, \"ms\": 0.01}\n";
  std::tie(status, text) = shell(std::string(SP_CLI) + " calibrate compute --input " + one.string() +
                                 " --accelerator H100-SXM5-80GB --out " + out.string() + ".z");
  EXPECT_EQ(status, 2) << text;
  EXPECT_NE(text.find(one.string() + ": 1 bf16 GEMM shape(s): the fit needs at least 3 of each dtype"), std::string::npos) << text;
  EXPECT_FALSE(fs::exists(out.string() + ".z"));
  fs::remove(one);
}
