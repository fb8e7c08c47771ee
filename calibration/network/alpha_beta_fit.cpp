#include "calibration/network/alpha_beta_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "models/collective/collective.hpp"

namespace sp::calibration {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One tier of p ranks, 1 s per step and 1 B/s, one protocol and the ring: the measured view
// of a calibrated platform (models/collective/selector.cpp) with unit parameters.
models::Platform probe_platform(int ranks) {
  models::Platform p;
  p.name = "alpha-beta probe";
  p.topology.accelerators_per_node = ranks;
  models::Tier up;
  up.name = "scale_up";
  up.size = ranks;
  up.bandwidth = BytesPerSecond(1);
  models::Tier out;
  out.name = "scale_out";
  out.kind = models::TierKind::fat_tree;
  out.bandwidth = BytesPerSecond(1);
  p.topology.tiers = {up, out};
  models::ProtocolCosts& simple = p.protocols[static_cast<int>(models::Protocol::simple)];
  simple.available = true;
  simple.step = {seconds(1.0), seconds(1.0)};
  p.library_algorithms = {models::Algorithm::ring};
  return p;
}

struct Solved {
  double alpha = 0, inv_beta = 0, sse = kInf;
  bool alpha_resolved = true;
};

// Weighted least squares on rows [lo, hi) of the sorted points.
Solved solve(const std::vector<FitPoint>& pts, const std::vector<std::pair<double, double>>& coef, std::size_t lo,
             std::size_t hi) {
  Eigen::Matrix2d a = Eigen::Matrix2d::Zero();
  Eigen::Vector2d b = Eigen::Vector2d::Zero();
  for (std::size_t i = lo; i < hi; ++i) {
    const double w = 1 / (pts[i].time_s * pts[i].time_s);
    const Eigen::Vector2d x(coef[i].first, coef[i].second * pts[i].bytes);
    a += w * x * x.transpose();
    b += w * pts[i].time_s * x;
  }
  Solved s;
  // One size (of one rank count) cannot separate alpha from beta: a bandwidth at that size.
  const bool one_size = std::abs(a.determinant()) <= 1e-12 * a(0, 0) * a(1, 1);
  Eigen::Vector2d v = one_size ? Eigen::Vector2d(-1, 0) : Eigen::Vector2d(a.ldlt().solve(b));
  const auto sse_of = [&](double alpha, double inv_beta) {
    double e = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      e += std::pow((coef[i].first * alpha + coef[i].second * pts[i].bytes * inv_beta) / pts[i].time_s - 1, 2);
    }
    return e;
  };
  if (v[0] < 0) {
    // Is alpha below zero beyond its noise? Standard error from the residual variance.
    const double dof = static_cast<double>(hi - lo) - 2;
    const double var = dof > 0 ? sse_of(v[0], v[1]) / dof : kInf;
    const double se = one_size ? kInf : std::sqrt(var * a.inverse()(0, 0));
    if (!(-v[0] < 2 * se)) return s;  // significantly negative: no solution
    v[0] = 0;
    v[1] = b[1] / a(1, 1);  // beta alone
    s.alpha_resolved = false;
  }
  if (!(v[1] > 0)) return s;
  s.alpha = v[0];
  s.inv_beta = v[1];
  s.sse = sse_of(s.alpha, s.inv_beta);
  return s;
}

}  // namespace

std::pair<double, double> alpha_beta_coefficients(const FitPoint& p) {
  if (p.point_to_point) return {1.0, 1.0};
  const models::Platform probe = probe_platform(p.ranks);
  const models::Group group{{p.ranks, 1}};
  const double at_zero = to_seconds(models::select_collective(probe, group, p.op, Bytes(0)).time);
  const double at_one = to_seconds(models::select_collective(probe, group, p.op, Bytes(1)).time);
  return {at_zero, at_one - at_zero};
}

