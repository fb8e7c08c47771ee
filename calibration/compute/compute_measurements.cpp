#include "calibration/compute/compute_measurements.hpp"

#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/config/quantity.hpp"
#include "sim/core/error.hpp"

namespace sp::calibration {

namespace {

// A GEMM dimension or batch indexes memory: 2^30 and beyond fit no GPU.
constexpr double kMostIndexed = 1 << 30;
// A kernel's time: no kernel is shorter than a nanosecond, and none a benchmark times is longer
// than 1,000 s. Both readers refuse what lies outside (1e308 ms reached the fit as an infinite time).
constexpr double kShortestKernelS = 1e-9, kLongestKernelS = 1e3;

void read_device_line(const std::string& line, const std::string& file, int number, ComputeMeasurements& into) {
  if (line.rfind("# device 0: ", 0) != 0) return;
  into.device = line.substr(12, line.find(',') - 12);
  static const std::regex kSms(R"((\d+) SMs)");
  std::smatch m;
  if (std::regex_search(line, m, kSms)) {
    // The largest GPUs have a few hundred SMs; a count beyond 10^5 is a damaged line.
    const std::optional<std::int64_t> sms = config::parse_plain_integer(m[1]);
    if (!sms || *sms < 1 || *sms > 100'000) {
      throw InputError(SourceLocation{file, number, 0}, "device", "\"" + m[1].str() + " SMs\" is no device's SM count");
    }
    into.units = static_cast<int>(*sms);
  }
}

void read_json_lines(const std::string& text, const std::string& file, ComputeMeasurements& into) {
  for (const config::ConfigNode& row : config::load_json_lines(text, file)) {
    if (!row.has("kind") || row.at("kind").as_string() != "gemm") continue;
    GemmSample g;
    g.file = file;
    g.line = row.location().line;
    g.dtype = row.at("dtype").as_string();
    g.label = row.has("label") ? row.at("label").as_string() : "";
    // The CSV's bounds (kMostIndexed, kShortestKernelS..kLongestKernelS).
    const auto dimension = [&](const char* key) {
      const config::ConfigNode v = row.at(key);
      const double d = static_cast<double>(v.as_positive_int());
      if (d > kMostIndexed) v.fail(fmt::format("must be a positive number up to {:g}", kMostIndexed));
      return d;
    };
    g.m = dimension("m");
    g.n = dimension("n");
    g.k = dimension("k");
    const config::ConfigNode ms = row.at("ms");
    g.seconds = ms.as_positive_number() / 1e3;
    if (!(g.seconds >= kShortestKernelS && g.seconds <= kLongestKernelS)) {
      ms.fail("must be from 0.000001 ms (1 ns) to 1,000,000 ms");
    }
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
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 byte-order mark
    read_device_line(line, file, n, into);
    if (line.rfind('#', 0) == 0 || line.empty()) continue;
    if (first_data == 0) first_data = n;
    body += line + "\n";
  }
  if (first_data == 0) throw InputError(SourceLocation{file, 0, 0}, "", "no header: not a scalepoint-gpu-bench CSV");
  const config::CsvTable t(body, file);
  const bool shaped = t.has_column("m");  // the first version timed squares only, in `size`
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const std::string kind = t.cell(r, "kind");
    // Bounded as well as positive: a GEMM dimension of 1e308 or a time of 1e-300 us passed on to
    // the fit as an infinite or zero time (exit 1, no line).
    const auto positive = [&](const char* column, double most) {
      const double v = t.number(r, column).value_or(0);
      if (!(v > 0 && v <= most)) t.fail(r, column, fmt::format("must be a positive number up to {:g}", most));
      return v;
    };
    const double seconds = positive("time_median_us", kLongestKernelS * 1e6) / 1e6;
    if (seconds < kShortestKernelS) {
      t.fail(r, "time_median_us", "must be at least 0.001 us (1 ns): no kernel is shorter");
    }
    if (kind == "gemm" && !shaped) {
      ++into.untimed_gemms;
    } else if (kind == "gemm") {
      GemmSample g;
      g.file = file;
      g.line = t.line(r) + first_data - 1;
      g.dtype = t.cell(r, "dtype");
      g.label = t.has_column("label") ? t.cell(r, "label") : "";
      g.m = positive("m", kMostIndexed);
      g.n = positive("n", kMostIndexed);
      g.k = positive("k", kMostIndexed);
      g.batch = t.has_column("batch") ? positive("batch", kMostIndexed) : 1;
      g.seconds = seconds;
      into.gemms.push_back(g);
    } else if (kind == "memory") {
      into.copies.push_back(CopySample{positive("bytes", 1e15), seconds});
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
