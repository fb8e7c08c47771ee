// Co-location scenarios: the shipped ones load and run, bad input names file, line and key, memory
// decides what fits (worked by hand). Against measurements: colocation_validation_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>
#include <fstream>
#include <filesystem>
#include <string>

#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/colocation.hpp"
#include "sim/scenario/kernel_trace.hpp"
#include "tests/input_error_message.hpp"

namespace sp {

namespace {
models::Catalog catalog() { return models::Catalog(std::filesystem::path(SP_SOURCE_DIR) / "models"); }
const std::string kDir = std::string(SP_SOURCE_DIR) + "/scenarios/colocation/";

std::string error_of(const std::string& file, const std::string& set) {
  return input_error_message([&] { load_colocation(file, {config::parse_override(set)}, catalog()); });
}
}  // namespace

TEST(ColocationScenario, BadInputNamesTheArgumentOrFileLineAndKey) {
  const std::string f = kDir + "resnet18_a100.yaml";
  EXPECT_NE(error_of(f, "strategies=[mps, time_slicing, mps]").find("strategies[2]: 'mps' is listed twice"), std::string::npos);
  EXPECT_NE(error_of(f, "strategies=[mps, fusion]").find("strategies[1]: unknown strategy 'fusion' (valid: sequential, "),
            std::string::npos);
  EXPECT_NE(error_of(f, "sharing.fraction=1.5").find("sharing.fraction: must be in (0, 1]"), std::string::npos);
  EXPECT_NE(error_of(f, "job.steps=10").find("job: give exactly one of steps, epochs"), std::string::npos);
  EXPECT_NE(error_of(f, "job.workload=resnet18_cifar").find("job.workload: unknown small workload 'resnet18_cifar' (did you "
                                                            "mean 'resnet18_cifar10'?"),
            std::string::npos);
  EXPECT_NE(error_of(f, "jobs=[4, 2]").find("jobs[1]: job counts must be in ascending order"), std::string::npos);
  EXPECT_NE(error_of(f, "host.dispatch_per_kernel=\"1 s\"").find("host.dispatch_per_kernel: must be at most 100 ms"),
            std::string::npos);
  EXPECT_NE(error_of(f, "accelerator=B100").find("accelerator: unknown accelerator 'B100'"), std::string::npos);
  EXPECT_NE(error_of(f, "sharing.time_slice=\"1 GB\"").find("sharing.time_slice: \"1 GB\" is a size"), std::string::npos);
  // 10,000 s a switch once overflowed the simulated time into an internal error.
  EXPECT_NE(error_of(f, "sharing.switch_cost=\"10000 s\"").find("sharing.switch_cost: must be at most 1 s"), std::string::npos);
  EXPECT_NE(error_of(f, "early_stopping={grace: 1.5, reduction: 3}").find("early_stopping.grace: must be in (0, 1)"),
            std::string::npos);
  EXPECT_NE(error_of(kDir + "hfta_pointnet_v100.yaml", "strategies=[mig]")
                .find("strategies[0]: V100-SXM2-16GB has no MIG"),
            std::string::npos);
  EXPECT_NE(error_of(f, "early_stopping={grace: 0.1, reduction: 1}").find("early_stopping.reduction: must be in (1, 100]"),
            std::string::npos);
}

TEST(ColocationScenario, EarlyStoppingEndsLowRankedTrialsAndShortensTheSearch) {
  // 27 trials, milestones at ceil(0.1111 x 782) = 87 and 261 steps (reduction 3). Every trial runs
  // to the first milestone; a stopped one ends at a milestone; the first to reach each milestone
  // always goes on, so at least one trial finishes; fewer samples are trained than without, and
  // the search ends sooner under every strategy. The rule does not depend on the network: a small
  // one keeps the test fast (ResNet-18's 379 kernels a step took minutes under the sanitizers).
  ColocationSpec s = load_colocation(kDir + "asha_resnet18_a100.yaml",
                                     {config::parse_override("jobs=[27]"),
                                      config::parse_override("job={workload: mlp_mnist, batch: 128, steps: 782}")},
                                     catalog());
  ASSERT_EQ(s.steps, 782);
  const auto with = run_colocation(s);
  s.stop_reduction = 0;
  const auto without = run_colocation(s);
  ASSERT_EQ(with.size(), without.size());
  for (std::size_t i = 0; i < with.size(); ++i) {
    int full = 0;
    for (double steps : with[i].run.steps_run) {
      EXPECT_TRUE(steps == 87 || steps == 261 || steps == 782) << steps;
      full += steps == 782 ? 1 : 0;
    }
    EXPECT_GE(full, 1);
    EXPECT_LT(full, 27);
    EXPECT_LT(trained_samples(with[i], s.batch), trained_samples(without[i], s.batch));
    EXPECT_LT(with[i].run.makespan, without[i].run.makespan) << strategy_name(with[i].strategy);
    EXPECT_DOUBLE_EQ(trained_samples(without[i], s.batch), 27 * 782 * 128.0);
  }
}

TEST(ColocationScenario, WhatDoesNotFitIsOutOfMemory) {
  // HFTA's PointNet on a 40 GB A100 with 1.2 GB contexts: a process holds 1.2 GB + 1.2 x (16 B x
  // 3,465,305 parameters + 32 x 36 MB of activations) = 2.6489 GB; 25 processes need 66.2 GB (out
  // of memory), 25 fused models one context and 1.2 x 25 x 1.2074 GB = 36.2 GB more (fits).
  ColocationSpec s = load_colocation(kDir + "hfta_pointnet_a100.yaml", {}, catalog());
  s.jobs = {25};
  s.strategies = {Strategy::time_slicing, Strategy::fused};
  s.steps = 2;
  const auto points = run_colocation(s);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].status, "out_of_memory");
  EXPECT_NEAR(points[0].memory.value(), 25 * (1.2e9 + 1.2 * (16 * 3465305.0 + 32 * 36e6)), 1e3);
  EXPECT_NEAR(points[0].memory.value(), 25 * 2.6489e9, 1e6);
  EXPECT_EQ(points[1].status, "ok");
  EXPECT_EQ(points[1].fused_models, 25);
  EXPECT_NEAR(points[1].memory.value(), 1.2e9 + 1.2 * 25 * (16 * 3465305.0 + 32 * 36e6), 1e3);
}

