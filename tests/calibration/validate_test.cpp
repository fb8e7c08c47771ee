// Validation tables: the simulated step and phases against the logged ones, errors at the logged
// convergence, and the naive baseline beside the model.
#include <gtest/gtest.h>

#include <cmath>

#include "calibration/mlperf/calibrate.hpp"
#include "calibration/predict/naive_baseline.hpp"
#include "tests/calibration/mlperf_fixtures.hpp"

namespace sp::calibration {

using testing::catalog;
using testing::v41;
namespace {
// RetinaNet on Eos_n316: its logs time a 0.47 s evaluation (2 runs) and a 9.79 ms step.
ValidationRow eos_n316_row() {
  ValidationRow a;
  a.row.benchmark = "retinanet";
  a.row.submitter = "NVIDIA";
  a.row.system_name = "Eos_n316";
  a.row.accelerators = 2528;
  a.row.phases = {{PhaseObservation::Phase::evaluation, 0.47, 2, 2},
                  {PhaseObservation::Phase::training_step, 0.00979, 2, 30}};
  a.prediction.kind = "H100-SXM5-80GB";
  return a;
}
}  // namespace

TEST(Validate, StepTableComparesTheSimulatedStepWithTheLoggedOne) {
  // One row whose logs time a 9.79 ms step, simulated at 7.23 ms: error 7.23 / 9.79 - 1 = -0.2615;
  // its other phases and a row without a logged step add nothing to the table.
  ValidationReport rep;
  ValidationRow a = eos_n316_row();
  a.prediction.estimate.per_accelerator_batch = 1;
  a.prediction.estimate.step.step = seconds(0.00723);
  ValidationRow b = a;
  b.row.phases.clear();
  rep.rows = {a, b};
  const output::Table t = step_table(rep);
  ASSERT_EQ(t.rows(), 1u);
  EXPECT_EQ(t.column("system").text[0], "NVIDIA Eos_n316");
  EXPECT_DOUBLE_EQ(t.column("logged_step_ms").values[0], 9.79);
  EXPECT_NEAR(t.column("model_step_ms").values[0], 7.23, 1e-9);
  EXPECT_NEAR(t.column("error").values[0], 7.23 / 9.79 - 1, 1e-12);
}

TEST(Validate, PhaseTableComparesEveryLoggedPhaseWithTheModels) {
  // The same row's two phases, with the model's counterparts the prediction carries: an
  // evaluation of 0.47 s (2 runs) modelled at 0.5 s, +6.38 %; the step as above. A prediction
  // that did not model the phases (b) adds nothing.
  ValidationRow a = eos_n316_row();
  a.prediction.phase_seconds = {0.5, 0.00723};
  ValidationRow b = a;
  b.prediction.phase_seconds.clear();
  ValidationReport rep;
  rep.rows = {a, b};
  const output::Table t = phase_table(rep);
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.column("phase").text[0], "evaluation");
  EXPECT_EQ(t.column("phase").text[1], "training_step");
  EXPECT_EQ(t.column("runs").values[0], 2);
  EXPECT_DOUBLE_EQ(t.column("logged_s").values[0], 0.47);
  EXPECT_NEAR(t.column("error").values[0], 0.5 / 0.47 - 1, 1e-12);
  EXPECT_NEAR(t.column("error").values[1], 7.23 / 9.79 - 1, 1e-12);
}

TEST(Validate, APredictionCarriesTheModelsValueOfEachLoggedPhase) {
  // Eos on Llama2-70B LoRA (8 H100, TP4 CP1) with the files' values: its logged step, evaluation
  // and set-up, each against what the fit weighs (modelled_phase at the row's convergence).
  std::vector<MlperfResult> rows = v41();
  const auto row = std::find_if(rows.begin(), rows.end(), [](const MlperfResult& r) {
    return r.benchmark == "llama2_70b_lora" && r.system_folder == "eos_ngc24.09_nemo";
  });
  ASSERT_NE(row, rows.end());
  ASSERT_EQ(row->phases.size(), 3u);
  const PlatformCatalog platforms(catalog());
  const SystemPrediction p = predict_system(*row, SystemModelInputs{catalog(), platforms, models::Calibration{}, 0, 1});
  ASSERT_EQ(p.status, "ok") << p.message;
  ASSERT_EQ(p.estimate.layout.describe(), "TP4 CP1 PP1 DP2 mb1 x4 ZeRO-1");
  ASSERT_EQ(p.phase_seconds.size(), 3u);
  const models::Workload w = *catalog().find_workload("llama2_70b_lora");
  const models::EvaluationCost c = models::evaluation_at(p.estimate, w, *row->converged_samples(w.train_samples));
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_DOUBLE_EQ(p.phase_seconds[k], modelled_phase(p.estimate, c, row->phases[k].phase)) << k;
  }
}

