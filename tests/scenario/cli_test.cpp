// The CLI as a user runs it: exit status, the message on stderr, output files, the HDF5 file
// read back with the HDF5 C++ API, and byte-identical repeated runs.
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
fs::path fresh_dir(const std::string& name) { return sp::testing::fresh_dir("cli_test", name); }
std::string scenario(const std::string& name) { return sp::testing::scenario_file(name); }

}  // namespace

TEST(Cli, RunWritesEveryOutputAndPrintsTheTable) {
  const fs::path out = fresh_dir("run");
  const RunResult r = run("run " + scenario("bert") + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("TTT min"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("E'"), std::string::npos);
  for (const char* f : {"summary.csv", "results.h5", "manifest.yaml"}) EXPECT_TRUE(fs::exists(out / f)) << f;
  const std::string manifest = slurp(out / "manifest.yaml");
  EXPECT_NE(manifest.find("scenario_sha256: \""), std::string::npos);
  EXPECT_NE(manifest.find("seed: \"1\""), std::string::npos);
  for (const auto& e : fs::directory_iterator(out)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "left " << e.path();
  }
}

TEST(Cli, TheCommittedGoodputPlanIsCurrentAndItsRunsAreTimelines) {
  // The README's goodput table and plot come from results/goodput/llama3_405b: a model change that
  // moves them must regenerate them (the command below). Its first count alone here (each count's
  // layout search is independent; the sanitizer build runs all four for minutes).
  const fs::path out = fresh_dir("goodput");
  const RunResult r = run("run " + scenario("llama3_405b_goodput") + " --set accelerators=[16384] -q --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string committed = slurp(std::string(SP_SOURCE_DIR) + "/results/goodput/llama3_405b/summary.csv");
  const std::string fresh = slurp(out / "summary.csv");
  const auto first_rows = [](const std::string& csv) { return csv.substr(0, csv.find('\n', csv.find('\n') + 1)); };
  EXPECT_EQ(first_rows(fresh), first_rows(committed))
      << "regenerate: build/scalepoint run scenarios/llama3_405b_goodput.yaml --no-timelines --out results/goodput/llama3_405b";
  // With timelines, one replicate's run: failures as instants among the spans.
  const std::string trace = slurp(out / "run_timeline_N16384.json");
  EXPECT_NE(trace.find("\"name\": \"failure\""), std::string::npos);
  EXPECT_NE(trace.find("\"name\": \"restart\""), std::string::npos);
  EXPECT_NE(trace.find("\"name\": \"checkpoint\""), std::string::npos);
  EXPECT_TRUE(fs::exists(out / "timeline_N16384.json"));
  // --no-timelines writes neither kind (a small scenario whose runs meet failures).
  const fs::path quiet = fresh_dir("goodput_quiet");
  ASSERT_EQ(run("run " + scenario("bert") + " --set accelerators=[64] --set 'reliability.sources=[{name: n, per: node, mtbf: \"1 h\"}]'"
                " --no-timelines -q --out " + quiet.string()).status, 0);
  EXPECT_TRUE(fs::exists(quiet / "summary.csv"));
  EXPECT_FALSE(fs::exists(quiet / "timeline_N64.json"));
  EXPECT_FALSE(fs::exists(quiet / "run_timeline_N64.json"));
}

TEST(Cli, TheReadmesExampleIsWhatRunPrints) {
  // The README's first example (its table rows) must be what `run` prints today: a model change
  // that moves them must update the README.
  const std::string readme = slurp(std::string(SP_SOURCE_DIR) + "/README.md");
  const std::string start = "$ build/scalepoint run scenarios/bert.yaml\n";
  const auto from = readme.find(start);
  ASSERT_NE(from, std::string::npos);
  const std::string block = readme.substr(from + start.size(), readme.find("```", from) - from - start.size());
  const RunResult r = run("run " + scenario("bert") + " --no-timelines --out " + fresh_dir("readme").string());
  ASSERT_EQ(r.status, 0) << r.output;
  int rows = 0;
  std::istringstream lines(block);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.find("...") != std::string::npos || line.rfind("wrote ", 0) == 0) continue;
    ++rows;
    EXPECT_NE(r.output.find(line + "\n"), std::string::npos) << "README line not printed by run:\n" << line;
  }
  EXPECT_GE(rows, 4);  // the header, the column names and at least two counts
}

