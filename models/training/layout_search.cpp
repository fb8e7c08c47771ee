#include "models/training/layout_search.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "models/compute/compute_model.hpp"
#include "models/step/step_model.hpp"
#include "sim/core/error.hpp"

namespace sp::models {

namespace {

// How far apart the model can tell layouts: its own errors against measurements outside MLPerf,
// up to 8 % for one GPU's graph-captured forward and backward (the kernel-level compute check on
// an H100: BERT 3.8 %, a Llama2 TP4 layer 1.8 %, RetinaNet 7.8 %; results/validation/
// compute_check) and 5 % for Megatron's iteration times on Selene
// (Korthikanti et al. 2023; results/validation/transformer_rows.csv). A layout must beat the
// recipe by more than that to replace it: a submitter's recipe is evidence the model does not
// outweigh within its resolution. (Consistent with, not taken from, v4.1's one-node H200 logs,
// which train Llama2-70B LoRA as fast under TP2 CP1 as under TP1 CP2 where the model puts them 9 %
// apart: those rows are scored.)
constexpr double kLayoutMargin = 0.10;

// The step bounds are compared this much low. Past the 64 simulated micro-batches a step is
// extrapolated from two graphs whose straggler factors differ slightly (each from its own stage
// totals), and the bound's straggler factor comes from another quadrature: they agree with the
// bounds to about 1e-5 of the step, not exactly (a tenth of this).
constexpr double kBoundSlack = 1e-4;

std::vector<int> powers_of_two(int upto) {
  std::vector<int> out;
  for (int v = 1; v <= upto; v *= 2) out.push_back(v);
  return out;
}

// Micro-batch sizes to try, largest first: s's when set, else the divisors of a rank's samples
// that the implementation accepts (`allowed`; empty: any).
std::vector<int> micro_batches(const ParallelSpec& s, int n, std::int64_t gbs, const std::vector<int>& allowed = {}) {
  if (s.micro_batch) return {*s.micro_batch};
  const int model = s.tensor.value_or(1) * s.context.value_or(1) * s.pipeline.value_or(1);
  if (n % model != 0 || gbs % (n / model) != 0) return {};
  const std::int64_t r = gbs / (n / model);
  // Divisors in pairs up to the square root: O(sqrt r), not O(r) (a global batch may be 10^9).
  std::vector<int> out;
  for (std::int64_t d = 1; d * d <= r; ++d) {
    if (r % d != 0) continue;
    out.push_back(static_cast<int>(d));
    if (d * d != r) out.push_back(static_cast<int>(r / d));
  }
  if (!allowed.empty()) {
    std::erase_if(out, [&](int mb) { return std::find(allowed.begin(), allowed.end(), mb) == allowed.end(); });
  }
  std::sort(out.begin(), out.end(), std::greater<>());
  return out;
}

using Key = std::tuple<int, int, int>;  // tp, cp, pp
Key key_of(const ParallelLayout& l) { return {l.tp, l.cp, l.pp}; }

// Every set of sizes the limits allow for N (each a power of two that divides it unless listed;
// TP within one scale-up domain), with or without a pipeline, and each of the limits' virtual
// stages where there is one: `visit` gets the spec, its micro-batch unset, and returns true to
// stop the walk (a question answered by the first spec that does).
void each_size(const Workload& w, const Platform& p, int n, const ParallelSpec& base, const LayoutSearch& limits,
               bool pipelines, const std::function<bool(const ParallelSpec&)>& visit) {
  const int domain = std::min(n, p.topology.tiers.front().size);
  const auto sizes = [](const std::vector<int>& given, int upto) { return given.empty() ? powers_of_two(upto) : given; };
  for (int t : sizes(limits.tensor, domain)) {
    for (int c : sizes(limits.context, std::min(n, kMaxContextParallel))) {
      for (int q : sizes(limits.pipeline, std::min(n, kMaxPipelineParallel))) {
        if ((q > 1) != pipelines || n % (t * c * q) != 0 || !unsupported_split(w, t, c, q).empty()) continue;
        ParallelSpec s = base;
        s.fix_sizes({t, c, q});
        if (!base.micro_batch_pinned) s.micro_batch.reset();
        if (q == 1 || limits.virtual_stages.empty()) {
          if (visit(s)) return;
          continue;
        }
        for (int v : limits.virtual_stages) {
          s.virtual_stages = v;
          if (visit(s)) return;
        }
      }
    }
  }
}

struct Candidate {
  ParallelSpec spec;
  ParallelLayout layout;  // it resolves to
  double bound_s = 0;     // step_lower_bound
};

struct Search {
  const Workload& w;
  const Platform& p;
  int n;
  std::int64_t gbs;
  Fidelity fidelity;
  std::map<Key, TrainingEstimate> fastest{};  // per set of sizes, its fastest that fits
  std::optional<TrainingEstimate> first_bad{};  // why a resolvable candidate did not fit: the closest
  Bytes smallest_bad{};                          // what first_bad's memory needs
  std::optional<std::string> unsimulated{};      // why the first one that fits could not be simulated
  double seconds_per_step_second = 0;         // time to train per second of step (any estimate)
  double evaluation_floor_s = 0;              // time to train every layout spends evaluating, at least
  std::vector<int> allowed_micro_batches{};   // LayoutSearch::micro_batch

