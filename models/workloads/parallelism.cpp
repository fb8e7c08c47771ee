#include "models/workloads/parallelism.hpp"

#include <fmt/format.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace sp::models {

const char* sharding_name(Sharding s) {
  switch (s) {
    case Sharding::none: return "none";
    case Sharding::global: return "global";
    case Sharding::within_node: return "within_node";
  }
  return "?";
}

const char* dgrad_reduce_scatter_name(DgradReduceScatter d) {
  switch (d) {
    case DgradReduceScatter::pipelined: return "pipelined";
    case DgradReduceScatter::bulk: return "bulk";
    case DgradReduceScatter::bulk_under_context_parallel: return "bulk_under_context_parallel";
  }
  return "?";
}

void ParallelSpec::merge_from(const ParallelSpec& o) {
  if (o.tensor) tensor = o.tensor;
  if (o.context) context = o.context;
  if (o.pipeline) pipeline = o.pipeline;
  if (o.micro_batch) micro_batch = o.micro_batch;
  if (o.virtual_stages) virtual_stages = o.virtual_stages;
  if (o.distributed_optimizer) distributed_optimizer = o.distributed_optimizer;
  if (o.overlap_tensor_parallel) overlap_tensor_parallel = o.overlap_tensor_parallel;
  if (o.dgrad_reduce_scatter) dgrad_reduce_scatter = o.dgrad_reduce_scatter;
  if (o.tensor_parallel_not_overlapped) tensor_parallel_not_overlapped = o.tensor_parallel_not_overlapped;
  if (o.evaluation_overlaps_all_gathers) evaluation_overlaps_all_gathers = o.evaluation_overlaps_all_gathers;
  if (o.recompute) recompute = o.recompute;
  if (o.sequence_parallel) sequence_parallel = o.sequence_parallel;
  if (o.search) search = o.search;
  if (!o.otherwise.empty()) otherwise = o.otherwise;
  declared = declared || o.declared;
}

void ParallelSpec::fix_sizes(const Sizes& z) {
  tensor = z.tensor;
  context = z.context;
  pipeline = z.pipeline;
  search.reset();
  otherwise.clear();
}

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

ParallelSpec ParallelSpecs::for_accelerators(int n) const {
  ParallelSpec s = all;
  if (auto it = by_accelerators.find(n); it != by_accelerators.end()) s.merge_from(it->second);
  return s;
}