AlphaBetaFit fit_alpha_beta(const std::vector<FitPoint>& input, const AlphaBetaOptions& o) {
  AlphaBetaFit out;
  std::vector<std::size_t> order(input.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return input[a].bytes < input[b].bytes; });
  std::vector<FitPoint> pts;
  std::vector<std::pair<double, double>> coef;
  for (std::size_t i : order) {
    if (!(input[i].time_s > 0) || input[i].bytes < 0) {
      out.message = fmt::format("point {} has time {} s at {} bytes: times must be positive", i, input[i].time_s,
                                input[i].bytes);
      return out;
    }
    pts.push_back(input[i]);
    coef.push_back(alpha_beta_coefficients(input[i]));
  }
  // Segment boundaries fall between distinct sizes: starts[k] is the first point of size k.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (i == 0 || pts[i].bytes != pts[i - 1].bytes) starts.push_back(i);
  }
  const std::size_t sizes = starts.size();
  starts.push_back(pts.size());
  const auto min_sizes = static_cast<std::size_t>(std::max(1, o.min_sizes_per_segment));
  if (sizes < min_sizes) {
    out.message = fmt::format("{} distinct sizes: at least {} are needed", sizes, min_sizes);
    return out;
  }
  // best[k][j]: least error covering sizes [0, j) with k segments; from[k][j] the last start.
  const std::size_t kmax = static_cast<std::size_t>(o.segments > 0 ? o.segments : std::max(1, o.max_segments));
  std::vector<std::vector<double>> best(kmax + 1, std::vector<double>(sizes + 1, kInf));
  std::vector<std::vector<std::size_t>> from(kmax + 1, std::vector<std::size_t>(sizes + 1, 0));
  std::map<std::pair<std::size_t, std::size_t>, Solved> cache;
  const auto seg = [&](std::size_t a, std::size_t b) -> const Solved& {
    auto [it, fresh] = cache.try_emplace({a, b});
    if (fresh) it->second = solve(pts, coef, starts[a], starts[b]);
    return it->second;
  };
  best[0][0] = 0;
  for (std::size_t k = 1; k <= kmax; ++k) {
    for (std::size_t j = k * min_sizes; j <= sizes; ++j) {
      for (std::size_t i = (k - 1) * min_sizes; i + min_sizes <= j; ++i) {
        if (best[k - 1][i] == kInf) continue;
        const double e = best[k - 1][i] + seg(i, j).sse;
        if (e < best[k][j]) best[k][j] = e, from[k][j] = i;
      }
    }
  }
  const auto split = [&](std::size_t k) {
    std::vector<std::pair<std::size_t, std::size_t>> bounds;
    for (std::size_t j = sizes; k > 0; --k) {
      bounds.emplace_back(from[k][j], j);
      j = from[k][j];
    }
    std::reverse(bounds.begin(), bounds.end());
    return bounds;
  };
  const auto worst = [&](std::size_t k) {
    double w = 0;
    for (auto [a, b] : split(k)) {
      const Solved& s = seg(a, b);
      for (std::size_t i = starts[a]; i < starts[b]; ++i) {
        w = std::max(w, std::abs((coef[i].first * s.alpha + coef[i].second * pts[i].bytes * s.inv_beta) /
                                 pts[i].time_s - 1));
      }
    }
    return w;
  };
  // The number of segments: the one asked for; else the fewest within the tolerance; else the
  // least BIC, n ln(SSE/n) + 3k ln n (alpha, beta and a breakpoint each).
  const double n = static_cast<double>(pts.size());
  std::size_t chosen = 0;
  if (o.segments > 0) {
    if (best[kmax][sizes] != kInf) chosen = kmax;
  } else {
    for (std::size_t k = 1; k <= kmax && chosen == 0; ++k) {
      if (best[k][sizes] != kInf && worst(k) <= o.tolerance) chosen = k;
    }
    if (chosen == 0) {
      double least = kInf;
      for (std::size_t k = 1; k <= kmax; ++k) {
        if (best[k][sizes] == kInf) continue;
        const double bic = n * std::log(best[k][sizes] / n + 1e-18) + 3.0 * static_cast<double>(k) * std::log(n);
        if (bic < least) least = bic, chosen = k;
      }
    }
  }
  if (chosen == 0) {
    out.message = o.segments > 0
                      ? fmt::format("no split into {} segment(s) gives every segment a positive alpha and beta",
                                    o.segments)
                      : "no split gives every segment a positive alpha and beta";
    return out;
  }
  const auto bounds = split(chosen);
  out.predicted_s.assign(input.size(), 0);
  out.relative_error.assign(input.size(), 0);
  double mean = 0, wsum = 0;
  for (const FitPoint& p : pts) mean += 1 / p.time_s, wsum += 1 / (p.time_s * p.time_s);
  mean /= wsum;  // the weighted mean time, weights 1/t^2
  double ss_res = 0, ss_tot = 0;
  for (auto [a, b] : bounds) {
    const Solved& s = seg(a, b);
    out.segments.push_back({pts[starts[a]].bytes, pts[starts[b] - 1].bytes, s.alpha, 1 / s.inv_beta,
                            static_cast<int>(starts[b] - starts[a]), s.alpha_resolved});
    for (std::size_t i = starts[a]; i < starts[b]; ++i) {
      const double pred = coef[i].first * s.alpha + coef[i].second * pts[i].bytes * s.inv_beta;
      out.predicted_s[order[i]] = pred;
      out.relative_error[order[i]] = pred / pts[i].time_s - 1;
      out.max_abs_relative_error = std::max(out.max_abs_relative_error, std::abs(pred / pts[i].time_s - 1));
      ss_res += std::pow(pred / pts[i].time_s - 1, 2);
      ss_tot += std::pow(mean / pts[i].time_s - 1, 2);
    }
  }
  out.r_squared = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
  out.ok = true;
  return out;
}

}  // namespace sp::calibration
