// Calibration against the phases MLPerf logs time besides the whole run (evaluation, the scoring
// after the last one, the set-up before the first, the step): the phase table read and averaged
// over runs, and each phase's residual against the model's own, the part of the fit that tells
// the evaluation costs and the host time apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "calibration/mlperf/fit_problem.hpp"
#include "calibration/predict/results.hpp"
#include "calibration/predict/system_model.hpp"
#include "models/training/time_to_train.hpp"
#include "sim/config/csv.hpp"
#include "tests/calibration/mlperf_fixtures.hpp"
#include "tests/input_error_message.hpp"

namespace sp::calibration {

using testing::catalog;
using testing::v41;

TEST(Phases, RunsAverageAndBadRowsAreNamed) {
  std::vector<MlperfResult> rows(1);
  rows[0].benchmark = "retinanet";
  rows[0].org_folder = "NVIDIA";
  rows[0].system_folder = "eos";
  const std::string header = "benchmark,org_folder,system_folder,phase,seconds\n";
  // Two runs' evaluations (0.5 s and 0.4 s) average to 0.45 s; the scoring phase is its own.
  attach_phases(rows, config::CsvTable(header + "retinanet,NVIDIA,eos,evaluation,0.5\n"
                                                "retinanet,NVIDIA,eos,after_last_evaluation,3\n"
                                                "retinanet,NVIDIA,eos,evaluation,0.4\n"
                                                "retinanet,NVIDIA,eos,evaluation_setup,8.5\n",
                                       "phases.csv"));
  ASSERT_EQ(rows[0].phases.size(), 3u);
  EXPECT_EQ(rows[0].phases[2].phase, PhaseObservation::Phase::evaluation_setup);
  EXPECT_DOUBLE_EQ(rows[0].phases[2].seconds, 8.5);
  EXPECT_EQ(rows[0].phases[0].phase, PhaseObservation::Phase::evaluation);
  EXPECT_DOUBLE_EQ(rows[0].phases[0].seconds, 0.45);
  EXPECT_EQ(rows[0].phases[0].runs, 2);
  EXPECT_EQ(rows[0].phases[0].line, 2);
  EXPECT_DOUBLE_EQ(rows[0].phases[1].seconds, 3.0);
  const auto error_of = [&](const std::string& line) {
    return input_error_message([&] { attach_phases(rows, config::CsvTable(header + line, "phases.csv")); });
  };
  EXPECT_NE(error_of("retinanet,NVIDIA,eos,warmup,1\n").find("phases.csv:2"), std::string::npos);
  EXPECT_NE(error_of("retinanet,NVIDIA,eos,warmup,1\n").find("'warmup' is not a phase"), std::string::npos);
  EXPECT_NE(error_of("retinanet,NVIDIA,eos,evaluation,0\n").find("seconds"), std::string::npos);
  EXPECT_NE(error_of("retinanet,NVIDIA,eos,evaluation,1e308\n").find("phases.csv:2: seconds: 1e+308 s is over a day"),
            std::string::npos)
      << error_of("retinanet,NVIDIA,eos,evaluation,1e308\n");
  EXPECT_NE(error_of("bert,NVIDIA,eos,evaluation,1\n").find("no result row has benchmark 'bert'"), std::string::npos);
}

TEST(Calibrate, PhaseResidualsCompareTheModelsPhasesWithTheLogs) {
  // RetinaNet on 316 DGX H100 (2,528 GPUs): the residual of each phase is log(model / logs), with
  // the model's evaluation as EvaluationCost::each and the time after the last one as its
  // exposed scoring, S + (k - 1) max(0, S - between), at the runs' observed convergence.
  std::vector<std::string> skipped;
  const PlatformCatalog platforms(catalog());
  const FitProblem pb(v41(), catalog(), platforms, skipped);
  const auto row = std::find_if(pb.rows().begin(), pb.rows().end(), [](const PreparedRow& r) {
    return r.row.benchmark == "retinanet" && r.row.accelerators == 2528;
  });
  ASSERT_NE(row, pb.rows().end());
  // Its logs time three phases, the last its training step.
  ASSERT_EQ(row->row.phases.size(), 3u);
  EXPECT_EQ(row->row.phases[2].phase, PhaseObservation::Phase::training_step);
  const Eigen::VectorXd x = pb.prior();
  const std::vector<double> got = pb.phase_log_errors(*row, x);
  ASSERT_EQ(got.size(), 3u);
  // The file's values at the prior: overhead 1 s, host work 30 s over 316 nodes, scoring 5 s.
  const models::TrainingEstimate e = models::estimate_training(row->workload, row->platform, 2528, row->gbs, row->spec);
  const double each = to_seconds(scale(e.step.evaluation_forward.compute + e.step.evaluation_forward.waits, 10.0) +
                                 scale(row->workload.evaluation_costs.batch_overhead, 10.0)) + 1.0 + 30.0 / 316;
  // 24,781 images over 2,528 replicas: 10 per replica, one per micro-batch.
  EXPECT_NEAR(got[0], std::log(each / row->row.phases[0].seconds), 1e-9);
  const double epochs = row->converged_samples / row->workload.train_samples;
  const double between = to_seconds(e.step.step) * 1170301.0 / 2528 + each;
  const double scoring = 5.0 + (epochs - 1) * std::max(0.0, 5.0 - between);
  EXPECT_NEAR(got[1], std::log(scoring / row->row.phases[1].seconds), 1e-9);
  // The step, the file's 2 ms of host time per step included.
  EXPECT_EQ(e.step.host.ps(), milliseconds(2).ps());
  EXPECT_NEAR(got[2], std::log(to_seconds(e.step.step) / row->row.phases[2].seconds), 1e-9);
}

TEST(Calibrate, TheLoggedSetUpBeforeTheFirstEvaluationIsTheModelsOneTimeCost) {
  // Llama2-70B LoRA on 1,024 H100: its two runs stall 8.372 and 8.314 s before the first
  // evaluation (mean 8.343 s); at the prior the model's one-time set-up is the file's 5 s.
  std::vector<std::string> skipped;
  const PlatformCatalog platforms(catalog());
  const FitProblem pb(v41(), catalog(), platforms, skipped);
  const auto row = std::find_if(pb.rows().begin(), pb.rows().end(), [](const PreparedRow& r) {
    return r.row.benchmark == "llama2_70b_lora" && r.row.accelerators == 1024;
  });
  ASSERT_NE(row, pb.rows().end());
  const auto& ph = row->row.phases;
  const auto setup = std::find_if(ph.begin(), ph.end(), [](const PhaseObservation& o) {
    return o.phase == PhaseObservation::Phase::evaluation_setup;
  });
  ASSERT_NE(setup, ph.end());
  EXPECT_NEAR(setup->seconds, 8.343, 1e-9);
  EXPECT_EQ(setup->runs, 2);
  const std::vector<double> got = pb.phase_log_errors(*row, pb.prior());
  EXPECT_NEAR(got[static_cast<std::size_t>(setup - ph.begin())], std::log(5.0 / 8.343), 1e-9);
}

TEST(Calibrate, BertsFirstIntervalIsPricedPerDataLoaderWithWorkers) {
  // BERT's logged first interval beyond the steady rate: Eos' one node 1.099 and 0.964 s (mean
  // 1.0315 s), where both loaders start workers (96 sequences and 1,250 evaluation samples a
  // rank): at the prior 2 x 0.5 s. Eos' 3,472 GPUs 0.261 and 0.348 s (mean 0.3045 s), where
  // neither does (4 sequences, 3 samples): the model's 0 s, which the fit weighs as 1 ms.
  std::vector<std::string> skipped;
  const PlatformCatalog platforms(catalog());
  const FitProblem pb(v41(), catalog(), platforms, skipped);
  const auto setup_error = [&](const std::string& folder, int accelerators, double logged, double modelled) {
    const auto row = std::find_if(pb.rows().begin(), pb.rows().end(), [&](const PreparedRow& r) {
      return r.row.benchmark == "bert" && r.row.system_folder == folder;
    });
    ASSERT_NE(row, pb.rows().end()) << folder;
    ASSERT_EQ(row->row.accelerators, accelerators);
    const auto& ph = row->row.phases;
    const auto setup = std::find_if(ph.begin(), ph.end(), [](const PhaseObservation& o) {
      return o.phase == PhaseObservation::Phase::evaluation_setup;
    });
    ASSERT_NE(setup, ph.end()) << accelerators;
    EXPECT_NEAR(setup->seconds, logged, 1e-9);
    const std::vector<double> got = pb.phase_log_errors(*row, pb.prior());
    EXPECT_NEAR(got[static_cast<std::size_t>(setup - ph.begin())], std::log(modelled / logged), 1e-9) << accelerators;
  };
  setup_error("eos_ngc23.04_pytorch", 8, 1.0315, 1.0);
  setup_error("eos_n434_ngc23.09_pytorch", 3472, 0.3045, 1e-3);
}

}  // namespace sp::calibration