  std::optional<TrainingEstimate> evaluate(const ParallelSpec& s) {
    TrainingEstimate e;
    try {
      e = estimate_training(w, p, n, gbs, s, fidelity);
    } catch (const ModelError& error) {
      // A candidate beyond what the model simulates (a run past its clock's ~106 days, a
      // collective beyond the chunk fidelity's budget) is no contender; where no candidate is,
      // the search says why rather than show one that does not fit.
      if (!unsimulated) unsimulated = error.what();
      return std::nullopt;
    }
    if (!e.ok()) {
      if (!first_bad) first_bad = std::move(e);
      return std::nullopt;
    }
    seconds_per_step_second = e.steps * e.rcp_normalisation;
    // Each evaluation's fixed cost, whatever the layout: the count depends on the batch and
    // convergence alone, the nodes on N.
    evaluation_floor_s = e.rcp_normalisation * e.evaluation.evaluations * to_seconds(evaluation_fixed_cost(w, e.nodes));
    auto [it, fresh] = fastest.emplace(key_of(e.layout), e);
    if (!fresh && e.time_to_train < it->second.time_to_train) it->second = e;
    return e;
  }

  // The fastest micro-batch of `s` that fits (the recipe's, before any bound): without a
  // pipeline the largest, as in the grid.
  std::optional<TrainingEstimate> consider(const ParallelSpec& s, const std::vector<Recompute>& recompute) {
    std::vector<Candidate> fitting;
    // The sizes are given (declared, or the recipe's); the recompute modes are the search's, the
    // first that fits kept, unless the spec names its own.
    add_fitting(s, fitting, s.recompute ? std::vector<Recompute>{} : recompute);
    std::optional<TrainingEstimate> best;
    for (const Candidate& c : fitting) {
      const auto e = evaluate(c.spec);
      if (e && (!best || e->time_to_train < best->time_to_train)) best = e;
    }
    return best;
  }

  // The time to train that a candidate must beat to be the fastest or the runner-up.
  double to_beat_s() const {
    std::vector<double> t;
    for (const auto& [k, e] : fastest) t.push_back(to_seconds(e.time_to_train));
    if (t.size() < 2) return -1;  // nothing to prune against yet
    std::nth_element(t.begin(), t.begin() + 1, t.end());
    return t[1];
  }

