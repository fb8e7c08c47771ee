// What a workload is beyond its file (workload_parse.cpp reads that): the typical global batch at
// N, the model's parameter and FLOP totals, the splits it cannot describe, and a layer's shard.
#include "models/workloads/workload.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace sp::models {

std::optional<std::pair<int, int>> mlperf_round(const std::string& written) {
  // As MLPerf writes it too: "v5.0", and the RCP rulesets' "5.0.0".
  std::string text = written;
  if (!text.empty() && (text.front() == 'v' || text.front() == 'V')) text.erase(0, 1);
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0 && std::count(text.begin(), text.end(), '.') == 2) {
    text.resize(text.size() - 2);
  }
  const std::size_t dot = text.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == text.size() || dot > 3 || text.size() - dot - 1 > 3) return std::nullopt;
  const auto digits = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
    }
    return true;
  };
  if (!digits(0, dot) || !digits(dot + 1, text.size())) return std::nullopt;
  return std::pair{std::stoi(text.substr(0, dot)), std::stoi(text.substr(dot + 1))};
}

ConvergenceTable ConvergenceTable::at_round(const std::string& wanted) const {
  const auto r = mlperf_round(wanted);
  const auto own = mlperf_round(round);
  if (!r || !own || other_rounds.empty()) return *this;
  // Every table by its round: the file's own and the others (keys checked when read).
  std::vector<std::pair<std::pair<int, int>, const std::vector<ConvergencePoint>*>> tables{{*own, &points}};
  for (const auto& [name, pts] : other_rounds) tables.emplace_back(*mlperf_round(name), &pts);
  std::sort(tables.begin(), tables.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  auto chosen = tables.front();
  for (const auto& t : tables) {
    if (t.first <= *r) chosen = t;
  }
  // The chosen round's points, the others (this table's own among them) beside them, so that
  // the result can be asked for any round again.
  ConvergenceTable out;
  out.unit = unit;
  out.points = *chosen.second;
  out.round = chosen.second == &points ? round : fmt::format("{}.{}", chosen.first.first, chosen.first.second);
  for (const auto& [name, pts] : other_rounds) {
    if (&pts != chosen.second) out.other_rounds.emplace(name, pts);
  }
  if (chosen.second != &points) out.other_rounds.emplace(round, points);
  return out;
}

std::int64_t typical_global_batch(const Workload& w, int n, int dp) {
  const auto& t = w.typical_global_batch;
  double gbs;
  auto hi = t.lower_bound(n);
  if (hi == t.end()) {
    gbs = static_cast<double>(std::prev(hi)->second);
  } else if (hi->first == n || hi == t.begin()) {
    gbs = static_cast<double>(hi->second);
  } else {
    const auto lo = std::prev(hi);
    const double f = std::log(static_cast<double>(n) / lo->first) / std::log(static_cast<double>(hi->first) / lo->first);
    gbs = std::exp(std::log(static_cast<double>(lo->second)) +
                   f * (std::log(static_cast<double>(hi->second)) - std::log(static_cast<double>(lo->second))));
  }
  const double per_rank = std::max(1.0, std::round(gbs / dp));
  return static_cast<std::int64_t>(per_rank) * dp;
}

std::int64_t typical_global_batch(const Workload& w, int n, const ParallelSpec& s) {
  const int model = s.tensor.value_or(1) * s.context.value_or(1) * s.pipeline.value_or(1);
  return typical_global_batch(w, n, n % model == 0 ? n / model : n);
}

double PredictionSpread::model_error_at(int n) const {
  const auto band = model_error_by_scale.lower_bound(n);
  const double e = band == model_error_by_scale.end() ? model_error : std::max(model_error, band->second);
  return std::sqrt(e * e + parameter_spread * parameter_spread);
}

std::int64_t ModelDescription::total_parameters() const {
  std::int64_t n = 0;
  for (const auto& l : layers) n += l.parameters * l.repeat;
  return n;
}

Bytes ModelDescription::gradient_bucket_for(int data_parallel, int stage, int chunk) const {
  if (gradient_bucket_parameters == 0) return gradient_bucket;
  if (stage > 0 || chunk > 0) return Bytes(std::numeric_limits<double>::infinity());
  // Megatron-core's DistributedDataParallel: "make buckets larger to ensure that chunks used in
  // NCCL ring-reduce implementations are large enough to remain bandwidth-bound".
  const double parameters = std::max(static_cast<double>(gradient_bucket_parameters),
                                     static_cast<double>(gradient_bucket_parameters_per_rank) * data_parallel);
  return gradient_bytes_per_parameter * parameters;
}

std::int64_t ModelDescription::trainable_parameters() const {
  std::int64_t n = 0;
  for (const auto& l : layers) n += l.trainable_parameters * l.repeat;
  return n;
}

Flops ModelDescription::forward_flops_per_sample() const {
  Flops f;
  for (const auto& l : layers) f += l.forward * static_cast<double>(l.repeat);
  return f;
}

Flops ModelDescription::backward_flops_per_sample() const {
  Flops f;
  for (const auto& l : layers) f += l.backward * static_cast<double>(l.repeat);
  return f;
}

std::string unsupported_split(const Workload& w, int tp, int cp, int pp, int virtual_stages) {
  // Each split divides work the file describes; one it describes no traffic for would be free.
  if (tp > 1) {
    bool splits = false;
    for (const LayerGroup& l : w.layers) {
      const bool split_here = std::any_of(l.ops.begin(), l.ops.end(), [](const Op& o) { return o.tp_split != TpSplit::none; });
      splits = splits || split_here;
      if (split_here && !(l.tp_tensor.value() > 0)) {
        return fmt::format("TP{}: {} describes no tensor-parallel traffic for '{}', whose GEMMs TP splits", tp, w.name, l.name);
      }
    }
    if (!splits) return fmt::format("TP{}: {} has no GEMM that tensor parallelism splits (no tp_split)", tp, w.name);
  }
  if (cp > 1 && std::none_of(w.layers.begin(), w.layers.end(), [](const LayerGroup& l) { return l.cp_exchange.value() > 0; })) {
    return fmt::format("CP{}: {} describes no context-parallel exchange", cp, w.name);
  }
  // Megatron-core's own limits: TP divides the attention heads and the key-value groups
  // (attention.py: divide(num_attention_heads, world_size), divide(num_query_groups, world_size));
  // load-balanced CP cuts the sequence in 2 x CP chunks (arguments.py: seq_length % (2 x CP) == 0).
  for (const LayerGroup& l : w.layers) {
    for (const Op& o : l.ops) {
      if (o.kind != OpKind::attention || o.heads <= 0) continue;
      const double groups = o.kv_heads > 0 ? o.kv_heads : o.heads;
      const auto divides = [tp](double count) { return std::fmod(count, static_cast<double>(tp)) == 0; };
      if (!divides(o.heads) || !divides(groups)) {
        return fmt::format("TP{}: {}'s {} attention heads and {} key-value groups do not split over {} ranks", tp,
                           w.name, o.heads, groups, tp);
      }
    }
  }
  if (cp > 1 && std::fmod(w.tokens_per_sample, 2.0 * cp) != 0) {
    return fmt::format("CP{}: {}'s {} tokens a sample do not cut into 2 x {} chunks", cp, w.name, w.tokens_per_sample, cp);
  }
  if (pp > 1) {
    // Every part of the pipeline holds at least one layer instance (a stage of none is no stage).
    long long instances = 0;
    for (const LayerGroup& l : w.layers) instances += l.repeat;
    if (instances < static_cast<long long>(pp) * virtual_stages) {
      return fmt::format("PP{}{} needs at least {} layers to place, {} has {}", pp,
                         virtual_stages > 1 ? fmt::format(" x {} virtual stages", virtual_stages) : "",
                         static_cast<long long>(pp) * virtual_stages, w.name, instances);
    }
    // A stage may end after any instance but the last one.
    for (std::size_t i = 0; i < w.layers.size(); ++i) {
      const bool last = i + 1 == w.layers.size();
      if ((!last || w.layers[i].repeat > 1) && !(w.layers[i].pipeline_boundary.value() > 0)) {
        return fmt::format("PP{}: {} gives no pipeline boundary after '{}' (key pipeline_boundary)", pp, w.name,
                           w.layers[i].name);
      }
    }
  }
  return "";
}

Shard shard_for(const LayerGroup& l, Shard s) {
  s.parameters = static_cast<double>(l.parameters);
  s.trains_weights = l.trainable_parameters > 0;
  s.backward = l.backward_pass;
  return s;
}

Shard shard_of(const Workload& w, const ParallelLayout& l) {
  Shard s;
  s.samples = l.micro_batch;
  s.tokens_per_sample = w.tokens_per_sample;
  s.tp = l.tp;
  s.cp = l.cp;
  s.sequence_parallel = l.sequence_parallel;
  return s;
}

Flops ops_flops(const LayerGroup& l, const Workload& w, Pass pass) {
  Shard s;
  s.tokens_per_sample = w.tokens_per_sample;
  s = shard_for(l, s);
  Flops f;
  for (const Op& op : l.ops) {
    for (const Kernel& k : expand(op, s, pass, w.precision)) f += k.model_flops;
  }
  return f;
}

}  // namespace sp::models
