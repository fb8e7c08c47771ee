// The co-location model against measurements: HFTA's published speedups, K processes measured
// sharing an H100 and an H200 (scalepoint-coloc-bench's loops, PointNet, ResNet-18), the closed
// forms the time-slicing constants come from, and the kernel model's strided rate from its trace.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/colocation.hpp"
#include "tests/input_error_message.hpp"

namespace sp {

namespace {
models::Catalog catalog() { return models::Catalog(std::filesystem::path(SP_SOURCE_DIR) / "models"); }
const std::string kPublished = std::string(SP_SOURCE_DIR) + "/calibration/data/colocation/hfta_pointnet.csv";
const std::string kColocationData = std::string(SP_SOURCE_DIR) + "/calibration/data/colocation/";

// One pass over PointNet's 1,024-channel tensor on the H200: 32 x 2,500 x 1,024 x 2 B = 163.84 MB.
constexpr double kPass1024 = 32 * 2500 * 1024 * 2.0;

// The longest kernel of step 2 of a torch.profiler CSV whose name contains `part`, in us.
double longest_in_step2(const config::CsvTable& t, const std::string& part) {
  double most = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (t.cell(i, "step") == "2" && t.cell(i, "name").find(part) != std::string::npos)
      most = std::max(most, *t.number(i, "duration_us"));
  }
  EXPECT_GT(most, 0) << part;
  return most;
}

// The vectorised rate both access fractions are shares of: the plain step's ReLU (clamp, read and
// written) on the 1,024-channel tensor, bytes per us.
double h200_relu_rate(const config::CsvTable& plain) { return 2 * kPass1024 / longest_in_step2(plain, "launch_clamp_scalar"); }

// The committed validation output (results/validation/colocation_<name>.{csv,png}) must be what the
// model gives today: `build/scalepoint colocate --validate calibration/data/colocation/<name>.csv`.
void expect_committed(const output::Table& t, const std::string& name) {
  EXPECT_EQ(output::to_csv(t), config::read_text_file(std::string(SP_SOURCE_DIR) + "/results/validation/colocation_" +
                                                      name + ".csv"));
}

// The measured points of calibration/data/colocation/<name>.csv against the model, `rows` of them:
// within its tolerance where `within(strategy, K, measured)` says so; where it says the model
// misses, the miss must be the documented one: the model above the measurement.
template <class Within>
output::Table expect_points(const std::string& name, std::size_t rows, Within within) {
  const output::Table t =
      validate_colocation(kColocationData + name + ".csv", catalog());
  EXPECT_EQ(t.rows(), rows);
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const std::string& st = t.column("strategy").text[i];
    const double k = t.column("jobs").values[i], measured = t.column("published_speedup").values[i];
    if (within(st, k, measured)) {
      EXPECT_LE(std::abs(t.column("error").values[i]), t.column("tolerance").values[i]) << name << " " << st << " K=" << k;
    } else {
      EXPECT_GT(t.column("error").values[i], 0) << name << " " << st << " K=" << k;
    }
  }
  expect_committed(t, name);
  return t;
}

// scalepoint-coloc-bench's rows of calibration/data/colocation/<name>.csv, `rows` of them, each
// within `tolerance` of the simulation, with the H100's slice and switch (the file has no probe).
output::Table expect_bench(const std::string& name, std::size_t rows, double tolerance, TimeSlicingDerivation& d) {
  const output::Table t = validate_sharing_bench(
      kColocationData + name + ".csv", catalog(), &d);
  EXPECT_FALSE(d.slice_measured);
  EXPECT_EQ(d.time_slice, models::kMeasuredTimeSlice);
  EXPECT_EQ(d.switch_cost, models::kMeasuredSwitchCost);
  EXPECT_EQ(t.rows(), rows);
  for (std::size_t i = 0; i < t.rows(); ++i) {
    EXPECT_LE(std::abs(t.column("error").values[i]), tolerance) << name << " " << t.column("case").text[i];
    EXPECT_EQ(t.column("use").text[i], t.column("jobs").values[i] == 1 ? "reference (K = 1)" : "validation");
  }
  expect_committed(t, name);
  return t;
}

}  // namespace