  // Every size the limits allow with the micro-batches that fit, simulated in order of their
  // lower bound; one whose bound cannot beat the runner-up is not (it could be neither the
  // fastest nor the next), nor one whose bound cannot beat the fastest of its own sizes.
  void grid(const ParallelSpec& base, const LayoutSearch& limits) {
    // With and without pipelines: a pipeline trades a bubble for memory, and where a layout
    // without one fits only by recomputing (full recompute: the forward again, a third more
    // compute), or only at a TP whose communication is exposed, the bubble may cost less.
    std::vector<Candidate> all;
    for (bool pipelines : {false, true}) {
      each_size(w, p, n, base, limits, pipelines, [&](const ParallelSpec& s) {
        add_fitting(s, all, limits.recompute);
        return false;
      });
    }
    std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.bound_s < b.bound_s; });
    // A time to train no layout of bound `bound_s` can undercut.
    const auto at_least = [&](double bound_s) {
      return bound_s * (1 - kBoundSlack) * seconds_per_step_second + evaluation_floor_s;
    };
    for (const Candidate& c : all) {
      const double beat = to_beat_s();
      if (beat >= 0 && at_least(c.bound_s) > beat) break;
      // Nor can one slower than what its own sizes already reach (it would not replace it).
      const auto same = fastest.find(key_of(c.layout));
      const auto cannot_place = [&](double bound_s) {
        const double t = at_least(bound_s);
        return (beat >= 0 && t > beat) || (same != fastest.end() && t > to_seconds(same->second.time_to_train));
      };
      if (cannot_place(c.bound_s)) continue;
      // The graph's bound, tighter and dearer, where there is something to beat. A graph the
      // step model refuses (more parts than layers) is evaluated, which says why.
      if (beat >= 0 || same != fastest.end()) {
        std::optional<double> graph;
        try {
          graph = to_seconds(step_graph_lower_bound(w, p, c.layout, n, fidelity));
        } catch (const ModelError&) {
        }
        if (graph && cannot_place(*graph)) continue;
      }
      evaluate(c.spec);
    }
  }

  // The micro-batches of `s` that fit in memory (without a pipeline only the largest: fewer
  // samples per micro-batch only add steps of accumulation), with their bounds.
  void add_fitting(ParallelSpec s, std::vector<Candidate>& out, const std::vector<Recompute>& recompute = {}) {
    for (int mb : micro_batches(s, n, gbs, allowed_micro_batches)) {
      s.micro_batch = mb;
      std::string why;
      std::optional<ParallelLayout> l;
      // The recompute modes in order, the first whose layout fits (none given: the spec's own).
      const std::vector<std::optional<Recompute>> modes =
          recompute.empty() ? std::vector<std::optional<Recompute>>{s.recompute}
                            : std::vector<std::optional<Recompute>>(recompute.begin(), recompute.end());
      bool fits = false, resolved = false;
      Bytes needs;
      for (const auto& mode : modes) {
        s.recompute = mode;
        l = resolve_layout(s, p.topology, n, gbs, why);
        if (!l) break;
        resolved = true;
        const MemoryEstimate m = estimate_memory(w, p.accelerator, *l);
        needs = m.total();
        if ((fits = m.fits())) break;
      }
      if (!resolved) continue;
      if (!fits) {
        // Where nothing fits, the one that came closest says by how much (not the largest
        // micro-batch's footprint, tried first).
        if (!first_bad || needs < smallest_bad) {
          first_bad = estimate_training(w, p, n, gbs, s, fidelity);  // says why, unsimulated
          smallest_bad = needs;
        }
        continue;
      }
      out.push_back({s, *l, to_seconds(step_lower_bound(w, p, *l, n))});
      if (l->pp == 1) break;
    }
  }

  // The fastest, and the fastest with other sizes.
  std::pair<const TrainingEstimate*, const TrainingEstimate*> podium() const {
    const TrainingEstimate *first = nullptr, *second = nullptr;
    for (const auto& [k, e] : fastest) {
      if (!first || e.time_to_train < first->time_to_train) {
        second = first;
        first = &e;
      } else if (!second || e.time_to_train < second->time_to_train) {
        second = &e;
      }
    }
    return {first, second};
  }
};

