// The figures the folder READMEs quote, against the committed results they come from: a model
// change that regenerates the results (the golden and "is current" tests make it) must carry the
// README tables along, or this fails naming the line. Each table is formatted here as the README
// prints it, from the CSV, report or parameter file named beside it in the README.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"

namespace {

const std::string kRoot = SP_SOURCE_DIR;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(kRoot + "/" + path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream s(row);
  std::string c;
  std::getline(s, c, '|');  // before the first bar
  while (std::getline(s, c, '|')) {
    const auto b = c.find_first_not_of(' '), e = c.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : c.substr(b, e - b + 1));
  }
  if (!out.empty() && out.back().empty()) out.pop_back();  // after the last bar
  return out;
}

// Every expected row whose first `key` cells a README table row shares must equal that row;
// returns how many README rows were compared (a table the README lost compares none).
int compare(const std::string& readme, const std::vector<std::string>& expected, std::size_t key) {
  int compared = 0;
  const std::vector<std::string> lines = lines_of(readme);
  for (const std::string& want : expected) {
    const std::vector<std::string> wc = cells_of(want);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].rfind("| ", 0) != 0) continue;
      const std::vector<std::string> lc = cells_of(lines[i]);
      if (lc.size() != wc.size() || !std::equal(wc.begin(), wc.begin() + static_cast<long>(key), lc.begin())) continue;
      EXPECT_EQ(lines[i], want) << readme << ":" << i + 1 << " differs from the committed results";
      ++compared;
    }
  }
  return compared;
}

std::string thousands(double v) {
  std::string digits = fmt::format("{:.0f}", v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string percent(double fraction) { return fmt::format("{:+.1f} %", 100 * fraction); }

TEST(ReadmeFigures, TheSweepBreakEvenTablesAreTheCommittedReports) {
  std::vector<std::string> rows;
  for (const char* sweep : {"fabrics", "oversubscription"}) {
    bool in_table = false;
    for (const std::string& l : lines_of(std::string("results/sweeps/") + sweep + "/report.md")) {
      if (l.rfind("| group", 0) == 0) {
        in_table = true;
      } else if (in_table && l.rfind("|---", 0) != 0) {
        if (l.rfind("| ", 0) != 0) break;
        rows.push_back(l);
      }
    }
  }
  EXPECT_EQ(compare("scenarios/README.md", rows, 1), static_cast<int>(rows.size()));  // every group of both sweeps
}

TEST(ReadmeFigures, TheGoodputPlanIsTheCommittedSummary) {
  const auto t = sp::config::CsvTable::read(kRoot + "/results/goodput/llama3_405b/summary.csv");
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const auto v = [&](const char* c) { return *t.number(i, c); };
    rows.push_back(fmt::format("| {} | {} | {} | {:.1f} | {:.0f} | {:.2f} | {:.1f} | {:.0f} | {:.0f} | {:.3f} | {:.1f} | {:.1f} | {:.2f} | {:.2f} |",
                               thousands(v("accelerators")), thousands(v("global_batch")), t.cell(i, "layout"),
                               v("time_to_train_min") / 1440, v("checkpoint_gb"), v("job_mtbf_h"),
                               v("checkpoint_interval_min"), v("restart_s"), v("interruptions"), v("goodput"),
                               v("effective_time_to_train_min") / 1440, v("effective_time_to_train_p90_min") / 1440,
                               v("e_prime"), v("effective_e_prime")));
  }
  EXPECT_EQ(compare("scenarios/README.md", rows, 1), 4);
}

TEST(ReadmeFigures, TheSharedFabricTableIsTheCommittedClusterRun) {
  const auto t = sp::config::CsvTable::read(kRoot + "/results/clusters/shared_fat_tree/cluster.csv");
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (t.cell(i, "job") != "bert") continue;
    const auto v = [&](const char* c) { return *t.number(i, c); };
    const double slower = v("slowdown") - 1;
    rows.push_back(fmt::format("| {} | {} | {} | {:.2f} | {:.2f} | {} | {:.1f} % | {:.3f} | {:.3f} |", t.cell(i, "placement"),
                               t.cell(i, "accelerators"), t.cell(i, "leaves"), 1000 * v("step_time_alone_s"),
                               1000 * v("step_time_together_s"), std::abs(slower) < 5e-4 ? "0 %" : percent(slower),
                               100 * v("busiest_uplink_utilization"), v("time_to_train_alone_min"),
                               v("time_to_train_together_min")));
  }
  EXPECT_EQ(compare("scenarios/README.md", rows, 2), 6);  // BERT's rows the README shows
}

