#include <gtest/gtest.h>

#include <string>

#include "sim/config/quantity.hpp"

namespace sp::config {

struct Good {
  const char* text;
  Dimension dim;
  double si;  // expected value in B, B/s, s, FLOP, FLOP/s or W
};

TEST(Quantity, GoodStrings) {
  const Good cases[] = {
      {"450 GB/s", Dimension::bandwidth, 450e9},
      {"400 Gb/s", Dimension::bandwidth, 50e9},  // bits: / 8
      {"400 Gbps", Dimension::bandwidth, 50e9},
      {"100 Gbit/s", Dimension::bandwidth, 12.5e9},
      {"3.35 TB/s", Dimension::bandwidth, 3.35e12},
      {"1 GiB/s", Dimension::bandwidth, 1073741824.0},
      {"50GB/s", Dimension::bandwidth, 50e9},  // no space is fine
      {"80 GiB", Dimension::bytes, 80.0 * 1073741824.0},
      {"80 GB", Dimension::bytes, 80e9},
      {"25 MiB", Dimension::bytes, 25.0 * 1048576.0},
      {"288 MB", Dimension::bytes, 288e6},
      {"2 B", Dimension::bytes, 2.0},
      {"8 b", Dimension::bytes, 1.0},
      {"1.5e3 kB", Dimension::bytes, 1.5e6},
      {"2 us", Dimension::time, 2e-6},
      {"2 \xC2\xB5s", Dimension::time, 2e-6},
      {"13.5 ns", Dimension::time, 13.5e-9},
      {"3 ms", Dimension::time, 3e-3},
      {"0.5 s", Dimension::time, 0.5},
      {"2 min", Dimension::time, 120.0},
      {"1 h", Dimension::time, 3600.0},
      {"989 TFLOP/s", Dimension::flop_rate, 989e12},
      {"1.979 PFLOPS", Dimension::flop_rate, 1.979e15},
      {"6.656 GFLOP", Dimension::flops, 6.656e9},
      {"0 FLOP", Dimension::flops, 0.0},
      {"700 W", Dimension::power, 700.0},
      {"1.2 kW", Dimension::power, 1200.0},
  };
  for (const Good& g : cases) {
    EXPECT_DOUBLE_EQ(parse_quantity(g.text, g.dim), g.si) << g.text;
  }
}

struct Bad {
  const char* text;
  Dimension dim;
  const char* message;  // a fragment the message must contain
};

TEST(Quantity, BadStringsNameTheProblem) {
  const Bad cases[] = {
      {"450", Dimension::bandwidth, "\"450\" has no unit"},
      {"450 GB", Dimension::bandwidth, "\"450 GB\" is a size in bytes"},
      {"2 us", Dimension::bandwidth, "\"2 us\" is a time"},
      {"450 GB/s", Dimension::time, "\"450 GB/s\" is a bandwidth"},
      {"400 Gbit", Dimension::bandwidth, "is a size in bytes"},
      {"450 gb/s", Dimension::bandwidth, "unknown unit \"gb/s\""},
      {"450 KB", Dimension::bytes, "unknown unit \"KB\""},
      {"5 GiFLOP/s", Dimension::flop_rate, "unknown unit"},  // binary prefixes only for data
      {"fast", Dimension::bandwidth, "is not a number with a unit"},
      {"", Dimension::bytes, "is not a number with a unit"},
      {"0x10 GB", Dimension::bytes, "is not a number with a unit"},
      {"inf GB/s", Dimension::bandwidth, "is not a number with a unit"},
      {"2 sec", Dimension::time, "unknown unit \"sec\""},
  };
  for (const Bad& b : cases) {
    try {
      parse_quantity(b.text, b.dim);
      ADD_FAILURE() << "accepted \"" << b.text << "\"";
    } catch (const QuantityError& e) {
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos)
          << "\"" << b.text << "\" gave: " << e.what();
      EXPECT_NE(e.hint().find("expected"), std::string::npos) << e.hint();
    }
  }
}

TEST(Quantity, HintShowsAnExampleOfTheExpectedKind) {
  try {
    parse_bandwidth("450");
    FAIL();
  } catch (const QuantityError& e) {
    EXPECT_EQ(e.hint(), "expected a bandwidth such as \"450 GB/s\" or \"400 Gb/s\"");
  }
}

TEST(Quantity, TypedParsers) {
  EXPECT_DOUBLE_EQ(parse_bytes("1 KiB").value(), 1024.0);
  EXPECT_DOUBLE_EQ(parse_bandwidth("8 b/s").value(), 1.0);
  EXPECT_EQ(parse_duration("1.5 us").ps(), 1'500'000);
  EXPECT_DOUBLE_EQ(parse_flops("2 TFLOP").value(), 2e12);
  EXPECT_DOUBLE_EQ(parse_flop_rate("1 GFLOP/s").value(), 1e9);
  EXPECT_DOUBLE_EQ(parse_power("350 W").value(), 350.0);
}

}  // namespace sp::config
