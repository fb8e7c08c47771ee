// The CLI given bad, hostile or absurd input: one message naming what is wrong, exit status 2,
// nothing written (README.md, "Exit status"), warnings where a case is accepted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <H5Cpp.h>

#include "shell.hpp"

namespace {

namespace fs = std::filesystem;

using sp::testing::RunResult;
using sp::testing::slurp;

RunResult run(const std::string& args) { return sp::testing::cli(args); }
fs::path fresh_dir(const std::string& name) { return sp::testing::fresh_dir("cli_bad_input_test", name); }
std::string scenario(const std::string& name) { return sp::testing::scenario_file(name); }

}  // namespace

TEST(Cli, BadInputExitsWithTwoAndWritesNothing) {
  const fs::path out = fresh_dir("bad");
  const RunResult r = run("run " + std::string(SP_TEST_DATA) + "/bad/no_unit.yaml --out " + out.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("no_unit.yaml:8:16: platform.scale_up.bandwidth: \"450\" has no unit"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("terminate"), std::string::npos);  // no crash, no stack trace
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, BadOverrideAndMissingFileExitWithTwo) {
  EXPECT_EQ(run("run " + scenario("bert") + " --set platform.scale_up.latency=3").status, 2);
  EXPECT_EQ(run("run /nonexistent/scenario.yaml").status, 2);
  EXPECT_EQ(run("run").status, 2);  // missing argument: CLI11's message, our exit status
  EXPECT_EQ(run("frobnicate").status, 2);
}

TEST(Cli, AnErrorAtAScenarioLineNamesTheOverridesInEffect) {
  // No scale-out NICs makes the scenario's 16-GPU entry impossible: the error is at the scenario's
  // accelerators line, which is right only without the override, so the message names it (and
  // the other override in effect); an error at an override itself names that override alone.
  const fs::path out = fresh_dir("overrides");
  RunResult r = run("run " + scenario("bert") + " -q --seed 4 --set platform.scale_out.nics_per_node=0 --out " + out.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("bert.yaml:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("has no scale-out NICs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(with --set platform.scale_out.nics_per_node=0, --seed 4 in effect)"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  EXPECT_FALSE(fs::exists(out));
  r = run("run " + scenario("bert") + " -q --seed 4 --set platform.scale_out.nics_per_node=-1 --out " + out.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output.rfind("scalepoint: error: --set platform.scale_out.nics_per_node=-1: ", 0), 0u) << r.output;
  EXPECT_EQ(r.output.find("in effect"), std::string::npos) << r.output;
  // Without overrides, the same kind of error carries no such note.
  r = run("run " + std::string(SP_TEST_DATA) + "/bad/no_unit.yaml --out " + out.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("has no unit"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("in effect"), std::string::npos) << r.output;
}

TEST(Cli, AbsurdButWellFormedInputNamesTheArgumentNotAnInternalError) {
  // Cases from issue 13: each once ended as "internal error" (exit 1) naming no input.
  const fs::path dir = fresh_dir("absurd");
  fs::create_directories(dir);
  const std::string file = (dir / "a_file").string();
  { std::ofstream(file) << "x"; }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run " + scenario("bert") + " -q --out " + file, "--out: " + file + " cannot be the output folder: it is a file"},
      {"run " + scenario("bert") + " -q --set 'platform.scale_out.nic_bandwidth=1 b/s'",
       "platform.scale_out.nic_bandwidth: \"1 b/s\" is below 1 MB/s"},
      {"collective --bytes 16EiB", "--bytes 16EiB: sizes are limited to 1 TiB"},
      {"run " + scenario("bert") + " -q --set platform.host_cpu=sparc", "platform.host_cpu: unknown host CPU 'sparc'"},
      {"run /dev/zero", "/dev/zero: is not a regular file"},
  };
  for (const auto& [args, expected] : cases) {
    const RunResult r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  }
}

TEST(Cli, HostileInputExitsWithTwoNotACrashAHangOrAWriteElsewhere) {
  // Found by a hostile-input review: a stack overflow (an alias inside itself), a division by a
  // count cut to 32 bits, simulated times past the clock's range, billions of milestones or
  // picosecond slices (hangs), an output folder named "..", a calibration file of other keys
  // accepted silently, and --out replacing a device or folder.
  const fs::path dir = fresh_dir("hostile");
  fs::create_directories(dir);
  const auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream((dir / name).string()) << text;
    return (dir / name).string();
  };
  const std::string src = SP_SOURCE_DIR;
  const std::string coloc = "name: h\naccelerator: H100-SXM5-80GB\nhost: {cores: 16}\n"
                            "job: {workload: pointnet_cls, batch: 32, steps: 5}\njobs: [2]\n";
  std::string bench;
  {
    std::ifstream in(src + "/calibration/data/colocation/h100_coloc_bench.csv");
    std::getline(in, bench);
  }
  bench += "\n1,colocation,host_bound,time_slicing,1,4,20,60,10,750,1e7,0.49,0.49,1.0,64.0,129.5,1980,0.22,,,,0,,"
           "NVIDIA H100 80GB HBM3,\n";
  const std::string systems = "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"colocate " + file("cycle.yaml", "x: &A [*A]\n"), "nested more than 100 levels deep"},
      {"predict --out " + (dir / "p.csv").string() + " --systems " +
           file("wide.csv", systems + "bert,NVIDIA H100-SXM5-80GB,8,536870912,4294967296,768\n"),
       "accelerators_total: needs a count between 1 and 1000000000"},
      {"predict --samples 1000000000 --out " + (dir / "p.csv").string() + " --systems " +
           src + "/calibration/data/mlperf/results_v4.1.csv",
       "--samples: Value 1000000000 not in range 0 to 100000 (run 'scalepoint --help' for usage)\n"},
      {"gemm-shapes --workload bert --tp 7", "--tp: 7 does not divide encoder_layer.qkv.fwd's n dimension of 3072"},
      {"run " + scenario("bert") + " -q --out ''", "--out: must name a file or folder, not be empty"},
      {"run " + scenario("bert") + " -q --out \"$(printf '" + (dir / "a").string() + "\\tb')\"",
       "--out: the folder's name must not hold control characters (tab, newline)"},
      {"validate --out " + (dir / "v").string() + " --data " + src + "/calibration/data/mlperf/results_v4.1.csv --phases " +
           file("phases.csv", "benchmark,org_folder,system_folder,phase,seconds\n"),
       "phases.csv:1: has no phase rows, only a header"},
      {"run " + scenario("bert") + " -q --set 'batch={per_accelerator: 1000000000}'",
       "global batches are limited to 1000000000"},
      {"colocate --validate " + file("bench.csv", bench) + " --out " + (dir / "v").string(),
       "makespan_s: implies more than 10 ms of host time per launch"},
      {"colocate " + file("slice.yaml", coloc + "strategies: [time_slicing]\nsharing: {time_slice: \"1 ps\"}\n"),
       "sharing.time_slice: must be at least 1 us"},
      {"colocate " + file("asha.yaml", coloc + "strategies: [sequential]\n"
                                              "early_stopping: {grace: 1.0e-300, reduction: 1.0000001, seed: 1}\n"),
       "early_stopping.reduction: gives 6907755621 milestones"},
      {"run " + scenario("bert") + " -q --set name=..", "name: must be a name without slashes, control characters"},
      {"run " + scenario("bert") + " -q --set \"name=' '\"", "name: must not begin or end with a space"},
      {"run " + scenario("bert") + " -q --set calibration=" + file("cal.yaml", "bogus: 1\n"), "bogus: unknown key"},
      {"run " + scenario("bert") + " -q --set calibration=" + dir.string(), "calibration: not a regular file: "},
      {"predict --out " + dir.string() + " --systems " + src + "/calibration/data/mlperf/results_v4.1.csv",
       "exists and is not a regular file"},
      {"calibrate network --input " + file("m.csv", "x\n1\n") + " --base nosuch --out " + (dir / "n.yaml").string(),
       "--base: unknown platform 'nosuch'"},
      {"collective --gpus 2000000000", "--gpus: Value 2000000000 not in range 1 to 1000000000"},
      {"calibrate network --input-op all_reduce --base dgx_h100 --input " + file("own.txt", "x\n") + " --out " +
           (dir / "own.txt").string(),
       "--out: " + (dir / "own.txt").string() + " is also an input"},
      {"predict --out " + (dir / "p.csv").string() + " --systems " + file("nul.csv", systems + std::string("be\0rt", 5) + ",x,8,1,8,\n"),
       "nul.csv:2:3: holds a NUL byte; a CSV file is text"},
      {"sweep --out " + (dir / "sw").string() + " " +
           file("self.yaml", "name: self\nbase: self.yaml\naxes:\n  - grid:\n      accelerators: [[8], [16]]\n"),
       "self.yaml:2:7: base: names this sweep file itself"},
      {"calibrate compute --accelerator H100-SXM5-80GB --out " + (dir / "frag.yaml").string() + " --input " +
           file("nogemm.csv", [&] {  // the committed H100 measurements without their GEMM rows
             std::ifstream in(src + "/calibration/data/gpu/h100/gpu_bench.csv");
             std::string out;
             for (std::string line; std::getline(in, line);) {
               if (line.find("gemm") == std::string::npos) out += line + "\n";
             }
             return out;
           }()),
       "nogemm.csv: no GEMM rows in"},
      {"calibrate power --out " + (dir / "pw.yaml").string() + " --data " +
           file("power.csv", [&] {
             std::ifstream in(src + "/calibration/data/mlperf/power_v4.1.csv");
             std::string header, row;
             std::getline(in, header);
             std::getline(in, row);
             const auto a = row.find(','), b = row.find(',', a + 1);  // benchmark is the second column
             return header + "\n" + row.substr(0, a + 1) + "nosuch" + row.substr(b) + "\n";
           }()),
       "power.csv:2: benchmark: unknown benchmark 'nosuch'"},
      {"run " + scenario("bert") + " -q --set name=" + std::string(5000, 'a'),
       "name: is 5000 characters long; at most 200 (it names the output folder)"},
      {"run " + scenario("bert") + " -q --seed 100000000000000000000",
       "--seed: a seed is an integer from 0 to 9223372036854775807, not 100000000000000000000"},
      // A table with a header and nothing under it: refused, not answered with empty results.
      {"predict --out " + (dir / "p.csv").string() + " --systems " + file("empty_systems.csv", systems),
       "empty_systems.csv:1: has a header but no data rows"},
      {"collective --validate " + file("empty_nccl.csv", "platform,collective,gpus,bytes,bus_bandwidth_gbs,source\n") +
           " --out " + (dir / "c").string(),
       "empty_nccl.csv:1: has a header but no data rows"},
  };
  for (const auto& [args, expected] : cases) {
    const RunResult r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << args << "\n" << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(fs::exists(dir / "p.csv"));
  EXPECT_FALSE(fs::exists(dir / "v"));
}

TEST(Cli, InputTextInAPlotIsTextNotAGnuplotCommand) {
  // Found by a hostile-input review: a sweep label reached gnuplot inside '...', so a quote in it
  // ended the string and `system` ran a shell command; a plain "it's" lost the plot.
  const fs::path dir = fresh_dir("inject");
  fs::create_directories(dir);
  const fs::path mark = dir / "PWNED";
  {
    std::ofstream f(dir / "sweep.yaml");
    f << "name: inject\nbase: " << scenario("bert") << "\naxes:\n  - points:\n"
      << "      - {label: \"a'; system 'touch " << mark.string() << "'; print '\", accelerators: [8, 16]}\n"
      << "      - {label: \"it's\", accelerators: [8, 16]}\n";
  }
  ASSERT_EQ(run("sweep " + (dir / "sweep.yaml").string() + " -q --out " + (dir / "out").string()).status, 0);
  const RunResult r = run("report " + (dir / "out").string());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(fs::exists(mark));
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    EXPECT_TRUE(fs::exists(dir / "out" / "scaling_inject.png"));
  }
}

TEST(Cli, SilentlyAcceptedCasesWarnOrFail) {
  // 1024 x 48 = 49,152 samples: 3x BERT's largest RCP batch (16,384), an extrapolated convergence.
  const RunResult far = run("run " + scenario("bert") + " --set 'accelerators=[1024]' --set 'batch={per_accelerator: 48}' -q "
                            "--out " + fresh_dir("warn_rcp").string());
  EXPECT_EQ(far.status, 0) << far.output;
  EXPECT_NE(far.output.find("scalepoint: warning: " + scenario("bert") +
                            ": batch: N=1024: global batch 49152 is 3.0x the largest RCP batch of bert (16384)"),
            std::string::npos)
      << far.output;
  const fs::path dir = fresh_dir("warn_counts");
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "systems.csv");
    f << "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size,time_to_train_min,"
         "host_processor\n"
         "bert,NVIDIA H100-SXM5-80GB,8,2,8,,,zzz\n";
  }
  // Counts that contradict each other are said, with file, line and column; a table without a
  // single time cannot be validated or analysed (exit 2, nothing written).
  const RunResult p = run("predict --systems " + (dir / "systems.csv").string() + " --out " + (dir / "p.csv").string());
  EXPECT_EQ(p.status, 0) << p.output;
  EXPECT_NE(p.output.find("systems.csv:2: accelerators_total: 8 is not accelerators_per_node x nodes (8 x 2)"),
            std::string::npos)
      << p.output;
  // A host processor of no known vendor is said, not read as the platform's without a word.
  EXPECT_NE(p.output.find("systems.csv:2: host_processor: 'zzz' names no vendor scalepoint knows"), std::string::npos)
      << p.output;
  for (const char* cmd : {"validate --data ", "analyze --data "}) {
    const RunResult v = run(cmd + (dir / "systems.csv").string() + " --out " + (dir / "out").string());
    EXPECT_EQ(v.status, 2) << cmd << v.output;
    EXPECT_NE(v.output.find("time_to_train_min: no row has a time to train"), std::string::npos) << v.output;
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}

