// validate --transformer: the published Selene runs read, laid out as published and simulated;
// a bad cell named by file, line and column.
#include <gtest/gtest.h>

#include "calibration/transformer/transformer_validation.hpp"
#include "sim/scenario/collective_bench.hpp"
#include "tests/input_error_message.hpp"

namespace sp::calibration {
namespace {

const std::string kHeader =
    "model,layers,hidden,heads,ffn,vocabulary,sequence,tensor,pipeline,virtual_stages,accelerators,global_batch,"
    "micro_batch,recompute,sequence_parallel,measured_iteration_s,source\n";

std::vector<TransformerRun> run(const std::string& rows) {
  const models::Catalog catalog(std::filesystem::path(SP_SOURCE_DIR) / "models");
  return validate_transformers(config::CsvTable(kHeader + rows, "runs.csv"), load_platform("dgx_a100", catalog), catalog);
}

TEST(TransformerValidation, EachRunIsLaidOutAsPublished) {
  const models::Catalog catalog(std::filesystem::path(SP_SOURCE_DIR) / "models");
  const auto runs = validate_transformers(
      config::CsvTable::read(std::string(SP_SOURCE_DIR) + "/calibration/data/transformer/selene_korthikanti2023.csv"),
      load_platform("dgx_a100", catalog), catalog);
  ASSERT_EQ(runs.size(), 8u);
  EXPECT_EQ(runs[0].layout, "TP8 CP1 PP1 DP1 mb4 x1 recompute=full noSP");
  EXPECT_EQ(runs[3].layout, "TP8 CP1 PP8 v3 DP1 mb1 x64 recompute=selective");
  EXPECT_EQ(runs[4].layout, "TP8 CP1 PP35 v3 DP1 mb1 x280 recompute=full noSP");
  for (const auto& r : runs) {
    EXPECT_TRUE(r.fits) << r.model << " " << r.layout;  // Selene ran them on 80 GB
    EXPECT_GT(r.predicted_s, 0);
  }
  // Full recompute without SP is the slower of each pair, as measured (1.42 > 1.10 s, ...).
  for (std::size_t i = 0; i < runs.size(); i += 2) EXPECT_GT(runs[i].predicted_s, runs[i + 1].predicted_s) << runs[i].model;
}

TEST(TransformerValidation, ABadCellIsNamed) {
  const std::string good = "22B,48,6144,64,24576,51200,2048,8,1,1,8,4,4,full,false,1.42,paper\n";
  EXPECT_EQ(run(good).size(), 1u);
  std::string bad = good;
  bad.replace(bad.find("full"), 4, "partial");
  EXPECT_NE(input_error_message([&] { run(bad); }).find("runs.csv:2"), std::string::npos);
  EXPECT_NE(input_error_message([&] { run(bad); }).find("unknown recompute 'partial' (valid: none, selective, full)"),
            std::string::npos);
  bad = good;
  bad.replace(bad.find(",1.42,"), 6, ",-1,");
  EXPECT_NE(input_error_message([&] { run(bad); }).find("measured_iteration_s"), std::string::npos);
  bad = good;  // 1e-300 s an iteration was taken (its error came out 1e300)
  bad.replace(bad.find(",1.42,"), 6, ",1e-300,");
  EXPECT_NE(input_error_message([&] { run(bad); }).find("measured_iteration_s: must be from 0.001 to 86400 s"), std::string::npos);
  bad = good;
  bad.replace(0, bad.find(",8,4,4,"), "22B,48,6144,64,24576,51200,2048,8,1,1");
  bad.replace(bad.find(",8,4,4,"), 7, ",8,3,4,");  // 3 samples are not micro-batches of 4
  EXPECT_NE(input_error_message([&] { run(bad); }).find("no layout"), std::string::npos);
  // What the workload parser refuses is the row's column, at the row: 7 heads do not divide a
  // hidden size of 6144 (the message read "runs.csv:2:10:48: transformer.heads: ...", the generated
  // description's line and column after the row's).
  bad = good;
  bad.replace(bad.find(",64,"), 4, ",7,");
  const std::string heads = input_error_message([&] { run(bad); });
  EXPECT_EQ(heads.rfind("runs.csv:2: heads: must divide hidden", 0), 0u) << heads;
  // A quote or backslash in the model's name is its name, not YAML (it read "YAML syntax error").
  EXPECT_EQ(run("\"22B \"\"big\"\" \\ x\"" + good.substr(3)).size(), 1u);
  const models::Catalog catalog(std::filesystem::path(SP_SOURCE_DIR) / "models");
  EXPECT_NE(input_error_message([&] {
              validate_transformers(config::CsvTable("model,layers\nx,1\n", "runs.csv"), load_platform("dgx_a100", catalog),
                                    catalog);
            }).find("missing column"),
            std::string::npos);
}

}  // namespace
}  // namespace sp::calibration
