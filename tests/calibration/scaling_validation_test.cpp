// validate --scaling: the anchor a multi-node row starts from, the two-parameter throughput curve
// it is compared with, and the summaries.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <optional>

#include "calibration/mlperf/scaling_validation.hpp"
#include "calibration/predict/throughput_curve.hpp"
#include "tests/calibration/mlperf_fixtures.hpp"

namespace sp::calibration {

namespace {
MlperfResult row(int line, const std::string& submitter, int per_node, int nodes, double minutes,
                 const std::string& benchmark = "bert") {
  MlperfResult r;
  r.line = line;
  r.benchmark = benchmark;
  r.submitter = submitter;
  r.system_name = submitter + std::to_string(line);
  r.accelerators_per_node = per_node;
  r.nodes = nodes;
  r.accelerators = per_node * nodes;
  r.time_to_train_min = minutes;
  return r;
}
}  // namespace

TEST(ThroughputCurve, FitRecoversTheFixedCostPerStepWithAPerKindThroughput) {
  // Points made from the curve itself, T = S (G/N + k) / (p G), with k = 20 samples per
  // accelerator and two kinds at p = 3 and p = 7 samples/min/accelerator: the fit finds k = 20
  // and each p, and a kind's throughput does not leak into k.
  std::vector<CurvePoint> pts;
  const double k = 20;
  for (const auto& [kind, p] : std::vector<std::pair<std::string, double>>{{"A", 3.0}, {"B", 7.0}}) {
    for (const auto& [g, n, s] : std::vector<std::tuple<double, double, double>>{
             {768, 8, 2.6e6}, {768, 16, 2.6e6}, {4608, 64, 2.8e6}, {13888, 3472, 4.5e6}}) {
      pts.push_back({kind, s, g, n, s * (g / n + k) / (p * g)});
    }
  }
  const ThroughputCurve c = fit_throughput_curve(pts);
  EXPECT_NEAR(c.k, 20.0, 1e-4);
  EXPECT_NEAR(c.p.at("A"), 3.0, 1e-6);
  EXPECT_NEAR(c.p.at("B"), 7.0, 1e-6);
}

TEST(ThroughputCurve, AnchoredPredictionIsTheCurvesRatio) {
  // k = 24: from 8 accelerators at G = 768 (x = 96) in 5.5 min to 64 at G = 4608 (x = 72), with
  // S = 2.6e6 and 2.8e6 samples: 5.5 x [2.8e6 (72 + 24) / 4608] / [2.6e6 (96 + 24) / 768]
  // = 5.5 x 58,333.33 / 406,250 = 0.789744 min.
  ThroughputCurve c;
  c.k = 24;
  const CurvePoint anchor{"A", 2.6e6, 768, 8, 5.5}, target{"A", 2.8e6, 4608, 64, 0};
  const double expected = 5.5 * (2.8e6 * (72.0 + 24) / 4608) / (2.6e6 * (96.0 + 24) / 768);
  EXPECT_NEAR(expected, 0.789744, 1e-6);
  EXPECT_NEAR(c.anchored(target, anchor), expected, 1e-12);
}

TEST(ScalingValidation, AnchorPrefersTheSameSubmittersNodeThenTheMedianOfOthers) {
  // Multi-node row 0 (Lambda, 8 x 2). One-node rows of the kind: two of another submitter of the
  // same node size (5.0 and 5.4 min) and one of 4 accelerators: no Lambda one-node row, so the
  // median of the same-size rows, the lower of two middle ones: 5.0 min (line 3).
  std::vector<MlperfResult> rows = {row(2, "Lambda", 8, 2, 3.3), row(3, "Dell", 8, 1, 5.0), row(4, "Eos", 8, 1, 5.4),
                                    row(5, "Dell", 4, 1, 10.2)};
  std::vector<std::string> kinds(rows.size(), "H100");
  std::string rule;
  EXPECT_EQ(choose_anchor(rows, kinds, 0, rule), 1);
  EXPECT_EQ(rule, "one node of another submitter");
  // Dell's two nodes start from Dell's own node of the same size, not from its 4-accelerator one.
  rows.push_back(row(6, "Dell", 8, 2, 2.9));
  kinds.push_back("H100");
  EXPECT_EQ(choose_anchor(rows, kinds, 4, rule), 1);
  EXPECT_EQ(rule, "same submitter, one node");
  // Another kind's rows, another benchmark's, and rows without a time never anchor.
  kinds[1] = kinds[2] = "H200";
  rows[3].benchmark = "retinanet";
  EXPECT_EQ(choose_anchor(rows, kinds, 0, rule), -1);
  // Without a one-node row, the same submitter's smallest system on fewer nodes (TPU slices).
  std::vector<MlperfResult> tpu = {row(7, "Google", 4, 2, 49.7), row(8, "Google", 4, 16, 9.6),
                                   row(9, "Google", 4, 256, 2.4)};
  std::vector<std::string> tk(3, "TPU");
  EXPECT_EQ(choose_anchor(tpu, tk, 2, rule), 0);
  EXPECT_EQ(rule, "same submitter, fewer nodes");
  EXPECT_EQ(choose_anchor(tpu, tk, 0, rule), -1);
}

TEST(ScalingValidation, ABenchmarkSpelledTwoWaysIsOneBenchmark) {
  // RetinaNet's logs and results folders call it "ssd", the v4.1 table "retinanet": a table with
  // a one-node "ssd" row and a two-node "RetinaNet" row of one submitter anchors the second on
  // the first once the names are the catalog's, as `validate`, `calibrate`, `predict` and
  // `analyze` name them after reading. A benchmark no workload describes keeps its own name.
  std::vector<MlperfResult> rows = {row(2, "Dell", 8, 2, 12.1, "RetinaNet"), row(3, "Dell", 8, 1, 36.3, "ssd"),
                                    row(4, "Dell", 8, 1, 5.0, "dlrm_dcnv2")};
  const std::vector<std::string> kinds(rows.size(), "H100");
  std::string rule;
  EXPECT_EQ(choose_anchor(rows, kinds, 0, rule), -1);
  name_benchmarks(rows, testing::catalog());
  EXPECT_EQ(rows[0].benchmark, "retinanet");
  EXPECT_EQ(rows[1].benchmark, "retinanet");
  EXPECT_EQ(rows[2].benchmark, "dlrm_dcnv2");
  EXPECT_EQ(choose_anchor(rows, kinds, 0, rule), 1);
  EXPECT_EQ(rule, "same submitter, one node");
  EXPECT_EQ(benchmarks(rows), (std::vector<std::string>{"retinanet", "dlrm_dcnv2"}));
}

TEST(ScalingValidation, SummariesByBenchmarkScaleAndAll) {
  // Three rows: errors +10 % and -20 % at N = 16 and 64 (bert), +4 % at 512 (llama): bert's
  // median is 15 %, N=9-64 the same two, N>64 the one, all: median 10 %, max 20 %. The first
  // two start from the same submitter's node, the third from another's: 15 % and 4 %.
  const auto scaled = [](int line, const std::string& b, int nodes, double published, double predicted) {
    ScalingRow s;
    s.row = row(line, "X", 8, nodes, published, b);
    s.anchor = row(1, "Y", 8, 1, 10.0, b);
    s.predicted_min = predicted;
    s.curve_min = published;
    s.perfect_min = published * 2;
    return s;
  };
  std::vector<ScalingRow> rows = {scaled(2, "bert", 2, 5.0, 5.5), scaled(3, "bert", 8, 2.0, 1.6),
                                  scaled(4, "llama", 64, 1.0, 1.04)};
  rows[0].anchor_rule = "same submitter, one node";
  rows[1].anchor_rule = "same submitter, fewer nodes";
  rows[2].anchor_rule = "one node of another submitter";
  const std::vector<ScalingSummary> s = summarise_scaling(rows);
  ScalingReport rep;
  rep.summaries = s;
  EXPECT_EQ(rep.summary("bert").rows, 2);
  EXPECT_NEAR(rep.summary("bert").median, 15.0, 1e-9);
  EXPECT_NEAR(rep.summary("N=9-64").median, 15.0, 1e-9);
  EXPECT_EQ(rep.summary("N>64").rows, 1);
  EXPECT_NEAR(rep.summary("N>64").median, 4.0, 1e-9);
  EXPECT_NEAR(rep.summary("all").median, 10.0, 1e-9);
  EXPECT_NEAR(rep.summary("all").max, 20.0, 1e-9);
  EXPECT_NEAR(rep.summary("all").curve_median, 0.0, 1e-12);
  EXPECT_NEAR(rep.summary("all").perfect_median, 100.0, 1e-9);
  EXPECT_EQ(rep.summary("anchor: same submitter").rows, 2);
  EXPECT_NEAR(rep.summary("anchor: same submitter").median, 15.0, 1e-9);
  EXPECT_EQ(rep.summary("anchor: another submitter").rows, 1);
  EXPECT_NEAR(rep.summary("anchor: another submitter").median, 4.0, 1e-9);
}

TEST(ScalingValidation, StepAnchoredErrorsAreSummarisedOnTheRowsThatHaveThem) {
  // Three rows published at 1 min, anchored on the published time at 1.10, 0.80 and 1.04 min;
  // the first two also anchored on their anchor's logged step, at 1.02 and 0.95 min. On those
  // two: from the step |2 %| and |5 %| (median 3.5 %, the 90th percentile 2 + 0.9 x 3 = 4.7 %),
  // from the time |10 %| and |20 %| (median 15 %); the third row counts only in the first.
  const auto scaled = [](int line, double predicted, std::optional<double> from_step) {
    ScalingRow s;
    s.row = row(line, "X", 8, 2, 1.0);
    s.anchor = row(1, "X", 8, 1, 10.0);
    s.predicted_min = predicted;
    s.curve_min = s.perfect_min = 1.0;
    s.step_anchored_min = from_step;
    return s;
  };
  const std::vector<ScalingRow> rows = {scaled(2, 1.10, 1.02), scaled(3, 0.80, 0.95), scaled(4, 1.04, std::nullopt)};
  EXPECT_NEAR(rows[0].step_error(), 0.02, 1e-12);
  EXPECT_TRUE(std::isnan(rows[2].step_error()));
  ScalingReport rep;
  rep.summaries = summarise_scaling(rows);
  const ScalingSummary& all = rep.summary("all");
  EXPECT_EQ(all.rows, 3);
  EXPECT_EQ(all.step_rows, 2);
  EXPECT_NEAR(all.step_median, 3.5, 1e-9);
  EXPECT_NEAR(all.step_p90, 4.7, 1e-9);
  EXPECT_NEAR(all.step_model_median, 15.0, 1e-9);
  EXPECT_NEAR(all.median, 10.0, 1e-9);
}

TEST(ScalingValidation, ReleasesAreTheFrameworksYearMonthTokens) {
  // As v4.1's rows write them (mlcommons/training_results_v4.1, systems/*.json framework).
  using V = std::vector<std::string>;
  EXPECT_EQ(software_releases("NGC Pytorch 24.09, NGC HugeCTR 24.09, NVIDIA Nemo 24.09"), V{"24.09"});
  EXPECT_EQ(software_releases("PyTorch NVIDIA Release 22.09 or 22.04"), (V{"22.04", "22.09"}));
  EXPECT_EQ(software_releases("PyTorch, Merlin HugeCTR, NeMo Framework, DGL NVIDIA Release 24.09; PyTorch NVIDIA Release 23.09"),
            (V{"23.09", "24.09"}));
  EXPECT_EQ(software_releases("NVIDIA PyTorch/MxNeti/DGL"), V{});
  EXPECT_EQ(software_releases("maxdiffusion"), V{});
  // Not a release: a month 13, a version's inner part, a token glued to letters, a bare year.
  EXPECT_EQ(software_releases("jax 24.13, python 3.10.12, cuda12.04, v24.09, 2024.09, 24.09a, 24.09.1, 2024"), V{});
  EXPECT_EQ(software_releases("23.04"), V{"23.04"});
  EXPECT_EQ(software_releases("NVIDIA Release 24.09. PyTorch 23.09-py3"), (V{"23.09", "24.09"}));
}

TEST(ScalingValidation, AnchorSoftwareIsTheSameReleaseOnlyWhenTheyShareOne) {
  MlperfResult a = row(1, "X", 8, 1, 10.0), b = row(2, "Y", 8, 2, 5.0);
  a.framework = "PyTorch NVIDIA Release 24.09; PyTorch NVIDIA Release 23.09";
  b.framework = "PyTorch NVIDIA Release 23.09";
  EXPECT_EQ(software_match(b, a), "same release");
  b.framework = "PyTorch NVIDIA Release 24.04";
  EXPECT_EQ(software_match(b, a), "another release");
  b.framework = "NVIDIA PyTorch/MxNeti/DGL";
  EXPECT_EQ(software_match(b, a), "release not stated");
  EXPECT_EQ(software_match(a, b), "release not stated");

  // The summaries group by it: errors 10 % (same), 20 % and 30 % (another), 40 % (not stated).
  std::vector<ScalingRow> rows(4);
  const std::array<const char*, 4> software = {"same release", "another release", "another release", "release not stated"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    rows[i].row = row(static_cast<int>(i) + 2, "X", 8, 2, 10.0);
    rows[i].anchor = a;
    rows[i].predicted_min = 10.0 * (1 + 0.1 * static_cast<double>(i + 1));
    rows[i].curve_min = rows[i].perfect_min = 10.0;
    rows[i].software = software[i];
  }
  ScalingReport rep;
  rep.summaries = summarise_scaling(rows);
  EXPECT_EQ(rep.summary("anchor: same release").rows, 1);
  EXPECT_NEAR(rep.summary("anchor: same release").median, 10.0, 1e-9);
  EXPECT_EQ(rep.summary("anchor: another release").rows, 2);
  EXPECT_NEAR(rep.summary("anchor: another release").max, 30.0, 1e-9);
  EXPECT_EQ(rep.summary("anchor: release not stated").rows, 1);
  EXPECT_NEAR(rep.summary("anchor: release not stated").median, 40.0, 1e-9);
}

TEST(ScalingValidation, TheErrorAtLoggedConvergenceTakesBothRowsOwnConvergence) {
  // Anchor published 40 min; the model gives 10 min at N and 80 at the anchor at the RCP's
  // convergence (predicted 40 x 10 / 80 = 5 min against 4 published: +25 %), but 12 min and 100
  // min at the samples each row's runs converged at: 40 x 12 / 100 = 4.8 min, +20 %.
  ScalingRow s;
  s.row = row(2, "X", 8, 8, 4.0);
  s.anchor = row(1, "X", 8, 1, 40.0);
  s.model_min = 10;
  s.model_anchor_min = 80;
  s.predicted_min = 40.0 * 10 / 80;
  s.model_logged_min = 12;
  s.model_anchor_logged_min = 100;
  EXPECT_NEAR(s.error(), 0.25, 1e-12);
  EXPECT_NEAR(s.error_at_logged_convergence(), 0.20, 1e-12);
  // Convergence alone: 1.25 / 1.20 - 1 = 4.17 %, the rows' convergence against the RCP's.
  EXPECT_NEAR(s.convergence_error(), 1.25 / 1.20 - 1, 1e-12);
  // A row (or anchor) whose logs give no convergence has no such error, and the summary counts
  // only the rows that have one: here 20 % alone, though the second row's error is 50 %.
  ScalingRow t = s;
  t.row.line = 3;
  t.predicted_min = 6.0;
  t.model_anchor_logged_min.reset();
  EXPECT_TRUE(std::isnan(t.error_at_logged_convergence()));
  ScalingReport rep;
  rep.summaries = summarise_scaling({s, t});
  EXPECT_EQ(rep.summary("all").rows, 2);
  EXPECT_NEAR(rep.summary("all").median, 37.5, 1e-9);
  EXPECT_EQ(rep.summary("all").logged_rows, 1);
  EXPECT_NEAR(rep.summary("all").logged_median, 20.0, 1e-9);
  EXPECT_NEAR(rep.summary("all").logged_p90, 20.0, 1e-9);
  EXPECT_NEAR(rep.summary("all").convergence_median, 100 * (1.25 / 1.20 - 1), 1e-9);
}

}  // namespace sp::calibration