TEST(Cli, ThePredictExampleRunsAsTheReadmeShowsIt) {
  // scenarios/predict_example.csv: planned systems of every benchmark, one with its batch left
  // for the model to choose; every row is predicted.
  const fs::path out = fresh_dir("predict_example");
  fs::create_directories(out);
  const RunResult r = run("predict --systems " + std::string(SP_SOURCE_DIR) + "/scenarios/predict_example.csv --out " +
                          (out / "p.csv").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("predicted 4 of 4 rows"), std::string::npos) << r.output;
  // Each row on the terminal with its count, layout and interval, not only in the CSV.
  for (const char* row : {"bert              NVIDIA H200-SXM5-141GB                 64",
                          "llama2_70b_lora   NVIDIA B200-SXM-180GB                 256",
                          "retinanet         NVIDIA H100-SXM5-80GB                 128",
                          "stable_diffusion  NVIDIA H100-SXM5-80GB                 512   1024  TP1 CP1 PP1 DP512"}) {
    EXPECT_NE(r.output.find(row), std::string::npos) << row << "\n" << r.output;
  }
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    EXPECT_TRUE(fs::exists(out / "p.png"));
    EXPECT_NE(r.output.find("p.csv and " + (out / "p.png").string()), std::string::npos) << r.output;
  }
  // A file-size limit of 1 KiB stands in for a full disk: the table fits, the plot's script does
  // not. That is the run's failure (exit 1, the reason), not a missing gnuplot, and nothing is left
  // behind (found by a hostile-input review: exit 0, no plot, and an empty script file).
  const fs::path full = fresh_dir("predict_full");
  fs::create_directories(full);
  const RunResult f = sp::testing::shell("bash -c 'ulimit -f 1; " + std::string(SP_CLI) + " predict --systems " +
                                         SP_SOURCE_DIR + "/scenarios/predict_example.csv --out " + (full / "p.csv").string() + "'");
  EXPECT_EQ(f.status, 1) << f.output;
  EXPECT_NE(f.output.find("scalepoint: error: cannot write " + full.string() + "/"), std::string::npos) << f.output;
  EXPECT_TRUE(fs::is_empty(full)) << f.output;
}

