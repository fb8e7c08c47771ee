// scalepoint: the command-line front end. Each subcommand is one library call; this file only
// parses arguments, prints, and maps errors to exit codes (0 ok, 1 model/internal error, 2 bad
// input). No other code in the project decides how the process ends.
#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/cli/commands.hpp"
#include "sim/config/config_node.hpp"
#include "sim/core/error.hpp"

int main(int argc, char** argv) {
  // Past a file-size limit, let write() fail with EFBIG (a message, what was finished intact)
  // rather than the default SIGXFSZ that kills the process mid-row.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"scalepoint: discrete-event simulator of multi-GPU training scaling"};
  // Seeds are non-negative 64-bit integers: checked on the text, since a negative one would wrap
  // and one past 2^63 - 1 would be clamped to it silently by the conversion.
  const CLI::Validator kSeedRange(
      [](const std::string& text) -> std::string {
        long long v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size() || v < 0) {
          return "a seed is an integer from 0 to " + std::to_string(std::numeric_limits<long long>::max()) + ", not " + text;
        }
        return {};
      },
      "SEED");
  app.set_version_flag("--version", std::string(SCALEPOINT_VERSION));
  app.require_subcommand(1);

  sp::cli::RunOptions run;
  sp::cli::ColocateOptions colocate;
  CLI::App* colocate_cmd = app.add_subcommand("colocate", "K small trainings on one accelerator, per sharing strategy");
  colocate_cmd->add_option("scenario", colocate.scenario, "co-location scenario YAML (scenarios/colocation/)");
  colocate_cmd->add_option("--validate", colocate.validate,
                           "compare with published speedups (calibration/data/colocation/hfta_pointnet.csv)");
  colocate_cmd->add_option("--out,-o", colocate.out_dir, "output folder (default results/<name>; the committed ones are regenerated with --out)");
  colocate_cmd->add_option("--set", colocate.overrides, "override a key before parsing: key.path=value");
  colocate_cmd->add_flag("--quiet,-q", colocate.quiet, "print nothing but errors");
  sp::cli::ClusterOptions cluster;
  CLI::App* cluster_cmd = app.add_subcommand("cluster", "several jobs on one fat tree: placement and neighbours");
  cluster_cmd->add_option("scenario", cluster.scenario, "cluster scenario YAML (scenarios/clusters/)")->required();
  cluster_cmd->add_option("--out,-o", cluster.out_dir, "output folder (default results/<name>; the committed ones are regenerated with --out)");
  cluster_cmd->add_option("--set", cluster.overrides, "override a key before parsing: key.path=value");
  cluster_cmd->add_flag("--quiet,-q", cluster.quiet, "print nothing but errors");
  cluster_cmd->add_flag("!--no-timelines", cluster.timelines, "skip cluster_timeline.json");
  CLI::App* run_cmd = app.add_subcommand("run", "simulate a scenario over its accelerator counts");
  run_cmd->add_option("scenario", run.scenario, "scenario YAML file")->required();
  run_cmd->add_option("--out,-o", run.out_dir, "output folder (default results/<scenario name>)");
  run_cmd->add_option("--set", run.overrides, "override a key before parsing: key.path=value")
      ->take_all()
      ->allow_extra_args(false);
  run_cmd->add_option("--seed", run.seed, "random seed (overrides the scenario's seed)")->check(kSeedRange);
  run_cmd->add_option("--samples", run.samples, "Monte Carlo replicates for p10/p50/p90 (default: the scenario's, 100)");
  run_cmd->add_option("--platform", run.platform,
                      "replace the scenario's platform (a name in scenarios/platforms, or a file such as a "
                      "calibrate network output)");
  run_cmd->add_option("--anchor", run.anchor,
                      "a measured time to train at one accelerator count, N=TIME (e.g. 8=28.2min), or its steady "
                      "step, N=TIME/step (e.g. 8=3.68s/step): sets the system's software level before the scaling "
                      "is predicted (the scenario's anchor key)");
  run_cmd->add_flag("--quiet,-q", run.quiet, "print nothing but errors");
  run_cmd->add_flag("!--no-timelines", run.timelines, "write no timeline_N*.json or run_timeline_N*.json");

  sp::cli::CollectiveOptions coll;
  CLI::App* coll_cmd = app.add_subcommand(
      "collective", "one collective over a range of sizes, printed like nccl-tests (or --validate)");
  coll_cmd->add_option("--platform,-p", coll.platform, "platform name in scenarios/platforms, or a file")
      ->capture_default_str();
  coll_cmd->add_option("--op", coll.op, "all_reduce | reduce_scatter | all_gather | broadcast | all_to_all")
      ->capture_default_str();
  coll_cmd->add_option("--gpus,-n", coll.gpus, "ranks in the collective")->capture_default_str()->check(CLI::Range(1, 1000000000));
  coll_cmd->add_option("--bytes,-b", coll.bytes, "size range MIN:MAX, e.g. 8B:8GiB")->capture_default_str();
  coll_cmd->add_option("--factor,-f", coll.factor, "size step factor")->capture_default_str();
  coll_cmd->add_option("--algo", coll.algorithm, "auto | ring | tree | nvls | sharp | hierarchical | halving_doubling")
      ->capture_default_str();
  coll_cmd->add_option("--proto", coll.protocol, "auto | LL | LL128 | Simple")->capture_default_str();
  coll_cmd->add_option("--fidelity", coll.fidelity, "analytic | flow | chunk")->capture_default_str();
  coll_cmd->add_option("--validate", coll.validate,
                       "compare with published measurements (e.g. calibration/data/nccl_published.csv)");
  coll_cmd->add_option("--out,-o", coll.out_dir, "folder for the validation table and plot (default results/checks; the committed results/validation with --out)");

  sp::cli::AnalyzeOptions analyze;
  CLI::App* analyze_cmd =
      app.add_subcommand("analyze", "speedup, E', K-means clusters and equilibrium points of published MLPerf times");
  analyze_cmd->add_option("--data", analyze.data, "MLPerf results CSV (e.g. calibration/data/mlperf/results_v4.1.csv)")
      ->required();
  analyze_cmd->add_option("--out,-o", analyze.out_dir, "output folder (default results/analysis)");
  analyze_cmd->add_option("--k", analyze.k, "clusters per benchmark (default: chosen by silhouette)");
  analyze_cmd->add_option("--seed", analyze.seed, "seed of the K-means restarts")->capture_default_str()->check(kSeedRange);

  sp::cli::PredictOptions predict;
  CLI::App* predict_cmd = app.add_subcommand("predict", "time to train of every system in a results-style CSV");
  predict_cmd->add_option("--systems", predict.systems,
                          "CSV with benchmark, accelerator, accelerators_per_node, nodes, accelerators_total, "
                          "global_batch_size (may be empty); optional tensor_parallel, context_parallel, pipeline_parallel (the "
                          "layout the system runs; empty: the workload's rule), round (the MLPerf round whose reference "
                          "convergence applies, e.g. 5.0; empty: the workload file's), host_processor (its vendor "
                          "prices the collectives' steps across nodes, as NCCL does; empty: the platform's host_cpu) "
                          "and clock_boost (the nvidia-smi boost-slider --vboost setting it runs at; empty: its "
                          "workload's reference configurations')")
      ->required();
  predict_cmd->add_option("--out,-o", predict.out, "output CSV")->required();
  predict_cmd->add_option("--samples", predict.samples, "Monte Carlo replicates for p10/p90")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  predict_cmd->add_option("--seed", predict.seed, "random seed")->capture_default_str()->check(kSeedRange);

  sp::cli::ValidateOptions validate;
  CLI::App* validate_cmd = app.add_subcommand("validate", "predict every published MLPerf time and compare");
  validate_cmd->add_option("--data", validate.data, "MLPerf results CSV");
  CLI::Option* validate_transformer = validate_cmd->add_option(
      "--transformer", validate.transformer,
      "published transformer runs (calibration/data/transformer/selene_korthikanti2023.csv) instead of MLPerf rows");
  validate_cmd->add_option("--platform", validate.platform, "with --transformer: their platform (default dgx_a100)")
      ->needs(validate_transformer);
  validate_cmd->add_option("--out,-o", validate.out_dir, "output folder (default results/checks; the committed results/validation with --out)");
  CLI::Option* validate_loo = validate_cmd->add_flag("--loo", validate.loo,
                         "refit without each system in turn and predict it (files mlperf_loo_*)");
  CLI::Option* validate_loko = validate_cmd->add_flag("--loko", validate.loko,
                         "refit without each accelerator kind in turn and predict it (files mlperf_loko_*)")
      ->excludes(validate_loo);
  validate_cmd->add_flag("--scaling", validate.scaling,
                         "multi-node rows predicted from a measured smaller system of the same kind, each system left out "
                         "of the fit, beside a two-parameter throughput curve (files scaling_*)")
      ->excludes(validate_loo)
      ->excludes(validate_loko);
  validate_cmd->add_option("--phases", validate.phases,
                           "phase timings from the systems' logs the refits also fit (calibration/data/mlperf/phases_v4.1.csv)");
  validate_cmd->add_option("--samples", validate.samples, "Monte Carlo replicates for p10/p90")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  validate_cmd->add_option("--seed", validate.seed, "random seed")->capture_default_str()->check(kSeedRange);

  sp::cli::SweepOptions sweep;
  CLI::App* sweep_cmd = app.add_subcommand("sweep", "run every point of a sweep file (serially, or under mpirun)");
  sweep_cmd->add_option("sweep", sweep.sweep, "sweep YAML file (scenarios/sweeps/)")->required();
  sweep_cmd->add_option("--out,-o", sweep.out_dir, "output folder (default results/<sweep name>)");
  sweep_cmd->add_flag("--resume", sweep.resume, "skip the points a previous run of this sweep finished");
  sweep_cmd->add_flag("--quiet,-q", sweep.quiet, "no progress, no summary");
  std::string report_dir;
  CLI::App* report_cmd = app.add_subcommand("report", "break-even report of a finished sweep (report.md, plots)");
  report_cmd->add_option("dir", report_dir, "the sweep's output folder")->required();
  sp::cli::CalibrateOptions calibrate;
  CLI::App* calibrate_cmd = app.add_subcommand("calibrate", "fit the model to measurements");
  calibrate_cmd->require_subcommand(1);
  CLI::App* calibrate_mlperf = calibrate_cmd->add_subcommand("mlperf", "fit software efficiencies and evaluation costs to published MLPerf times");
  calibrate_mlperf->add_option("--data", calibrate.data, "MLPerf results CSV")->required();
  calibrate_mlperf->add_option("--out,-o", calibrate.out, "parameter file")->capture_default_str();
  calibrate_mlperf->add_flag("--loo", calibrate.loo, "also leave each system out in turn (minutes), and set the model error");
  calibrate_mlperf->add_flag("--loko", calibrate.loko, "also leave each accelerator kind out in turn");
  calibrate_mlperf->add_option("--phases", calibrate.phases,
                               "phase timings from the systems' logs to fit as well (calibration/data/mlperf/phases_v4.1.csv)");
  sp::cli::CalibratePowerOptions power;
  CLI::App* calibrate_power = calibrate_cmd->add_subcommand("power", "fit the power model to MLPerf Power energies");
  calibrate_power->add_option("--data", power.data, "MLPerf Power CSV (calibration/data/mlperf/power_v4.1.csv)")->required();
  calibrate_power->add_option("--out,-o", power.out, "parameter file")->capture_default_str();
  sp::cli::CalibrateNetworkOptions network;
  CLI::App* calibrate_network =
      calibrate_cmd->add_subcommand("network", "piecewise alpha-beta segments per tier from measured collectives");
  calibrate_network->add_option("--input,-i", network.inputs,
                                "scalepoint-bench CSV, nccl-tests output (text or -J JSON), OSU output")
      ->required();
  calibrate_network->add_option("--out,-o", network.out, "platform file to write")->required();
  calibrate_network->add_option("--base", network.base, "platform the segments are added to (name or file)")
      ->capture_default_str();
  calibrate_network->add_option("--op", network.op, "operation to fit: all_reduce, all_gather, ..., ping_pong")
      ->capture_default_str()
      ->check(CLI::IsMember({"all_reduce", "reduce_scatter", "all_gather", "broadcast", "all_to_all", "ping_pong"}));
  calibrate_network->add_option("--input-op", network.input_op, "what nccl-tests files measure, when not in the name");
  calibrate_network->add_option("--ranks", network.ranks, "ranks of files that do not say (OSU)")
      ->check(CLI::Range(std::int64_t{2}, sp::config::kMaxCount));
  calibrate_network->add_option("--scope", network.scope, "intra | inter, for files that do not say")
      ->check(CLI::IsMember({"intra", "inter"}));
  // A segment is two parameters fitted on at least three sizes: dozens are more than any
  // measurement of 8 B .. 8 GiB can determine.
  calibrate_network->add_option("--segments", network.segments, "exactly this many segments (default: chosen by BIC)")
      ->check(CLI::Range(1, 64));
  calibrate_network->add_option("--max-segments", network.max_segments, "at most this many")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  calibrate_network->add_option("--report", network.report_dir, "folder for network_fit.csv and network_fit.png");
  sp::cli::CalibrateComputeOptions compute;
  CLI::App* calibrate_compute = calibrate_cmd->add_subcommand(
      "compute", "an accelerator's kernel costs (GEMM rate, kernel latency, memory efficiency) from its measurements");
  calibrate_compute->add_option("--input,-i", compute.inputs, "scalepoint-gpu-bench CSV or JSON lines of GEMM timings")
      ->required();
  calibrate_compute->add_option("--out,-o", compute.out, "compute fragment to write (compute: !include FILE)")->required();
  calibrate_compute->add_option("--accelerator", compute.accelerator,
                                "catalog name or alias (default: the CSV's device 0)");
  calibrate_compute->add_option("--report", compute.report_dir, "folder for gemm_fit.csv and gemm_fit.png");

  sp::cli::ComputeCheckOptions check;
  CLI::App* check_cmd = app.add_subcommand(
      "compute-check", "the kernel-level compute model against measured forward/backward passes of one GPU");
  check_cmd->add_option("--data", check.data, "JSON lines (e.g. calibration/data/gpu/h100/workloads.jsonl)")->required();
  check_cmd->add_option("--accelerator", check.accelerator, "the GPU that was measured")->capture_default_str();
  check_cmd->add_option("--out,-o", check.out_dir, "folder for compute_check.{csv,png}")->capture_default_str();

  sp::cli::GemmShapesOptions shapes;
  CLI::App* shapes_cmd = app.add_subcommand(
      "gemm-shapes", "the GEMMs a workload runs per GPU, as a --shapes file for scalepoint-gpu-bench");
  shapes_cmd->add_option("--workload,-w", shapes.workload, "workload name (scalepoint list workloads)");
  shapes_cmd->add_option("--batch,-b", shapes.batches, "samples per GPU, e.g. 1,2,4")->delimiter(',')->check(
      CLI::Range(std::int64_t{1}, sp::config::kMaxCount));
  shapes_cmd->add_option("--tp", shapes.tp, "tensor-parallel size")->capture_default_str()->check(CLI::Range(1, 65536));
  shapes_cmd->add_option("--out,-o", shapes.out, "CSV to write (default: standard output)");
  shapes_cmd->add_option("--cxx-table", shapes.cxx_table,
                         "write the table of every workload's GEMMs compiled into scalepoint-gpu-bench instead");

  std::string list_what;
  CLI::App* list_cmd = app.add_subcommand("list", "list the accelerators or workloads in the catalog");
  list_cmd->add_option("what", list_what, "accelerators | workloads | platforms")
      ->required()
      ->check(CLI::IsMember({"accelerators", "workloads", "platforms"}));

  std::vector<std::string> args(argv, argv + argc);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, as every input error: CLI11's own text, and where to look.
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    std::fprintf(stderr, "scalepoint: %s (run 'scalepoint --help' for usage)\n", what.c_str());
    return 2;
  }

  // An empty --out would silently mean the default folder: every command refuses it alike.
  std::function<const CLI::App*(const CLI::App*)> empty_out = [&](const CLI::App* a) -> const CLI::App* {
    const CLI::Option* out = a->get_option_no_throw("--out");
    if (out && out->count() > 0 && out->as<std::string>().empty()) return a;
    for (const CLI::App* sub : a->get_subcommands()) {
      if (const CLI::App* found = empty_out(sub)) return found;
    }
    return nullptr;
  };
  if (empty_out(&app)) {
    std::fprintf(stderr, "scalepoint: error: --out: must name a file or folder, not be empty\n");
    return 2;
  }

  try {
    if (colocate_cmd->parsed()) return sp::cli::colocate_command(colocate);
    if (cluster_cmd->parsed()) return sp::cli::cluster_command(cluster);
    if (run_cmd->parsed()) {
      run.command_line = args;
      return sp::cli::run_command(run);
    }
    if (list_cmd->parsed()) return sp::cli::list_command(list_what);
    if (coll_cmd->parsed()) return sp::cli::collective_command(coll);
    if (analyze_cmd->parsed()) return sp::cli::analyze_command(analyze);
    if (predict_cmd->parsed()) return sp::cli::predict_command(predict);
    if (validate_cmd->parsed()) {
      if (!validate.transformer.empty()) return sp::cli::validate_transformer_command(validate);
      if (validate.data.empty()) {
        std::fprintf(stderr, "scalepoint: error: validate: --data is required (or --transformer FILE)\n");
        return 2;
      }
      return sp::cli::validate_command(validate);
    }
    if (sweep_cmd->parsed()) return sp::cli::sweep_command(sweep);
    if (report_cmd->parsed()) return sp::cli::report_command(report_dir);
    if (calibrate_mlperf->parsed()) return sp::cli::calibrate_mlperf_command(calibrate);
    if (calibrate_power->parsed()) return sp::cli::calibrate_power_command(power);
    if (calibrate_network->parsed()) return sp::cli::calibrate_network_command(network);
    if (calibrate_compute->parsed()) return sp::cli::calibrate_compute_command(compute);
    if (check_cmd->parsed()) return sp::cli::compute_check_command(check);
    if (shapes_cmd->parsed()) {
      if (shapes.workload.empty() == shapes.cxx_table.empty()) {
        std::fprintf(stderr, "scalepoint: gemm-shapes needs exactly one of --workload and --cxx-table\n");
        return 2;
      }
      return sp::cli::gemm_shapes_command(shapes);
    }
  } catch (const sp::InputError& e) {
    std::fprintf(stderr, "scalepoint: error: %s\n", e.what());
    return 2;
  } catch (const sp::ModelError& e) {
    std::fprintf(stderr, "scalepoint: cannot simulate: %s\n", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the system refuses (too long, not a folder, no permission, disk full) is about the
    // user's paths or machine, not the model: the message names the path.
    std::fprintf(stderr, "scalepoint: error: %s\n", e.what());
    return 2;
  } catch (const std::system_error& e) {
    // A write the system refused (disk full, a size limit): what was finished is intact.
    std::fprintf(stderr, "scalepoint: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalepoint: internal error: %s\n", e.what());
    return 1;
  }
  return 0;
}
