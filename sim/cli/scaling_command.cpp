// `scalepoint validate --scaling`: multi-node times predicted from a measured time on fewer nodes
// (calibration/mlperf/scaling_validation.hpp), beside the two-parameter throughput curve.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibration/mlperf/scaling_validation.hpp"
#include "sim/cli/commands.hpp"
#include "sim/core/first_seen.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"

namespace sp::cli {

namespace {

output::Table rows_table(const calibration::ScalingReport& rep) {
  std::vector<std::string> bench, system, kind, anchor, rule, layout, anchor_layout, release, anchor_release, software;
  const auto releases = [](const calibration::MlperfResult& r) {
    return fmt::format("{}", fmt::join(calibration::software_releases(r.framework), "+"));
  };
  output::Column n = output::number_column("accelerators", "count", "N", true), nodes = output::number_column("nodes", "count", "", true);
  output::Column gbs = output::number_column("global_batch", "samples", "", true);
  output::Column pub = output::number_column("published_min", "min", "the published score");
  output::Column an = output::number_column("anchor_accelerators", "count", "", true);
  output::Column apub = output::number_column("anchor_published_min", "min", "the anchor's published score, the prediction's start");
  output::Column model = output::number_column("model_min", "min", "the model's expected score at N (fold calibration)");
  output::Column amodel = output::number_column("model_anchor_min", "min", "the model's expected score of the anchor");
  output::Column pred = output::number_column("predicted_min", "min", "anchor_published x model / model_anchor");
  output::Column err = output::number_column("error", "1", "predicted / published - 1");
  output::Column curve = output::number_column("curve_min", "min", "the two-parameter throughput curve from the same anchor");
  output::Column curve_err = output::number_column("curve_error", "1", "");
  output::Column perfect = output::number_column("perfect_min", "min", "perfect scaling with the RCPs' convergence, same anchor");
  output::Column perfect_err = output::number_column("perfect_error", "1", "");
  output::Column logged = output::number_column(
      "model_logged_min", "min", "the model's score at the samples the row's scored runs converged at (empty: not given)");
  output::Column alogged = output::number_column("model_anchor_logged_min", "min", "the same for the anchor");
  output::Column logged_err = output::number_column(
      "error_at_logged_convergence", "1",
      "anchor_published x model_logged / model_anchor_logged / published - 1: the error without either row's "
      "convergence luck");
  output::Column stepped = output::number_column(
      "step_anchored_min", "min",
      "the model's score at the software level that makes its step at the anchor the anchor's logged step (empty: "
      "its logs give none)");
  output::Column stepped_err = output::number_column("step_error", "1", "step_anchored / published - 1");
  output::Column peer = output::number_column(
      "peer_min", "min",
      "not a prediction: the median published score of other submitters' systems of the same kind, N and global batch "
      "(empty: none)");
  output::Column peer_err = output::number_column("peer_error", "1", "peer / published - 1: the spread between submitters");
  output::Column sp_pub = output::number_column("published_speedup", "1", "anchor's published time / published time");
  output::Column sp_pred = output::number_column("predicted_speedup", "1", "model_anchor / model");
  for (const auto& r : rep.rows) {
    bench.push_back(r.row.benchmark);
    system.push_back(r.row.submitter + " " + r.row.system_name);
    kind.push_back(r.kind);
    anchor.push_back(r.anchor.submitter + " " + r.anchor.system_name);
    rule.push_back(r.anchor_rule);
    release.push_back(releases(r.row));
    anchor_release.push_back(releases(r.anchor));
    software.push_back(r.software);
    layout.push_back(r.layout);
    anchor_layout.push_back(r.anchor_layout);
    n.values.push_back(r.row.accelerators);
    nodes.values.push_back(r.row.nodes);
    gbs.values.push_back(static_cast<double>(r.row.global_batch.value_or(0)));
    pub.values.push_back(*r.row.time_to_train_min);
    an.values.push_back(r.anchor.accelerators);
    apub.values.push_back(*r.anchor.time_to_train_min);
    model.values.push_back(r.model_min);
    amodel.values.push_back(r.model_anchor_min);
    pred.values.push_back(r.predicted_min);
    err.values.push_back(r.error());
    curve.values.push_back(r.curve_min);
    curve_err.values.push_back(r.curve_error());
    perfect.values.push_back(r.perfect_min);
    perfect_err.values.push_back(r.perfect_error());
    const double nan = std::nan("");
    logged.values.push_back(r.model_logged_min.value_or(nan));
    alogged.values.push_back(r.model_anchor_logged_min.value_or(nan));
    logged_err.values.push_back(r.error_at_logged_convergence());
    stepped.values.push_back(r.step_anchored_min.value_or(nan));
    stepped_err.values.push_back(r.step_error());
    peer.values.push_back(r.peer_min.value_or(nan));
    peer_err.values.push_back(r.peer_error());
    sp_pub.values.push_back(r.published_speedup());
    sp_pred.values.push_back(r.predicted_speedup());
  }
  output::Table t;
  t.columns = {output::text_column("benchmark", "", bench), output::text_column("system", "", system),
               output::text_column("kind", "catalog kind", kind), n, nodes, gbs, pub,
               output::text_column("anchor", "the row whose published time the prediction starts from", anchor),
               output::text_column("anchor_rule", "how the anchor was chosen", rule),
               output::text_column("release", "the software releases the row's framework names (empty: none)", release),
               output::text_column("anchor_release", "the same for the anchor", anchor_release),
               output::text_column("anchor_software", "same release, another release or release not stated", software), an, apub, model, amodel, pred, err,
               curve, curve_err, perfect, perfect_err, logged, alogged, logged_err, stepped, stepped_err, peer, peer_err, sp_pub, sp_pred,
               output::text_column("layout", "", layout),
               output::text_column("anchor_layout", "", anchor_layout)};
  return t;
}

output::Table summary_table(const calibration::ScalingReport& rep) {
  std::vector<std::string> group;
  output::Column rows{"rows", "count", "", true, {}, {}};
  output::Column med = output::number_column("median_ape_pct", "%", "scalepoint: median absolute percentage error");
  output::Column p90 = output::number_column("p90_ape_pct", "%", "its 90th percentile"), mx = output::number_column("max_ape_pct", "%", "its largest");
  output::Column cmed = output::number_column("curve_median_ape_pct", "%", "the two-parameter throughput curve");
  output::Column cp90 = output::number_column("curve_p90_ape_pct", "%", "");
  output::Column pmed = output::number_column("perfect_median_ape_pct", "%", "perfect scaling with the RCPs' convergence");
  output::Column pp90 = output::number_column("perfect_p90_ape_pct", "%", "");
  output::Column lrows =
      output::number_column("logged_rows", "count", "rows whose and whose anchor's logged convergence is known", true);
  output::Column lmed = output::number_column("logged_median_ape_pct", "%",
                                              "scalepoint at both rows' logged convergence (convergence luck removed)");
  output::Column lp90 = output::number_column("logged_p90_ape_pct", "%", "");
  output::Column vmed = output::number_column(
      "convergence_median_ape_pct", "%",
      "convergence alone: (1 + error) / (1 + error at logged convergence) - 1, what a model exact per sample still misses");
  output::Column vp90 = output::number_column("convergence_p90_ape_pct", "%", "");
  output::Column srows = output::number_column("step_rows", "count", "rows whose anchor's logs give its training step", true);
  output::Column smed = output::number_column("step_median_ape_pct", "%", "scalepoint anchored on the anchor's logged step");
  output::Column sp90 = output::number_column("step_p90_ape_pct", "%", "");
  output::Column smmed = output::number_column("time_anchored_on_step_rows_median_ape_pct", "%",
                                               "scalepoint anchored on the anchor's published time, on the same rows");
  output::Column smp90 = output::number_column("time_anchored_on_step_rows_p90_ape_pct", "%", "");
  output::Column prows = output::number_column(
      "peer_rows", "count", "rows another submitter ran at the same kind, N and global batch", true);
  output::Column pemed = output::number_column(
      "peer_median_ape_pct", "%", "another submitter's published score at the configuration as the prediction: how far apart two systems of it are");
  output::Column pep90 = output::number_column("peer_p90_ape_pct", "%", "");
  output::Column pmmed = output::number_column("model_on_peer_rows_median_ape_pct", "%", "scalepoint on the same rows");
  output::Column pmp90 = output::number_column("model_on_peer_rows_p90_ape_pct", "%", "");
  for (const auto& s : rep.summaries) {
    group.push_back(s.group);
    rows.values.push_back(s.rows);
    med.values.push_back(s.median);
    p90.values.push_back(s.p90);
    mx.values.push_back(s.max);
    cmed.values.push_back(s.curve_median);
    cp90.values.push_back(s.curve_p90);
    pmed.values.push_back(s.perfect_median);
    pp90.values.push_back(s.perfect_p90);
    lrows.values.push_back(s.logged_rows);
    lmed.values.push_back(s.logged_median);
    lp90.values.push_back(s.logged_p90);
    vmed.values.push_back(s.convergence_median);
    vp90.values.push_back(s.convergence_p90);
    srows.values.push_back(s.step_rows);
    smed.values.push_back(s.step_median);
    sp90.values.push_back(s.step_p90);
    smmed.values.push_back(s.step_model_median);
    smp90.values.push_back(s.step_model_p90);
    prows.values.push_back(s.peer_rows);
    pemed.values.push_back(s.peer_median);
    pep90.values.push_back(s.peer_p90);
    pmmed.values.push_back(s.peer_model_median);
    pmp90.values.push_back(s.peer_model_p90);
  }
  output::Table t;
  t.columns = {output::text_column("group", "benchmark, scale, the anchor's submitter or release, or all", group), rows, med, p90, mx, cmed, cp90, pmed, pp90,
               lrows, lmed, lp90, vmed, vp90, srows, smed, sp90, smmed, smp90, prows, pemed, pep90, pmmed, pmp90};
  return t;
}

// Predicted against published speedup over the anchor, log-log, one colour per benchmark: the
// model filled (a circle from the system's own smaller configuration, a triangle from another
// submitter's node), the throughput curve open, the model anchored on the anchor's logged step a
// cross (where its logs give one).
bool plot_speedups(const std::filesystem::path& png, const calibration::ScalingReport& rep) {
  const std::vector<std::string> names = first_seen(rep.rows, [](const calibration::ScalingRow& r) { return r.row.benchmark; });
  std::string data, plots = "x title 'equal' lc rgb '#888888'";
  for (std::size_t b = 0; b < names.size(); ++b) {
    data += fmt::format("$b{} << EOD\n", b);
    for (const auto& r : rep.rows) {
      if (r.row.benchmark != names[b]) continue;
      const bool own = r.anchor_rule.rfind("same submitter", 0) == 0;
      const double stepped = r.step_anchored_min ? *r.anchor.time_to_train_min / *r.step_anchored_min : -1;
      data += fmt::format("{} {} {} {} {}\n", r.published_speedup(), *r.anchor.time_to_train_min / r.predicted_min,
                          *r.anchor.time_to_train_min / r.curve_min, own ? 1 : 0, stepped);
    }
    data += "EOD\n";
    plots += fmt::format(", $b{} using 1:($4 > 0 ? $2 : 1/0) title {} with points pt 7 ps 1.3 lc rgb '{}'"
                         ", $b{} using 1:($4 > 0 ? 1/0 : $2) notitle with points pt 9 ps 1.4 lc rgb '{}'"
                         ", $b{} using 1:3 title {} with points pt 6 ps 1.3 lc rgb '{}'"
                         ", $b{} using 1:($5 > 0 ? $5 : 1/0) notitle with points pt 2 ps 1.4 lc rgb '{}'",
                         b, output::gnuplot_text(names[b] + " scalepoint"), output::series_colour(b), b,
                         output::series_colour(b), b, output::gnuplot_text(names[b] + " curve"),
                         output::series_colour(b), b, output::series_colour(b));
  }
  plots += ", 1/0 title 'triangle: from another submitter''s node' with points pt 9 ps 1.4 lc rgb '#444444'";
  plots += ", 1/0 title 'cross: from the anchor''s logged step' with points pt 2 ps 1.4 lc rgb '#444444'";
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 820,700 font 'sans,11'\nset output {}\n{}"
      "set logscale xy\nset grid\nset key outside bottom center horizontal maxcols 4 font 'sans,9'\n"
      "set xrange [0.8:200]\nset yrange [0.8:200]\n"
      "set xlabel 'published speedup over the anchor (fewer nodes)'\nset ylabel 'predicted speedup'\n"
      "set title 'multi-node MLPerf v4.1 rows from a measured smaller system, the system left out of the fit'\nplot {}\n",
      output::gnuplot_text(png.string()), data, plots);
  return output::run_gnuplot(script, png.parent_path());
}

}  // namespace