TEST(Cli, APredictionThatFailsIsARowThatSaysWhyAndThePlotHasTheOthers) {
  // A row the model cannot predict keeps its line on the terminal (status and reason); the plot
  // draws the rows it could, and a table where none could be predicted draws none.
  const fs::path dir = fresh_dir("predict_report");
  fs::create_directories(dir);
  std::ofstream(dir / "systems.csv") << "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size\n"
                                        "bert,NVIDIA H100-SXM5-80GB,8,2,16,768\n"
                                        "bert,Foo GPU 9000,8,1,8,\n";
  const RunResult r = run("predict --systems " + (dir / "systems.csv").string() + " --out " + (dir / "p.csv").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Foo GPU 9000                            8  error: unknown accelerator"), std::string::npos)
      << r.output;
  std::ofstream(dir / "none.csv") << "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size\n"
                                     "bert,Foo GPU 9000,8,1,8,\n";
  const RunResult none = run("predict --systems " + (dir / "none.csv").string() + " --out " + (dir / "none.csv.out").string());
  ASSERT_EQ(none.status, 0) << none.output;
  EXPECT_NE(none.output.find("predicted 0 of 1 rows; wrote " + (dir / "none.csv.out").string() + "\n"), std::string::npos)
      << none.output;
  EXPECT_FALSE(fs::exists(dir / "none.csv.png"));
  if (std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    EXPECT_TRUE(fs::exists(dir / "p.png"));
  }
}

TEST(Cli, TheCommittedClusterResultsAreCurrentAndAWindowHoldsEveryJob) {
  // The README's shared-fabric table and plot come from results/clusters/shared_fat_tree.
  const fs::path out = fresh_dir("cluster");
  const RunResult r = run("cluster " + std::string(SP_SOURCE_DIR) + "/scenarios/clusters/shared_fat_tree.yaml --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("break-even points shared"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(out / "cluster.csv"), slurp(std::string(SP_SOURCE_DIR) + "/results/clusters/shared_fat_tree/cluster.csv"))
      << "regenerate: build/scalepoint cluster scenarios/clusters/shared_fat_tree.yaml --out results/clusters/shared_fat_tree";
  const std::string trace = slurp(out / "cluster_timeline.json");
  for (const char* job : {"bert stage 0", "stable_diffusion stage 0", "llama2_70b_lora stage 0"}) {
    EXPECT_NE(trace.find(job), std::string::npos) << job;
  }
  EXPECT_TRUE(fs::exists(out / "manifest.yaml"));
}

TEST(Cli, TheCommittedTransformerValidationIsCurrent) {
  // The README's Selene table comes from results/validation/transformer_rows.csv.
  const fs::path out = fresh_dir("transformer");
  const RunResult r = run("validate --transformer " + std::string(SP_SOURCE_DIR) +
                          "/calibration/data/transformer/selene_korthikanti2023.csv --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("8 runs on DGX A100: mean |error|"), std::string::npos) << r.output;
  EXPECT_EQ(slurp(out / "transformer_rows.csv"),
            slurp(std::string(SP_SOURCE_DIR) + "/results/validation/transformer_rows.csv"))
      << "regenerate: build/scalepoint validate --transformer calibration/data/transformer/selene_korthikanti2023.csv --out results/validation";
  // Without --transformer the MLPerf table is required.
  EXPECT_EQ(run("validate --out " + out.string()).status, 2);
}

TEST(Cli, SameScenarioTwiceGivesIdenticalBytes) {
  const fs::path a = fresh_dir("det_a");
  const fs::path b = fresh_dir("det_b");
  ASSERT_EQ(run("run " + scenario("stable_diffusion") + " -q --out " + a.string()).status, 0);
  ASSERT_EQ(run("run " + scenario("stable_diffusion") + " -q --out " + b.string()).status, 0);
  EXPECT_EQ(slurp(a / "summary.csv"), slurp(b / "summary.csv"));
  EXPECT_EQ(slurp(a / "results.h5"), slurp(b / "results.h5"));  // no timestamps inside
}

TEST(Cli, Hdf5HoldsTheCsvColumnsWithUnits) {
  const fs::path out = fresh_dir("h5");
  ASSERT_EQ(run("run " + scenario("retinanet") + " -q --out " + out.string()).status, 0);
  // First CSV data row, to compare against the datasets.
  std::istringstream csv(slurp(out / "summary.csv"));
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);

  H5::H5File file((out / "results.h5").string(), H5F_ACC_RDONLY);
  H5::Attribute wl = file.openAttribute("workload");
  std::string workload;
  wl.read(wl.getStrType(), workload);
  EXPECT_EQ(workload.c_str(), std::string("retinanet"));

  H5::DataSet n = file.openDataSet("/summary/accelerators");
  ASSERT_EQ(n.getTypeClass(), H5T_INTEGER);
  hsize_t rows = 0;
  n.getSpace().getSimpleExtentDims(&rows);
  EXPECT_EQ(rows, 8u);
  std::vector<long long> counts(rows);
  n.read(counts.data(), H5::PredType::NATIVE_LLONG);
  EXPECT_EQ(counts.front(), 8);
  EXPECT_EQ(counts.back(), 1024);

  H5::DataSet ttt = file.openDataSet("/summary/time_to_train_min");
  std::vector<double> minutes(rows);
  ttt.read(minutes.data(), H5::PredType::NATIVE_DOUBLE);
  H5::Attribute units = ttt.openAttribute("units");
  std::string unit;
  units.read(units.getStrType(), unit);
  EXPECT_EQ(unit.c_str(), std::string("min"));

  // The CSV holds the shortest text that reads back to the same double.
  std::vector<std::string> names, cells;
  for (std::istringstream h(header); std::getline(h, row, ',');) names.push_back(row);
  std::istringstream first_row_stream(slurp(out / "summary.csv").substr(header.size() + 1));
  std::string first_row;
  std::getline(first_row_stream, first_row);
  for (std::istringstream r(first_row); std::getline(r, row, ',');) cells.push_back(row);
  ASSERT_EQ(names.size(), cells.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "time_to_train_min") {
      EXPECT_EQ(std::stod(cells[i]), minutes[0]);
    }
  }
}

TEST(Cli, SeedAndSetOverridesAreRecorded) {
  const fs::path out = fresh_dir("seed");
  ASSERT_EQ(run("run " + scenario("bert") + " -q --seed 7 --set accelerators=[8,16] --out " + out.string()).status, 0);
  const std::string manifest = slurp(out / "manifest.yaml");
  EXPECT_NE(manifest.find("seed: \"7\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("- \"accelerators=[8,16]\""), std::string::npos) << manifest;
  std::istringstream csv(slurp(out / "summary.csv"));
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 3);  // header + 2 accelerator counts
}