TEST(Cli, ValidateWarnsOfAPublishedRowItCannotModel) {
  // Two rows of the committed table, one given an accelerator no hardware file names: validated
  // without it (exit 0), and said on stderr as a warning, not only in the report's last lines.
  const fs::path dir = fresh_dir("unmodelled");
  fs::create_directories(dir);
  {
    std::ifstream in(std::string(SP_SOURCE_DIR) + "/calibration/data/mlperf/results_v4.1.csv");
    std::ofstream out(dir / "rows.csv");
    std::string line;
    for (int i = 0; i < 6 && std::getline(in, line); ++i) {
      if (line.find("Palmetto2-AI") != std::string::npos) line.replace(line.find("NVIDIA H100-SXM5-80GB"), 21, "NVIDIA Z9000");
      out << line << "\n";
    }
  }
  const RunResult v = run("validate --data " + (dir / "rows.csv").string() + " --out " + (dir / "out").string());
  EXPECT_EQ(v.status, 0) << v.output;
  EXPECT_NE(v.output.find("scalepoint: warning: " + (dir / "rows.csv").string() +
                          ": left out, the model cannot predict it: line 4: bert Palmetto2-AI: unknown accelerator 'NVIDIA Z9000'"),
            std::string::npos)
      << v.output;
}

TEST(Cli, FitsOnTooFewPointsWarn) {
  const fs::path dir = fresh_dir("few_points");
  fs::create_directories(dir);
  // Three sizes of one collective: a platform is written, with a warning that says so.
  {
    std::ifstream in(std::string(SP_SOURCE_DIR) + "/results/calibration/localhost/bench_np2.csv");
    std::ofstream out(dir / "three.csv");
    std::string line;
    for (int i = 0; i < 8 && std::getline(in, line); ++i) out << line << "\n";  // 5 header lines, 3 sizes
  }
  const RunResult n = run("calibrate network --input " + (dir / "three.csv").string() + " --base localhost --out " +
                          (dir / "p.yaml").string());
  EXPECT_EQ(n.status, 0) << n.output;
  EXPECT_NE(n.output.find("scalepoint: warning: --input: scale_up, 2 ranks: 3 measured sizes for "),
            std::string::npos)
      << n.output;
  // One published row for 20-odd parameters: the priors decide and the model error is no estimate.
  {
    std::ifstream in(std::string(SP_SOURCE_DIR) + "/calibration/data/mlperf/results_v4.1.csv");
    std::ofstream out(dir / "one.csv");
    std::string line;
    for (int i = 0; i < 2 && std::getline(in, line); ++i) out << line << "\n";
  }
  const RunResult m = run("calibrate mlperf --data " + (dir / "one.csv").string() + " --out " + (dir / "m.yaml").string());
  EXPECT_EQ(m.status, 0) << m.output;
  EXPECT_NE(m.output.find("one.csv: 1 rows for "), std::string::npos) << m.output;
  EXPECT_NE(m.output.find("the fit rests on its priors"), std::string::npos) << m.output;
}

