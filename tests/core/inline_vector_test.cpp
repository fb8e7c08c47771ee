#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/inline_vector.hpp"

namespace sp {

using Small = InlineVector<std::uint32_t, 2>;

std::vector<std::uint32_t> items(const Small& v) { return {v.begin(), v.end()}; }

TEST(InlineVector, HoldsItsFirstElementsInlineAndTheRestOnTheHeapInOrder) {
  Small v{7, 8};
  EXPECT_EQ(v.capacity(), 2u);  // inline
  v.push_back(9);               // past the inline two: 4 on the heap, the first two copied
  EXPECT_EQ(v.capacity(), 4u);
  v.push_back(10);
  v.push_back(11);
  EXPECT_EQ(v.capacity(), 8u);
  EXPECT_EQ(items(v), (std::vector<std::uint32_t>{7, 8, 9, 10, 11}));
  EXPECT_EQ(v.back(), 11u);
  v[0] = 1;
  EXPECT_EQ(v[0], 1u);
  const Small from_vector(std::vector<std::uint32_t>{1, 2, 3});
  EXPECT_EQ(items(from_vector), (std::vector<std::uint32_t>{1, 2, 3}));
}

TEST(InlineVector, CopiesAreIndependentAndMovesLeaveTheSourceEmpty) {
  for (const std::vector<std::uint32_t>& values : {std::vector<std::uint32_t>{4}, std::vector<std::uint32_t>{4, 5, 6}}) {
    Small a(values);
    Small b = a;  // inline or heap, a copy of its own
    b.push_back(99);
    EXPECT_EQ(items(a), values);
    Small c = std::move(b);
    EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
    EXPECT_EQ(c.size(), values.size() + 1);
    EXPECT_EQ(c.back(), 99u);
    Small d{1, 2, 3, 4, 5};
    d = a;  // a heap-holding vector assigned a shorter one keeps exactly its elements
    EXPECT_EQ(d, a);
    d = std::move(c);
    EXPECT_EQ(d.back(), 99u);
    EXPECT_EQ(d.size(), values.size() + 1);
    d.clear();
    EXPECT_TRUE(d.empty());
  }
}

}  // namespace sp
