#include "models/training/layout_search.hpp"

namespace sp::models {

namespace {

constexpr double kLayoutMargin = 0.02;

// Micro-batch sizes to try, largest first: base's when set, else the divisors of the samples
// each data-parallel rank gets.
std::vector<int> micro_batches(const ParallelSpec& s, int n, std::int64_t gbs) {
  if (s.micro_batch) return {*s.micro_batch};
  const int model = s.tensor.value_or(1) * s.context.value_or(1) * s.pipeline.value_or(1);
  if (n % model != 0 || gbs % (n / model) != 0) return {};
  const std::int64_t per_rank = gbs / (n / model);
  std::vector<int> out;
  for (std::int64_t m = per_rank; m >= 1; --m) {
    if (per_rank % m == 0) out.push_back(static_cast<int>(m));
  }
  return out;
}

struct Search {
  const Workload& w;
  const Platform& p;
  int n;
  std::int64_t gbs;
  Fidelity fidelity;
  std::optional<TrainingEstimate> best;      // fastest that fits
  std::optional<TrainingEstimate> first_bad;  // why the first resolvable candidate did not fit

  void consider(ParallelSpec s) {
    for (int mb : micro_batches(s, n, gbs)) {
      s.micro_batch = mb;
      std::string why;
      if (!resolve_layout(s, p.topology, n, gbs, why)) continue;
      TrainingEstimate e = estimate_training(w, p, n, gbs, s, fidelity);
      if (!e.ok()) {
        if (!first_bad) first_bad = std::move(e);
        continue;
      }
      if (!best || e.time_to_train < best->time_to_train) best = std::move(e);
      break;
    }
  }

  void grid(const ParallelSpec& base, const std::vector<int>& tp, const std::vector<int>& cp,
            const std::vector<int>& pp) {
    const auto or_base = [](const std::vector<int>& v, const std::optional<int>& b) {
      return v.empty() ? std::vector<int>{b.value_or(1)} : v;
    };
    for (int t : or_base(tp, base.tensor)) {
      for (int c : or_base(cp, base.context)) {
        for (int q : or_base(pp, base.pipeline)) {
          ParallelSpec s = base;
          s.tensor = t;
          s.context = c;
          s.pipeline = q;
          consider(s);
        }
      }
    }
  }
};

}  // namespace

std::optional<TrainingEstimate> fastest_layout(const Workload& w, const Platform& p, int n, std::int64_t gbs,
                                               const ParallelSpec& base, const LayoutSearch& search,
                                               Fidelity fidelity, LayoutFallback fallback) {
  Search s{w, p, n, gbs, fidelity, std::nullopt, std::nullopt};
  s.consider(base);
  // Where the usual layout does not fit, the recipe for smaller parts takes its place, the
  // first that fits.
  for (auto alt = base.otherwise.begin(); !s.best && alt != base.otherwise.end(); ++alt) {
    ParallelSpec t = base;
    t.fix_sizes(*alt);
    s.consider(t);
  }
  const std::optional<TrainingEstimate> usual = s.best;
  if (!search.empty()) s.grid(base, search.tensor, search.context, search.pipeline);
  if (!s.best && fallback == LayoutFallback::any) s.grid(base, {1, 2, 4, 8}, {1, 2, 4}, {1, 2, 4, 8});
  // The model resolves step times to a few percent, not better: a candidate must beat the
  // workload's usual layout by more than that to replace it.
  if (usual && to_seconds(usual->time_to_train) <= (1 + kLayoutMargin) * to_seconds(s.best->time_to_train)) {
    return usual;
  }
  if (s.best) return s.best;
  return s.first_bad;
}

}  // namespace sp::models
