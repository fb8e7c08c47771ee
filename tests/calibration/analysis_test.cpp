// The seed study's analysis: Table I on the v4.1 data, E' by hand, K-means on a toy set.
#include <gtest/gtest.h>

#include <cmath>

#include "calibration/analysis/efficiency_analysis.hpp"
#include "calibration/fit/kmeans.hpp"

namespace sp::calibration {

namespace {
std::vector<MlperfResult> v41() {
  return read_mlperf_results(
      config::CsvTable::read(std::string(SP_SOURCE_DIR) + "/calibration/data/mlperf/results_v4.1.csv"));
}
}  // namespace

// The study's Table I (systems with a score / reference accelerators / reference minutes). It
// printed 28 BERT systems and 60.52 for Stable Diffusion; calibration/README.md "Analysis" says why the data
// differs.
TEST(Analysis, TableOneOnV41) {
  const auto a = analyze_efficiency(v41(), std::nullopt, 1);
  ASSERT_EQ(a.size(), 4u);
  const struct {
    const char* name;
    int systems, ref_n;
    double ref_min;
  } expected[] = {{"bert", 29, 2, 366.19}, {"llama2_70b_lora", 29, 4, 61.87}, {"retinanet", 26, 2, 172.84},
                  {"stable_diffusion", 25, 4, 60.56}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a[i].benchmark, expected[i].name);
    EXPECT_EQ(a[i].systems, expected[i].systems) << expected[i].name;
    EXPECT_EQ(a[i].reference.accelerators, expected[i].ref_n) << expected[i].name;
    EXPECT_NEAR(*a[i].reference.time_to_train_min, expected[i].ref_min, 0.005) << expected[i].name;
  }
}

TEST(Analysis, EPrimeByHand) {
  // Reference: 2 accelerators in 100 min (the slower of the two 2-accelerator systems). A system
  // of 8 in 30 min: speedup 100/30 = 3.33, E' = 3.33 / (8/2) = 0.833.
  // Named fields: a row type that grows a column keeps these rows as they are.
  const auto system = [](std::size_t row, const char* submitter, const char* name, int n, double minutes, std::int64_t gbs) {
    MlperfResult m;
    m.row = row;
    m.line = static_cast<int>(row) + 2;
    m.benchmark = "toy";
    m.submitter = submitter;
    m.system_name = name;
    m.accelerator = "X";
    m.accelerators_per_node = n;
    m.nodes = 1;
    m.accelerators = n;
    m.time_to_train_min = minutes;
    m.global_batch = gbs;
    return m;
  };
  const std::vector<MlperfResult> r = {system(0, "a", "fast2", 2, 80.0, 64), system(1, "b", "slow2", 2, 100.0, 64),
                                       system(2, "c", "eight", 8, 30.0, 256)};
  const auto a = analyze_efficiency(r, 1, 1);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].reference.system_name, "slow2");
  ASSERT_EQ(a[0].rows.size(), 3u);
  EXPECT_EQ(a[0].rows[2].result.system_name, "eight");
  EXPECT_NEAR(a[0].rows[2].speedup, 100.0 / 30.0, 1e-12);
  EXPECT_NEAR(a[0].rows[2].e_prime, 100.0 / 30.0 / 4.0, 1e-12);
  EXPECT_NEAR(a[0].rows[1].e_prime, 1.25, 1e-12);  // the faster 2-accelerator system
}

TEST(KMeans, SeparatesAToySetAndChoosesKBySilhouette) {
  // Three tight groups around (0,0), (10,0), (0,10).
  Eigen::MatrixXd x(9, 2);
  x << 0, 0, 0.1, 0.2, -0.1, 0.1, 10, 0, 10.2, 0.1, 9.9, -0.1, 0, 10, 0.1, 10.1, -0.2, 9.9;
  const Clustering c = kmeans_by_silhouette(x, 5, 42);
  EXPECT_EQ(c.k, 3);
  EXPECT_EQ(c.label, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2}));  // numbered by first point
  EXPECT_NEAR(c.centers(1, 0), (10 + 10.2 + 9.9) / 3, 1e-12);
  EXPECT_GT(silhouette(x, c.label, 3), 0.9);
  // Deterministic: the same seed gives the same clustering.
  EXPECT_EQ(kmeans(x, 3, 7).label, kmeans(x, 3, 7).label);
}

}  // namespace sp::calibration
