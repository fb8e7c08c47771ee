// `scalepoint calibrate network`: piecewise alpha-beta segments per tier from measured
// collective times, written as a platform (the base platform plus a `measured` section).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "calibration/network/alpha_beta_fit.hpp"
#include "calibration/network/measurements.hpp"
#include "sim/cli/commands.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/core/sha256.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/scenario/collective_bench.hpp"

namespace sp::cli {

namespace {

// Which tier a measurement isolates: all its ranks on one node (intra: the node's scale-up
// or shared memory), or one rank per node (inter: the scale-out fabric). Groups that span
// both say nothing about either alone and are left out.
std::string tier_of(const calibration::Measurement& m, const std::optional<std::string>& forced) {
  const std::string scope = forced ? *forced : m.scope;
  if (scope == "intra") return "scale_up";
  if (scope == "inter") return "scale_out";
  if (m.nodes == 1) return "scale_up";
  if (m.nodes > 1 && m.nodes == m.ranks) return "scale_out";
  return "";
}

using FitKey = std::pair<std::string, int>;  // tier, ranks at that tier

struct TierFit {
  std::vector<calibration::Measurement> rows;
  calibration::AlphaBetaFit fit, one_line;
};

std::vector<calibration::FitPoint> points_of(const std::vector<calibration::Measurement>& rows) {
  std::vector<calibration::FitPoint> pts;
  for (const auto& m : rows) {
    calibration::FitPoint p;
    p.point_to_point = m.op == "ping_pong";
    if (!p.point_to_point) p.op = *models::op_from_name(m.op);
    p.ranks = m.ranks;
    p.bytes = m.bytes;
    p.time_s = m.time_us * 1e-6;
    pts.push_back(p);
  }
  return pts;
}

// `inputs`: file name and the SHA-256 of its bytes, in the order given.
std::string fragment_yaml(const std::map<FitKey, TierFit>& fits,
                          const std::vector<std::pair<std::string, std::string>>& inputs, const std::string& op) {
  std::string y = "{provenance: {fitted_by: \"scalepoint calibrate network\", op: " + op + ", inputs: [";
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    y += fmt::format("{}{{file: \"{}\", sha256: \"{}\"}}", i ? ", " : "", inputs[i].first, inputs[i].second);
  }
  y += "]}";
  std::string tier_open;
  for (const auto& [key, f] : fits) {
    if (key.first != tier_open) {
      y += (tier_open.empty() ? "" : "]") + std::string(", ") + key.first + ": [";
      tier_open = key.first;
    } else {
      y += ", ";
    }
    for (std::size_t i = 0; i < f.fit.segments.size(); ++i) {
      const auto& s = f.fit.segments[i];
      // The first segment covers every smaller size too.
      y += fmt::format("{}{{ranks: {}, from: \"{} B\", latency: \"{:.6g} us\", bandwidth: \"{:.6g} GB/s\"}}",
                       i ? ", " : "", key.second, i == 0 ? 0.0 : s.from_bytes, s.alpha_s * 1e6,
                       s.beta_bytes_per_s / 1e9);
    }
  }
  return y + "]}";
}

void print_fit(const FitKey& key, const TierFit& f) {
  std::printf("%s, %d ranks: %zu points, %zu segment(s), R^2 %.4f, largest error %.1f %% (one alpha-beta line: %s)\n",
              key.first.c_str(), key.second, f.rows.size(), f.fit.segments.size(), f.fit.r_squared,
              100 * f.fit.max_abs_relative_error,
              f.one_line.ok ? fmt::format("{:.1f} %", 100 * f.one_line.max_abs_relative_error).c_str() : "no fit");
  for (const auto& s : f.fit.segments) {
    std::printf("  %12.0f .. %12.0f B  alpha %9.3f us%s  beta %9.3f GB/s  (%d points)\n", s.from_bytes, s.to_bytes,
                s.alpha_s * 1e6, s.alpha_resolved ? "" : " (below noise)", s.beta_bytes_per_s / 1e9, s.points);
  }
  std::printf("  %-14s %5s %12s %12s %12s %8s %8s\n", "op", "ranks", "bytes", "measured_us", "fitted_us", "error_%",
              "line_%");
  for (std::size_t i = 0; i < f.rows.size(); ++i) {
    const auto& m = f.rows[i];
    std::printf("  %-14s %5d %12.0f %12.3f %12.3f %8.1f %8.1f\n", m.op.c_str(), m.ranks, m.bytes, m.time_us,
                f.fit.predicted_s[i] * 1e6, 100 * f.fit.relative_error[i],
                f.one_line.ok ? 100 * f.one_line.relative_error[i] : NAN);
  }
}

// The measured table with both fits, and a plot of them against size.
void write_report(output::StagedFiles& files, const std::map<FitKey, TierFit>& fits) {
  const std::filesystem::path& dir = files.dir();
  std::string csv = "tier,op,ranks,bytes,measured_us,fitted_us,fitted_error,one_line_us,one_line_error\n";
  std::string data, plots;
  int series = 0;
  for (const auto& [key, f] : fits) {
    const std::string& tier = key.first;
    for (std::size_t i = 0; i < f.rows.size(); ++i) {
      const auto& m = f.rows[i];
      const double line = f.one_line.ok ? f.one_line.predicted_s[i] * 1e6 : NAN;
      csv += fmt::format("{},{},{},{},{:.4f},{:.4f},{:.5f},{:.4f},{:.5f}\n", tier, m.op, m.ranks, m.bytes, m.time_us,
                         f.fit.predicted_s[i] * 1e6, f.fit.relative_error[i], line,
                         f.one_line.ok ? f.one_line.relative_error[i] : NAN);
    }
    std::map<int, std::vector<std::size_t>> by_ranks;
    for (std::size_t i = 0; i < f.rows.size(); ++i) by_ranks[f.rows[i].ranks].push_back(i);
    for (const auto& [ranks, idx] : by_ranks) {
      data += fmt::format("$d{} << EOD\n", series);
      for (std::size_t i : idx) {
        data += fmt::format("{} {} {} {}\n", f.rows[i].bytes, f.rows[i].time_us, f.fit.predicted_s[i] * 1e6,
                            f.one_line.ok ? f.one_line.predicted_s[i] * 1e6 : NAN);
      }
      data += "EOD\n";
      const std::string label = fmt::format("{} {} ranks", tier, ranks);
      plots += fmt::format("{}$d{} using 1:2 title {} with points pt 7 lc {}, "
                           "$d{} using 1:3 title 'segments' with lines lw 2 lc {}, "
                           "$d{} using 1:4 title 'one alpha-beta line' with lines dt 2 lc {}",
                           plots.empty() ? "" : ", ", series, output::gnuplot_text(label + " measured"), series + 1, series, series + 1, series,
                           series + 1);
      ++series;
    }
  }
  files.write("network_fit.csv", csv);
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 900,600 font 'sans,11'\nset output {}\n{}"
      "set logscale xy\nset grid\nset key top left\nset xlabel 'message size (bytes, nccl-tests convention)'\n"
      "set ylabel 'time (us)'\nset title 'measured collective times and the fitted alpha-beta segments'\nplot {}\n",
      output::gnuplot_text(files.stage("network_fit.png").string()), data, plots);
  if (!output::run_gnuplot(script, dir)) files.drop("network_fit.png");
  files.commit();
}

}  // namespace