// The model against HFTA's PointNet curves (calibration/data/colocation/hfta_pointnet.csv), each
// point over one job at a time of its own precision (HFTA plots every curve over serial fp32; the
// file's `reference` puts serial amp at 1.1 on the A100's axis): fused execution on the V100 and
// the A100, MPS and MIG on the A100 within the stated 20 % (fused +13 to -10 %: HFTA's job,
// pointnet_cls_hfta.yaml, has Linear layers fused into batched GEMMs, no transposes).
// Time slicing (published ~1.0x) and MPS on the V100 (~1.1x) are not reproduced (the model gives
// 1.5-2.2x): scenarios/README.md "Co-location" says why; the rows stay in the table, the model above them.
TEST(ColocationValidation, FusedMpsAndMigWithinToleranceTimeSlicingAbove) {
  const output::Table t = validate_colocation(kPublished, catalog());
  ASSERT_EQ(t.rows(), 26u);
  int checked = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const std::string st = t.column("strategy").text[i], sc = t.column("scenario").text[i];
    const double error = t.column("error").values[i];
    if (st == "time_slicing" || (st == "mps" && sc == "hfta_pointnet_v100")) {
      EXPECT_GT(error, 0.2) << sc << " " << st << " K=" << t.column("jobs").values[i];
      continue;
    }
    ++checked;
    EXPECT_LE(std::abs(error), t.column("tolerance").values[i]) << sc << " " << st << " K=" << t.column("jobs").values[i];
  }
  EXPECT_EQ(checked, 21);
  // the A100's points are over serial amp: 2.70 / 1.1 for fused K = 3
  EXPECT_NEAR(t.column("published_speedup").values[0], 2.70 / 1.1, 1e-12);
  EXPECT_DOUBLE_EQ(t.column("published_reference").values[0], 1.1);
  // results/validation/colocation_hfta_pointnet.csv is committed; it must be what the model gives today:
  expect_committed(t, "hfta_pointnet");
}

// A reference that is not a positive number is named with its file, line and column.
TEST(ColocationValidation, ABadReferenceIsNamed) {
  const std::filesystem::path f =
      std::filesystem::temp_directory_path() / ("sp_bad_reference_" + std::to_string(::getpid()) + ".csv");
  {
    std::ofstream out(f);
    out << "scenario,strategy,jobs,published_speedup,reference,tolerance\n"
           "hfta_pointnet_v100,fused,2,1.62,,0.2\n"
           "hfta_pointnet_v100,fused,3,2.28,0,0.2\n";
  }
  const std::string m = input_error_message([&] { validate_colocation(f.string(), catalog()); });
  EXPECT_NE(m.find(f.filename().string() + ":3: reference"), std::string::npos) << m;
  std::ofstream(f) << "scenario,strategy,jobs,published_speedup,reference,tolerance\n"
                      "hfta_pointnet_v100,fused,2,1e300,,0.2\n";
  const std::string huge = input_error_message([&] { validate_colocation(f.string(), catalog()); });
  EXPECT_NE(huge.find(":2: published_speedup: must be at most 1000"), std::string::npos) << huge;
  std::filesystem::remove(f);
}

// The closed forms of derive_time_slicing on made-up measurements, worked by hand:
//  - host_bound alone: 10 launches after 60 us gaps and a 20 us kernel (+ 2 us latency) take
//    652 us a step, so a launch costs (652 - 22) / 10 - 60 = 3 us on the host;
//  - with a 1,780 us slice and 150 us switches, a queued loop of 20,000 us a step switches
//    ceil(20,000 / 1,780) = 12 times a step: speedup 20,000 / (20,000 + 12 x 150) = 1 / 1.09;
//  - the probe waits at most slice + switch beyond its 20 us round trip: 1,950 us.
// From those three rows the fixed point must give the 1,780 us and 150 us back.
TEST(ColocationBench, TimeSlicingConstantsInClosedForm) {
  const config::CsvTable t(
      "kind,case,sharing,jobs,kernel_us,gap_us,launches_per_step,steps,makespan_s,speedup,latency_median_us,"
      "latency_max_us\n"
      "colocation,host_bound,time_slicing,1,20,60,10,1000,0.652,1,,\n"
      "colocation,queued_long,time_slicing,1,200,0,100,10,0.2,1,,\n"
      "colocation,queued_long,time_slicing,4,200,0,100,10,0.872,0.9174311926605504,,\n"
      "probe,alone,time_slicing,1,10,2000,1,400,0.8,,20,25\n"
      "probe,beside_long_kernels,time_slicing,2,10,2000,1,400,0.9,,400,1950\n",
      "made-up.csv");
  const TimeSlicingDerivation d = derive_time_slicing(t, microseconds(2));
  EXPECT_NEAR(to_seconds(d.launch_cost) * 1e6, 3.0, 1e-9);
  EXPECT_NEAR(to_seconds(d.time_slice) * 1e6, 1780, 1e-6);
  EXPECT_NEAR(to_seconds(d.switch_cost) * 1e6, 150, 1e-6);
}

