// The system model's own rules by hand (batch interpolation, node resizing, a row's declared
// layout, rows it cannot model) and predictions of accelerator kinds left out of the fit.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "calibration/mlperf/calibrate.hpp"
#include "calibration/predict/system_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "tests/calibration/mlperf_fixtures.hpp"

namespace sp::calibration {

using testing::catalog;
using testing::v41;

// An accelerator kind predicted with every row of it left out of the fit, as a user would
// predict a system they do not have. What the kind's rows add is its software level; without
// them the prediction takes its family's or stack's. The tolerances are fixed beforehand from
// what the structure can know: a kind of a family the fit saw (H200 from Hopper) strays by its
// kind spread, 15 %; a kind of a family never seen (B200: no other Blackwell rows in v4.1) by the
// family spread on top, 35 %, the leave-one-kind-out target of issue 12. They bound how far
// leaving the kind out moves each prediction from the one calibrated with every row: the time
// model's own error on a row (Azure's 512 H200 on Llama: -16 % in sample, a mid-scale step the
// model makes too fast) is the same with or without the kind and is what the validation tables
// report (calibration/README.md).
void expect_left_out_kind(const std::string& kind, const std::string& source, double tolerance,
                          int large = std::numeric_limits<int>::max(), double large_tolerance = 0) {
  const PlatformCatalog platforms(catalog());
  const ValidationReport rep = predict_left_out(v41(), catalog(), platforms, HoldOut::kind, kind, 100);
  const SystemModelInputs all_rows{catalog(), platforms, models::default_calibration(), 0, 1};
  ASSERT_FALSE(rep.rows.empty());
  for (const ValidationRow& r : rep.rows) {
    EXPECT_EQ(r.prediction.kind, kind);
    EXPECT_EQ(r.prediction.software_source, source);
    const double left_out = to_seconds(r.prediction.estimate.time_to_train);
    const double in_sample = to_seconds(predict_system(r.row, all_rows).estimate.time_to_train);
    EXPECT_LT(std::abs(std::log(left_out / in_sample)), r.row.accelerators > large ? large_tolerance : tolerance)
        << r.row.benchmark << " " << r.row.accelerators << " x " << kind << ": " << left_out / 60 << " left out, "
        << in_sample / 60 << " in sample, " << *r.row.time_to_train_min << " min published";
    // The interval of an unseen kind is wider than the model error alone: it carries the spread
    // of the levels the fit never saw.
    EXPECT_GT(r.prediction.estimate.p90, r.prediction.estimate.p10);
  }
}

TEST(LeftOut, B200FromNoBlackwellRowsAtAll) {
  expect_left_out_kind("B200-SXM-180GB", "stack: nvidia", 0.35);
}

TEST(LeftOut, H200FromTheHopperFamily) {
  expect_left_out_kind("H200-SXM5-141GB", "family: hopper/nvidia", 0.15);
}

// The kind the fit is anchored on when every row is in: left out, H200 SXM (the kind with the
// most rows then) anchors the fit and H100 SXM is predicted from the Hopper family like H200 is.
// Its rows above 64 GPUs also lose what only H100's large runs tell (the logged evaluations and
// steps at 1,024-3,472 GPUs: per-node evaluation work, host time per step at 1-4 samples per
// GPU): there they are held to the leave-one-kind-out bound of issue 12 (35 %), as B200's are.
TEST(LeftOut, H100TheReferenceKindFromTheHopperFamily) {
  expect_left_out_kind("H100-SXM5-80GB", "family: hopper/nvidia", 0.15, 64, 0.35);
}

TEST(SystemModel, TypicalBatchInterpolatesGeometrically) {
  // BERT's table has 8 -> 768 and 64 -> 4608. At 16: f = log(16/8) / log(64/8) = 1/3, so
  // 768 x (4608/768)^(1/3) = 768 x 6^(1/3) = 1395.5 samples, 87.2 per rank at DP16 -> 87 x 16.
  const models::Workload bert = *catalog().find_workload("bert");
  EXPECT_EQ(typical_global_batch(bert, 16, 16), 87 * 16);
  EXPECT_EQ(typical_global_batch(bert, 8, 8), 768);           // a table point
  EXPECT_EQ(typical_global_batch(bert, 1, 1), 448);           // below the table: its first point
  // Above the table: its last point, 13888 / 8192 = 1.70 per rank, rounded to whole samples: 2.
  EXPECT_EQ(typical_global_batch(bert, 8192, 8192), 2 * 8192);
}

TEST(SystemModel, ResizedNodeKeepsItsNicsPerAccelerator) {
  const models::Platform dgx = models::parse_platform(
      config::load_file(std::string(SP_SOURCE_DIR) + "/scenarios/platforms/dgx_h100.yaml"), catalog());
  const models::Platform four = resize_node(dgx, 4);
  EXPECT_EQ(four.topology.accelerators_per_node, 4);
  EXPECT_EQ(four.topology.tiers[0].size, 4);  // the NVLink switch domain is the node
  EXPECT_DOUBLE_EQ(four.topology.tiers.back().bandwidth.value(), dgx.topology.tiers.back().bandwidth.value());
}

namespace {
// A row of a results table with what the system model needs: benchmark, accelerator and count.
MlperfResult system_row(const char* benchmark, const char* accelerator, int accelerators, int per_node) {
  MlperfResult row;
  row.benchmark = benchmark;
  row.accelerator = accelerator;
  row.accelerators = accelerators;
  row.accelerators_per_node = per_node;
  return row;
}
}  // namespace

TEST(SystemModel, TheSpecOfAChosenLayoutGivesItBackWithItsOverlaps) {
  // The fit and the interval re-estimate a row at its chosen layout through spec_of: the Llama
  // file's overlaps (training overlaps TP but qkv's, an evaluation not its all-gathers, the
  // input-gradient reduce-scatters in bulk at CP2) must survive it.
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs in{catalog(), platforms, models::Calibration{}, 0, 1};
  MlperfResult row = system_row("llama2_70b_lora", "NVIDIA H100-SXM5-80GB", 64, 8);
  row.global_batch = 8;
  const SystemPrediction p = predict_system(row, in);
  ASSERT_EQ(p.status, "ok") << p.message;
  EXPECT_TRUE(p.estimate.layout.overlap_tensor_parallel);
  EXPECT_FALSE(p.estimate.layout.evaluation_overlaps_all_gathers);
  std::string why;
  const auto again = models::resolve_layout(spec_of(p.estimate.layout), p.platform.topology, 64, 8, why);
  ASSERT_TRUE(again) << why;
  EXPECT_EQ(again->describe(), p.estimate.layout.describe());
  EXPECT_TRUE(again->overlap_tensor_parallel);
  EXPECT_FALSE(again->evaluation_overlaps_all_gathers);
  ASSERT_GT(p.estimate.layout.cp, 1);  // in bulk only with context parallelism
  EXPECT_FALSE(again->pipelined_dgrad_reduce_scatters);
  EXPECT_TRUE(again->not_overlapped.qkv);
  EXPECT_FALSE(again->not_overlapped.fc1);
}

TEST(SystemModel, ARowsDeclaredLayoutReplacesTheSearch) {
  // Llama2-70B LoRA on 16 H100 at GBS 8: the workload's multi-node recipe is TP4 CP2, 2 replicas
  // of 4 micro-batches (as Dell ran it). The uncalibrated search takes TP4 CP1 (4 replicas of 2),
  // as Lambda ran it: at CP2 each layer's compute waits for two input-gradient reduce-scatters,
  // not one, and merges its ring steps' partial results. Lambda's logs say it ran TP4 CP1:
  // declared, it is taken as it is, and said so.
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs in{catalog(), platforms, models::Calibration{}, 0, 1};
  MlperfResult row = system_row("llama2_70b_lora", "NVIDIA H100-SXM5-80GB", 16, 8);
  row.global_batch = 8;
  SystemPrediction p = predict_system(row, in);
  ASSERT_EQ(p.status, "ok") << p.message;
  EXPECT_EQ(p.estimate.layout.describe(), "TP4 CP1 PP1 DP4 mb1 x2 ZeRO-1");
  EXPECT_EQ(p.estimate.layout_basis, "searched");
  row.tensor_parallel = 4;
  row.context_parallel = 1;
  p = predict_system(row, in);
  ASSERT_EQ(p.status, "ok") << p.message;
  EXPECT_EQ(p.estimate.layout.describe(), "TP4 CP1 PP1 DP4 mb1 x2 ZeRO-1");
  EXPECT_EQ(p.estimate.layout_basis, "declared");
  // The table's columns: a degree below 1 names its file, line and column.
  const std::string header = "benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size,"
                             "tensor_parallel,context_parallel,pipeline_parallel\n";
  const auto rows = read_mlperf_results(
      config::CsvTable(header + "llama2_70b_lora,NVIDIA H100-SXM5-80GB,8,2,16,8,4,1,\n", "systems.csv"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].tensor_parallel, 4);
  EXPECT_EQ(rows[0].context_parallel, 1);
  EXPECT_FALSE(rows[0].pipeline_parallel.has_value());
  try {
    read_mlperf_results(config::CsvTable(header + "llama2_70b_lora,NVIDIA H100-SXM5-80GB,8,2,16,8,0,1,1\n", "systems.csv"));
    ADD_FAILURE() << "a tensor-parallel degree of 0 was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("systems.csv:2"), std::string::npos) << what;
    EXPECT_NE(what.find("tensor_parallel"), std::string::npos) << what;
  }
}

TEST(SystemModel, RowsOfOneConfigurationShareItsSearchAndKeepTheirOwnDraws) {
  // Two rows naming the same system (Llama2-70B LoRA on 16 H100 at GBS 8) but different table
  // rows and logged convergence: with a cache the second reuses the first's layout search and
  // sensitivities, and both are what they are without it (their convergence their own; their
  // intervals drawn from what the row is, not where it stands in the file, so a reordered table
  // gives every row the same interval); a row with another batch is another configuration.
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs in{catalog(), platforms, models::default_calibration(), 100, 1};
  MlperfResult a = system_row("llama2_70b_lora", "NVIDIA H100-SXM5-80GB", 16, 8);
  a.global_batch = 8;
  a.row = 2;
  MlperfResult b = a;
  b.row = 7;
  b.converged = 3400;  // the samples its logged runs converged at
  MlperfResult c = a;
  c.global_batch = 16;
  PredictionCache cache;
  for (const MlperfResult& r : {a, b, c, a}) {
    const SystemPrediction cached = predict_system(r, in, &cache);
    const SystemPrediction plain = predict_system(r, in);
    ASSERT_EQ(cached.status, "ok") << cached.message;
    EXPECT_EQ(cached.estimate.layout.describe(), plain.estimate.layout.describe());
    EXPECT_EQ(cached.global_batch, plain.global_batch);
    EXPECT_EQ(cached.estimate.time_to_train, plain.estimate.time_to_train);
    EXPECT_EQ(cached.estimate.p10, plain.estimate.p10);
    EXPECT_EQ(cached.estimate.p90, plain.estimate.p90);
    EXPECT_EQ(cached.at_logged_convergence, plain.at_logged_convergence);
  }
  EXPECT_EQ(predict_system(a, in, &cache).estimate.p10, predict_system(b, in, &cache).estimate.p10);
  EXPECT_NE(predict_system(a, in, &cache).estimate.p10, predict_system(c, in, &cache).estimate.p10);
  EXPECT_TRUE(predict_system(b, in, &cache).at_logged_convergence.has_value());
  EXPECT_EQ(predict_system(c, in, &cache).global_batch, 16);
}

TEST(SystemModel, AClusterPlatformIsUsedWhereARowNamesItAndItsHostCpuWhereItsProcessorDoes) {
  // Oracle's RoCE cluster (16 x 200 Gb/s a node) is one operator's platform: an H100 row without a
  // platform gets the reference DGX H100 (8 x 400 Gb/s), one naming it gets Oracle's, and a name
  // of another kind or of no file is an error that says so.
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs in{catalog(), platforms, models::Calibration{}, 0, 1};
  MlperfResult row = system_row("llama2_70b_lora", "NVIDIA H100-SXM5-80GB", 64, 8);
  row.global_batch = 8;
  SystemPrediction p = predict_system(row, in);
  ASSERT_EQ(p.status, "ok") << p.message;
  EXPECT_EQ(p.platform.name, "DGX H100");
  EXPECT_EQ(p.platform.host_cpu, models::HostCpu::intel);
  // NCCL prices a collective's steps across nodes by the hosts' CPU vendor: a row whose
  // host_processor names AMD gets the AMD terms, one naming none the platform's own (Intel).
  row.host_processor = "AMD EPYC 9654 96-Core Processor";
  p = predict_system(row, in);
  ASSERT_EQ(p.status, "ok") << p.message;
  EXPECT_EQ(p.platform.host_cpu, models::HostCpu::amd);
  row.host_processor.clear();
  row.platform = "oci_bm_gpu_h100_8";
  p = predict_system(row, in);
  ASSERT_EQ(p.status, "ok") << p.message;
  EXPECT_EQ(p.platform.name, "OCI BM.GPU.H100.8");
  EXPECT_EQ(p.platform.topology.tiers.back().nics_per_node, 16);
  row.platform = "azure_nd_h200_v5";
  p = predict_system(row, in);
  EXPECT_EQ(p.status, "error");
  EXPECT_NE(p.message.find("has H200-SXM5-141GB, the row H100-SXM5-80GB"), std::string::npos) << p.message;
  row.platform = "nosuch";
  EXPECT_NE(predict_system(row, in).message.find("unknown platform 'nosuch'"), std::string::npos);
}

TEST(SystemModel, RowsItCannotModelSayWhy) {
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs in{catalog(), platforms, models::Calibration{}, 0, 1};
  MlperfResult row = system_row("bert", "NVIDIA Imaginary X1", 8, 8);
  SystemPrediction p = predict_system(row, in);
  EXPECT_EQ(p.status, "error");
  EXPECT_EQ(p.message.rfind("unknown accelerator 'NVIDIA Imaginary X1' (closest kinds: ", 0), 0u) << p.message;
  row.accelerator = "NVIDIA H100-SXM5-80GB";
  row.benchmark = "gpt3";
  p = predict_system(row, in);
  EXPECT_EQ(p.message, "unknown benchmark 'gpt3'");
  row.benchmark = "bert";
  row.accelerators = 12;  // one and a half nodes
  p = predict_system(row, in);
  EXPECT_EQ(p.message, "12 accelerators are not whole nodes of 8");
  row.accelerators = 8;
  p = predict_system(row, in);
  EXPECT_EQ(p.status, "ok");
  EXPECT_EQ(p.global_batch, 768);
}

TEST(SystemModel, ABatchNoLayoutSplitsSaysWhy) {
  // One GB200 NVL72 rack (18 trays of 4) on Llama2 LoRA at global batch 8: 72 = 9 x 8, and TP,
  // CP and PP take powers of two only, so every layout keeps 9 (or 9 x 2^k) data-parallel ranks,
  // none of which divides 8. The recipe's TP4 CP2 leaves 72 / 8 = 9 of them.
  const PlatformCatalog platforms(catalog());
  const SystemModelInputs in{catalog(), platforms, models::Calibration{}, 0, 1};
  MlperfResult row = system_row("llama2_70b_lora", "NVIDIA GB200", 72, 4);
  row.global_batch = 8;
  SystemPrediction p = predict_system(row, in);
  EXPECT_EQ(p.status, "error");
  EXPECT_EQ(p.message,
            "no parallel layout fits 72 accelerators at global batch 8: the global batch 8 does not split over 9 "
            "data-parallel ranks; and no layout can: TP, CP and PP are powers of two, so every layout keeps 72's "
            "odd factor 9 in its data-parallel ranks");
  row.global_batch = 9;  // 9 replicas of TP4 CP2 (or TP8) split it
  EXPECT_EQ(predict_system(row, in).status, "ok") << predict_system(row, in).message;
}

}  // namespace sp::calibration

