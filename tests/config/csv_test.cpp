#include <gtest/gtest.h>

#include "sim/config/csv.hpp"
#include "sim/core/error.hpp"

namespace sp::config {

TEST(Csv, AControlCharacterInACellIsShownNotPrinted) {
  // An error message is one terminal line: a newline or escape from the input shows as \xNN.
  const CsvTable t(std::string("a\n\"x\ny\033z\"\n", 10), "c.csv");
  try {
    t.number(0, "a");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "c.csv:2: a: \"x\\x0ay\\x1bz\" is not a number");
  }
  // A NUL is refused where it stands: a name read up to it would be another name.
  try {
    const CsvTable nul(std::string("a\n\"x\ny\033z\0\"\n", 11), "c.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "c.csv:3:4: holds a NUL byte; a CSV file is text");
  }
}

TEST(Csv, QuotedFieldsAndNumbers) {
  const CsvTable t("a,b,c\n1,\"x, \"\"y\"\"\",\n\n2.5,z,7\n", "t.csv");
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.cell(0, "b"), "x, \"y\"");
  EXPECT_EQ(t.number(0, "c"), std::nullopt);
  EXPECT_EQ(t.number(1, "a"), 2.5);
  EXPECT_EQ(t.integer(1, "c"), 7);
  EXPECT_EQ(t.line(1), 4);  // the blank line 3 is skipped but counted
}

TEST(Csv, AByteOrderMarkIsNotPartOfTheFirstColumnsName) {
  const CsvTable t("\xEF\xBB\xBF" "benchmark,n\nbert,8\n", "excel.csv");
  EXPECT_EQ(t.cell(0, "benchmark"), "bert");
  EXPECT_EQ(t.integer(0, "n"), 8);
}

TEST(Csv, ErrorsNameFileLineAndColumn) {
  const CsvTable t("a,b\n1,x\n", "t.csv");
  try {
    t.number(0, "b");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t.csv:2: b: \"x\" is not a number");
  }
  EXPECT_THROW(t.cell(0, "nope"), InputError);
  // An underflow is a tiny number (the column's range check judges it), an overflow is no number.
  const CsvTable tiny("a,b\n1e-310,1e400\n", "r.csv");
  EXPECT_EQ(*tiny.number(0, "a"), 1e-310);  // subnormal: strtod says ERANGE
  EXPECT_THROW(tiny.number(0, "b"), InputError);
  EXPECT_THROW(CsvTable("a,b\n1\n", "short.csv"), InputError);
  EXPECT_THROW(CsvTable("a\n\"open\n", "quote.csv"), InputError);
  EXPECT_THROW(CsvTable("", "empty.csv"), InputError);
  try {
    CsvTable("jobs,speedup,jobs\n1,2,3\n", "twice.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "twice.csv:1: jobs: column appears twice in the header");
  }
}

}  // namespace sp::config