TEST(Cli, APhaseOfNoPublishedRowExitsWithTwoAndWritesNothing) {
  // The second data row of a phases file names a system the results file does not have.
  const fs::path dir = fresh_dir("phases");
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "phases.csv");
    out << "benchmark,org_folder,system_folder,result_file,phase,seconds\n"
        << "retinanet,NVIDIA,eos_n316_ngc24.04_pytorch,result_0.txt,evaluation,0.5\n"
        << "retinanet,NVIDIA,eos_n999_pytorch,result_0.txt,evaluation,0.5\n";
  }
  const RunResult r = run("calibrate mlperf --data " + std::string(SP_SOURCE_DIR) +
                          "/calibration/data/mlperf/results_v4.1.csv --phases " + (dir / "phases.csv").string() +
                          " --out " + (dir / "m.yaml").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("phases.csv:3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("system_folder"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'eos_n999_pytorch'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "m.yaml"));
}

TEST(Cli, ColocateWritesItsTablesAndBadInputWritesNothing) {
  const fs::path out = fresh_dir("colocate");
  const auto r = run("colocate " + std::string(SP_SOURCE_DIR) + "/scenarios/colocation/resnet18_a100.yaml --set 'jobs=[1,2]' "
                     "--set job.epochs=0.05 --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("time_slicing"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("K=2   fastest: "), std::string::npos) << r.output;
  const std::string csv = slurp(out / "summary.csv");
  EXPECT_EQ(csv.rfind("jobs,strategy,resident,memory_gb,makespan_s,", 0), 0u) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 5);
  EXPECT_TRUE(fs::exists(out / "jobs.csv"));
  const fs::path bad = fresh_dir("colocate_bad");
  const auto b = run("colocate " + std::string(SP_SOURCE_DIR) + "/scenarios/colocation/resnet18_a100.yaml --set sharing.fraction=0 --out " +
                     bad.string());
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.output.find("sharing.fraction: must be in (0, 1]"), std::string::npos) << b.output;
  EXPECT_FALSE(fs::exists(bad / "summary.csv"));
}