TEST(ColocationScenario, MigGivesEachJobTheLargestProfileThatKOfFit) {
  // A100 (MIG User Guide): 7 compute slices of 14 SMs, memory in eighths; profiles 1g (1/8 of
  // memory), 2g (2/8), 3g (4/8), 4g (4/8), 7g (8/8). One job: 7g; two: 3g (4g + 4g would need 8
  // compute slices); three: 2g; four to seven: 1g; none for eight.
  const models::MigGeometry g = *catalog().find_accelerator("A100-SXM4-40GB")->mig;
  EXPECT_EQ(g.sms_per_slice * g.compute_slices, 98);
  const int want[] = {7, 3, 2, 1, 1, 1, 1};
  for (int k = 1; k <= 7; ++k) EXPECT_EQ(mig_profile(g, k)->compute_slices, want[k - 1]) << k;
  EXPECT_FALSE(mig_profile(g, 8).has_value());
  // PointNet's 2.6489 GB per process (above) fits a 1g instance of the 40 GB A100 (5 GB); 13 jobs
  // run 7 at a time.
  ColocationSpec s = load_colocation(kDir + "hfta_pointnet_a100.yaml", {}, catalog());
  s.jobs = {13};
  s.strategies = {Strategy::mig};
  s.steps = 2;
  const auto points = run_colocation(s);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].status, "ok");
  EXPECT_EQ(points[0].resident, 7);
  EXPECT_NEAR(points[0].memory.value(), 7 * 2.6489e9, 1e6);
}

// The host's dispatch per launch is the node's: a scenario's `host: dispatch_per_kernel` replaces
// the workload file's (measured on another host), and its absence keeps the file's.
TEST(ColocationScenario, TheHostsDispatchOverridesTheWorkloads) {
  const auto dispatch_us = [](const char* file) {
    return to_seconds(load_colocation(kDir + file, {}, catalog()).workload.dispatch_per_kernel) * 1e6;
  };
  EXPECT_NEAR(dispatch_us("pointnet_h200_synthetic.yaml"), 29.7, 1e-9);
  EXPECT_NEAR(dispatch_us("pointnet_h100_synthetic.yaml"), 36.7, 1e-9);
}

// The H200 scenarios type in a dispatch per launch derived from one job's step alone, measured in
// the profile runs (h200_pointnet_fused.csv run 2: 6.918 ms; h200_resnet18_profile.csv: 8.041 ms):
// the simulated step alone must still be that step (0.5 %), or a change to the model that moved it
// must derive the value again (the scenario files say how).
TEST(ColocationScenario, DerivedDispatchesStillGiveTheMeasuredStepAlone) {
  for (const auto& [file, step_ms] : {std::pair{"pointnet_h200_synthetic.yaml", 6.918},
                                      std::pair{"pointnet_h200_trace.yaml", 6.918},
                                      std::pair{"resnet18_h200_trace.yaml", 8.041}}) {
    ColocationSpec s = load_colocation(kDir + file, {}, catalog());
    s.jobs = {1};
    s.strategies = {Strategy::sequential};
    const auto points = run_colocation(s);
    ASSERT_EQ(points.size(), 1u);
    EXPECT_NEAR(to_seconds(points[0].run.makespan) / s.steps * 1e3 / step_ms, 1, 0.005) << file;
  }
}

