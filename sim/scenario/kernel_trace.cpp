#include "sim/scenario/kernel_trace.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "sim/config/csv.hpp"
#include "sim/core/error.hpp"

namespace sp {

namespace {
double blocks_of(const config::CsvTable& t, std::size_t row) {
  const std::string& grid = t.cell(row, "grid");
  if (grid.empty()) return 1;  // a copy or memset: no grid
  double blocks = 1;
  std::stringstream in(grid);
  std::string part;
  while (std::getline(in, part, 'x')) {
    try {
      std::size_t used = 0;
      const double v = std::stod(part, &used);
      if (used != part.size() || !(v >= 1)) throw std::invalid_argument(part);
      blocks *= v;
    } catch (const std::exception&) {
      t.fail(row, "grid", "needs blocks as XxYxZ, e.g. 64x2x32");
    }
  }
  return blocks;
}
}  // namespace

std::vector<models::StepKernel> load_kernel_trace(const std::string& csv, int step, const models::Accelerator& a,
                                                  Duration library_launch) {
  const config::CsvTable t = config::CsvTable::read_rows(csv);
  for (const char* column : {"step", "kind", "name", "duration_us", "launch_us", "grid"}) {
    if (!t.has_column(column)) {
      throw InputError({csv, 1, 0}, column, "missing column (a torch.profiler trace from calibration/bench/pointnet_profile.py)");
    }
  }
  if (step < 0) {
    std::set<std::int64_t> steps;
    for (std::size_t i = 0; i < t.rows(); ++i) steps.insert(t.integer(i, "step").value_or(-1));
    if (steps.empty()) throw InputError({csv, 1, 0}, "step", "no kernels in the trace");
    step = static_cast<int>(*std::next(steps.begin(), static_cast<long>(steps.size() / 2)));
  }
  std::vector<models::StepKernel> out;
  std::vector<bool> copy_to_host;
  double previous_launch = -1e300;
  const int sms = std::max(1, a.compute.parallel_units);
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (t.integer(i, "step") != step) continue;
    const auto duration = t.number(i, "duration_us"), launch = t.number(i, "launch_us");
    if (!duration || !(*duration >= 0 && *duration < 1e7)) t.fail(i, "duration_us", "needs a duration between 0 and 10 s");
    if (!launch) t.fail(i, "launch_us", "needs the launch's time on the host");
    if (*launch < previous_launch) t.fail(i, "launch_us", "launches must be in order within a step");
    models::StepKernel k;
    k.alone = seconds(*duration * 1e-6) + a.compute.kernel_latency;
    k.width = static_cast<int>(std::min<double>(sms, blocks_of(t, i)));
    const bool library = *launch - previous_launch < to_seconds(kLibraryLaunchWindow) * 1e6;
    k.launches = library ? 0.0 : 1.0;
    k.library_host = library ? library_launch : Duration::zero();
    previous_launch = *launch;
    copy_to_host.push_back(t.cell(i, "kind") == "gpu_memcpy" && t.cell(i, "name").find("DtoH") != std::string::npos);
    out.push_back(k);
  }
  if (out.empty()) throw InputError({csv, 1, 0}, "step", "no kernels of step " + std::to_string(step) + " in the trace");
  for (std::size_t i = 0; i + 1 < out.size(); ++i) out[i].host_waits = copy_to_host[i];
  return out;
}

}  // namespace sp
