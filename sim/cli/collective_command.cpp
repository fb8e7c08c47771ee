#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "models/catalog.hpp"
#include "models/collective/chunk_sim.hpp"
#include "models/collective/fidelity.hpp"
#include "sim/cli/commands.hpp"
#include "sim/output/plot.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/scenario/collective_bench.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace sp::cli {

namespace {

models::CollectiveChoice parse_choice(const CollectiveOptions& o) {
  models::CollectiveChoice c;
  if (o.algorithm != "auto") {
    c.algorithm = models::algorithm_from_name(o.algorithm);
    if (!c.algorithm) throw InputError(SourceLocation{"--algo", 0, 0}, "", "unknown algorithm '" + o.algorithm + "'",
                                       "auto, ring, tree, nvls, sharp, hierarchical, halving_doubling, pairwise");
  }
  if (o.protocol != "auto") {
    c.protocol = models::protocol_from_name(o.protocol);
    if (!c.protocol) throw InputError(SourceLocation{"--proto", 0, 0}, "", "unknown protocol '" + o.protocol + "'",
                                      "auto, LL, LL128, Simple");
  }
  return c;
}

// Simulated against published time, log-log, with the +-10 % band.
bool plot_validation(const std::filesystem::path& png, const output::Table& t) {
  std::string data;
  const auto& pub = t.column("published_time_us").values;
  const auto& sim = t.column("simulated_time_us").values;
  for (std::size_t i = 0; i < t.rows(); ++i) data += fmt::format("{} {}\n", pub[i], sim[i]);
  const std::string script = fmt::format(
      "set terminal pngcairo noenhanced size 700,600 font 'sans,11'\nset output {}\n$d << EOD\n{}EOD\n"
      "set logscale xy\nset grid\nset key top left\nset xrange [5:2e5]\nset yrange [5:2e5]\n"
      "set xlabel 'published time (us)'\nset ylabel 'simulated time (us)'\n"
      "set title 'Collectives: simulated vs published nccl-tests'\n"
      "plot x title 'equal' lc rgb '#888888', 1.1*x title '+-10%' dt 2 lc rgb '#bbbbbb', 0.9*x notitle dt 2 lc rgb "
      "'#bbbbbb', $d using 1:2 title 'measurement' with points pt 7 ps 1.3 lc rgb '#1f77b4'\n",
      output::gnuplot_text(png.string()), data);
  return output::run_gnuplot(script, png.parent_path());
}

}  // namespace

