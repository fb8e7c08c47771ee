#include "calibration/analysis/efficiency_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "calibration/fit/kmeans.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration {

std::vector<BenchmarkAnalysis> analyze_efficiency(const std::vector<MlperfResult>& results, std::optional<int> k,
                                                  std::uint64_t seed) {
  std::vector<BenchmarkAnalysis> out;
  for (const std::string& name : benchmarks(results)) {
    BenchmarkAnalysis a;
    a.benchmark = name;
    std::vector<MlperfResult> scored;
    for (const auto& r : results) {
      if (r.benchmark == name && r.time_to_train_min) scored.push_back(r);
    }
    if (scored.empty()) continue;
    std::stable_sort(scored.begin(), scored.end(), [](const MlperfResult& x, const MlperfResult& y) {
      return x.accelerators != y.accelerators ? x.accelerators < y.accelerators
                                              : *x.time_to_train_min > *y.time_to_train_min;
    });
    a.systems = static_cast<int>(scored.size());
    a.reference = scored.front();  // fewest accelerators, and of those the slowest
    const double t_ref = *a.reference.time_to_train_min;
    Eigen::MatrixXd features(static_cast<Eigen::Index>(scored.size()), 2);
    for (std::size_t i = 0; i < scored.size(); ++i) {
      SystemEfficiency s{scored[i], 0, 0, 0};
      s.speedup = t_ref / *scored[i].time_to_train_min;
      s.e_prime = s.speedup / (static_cast<double>(scored[i].accelerators) / a.reference.accelerators);
      features(static_cast<Eigen::Index>(i), 0) = std::log2(static_cast<double>(scored[i].accelerators));
      features(static_cast<Eigen::Index>(i), 1) = s.e_prime;
      a.rows.push_back(s);
    }
    for (Eigen::Index c = 0; c < 2; ++c) {  // z-scores
      const double mean = features.col(c).mean();
      const double sd = std::sqrt((features.col(c).array() - mean).square().mean());
      features.col(c) = (features.col(c).array() - mean) / (sd > 0 ? sd : 1.0);
    }
    const Clustering clusters = k ? kmeans(features, *k, seed) : kmeans_by_silhouette(features, 6, seed);
    a.k = clusters.k;
    if (k && clusters.k != *k) {
      warn({"--k", 0, 0}, "", fmt::format("{}: {} clusters asked of {} systems; made {}", a.benchmark, *k, scored.size(), clusters.k));
    }
    a.silhouette = silhouette(features, clusters.label, clusters.k);
    for (std::size_t i = 0; i < a.rows.size(); ++i) a.rows[i].cluster = clusters.label[i];

    std::map<int, double> best;  // the fastest published time at each N
    for (const auto& r : scored) {
      auto [it, fresh] = best.emplace(r.accelerators, *r.time_to_train_min);
      if (!fresh) it->second = std::min(it->second, *r.time_to_train_min);
    }
    // The Pareto frontier: an N counts only if it beats every smaller N (else more accelerators of
    // another kind, not scale, made the difference).
    std::vector<int> n;
    std::vector<double> t;
    for (const auto& [count, time] : best) {
      if (t.empty() || time < t.back()) {
        n.push_back(count);
        t.push_back(time);
      }
    }
    a.equilibrium = break_even_points(n, t);
    out.push_back(a);
  }
  return out;
}

output::Table table_one(const std::vector<BenchmarkAnalysis>& analyses) {
  output::Table t;
  std::vector<std::string> names, ref;
  output::Column systems{"systems", "count", "systems with a score", true, {}, {}};
  output::Column n_ref{"reference_accelerators", "count", "N of the reference system", true, {}, {}};
  output::Column t_ref{"reference_time_min", "min", "time to train of the reference system", false, {}, {}};
  output::Column k{"clusters", "count", "K-means clusters on (log2 N, E')", true, {}, {}};
  for (const auto& a : analyses) {
    names.push_back(a.benchmark);
    ref.push_back(a.reference.submitter + " " + a.reference.system_name);
    systems.values.push_back(a.systems);
    n_ref.values.push_back(a.reference.accelerators);
    t_ref.values.push_back(*a.reference.time_to_train_min);
    k.values.push_back(a.k);
  }
  t.columns = {output::text_column("benchmark", "MLPerf benchmark", names), systems, n_ref, t_ref,
               output::text_column("reference_system", "submitter and system", ref), k};
  return t;
}

output::Table efficiency_table(const std::vector<BenchmarkAnalysis>& analyses) {
  std::vector<std::string> bench, submitter, system, accel;
  output::Column n{"accelerators", "count", "N", true, {}, {}};
  output::Column time{"time_to_train_min", "min", "published score", false, {}, {}};
  output::Column speedup{"speedup", "1", "T_ref / T", false, {}, {}};
  output::Column e{"e_prime", "1", "E' = (T_ref/T) / (N/N_ref)", false, {}, {}};
  output::Column cluster{"cluster", "index", "K-means cluster within the benchmark", true, {}, {}};
  for (const auto& a : analyses) {
    for (const auto& r : a.rows) {
      bench.push_back(a.benchmark);
      submitter.push_back(r.result.submitter);
      system.push_back(r.result.system_name);
      accel.push_back(r.result.accelerator);
      n.values.push_back(r.result.accelerators);
      time.values.push_back(*r.result.time_to_train_min);
      speedup.values.push_back(r.speedup);
      e.values.push_back(r.e_prime);
      cluster.values.push_back(r.cluster);
    }
  }
  output::Table t;
  t.columns = {output::text_column("benchmark", "MLPerf benchmark", bench),
               output::text_column("submitter", "", submitter),
               output::text_column("system_name", "", system),
               output::text_column("accelerator", "as declared", accel),
               n, time, speedup, e, cluster};
  return t;
}

}  // namespace sp::calibration