TEST(Cli, CollectivePrintsAnNcclTestsTable) {
  const RunResult r = run("collective --platform dgx_h100 --gpus 16 --bytes 1KiB:1MiB --algo tree");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("all_reduce on DGX H100, 16 ranks on 2 node(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tree/"), std::string::npos);
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 3 + 11);  // 3 header lines, 1 KiB..1 MiB
  EXPECT_EQ(run("collective --gpus 12").status, 2);
  EXPECT_EQ(run("collective --platform nowhere").status, 2);
  // An algorithm the platform does not run for this collective is the option's fault (it was exit 1).
  const RunResult nvls = run("collective --algo nvls --op all_gather");
  EXPECT_EQ(nvls.status, 2) << nvls.output;
  EXPECT_NE(nvls.output.find("--algo: no algorithm applies to all_gather"), std::string::npos) << nvls.output;
  // The chunk fidelity's budget (10^8 messages, about 1 GB): 65,536 ranks at 8 GiB ended in
  // bad_alloc; now refused before any size runs, naming the option and the flow fidelity.
  const RunResult chunk = run("collective --gpus 65536 --fidelity chunk --bytes 8B:8GiB");
  EXPECT_EQ(chunk.status, 2) << chunk.output;
  EXPECT_NE(chunk.output.find("--fidelity: chunk would play"), std::string::npos) << chunk.output;
  EXPECT_NE(chunk.output.find("use --fidelity flow"), std::string::npos) << chunk.output;
  // Two nodes of a platform without NICs: the argument's error, not an infinite time (exit 1).
  const RunResult island = run("collective --platform rtx_a5000_pair --gpus 4");
  EXPECT_EQ(island.status, 2) << island.output;
  EXPECT_NE(island.output.find("--gpus: 4 GPUs span several nodes, but platform"), std::string::npos) << island.output;
}

TEST(Cli, ListsTheCatalog) {
  const RunResult r = run("list accelerators");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("H100-SXM5-80GB"), std::string::npos);
  EXPECT_NE(r.output.find("TPU-v5p"), std::string::npos);
  const RunResult p = run("list platforms");
  EXPECT_EQ(p.status, 0);
  EXPECT_NE(p.output.find("dgx_b200"), std::string::npos) << p.output;
  // The columns line up whatever a file is called: the longest stem (localhost.calibrated) does
  // not push its row's platform name right of the others'.
  const auto column_of = [&](const std::string& stem, const std::string& name) {
    const std::size_t row = p.output.find(stem + " ");
    const std::size_t at = row == std::string::npos ? row : p.output.find(name, row);
    EXPECT_NE(at, std::string::npos) << stem << " / " << name;
    return at - row;
  };
  EXPECT_EQ(column_of("localhost.calibrated", "localhost (measured)"), column_of("dgx_b200", "DGX B200")) << p.output;
}

