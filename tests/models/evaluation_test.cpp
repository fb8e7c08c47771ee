#include <gtest/gtest.h>

#include "models/training/evaluation.hpp"
#include "sim/config/loader.hpp"
#include "test_fixtures.hpp"
#include "tests/input_error_message.hpp"

namespace sp::models {

using testing::shipped_workload;

TEST(Evaluation, IntervalsFollowTheMlperfRules) {
  // BERT: FLOOR(0.05 x (230.23 x 768 + 3,000,000), 25,000) = FLOOR(158,840.8, 25,000) = 150,000
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("bert"), 768), 150000);
  // at 13,888: 0.05 x 6,197,434.2 = 309,871.7 -> 300,000
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("bert"), 13888), 300000);
  // Llama: every 384 samples, rounded up to whole steps: 384 at GBS 8, CEIL(384/128) x 128 = 384,
  // CEIL(384/256) x 256 = 512 at GBS 256.
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("llama2_70b_lora"), 8), 384);
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("llama2_70b_lora"), 256), 512);
  // RetinaNet: every epoch.
  EXPECT_DOUBLE_EQ(evaluation_interval_samples(shipped_workload("retinanet"), 256), 1170301);
}

namespace {
// 1,000 evaluation samples every 100 trained, 0.5 s of fixed overhead and 1 s of host work, the
// first FLOOR(0.5 x GBS + 1) evaluations skipped.
Workload hand_worked() {
  Workload w = testing::evaluated_workload(1000, 100);
  w.evaluation.skip_per_global_batch = 0.5;
  w.evaluation.skip_count = 1;
  w.evaluation_costs.overhead = seconds(0.5);
  w.evaluation_costs.host_work = seconds(1.0);
  return w;
}
}  // namespace

TEST(Evaluation, CountAndCostByHand) {
  // 1,000 evaluation samples over 8 data-parallel replicas: 125 each, in micro-batches of 4:
  // 32 micro-batches of 2 ms forward = 64 ms; plus 0.5 s of fixed overhead and 1 s of host
  // work shared by 2 nodes: 1.064 s each. Every 100 samples; converging at 1,050 samples: 10.5
  // evaluations minus the FLOOR(0.5 x 2 + 1) = 2 skipped ones.
  const Workload w = hand_worked();
  const ParallelLayout lay = testing::layout(testing::simple_platform(), 8, 32);
  ASSERT_EQ(lay.micro_batch, 4);
  const EvaluationCost c = evaluation_cost(w, lay, {milliseconds(2), {}}, milliseconds(10), 2, 1050, 2);
  EXPECT_DOUBLE_EQ(c.evaluations, 8.5);
  EXPECT_EQ(c.each.ps(), milliseconds(1064).ps());
  EXPECT_EQ(c.total.ps(), seconds(8.5 * 1.064).ps());
}

TEST(Evaluation, EachStepOfTheEvaluationLoopCostsItsOverhead) {
  // The same 1,000 samples over 8 replicas in micro-batches of 4 (32 micro-batches of 2 ms), with
  // 10 ms per evaluation batch and nothing else. One micro-batch per replica per step (the
  // default): 32 steps, 64 + 320 = 384 ms. In training global batches of 64 (NeMo): CEIL(1000 /
  // 64) = 16 steps (the last one partial), 64 + 160 = 224 ms.
  Workload w = testing::evaluated_workload(1000, 100);
  w.evaluation_costs.batch_overhead = milliseconds(10);
  const ParallelLayout lay = testing::layout(testing::simple_platform(), 8, 32);
  EvaluationCost c = evaluation_cost(w, lay, {milliseconds(2), {}}, milliseconds(10), 1, 1000, 64);
  EXPECT_EQ(c.batches, 32);
  EXPECT_EQ(c.each.ps(), milliseconds(384).ps());
  w.evaluation.batch_is_global_batch = true;
  c = evaluation_cost(w, lay, {milliseconds(2), {}}, milliseconds(10), 1, 1000, 64);
  EXPECT_EQ(c.batches, 16);
  EXPECT_EQ(c.each.ps(), milliseconds(224).ps());
  // Llama2-70B LoRA's 173 evaluation sequences: 22 steps at GBS 8, 2 at GBS 128.
  const Workload llama = shipped_workload("llama2_70b_lora");
  ASSERT_TRUE(llama.evaluation.batch_is_global_batch);
  EXPECT_EQ(evaluation_cost(llama, lay, {milliseconds(2), {}}, milliseconds(10), 1, 1000, 8).batches, 22);
  EXPECT_EQ(evaluation_cost(llama, lay, {milliseconds(2), {}}, milliseconds(10), 1, 1000, 128).batches, 2);
}