TEST(Validate, ErrorsAtTheLoggedConvergenceLeaveTheRunsConvergenceOut) {
  // Published 10 min; predicted 8 min at the RCP mean and 9.5 min at the samples the row's runs
  // converged at: error 8 / 10 - 1 = -0.2, at logged convergence 9.5 / 10 - 1 = -0.05. A row
  // without logged convergence has none (NaN) and is left out of that summary only.
  const auto row = [](double predicted_min, double at_logged_min) {
    ValidationRow v;
    v.row.benchmark = "bert";
    v.row.accelerators = 8;
    v.row.time_to_train_min = 10.0;
    v.prediction.kind = "H100-SXM5-80GB";
    v.prediction.estimate.time_to_train = seconds(60 * predicted_min);
    v.prediction.estimate.p10 = seconds(60 * 0.9 * predicted_min);
    v.prediction.estimate.p90 = seconds(60 * 1.1 * predicted_min);
    if (at_logged_min > 0) v.prediction.at_logged_convergence = seconds(60 * at_logged_min);
    compare_with_published(v);
    return v;
  };
  const ValidationRow a = row(8.0, 9.5), b = row(11.0, 10.2), c = row(10.5, 0.0);  // c: no logged convergence
  EXPECT_NEAR(a.error, -0.2, 1e-12);
  EXPECT_NEAR(a.error_at_logged_convergence, -0.05, 1e-12);
  EXPECT_NEAR(b.error_at_logged_convergence, 0.02, 1e-12);
  EXPECT_TRUE(std::isnan(c.error_at_logged_convergence));
  const ValidationReport rep = summarise({a, b, c}, {});
  const ErrorSummary& all = rep.summary("all");
  EXPECT_EQ(all.rows, 3);
  EXPECT_NEAR(all.median_ape, 10.0, 1e-9);          // of 20, 10, 5 %
  EXPECT_NEAR(all.median_ape_at_logged, 3.5, 1e-9);  // of 5 and 2 %: their mean
  const output::Table t = validation_table(rep);
  EXPECT_NEAR(t.column("error_at_logged_convergence").values[0], -0.05, 1e-12);
  EXPECT_NEAR(summary_table(rep).column("median_ape_at_logged_convergence_pct").values.back(), 3.5, 1e-9);
  // Convergence alone: a's runs trained 9.5 / 8 of the predicted samples' time, so an exact model
  // of the system would still be off by 8 / 9.5 - 1 = -15.789 %; b's by 11 / 10.2 - 1 = +7.843 %.
  // Median of the two 11.816 %, p90 (linear between them) 15.789 - 0.1 x 7.946 = 14.995 %.
  EXPECT_NEAR(all.median_ape_convergence_only, (100 * (1 - 8.0 / 9.5) + 100 * (11.0 / 10.2 - 1)) / 2, 1e-9);
  EXPECT_NEAR(all.p90_ape_convergence_only, 100 * (1 - 8.0 / 9.5) - 0.1 * (100 * (1 - 8.0 / 9.5) - 100 * (11.0 / 10.2 - 1)),
              1e-9);
}

TEST(Validate, TheNaiveBaselineScalesTheNearestOtherRowInNAndPeak) {
  // BERT: A (H100, 8 GPUs, 10 min), B (H100, 64, 2 min), C (B200 at 2.25x the peak, 8, 5 min);
  // D, Llama's only row, has nothing to scale. Leaving each row's system out:
  //   A from B, its kind: 2 x 64 / 8 = 16 min, +60 %;   B from A: 10 x 8 / 64 = 1.25 min, -37.5 %;
  //   C, no other B200: the nearest count, A: 10 x 1 / 2.25 = 4.444 min, -11.1 %.
  // Leaving each row's kind out, A has only C: 5 x 2.25 = 11.25 min, +12.5 %.
  const auto row = [](const char* benchmark, const char* system, const char* kind, int n, double min, double peak) {
    ValidationRow v;
    v.row.benchmark = benchmark;
    v.row.submitter = "S";
    v.row.system_name = system;
    v.row.accelerators = n;
    v.row.time_to_train_min = min;
    v.prediction.kind = kind;
    v.prediction.peak_flops = peak;
    v.prediction.estimate.time_to_train = seconds(60 * min);
    return v;
  };
  std::vector<ValidationRow> rows{row("bert", "A", "H100", 8, 10, 1e15), row("bert", "B", "H100", 64, 2, 1e15),
                                  row("bert", "C", "B200", 8, 5, 2.25e15), row("llama", "D", "H100", 8, 20, 1e15)};
  add_naive_baselines(rows, BaselineExclusion::system);
  EXPECT_NEAR(rows[0].baseline_error, 0.6, 1e-12);
  EXPECT_NEAR(rows[1].baseline_error, -0.375, 1e-12);
  EXPECT_NEAR(rows[2].baseline_error, 10 / 2.25 / 5 - 1, 1e-12);
  EXPECT_TRUE(std::isnan(rows[3].baseline_error));
  const ValidationReport rep = summarise(rows, {});
  EXPECT_NEAR(rep.summary("bert").median_ape_baseline, 37.5, 1e-9);  // of 60, 37.5, 11.1 %
  EXPECT_NEAR(summary_table(rep).column("median_ape_naive_baseline_pct").values.front(), 37.5, 1e-9);
  add_naive_baselines(rows, BaselineExclusion::kind);
  EXPECT_NEAR(rows[0].baseline_error, 0.125, 1e-12);
  EXPECT_NEAR(rows[2].baseline_error, 10 / 2.25 / 5 - 1, 1e-12);
}

}  // namespace sp::calibration
