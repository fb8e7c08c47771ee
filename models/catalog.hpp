// The model catalog: accelerators and workloads found by name or alias in models/hardware and
// models/workloads. An unknown name is an InputError at the key that named it, with a
// did-you-mean and the list of known names.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware/accelerator.hpp"
#include "models/network/platform.hpp"
#include "models/workloads/workload.hpp"
#include "sim/config/config_node.hpp"

namespace sp::models {

/// The directory holding models/ and scenarios/: $SCALEPOINT_HOME when set, else the source tree
/// the program was built from.
std::filesystem::path data_root();

/// The names of the shipped platforms (scenarios/platforms/*.yaml under data_root(), but the
/// protocol table the others include), in file-name order: one list for `list platforms`, the did-you-mean of
/// an unknown platform and the platforms result rows may name.
std::vector<std::string> shipped_platforms();
/// The file of shipped platform `name`: scenarios/platforms/NAME.yaml under data_root().
std::filesystem::path shipped_platform_file(const std::string& name);

/// Lower-case letters and digits only, so "NVIDIA H100-SXM5-80GB" and "nvidia h100 sxm5 80gb" match.
std::string normalize_name(const std::string& name);

/// What identifies an accelerator in a published name: the words left after dropping vendors,
/// trademarks ("(R)"), "Tensor Core GPU", "AI Accelerator", "Instinct", memory types and cooling
/// ("HBM3e", "DLC"), the board or system a part sits in ("HGX", "DGX") and the SXM socket's
/// generation ("SXM5" -> "sxm"), as lower-case letters and digits ("Intel(R) Gaudi(R) 2 AI
/// Accelerator" -> "gaudi2"); `with_memory` false drops memory sizes too ("AMD Instinct MI300X
/// 192GB" -> "mi300x").
std::string canonical_accelerator_name(const std::string& name, bool with_memory = true);

/// Why a name resolves to no accelerator: the closest kinds and what to add.
std::string unknown_accelerator_message(const std::string& name, const std::vector<std::string>& kinds);

class Catalog {
 public:
  explicit Catalog(std::filesystem::path models_dir);

  /// The accelerator whose name or alias matches `name` (given at config key `where`).
  Accelerator accelerator(const config::ConfigNode& where) const;
  /// The workload whose name matches `name` (given at config key `where`).
  Workload workload(const config::ConfigNode& where) const;

  /// The same by plain name (nullopt when unknown), for inputs that are not YAML (CSV rows):
  /// canonical names (canonical_accelerator_name) of the name and aliases must match, with
  /// memory sizes if that is unique, else without.
  std::optional<Accelerator> find_accelerator(const std::string& name) const;
  std::optional<Workload> find_workload(const std::string& name) const;
  /// The one name of the MLPerf benchmark that `name` (a workload's name or alias) stands for: its
  /// mlperf_benchmark, else its name; a name no workload knows, as given. Results tables and
  /// logs spell one benchmark differently ("ssd", "RetinaNet", "retinanet").
  std::string benchmark_name(const std::string& name) const;

  /// Every accelerator file, parsed, in file-name order (read once per catalog).
  const std::vector<Accelerator>& accelerators() const;
  const std::vector<Workload>& workloads() const;

 private:
  std::vector<std::filesystem::path> yaml_files(const std::string& sub) const;
  std::filesystem::path dir_;
  // Throws at the key of a per-family setting in `w` that names no hardware file's family.
  void check_families(const Workload& w) const;
  mutable std::optional<std::vector<Accelerator>> accelerators_;
  mutable std::optional<std::vector<Workload>> workloads_;
};

/// The platform a file describes, its accelerator looked up in `catalog`.
Platform parse_platform(const config::ConfigNode& node, const Catalog& catalog);

}  // namespace sp::models