int calibrate_network_command(const CalibrateNetworkOptions& o) {
  // Every path is checked before anything is fitted or written: a bad --base or --report is the
  // input's fault, not something to find after the fit printed its tables and wrote --out.
  const std::filesystem::path base = find_platform_file(o.base, {"--base", 0, 0});
  const models::Catalog catalog(models::data_root() / "models");
  // The base must be a platform itself, said of its own file and line before the fit runs (a
  // cluster scenario passed as --base was blamed on the --out file, after the fit's tables).
  models::parse_platform(config::load_file(base.string()), catalog);
  output::refuse_output_over_input(o.out, o.inputs);
  std::optional<output::StagedFiles> report;
  if (!o.report_dir.empty()) report.emplace(o.report_dir, "--report");
  calibration::MeasurementDefaults defaults;
  if (!o.input_op.empty()) defaults.op = o.input_op;
  if (o.ranks > 0) defaults.ranks = o.ranks;
  if (!o.scope.empty()) defaults.scope = o.scope;
  std::map<FitKey, TierFit> fits;
  int left_out = 0;
  std::vector<std::pair<std::string, std::string>> hashed;  // each input read once
  for (const std::string& file : o.inputs) {
    const std::string text = config::read_text_file(file);
    hashed.emplace_back(file, sha256_hex(text));
    for (const auto& m : calibration::parse_measurements(text, file, defaults)) {
      if (m.op != o.op) continue;
      const std::string tier = tier_of(m, defaults.scope);
      if (tier.empty() || m.ranks < 2) {
        ++left_out;
        continue;
      }
      // Segments per group size: oversubscribed or NUMA-split ranks share bandwidth differently.
      fits[{tier, tier == "scale_out" ? (m.nodes > 0 ? m.nodes : m.ranks) : m.ranks}].rows.push_back(m);
    }
  }
  if (fits.empty()) {
    throw InputError(SourceLocation{"--input", 0, 0}, "",
                     "no " + o.op + " measurement inside one node or across nodes one rank per node",
                     "measure with scalepoint-bench, or pass --scope for files that do not say");
  }
  // The segment search tries every split of the sorted sizes (quadratic): 8,000 rows of one group
  // took over a minute. A sweep of sizes is some tens of them (scalepoint-bench 8 B..1 GiB: 28).
  constexpr std::size_t kMaxSizesPerGroup = 1'000;
  // What the measurements of one group (tier, ranks) cannot give: the input's fault, said of it.
  const auto group_error = [](const FitKey& key, const std::string& message, const std::string& hint) {
    return InputError(SourceLocation{"--input", 0, 0}, "", fmt::format("{}, {} ranks: {}", key.first, key.second, message),
                      hint);
  };
  for (const auto& [key, f] : fits) {
    if (f.rows.size() > kMaxSizesPerGroup) {
      throw group_error(key, fmt::format("{} measurements, more than the {} a fit takes", f.rows.size(), kMaxSizesPerGroup),
                        "measure each size once (or a few times) over a range of sizes");
    }
  }
  for (auto& [key, f] : fits) {
    calibration::AlphaBetaOptions opt;
    opt.max_segments = o.max_segments;
    opt.segments = o.segments;
    f.fit = calibration::fit_alpha_beta(points_of(f.rows), opt);
    // Two parameters a segment: with fewer than 3 sizes per segment nothing checks the line.
    if (f.rows.size() < 3 * f.fit.segments.size() || f.rows.size() < 6) {
      warn({"--input", 0, 0}, "",
           fmt::format("{}, {} ranks: {} measured sizes for {} segment(s); the fit is barely determined (measure "
                       "a range of sizes, e.g. scalepoint-bench 8 B..1 GiB)",
                       key.first, key.second, f.rows.size(), f.fit.segments.size()));
    }
    // The measurements cannot carry the line asked of them (sizes all alike, more segments than
    // sizes): the input's fault, said of the group it is in.
    if (!f.fit.ok) {
      throw group_error(key, f.fit.message, "measure a range of sizes (scalepoint-bench 8 B..1 GiB) or ask for fewer --segments");
    }
    // Fitted, but not a network: times that do not grow with the bytes give a bandwidth of
    // petabytes a second (a review wrote 6e14 GB/s), a stalled run a step of seconds. The fastest
    // links carry some TB/s (NVLink 5: 1.8 TB/s a GPU); no collective step takes a second.
    constexpr double kFastestBytesPerS = 100e12, kLongestStepS = 1.0;  // the message states both
    for (const calibration::AlphaBetaSegment& seg : f.fit.segments) {
      if (seg.beta_bytes_per_s > kFastestBytesPerS || seg.alpha_s > kLongestStepS) {
        throw group_error(key,
                          fmt::format("the measurements from {:.0f} to {:.0f} B give {:.3g} GB/s and {:.3g} us a step, no "
                                      "network's (at most 100 TB/s, 1 s)",
                                      seg.from_bytes, seg.to_bytes, seg.beta_bytes_per_s / 1e9, seg.alpha_s * 1e6),
                          "check that the times grow with the bytes (a column swapped, a unit)");
      }
    }
    calibration::AlphaBetaOptions line;
    line.segments = 1;
    f.one_line = calibration::fit_alpha_beta(points_of(f.rows), line);
    print_fit(key, f);
  }
  if (left_out > 0) std::printf("left out %d %s rows that span nodes and ranks inside them\n", left_out, o.op.c_str());

  // The base platform with the segments: a file scenarios and `collective --platform` can use.
  const std::string name = config::load_file(base.string()).at("name").as_string() + " (measured)";
  const config::ConfigNode platform = config::load_file(
      base.string(), {config::Override{"measured", fragment_yaml(fits, hashed, o.op), "measured=..."},
                      config::Override{"name", "\"" + name + "\"", "name=..."}});
  std::string text = "# Written by: scalepoint calibrate network --base " + o.base + " --out " + o.out;
  for (const auto& in : o.inputs) text += " --input " + in;
  text += "\n# The base platform's values with the measured segments (models/network/topology.hpp,\n"
          "# MeasuredSegment); see the base platform (" + o.base + ") for the sources of the rest.\n";
  text += platform.dump() + "\n";
  // It must load as a platform before it is written.
  models::parse_platform(config::load_string(text, o.out), catalog);
  const std::filesystem::path out(o.out);
  output::StagedFiles files(out.parent_path().empty() ? std::filesystem::path(".") : out.parent_path());
  files.write(out.filename().string(), text);
  files.commit();
  if (report) write_report(*report, fits);
  std::printf("wrote %s%s\n", o.out.c_str(),
              o.report_dir.empty() ? "" : (" and " + o.report_dir + "/network_fit.{csv,png}").c_str());
  return 0;
}

}  // namespace sp::cli