TEST(Cli, InputsWhoseBoundsEachHoldButWhoseProductDoesNotAreRefused) {
  // Found by a hostile-input review: each key within its own bound, their product beyond anything
  // the simulator should attempt. A fabric of 10^5 leaves of 10^5 nodes allocated 12.8 GB and died
  // as an internal error; 4 ResNet-18 jobs of 10^7 steps would have run for hours; a placement
  // listed twice ran twice; an unfittable network measurement exited 1 (cannot simulate), and a
  // --report folder was left behind, empty, by every refusal.
  const fs::path dir = fresh_dir("products");
  fs::create_directories(dir);
  const std::string platform = std::string(SP_SOURCE_DIR) + "/scenarios/platforms/dgx_h100.yaml";
  const auto cluster = [&](const std::string& name, const std::string& fabric, const std::string& placement) {
    const fs::path f = dir / name;
    std::ofstream(f) << "name: big\nplatform: !include " << platform << "\nfabric: " << fabric
                     << "\nplacement: " << placement
                     << "\nsteps: 1\njobs:\n  - {name: a, workload: bert, accelerators: [8], batch: {typical: true}}\n";
    return run("cluster " + f.string() + " -q --no-timelines --out " + (dir / "out").string());
  };
  RunResult r = cluster("huge.yaml", "{leaves: 100000, nodes_per_leaf: 100000, oversubscription: 1}", "[random]");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("huge.yaml:3:18: fabric.leaves: 100000 leaves of 100000 nodes are 10000000000 nodes, more "
                          "than the 1000000 a shared fabric may hold"),
            std::string::npos)
      << r.output;
  r = cluster("twice.yaml", "{leaves: 4, nodes_per_leaf: 8, oversubscription: 1}", "[packed, packed]");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("twice.yaml:4:21: placement[1]: is listed twice"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "out"));

  std::string colo = slurp(std::string(SP_SOURCE_DIR) + "/scenarios/colocation/resnet18_h200_synthetic.yaml");
  colo.replace(colo.find("steps: 60"), 9, "steps: 10000000");
  { std::ofstream(dir / "long.yaml") << colo; }
  r = run("colocate " + (dir / "long.yaml").string() + " -q --out " + (dir / "colo").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("job.steps: 4 jobs of 10000000 steps of"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("more than the 1e+09 a point may simulate"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "colo"));

  // 14 sizes of one group asked for 64 segments: two parameters each cannot be had from them.
  const std::string bench = std::string(SP_SOURCE_DIR) + "/results/calibration/localhost/bench_np2.csv";
  r = run("calibrate network --base localhost --input " + bench + " --segments 64 --out " + (dir / "p.yaml").string() +
          " --report " + (dir / "report").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("error: --input: "), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "p.yaml"));
  EXPECT_FALSE(fs::exists(dir / "report"));
  // Every all-reduce timed at 5 us whatever its bytes: a fit, but of no network (it wrote a
  // bandwidth of 6e14 GB/s with exit 0).
  std::string flat;
  std::istringstream lines(slurp(bench));
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("intra,all_reduce,", 0) == 0) {
      std::vector<std::string> f;
      std::stringstream cells(l);
      for (std::string c; std::getline(cells, c, ',');) f.push_back(c);
      f.at(7) = "5";  // time_median_us
      l.clear();
      for (std::size_t i = 0; i < f.size(); ++i) l += (i ? "," : "") + f[i];
    }
    flat += l + "\n";
  }
  { std::ofstream(dir / "flat.csv") << flat; }
  r = run("calibrate network --base localhost --input " + (dir / "flat.csv").string() + " --out " + (dir / "p.yaml").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("no network's (at most 100 TB/s, 1 s)"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "p.yaml"));
}

