#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/core/error.hpp"
#include "sim/core/time.hpp"
#include "sim/core/units.hpp"

namespace sp {

TEST(Time, FactoriesAreExactPicoseconds) {
  EXPECT_EQ(nanoseconds(3).ps(), 3'000);
  EXPECT_EQ(microseconds(2).ps(), 2'000'000);
  EXPECT_EQ(milliseconds(1).ps(), 1'000'000'000);
  EXPECT_EQ(seconds(1.5).ps(), 1'500'000'000'000);
}

TEST(Time, SecondsRoundToTheNearestPicosecond) {
  EXPECT_EQ(seconds(0.4e-12).ps(), 0);
  EXPECT_EQ(seconds(0.6e-12).ps(), 1);
  EXPECT_EQ(seconds(-2.6e-12).ps(), -3);
}

TEST(Time, OutOfRangeIsAnError) {
  // A valid input the model cannot simulate (exit status 1), not an internal error.
  EXPECT_THROW(seconds(1e8), ModelError);  // > 106 days
  EXPECT_THROW(seconds(std::numeric_limits<double>::quiet_NaN()), ModelError);
}

TEST(Time, ArithmeticPastTheRangeIsAnErrorNotAWrapRound) {
  // int64 picoseconds end at 9,223,372 s (106.75 days): a sum, difference or multiple past it
  // would wrap to a time in the past (a co-location run of 10,000 s context switches did).
  const Duration almost = Duration::max() - picoseconds(1);
  EXPECT_EQ((almost + picoseconds(1)).ps(), Duration::max().ps());
  EXPECT_THROW(almost + picoseconds(2), ModelError);
  EXPECT_THROW(Duration::zero() - almost - picoseconds(3), ModelError);
  EXPECT_THROW(milliseconds(1) * 10'000'000'000'000, ModelError);  // 1e13 ms = 1e10 s
  Duration d = almost;
  EXPECT_THROW(d += microseconds(1), ModelError);
  SimTime t = SimTime::zero() + seconds(9.2e6);  // 106.5 days
  EXPECT_THROW(t + seconds(1e5), ModelError);
  EXPECT_THROW(t += seconds(1e5), ModelError);
}

TEST(Time, PointsAndSpansCombineOnlyMeaningfully) {
  const SimTime t0 = SimTime::zero() + microseconds(5);
  const SimTime t1 = t0 + microseconds(3);
  EXPECT_EQ((t1 - t0).ps(), microseconds(3).ps());
  EXPECT_DOUBLE_EQ(microseconds(3) / microseconds(6), 0.5);
  EXPECT_EQ(scale(microseconds(3), 0.5).ps(), 1'500'000);
  EXPECT_DOUBLE_EQ(to_seconds(milliseconds(250)), 0.25);
}

TEST(Units, TransferAndComputeTimes) {
  // 1 GB at 100 GB/s is 10 ms; 1 TFLOP at 1 PFLOP/s is 1 ms.
  EXPECT_EQ((Bytes(1e9) / BytesPerSecond(100e9)).ps(), milliseconds(10).ps());
  EXPECT_EQ((Flops(1e12) / FlopsPerSecond(1e15)).ps(), milliseconds(1).ps());
  EXPECT_DOUBLE_EQ((BytesPerSecond(50e9) * milliseconds(2)).value(), 1e8);
  EXPECT_DOUBLE_EQ(Bytes(6) / Bytes(3), 2.0);
  EXPECT_DOUBLE_EQ((Bytes(6) * 0.5 + 2.0 * Bytes(1)).value(), 5.0);
}

}  // namespace sp
