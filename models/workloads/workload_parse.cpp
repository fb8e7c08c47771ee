// Reading a workload file (models/workloads/*.yaml): its layers and ops, evaluation rule and
// costs, convergence table and implementation costs, each checked as it is read; a file that
// gives a transformer's architecture instead of layers is expanded by transformer_parse.cpp.
#include "models/workloads/workload.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "models/hardware/host_dispatch.hpp"
#include "models/workloads/transformer.hpp"

namespace sp::models {

namespace {

std::int64_t nonnegative_int(const config::ConfigNode& n) {
  const std::int64_t v = n.as_int();
  if (v < 0) n.fail("must not be negative");
  return v;
}

Flops nonnegative_flops(const config::ConfigNode& n) {
  const Flops f = n.as_flops();
  if (f.value() < 0) n.fail("must not be negative");
  return f;
}

// The FLOPs the ops add up to must match the totals the file documents (within 3 %): a check on
// the op description against the published per-sample counts.
void check_flops(const config::ConfigNode& n, const char* key, Flops documented, Flops from_ops) {
  const double d = documented.value(), o = from_ops.value();
  if (d == 0 && o == 0) return;
  if (d > 0 && std::abs(o / d - 1) <= 0.03) return;
  n.at(key).fail(fmt::format("the ops add up to {:.6g} GFLOP per sample, the layer says {:.6g}", o / 1e9, d / 1e9),
                 "fix the ops or the documented total");
}

LayerGroup parse_layer(const config::ConfigNode& n) {
  n.expect_only({"name", "repeat", "parameters", "trainable_parameters", "forward", "backward", "activations",
                 "tensor_parallel", "context_parallel", "pipeline_boundary", "ops"});
  LayerGroup l;
  l.name = n.at("name").as_string();
  if (auto r = n.find("repeat")) {
    // The step graph holds every instance: beyond a hundred thousand it is no model of a network.
    const std::int64_t v = r->as_positive_int();
    if (v > 100'000) r->fail("at most 100000 repeats of a layer group, got " + std::to_string(v));
    l.repeat = static_cast<int>(v);
  }
  // At most 10^13 a layer group: with 100,000 repeats the model's total stays inside 64 bits.
  l.parameters = nonnegative_int(n.at("parameters"));
  if (l.parameters > 10'000'000'000'000) n.at("parameters").fail("at most 1e13 parameters a layer group (larger than any model by far)");
  l.trainable_parameters = l.parameters;
  if (auto t = n.find("trainable_parameters")) {
    l.trainable_parameters = nonnegative_int(*t);
    if (l.trainable_parameters > l.parameters) t->fail("exceeds parameters");
  }
  const config::ConfigNode ops = n.at("ops");
  for (const auto& o : ops.elements()) l.ops.push_back(parse_op(o));
  if (l.ops.empty()) ops.fail("needs at least one op: the kernels the layer runs");
  if (auto a = n.find("activations")) l.activations = a->as_nonnegative_bytes();
  if (auto tp = n.find("tensor_parallel")) {
    tp->expect_only({"tensor", "all_gathers", "reduce_scatters"});
    l.tp_tensor = tp->at("tensor").as_positive_bytes();
    l.tp_all_gathers = static_cast<int>(nonnegative_int(tp->at("all_gathers")));
    l.tp_reduce_scatters = static_cast<int>(nonnegative_int(tp->at("reduce_scatters")));
    l.tp_gemms_frozen = l.trainable_parameters == 0;
  }
  if (auto cp = n.find("context_parallel")) {
    cp->expect_only({"exchange"});
    l.cp_exchange = cp->at("exchange").as_positive_bytes();
  }
  l.pipeline_boundary = l.tp_tensor;
  if (auto b = n.find("pipeline_boundary")) l.pipeline_boundary = b->as_positive_bytes();
  return l;
}

EvaluationRule parse_evaluation(const config::ConfigNode& n, EvaluationCosts& costs) {
  n.expect_only({"timed", "samples", "interval", "skip_first", "overhead", "host_work", "batch", "batch_overhead",
                 "asynchronous_scoring", "first_overhead", "first_overhead_per_loader", "dispatch_per_kernel"});
  EvaluationRule e;
  e.timed = n.at("timed").as_bool();
  e.samples = n.at("samples").as_positive_int();
  const config::ConfigNode iv = n.at("interval");
  iv.expect_only({"per_global_batch", "samples", "round_down_to", "round_up_to_global_batch", "epochs"});
  if (auto x = iv.find("epochs")) {
    if (iv.has("samples") || iv.has("per_global_batch")) x->fail("give either epochs or samples, not both");
    e.interval_epochs = x->as_positive_number();
  } else {
    if (auto x = iv.find("per_global_batch")) e.interval_per_global_batch = x->as_number();
    if (auto x = iv.find("samples")) e.interval_samples = x->as_number();
    if (auto x = iv.find("round_down_to")) e.round_down_to = x->as_positive_int();
    if (auto x = iv.find("round_up_to_global_batch")) e.round_up_to_global_batch = x->as_bool();
    if (e.interval_per_global_batch < 0 || e.interval_samples < 0 ||
        e.interval_per_global_batch + e.interval_samples <= 0) {
      iv.fail("needs a positive interval: epochs, or samples and/or per_global_batch");
    }
  }
  if (auto s = n.find("skip_first")) {
    s->expect_only({"per_global_batch", "count"});
    if (auto x = s->find("per_global_batch")) e.skip_per_global_batch = x->as_number();
    if (auto x = s->find("count")) e.skip_count = nonnegative_int(*x);
  }
  for (const EvaluationCostField& f : kEvaluationCosts) {
    if (auto x = n.find(f.workload_key)) costs.*f.member = x->as_nonnegative_duration();
  }
  if (auto l = n.find("first_overhead_per_loader")) {
    if (!n.has("first_overhead")) l->fail("prices loaders at first_overhead, which is missing");
    l->expect_only({"micro_batch_above", "evaluation_samples_above"});
    EvaluationCosts::LoaderWorkers w;
    w.micro_batch_above = nonnegative_int(l->at("micro_batch_above"));
    w.evaluation_samples_above = nonnegative_int(l->at("evaluation_samples_above"));
    costs.first_overhead_per_loader = w;
  }
  if (auto b = n.find("batch")) {
    const std::string v = b->as_string();
    if (v != "global_batch" && v != "micro_batch") b->fail("unknown evaluation batch '" + v + "'", "valid: global_batch, micro_batch");
    e.batch_is_global_batch = v == "global_batch";
  }
  return e;
}

std::vector<ConvergencePoint> parse_convergence_points(const config::ConfigNode& points) {
  std::vector<ConvergencePoint> out;
  for (const auto& p : points.elements()) {
    p.expect_only({"global_batch", "mean", "stdev", "runs", "pruned", "evaluated_every"});
    ConvergencePoint c;
    c.global_batch = p.at("global_batch").as_positive_int();
    c.mean = p.at("mean").as_positive_number();
    c.stdev = p.at("stdev").as_number();
    if (c.stdev < 0) p.at("stdev").fail("must not be negative");
    const std::int64_t runs = p.at("runs").as_positive_int();
    if (runs > 1'000'000) p.at("runs").fail("at most 1000000 runs");
    c.runs = static_cast<int>(runs);
    c.pruned = p.at("pruned").as_bool();
    if (auto e = p.find("evaluated_every")) {
      c.evaluated_every = e->as_positive_number();
      if (!(c.evaluated_every < c.mean)) e->fail("must be below the point's mean (the grid its runs were evaluated on)");
    }
    if (!out.empty() && c.global_batch <= out.back().global_batch) {
      p.at("global_batch").fail("points must be in ascending global_batch order");
    }
    out.push_back(c);
  }
  bool any_pruned = false;
  for (const auto& c : out) any_pruned = any_pruned || c.pruned;
  if (!any_pruned) points.fail("needs at least one point with pruned: true");
  return out;
}

}  // namespace

ConvergenceTable parse_convergence(const config::ConfigNode& n) {
  n.expect_only({"unit", "points", "round", "rounds"});
  ConvergenceTable t;
  const config::ConfigNode unit = n.at("unit");
  const std::string u = unit.as_string();
  if (u == "samples") {
    t.unit = ConvergenceTable::Unit::samples;
  } else if (u == "epochs") {
    t.unit = ConvergenceTable::Unit::epochs;
  } else {
    unit.fail("unknown unit '" + u + "'", "valid: samples, epochs");
  }
  t.points = parse_convergence_points(n.at("points"));
  const auto round_of = [](const config::ConfigNode& where, const std::string& text) {
    if (!mlperf_round(text)) where.fail("'" + text + "' is not an MLPerf round", "write MAJOR.MINOR, e.g. \"4.1\"");
    return text;
  };
  if (auto r = n.find("round")) t.round = round_of(*r, r->as_string());
  if (auto rounds = n.find("rounds")) {
    if (t.round.empty()) rounds->fail("needs the round of `points` beside it (round: \"4.1\")");
    for (const auto& [name, points] : rounds->entries()) {
      round_of(points, name);
      if (*mlperf_round(name) == *mlperf_round(t.round)) points.fail("round " + name + " is the round of `points`");
      for (const auto& [other, unused] : t.other_rounds) {
        if (*mlperf_round(other) == *mlperf_round(name)) points.fail("round " + name + " is given twice");
      }
      t.other_rounds.emplace(name, parse_convergence_points(points));
    }
  }
  return t;
}

namespace {

// The `compute:` block: what the implementation costs beyond its ops, the fit's priors with
// their plausible ranges (the evaluation's costs are read with its rule).
ImplementationCosts parse_implementation(const config::ConfigNode& compute) {
  ImplementationCosts c;
  compute.expect_only({"software_efficiency", "software_efficiency_range", "launch", "host_per_step", "host_per_step_range"});
  if (auto l = compute.find("launch")) c.dispatch_per_kernel = parse_launch(*l);
  if (auto h = compute.find("host_per_step")) {
    c.host_per_step = h->as_nonnegative_duration();
    // A fitted quantity needs its plausible range, as the software efficiency does.
    const config::ConfigNode hr = compute.at("host_per_step_range");
    const auto hb = hr.elements();
    if (hb.size() != 2) hr.fail("needs [min, max], e.g. [\"0.1 ms\", \"30 ms\"]");
    c.host_per_step_min = hb[0].as_nonnegative_duration();
    c.host_per_step_max = hb[1].as_nonnegative_duration();
    if (!(Duration::zero() < c.host_per_step_min && c.host_per_step_min < c.host_per_step &&
          c.host_per_step < c.host_per_step_max)) {
      hr.fail("must be positive and contain host_per_step strictly inside [min, max]");
    }
  } else if (auto hr = compute.find("host_per_step_range")) {
    hr->fail("only with host_per_step");
  }
  c.software_efficiency = compute.at("software_efficiency").as_positive_number();
  const config::ConfigNode range = compute.at("software_efficiency_range");
  const auto bounds = range.elements();
  if (bounds.size() != 2) range.fail("needs [min, max]");
  c.software_efficiency_min = bounds[0].as_positive_number();
  c.software_efficiency_max = bounds[1].as_positive_number();
  if (!(c.software_efficiency_min < c.software_efficiency && c.software_efficiency < c.software_efficiency_max)) {
    range.fail("must contain software_efficiency strictly inside [min, max]");
  }
  return c;
}

}  // namespace

Workload parse_workload(const config::ConfigNode& n) {
  n.expect_only({"name", "mlperf_benchmark", "benchmark_aliases", "description", "sample", "precision",
                 "gradient_bytes_per_parameter", "gradient_bucket", "optimizer_traffic_per_parameter",
                 "tokens_per_sample", "compute", "layers", "transformer", "dataset", "evaluation", "convergence",
                 "parallelism", "memory", "runs_per_result", "typical_global_batch", "clock_boost_one_node"});
  Workload w;
  w.name = n.at("name").as_string();
  w.mlperf_benchmark = n.at("mlperf_benchmark").as_string();
  if (auto a = n.find("benchmark_aliases")) {
    for (const auto& e : a->elements()) w.benchmark_aliases.push_back(e.as_string());
  }
  w.description = n.at("description").as_string();
  w.sample = n.at("sample").as_string();
  const config::ConfigNode prec = n.at("precision");
  w.precision = prec.as_string();
  if (w.precision != "bf16" && w.precision != "fp16" && w.precision != "fp8") {
    prec.fail("unknown precision '" + w.precision + "'", "valid: bf16, fp16, fp8");
  }
  w.gradient_bytes_per_parameter = n.at("gradient_bytes_per_parameter").as_positive_bytes();
  // A size, or Megatron-core's rule in parameters; a bucket below a megabyte (or 100,000
  // parameters) is a typo for one that large ("40" for 40 M): it would cut a stage's gradients
  // into millions of collectives.
  const config::ConfigNode bucket = n.at("gradient_bucket");
  if (bucket.is_map()) {
    bucket.expect_only({"parameters", "per_data_parallel_rank"});
    const config::ConfigNode params = bucket.at("parameters");
    w.gradient_bucket_parameters = params.as_positive_int();
    if (w.gradient_bucket_parameters < 100'000) params.fail("must be at least 100000 parameters (Megatron-core's default: 40000000)");
    if (auto r = bucket.find("per_data_parallel_rank")) w.gradient_bucket_parameters_per_rank = nonnegative_int(*r);
  } else if (bucket.is_scalar()) {
    w.gradient_bucket = bucket.as_positive_bytes();
    if (w.gradient_bucket.value() < 1e6) bucket.fail("must be at least 1 MB (PyTorch DDP's default: 25 MiB)");
  } else {
    bucket.fail("expected a size (\"25 MiB\") or {parameters: N, per_data_parallel_rank: M}");
  }
  w.optimizer_traffic_per_parameter = n.at("optimizer_traffic_per_parameter").as_nonnegative_bytes();
  // A transformer described by its architecture (transformer.hpp), or layers written out.
  std::optional<TransformerSpec> transformer;
  if (auto t = n.find("transformer")) {
    if (n.has("layers")) n.at("layers").fail("give either layers or transformer, not both");
    transformer = parse_transformer(*t);
  }
  if (transformer && !n.has("tokens_per_sample")) {
    w.tokens_per_sample = static_cast<double>(transformer->sequence);
  } else {
    w.tokens_per_sample = n.at("tokens_per_sample").as_positive_number();
    if (transformer && w.tokens_per_sample != static_cast<double>(transformer->sequence)) {
      n.at("tokens_per_sample").fail("differs from transformer.sequence (" + std::to_string(transformer->sequence) + ")");
    }
  }
  static_cast<ImplementationCosts&>(w) = parse_implementation(n.at("compute"));
  const config::ConfigNode layers = transformer ? n.at("transformer") : n.at("layers");
  std::vector<config::ConfigNode> layer_nodes;  // none for generated layers: nothing to check against
  if (transformer) {
    w.layers = transformer_layers(*transformer);
  } else {
    layer_nodes = layers.elements();
    for (const auto& l : layer_nodes) w.layers.push_back(parse_layer(l));
  }
  if (w.layers.empty()) layers.fail("needs at least one layer");
  // Backward runs from the loss down to the first trainable layer: frozen layers before it (a
  // frozen stem, LoRA's embedding) run forward only.
  bool below_trains = false;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    LayerGroup& l = w.layers[i];
    below_trains = below_trains || l.trainable_parameters > 0;
    l.backward_pass = below_trains;
    l.forward = ops_flops(l, w, Pass::forward);
    l.backward = ops_flops(l, w, Pass::backward);
    if (layer_nodes.empty()) continue;
    const config::ConfigNode& n = layer_nodes[i];
    if (auto f = n.find("forward")) check_flops(n, "forward", nonnegative_flops(*f), l.forward);
    if (auto b = n.find("backward")) check_flops(n, "backward", nonnegative_flops(*b), l.backward);
  }
  if (w.forward_flops_per_sample().value() <= 0) layers.fail("total forward FLOPs must be positive");
  if (w.trainable_parameters() <= 0) layers.fail("needs at least one trainable parameter");
  const config::ConfigNode ds = n.at("dataset");
  ds.expect_only({"train_samples"});
  w.train_samples = ds.at("train_samples").as_positive_int();
  w.evaluation = parse_evaluation(n.at("evaluation"), w.evaluation_costs);
  w.convergence = parse_convergence(n.at("convergence"));
  if (auto p = n.find("parallelism")) w.parallelism = parse_parallel_specs(*p);
  const config::ConfigNode mem = n.at("memory");
  mem.expect_only({"weight_bytes_per_parameter", "optimizer_bytes_per_trainable_parameter", "reserved"});
  w.memory.weight_bytes_per_parameter = mem.at("weight_bytes_per_parameter").as_positive_bytes();
  w.memory.optimizer_bytes_per_trainable_parameter = mem.at("optimizer_bytes_per_trainable_parameter").as_nonnegative_bytes();
  w.memory.reserved = mem.at("reserved").as_nonnegative_bytes();
  if (transformer) w.memory.fp8_activation_input = transformer->fp8_activation_input;
  w.runs_per_result = n.at("runs_per_result").as_count();
  if (auto b = n.find("clock_boost_one_node")) {
    const std::int64_t v = b->as_int();
    if (v < 0 || v > kMaxClockBoostSetting) {
      b->fail(fmt::format("expected a boost setting from 0 (none) to {}", kMaxClockBoostSetting));
    }
    w.clock_boost_one_node = static_cast<int>(v);
  }
  const config::ConfigNode typical = n.at("typical_global_batch");
  for (const auto& [key, value] : typical.entries()) {
    char* end = nullptr;
    const long count = std::strtol(key.c_str(), &end, 10);
    if (key.empty() || *end != '\0' || count < 1) value.fail("keys must be accelerator counts, got '" + key + "'");
    w.typical_global_batch[static_cast<int>(count)] = value.as_positive_int();
  }
  if (w.typical_global_batch.empty()) typical.fail("needs at least one accelerator count");
  return w;
}

Duration parse_launch(const config::ConfigNode& n) {
  if (n.is_map()) {
    n.expect_only({"mode", "dispatch"});
    const Duration d = parse_launch(n.at("mode"));
    if (auto x = n.find("dispatch")) {
      if (d == Duration::zero()) x->fail("a dispatch cost needs mode: eager");
      return x->as_nonnegative_duration();
    }
    return d;
  }
  const std::string v = n.as_string();
  if (v == "eager") return eager_dispatch();
  if (v != "cuda_graphs") n.fail("unknown launch '" + v + "'", "valid: cuda_graphs, eager, {mode: eager, dispatch: \"20 us\"}");
  return Duration::zero();
}

}  // namespace sp::models