namespace sp::calibration {

TEST(ScalingValidation, AStepAnchorAtTheModelsOwnStepChangesNothingAndALongerOneSlowsTheTarget) {
  // Eos' 64 GPUs on Llama2-70B LoRA from Eos' one node. Given the model's own step at the anchor,
  // the level stays x1 and the target's score is the model's (to the solve's 1e-9 in log); given a
  // step 10 % longer, the level falls and the target slows, by less than 10 % (its communication
  // and evaluations do not scale with the level); without a logged step, no prediction.
  const PlatformCatalog platforms(testing::catalog());
  const SystemModelInputs in{testing::catalog(), platforms, models::default_calibration(), 0, 1};
  std::vector<MlperfResult> rows = testing::v41();
  const auto find = [&](const std::string& system_folder) {
    for (const MlperfResult& r : rows) {
      if (r.benchmark == "llama2_70b_lora" && r.system_folder == system_folder) return r;
    }
    ADD_FAILURE() << "no llama2_70b_lora row of " << system_folder;
    return MlperfResult{};
  };
  MlperfResult anchor = find("eos_ngc24.09_nemo");
  const MlperfResult target = find("eos_n8_ngc24.09_nemo");
  const SystemPrediction pa = predict_system(anchor, in), pt = predict_system(target, in);
  ASSERT_EQ(pa.status, "ok");
  ASSERT_EQ(pt.status, "ok");
  const double model_min = to_seconds(pt.estimate.time_to_train) / 60;
  anchor.phases = {PhaseObservation{PhaseObservation::Phase::training_step, to_seconds(pa.estimate.step.step), 1, 0}};
  const std::optional<double> same = step_anchored_minutes(target, pt, anchor, pa);
  ASSERT_TRUE(same.has_value());
  EXPECT_NEAR(*same / model_min, 1.0, 1e-8);
  anchor.phases[0].seconds *= 1.1;
  const std::optional<double> slower = step_anchored_minutes(target, pt, anchor, pa);
  ASSERT_TRUE(slower.has_value());
  EXPECT_GT(*slower, model_min * 1.01);
  EXPECT_LT(*slower, model_min * 1.1);
  anchor.phases.clear();
  EXPECT_FALSE(step_anchored_minutes(target, pt, anchor, pa).has_value());
}

}  // namespace sp::calibration