TEST(Cli, PredictNamesEveryPublishedAcceleratorAndSaysWhereItsSoftwareEfficiencyCameFrom) {
  // Accelerator strings as MLPerf Training rounds after v4.1 publish them, and v4.1's own: each
  // resolves to a hardware file, and a kind without calibration rows takes its family's or its
  // stack's software efficiency, or the documented prior of an unseen stack.
  const std::vector<std::pair<std::string, std::string>> names = {
      {"NVIDIA Blackwell GPU (GB200),4", "family: blackwell/nvidia"},
      {"AMD Instinct MI300X 192GB HBM3,8", "prior: unseen stack rocm"},
      {"AMD Instinct MI325X 256GB HBM3e,8", "prior: unseen stack rocm"},
      {"AMD Instinct MI325X 256GB HBM3E DLC,8", "prior: unseen stack rocm"},
      {"Intel(R) Gaudi(R) 2 AI Accelerator,8", "prior: unseen stack synapse"},
      {"NVIDIA H100-SXM-80GB,8", "fitted: H100-SXM5-80GB"},
      {"NVIDIA H100-PCIe-80GB,8", "family: hopper/nvidia"},
      {"NVIDIA H200-NVL-141GB,8", "family: hopper/nvidia"},
      {"NVIDIA A100-SXM4-80GB,8", "family: ampere/nvidia"},
      {"NVIDIA L40S,8", "stack: nvidia"},
      {"TPU-trillium,4", "stack: jax"},
      {"NVIDIA Blackwell GPU (B200-SXM-180GB),8", "fitted: B200-SXM-180GB"},
      {"H100 NVL Tensor Core GPU (PCIe),8", "fitted: H100-NVL-94GB"},
      {"TPU-v5p,4", "fitted: TPU-v5p"},
      {"NVIDIA Blackwell Ultra GPU (B300-SXM-270GB),8", "family: blackwell/nvidia"},
      {"NVIDIA GB300,4", "family: blackwell/nvidia"},
      {"AMD Instinct MI355X 288GB HBM3E,8", "prior: unseen stack rocm"}};
  const fs::path dir = fresh_dir("predict_names");
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "systems.csv");
    f << "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size\n";
    for (const auto& [row, source] : names) {
      const std::string per_node = row.substr(row.rfind(',') + 1);
      f << "bert,\"" << row.substr(0, row.rfind(',')) << "\"," << per_node << ",1," << per_node << ",\n";
    }
    // A benchmark by the name its logs give it: RetinaNet's say "ssd".
    f << "ssd,NVIDIA H100-SXM5-80GB,8,1,8,\n";
  }
  const fs::path out = dir / "predicted.csv";
  const RunResult r = run("predict --systems " + (dir / "systems.csv").string() + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("predicted 18 of 18 rows"), std::string::npos) << r.output;
  std::istringstream csv(slurp(out));
  std::string line;
  std::getline(csv, line);
  for (const auto& [row, source] : names) {
    ASSERT_TRUE(std::getline(csv, line));
    EXPECT_NE(line.find("," + source + ",ok,"), std::string::npos) << line;
  }
  ASSERT_TRUE(std::getline(csv, line));
  EXPECT_NE(line.find("fitted: H100-SXM5-80GB,ok,"), std::string::npos) << line;
}

