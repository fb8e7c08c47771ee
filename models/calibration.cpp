#include "models/calibration.hpp"

#include <filesystem>
#include <limits>

#include "models/catalog.hpp"
#include "sim/config/loader.hpp"

namespace sp::models {

void Calibration::apply(Workload& w) const {
  if (auto it = workloads.find(w.name); it != workloads.end()) {
    w.software_efficiency = it->second.software_efficiency;
    w.model_error = it->second.model_error;
  }
  if (!scale_error.empty()) w.model_error_by_scale = scale_error;
}

void Calibration::apply(Accelerator& a) const {
  if (auto it = accelerator_scale.find(a.name); it != accelerator_scale.end()) a.efficiency_scale = it->second;
}

const std::map<int, std::string>& scale_ranges() {
  static const std::map<int, std::string> ranges = {
      {8, "N<=8"}, {64, "N=9-64"}, {std::numeric_limits<int>::max(), "N>64"}};
  return ranges;
}

Calibration parse_calibration(const config::ConfigNode& n) {
  Calibration c;
  if (auto by = n.find("model_error_by_scale")) {
    by->expect_only({"N<=8", "N=9-64", "N>64"});
    for (const auto& [bound, name] : scale_ranges()) {
      if (auto v = by->find(name)) c.scale_error[bound] = v->as_number();
    }
  }
  if (auto ws = n.find("workloads")) {
    for (const auto& [name, v] : ws->entries()) {
      v.expect_only({"software_efficiency", "model_error"});
      c.workloads[name] = WorkloadCurve{v.at("software_efficiency").as_positive_number(),
                                        v.find("model_error") ? v.at("model_error").as_number() : 0.0};
    }
  }
  if (auto as = n.find("accelerators")) {
    for (const auto& [name, v] : as->entries()) {
      v.expect_only({"efficiency_scale"});
      c.accelerator_scale[name] = v.at("efficiency_scale").as_positive_number();
    }
  }
  return c;
}

Calibration default_calibration() {
  // Read once per process: every scenario of a sweep asks for it.
  static const Calibration cached = [] {
    const std::filesystem::path file = data_root() / "calibration" / "params" / "mlperf_v4.1.yaml";
    return std::filesystem::exists(file) ? parse_calibration(config::load_file(file.string())) : Calibration{};
  }();
  return cached;
}

}  // namespace sp::models
