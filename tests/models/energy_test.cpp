// The energy model against hand-worked cases: the switch count of a folded Clos, a run's energy
// split into busy and waiting accelerators, hosts and switches, and the facility factor.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/energy/energy.hpp"
#include "sim/config/csv.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

TEST(Energy, ClosSwitchCountsByHand) {
  EXPECT_EQ(clos_switches(0, 64), 0);
  EXPECT_EQ(clos_switches(64, 64), 1);  // one switch holds every port
  // 65 ports need two tiers: ceil(65 / 32) = 3 leaves and ceil(65 / 64) = 2 spines.
  EXPECT_EQ(clos_switches(65, 64), 5);
  // 2048 = 64 x 32 ports, the largest two-tier fat tree of 64-port switches: 64 leaves, 32 spines
  // (a DGX SuperPOD scalable-unit layout).
  EXPECT_EQ(clos_switches(2048, 64), 96);
  // 8192 ports take three tiers: 256 leaves, 256 aggregation, 128 core.
  EXPECT_EQ(clos_switches(8192, 64), 640);
}

namespace {
TrainingEstimate hand_run() {
  // 16 accelerators on 2 nodes, 100 steps of 4 s of which 1 s forward, 2 s backward (1 s exposed
  // communication), and no evaluation: 400 s, 300 s of it busy.
  TrainingEstimate e;
  e.accelerators = 16;
  e.nodes = 2;
  e.steps = 100;
  e.step.step = seconds(4.0);
  e.step.forward = seconds(1.0);
  e.step.backward = seconds(2.0);
  e.run_time = seconds(400.0);
  return e;
}

Platform hand_platform() {
  Platform p = testing::simple_platform();
  p.accelerator.tdp = Watts(700);
  p.accelerator.idle_power = Watts(100);
  p.topology.tiers.back().nics_per_node = 8;
  p.power.host = Watts(2000);
  return p;
}

PowerCalibration hand_calibration() {
  PowerCalibration c;
  c.compute_fraction = 0.8;
  c.wait_fraction = 0.1;
  return c;
}
}  // namespace

TEST(Energy, RunEnergyByHand) {
  const EnergyEstimate e = estimate_energy(hand_run(), hand_platform(), hand_calibration());
  ASSERT_TRUE(e.ok) << e.why;
  // Busy 100 + 0.8 x 600 = 580 W, waiting 100 + 0.1 x 600 = 160 W.
  EXPECT_DOUBLE_EQ(e.accelerator.busy.value(), 580.0);
  EXPECT_DOUBLE_EQ(e.accelerator.wait.value(), 160.0);
  EXPECT_DOUBLE_EQ(e.accelerator.context.value(), 118.0);  // idle context: 100 + 0.03 x 600
  EXPECT_DOUBLE_EQ(e.busy_share(), 0.75);
  // 16 x (300 s x 580 W + 100 s x 160 W) = 3.04 MJ; hosts 2 x 2 kW x 400 s = 1.6 MJ; 16 NIC
  // ports on one 64-port switch at 690 W for 400 s = 0.276 MJ.
  EXPECT_NEAR(e.accelerators.value(), 3.04e6, 1e-3);
  EXPECT_NEAR(e.hosts.value(), 1.6e6, 1e-3);
  EXPECT_EQ(e.switches, 1);
  EXPECT_NEAR(e.network.value(), 0.276e6, 1e-3);
  EXPECT_NEAR(e.total().value(), 4.916e6, 1e-3);
  EXPECT_NEAR(e.average().value(), 4.916e6 / 400, 1e-6);
}

TEST(Energy, FacilityEnergyAddsPsuLossesAndPue) {
  Platform p = hand_platform();
  p.power.psu_efficiency = 0.96;
  p.power.pue = 1.25;
  const EnergyEstimate e = estimate_energy(hand_run(), p, hand_calibration());
  EXPECT_NEAR(e.facility().value(), 4.916e6 * 1.25 / 0.96, 1e-3);
}