// A bench file without the rows the constants come from says which row it lacks.
TEST(ColocationBench, MissingDerivationRowsAreNamed) {
  const config::CsvTable t("kind,case,sharing,jobs,makespan_s,steps\ncolocation,host_bound,mps,1,0.5,750\n", "mps_only.csv");
  try {
    derive_time_slicing(t, microseconds(2));
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mps_only.csv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'host_bound' (time_slicing, K = 1)"), std::string::npos) << e.what();
  }
}

// Measurements the closed forms cannot use are named with their line and column, never turned
// into a negative slice or switch: a queued loop that gained from time slicing, a probe that never
// waited longer than alone.
TEST(ColocationBench, ImpossibleMeasurementsAreNamed) {
  const std::string head =
      "kind,case,sharing,jobs,kernel_us,gap_us,launches_per_step,steps,makespan_s,speedup,latency_median_us,"
      "latency_max_us\n"
      "colocation,host_bound,time_slicing,1,20,60,10,1000,0.652,1,,\n"
      "colocation,queued_long,time_slicing,1,200,0,100,10,0.2,1,,\n"
      "probe,alone,time_slicing,1,10,2000,1,400,0.8,,20,25\n";
  const auto error = [&](const std::string& rows) {
    return input_error_message([&] { derive_time_slicing(config::CsvTable(head + rows, "bad.csv"), microseconds(2)); });
  };
  const std::string gains = error(
      "colocation,queued_long,time_slicing,4,200,0,100,10,0.76,1.05,,\n"
      "probe,beside_long_kernels,time_slicing,2,10,2000,1,400,0.9,,400,1950\n");
  EXPECT_NE(gains.find("bad.csv:5: speedup"), std::string::npos) << gains;
  const std::string never_waited = error(
      "colocation,queued_long,time_slicing,4,200,0,100,10,0.872,0.9174,,\n"
      "probe,beside_long_kernels,time_slicing,2,10,2000,1,400,0.9,,18,19\n");
  EXPECT_NE(never_waited.find("bad.csv:6: latency_max_us"), std::string::npos) << never_waited;
}

// The scenarios' time-slicing defaults are what the committed H100 measurements give (rounded),
// and every row they are not derived from is predicted within the stated 10 %: time slicing that
// fills a host-bound loop's gaps (x1.85) and costs a device-bound one 6-15 %, MPS near K x.
TEST(ColocationBench, H100MeasurementsWithinTolerance) {
  const std::string csv = std::string(SP_SOURCE_DIR) + "/calibration/data/colocation/h100_coloc_bench.csv";
  TimeSlicingDerivation d;
  const output::Table t = validate_sharing_bench(csv, catalog(), &d);
  const ColocationSpec defaults;
  EXPECT_NEAR(to_seconds(d.time_slice) / to_seconds(defaults.time_slice), 1, 0.01);
  EXPECT_NEAR(to_seconds(d.switch_cost) / to_seconds(defaults.switch_cost), 1, 0.01);
  int validated = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (t.column("use").text[i] != "validation") continue;
    ++validated;
    EXPECT_LE(std::abs(t.column("error").values[i]), t.column("tolerance").values[i])
        << t.column("case").text[i] << " " << t.column("sharing").text[i] << " K=" << t.column("jobs").values[i];
  }
  EXPECT_EQ(validated, 36);  // run 4's two loops were predicted before they were measured
  expect_committed(t, "h100_coloc_bench");
}

// HFTA's PointNet job measured on an H100 with its data on the GPU (calibration/bench/pointnet_coloc.py,
// calibration/data/colocation/h100_pointnet.csv): time slicing and MPS within the stated 20 %, with
// the kernels costed as the H200 trace shows them (strided NCHW passes, one launch per kernel).
TEST(ColocationValidation, H100PointNetWithinTolerance) {
  expect_points("h100_pointnet", 4, [](const std::string&, double, double) { return true; });
}

