#include "calibration/compute/compute_measurements.hpp"

#include <regex>
#include <sstream>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration {

namespace {

void read_device_line(const std::string& line, ComputeMeasurements& into) {
  if (line.rfind("# device 0: ", 0) != 0) return;
  into.device = line.substr(12, line.find(',') - 12);
  std::smatch m;
  if (std::regex_search(line, m, std::regex(R"((\d+) SMs)"))) into.units = std::stoi(m[1]);
}

void read_json_lines(const std::string& text, const std::string& file, ComputeMeasurements& into) {
  for (const config::ConfigNode& row : config::load_json_lines(text, file)) {
    if (!row.has("kind") || row.at("kind").as_string() != "gemm") continue;
    GemmSample g;
    g.file = file;
    g.line = row.location().line;
    g.dtype = row.at("dtype").as_string();
    g.label = row.has("label") ? row.at("label").as_string() : "";
    g.m = static_cast<double>(row.at("m").as_positive_int());
    g.n = static_cast<double>(row.at("n").as_positive_int());
    g.k = static_cast<double>(row.at("k").as_positive_int());
    g.seconds = row.at("ms").as_positive_number() / 1e3;
    into.gemms.push_back(g);
  }
}

void read_bench_csv(const std::string& text, const std::string& file, ComputeMeasurements& into) {
  // '#' lines carry the metadata; blank them so the CSV reader's line numbers stay the file's.
  std::string body, line;
  std::istringstream in(text);
  int first_data = 0, n = 0;
  while (std::getline(in, line)) {
    ++n;
    read_device_line(line, into);
    if (line.rfind('#', 0) == 0 || line.empty()) continue;
    if (first_data == 0) first_data = n;
    body += line + "\n";
  }
  if (first_data == 0) throw InputError(SourceLocation{file, 0, 0}, "", "no header: not a scalepoint-gpu-bench CSV");
  const config::CsvTable t(body, file);
  const bool shaped = t.has_column("m");  // the first version timed squares only, in `size`
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const std::string kind = t.cell(r, "kind");
    const auto positive = [&](const char* column) {
      const double v = t.number(r, column).value_or(0);
      if (!(v > 0)) t.fail(r, column, "must be a positive number");
      return v;
    };
    const double seconds = positive("time_median_us") / 1e6;
    if (kind == "gemm" && !shaped) {
      ++into.untimed_gemms;
    } else if (kind == "gemm") {
      GemmSample g;
      g.file = file;
      g.line = t.line(r) + first_data - 1;
      g.dtype = t.cell(r, "dtype");
      g.label = t.has_column("label") ? t.cell(r, "label") : "";
      g.m = positive("m");
      g.n = positive("n");
      g.k = positive("k");
      g.batch = t.has_column("batch") ? positive("batch") : 1;
      g.seconds = seconds;
      into.gemms.push_back(g);
    } else if (kind == "memory") {
      into.copies.push_back(CopySample{positive("bytes"), seconds});
    } else if (kind == "latency" && t.number(r, "bytes").value_or(0) == 0) {
      into.kernel_seconds.push_back(seconds);
    }
  }
}

}  // namespace

void read_compute_measurements(const std::string& text, const std::string& file, ComputeMeasurements& into) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    read_json_lines(text, file, into);
  } else {
    read_bench_csv(text, file, into);
  }
}

}  // namespace sp::calibration