// A measured step as the job (sim/scenario/kernel_trace.hpp), worked by hand on three kernels of
// step 0: a 10 us kernel on a 4x2x1 grid launched at 0 us (a dispatch), a 5 us one of 1,000
// blocks launched 3 us later (within 8 us: a library's launch, 4 us of host), a copy to the host at
// 50 us (a dispatch, waited on), and a last kernel. Each runs its duration plus the H100's
// 1.776 us of launch latency, as wide as its blocks (at most 132 SMs; a copy 1).
TEST(ColocationScenario, AMeasuredTraceBecomesTheJobsKernels) {
  const auto dir = std::filesystem::temp_directory_path() / ("sp_trace_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return (dir / name).string();
  };
  const std::string head = "step,kind,name,duration_us,launch_us,grid\n";
  const std::string csv = write("t.csv", head +
                                             "0,kernel,a,10,0,4x2x1\n"
                                             "0,kernel,b,5,3,1000x1x1\n"
                                             "0,gpu_memcpy,Memcpy DtoH (Device -> Pinned),1,50,\n"
                                             "0,kernel,c,2,90,1x1x1\n"
                                             "1,kernel,a,10,0,4x2x1\n");
  const models::Accelerator h100 = *catalog().find_accelerator("H100-SXM5-80GB");
  const auto k = load_kernel_trace(csv, 0, h100, microseconds(4));
  ASSERT_EQ(k.size(), 4u);
  EXPECT_NEAR(to_seconds(k[0].alone) * 1e6, 11.776, 1e-9);
  EXPECT_EQ(k[0].width, 8);
  EXPECT_DOUBLE_EQ(k[0].launches, 1.0);
  EXPECT_EQ(k[1].width, 132);
  EXPECT_DOUBLE_EQ(k[1].launches, 0.0);
  EXPECT_EQ(k[1].library_host, microseconds(4));
  EXPECT_EQ(k[2].width, 1);
  EXPECT_TRUE(k[2].host_waits);
  EXPECT_FALSE(k[3].host_waits);
  EXPECT_EQ(load_kernel_trace(csv, -1, h100, microseconds(4)).size(), 1u);  // the middle of steps 0, 1: 1
  const auto error = [&](const std::string& text, int step) {
    return input_error_message([&] { load_kernel_trace(write("bad.csv", text), step, h100, microseconds(4)); });
  };
  EXPECT_NE(error(head + "0,kernel,a,10,0,4x2x1\n", 3).find("no kernels of step 3"), std::string::npos);
  EXPECT_NE(error(head + "0,kernel,a,10,0,4xtwo\n", 0).find("bad.csv:2: grid"), std::string::npos);
  EXPECT_NE(error(head + "0,kernel,a,-1,0,4x1x1\n", 0).find("bad.csv:2: duration_us"), std::string::npos);
  EXPECT_NE(error("step,kind,name,duration_us,grid\n0,kernel,a,1,1\n", 0).find("launch_us"), std::string::npos);
  // A trace is one plain job: fused copies are refused where the trace is named.
  const std::string fused = error_of(kDir + "pointnet_h200_trace.yaml", "strategies=[sequential, fused]");
  EXPECT_NE(fused.find("job.trace: a trace is one plain job's kernels"), std::string::npos) << fused;
  // A step past an int is refused before it is narrowed (4,294,967,298 once ran as step 2).
  const std::string far = error_of(kDir + "pointnet_h200_trace.yaml", "job.trace.step=4294967298");
  EXPECT_NE(far.find("job.trace.step: must be a step of the trace, 0 to 1000000000"), std::string::npos) << far;
  std::filesystem::remove_all(dir);
}

TEST(ColocationScenario, ContextMemoryIsTheAcceleratorsWhereMeasured) {
  // The H100 file's measured bare context (0.55 GB) unless the scenario says otherwise; a GPU with
  // none measured takes the 0.5 GB default.
  EXPECT_DOUBLE_EQ(load_colocation(kDir + "pointnet_h100_synthetic.yaml", {}, catalog()).context_memory.value(), 0.55e9);
  EXPECT_DOUBLE_EQ(load_colocation(kDir + "pointnet_h100_synthetic.yaml", {config::parse_override("sharing.context_memory=1 GB")},
                                   catalog()).context_memory.value(), 1e9);
  EXPECT_DOUBLE_EQ(load_colocation(kDir + "pointnet_h100_synthetic.yaml", {config::parse_override("accelerator=A100-SXM4-80GB")},
                                   catalog()).context_memory.value(), 0.5e9);
}