TEST(Cli, CalibrateNetworkChecksItsBasePlatformBeforeTheFit) {
  // A cluster scenario given as --base was blamed on the --out file, at a line of the base, after
  // the fit had printed its tables (a hostile-input review): now the base's own file and line,
  // before anything is fitted or printed.
  const fs::path dir = fresh_dir("base");
  const std::string base = std::string(SP_SOURCE_DIR) + "/scenarios/clusters/shared_fat_tree.yaml";
  const RunResult r = run("calibrate network --input " + std::string(SP_SOURCE_DIR) +
                          "/results/calibration/localhost/bench_np2.csv --base " + base + " --out " +
                          (dir / "p.yaml").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find(base + ":8:1: description: unknown key"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("segment"), std::string::npos) << r.output;  // no fit printed
  EXPECT_FALSE(fs::exists(dir / "p.yaml"));
}

TEST(Cli, GemmShapesNamesTheOptionItWritesTo) {
  // A folder given as --cxx-table was blamed on --out (a hostile-input review).
  const fs::path dir = fresh_dir("cxx_table");
  fs::create_directories(dir / "table.hpp");
  const RunResult r = run("gemm-shapes --cxx-table " + (dir / "table.hpp").string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("error: --cxx-table: "), std::string::npos) << r.output;
}