TEST(Evaluation, AsynchronousScoringDelaysOnlyTheEndOfTheRunUnlessItFallsBehind) {
  // Every 100 samples at global batch 2: 50 steps of 10 ms = 0.5 s of training between two
  // evaluations, each evaluation 32 x 2 ms = 64 ms, so evaluations end 0.564 s apart; 10 of them
  // (converging at 1,000 samples).
  Workload w = testing::evaluated_workload(1000, 100);
  const ParallelLayout lay = testing::layout(testing::simple_platform(), 8, 32);
  const auto cost = [&](double scoring_s) {
    w.evaluation_costs.asynchronous_scoring = seconds(scoring_s);
    return evaluation_cost(w, lay, {milliseconds(2), {}}, milliseconds(10), 1, 1000, 2);
  };
  // 0.4 s of scoring hides behind the next 0.564 s: only the last one's 0.4 s shows.
  EvaluationCost c = cost(0.4);
  EXPECT_DOUBLE_EQ(c.evaluations, 10);
  EXPECT_EQ(c.scoring.ps(), milliseconds(400).ps());
  EXPECT_EQ(c.total.ps(), (milliseconds(640) + milliseconds(400)).ps());
  // 1 s of scoring falls 0.436 s further behind at each of the 9 evaluations before the last:
  // 1 + 9 x 0.436 = 4.924 s after the last evaluation.
  c = cost(1.0);
  EXPECT_EQ(c.scoring.ps(), milliseconds(4924).ps());
  EXPECT_EQ(exposed_scoring(seconds(1.0), milliseconds(564), 0).ps(), 0);  // no evaluation, nothing to score
}

TEST(Evaluation, TheFirstEvaluationsSetUpIsPaidOncePerRun) {
  // The hand-worked case above (8.5 evaluations of 1.064 s) with 9 s of one-time set-up: 9.044 +
  // 9 = 18.044 s, whatever the number of evaluations; the evaluations themselves stay 8.5 x 1.064 s.
  Workload w = hand_worked();
  w.evaluation_costs.first_overhead = seconds(9.0);
  const ParallelLayout lay = testing::layout(testing::simple_platform(), 8, 32);
  EvaluationCost c = evaluation_cost(w, lay, {milliseconds(2), {}}, milliseconds(10), 2, 1050, 2);
  EXPECT_EQ(c.first.ps(), seconds(9.0).ps());
  EXPECT_EQ(c.total.ps(), (seconds(8.5 * 1.064) + seconds(9.0)).ps());
  EXPECT_EQ((c.total - c.scoring - c.first).ps(), seconds(8.5 * 1.064).ps());
  // Twice the samples, twice the evaluations (+10), the set-up once: 18.5 x 1.064 + 9 s.
  c = evaluation_cost(w, lay, {milliseconds(2), {}}, milliseconds(10), 2, 2050, 2);
  EXPECT_EQ(c.total.ps(), (seconds(18.5 * 1.064) + seconds(9.0)).ps());
  // A run that ends before its first evaluation never sets one up: 150 samples, 1.5 - 2 < 0.
  c = evaluation_cost(w, lay, {milliseconds(2), {}}, milliseconds(10), 2, 150, 2);
  EXPECT_EQ(c.evaluations, 0);
  EXPECT_EQ(c.total.ps(), 0);
}