TEST(ReadmeFigures, TheTransformerTableIsTheCommittedValidation) {
  const auto t = sp::config::CsvTable::read(kRoot + "/results/validation/transformer_rows.csv");
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const auto v = [&](const char* c) { return t.number(i, c); };
    const std::string published = v("published_memory_gb") ? fmt::format("{:.1f}", *v("published_memory_gb")) : "-";
    const std::string memory_error = v("memory_error") ? percent(*v("memory_error")) : "-";
    rows.push_back(fmt::format("| {} | {} | {} | {:.2f} | {:.2f} | {} | {:.1f} | {} | {} |", t.cell(i, "model"),
                               t.cell(i, "layout"), t.cell(i, "accelerators"), *v("measured_iteration_s"),
                               *v("predicted_iteration_s"), percent(*v("error")), *v("model_memory_gb"), published,
                               memory_error));
  }
  EXPECT_EQ(compare("scenarios/README.md", rows, 2), 8);
  // The sentence under the table quotes the summary's mean and max.
  const auto summary = sp::config::CsvTable::read(kRoot + "/results/validation/transformer_summary.csv");
  const std::string sentence = fmt::format("Mean |error| {:.1f} %, max {:.1f} %", 100 * *summary.number(0, "mean_abs_error"),
                                           100 * *summary.number(0, "max_abs_error"));
  int quoted = 0;
  for (const std::string& l : lines_of("scenarios/README.md")) quoted += l.find(sentence) != std::string::npos;
  EXPECT_EQ(quoted, 1) << "scenarios/README.md should say: " << sentence;
}

const std::map<std::string, std::string> kGroupNames{
    {"bert", "BERT"}, {"llama2_70b_lora", "Llama2-70B LoRA"}, {"retinanet", "RetinaNet"},
    {"stable_diffusion", "Stable Diffusion"}, {"N<=8", "N <= 8"}, {"N=9-64", "N = 9-64"}, {"N>64", "N > 64"}};

std::string group_label(const std::string& group, int rows) {
  const auto it = kGroupNames.find(group);
  std::string name = it != kGroupNames.end() ? it->second : group;
  if (name.rfind("kind ", 0) == 0) name = name.substr(5);
  return fmt::format("{} ({})", name, rows);
}

TEST(ReadmeFigures, TheScalingTableIsTheCommittedSummary) {
  const auto t = sp::config::CsvTable::read(kRoot + "/results/validation/scaling_summary.csv");
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    std::string row = "| " + group_label(t.cell(i, "group"), static_cast<int>(*t.integer(i, "rows"))) + " |";
    for (const char* c : {"median_ape_pct", "p90_ape_pct", "max_ape_pct", "curve_median_ape_pct", "curve_p90_ape_pct",
                          "perfect_median_ape_pct", "perfect_p90_ape_pct", "logged_median_ape_pct", "logged_p90_ape_pct",
                          "convergence_median_ape_pct", "convergence_p90_ape_pct"}) {
      row += fmt::format(" {:.1f} |", *t.number(i, c));
    }
    rows.push_back(row);
  }
  EXPECT_EQ(compare("calibration/README.md", rows, 1), static_cast<int>(rows.size()));  // every group
}

TEST(ReadmeFigures, TheCalibrationAccuracyTableIsTheCommittedParameterFile) {
  const auto params = sp::config::load_file(kRoot + "/calibration/params/mlperf_v4.1.yaml");
  const auto in_sample = params.at("in_sample");
  std::vector<std::string> rows;
  for (const auto& [group, first] : in_sample.entries()) {
    std::string row = "| " + group_label(group, static_cast<int>(first.at("rows").as_int())) + " |";
    for (const char* block : {"in_sample", "leave_one_system_out", "leave_one_kind_out"}) {
      const auto s = params.at(block).at(group);
      row += fmt::format(" {:.1f} | {:.1f} | {:.1f} | {:.0f} % |", s.at("median").as_number(), s.at("p90").as_number(),
                         s.at("max").as_number(), std::round(100 * s.at("in_p10_p90").as_number()));
    }
    rows.push_back(row);
  }
  EXPECT_EQ(compare("calibration/README.md", rows, 1), static_cast<int>(rows.size()));  // every group the fit reports
}

}  // namespace