namespace sp::calibration {

TEST(ScalingValidation, APeerIsTheMedianOfOtherSubmittersAtTheSameKindSizeAndBatch) {
  // Dell's 64 H100s at GBS 64 (5.0 min). Peers: NVIDIA's 4.5 and Oracle's 4.75 min (same kind, N
  // and batch). Not peers: Dell's second 64-GPU system (same submitter), Lambda at GBS 128 (another
  // batch), Azure's H200s (another kind), a 32-GPU row, a Llama row. The median of two is the lower
  // one: 4.5 min, peer error 4.5 / 5.0 - 1 = -10 %. A third peer at 6.0 makes it 4.75 (-5 %).
  std::vector<MlperfResult> rows = {row(2, "Dell", 8, 8, 5.0),    row(3, "NVIDIA", 8, 8, 4.5), row(4, "Oracle", 8, 8, 4.75),
                                    row(5, "Dell", 8, 8, 5.05),   row(6, "Lambda", 8, 8, 4.0), row(7, "Azure", 8, 8, 3.0),
                                    row(8, "Quanta", 8, 4, 9.0),  row(9, "Cisco", 8, 8, 4.0, "llama2_70b_lora")};
  for (auto& r : rows) r.global_batch = 64;
  rows[4].global_batch = 128;
  std::vector<std::string> kinds(rows.size(), "H100-SXM5-80GB");
  kinds[5] = "H200-SXM5-141GB";
  ASSERT_TRUE(peer_minutes(rows, kinds, 0).has_value());
  EXPECT_DOUBLE_EQ(*peer_minutes(rows, kinds, 0), 4.5);
  ScalingRow s;
  s.row = rows[0];
  s.peer_min = peer_minutes(rows, kinds, 0);
  EXPECT_NEAR(s.peer_error(), -0.10, 1e-12);
  rows.push_back(row(10, "Lenovo", 8, 8, 6.0));
  rows.back().global_batch = 64;
  kinds.push_back("H100-SXM5-80GB");
  EXPECT_DOUBLE_EQ(*peer_minutes(rows, kinds, 0), 4.75);
  // Not peers either: a row of another round (other reference convergence and software), and
  // a row repeating an earlier one's runs (Dell filed one set of runs twice, once for Power).
  rows.push_back(row(11, "Gigabyte", 8, 8, 3.0));
  rows.back().global_batch = 64;
  rows.back().round = "5.0";
  kinds.push_back("H100-SXM5-80GB");
  for (auto& r : rows) r.round = r.round.empty() ? "4.1" : r.round;
  // NVIDIA's runs filed a second time (as Dell's were, for Power): counted twice they would make
  // the peers {4.5, 4.5, 4.75, 6.0}, whose lower middle is 4.5; once, the median stays 4.75.
  rows[1].org_folder = "NVIDIA";
  rows[1].system_folder = "eos";
  rows.push_back(row(12, "NVIDIA", 8, 8, 4.5));
  rows.back().global_batch = 64;
  rows.back().round = "4.1";
  rows.back().org_folder = "NVIDIA";
  rows.back().system_folder = "eos-power";
  kinds.push_back("H100-SXM5-80GB");
  rows.back().same_logs_as = ":NVIDIA/eos";  // no round: not read as a repeat
  EXPECT_FALSE(rows.back().repeats_an_earlier_row(rows, rows.size() - 1));
  EXPECT_DOUBLE_EQ(*peer_minutes(rows, kinds, 0), 4.5);
  rows.back().same_logs_as = "4.1:NVIDIA/eos";
  EXPECT_TRUE(rows.back().repeats_an_earlier_row(rows, rows.size() - 1));
  EXPECT_DOUBLE_EQ(*peer_minutes(rows, kinds, 0), 4.75);  // NVIDIA, Oracle and Lenovo, each once
  // None: Lambda's batch has no other submitter; a row without a batch or kind has none either.
  EXPECT_FALSE(peer_minutes(rows, kinds, 4).has_value());
  rows[0].global_batch.reset();
  EXPECT_FALSE(peer_minutes(rows, kinds, 0).has_value());
  rows[0].global_batch = 64;
  kinds[0].clear();
  EXPECT_FALSE(peer_minutes(rows, kinds, 0).has_value());
}

TEST(ScalingValidation, ARowRepeatingAnEarlierRowsRunsIsTold) {
  // Dell's 64 H100s on Llama were filed twice (lines 36 and 37 of results_v4.1.csv), each naming
  // the other's folder in same_logs_as: the second repeats the first, the first repeats nothing
  // earlier. A reuse of another round's logs (v4.1 rows resubmitting v4.0 runs) repeats no row of
  // this round; a round written "v4.1" is the round 4.1.
  std::vector<MlperfResult> rows = {row(36, "Dell", 8, 8, 5.05, "llama2_70b_lora"), row(37, "Dell", 8, 8, 5.05, "llama2_70b_lora"),
                                    row(38, "NVIDIA", 8, 1, 5.47)};
  for (auto& r : rows) r.round = "4.1";
  rows[0].org_folder = rows[1].org_folder = "Dell";
  rows[0].system_folder = "8xXE9680";
  rows[1].system_folder = "8xXE9680-POWER";
  rows[0].same_logs_as = "4.1:Dell/8xXE9680-POWER";
  rows[1].same_logs_as = "v4.1:Dell/8xXE9680";
  rows[2].org_folder = "NVIDIA";
  rows[2].system_folder = "eos";
  rows[2].same_logs_as = "4.0:NVIDIA/eos";
  EXPECT_FALSE(rows[0].repeats_an_earlier_row(rows, 0));
  EXPECT_TRUE(rows[1].repeats_an_earlier_row(rows, 1));
  EXPECT_FALSE(rows[2].repeats_an_earlier_row(rows, 2));
  rows[1].benchmark = "bert";  // another benchmark's folder of that name is another submission
  EXPECT_FALSE(rows[1].repeats_an_earlier_row(rows, 1));
}

TEST(ScalingValidation, PeerSpreadAndItsSummaryCountOnlyRowsWithAPeer) {
  // One node: A 10 and B 11 min at one configuration, C 20 alone at another batch. A's peer is
  // B (+10 %), B's is A (10/11 - 1 = -9.09 %), C has none: 2 rows, median of {10, 9.09} = 9.545 %.
  std::vector<MlperfResult> rows = {row(2, "A", 8, 1, 10.0), row(3, "B", 8, 1, 11.0), row(4, "C", 8, 1, 20.0)};
  for (auto& r : rows) r.global_batch = 256;
  rows[2].global_batch = 512;
  const std::vector<std::string> kinds(rows.size(), "K");
  const PeerSpread one = peer_spread(rows, kinds, true);
  EXPECT_EQ(one.rows, 2);
  EXPECT_NEAR(one.median, (10.0 + 100.0 / 11) / 2, 1e-9);
  EXPECT_EQ(peer_spread(rows, kinds, false).rows, 0);
  EXPECT_TRUE(std::isnan(peer_spread(rows, kinds, false).median));
  // The summary: the model's error on the rows that have a peer beside the peer's. Row 1: model
  // +20 %, peer -10 %; row 2: model +4 %, no peer. Peer rows 1, peer 10 %, model there 20 %.
  ScalingRow a, b;
  a.row = row(5, "D", 8, 8, 10.0);
  a.anchor = b.anchor = row(1, "D", 8, 1, 70.0);
  a.predicted_min = 12.0;
  a.peer_min = 9.0;
  b.row = row(6, "E", 8, 4, 20.0);
  b.predicted_min = 20.8;
  a.curve_min = a.perfect_min = 10.0;
  b.curve_min = b.perfect_min = 20.0;
  const std::vector<ScalingSummary> sums = summarise_scaling({a, b});
  const ScalingSummary& all = sums.back();
  ASSERT_EQ(all.group, "all");
  EXPECT_EQ(all.rows, 2);
  EXPECT_EQ(all.peer_rows, 1);
  EXPECT_NEAR(all.peer_median, 10.0, 1e-9);
  EXPECT_NEAR(all.peer_model_median, 20.0, 1e-9);
  EXPECT_NEAR(all.median, 12.0, 1e-9);
}

}  // namespace sp::calibration
