// `scalepoint sweep`: run a sweep file serially or under mpirun; see sim/sweep/.
#include <cstdio>
#include <filesystem>

#include "sim/cli/commands.hpp"
#include "sim/output/manifest.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/sweep/report.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace sp::cli {

int sweep_command(const SweepOptions& o) {
  const SweepSpec spec = load_sweep(o.sweep);
  const std::string dir = o.out_dir.empty() ? (std::filesystem::path("results") / spec.name).string() : o.out_dir;
  // sweep.h5 and the manifest from the finished rows, while the sweep still holds its folder.
  const auto finish = [&](const SweepResult& r) {
    output::Manifest m;
    m.fields = {{"scalepoint_version", SCALEPOINT_VERSION},
                {"sweep_name", spec.name},
                {"sweep_file", spec.file},
                {"sweep_sha256", spec.sha256},
                {"base_scenario", spec.base_file},
                {"points", std::to_string(r.points)}};
    m.files = {"sweep.csv", "sweep.h5"};
    write_sweep_hdf5(spec, dir);
    output::StagedFiles files(dir);
    files.write("manifest.yaml", output::to_yaml(m));
    files.commit();
  };
  const SweepResult r = run_sweep(spec, dir, o.resume, o.quiet, finish);
  if (r.points == 0) return 0;  // an MPI worker: rank 0 reports
  if (!o.quiet) {
    std::printf("%s: %d points (%d run now, %d failed); wrote %s/sweep.csv\n", spec.name.c_str(), r.points, r.ran,
                r.failed, dir.c_str());
  }
  // Every point's row is written, failures included; the status says whether there were any.
  return r.failed > 0 ? 1 : 0;
}

int report_command(const std::string& dir) {
  const SweepReport r = read_sweep_report(dir);
  const auto files = write_sweep_report(r, dir);
  for (const auto& g : r.groups) std::printf("%s\n%s", g.label.c_str(), describe(g.break_even).c_str());
  std::string list;
  for (const auto& f : files) list += (list.empty() ? "" : ",") + f;
  std::printf("wrote %s/{%s}\n", dir.c_str(), list.c_str());
  return 0;
}

}  // namespace sp::cli