TEST(ColocationScenario, HopperMigProfilesCarryTheirOwnSms) {
  // H100 80GB (nvidia-smi mig -lgip on GH100 parts): 1g.10gb 16 SMs (1/8 memory), 1g.20gb 26
  // (2/8), 2g.20gb 32 (2/8), 3g.40gb 60 (4/8), 4g.40gb 64 (4/8), 7g.80gb 132. Two jobs get 3g (4g
  // + 4g needs 8 of 7 compute slices): 60 SMs each, not 3 x 16 = 48; three 2g (32); four 1g.20gb,
  // 26 SMs each (4 x 2/8 memory fits, 4 x 2g does not); five to seven 1g.10gb (16).
  const models::MigGeometry g = *catalog().find_accelerator("H100-SXM5-80GB")->mig;
  const int sms[] = {132, 60, 32, 26, 16, 16, 16};
  for (int k = 1; k <= 7; ++k) EXPECT_EQ(mig_profile(g, k)->sms, sms[k - 1]) << k;
  EXPECT_FALSE(mig_profile(g, 8).has_value());
  // The A100's profiles, given without SMs, take compute slices x 14.
  EXPECT_EQ(mig_profile(*catalog().find_accelerator("A100-SXM4-40GB")->mig, 2)->sms, 42);
}

TEST(ColocationScenario, PointNetHostTimeStillGivesTheSmActivityItWasDerivedFrom) {
  // models/small/pointnet_cls_hfta.yaml types in 131 ms of host time per step, derived from HFTA's
  // serial A100 SM activity (0.055) and the model's GPU time per step. A change to the kernel model that
  // moves that GPU time must re-derive it: one job alone must still show 0.055 (+-5 %).
  ColocationSpec s = load_colocation(kDir + "hfta_pointnet_a100.yaml", {}, catalog());
  s.jobs = {1};
  s.strategies = {Strategy::sequential};
  const auto points = run_colocation(s);
  ASSERT_EQ(points.size(), 1u);
  EXPECT_NEAR(points[0].run.sm_active, 0.055, 0.055 * 0.05);
}

TEST(ColocationScenario, EachKNamesItsFastestAndLeastEnergyStrategy) {
  const auto point = [](int k, Strategy st, double makespan_s, double energy_j, std::string status = "ok") {
    ColocationPoint p;
    p.jobs = k;
    p.strategy = st;
    p.status = std::move(status);
    p.run.makespan = seconds(makespan_s);
    p.run.energy = Joules(energy_j);
    return p;
  };
  const std::vector<ColocationPoint> points = {
      point(1, Strategy::sequential, 10, 100),
      point(2, Strategy::sequential, 20, 200),
      point(2, Strategy::time_slicing, 12, 190),
      point(2, Strategy::mps, 11, 195),
      point(2, Strategy::fused, 0, 0, "out_of_memory"),  // never a candidate, whatever its numbers
      point(3, Strategy::mps, 0, 0, "out_of_memory"),
      point(4, Strategy::time_slicing, 15, 300),
      point(4, Strategy::mps, 15, 300),  // a tie: the strategy listed first wins
  };
  const std::vector<StrategyChoice> c = choose_strategies(points);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].jobs, 1);
  EXPECT_EQ(c[0].fastest, &points[0]);
  EXPECT_EQ(c[0].least_energy, &points[0]);
  EXPECT_EQ(c[1].fastest, &points[3]);       // 11 s
  EXPECT_EQ(c[1].least_energy, &points[2]);  // 190 J
  EXPECT_EQ(c[2].jobs, 3);
  EXPECT_EQ(c[2].fastest, nullptr);
  EXPECT_EQ(c[2].least_energy, nullptr);
  EXPECT_EQ(c[3].fastest, &points[6]);
  EXPECT_EQ(c[3].least_energy, &points[6]);
}

TEST(ColocationScenario, ShippedScenariosRun) {
  for (const char* name : {"resnet18_a100", "hfta_pointnet_v100"}) {
    ColocationSpec s = load_colocation(kDir + name + ".yaml", {}, catalog());
    s.steps = 3;
    s.jobs = {1, 4};
    const auto points = run_colocation(s);
    EXPECT_EQ(points.size(), 2 * s.strategies.size()) << name;
    for (const auto& p : points) {
      EXPECT_EQ(p.status, "ok") << name << " " << strategy_name(p.strategy) << " " << p.message;
      // At one job every strategy is the job alone; at four none is slower than one at a time.
      if (p.jobs == 1) {
        EXPECT_NEAR(p.speedup, 1.0, 1e-9) << name;
      } else if (p.strategy != Strategy::fractional) {
        EXPECT_GE(p.speedup, 1.0) << name << " " << strategy_name(p.strategy);
      }
      EXPECT_GT(p.run.energy.value(), 0) << name;
    }
  }
}

}  // namespace sp
