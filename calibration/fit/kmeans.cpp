#include "calibration/fit/kmeans.hpp"

#include <algorithm>
#include <limits>

#include "sim/core/rng.hpp"

namespace sp::calibration {

namespace {

Clustering lloyd(const Eigen::MatrixXd& x, Eigen::MatrixXd centers) {
  const Eigen::Index n = x.rows(), k = centers.rows();
  Clustering c;
  c.k = static_cast<int>(k);
  c.label.assign(static_cast<std::size_t>(n), -1);
  for (int iter = 0; iter < 300; ++iter) {
    bool changed = false;
    for (Eigen::Index i = 0; i < n; ++i) {
      int best = 0;
      double best_d = std::numeric_limits<double>::infinity();
      for (Eigen::Index j = 0; j < k; ++j) {
        const double d = (x.row(i) - centers.row(j)).squaredNorm();
        if (d < best_d) {
          best_d = d;
          best = static_cast<int>(j);
        }
      }
      if (c.label[i] != best) {
        c.label[i] = best;
        changed = true;
      }
    }
    Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(k, x.cols());
    std::vector<int> counts(static_cast<std::size_t>(k), 0);
    for (Eigen::Index i = 0; i < n; ++i) {
      sums.row(c.label[i]) += x.row(i);
      ++counts[c.label[i]];
    }
    for (Eigen::Index j = 0; j < k; ++j) {
      if (counts[j] > 0) centers.row(j) = sums.row(j) / counts[j];
    }
    if (!changed) break;
  }
  c.centers = centers;
  for (Eigen::Index i = 0; i < n; ++i) c.inertia += (x.row(i) - centers.row(c.label[i])).squaredNorm();
  return c;
}

// Renumber clusters in order of their first point, so labels do not depend on seeding.
void canonical(Clustering& c) {
  std::vector<int> map(static_cast<std::size_t>(c.k), -1);
  int next = 0;
  for (int& l : c.label) {
    if (map[l] < 0) map[l] = next++;
    l = map[l];
  }
  Eigen::MatrixXd centers = c.centers;
  for (int j = 0; j < c.k; ++j) {
    if (map[j] >= 0) centers.row(map[j]) = c.centers.row(j);
  }
  c.centers = centers;
}

}  // namespace

Clustering kmeans(const Eigen::MatrixXd& x, int k, std::uint64_t seed, int restarts) {
  const Eigen::Index n = x.rows();
  k = std::max(1, std::min<int>(k, static_cast<int>(n)));
  Clustering best;
  best.inertia = std::numeric_limits<double>::infinity();
  for (int r = 0; r < restarts; ++r) {
    // k-means++: each next center drawn with probability proportional to its squared distance.
    RngStream rng(seed, static_cast<std::uint64_t>(r), "kmeans++");
    Eigen::MatrixXd centers(k, x.cols());
    centers.row(0) = x.row(static_cast<Eigen::Index>(rng.uniform01() * static_cast<double>(n)));
    for (int j = 1; j < k; ++j) {
      std::vector<double> d(static_cast<std::size_t>(n));
      double total = 0;
      for (Eigen::Index i = 0; i < n; ++i) {
        double m = std::numeric_limits<double>::infinity();
        for (int c = 0; c < j; ++c) m = std::min(m, (x.row(i) - centers.row(c)).squaredNorm());
        d[i] = m;
        total += m;
      }
      double pick = rng.uniform01() * total;
      Eigen::Index chosen = n - 1;
      for (Eigen::Index i = 0; i < n; ++i) {
        pick -= d[i];
        if (pick < 0) {
          chosen = i;
          break;
        }
      }
      centers.row(j) = x.row(chosen);
    }
    Clustering c = lloyd(x, centers);
    if (c.inertia < best.inertia - 1e-12) best = c;
  }
  canonical(best);
  return best;
}

double silhouette(const Eigen::MatrixXd& x, const std::vector<int>& label, int k) {
  const Eigen::Index n = x.rows();
  if (k < 2 || n < 2) return 0;
  double total = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    std::vector<double> sum(static_cast<std::size_t>(k), 0);
    std::vector<int> count(static_cast<std::size_t>(k), 0);
    for (Eigen::Index j = 0; j < n; ++j) {
      if (i == j) continue;
      sum[label[j]] += (x.row(i) - x.row(j)).norm();
      ++count[label[j]];
    }
    const int own = label[i];
    if (count[own] == 0) continue;  // a singleton scores 0
    const double a = sum[own] / count[own];
    double b = std::numeric_limits<double>::infinity();
    for (int c = 0; c < k; ++c) {
      if (c != own && count[c] > 0) b = std::min(b, sum[c] / count[c]);
    }
    total += (b - a) / std::max(a, b);
  }
  return total / static_cast<double>(n);
}

Clustering kmeans_by_silhouette(const Eigen::MatrixXd& x, int k_max, std::uint64_t seed) {
  k_max = std::min<int>(k_max, static_cast<int>(x.rows()) - 1);
  Clustering best = kmeans(x, 1, seed);
  double best_score = -2;
  for (int k = 2; k <= k_max; ++k) {
    Clustering c = kmeans(x, k, seed);
    const double s = silhouette(x, c.label, k);
    if (s > best_score + 1e-12) {
      best_score = s;
      best = c;
    }
  }
  return best;
}

}  // namespace sp::calibration
