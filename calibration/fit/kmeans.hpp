// K-means clustering (Lloyd's algorithm with k-means++ seeding, several seeded restarts) and the
// silhouette score that chooses k. Deterministic: seeds come from named RNG streams and ties go to
// the lower index.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Dense>

namespace sp::calibration {

struct Clustering {
  int k = 0;
  std::vector<int> label;  // per point, 0..k-1, clusters numbered by their first point
  Eigen::MatrixXd centers; // k x d
  double inertia = 0;      // sum of squared distances to the centers
};

/// Clusters the rows of `points` (n x d) into k groups.
Clustering kmeans(const Eigen::MatrixXd& points, int k, std::uint64_t seed, int restarts = 10);

/// Mean silhouette of a clustering (in [-1, 1]; 0 for a single cluster).
double silhouette(const Eigen::MatrixXd& points, const std::vector<int>& label, int k);

/// The k in [2, k_max] with the best silhouette (k_max capped at n - 1), clustered.
Clustering kmeans_by_silhouette(const Eigen::MatrixXd& points, int k_max, std::uint64_t seed);

}  // namespace sp::calibration