TEST(Cli, PredictKeepsEveryRowAndSaysWhyOneCannotBeModelled) {
  const fs::path dir = fresh_dir("predict");
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "systems.csv");
    f << "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size\n"
         "bert,NVIDIA H100-SXM5-80GB,8,1,8,\n"
         "bert,NVIDIA Imaginary X1,8,1,8,\n"
         "llama2_70b_lora,NVIDIA H200-SXM5-141GB,8,2,16,16\n";
  }
  const fs::path out = dir / "predicted.csv";
  const RunResult r = run("predict --systems " + (dir / "systems.csv").string() + " --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("predicted 2 of 3 rows"), std::string::npos) << r.output;
  std::istringstream csv(slurp(out));
  std::vector<std::string> lines;
  for (std::string l; std::getline(csv, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u);
  // The v4.1-typical BERT batch at 8 GPUs is 768 (models/workloads/bert.yaml).
  EXPECT_NE(lines[1].find(",768,TP1 CP1 PP1 DP8 mb96 x1"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find(",error,\"unknown accelerator 'NVIDIA Imaginary X1' (closest kinds: "), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find(",ok,"), std::string::npos) << lines[3];
  // Same input, same bytes.
  const std::string first = slurp(out);
  ASSERT_EQ(run("predict --systems " + (dir / "systems.csv").string() + " --out " + out.string()).status, 0);
  EXPECT_EQ(slurp(out), first);

  // A missing column is bad input: located message, exit 2, no output.
  {
    std::ofstream f(dir / "bad.csv");
    f << "benchmark,accelerator\nbert,x\n";
  }
  const RunResult bad = run("predict --systems " + (dir / "bad.csv").string() + " --out " + (dir / "p2.csv").string());
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("bad.csv:1: accelerators_per_node: missing column"), std::string::npos) << bad.output;
  EXPECT_FALSE(fs::exists(dir / "p2.csv"));

  // A declared layout that cannot run (TP3 does not divide 8 GPUs) is
  // predicted with one that does, and the row says so.
  {
    std::ofstream f(dir / "tp3.csv");
    f << "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size,tensor_parallel\n"
         "llama2_70b_lora,NVIDIA H100-SXM5-80GB,8,1,8,8,3\n";
  }
  ASSERT_EQ(run("predict --systems " + (dir / "tp3.csv").string() + " --out " + out.string()).status, 0);
  EXPECT_NE(slurp(out).find(",ok,the declared TP3 CP1 PP1 cannot run (TP3: llama2_70b_lora's 64 attention heads and 8 "
                            "key-value groups do not split over 3 ranks); predicted with the fastest layout that does"),
            std::string::npos) << slurp(out);
}

TEST(Cli, PlatformOptionReplacesTheScenariosPlatform) {
  const fs::path out = fresh_dir("platform");
  const RunResult r = run("run " + scenario("bert") + " --platform dgx_h200 --set accelerators=[8] --out " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("bert on DGX H200"), std::string::npos) << r.output;
  EXPECT_NE(slurp(out / "manifest.yaml").find("platform=<dgx_h200>"), std::string::npos);
  // A --set of a platform key changes the platform --platform gives (it was replaced by it,
  // silently): a tenth of the NIC bandwidth slows the 64-GPU step.
  const fs::path slow = fresh_dir("platform_set");
  ASSERT_EQ(run("run " + scenario("bert") + " --platform dgx_h200 --set accelerators=[64] --out " + out.string()).status, 0);
  ASSERT_EQ(run("run " + scenario("bert") + " --platform dgx_h200 --set accelerators=[64] "
                "--set 'platform.scale_out.nic_bandwidth=\"40 Gb/s\"' --out " + slow.string()).status, 0);
  EXPECT_NE(slurp(out / "summary.csv"), slurp(slow / "summary.csv"));
  const RunResult bad = run("run " + scenario("bert") + " --platform dgx_h2000");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.output.find("did you mean 'dgx_h200'"), std::string::npos) << bad.output;
  // A platform file's errors name that file and line, and those of the protocol table it
  // includes name the table it includes, not the shipped one the scenario's platform included
  // (found by a hostile-input review: both were reported without a line, or at the shipped file).
  const fs::path own = fresh_dir("own_platform");
  fs::create_directories(own);
  std::string platform = slurp(fs::path(SP_SOURCE_DIR) / "scenarios/platforms/dgx_h100.yaml");
  std::ofstream(own / "nccl_protocols.yaml") << "ll: {bandwidth_factor: 0.5, chunk: \"32 KiB\", launch: \"6 GB/s\"}\n";
  std::ofstream(own / "p.yaml") << platform;
  const RunResult table = run("run " + scenario("bert") + " --platform " + (own / "p.yaml").string());
  EXPECT_EQ(table.status, 2);
  EXPECT_NE(table.output.find((own / "nccl_protocols.yaml").string() + ":1:54: platform.protocols.ll.launch: "),
            std::string::npos) << table.output;
  std::ofstream(own / "p.yaml") << "host_cpu: zen\n" << platform;
  const RunResult host = run("run " + scenario("bert") + " --platform " + (own / "p.yaml").string());
  EXPECT_EQ(host.status, 2);
  EXPECT_NE(host.output.find((own / "p.yaml").string() + ":1:11: platform.host_cpu: unknown host CPU 'zen'"),
            std::string::npos) << host.output;
}


