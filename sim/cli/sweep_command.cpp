// `scalepoint sweep`: run a sweep file serially or under mpirun; see sim/sweep/.
#include <cstdio>
#include <filesystem>

#include "sim/cli/commands.hpp"
#include "sim/output/manifest.hpp"
#include "sim/output/staged_files.hpp"
#include "sim/sweep/sweep_runner.hpp"

namespace sp::cli {

int sweep_command(const SweepOptions& o) {
  const SweepSpec spec = load_sweep(o.sweep);
  const std::string dir = o.out_dir.empty() ? (std::filesystem::path("results") / spec.name).string() : o.out_dir;
  const SweepResult r = run_sweep(spec, dir, o.resume, o.quiet);
  if (r.points == 0) return 0;  // an MPI worker: rank 0 reports
  output::Manifest m;
  m.fields = {{"scalepoint_version", SCALEPOINT_VERSION},
              {"sweep_name", spec.name},
              {"sweep_file", spec.file},
              {"sweep_sha256", spec.sha256},
              {"base_scenario", spec.base_file},
              {"points", std::to_string(r.points)}};
  m.files = {"sweep.csv"};
  output::StagedFiles files(dir);
  files.write("manifest.yaml", output::to_yaml(m));
  files.commit();
  if (!o.quiet) {
    std::printf("%s: %d points (%d run now, %d failed); wrote %s/sweep.csv\n", spec.name.c_str(), r.points, r.ran,
                r.failed, dir.c_str());
  }
  return 0;
}

}  // namespace sp::cli