namespace {
// One of an enum's values by its name (`name_of`), or an error naming the valid ones.
template <typename E>
E parse_named(const config::ConfigNode& v, const char* what, std::initializer_list<E> values, const char* (*name_of)(E)) {
  const std::string name = v.as_string();
  std::string valid;
  for (E e : values) {
    if (name == name_of(e)) return e;
    valid += (valid.empty() ? "" : ", ") + std::string(name_of(e));
  }
  v.fail("unknown " + std::string(what) + " '" + name + "'", "valid: " + valid);
}

Recompute parse_recompute(const config::ConfigNode& v) {
  return parse_named(v, "recompute", {Recompute::none, Recompute::selective, Recompute::full}, recompute_name);
}

ParallelSpec parse_spec(const config::ConfigNode& n, bool allow_table) {
  std::vector<std::string> keys = {"tensor", "context", "pipeline", "virtual_stages", "micro_batch",
                                   "distributed_optimizer", "recompute", "sequence_parallel", "overlap_tensor_parallel",
                                   "dgrad_reduce_scatter", "tensor_parallel_not_overlapped",
                                   "evaluation_overlaps_all_gathers", "search", "otherwise"};
  if (allow_table) keys.push_back("by_accelerators");
  n.expect_only(keys);
  ParallelSpec s;
  const auto count = [&](const char* key, std::optional<int>& out) {
    if (auto v = n.find(key)) out = v->as_count();
  };
  count("tensor", s.tensor);
  count("context", s.context);
  count("pipeline", s.pipeline);
  count("micro_batch", s.micro_batch);
  count("virtual_stages", s.virtual_stages);
  if (auto v = n.find("distributed_optimizer")) {
    s.distributed_optimizer =
        parse_named(*v, "sharding", {Sharding::none, Sharding::global, Sharding::within_node}, sharding_name);
  }
  if (auto v = n.find("recompute")) s.recompute = parse_recompute(*v);
  if (auto v = n.find("sequence_parallel")) s.sequence_parallel = v->as_bool();
  if (auto v = n.find("overlap_tensor_parallel")) s.overlap_tensor_parallel = v->as_bool();
  if (auto v = n.find("dgrad_reduce_scatter")) {
    s.dgrad_reduce_scatter = parse_named(*v, "reduce-scatter",
                                         {DgradReduceScatter::pipelined, DgradReduceScatter::bulk,
                                          DgradReduceScatter::bulk_under_context_parallel},
                                         dgrad_reduce_scatter_name);
  }
  if (auto list = n.find("tensor_parallel_not_overlapped")) {
    PlainTpGemms plain;  // an empty list: every GEMM overlapped, as without the key
    for (const auto& v : list->elements()) {
      const std::string name = v.as_string();
      bool* named = plain.flag(name);
      if (!named) v.fail("unknown GEMM '" + name + "'", fmt::format("valid: {}, {}", PlainTpGemms::kQkv, PlainTpGemms::kFc1));
      if (*named) v.fail("'" + name + "' is listed twice");
      *named = true;
    }
    s.tensor_parallel_not_overlapped = plain;
  }
  if (auto v = n.find("evaluation_overlaps_all_gathers")) s.evaluation_overlaps_all_gathers = v->as_bool();
  if (auto search = n.find("search")) {
    search->expect_only({"tensor", "context", "pipeline", "virtual_stages", "recompute", "micro_batch"});
    LayoutSearch l;
    const auto sizes = [&](const char* key, std::vector<int>& out) {
      if (auto list = search->find(key)) {
        for (const auto& v : list->elements()) out.push_back(v.as_count());
        if (out.empty()) list->fail("needs at least one size");
      }
    };
    sizes("tensor", l.tensor);
    sizes("context", l.context);
    sizes("pipeline", l.pipeline);
    sizes("virtual_stages", l.virtual_stages);
    sizes("micro_batch", l.micro_batch);
    if (auto list = search->find("recompute")) {
      for (const auto& v : list->elements()) l.recompute.push_back(parse_recompute(v));
      if (l.recompute.empty()) list->fail("needs at least one mode");
    }
    s.search = l;
  }
  if (auto list = n.find("otherwise")) {
    for (const auto& v : list->elements()) {
      v.expect_only({"tensor", "context", "pipeline"});
      ParallelSpec::Sizes z;
      if (auto x = v.find("tensor")) z.tensor = x->as_count();
      if (auto x = v.find("context")) z.context = x->as_count();
      if (auto x = v.find("pipeline")) z.pipeline = x->as_count();
      s.otherwise.push_back(z);
    }
    if (s.otherwise.empty()) list->fail("needs at least one layout");
  }
  return s;
}
}  // namespace

ParallelSpecs parse_parallel_specs(const config::ConfigNode& n) {
  ParallelSpecs specs;
  specs.all = parse_spec(n, true);
  if (auto table = n.find("by_accelerators")) {
    for (const auto& [key, value] : table->entries()) {
      char* end = nullptr;
      const long count = std::strtol(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || count < 1) value.fail("keys must be accelerator counts, got '" + key + "'");
      specs.by_accelerators[static_cast<int>(count)] = parse_spec(value, false);
    }
  }
  return specs;
}

Group strided_group(const Topology& topo, int stride, int size) {
  Group g;
  int below = 1;  // accelerators per unit of the tier below
  int left = size;
  for (std::size_t t = 0; t < topo.tiers.size(); ++t) {
    const bool last = t + 1 == topo.tiers.size() || topo.tiers[t].size == 0;
    const int unit = below * (last ? 1 : topo.tiers[t].size);  // accelerators per unit of tier t
    int here;
    if (last) {
      here = left;
    } else {
      // Members inside one unit of tier t, given those already inside one unit of tier t-1.
      const int span_members = stride >= unit ? 1 : unit / stride;
      const int done = size / left;
      here = std::max(1, std::min(left, span_members / std::max(1, done)));
    }
    g.fan_out.push_back(here);
    left /= here;
    below = unit;
  }
  return g;
}

std::string ParallelLayout::describe() const {
  return fmt::format("TP{} CP{} PP{}{} DP{} mb{} x{}{}{}", tp, cp, pp,
                     virtual_stages > 1 ? fmt::format(" v{}", virtual_stages) : "", dp, micro_batch, micro_batches,
                     sharding == Sharding::global ? " ZeRO-1" : sharding == Sharding::within_node ? " ZeRO-1/node" : "",
                     recompute == Recompute::none ? "" : std::string(" recompute=") + recompute_name(recompute)) +
         (sequence_parallel || tp == 1 ? "" : " noSP");
}