TEST(Energy, DefaultsComeFromTheCalibration) {
  // No idle_power: 0.17 of the TDP; no host power: 275 W per slot of an 8-accelerator node.
  Platform p = hand_platform();
  p.accelerator.idle_power.reset();
  p.power.host.reset();
  PowerCalibration c = hand_calibration();
  const EnergyEstimate e = estimate_energy(hand_run(), p, c);
  EXPECT_NEAR(e.accelerator.idle.value(), 119.0, 1e-9);
  EXPECT_NEAR(e.host.value(), 2200.0, 1e-9);
}

TEST(Energy, EvaluationForwardIsBusyAndItsOverheadWaits) {
  // Two evaluations of 10 s each, 4 s of forward: 8 s more busy, 12 s more waiting.
  TrainingEstimate run = hand_run();
  run.evaluation.evaluations = 2;
  run.evaluation.forward = seconds(4.0);
  run.evaluation.each = seconds(10.0);
  run.run_time = seconds(420.0);
  const EnergyEstimate e = estimate_energy(run, hand_platform(), hand_calibration());
  EXPECT_NEAR(to_seconds(e.busy), 308.0, 1e-9);
  EXPECT_NEAR(e.accelerators.value(), 16 * (308 * 580.0 + 112 * 160.0), 1e-3);
}

TEST(Energy, NoTdpMeansNoEnergyAndSaysWhy) {
  Platform p = hand_platform();
  p.accelerator.tdp.reset();
  const EnergyEstimate e = estimate_energy(hand_run(), p, hand_calibration());
  EXPECT_FALSE(e.ok);
  EXPECT_NE(e.why.find("tdp"), std::string::npos);
}

TEST(Energy, ShippedCalibrationIsInItsPhysicalRange) {
  // Dense training keeps GPUs near their power limit: half to all of the idle-to-TDP range.
  const PowerCalibration& c = default_power_calibration();
  EXPECT_GE(c.compute_fraction, 0.5);
  EXPECT_LE(c.compute_fraction, 1.0);
  EXPECT_EQ(c.source, "scalepoint calibrate power");
}

// A check of the one fitted power constant against data it was not fitted on: an H100 running
// bf16 GEMMs of 8,192 cubed back to back drew 695-701 W in three runs (its 700 W limit; scalepoint-coloc-bench,
// calibration/data/colocation/h100_coloc_bench.csv). A training step mixes in lighter kernels
// (element-wise, attention, optimizer), so the busy power fitted on the MLPerf power row must not
// exceed what the heaviest run drew, and lie within 10 % below it. The fit now sits at its bound,
// the 700 W limit (`calibrate power` says so): the Llama row's exposed tensor-parallel collectives
// count as waiting at f_wait = 0.1, an estimate, where NCCL's kernels stream HBM and NVLink.
TEST(Energy, FittedH100BusyPowerSitsJustBelowMeasuredGemmPower) {
  const Catalog c(std::filesystem::path(SP_SOURCE_DIR) / "models");
  const auto h100 = c.find_accelerator("H100-SXM5-80GB");
  ASSERT_TRUE(h100);
  const auto p = accelerator_power(*h100, default_power_calibration());
  ASSERT_TRUE(p);
  const config::CsvTable bench =
      config::CsvTable::read(std::string(SP_SOURCE_DIR) + "/calibration/data/colocation/h100_coloc_bench.csv");
  double gemm_w = 0;
  int rows = 0;
  for (std::size_t i = 0; i < bench.rows(); ++i) {
    if (bench.cell(i, "case") != "gemm_bf16_8192") continue;
    gemm_w = std::max(gemm_w, *bench.number(i, "power_w"));
    ++rows;
  }
  ASSERT_GE(rows, 2);
  EXPECT_LE(p->busy.value(), gemm_w);
  EXPECT_GT(p->busy.value(), 0.9 * gemm_w);
  // The idle context state against the measured ones (120-127 W): idle 105 W + 0.03 x 595 W.
  EXPECT_NEAR(p->context.value(), 122.85, 1e-9);
}

}  // namespace sp::models