namespace sp::calibration {

TEST(SystemModel, ARowIsPredictedWithItsRoundsRcps) {
  // Stable Diffusion on 8 H100s at GBS 256: v5.0's reference converges at 1,706,666.67 samples
  // there, v4.1's at 2,048,000, and the expected score follows; rows of one configuration and
  // another round do not share a cached configuration. A row of an unknown round (or none) is
  // v4.1's, the file's own.
  const PlatformCatalog platforms(catalog());
  PredictionCache cache;
  const SystemModelInputs in{catalog(), platforms, models::Calibration{}, 0, 1};
  MlperfResult row = system_row("stable_diffusion", "NVIDIA H100-SXM5-80GB", 8, 8);
  row.global_batch = 256;
  row.round = "4.1";
  const SystemPrediction v41 = predict_system(row, in, &cache);
  row.round = "5.0";
  const SystemPrediction v50 = predict_system(row, in, &cache);
  row.round.clear();
  const SystemPrediction unsaid = predict_system(row, in, &cache);
  ASSERT_EQ(v41.status, "ok");
  ASSERT_EQ(v50.status, "ok");
  // The estimate's mean is of the runs as the checkpoints every 512,000 images observe them,
  // within 0.1 % of the reference's mean here.
  EXPECT_NEAR(v41.estimate.convergence.mean_samples / 2048000.0, 1.0, 1e-3);
  EXPECT_NEAR(v50.estimate.convergence.mean_samples / 1706666.6667, 1.0, 1e-3);
  EXPECT_EQ(unsaid.estimate.convergence.mean_samples, v41.estimate.convergence.mean_samples);
  EXPECT_LT(to_seconds(v50.estimate.time_to_train), 0.9 * to_seconds(v41.estimate.time_to_train));
  // The step is the same: only the samples to converge differ.
  EXPECT_EQ(v50.estimate.step.step, v41.estimate.step.step);
}

TEST(SystemModel, AResultsRoundThatIsNoRoundIsSaidAndPredictedWithTheFilesTable) {
  const std::string head = "round,benchmark,accelerator,accelerators_per_node,nodes,accelerators_total,global_batch_size\n";
  const auto read = [&](const std::string& round) {
    return read_mlperf_results(config::CsvTable(head + round + ",bert,H100-SXM5-80GB,8,1,8,768\n", "rows.csv"));
  };
  EXPECT_EQ(read("5.0").front().round, "5.0");
  EXPECT_EQ(read("v5.0").front().round, "v5.0");
  EXPECT_EQ(read("").front().round, "");
  // It only picks the reference convergence: a warning at its cell, and the file's table.
  WarningCapture warnings;
  EXPECT_EQ(read("Training 5").front().round, "");
  ASSERT_EQ(warnings.messages().size(), 1u);
  EXPECT_NE(warnings.messages()[0].find("rows.csv:2"), std::string::npos) << warnings.messages()[0];
  EXPECT_NE(warnings.messages()[0].find("'Training 5' is not an MLPerf round"), std::string::npos) << warnings.messages()[0];
}

}  // namespace sp::calibration