TEST(Evaluation, DataLoadersStartingWorkersPayTheSetUpEach) {
  // The set-up priced per data loader that starts worker processes (NVIDIA's BERT): the training
  // loader where a rank's micro-batch exceeds 3, the evaluation loader where a rank's share of the
  // 1,000 evaluation samples exceeds 100, 2 s each. 8 replicas at GBS 32: micro-batch 4 (> 3),
  // 125 samples a rank (> 100): both, 4 s. 16 replicas at GBS 32: micro-batch 2, 63 samples: none,
  // 0 s. 8 replicas at GBS 16: micro-batch 2 (not > 3), 125 samples: the evaluation's, 2 s.
  Workload w = hand_worked();
  w.evaluation_costs.first_overhead = seconds(2.0);
  w.evaluation_costs.first_overhead_per_loader = EvaluationCosts::LoaderWorkers{3, 100};
  const Platform p = testing::simple_platform();
  const auto first = [&](int n, std::int64_t gbs) {
    return evaluation_cost(w, testing::layout(p, n, gbs), {milliseconds(2), {}}, milliseconds(10), 2, 2050, gbs).first;
  };
  EXPECT_EQ(first(8, 32).ps(), seconds(4.0).ps());
  EXPECT_EQ(first(16, 32).ps(), 0);
  EXPECT_EQ(first(8, 16).ps(), seconds(2.0).ps());
  // BERT's rule: at 8 GPUs and GBS 768, 96 sequences and 1,250 evaluation samples a rank, both
  // loaders start workers; on 3,472 GPUs at GBS 13,888, 4 sequences and 3 samples, neither.
  const Workload bert = shipped_workload("bert");
  ASSERT_TRUE(bert.evaluation_costs.first_overhead_per_loader);
  const Duration per_loader = bert.evaluation_costs.first_overhead;
  const auto bert_first = [&](int n, std::int64_t gbs) {
    return evaluation_cost(bert, testing::layout(testing::shipped_platform("dgx_h100"), n, gbs), {milliseconds(2), {}},
                           milliseconds(10), n / 8, 3e6, gbs)
        .first;
  };
  EXPECT_EQ(bert_first(8, 768).ps(), scale(per_loader, 2).ps());
  EXPECT_EQ(bert_first(3472, 13888).ps(), 0);
}

TEST(Evaluation, LoaderRulesNeedTheirPriceAndBothBounds) {
  // BERT's file with the rule's price taken out, or a bound missing or negative: one message at
  // the key.
  const std::string bert = config::read_text_file(std::string(SP_SOURCE_DIR) + "/models/workloads/bert.yaml");
  const auto parse = [&](const std::string& from, const std::string& to) {
    std::string text = bert;
    const auto at = text.find(from);
    if (at == std::string::npos) return std::string("(not found: ") + from + ")";
    text.replace(at, from.size(), to);
    return input_error_message([&] { (void)parse_workload(config::load_string(text, "bert.yaml")); });
  };
  EXPECT_NE(parse("first_overhead: \"0.5 s\"", "").find("first_overhead_per_loader: prices loaders at first_overhead, which is missing"),
            std::string::npos);
  EXPECT_NE(parse("micro_batch_above: 16, ", "").find("micro_batch_above"), std::string::npos);
  EXPECT_NE(parse("evaluation_samples_above: 10", "evaluation_samples_above: -1").find("evaluation_samples_above"),
            std::string::npos);
  EXPECT_EQ(parse("evaluation_samples_above: 10", "evaluation_samples_above: 10"), "(no error)");
}

TEST(Evaluation, TheForwardWaitsForWhatItDoesNotOverlap) {
  // The hand-worked case's 32 micro-batches of 2 ms, each waiting 0.5 ms more for communication:
  // 32 x 2.5 = 80 ms of forward, of which 64 ms computing (what the energy model counts busy) and
  // 16 ms waiting; each evaluation 80 ms + 0.5 s + 1 s / 2 nodes = 1.08 s.
  const Workload w = hand_worked();
  const ParallelLayout lay = testing::layout(testing::simple_platform(), 8, 32);
  const EvaluationCost c = evaluation_cost(w, lay, {milliseconds(2), microseconds(500)}, milliseconds(10), 2, 1050, 2);
  EXPECT_EQ(c.forward.ps(), milliseconds(64).ps());
  EXPECT_EQ(c.waits.ps(), milliseconds(16).ps());
  EXPECT_EQ(c.each.ps(), milliseconds(1080).ps());
}

TEST(Evaluation, UntimedEvaluationCostsNothing) {
  const Workload sd = shipped_workload("stable_diffusion");
  const EvaluationCost c =
      evaluation_cost(sd, testing::layout(testing::simple_platform(), 8, 256), {milliseconds(2), {}}, milliseconds(10), 1, 2e6, 256);
  EXPECT_EQ(c.evaluations, 0);
  EXPECT_EQ(c.total.ps(), 0);
}

}  // namespace sp::models