// The same job on an H200 (calibration/bench/run_pointnet_bench.sh, run_hold_bench.sh,
// run_resnet_bench.sh; h200_pointnet.csv), with the node's dispatch derived from the plain step
// alone: MPS, HFTA's fusion (with the grouped convolutions' transposes at their own rate: -2 to
// +15 %, at the strided rate -5 to -19 %) and run 3's time slicing within 20 %. Runs 1 and 4 (time slicing 1.05-1.10) come out 16-21 % high: their one job alone
// took 6.2-6.4 ms a step, run 3's 8.0 ms, for K = 2 makespans within 2.5 % of each other. Two of
// three runs say time slicing gains at most 10 % here, and the model gains more.
TEST(ColocationValidation, H200PointNetWithinToleranceButRuns1And4TimeSlicing) {
  expect_points("h200_pointnet", 13, [](const std::string& st, double, double measured) {
    return !(st == "time_slicing" && measured < 1.2);  // runs 1 and 4
  });
}

// The same measurements against PointNet run from its own trace (pointnet_h200_trace.yaml: the
// measured step, its launches and gaps; the node's dispatch derived from the step alone): every
// point within 20 %, time slicing +9 to +14 % (runs 1, 4) and -13 % (run 3), MPS -5 / -11 %. The
// sharing model holds once the kernels are the real ones; what the synthetic scenario misses more
// is the kernel model's.
TEST(ColocationValidation, H200PointNetFromItsTraceWithinTolerance) {
  expect_points("h200_pointnet_trace", 7, [](const std::string&, double, double) { return true; });
}

// ResNet-18 from its own trace (resnet18_h200_trace.yaml, dispatch 19.4 us derived from its step
// alone): time slicing +8 / +1 %, MPS at K = 4 -11 %; MPS at K = 2 +35 %, where the measurement
// itself is odd (two jobs 0.659 s, four 0.827 s, one alone 0.438 s) and a trace carries no bytes
// for the kernels to share the memory bandwidth by.
TEST(ColocationValidation, H200ResNet18FromItsTrace) {
  expect_points("h200_resnet18_trace", 4, [](const std::string& st, double k, double) { return !(st == "mps" && k == 2); });
}

// ResNet-18 for CIFAR-10 on the H200 (run_resnet_bench.sh, h200_resnet18.csv), measured after
// the model of an earlier commit gave time slicing x1.74 / x2.61 and MPS x1.97 / x3.47 at K = 2 /
// 4 (1.84 ms of kernels and 189 launches a step; the trace: 4.46 ms and 447). With its layers
// described from the trace (NCHW convolutions between cuDNN's transposes, strided BatchNorm,
// library launches at a bare launch's cost, BatchNorm a block per channel) the model gave 4.52 ms,
// but with the transposes at the strided rate (1.77 ms of them against the trace's 1.17). At the
// transposes' own rate the step has 3.76 ms of kernels: what the kernel model still misses shows,
// the forward convolutions (0.26 ms against 0.42: the stem and the first stride-2 shortcut run as
// cuDNN's NCHW implicit_convolve_sgemm, 40 and 31 us against 6 and 5 modelled; the 64-channel
// layers' 256 x 64 tiles take 26 us against 16) and the 64-channel BatchNorm backward (146 us
// against 84: cuDNN's two-pass bn_bw kernel). With device time short the model fills more of it:
// time slicing at K = 2 within 20 % (+20 %), at K = 4 and MPS high (+31 %, +36 %, +20 %).
TEST(ColocationValidation, H200ResNet18) {
  expect_points("h200_resnet18", 4, [](const std::string& st, double k, double) { return st == "time_slicing" && k == 2; });
}

// The H200's loops (h200_coloc_bench.csv) have no queued_long or probe rows: the slice and switch
// stay the H100's, the launch cost is the file's own host_bound loop alone, and the short- and
// tiny-gap loops (whose model speedups, 1.377 and 0.893 with the H100's launch cost, were written
// down before the GPU ran them) check time slicing at gaps of a few microseconds within 10 %.
TEST(ColocationBench, H200ShortGapsWithinTolerance) {
  TimeSlicingDerivation d;
  expect_bench("h200_coloc_bench", 9, 0.1, d);
  // host_bound alone: 750 steps in 0.496067 s, 10 launches after 60 us gaps and a 20 us kernel
  // with the H200's 1.776 us latency: (661.42 - 21.776) / 10 - 60 = 3.96 us a launch.
  EXPECT_NEAR(to_seconds(d.launch_cost) * 1e6, (0.496067 / 750 * 1e6 - 21.776) / 10 - 60, 1e-6);
}

// Holding 8 GiB of written device memory per worker changes nothing the model would need: the
// H200's host_bound, short_gaps and queued_long loops with and without it (h200_coloc_hold.csv,
// calibration/bench/run_hold_bench.sh) all within 5 % of the simulation, whose switch cost is the
// H100's (the queued loop's 0.924 against 0.922 simulated).
TEST(ColocationBench, H200FootprintDoesNotChangeTimeSlicing) {
  TimeSlicingDerivation d;  // queued_long rows but no probe: the H100's constants
  expect_bench("h200_coloc_hold", 18, 0.05, d);
}