int validate_scaling_command(const std::vector<calibration::MlperfResult>& rows, const models::Catalog& catalog,
                             const calibration::PlatformCatalog& platforms, const std::string& out_dir) {
  const auto progress = [](const std::string& s) { std::fprintf(stderr, "\r\033[K%s", s.c_str()); };
  const calibration::ScalingReport rep = calibration::validate_scaling(rows, catalog, platforms, progress);
  std::fprintf(stderr, "\r\033[K");
  const std::filesystem::path dir = out_dir.empty() ? std::string("results/checks") : out_dir;
  output::StagedFiles files(dir);
  files.write("scaling_rows.csv", output::to_csv(rows_table(rep)));
  files.write("scaling_summary.csv", output::to_csv(summary_table(rep)));
  const bool plotted = plot_speedups(files.stage("scaling.png"), rep);
  if (!plotted) files.drop("scaling.png");
  files.commit();

  std::printf("multi-node rows from a measured smaller system, each system left out of the fit (|error| %%):\n");
  std::printf("  %-26s %4s  %21s  %21s  %21s  %24s  %22s\n", "", "rows", "scalepoint med/p90/max",
              "throughput curve med/p90", "perfect + RCP med/p90", "at logged conv. rows/med/p90",
              "convergence alone m/p90");
  for (const auto& s : rep.summaries) {
    std::printf("  %-26s %4d  %6.1f %6.1f %6.1f  %14.1f %6.1f  %14.1f %6.1f  %10d %6.1f %6.1f  %15.1f %6.1f\n",
                s.group.c_str(), s.rows, s.median, s.p90, s.max, s.curve_median, s.curve_p90, s.perfect_median,
                s.perfect_p90, s.logged_rows, s.logged_median, s.logged_p90, s.convergence_median, s.convergence_p90);
  }
  std::printf("\n  anchored on the anchor's logged step instead (run --anchor N=TIME/step), rows whose anchor's logs give it:\n");
  std::printf("  %-26s %4s  %21s  %27s\n", "", "rows", "from the step med/p90", "from the time, same rows m/p90");
  for (const auto& s : rep.summaries) {
    if (s.step_rows == 0) continue;
    std::printf("  %-26s %4d  %14.1f %6.1f  %20.1f %6.1f\n", s.group.c_str(), s.step_rows, s.step_median, s.step_p90,
                s.step_model_median, s.step_model_p90);
  }
  std::printf("\n  another submitter's published time at the same kind, N and global batch taken as the prediction: how far\n"
              "  apart two systems of one configuration are (software, tuning, clocks, runs), rows that have one:\n");
  std::printf("  %-26s %4s  %21s  %27s\n", "", "rows", "peer med/p90", "scalepoint, same rows m/p90");
  for (const auto& s : rep.summaries) {
    if (s.peer_rows == 0) continue;
    std::printf("  %-26s %4d  %14.1f %6.1f  %20.1f %6.1f\n", s.group.c_str(), s.peer_rows, s.peer_median, s.peer_p90,
                s.peer_model_median, s.peer_model_p90);
  }
  std::printf("  %-26s %4d  %14.1f %6.1f\n", "(one-node rows)", rep.one_node_peers.rows, rep.one_node_peers.median,
              rep.one_node_peers.p90);
  std::printf("\n");
  for (const auto& r : rep.rows) {
    const double logged = r.error_at_logged_convergence();
    std::printf("  %-16.16s %5d x %-16.16s %-36.36s from %4d (%-30.30s) %+6.1f%%  curve %+6.1f%%  "
                "at logged conv. %s  %s\n",
                r.row.benchmark.c_str(), r.row.accelerators, r.kind.c_str(),
                (r.row.submitter + " " + r.row.system_name).c_str(), r.anchor.accelerators,
                (r.anchor.submitter + " " + r.anchor.system_name).c_str(), 100 * r.error(), 100 * r.curve_error(),
                std::isnan(logged) ? "     -" : fmt::format("{:+6.1f}%", 100 * logged).c_str(), r.layout.c_str());
  }
  for (const auto& s : rep.skipped) std::printf("skipped %s\n", s.c_str());
  std::printf("wrote %s/{scaling_rows.csv,scaling_summary.csv%s}\n", dir.string().c_str(), plotted ? ",scaling.png" : "");
  return 0;
}

}  // namespace sp::cli
