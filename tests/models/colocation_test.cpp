// The co-location simulation against hand-worked cases: time slicing (switches, preemption),
// MPS (SM sharing with caps, memory bandwidth), host CPU contention, admission, energy, and the
// kernels of fused models.
#include <gtest/gtest.h>

#include "models/colocation/colocation_sim.hpp"
#include "models/compute/compute_model.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "test_fixtures.hpp"
#include "tests/input_error_message.hpp"

namespace sp::models {

namespace {
// Jobs of `steps` steps, each step one kernel of `alone` on `width` of the device's 100 SMs,
// launched without host cost and with no start-up.
std::vector<StepKernel> one_kernel(double alone_ms, int width, double bytes = 0, bool memory_bound = false) {
  StepKernel k;
  k.alone = seconds(alone_ms * 1e-3);
  k.width = width;
  k.bytes = Bytes(bytes);
  k.memory_bound = memory_bound;
  return {k};
}

ColocatedJob job(const std::vector<StepKernel>& kernels, double steps = 1) {
  ColocatedJob j;
  j.kernels = &kernels;
  j.steps = steps;
  return j;
}

DeviceSharing device(DeviceSharing::Mode mode, int admit) {
  DeviceSharing d;
  d.mode = mode;
  d.sms = 100;
  d.memory_bandwidth = BytesPerSecond(1e12);
  d.time_slice = seconds(1e-3);
  d.switch_cost = seconds(0.1e-3);
  d.admit = admit;
  d.host_cores = 64;
  d.power = AcceleratorPower{Watts(100), Watts(500), Watts(170), Watts(150)};
  return d;
}

double ms(Duration d) { return to_seconds(d) * 1e3; }
}  // namespace

TEST(Colocation, TimeSlicingSwitchesWhenAStreamRunsDry) {
  // Two jobs of one 0.5 ms kernel: A runs, its stream is empty, one switch (0.1 ms), B runs.
  const auto k = one_kernel(0.5, 100);
  const auto r = simulate_colocation({job(k), job(k)}, device(DeviceSharing::Mode::exclusive, 2));
  EXPECT_NEAR(ms(r.makespan), 1.1, 1e-9);
  EXPECT_NEAR(ms(r.completion[0]), 0.5, 1e-9);
  EXPECT_EQ(r.context_switches, 1u);
}

TEST(Colocation, ALongRunReportsTheShareOfItsStepsDoneWithoutChangingTheRun) {
  // Two jobs of 100,000 one-kernel steps under MPS: some 10^6 events, so the simulation reports a
  // few times (every 2^18 events) how far the 200,000 steps are, rising, within (0, 1); and the run
  // is the one it plays without a listener, to the picosecond.
  const auto k = one_kernel(0.01, 50);
  const std::vector<ColocatedJob> jobs = {job(k, 1e5), job(k, 1e5)};
  const DeviceSharing d = device(DeviceSharing::Mode::concurrent, 2);
  std::vector<double> heard;
  const ColocationRun with = simulate_colocation(jobs, d, [&](double share) { heard.push_back(share); });
  const ColocationRun without = simulate_colocation(jobs, d);
  ASSERT_GE(heard.size(), 2u) << with.events << " events";
  EXPECT_EQ(heard.size(), with.events >> 18);
  for (std::size_t i = 0; i < heard.size(); ++i) {
    EXPECT_GT(heard[i], 0.0);
    EXPECT_LT(heard[i], 1.0);
    if (i > 0) {
      EXPECT_GT(heard[i], heard[i - 1]);
    }
  }
  EXPECT_EQ(with.makespan, without.makespan);
  EXPECT_EQ(with.events, without.events);
}

TEST(Colocation, TimeSlicingPreemptsAtTheEndOfASlice) {
  // Two 3 ms kernels, 1 ms slices, 0.1 ms switches: A B A B A B, five switches. A ends after its
  // third slice: 5 ms of work + 4 switches = 5.4 ms; B at 6 ms + 5 switches = 6.5 ms.
  const auto k = one_kernel(3.0, 100);
  const auto r = simulate_colocation({job(k), job(k)}, device(DeviceSharing::Mode::exclusive, 2));
  EXPECT_NEAR(ms(r.completion[0]), 5.4, 1e-6);
  EXPECT_NEAR(ms(r.completion[1]), 6.5, 1e-6);
  EXPECT_EQ(r.context_switches, 5u);
  EXPECT_NEAR(r.gpu_busy_share, 6.0 / 6.5, 1e-6);
}

TEST(Colocation, MpsRunsNarrowKernelsSideBySide) {
  // Half-width kernels fit together: 1 ms for both; full-width ones share the SMs: each at half
  // speed, 2 ms; three full-width ones 3 ms.
  const auto half = one_kernel(1.0, 50), full = one_kernel(1.0, 100);
  const auto concurrent = device(DeviceSharing::Mode::concurrent, 3);
  EXPECT_NEAR(ms(simulate_colocation({job(half), job(half)}, concurrent).makespan), 1.0, 1e-9);
  EXPECT_NEAR(ms(simulate_colocation({job(full), job(full)}, concurrent).makespan), 2.0, 1e-9);
  EXPECT_NEAR(ms(simulate_colocation({job(full), job(full), job(full)}, concurrent).makespan), 3.0, 1e-6);
  // Max-min fairness: a 20-SM kernel keeps its 20 SMs beside a 100-SM one (which gets 80).
  const auto narrow = one_kernel(1.0, 20);
  const auto r = simulate_colocation({job(narrow), job(full)}, concurrent);
  EXPECT_NEAR(ms(r.completion[0]), 1.0, 1e-9);
  // The wide one: 0.8 of its speed for 1 ms, then alone: 0.2 ms left.
  EXPECT_NEAR(ms(r.completion[1]), 1.2, 1e-9);
}

TEST(Colocation, MpsMemoryBoundKernelsShareTheBandwidth) {
  // Two half-width memory-bound kernels each wanting the whole 1 TB/s for 1 ms: both at half
  // speed, 2 ms, though the SMs would let them run together.
  const auto k = one_kernel(1.0, 50, 1e9, true);
  EXPECT_NEAR(ms(simulate_colocation({job(k), job(k)}, device(DeviceSharing::Mode::concurrent, 2)).makespan), 2.0,
              1e-6);
}

TEST(Colocation, MigInstancesRunAsSmallDevicesAndNeverSlowEachOther) {
  // Instances of 25 SMs and 0.25 TB/s. A 1 ms kernel 100 SMs wide gets 25 of them: 4 ms, for one
  // job or two (no interference). A memory-bound 1 ms kernel 20 SMs wide wanting 1 TB/s holds all
  // its SMs but only a quarter of the bandwidth: 4 ms. Two 1 ms kernels 20 SMs wide run side by
  // side in their own instances: 1 ms.
  DeviceSharing d = device(DeviceSharing::Mode::partitioned, 2);
  d.partition_sms = 25;
  d.partition_bandwidth = BytesPerSecond(0.25e12);
  const auto wide = one_kernel(1.0, 100);
  EXPECT_NEAR(ms(simulate_colocation({job(wide)}, d).makespan), 4.0, 1e-6);
  EXPECT_NEAR(ms(simulate_colocation({job(wide), job(wide)}, d).makespan), 4.0, 1e-6);
  const auto streaming = one_kernel(1.0, 20, 1e9, true);
  EXPECT_NEAR(ms(simulate_colocation({job(streaming)}, d).makespan), 4.0, 1e-6);
  const auto narrow = one_kernel(1.0, 20);
  EXPECT_NEAR(ms(simulate_colocation({job(narrow), job(narrow)}, d).makespan), 1.0, 1e-6);
  // A third job waits for an instance: 1 + 1 ms.
  EXPECT_NEAR(ms(simulate_colocation({job(narrow), job(narrow), job(narrow)}, d).makespan), 2.0, 1e-6);
}

TEST(Colocation, HostThreadsStretchWhenCoresRunOut) {
  // Launch-bound jobs: 10 steps of a 1 ms dispatch and a 1 us kernel. Alone: 10 x (1 ms + 1 us).
  // Two of them needing 2 cores each on 2 cores: every dispatch takes twice as long.
  auto k = one_kernel(0.001, 1);
  ColocatedJob j = job(k, 10);
  j.dispatch_per_launch = seconds(1e-3);
  j.cpu_cores = 2;
  DeviceSharing d = device(DeviceSharing::Mode::concurrent, 2);
  d.host_cores = 2;
  EXPECT_NEAR(ms(simulate_colocation({j}, d).makespan), 10.01, 1e-6);
  EXPECT_NEAR(ms(simulate_colocation({j, j}, d).makespan), 20.01, 1e-6);
}

TEST(Colocation, AdmissionRunsJobsInTurnsAndEachPaysItsStartUp) {
  // One at a time, each 2 ms of start-up and 1 ms of kernel: 3, 6, 9 ms.
  const auto k = one_kernel(1.0, 100);
  ColocatedJob j = job(k);
  j.start_up = seconds(2e-3);
  const auto r = simulate_colocation({j, j, j}, device(DeviceSharing::Mode::exclusive, 1));
  EXPECT_NEAR(ms(r.completion[0]), 3, 1e-9);
  EXPECT_NEAR(ms(r.completion[1]), 6, 1e-9);
  EXPECT_NEAR(ms(r.completion[2]), 9, 1e-9);
  EXPECT_EQ(r.context_switches, 0u);
}

TEST(Colocation, EnergyFollowsTheSmsBusy) {
  // One 1 s kernel on 50 of 100 SMs: idle 100 W + an idle context's 50 W + half of (500 - 150) W
  // = 325 W for 1 s (the training run's waiting state, 170 W, plays no part).
  const auto k = one_kernel(1000.0, 50);
  const auto r = simulate_colocation({job(k)}, device(DeviceSharing::Mode::exclusive, 1));
  EXPECT_NEAR(r.energy.value(), 325.0, 1e-6);
  EXPECT_NEAR(r.sm_active, 0.5, 1e-9);
}

TEST(Colocation, FusedModelsBatchTheirProductsAndStreams) {
  // Two fused copies of a layer: the GEMM is one launch of two products (HFTA's batched matmul),
  // the element-wise kernel moves twice the bytes in the same launches.
  SmallWorkload w;
  w.parameters = 1000;
  Op fc;
  fc.kind = OpKind::gemm;
  fc.n = 256;
  fc.k = 256;
  Op ew;
  ew.kind = OpKind::elementwise;
  ew.forward_bytes_per_sample = Bytes(1e6);
  ew.forward_kernels = 2;
  w.ops = {fc, ew};
  const Accelerator a = testing::simple_platform().accelerator;
  const auto one = step_kernels(w, a, 64, 1), two = step_kernels(w, a, 64, 2);
  ASSERT_EQ(one.size(), two.size());
  EXPECT_DOUBLE_EQ(one[0].launches, two[0].launches);
  EXPECT_DOUBLE_EQ(two[0].bytes.value(), 2 * one[0].bytes.value());  // the forward GEMM's operands
  EXPECT_DOUBLE_EQ(two[1].bytes.value(), 2 * one[1].bytes.value());  // the forward stream
  EXPECT_EQ(training_memory(w, 64, 2).value(), 2 * training_memory(w, 64, 1).value());
}

TEST(Colocation, TheHostWaitsForAKernelWhoseResultItReads) {
  // Two 0.5 ms kernels a step, 0.2 ms of dispatch each. Launched back to back: the first runs
  // 0.2-0.7, the second was queued at 0.4 and runs 0.7-1.2. If the host reads the first's result
  // (GradScaler's overflow check), it launches the second only at 0.7 + 0.2 = 0.9: 1.4 ms.
  std::vector<StepKernel> k(2);
  for (StepKernel& x : k) {
    x.alone = seconds(0.5e-3);
    x.width = 100;
  }
  ColocatedJob j = job(k);
  j.dispatch_per_launch = seconds(0.2e-3);
  EXPECT_NEAR(ms(simulate_colocation({j}, device(DeviceSharing::Mode::exclusive, 1)).makespan), 1.2, 1e-9);
  k[0].host_waits = true;
  EXPECT_NEAR(ms(simulate_colocation({j}, device(DeviceSharing::Mode::exclusive, 1)).makespan), 1.4, 1e-9);
  // The last kernel waited on as well changes nothing (the step's end waits for it anyway), and a
  // second step starts over: 2 x 1.4 ms. Under MPS two such jobs of 50 SMs each run side by side.
  k[1].host_waits = true;
  j.steps = 2;
  EXPECT_NEAR(ms(simulate_colocation({j}, device(DeviceSharing::Mode::exclusive, 1)).makespan), 2.8, 1e-9);
  for (StepKernel& x : k) x.width = 50;
  const auto mps = simulate_colocation({j, j}, device(DeviceSharing::Mode::concurrent, 2));
  EXPECT_NEAR(ms(mps.completion[0]), 2.8, 1e-9);
  EXPECT_NEAR(ms(mps.completion[1]), 2.8, 1e-9);
}

TEST(Colocation, AnEntryOfSeveralKernelsLaunchesEachBeforeItRuns) {
  // An element-wise entry of 3 kernels becomes 3 launches of a third of its time and bytes each,
  // so the device idles between them as the host dispatches; fp16 (autocast with a GradScaler)
  // makes the host wait on the optimizer's first kernel, its overflow check.
  SmallWorkload w;
  w.parameters = 1000;
  Op ew;
  ew.kind = OpKind::elementwise;
  ew.forward_bytes_per_sample = Bytes(3e6);
  ew.forward_kernels = 3;
  w.ops = {ew};
  w.optimizer_kernels = 2;
  const Accelerator a = testing::simple_platform().accelerator;
  const auto k = step_kernels(w, a, 1);
  ASSERT_EQ(k.size(), 5u);  // 3 forward, none backward (no backward bytes or kernels), 2 optimizer
  const Duration whole = stream_time(a, Bytes(3e6), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(to_seconds(k[i].alone), to_seconds(whole) / 3, 1e-12);  // whole picoseconds
    EXPECT_DOUBLE_EQ(k[i].bytes.value(), 1e6);
    EXPECT_DOUBLE_EQ(k[i].launches, 1.0);
    EXPECT_FALSE(k[i].host_waits);
  }
  EXPECT_TRUE(k[3].host_waits);
  EXPECT_FALSE(k[4].host_waits);
  for (const StepKernel& x : k) EXPECT_EQ(x.library_host, Duration::zero());
  w.precision = "bf16";  // no loss scaling, no read-back
  EXPECT_FALSE(step_kernels(w, a, 1)[3].host_waits);
}

TEST(Colocation, ALibrarysLaunchesInsideAnOpCostABareLaunch) {
  // A 3x3 NCHW convolution, forward only: cuDNN's two transposes are launched inside the conv op,
  // 4 us of host each instead of a framework dispatch; the GEMM is the op's own launch. Then the
  // optimizer's 2 launches, the first waited on (fp16: GradScaler).
  SmallWorkload w;
  w.parameters = 576;
  Op conv = parse_op(config::load_string("{conv: c, in: 8, out: 8, kernel: 3, positions: [64], layout: nchw}", "o"));
  conv.frozen = true;
  conv.input_gradient = false;
  w.ops = {conv};
  w.optimizer_kernels = 2;
  w.library_launch = microseconds(4);
  const auto lib = step_kernels(w, testing::simple_platform().accelerator, 1);
  ASSERT_EQ(lib.size(), 5u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_DOUBLE_EQ(lib[i].launches, 0.0);
    EXPECT_EQ(lib[i].library_host, microseconds(4));
  }
  EXPECT_DOUBLE_EQ(lib[2].launches, 1.0);
  EXPECT_EQ(lib[2].library_host, Duration::zero());
  EXPECT_TRUE(lib[3].host_waits);
  // On the host: 4 + 4 us for the transposes, then a dispatch of 10 us for the GEMM.
  std::vector<StepKernel> first(lib.begin(), lib.begin() + 3);
  for (StepKernel& x : first) x.alone = seconds(1e-6);
  ColocatedJob j = job(first);
  j.dispatch_per_launch = microseconds(10);
  // transposes end 4 + 1 = 5 us and 8 + 1 = 9 us; the GEMM is launched at 18 us, ends at 19 us
  EXPECT_NEAR(to_seconds(simulate_colocation({j}, device(DeviceSharing::Mode::exclusive, 1)).makespan) * 1e6, 19, 1e-6);
}

TEST(Colocation, SmallWorkloadHostKeysAndCountsAreChecked) {
  const auto parse = [](const std::string& extra, const std::string& ops = "[{gemm: fc, n: 8, k: 8}]") {
    return parse_small_workload(config::load_string(
        "{name: w, source: s, parameters: 1000, dataset_samples: 10, activations_per_sample: \"1 kB\", ops: " + ops +
            extra + "}",
        "w.yaml"));
  };
  const SmallWorkload w = parse(", optimizer_kernels: 9, host: {dispatch_per_kernel: \"30 us\", library_launch: \"5 us\"}");
  EXPECT_DOUBLE_EQ(w.optimizer_kernels, 9.0);
  EXPECT_EQ(w.dispatch_per_kernel, microseconds(30));
  EXPECT_EQ(w.library_launch, microseconds(5));
  const auto error = [&](const std::string& extra, const std::string& ops = "[{gemm: fc, n: 8, k: 8}]") {
    return input_error_message([&] { parse(extra, ops); });
  };
  EXPECT_NE(error(", optimizer_kernels: 1000000").find("optimizer_kernels"), std::string::npos);
  EXPECT_NE(error(", host: {library_launch: \"1 s\"}").find("at most 100 ms"), std::string::npos);
  EXPECT_NE(error(", host: {dispatch_per_kernel: \"-3 us\"}").find("dispatch_per_kernel"), std::string::npos);
  const std::string many = error("", "[{elementwise: e, kernels: {forward: 1e9, backward: 0}}]");
  EXPECT_NE(many.find("kernels.forward"), std::string::npos) << many;
}

TEST(Colocation, FusedNchwConvolutionsTransposeTheirActivations) {
  // A 1x1 convolution 64 -> 64 over 2,500 positions in NCHW, one sample, forward only. Alone it
  // is one strided GEMM (2,500 x 2 B is not a multiple of 16 B). Two fused copies make it
  // grouped: two transposes first, moving its input and output, (2,500 x 64 + 2,500 x 64) x 2 B =
  // 640 kB, read and written (x 2) for both copies (x 2): 2.56 MB at the transposes' rate in two
  // launches of 1.28 MB; then the GEMM of two products, channels-last, not strided.
  SmallWorkload w;
  w.parameters = 4160;
  w.ops = {parse_op(config::load_string("{conv: c, in: 64, out: 64, kernel: 1, positions: [2500], layout: nchw, "
                                        "input_gradient: false}",
                                        "op.yaml"))};
  w.ops[0].frozen = true;  // no weight gradient: forward only
  w.precision = "bf16";    // no GradScaler read-back
  const Accelerator a = testing::simple_platform().accelerator;
  const auto one = step_kernels(w, a, 1, 1), two = step_kernels(w, a, 1, 2);
  ASSERT_EQ(one.size(), 1u + 4u);  // the GEMM, then the optimizer's 4 launches
  ASSERT_EQ(two.size(), 3u + 4u);
  const Duration transposes = stream_time(a, Bytes(2.56e6), 2, Access::transpose);
  for (int i = 0; i < 2; ++i) {
    EXPECT_DOUBLE_EQ(two[i].bytes.value(), 1.28e6);
    EXPECT_NEAR(to_seconds(two[i].alone), to_seconds(transposes) / 2, 1e-12);  // whole picoseconds
    EXPECT_TRUE(two[i].memory_bound);
    EXPECT_DOUBLE_EQ(two[i].launches, 0.0);  // launched by cuDNN inside the conv op
    EXPECT_EQ(two[i].library_host, w.library_launch);
  }
  Kernel gemm = expand(w.ops[0], Shard{}, Pass::forward, "bf16").at(0);
  EXPECT_TRUE(gemm.shape.strided);
  EXPECT_NEAR(to_seconds(one[0].alone), to_seconds(kernel_time(gemm, a)), 1e-15);
  gemm.shape.batch = 2;
  gemm.shape.strided = false;
  EXPECT_NEAR(to_seconds(two[2].alone), to_seconds(kernel_time(gemm, a)), 1e-15);
}

TEST(Colocation, EarlyStoppingEndsTheJobsThatRankLowAtAMilestone) {
  // Four jobs one after another (admission 1), 9 steps of one 1 ms kernel each, one milestone at
  // step 3 (grace 1/3, reduction 3: the next, 9, is the end). A job goes on if its quality is at
  // least the 2/3 quantile (linear) of the qualities the jobs before it recorded at step 3:
  //   job 0, 0.5: nothing recorded, goes on;  job 1, 0.9: {0.5} -> 0.5, goes on;
  //   job 2, 0.1: {0.5, 0.9} -> 0.767, stops after 3 steps;
  //   job 3, 0.7: {0.1, 0.5, 0.9} -> 0.633, goes on.
  // 9 + 9 + 3 + 9 = 30 steps of 1 ms: the last job ends at 30 ms.
  const auto k = one_kernel(1.0, 100);
  std::vector<ColocatedJob> jobs(4, job(k, 9));
  const double quality[] = {0.5, 0.9, 0.1, 0.7};
  for (std::size_t j = 0; j < 4; ++j) jobs[j].quality = quality[j];
  DeviceSharing d = device(DeviceSharing::Mode::exclusive, 1);
  d.reduction = 3;
  d.milestones = {3};
  const auto r = simulate_colocation(jobs, d);
  EXPECT_EQ(r.steps_run, (std::vector<double>{9, 9, 3, 9}));
  EXPECT_NEAR(ms(r.completion[2]), 21.0, 1e-9);
  EXPECT_NEAR(ms(r.makespan), 30.0, 1e-9);
  // Without it every job runs its 9 steps.
  d.reduction = 0;
  EXPECT_NEAR(ms(simulate_colocation(jobs, d).makespan), 36.0, 1e-9);
  EXPECT_NEAR(quantile_linear({0.1, 0.5, 0.9}, 2.0 / 3), 0.5 + 0.4 / 3, 1e-12);
}

}  // namespace sp::models