TEST(Cli, AnchorTakesATimeToTrainOrAStepAndSaysWhichItTook) {
  // `--anchor N=TIME` anchors the time to train, `--anchor N=TIME/step` the steady step; the
  // table and the manifest say which was measured, and a value that is neither is refused with
  // exit status 2 naming --anchor.
  const fs::path out = fresh_dir("anchor");
  const RunResult step = run("run " + scenario("bert") + " --set accelerators=[8,64] --anchor 8=0.1s/step --no-timelines --out " +
                             out.string());
  ASSERT_EQ(step.status, 0) << step.output;
  EXPECT_NE(step.output.find("anchored: N=8 measured a 0.1 s step where the model gave"), std::string::npos) << step.output;
  EXPECT_NE(slurp(out / "manifest.yaml").find("measured a 0.1 s step"), std::string::npos);
  const RunResult ttt = run("run " + scenario("bert") + " --set accelerators=[8,64] --anchor 8=6min --no-timelines --out " +
                            out.string());
  ASSERT_EQ(ttt.status, 0) << ttt.output;
  EXPECT_NE(ttt.output.find("anchored: N=8 measured 6 min where the model gave"), std::string::npos) << ttt.output;
  // The form itself, or the quantity's value (at the key the form chose).
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"8=", "expected N=TIME or N=TIME/step"},
           {"8=/step", "expected N=TIME or N=TIME/step"},
           {"=6min", "expected N=TIME or N=TIME/step"},
           {"8=fast/step", "anchor.step_time"},
           {"8=fast", "anchor.time_to_train"}}) {
    const RunResult r = run("run " + scenario("bert") + " --anchor " + bad + " --out " + out.string());
    EXPECT_EQ(r.status, 2) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--anchor"), std::string::npos) << bad << ": " << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << bad << ": " << r.output;
  }
  // A step so slow at 1,024 GPUs that the level meeting it makes the run longer than the
  // simulator holds: the anchor's error, exit 2, not a failed simulation (exit 1, no key; found by
  // a hostile-input review).
  const RunResult slow = run("run " + scenario("llama2_70b_pretrain") + " --anchor 1024=20s/step --out " + out.string());
  EXPECT_EQ(slow.status, 2) << slow.output;
  EXPECT_NE(slow.output.find("--anchor 1024=20s/step: anchor.step_time: the model gives "), std::string::npos) << slow.output;
}

TEST(Cli, AnalyzeCountsABenchmarkSpelledTwoWaysAsOne) {
  // RetinaNet as its logs name it ("ssd") and as the results table does: analyze, like validate,
  // calibrate and predict, names every row's benchmark by the catalog, so the three systems are
  // one benchmark of three, not two of one and two.
  const fs::path dir = fresh_dir("analyze_names");
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "rows.csv");
    f << "benchmark,submitter,system_name,accelerator,accelerators_per_node,nodes,accelerators_total,"
         "time_to_train_min,global_batch_size\n";
    f << "ssd,A,one,NVIDIA H100-SXM5-80GB,8,1,8,36.3,256\n";
    f << "retinanet,A,two,NVIDIA H100-SXM5-80GB,8,2,16,19.5,256\n";
    f << "RetinaNet,A,eight,NVIDIA H100-SXM5-80GB,8,8,64,6.2,256\n";
  }
  const RunResult r = run("analyze --data " + (dir / "rows.csv").string() + " --out " + (dir / "out").string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("retinanet                 3"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("ssd"), std::string::npos) << r.output;
}