// Nor does ending each step with a copy to the host (a loop's loss.item()): h200_coloc_copy.csv,
// calibration/bench/run_copy_bench.sh, every loop with and without it within 6 % of the simulation.
TEST(ColocationBench, H200ReadBackDoesNotChangeTimeSlicing) {
  TimeSlicingDerivation d;
  expect_bench("h200_coloc_copy", 18, 0.06, d);
}

// KernelCosts::strided_access_fraction is the trace's: in step 2 of h200_pointnet_kernels.csv, the
// 1,024-channel tensor (32 x 2,500 x 1,024 x 2 B = 163.84 MB) is moved by the bias add (2 passes),
// BatchNorm forward (2), the max-pool (1), the bias gradient's sum (1) and the align2 forward GEMM
// (its output and an eighth of it in): their median rate over the ReLU's (clamp, 2 passes).
TEST(ColocationBench, StridedAccessFractionIsTheH200Trace) {
  const config::CsvTable t = config::CsvTable::read(kColocationData + "h200_pointnet_kernels.csv");
  const auto longest = [&](const std::string& part) { return longest_in_step2(t, part); };
  const double pass = kPass1024;
  std::vector<double> rates = {2 * pass / longest("CUDAFunctor_add<c10::Half>"), 2 * pass / longest("bn_fw_tr"),
                               pass / longest("MaxOps"), pass / longest("sum_functor<c10::Half, float"),
                               1.125 * pass / longest("_nn_align2")};
  std::sort(rates.begin(), rates.end());
  const double vector = h200_relu_rate(t);
  const models::Accelerator h200 = *catalog().find_accelerator("H200-SXM5-141GB");
  EXPECT_NEAR(rates[2] / vector, h200.compute.strided_access_fraction, 0.002);
  // the ReLU itself runs at the file's vectorised efficiency, within 2 points
  EXPECT_NEAR(vector * 1e6 / h200.memory_bandwidth.value(), h200.compute.memory_efficiency, 0.02);
}

// KernelCosts::transpose_access_fraction is the fused trace's: in steps 0-2 of
// h200_pointnet_fused4_kernels.csv, cuDNN's transposes of a copy's 1,024-channel tensor (grid
// 79 x 32 x 32: 2,500 points in tiles of 32, 1,024 channels in tiles of 32, 32 samples; 163.84 MB
// read and written) that share the device with another kernel for less than a tenth of their
// time (cuDNN overlaps a group's transposes with the previous group's GEMM on a second stream):
// their bytes over their time, over the plain step's ReLU on the same tensor.
TEST(ColocationBench, TransposeAccessFractionIsTheFusedH200Trace) {
  const double vector = h200_relu_rate(config::CsvTable::read(kColocationData + "h200_pointnet_kernels.csv"));
  const config::CsvTable t = config::CsvTable::read(kColocationData + "h200_pointnet_fused4_kernels.csv");
  double bytes = 0, time = 0;
  int clean = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const std::string name = t.cell(i, "name");
    if (t.cell(i, "grid") != "79x32x32" ||
        (name.find("nchwToNhwc") == std::string::npos && name.find("nhwcToNchw") == std::string::npos))
      continue;
    const double start = *t.number(i, "start_us"), end = start + *t.number(i, "duration_us");
    double shared = 0;
    for (std::size_t j = 0; j < t.rows(); ++j) {
      if (j == i || t.cell(j, "step") != t.cell(i, "step") || t.cell(j, "kind") != "kernel") continue;
      const double s = *t.number(j, "start_us"), e = s + *t.number(j, "duration_us");
      shared += std::max(0.0, std::min(end, e) - std::max(start, s));
    }
    if (shared >= 0.1 * (end - start)) continue;
    bytes += 2 * kPass1024;
    time += end - start;
    ++clean;
  }
  EXPECT_EQ(clean, 63);  // 21 of the 24 a step
  const models::Accelerator h200 = *catalog().find_accelerator("H200-SXM5-141GB");
  EXPECT_NEAR(bytes / time / vector, h200.compute.transpose_access_fraction, 0.002);
  // between the strided passes' share and a vectorised stream's
  EXPECT_GT(h200.compute.transpose_access_fraction, h200.compute.strided_access_fraction);
}

}  // namespace sp