TrainingEstimate chosen(const TrainingEstimate& e, const char* basis, const TrainingEstimate* other) {
  TrainingEstimate out = e;
  out.layout_basis = basis;
  if (other) {
    out.runner_up = other->layout.describe();
    out.runner_up_slower = to_seconds(other->time_to_train) / to_seconds(e.time_to_train) - 1;
  }
  return out;
}

}  // namespace

bool some_layout_resolves(const Workload& w, const Platform& p, int n, std::int64_t gbs, const ParallelSpec& base,
                          const LayoutSearch& limits) {
  std::string why;
  // The candidates Search::add_fitting resolves, without their memory or a step.
  const auto resolves = [&](ParallelSpec s, const std::vector<Recompute>& recompute) {
    for (int mb : micro_batches(s, n, gbs, limits.micro_batch)) {
      s.micro_batch = mb;
      if (recompute.empty()) {
        if (resolve_layout(s, p.topology, n, gbs, why)) return true;
        continue;
      }
      for (Recompute mode : recompute) {
        s.recompute = mode;
        if (resolve_layout(s, p.topology, n, gbs, why)) return true;
      }
    }
    return false;
  };
  if (resolves(base, {})) return true;
  if (base.declared) return false;
  for (const auto& alt : base.otherwise) {
    ParallelSpec t = base;
    t.fix_sizes(alt);
    if (resolves(t, {})) return true;
  }
  bool found = false;
  for (bool pipelines : {false, true}) {
    each_size(w, p, n, base, limits, pipelines, [&](const ParallelSpec& s) { return found = resolves(s, limits.recompute); });
    if (found) return true;
  }
  return false;
}

std::optional<TrainingEstimate> fastest_layout(const Workload& w, const Platform& p, int n, std::int64_t gbs,
                                               const ParallelSpec& base, const LayoutSearch& search,
                                               Fidelity fidelity, LayoutFallback fallback, LayoutChoice choice) {
  // Every candidate's memory, bounds and graphs ask for the compute of the same few shards.
  const InstanceComputeMemo memo(w, p.accelerator);
  Search s{w, p, n, gbs, fidelity};
  s.allowed_micro_batches = search.micro_batch;  // for the declared layout and the recipe too
  if (base.declared) {
    if (auto e = s.consider(base, search.recompute)) return chosen(*e, "declared", nullptr);
    if (fallback == LayoutFallback::none) return s.first_bad;
  }
  // The recipe: the workload's layout at N, or where it does not fit its first alternative that does.
  std::optional<TrainingEstimate> recipe = base.declared ? std::nullopt : s.consider(base, search.recompute);
  for (auto alt = base.otherwise.begin(); !base.declared && !recipe && alt != base.otherwise.end(); ++alt) {
    ParallelSpec t = base;
    t.fix_sizes(*alt);
    recipe = s.consider(t, search.recompute);
  }
  if (recipe && choice == LayoutChoice::recipe) return chosen(*recipe, "recipe", nullptr);
  s.grid(base, search);
  const auto [best, second] = s.podium();
  if (!best && s.unsimulated) {
    // Memory is checked before the step is simulated: these layouts fit, and one of them may well
    // be the answer; a layout that does not fit would mislead.
    throw ModelError(fmt::format("at {} accelerators, no layout that fits could be simulated at the {} fidelity: {}",
                                 n, fidelity_name(fidelity), *s.unsimulated));
  }
  if (!best) return s.first_bad;
  if (recipe && to_seconds(recipe->time_to_train) <= (1 + kLayoutMargin) * to_seconds(best->time_to_train)) {
    // The recipe's runner-up is the fastest other layout, which may be up to 10 % faster.
    const TrainingEstimate* other = key_of(best->layout) == key_of(recipe->layout) ? second : best;
    return chosen(*recipe, "recipe", other);
  }
  return chosen(*best, base.declared ? "searched: the declared layout does not fit or cannot run" : "searched", second);
}

}  // namespace sp::models