int collective_command(const CollectiveOptions& o) {
  const models::Catalog catalog(models::data_root() / "models");
  if (!o.validate.empty()) {
    const output::Table t = validate_collectives(o.validate, catalog);
    const std::filesystem::path dir = o.out_dir.empty() ? std::string("results/checks") : o.out_dir;
    output::StagedFiles files(dir);
    files.write("collectives.csv", output::to_csv(t));
    const bool plotted = plot_validation(files.stage("collectives.png"), t);
    if (!plotted) files.drop("collectives.png");
    files.commit();
    int outside = 0;
    std::printf("%-9s %-15s %6s %12s %-7s %-13s %10s %10s %7s\n", "platform", "op", "ranks", "bytes", "algo",
                "simulated", "pub GB/s", "sim GB/s", "error");
    for (std::size_t i = 0; i < t.rows(); ++i) {
      const double err = t.column("time_error").values[i];
      const bool ok = std::abs(err) <= t.column("bound").values[i];
      outside += ok ? 0 : 1;
      std::printf("%-9s %-15s %6.0f %12.0f %-7s %-13s %10.1f %10.1f %+6.1f%%%s\n",
                  t.column("platform").text[i].c_str(), t.column("op").text[i].c_str(),
                  t.column("ranks").values[i], t.column("bytes").values[i], t.column("algorithm").text[i].c_str(),
                  t.column("simulated_algorithm").text[i].c_str(), t.column("published_busbw_gbs").values[i],
                  t.column("simulated_busbw_gbs").values[i], 100 * err, ok ? "" : "  OUTSIDE BOUND");
    }
    std::printf("%zu measurements, %d outside their bound; wrote %s/collectives.csv%s\n", t.rows(), outside,
                dir.string().c_str(), plotted ? " and collectives.png" : "");
    return 0;
  }
  const models::Platform platform = load_platform(o.platform, catalog);
  const auto op = models::op_from_name(o.op);
  if (!op) {
    throw InputError(SourceLocation{"--op", 0, 0}, "", "unknown collective '" + o.op + "'",
                     "all_reduce, reduce_scatter, all_gather, broadcast, all_to_all");
  }
  const std::vector<Bytes> sizes = size_range(o.bytes, o.factor);
  const int per_node = platform.accelerators_per_node();
  if (o.gpus < 1 || (o.gpus > per_node && o.gpus % per_node != 0) || (o.gpus < per_node && per_node % o.gpus != 0)) {
    throw InputError(SourceLocation{"--gpus", 0, 0}, "",
                     fmt::format("{} GPUs are not whole {}-GPU nodes of {}", o.gpus, per_node, platform.name));
  }
  if (!platform.reaches(o.gpus)) {
    throw InputError(SourceLocation{"--gpus", 0, 0}, "",
                     fmt::format("{} GPUs span several nodes, but platform '{}' has no scale-out NICs (scale_out.nics_per_node is 0)",
                                 o.gpus, platform.name));
  }
  const auto fidelity = models::fidelity_from_name(o.fidelity);
  if (!fidelity) {
    throw InputError(SourceLocation{"--fidelity", 0, 0}, "", "unknown fidelity '" + o.fidelity + "'",
                     "analytic, flow, chunk");
  }
  // The chunk fidelity simulates every rank and message: refused up front where the largest size
  // asks more than its budget (memory and time grow with ranks x messages), not after the others.
  const bool slow = *fidelity == models::Fidelity::chunk;
  if (slow && o.gpus > 1) {
    const models::Group group = models::packed_group(platform.topology, o.gpus);
    const Bytes largest = *std::max_element(sizes.begin(), sizes.end());
    const std::uint64_t messages = models::chunk_messages_for(platform, group, *op, largest, parse_choice(o));
    if (messages > models::kChunkMessageBudget) {
      throw InputError(SourceLocation{"--fidelity", 0, 0}, "",
                       fmt::format("chunk would play {} messages for {:.0f} B over {} ranks, more than its {} (about "
                                   "1 GB and half a minute)",
                                   messages, largest.value(), o.gpus, models::kChunkMessageBudget),
                       "use --fidelity flow, or fewer --gpus or a smaller --bytes");
    }
  }
  Progress progress(static_cast<int>(sizes.size()), 0, !slow);
  const models::CollectiveChoice choice = parse_choice(o);
  std::vector<CollectiveRow> rows;
  try {
    rows = collective_sweep(platform, *op, o.gpus, sizes, choice, *fidelity, [&](int done) { progress.update(done); });
  } catch (const ModelError& e) {
    // An algorithm or protocol the user named that this platform does not run: the option's fault.
    if (!choice.algorithm && !choice.protocol) throw;
    throw InputError(SourceLocation{choice.algorithm ? "--algo" : "--proto", 0, 0}, "", e.what(),
                     "use --algo auto, or one the platform's algorithms list holds");
  }
  progress.finish(static_cast<int>(rows.size()));
  std::printf("# scalepoint collective: %s on %s, %d ranks on %d node(s), fidelity %s\n", o.op.c_str(),
              platform.name.c_str(), o.gpus, platform.nodes_for(o.gpus), o.fidelity.c_str());
  std::fputs(nccl_tests_table(rows, *op).c_str(), stdout);
  return 0;
}

}  // namespace sp::cli
