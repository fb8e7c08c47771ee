#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "sim/core/det_math.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/sha256.hpp"

namespace sp {

TEST(Rng, SameCoordinatesGiveTheSameStream) {
  RngStream a(42, 7, "compute.jitter");
  RngStream b(42, 7, "compute.jitter");
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, EachCoordinateSelectsADifferentStream) {
  const std::uint64_t base = RngStream(42, 7, "compute.jitter").next_u64();
  EXPECT_NE(base, RngStream(43, 7, "compute.jitter").next_u64());
  EXPECT_NE(base, RngStream(42, 8, "compute.jitter").next_u64());
  EXPECT_NE(base, RngStream(42, 7, "network.noise").next_u64());
}

// Pinned draws: these bits must not change across compilers, standard libraries or machines.
// If this test fails, results stop being reproducible; do not update the numbers lightly.
TEST(Rng, DrawsArePinned) {
  RngStream r(1, 0, "pinned");
  EXPECT_EQ(r.next_u64(), 16084344125904965575ULL);
  RngStream u(1, 0, "pinned");
  u.next_u64();
  EXPECT_EQ(u.uniform01(), 0x1.39f8852d1fd55p-1);
  RngStream n(1, 0, "pinned");
  EXPECT_EQ(n.normal(0.0, 1.0), 0x1.eb59ed56918d5p-1);
  RngStream l(1, 0, "pinned");
  EXPECT_EQ(l.lognormal(0.0, 0.5), 0x1.9da59a4c38f9ep+0);
}

TEST(Rng, UniformIsInRangeWithTheRightMean) {
  RngStream r(3, 1, "u");
  double sum = 0;
  for (int i = 0; i < 200000; ++i) {
    const double x = r.uniform(2.0, 4.0);
    ASSERT_GE(x, 2.0);
    ASSERT_LT(x, 4.0);
    sum += x;
  }
  EXPECT_NEAR(sum / 200000, 3.0, 0.01);  // sd of the mean: (2/sqrt(12))/sqrt(2e5) = 0.0013
}

TEST(Rng, NormalHasTheRequestedMoments) {
  RngStream r(5, 2, "n");
  const int n = 200000;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < n; ++i) {
    const double x = r.normal(10.0, 2.0);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / n;
  const double var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 10.0, 0.02);  // 5 sd of the mean (2/sqrt(2e5) = 0.0045)
  EXPECT_NEAR(var, 4.0, 0.07);    // sd of the variance ~ 4*sqrt(2/n) = 0.0126
}

TEST(Rng, LognormalMedianIsExpMu) {
  RngStream r(9, 0, "ln");
  int below = 0;
  const int n = 100000;
  for (int i = 0; i < n; ++i) below += r.lognormal(1.0, 0.3) < std::exp(1.0);
  EXPECT_NEAR(static_cast<double>(below) / n, 0.5, 0.01);
}

// Our log/exp against the C library: both are accurate to an ulp or two, so they agree to a
// relative 1e-15 everywhere; the point of ours is that its bits do not depend on the library.
TEST(DetMath, LogAndExpMatchTheCLibrary) {
  for (double x : {1e-300, 1e-10, 0.1, 0.5, 0.7071, 1.0, 1.0000001, 2.0, 3.14159, 1e10, 1e300}) {
    EXPECT_NEAR(det::log(x), std::log(x), 2e-15 * std::max(1.0, std::fabs(std::log(x)))) << x;
  }
  for (double x : {-700.0, -20.0, -1.0, -1e-8, 0.0, 1e-8, 0.5, 1.0, 10.0, 700.0}) {
    EXPECT_NEAR(det::exp(x) / std::exp(x), 1.0, 3e-15) << x;
  }
  EXPECT_EQ(det::exp(0.0), 1.0);
  EXPECT_EQ(det::log(1.0), 0.0);
  EXPECT_TRUE(std::isnan(det::log(-1.0)));
  EXPECT_TRUE(std::isinf(det::exp(1000.0)));
}

TEST(Sha256, KnownVectors) {  // FIPS 180-4 examples
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace sp