std::optional<ParallelLayout> resolve_layout(const ParallelSpec& s, const Topology& topo, int n,
                                             std::int64_t gbs, std::string& why) {
  ParallelLayout l;
  l.tp = s.tensor.value_or(1);
  l.cp = s.context.value_or(1);
  l.pp = s.pipeline.value_or(1);
  l.sharding = s.distributed_optimizer.value_or(Sharding::none);
  l.overlap_tensor_parallel = s.overlap_tensor_parallel.value_or(true);
  const DgradReduceScatter dgrad = s.dgrad_reduce_scatter.value_or(DgradReduceScatter::pipelined);
  l.pipelined_dgrad_reduce_scatters =
      dgrad == DgradReduceScatter::pipelined || (dgrad == DgradReduceScatter::bulk_under_context_parallel && l.cp == 1);
  l.not_overlapped = s.tensor_parallel_not_overlapped.value_or(PlainTpGemms{});
  l.evaluation_overlaps_all_gathers = s.evaluation_overlaps_all_gathers.value_or(true);
  l.recompute = s.recompute.value_or(Recompute::none);
  l.sequence_parallel = s.sequence_parallel.value_or(true);
  // In 64 bits: three sizes a user may write as large as an int takes overflow an int's product.
  const std::int64_t model = std::int64_t{l.tp} * l.cp * l.pp;
  if (model > n) {
    why = fmt::format("TP{} x CP{} x PP{} = {} is more than the {} accelerators", l.tp, l.cp, l.pp, model, n);
    return std::nullopt;
  }
  if (n % model != 0) {
    why = fmt::format("{} accelerators are not a multiple of TP{} x CP{} x PP{} = {}", n, l.tp, l.cp, l.pp, model);
    return std::nullopt;
  }
  l.dp = static_cast<int>(n / model);
  if (gbs % l.dp != 0) {
    why = fmt::format("the global batch {} does not split over {} data-parallel ranks", gbs, l.dp);
    return std::nullopt;
  }
  const std::int64_t per_rank = gbs / l.dp;
  l.micro_batch = s.micro_batch.value_or(static_cast<int>(per_rank));
  if (per_rank % l.micro_batch != 0) {
    why = fmt::format("{} samples per data-parallel rank are not whole micro-batches of {}", per_rank, l.micro_batch);
    return std::nullopt;
  }
  l.micro_batches = static_cast<int>(per_rank / l.micro_batch);
  l.virtual_stages = s.virtual_stages.value_or(1);
  if (l.virtual_stages > 1 && l.pp == 1) {
    why = fmt::format("{} virtual stages need a pipeline (PP > 1)", l.virtual_stages);
    return std::nullopt;
  }
  if (l.virtual_stages > 1 && l.micro_batches % l.pp != 0) {
    // Megatron's interleaved schedule runs the micro-batches in groups of PP.
    why = fmt::format("interleaving needs whole groups of PP{} micro-batches, not {}", l.pp, l.micro_batches);
    return std::nullopt;
  }
  const int node = topo.tiers.front().size;
  if (l.tp > node) {
    why = fmt::format("TP{} spans more than one {}-accelerator scale-up domain", l.tp, node);
    return std::nullopt;
  }
  l.tp_group = strided_group(topo, 1, l.tp);
  l.cp_group = strided_group(topo, l.tp, l.cp);
  l.grad_group = strided_group(topo, l.tp, l.cp * l.dp);
  l.grad_inside = l.grad_group;
  l.grad_across = l.grad_group;
  for (std::size_t t = 0; t < l.grad_group.fan_out.size(); ++t) {
    const bool outer = t + 1 == l.grad_group.fan_out.size();
    (outer ? l.grad_inside : l.grad_across).fan_out[t] = 1;
  }
  l.optimizer_shards = l.sharding == Sharding::global        ? l.grad_group.ranks()
                       : l.sharding == Sharding::within_node ? l.grad_inside.ranks()
                                                             : 1;
  l.pp_peer_stride = l.tp * l.cp * l.dp;
  return l;
}

ParallelSpec spec_of(const ParallelLayout& l) {
  ParallelSpec s;
  s.tensor = l.tp;
  s.context = l.cp;
  s.pipeline = l.pp;
  s.micro_batch = l.micro_batch;
  s.distributed_optimizer = l.sharding;
  s.overlap_tensor_parallel = l.overlap_tensor_parallel;
  // Resolved at this layout's CP: the layout as it ran, whatever CP a later resolution takes.
  s.dgrad_reduce_scatter = l.pipelined_dgrad_reduce_scatters ? DgradReduceScatter::pipelined : DgradReduceScatter::bulk;
  s.tensor_parallel_not_overlapped = l.not_overlapped;
  s.evaluation_overlaps_all_gathers = l.evaluation_overlaps_all_gathers;
  s.virtual_stages = l.virtual_stages;
  s.recompute = l.recompute;
  s.sequence_parallel = l.sequence_parallel;
  return s;
}

}  // namespace sp::models
