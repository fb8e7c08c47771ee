// The step executor on graphs written by hand: streams, shared links, and what communication
// takes from compute beside it (SMs, HBM bandwidth), each against a case worked by hand.
#include <gtest/gtest.h>

#include <algorithm>

#include "models/step/step_executor.hpp"
#include "models/step/step_graph.hpp"
#include "test_fixtures.hpp"

namespace sp::models {

namespace {

// One node of 8 GPUs per node, two nodes: a 2-rank all-reduce across the NICs (one rank a node).
Platform two_nodes() {
  Platform p = testing::simple_platform();
  p.accelerator.compute.parallel_units = 128;
  return p;
}

GraphOp op(Phase phase, StreamKind stream, Duration work, int comm = -1, std::vector<std::uint32_t> deps = {}) {
  GraphOp o;
  o.phase = phase;
  o.stream = stream;
  o.work = work;
  o.comm = comm;
  o.deps = std::move(deps);
  return o;
}

GraphComm across_nodes(const Platform& p, Bytes n) {
  const Group g{{1, 2}};  // one rank on each of two nodes
  const Selected s = select_collective(p, g, CollectiveOp::all_reduce, n, {Algorithm::ring, Protocol::simple});
  return GraphComm{s.terms, n, g.top_tier(), g, Duration{}};
}

// A 10 ms layer's compute and, beside it on the TP stream, a 4 ms collective whose own HBM
// traffic takes `memory_time` (and which holds the tier's communication SMs).
StepGraph layer_beside_tp(const Platform& p, Duration memory_time) {
  StepGraph g;
  const Group tp{{2, 1}};
  const Selected s = select_collective(p, tp, CollectiveOp::all_gather, Bytes(1e6));
  g.comms = {GraphComm{s.terms, Bytes(1e6), 0, tp, memory_time}};
  g.ops = {op(Phase::forward, StreamKind::compute, milliseconds(10)),
           op(Phase::tp_comm, StreamKind::tp, milliseconds(4), 0)};
  return g;
}

}  // namespace

TEST(StepExecutor, TwoCollectivesOnOneNicTakeTheSumOfTheirBytes) {
  // A gradient all-reduce (DP stream) and a pipeline transfer (PP stream) start together, both
  // across the node's NICs. Alone each takes D + F (start-up D, transfer F at 5 GB/s per GPU).
  // Analytic: they overlap and both end at D + F (the max). Flow: they share the NIC link, so
  // the transfers take 2F: both end at D + 2F (the sum of their bytes over the link).
  const Platform p = two_nodes();
  const Bytes n(1e9);
  StepGraph g;
  g.comms = {across_nodes(p, n)};
  const Duration alone = g.comms[0].terms.time(n);
  g.ops = {op(Phase::dp_comm, StreamKind::dp, alone, 0), op(Phase::pp_send, StreamKind::pp, alone, 0)};
  Duration transfer;
  for (const BandwidthTerm& b : g.comms[0].terms.bandwidth) transfer = max(transfer, n * b.bytes_factor / b.bandwidth);
  const Execution analytic = execute_step(g, p, Fidelity::analytic);
  EXPECT_EQ((analytic.end - SimTime::zero()).ps(), alone.ps());
  const Execution flow = execute_step(g, p, Fidelity::flow);
  EXPECT_NEAR(to_seconds(flow.end - SimTime::zero()), to_seconds(alone + transfer), 1e-9);
  EXPECT_EQ(flow.spans[0].end, flow.spans[1].end);
}

TEST(StepExecutor, OverlappedCommunicationSlowsComputeByTheSmsItHolds) {
  // A 10 ms GEMM with a 4 ms TP collective beside it that holds 16 of 128 SMs: for 4 ms the GEMM
  // runs at 7/8 of its rate, so it ends at 10 + 4 x 16/128 = 10.5 ms.
  Platform p = two_nodes();
  p.topology.tiers[0].communication_sms = 16;
  const StepGraph g = layer_beside_tp(p, Duration{});
  const Execution x = execute_step(g, p, Fidelity::analytic);
  EXPECT_EQ(x.spans[1].end.ps(), milliseconds(4).ps());
  EXPECT_EQ(x.spans[0].end.ps(), microseconds(10500).ps());
  // Without the SMs held (a platform whose collectives use copy engines) no slowdown.
  p.topology.tiers[0].communication_sms = 0;
  EXPECT_EQ(execute_step(g, p, Fidelity::analytic).spans[0].end.ps(), milliseconds(10).ps());
}

TEST(StepExecutor, OverlappedCommunicationSlowsTheMemoryBoundPartByTheBandwidthItTakes) {
  // A 10 ms layer, half of it streaming at the full bandwidth (f = 1, simple_platform), with a 4 ms
  // collective beside it that holds no SMs but whose own traffic would take 2 ms of HBM time, half
  // the bandwidth while it runs. Shared in proportion to demand the stream gets 1 / (1 + 0.5): for
  // 4 ms the layer runs at 1 / (0.5 + 0.5 x 1.5) = 0.8 of its rate and does 3.2 ms of its work;
  // the other 6.8 ms at full rate end it at 10.8 ms. A layer of GEMMs alone (share 0) does not notice.
  Platform p = two_nodes();
  p.topology.tiers[0].communication_sms = 0;
  StepGraph g = layer_beside_tp(p, milliseconds(2));
  g.ops[0].memory_share = 0.5;
  EXPECT_NEAR(to_seconds(execute_step(g, p, Fidelity::analytic).spans[0].end - SimTime::zero()), 10.8e-3, 1e-9);
  g.ops[0].memory_share = 0;
  EXPECT_EQ(execute_step(g, p, Fidelity::analytic).spans[0].end.ps(), milliseconds(10).ps());
  // Both resources at once: 16 of 128 SMs and 30 % of the bandwidth, 40 % streaming at f = 1:
  // 1 / (0.6 / (7/8) + 0.4 x 1.3) = 0.8297. Where HBM delivers f = 0.6 of its peak, 0.3 of the
  // peak is half of what there is: 1 / (0.6 / (7/8) + 0.4 x 1.5). However large the traffic, the
  // rate stays above 0: 1 / (1 + 2) at u = 2.
  EXPECT_NEAR(compute_rate(16.0 / 128, 0.3, 0.4, 1.0), 1.0 / (0.6 / 0.875 + 0.4 * 1.3), 1e-12);
  EXPECT_NEAR(compute_rate(16.0 / 128, 0.3, 0.4, 0.6), 1.0 / (0.6 / 0.875 + 0.4 * 1.5), 1e-12);
  EXPECT_NEAR(compute_rate(0, 2.0, 1.0, 1.0), 1.0 / 3, 1e-12);
  EXPECT_NEAR(compute_rate(16.0 / 128, 0, 0, 1.0), 0.875, 1e-12);
}

TEST(StepExecutor, APipelineTransferLoadsTheReceiversMemoryToo) {
  // Stage 0 sends for 4 ms (2 ms of HBM time: half the bandwidth) to stage 1, where a 10 ms
  // streaming op runs (share 1, f = 1): it runs at 1 / 1.5 for 4 ms, does 8/3 ms, and ends at
  // 4 + 10 - 8/3 = 34/3 ms. The sender's stage computes nothing meanwhile.
  Platform p = two_nodes();
  for (Tier& t : p.topology.tiers) t.communication_sms = 0;
  StepGraph g = layer_beside_tp(p, milliseconds(2));
  g.stages = 2;
  g.ops[0].stage = 1;
  g.ops[0].memory_share = 1;
  g.ops[1].phase = Phase::pp_send;
  g.ops[1].stream = StreamKind::pp;
  g.ops[1].peer = 1;
  const Execution x = execute_step(g, p, Fidelity::analytic);
  EXPECT_NEAR(to_seconds(x.spans[0].end - SimTime::zero()), 34e-3 / 3, 1e-9);
}

TEST(StepExecutor, AFlowSlowedByAnotherChargesItsTrafficOnceNotForItsWholeRun) {
  // Two transfers share one NIC (as TwoCollectivesOnOneNicTakeTheSumOfTheirBytes): each alone
  // takes T, together both run ~2T. Each one's HBM traffic is T/4 of HBM time, so it holds a
  // quarter of the bandwidth for T (its traffic at its rate alone), not for its whole run: a
  // streaming op (share 1, f = 1) beside them runs at 1 / (1 + 0.5) for T, does 2T/3, and ends at
  // W + T/3. Held for the whole 2T it would end at W + 2T/3.
  Platform p = two_nodes();
  for (Tier& t : p.topology.tiers) t.communication_sms = 0;
  const Bytes n(1e7);
  StepGraph g;
  g.comms = {across_nodes(p, n)};
  const Duration alone = g.comms[0].terms.time(n);
  g.comms[0].memory_time = scale(alone, 0.25);
  const Duration work = milliseconds(10);
  ASSERT_LT(scale(alone, 2), work);
  g.ops = {op(Phase::forward, StreamKind::compute, work), op(Phase::dp_comm, StreamKind::dp, alone, 0),
           op(Phase::pp_send, StreamKind::pp, alone, 0)};
  g.ops[0].memory_share = 1;
  const Execution flow = execute_step(g, p, Fidelity::flow);
  EXPECT_GT(flow.spans[1].end - flow.spans[1].start, scale(alone, 1.5));  // the flows did share
  EXPECT_NEAR(to_seconds(flow.spans[0].end - SimTime::zero()), to_seconds(work + scale(alone, 1.0 / 3)), 1e-9);
}

TEST(StepExecutor, StreamsRunInOrderAndWaitForTheirInputs) {
  // compute: A (2 ms), C (1 ms, waits for B); dp: B (3 ms, waits for A). C starts at 5 ms although
  // the compute stream is free at 2 ms; the wait is exposed DP communication.
  const Platform p = two_nodes();
  StepGraph g;
  g.comms = {across_nodes(p, Bytes(1e6))};
  g.ops = {op(Phase::backward, StreamKind::compute, milliseconds(2)),
           op(Phase::dp_comm, StreamKind::dp, milliseconds(3), 0, {0}),
           op(Phase::optimizer, StreamKind::compute, milliseconds(1), -1, {1})};
  const Execution x = execute_step(g, p, Fidelity::analytic);
  EXPECT_EQ(x.spans[2].start.ps(), milliseconds(5).ps());
  EXPECT_EQ(x.end.ps(), milliseconds(6).ps());
}

TEST(StepExecutor, WithoutContentionAGraphEndsAtItsLongestPathOfDependenciesAndStreams) {
  // A 3 ms compute op, then a 2 ms collective waiting for it (DP stream), a 1 ms compute op that
  // waits only for its stream (3 -> 4 ms), and a 1 ms compute op after the collective (5 -> 6 ms).
  // Uncontended: 6 ms; with the collective taking nothing, 5 ms (the last op after the 1 ms one,
  // 4 -> 5). Played, the collective's 16 SMs of 128 slow the second op (3 -> 4.14 ms) and the
  // last starts at 5: 6 ms again, never below the uncontended end.
  Platform p = two_nodes();
  p.topology.tiers[0].communication_sms = 16;
  StepGraph g = layer_beside_tp(p, Duration{});
  g.ops = {op(Phase::forward, StreamKind::compute, milliseconds(3)),
           op(Phase::dp_comm, StreamKind::dp, milliseconds(2), 0, {0}),
           op(Phase::forward, StreamKind::compute, milliseconds(1)),
           op(Phase::backward, StreamKind::compute, milliseconds(1), -1, {1})};
  EXPECT_EQ(uncontended_end(g, true).ps(), milliseconds(6).ps());
  EXPECT_EQ(uncontended_end(g, false).ps(), milliseconds(5).ps());
  const Execution x = execute_step(g, p, Fidelity::analytic);
  EXPECT_NEAR(to_seconds(x.spans[2].end - SimTime::zero()), 3e-3 + 1e-3 / 0.875, 1e-9);
  EXPECT_EQ((x.end - SimTime::zero()).ps(), milliseconds(6).ps());
  // A receive named before its send (a pipeline's) is no deadlock.
  std::swap(g.ops[0], g.ops[1]);
  g.ops[0].deps = {1};
  g.ops[3].deps = {0};
  EXPECT_EQ(uncontended_end(g, true).ps(), milliseconds(6).ps());
}

}  // namespace sp::models
