#include "models/catalog.hpp"

#include <algorithm>
#include <map>
#include <cctype>
#include <cstdlib>
#include <regex>

#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"

#ifndef SCALEPOINT_SOURCE_DIR
#error "SCALEPOINT_SOURCE_DIR must be defined by the build"
#endif

namespace sp::models {

namespace fs = std::filesystem;

fs::path data_root() {
  if (const char* home = std::getenv("SCALEPOINT_HOME"); home != nullptr && *home != '\0') {
    return fs::path(home);
  }
  return fs::path(SCALEPOINT_SOURCE_DIR);
}

namespace {
fs::path platforms_dir() { return data_root() / "scenarios" / "platforms"; }
}  // namespace

fs::path shipped_platform_file(const std::string& name) { return platforms_dir() / (name + ".yaml"); }

std::vector<std::string> shipped_platforms() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(platforms_dir())) {
    if (e.path().extension() == ".yaml" && e.path().stem() != "nccl_protocols") files.push_back(e.path().filename().string());
  }
  // In file-name order (directory order is not portable): "localhost.calibrated.yaml" before
  // "localhost.yaml", so that the first platform of a kind and node size, which predict takes
  // for a row naming none, is the measured one.
  std::sort(files.begin(), files.end());
  std::vector<std::string> names;
  for (const std::string& f : files) names.push_back(f.substr(0, f.size() - 5));
  return names;
}

std::string normalize_name(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
  }
  return out;
}

Catalog::Catalog(fs::path models_dir) : dir_(std::move(models_dir)) {}

namespace {
// A name two files of one folder give: the catalog would find the first and ignore the other,
// silently. `seen` maps each name read so far to its file.
void refuse_second_file_of_a_name(std::map<std::string, std::string>& seen, const char* what, const std::string& name,
                                  const config::ConfigNode& root, const fs::path& file) {
  if (const auto [at, added] = seen.emplace(normalize_name(name), file.string()); !added) {
    root.at("name").fail(std::string(what) + " '" + name + "' is also the name of " + at->second,
                         std::string("give each ") + what + " file its own name");
  }
}
}  // namespace

std::vector<fs::path> Catalog::yaml_files(const std::string& sub) const {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_ / sub, ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  if (ec) {
    throw InputError(SourceLocation{(dir_ / sub).string(), 0, 0}, "",
                     "cannot list the model directory: " + ec.message(),
                     "set SCALEPOINT_HOME to the folder that holds models/");
  }
  std::sort(files.begin(), files.end());  // directory order is not portable
  return files;
}

const std::vector<Accelerator>& Catalog::accelerators() const {
  if (!accelerators_) {
    std::vector<Accelerator> out;
    std::map<std::string, std::string> files_by_name;
    for (const auto& f : yaml_files("hardware")) {
      const config::ConfigNode root = config::load_file(f.string());
      out.push_back(parse_accelerator(root));
      refuse_second_file_of_a_name(files_by_name, "accelerator", out.back().name, root, f);
    }
    accelerators_ = std::move(out);
  }
  return *accelerators_;
}

const std::vector<Workload>& Catalog::workloads() const {
  if (!workloads_) {
    std::vector<Workload> out;
    std::map<std::string, std::string> files_by_name;
    for (const auto& f : yaml_files("workloads")) {
      const config::ConfigNode root = config::load_file(f.string());
      out.push_back(parse_workload(root));
      check_families(out.back());
      refuse_second_file_of_a_name(files_by_name, "workload", out.back().name, root, f);
    }
    workloads_ = std::move(out);
  }
  return *workloads_;
}

void Catalog::check_families(const Workload& w) const {
  std::vector<std::string> known;
  for (const Accelerator& a : accelerators()) {
    if (std::find(known.begin(), known.end(), a.family) == known.end()) known.push_back(a.family);
  }
  for (const LayerGroup& l : w.layers) {
    for (const Op& op : l.ops) {
      for (const auto& [family, named] : op.context_parallel_precision_by_family) {
        if (std::find(known.begin(), known.end(), family) != known.end()) continue;
        std::string names;
        for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
        throw InputError(named.where, named.key, "no hardware file has the architecture family '" + family + "'",
                         "families in models/hardware: " + names);
      }
    }
  }
}

std::string canonical_accelerator_name(const std::string& name, bool with_memory) {
  static const std::vector<std::string> noise = {"nvidia", "amd", "intel", "google", "instinct", "geforce", "tensor",
                                                 "core", "gpu", "ai", "accelerator", "r", "tm", "hbm2", "hbm2e",
                                                 "hbm3", "hbm3e", "gddr6", "gddr6x", "dlc", "hgx", "dgx"};
  std::string lower;
  for (unsigned char c : name) lower += static_cast<char>(std::tolower(c));
  // "80 GB" and "80GB" are the same memory size.
  static const std::regex spaced_size(R"((\d+)\s*gb\b)"), size(R"(\d+gb)");
  lower = std::regex_replace(lower, spaced_size, "$1gb");
  std::string out, word;
  // The SXM socket's generation follows the part ("H200-SXM5" and "H200-SXM" are one kind).
  static const std::regex socket(R"(sxm\d+)");
  const auto flush = [&] {
    if (std::regex_match(word, socket)) word = "sxm";
    const bool memory = std::regex_match(word, size);
    if (!word.empty() && std::find(noise.begin(), noise.end(), word) == noise.end() && (with_memory || !memory)) {
      out += word;
    }
    word.clear();
  };
  for (char c : lower) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

std::string unknown_accelerator_message(const std::string& name, const std::vector<std::string>& kinds) {
  const std::string key = canonical_accelerator_name(name);
  std::vector<std::pair<std::size_t, std::string>> by_distance;
  for (const std::string& k : kinds) by_distance.emplace_back(config::edit_distance(key, canonical_accelerator_name(k)), k);
  std::sort(by_distance.begin(), by_distance.end());
  std::string closest;
  for (std::size_t i = 0; i < by_distance.size() && i < 3; ++i) closest += (i ? ", " : "") + by_distance[i].second;
  return "unknown accelerator '" + name + "' (closest kinds: " + closest +
         "); add it to the aliases of its file in models/hardware, or add a file for it there";
}

namespace {
std::vector<std::string> workload_names(const Workload& w) {
  std::vector<std::string> names{w.name, w.mlperf_benchmark};
  names.insert(names.end(), w.benchmark_aliases.begin(), w.benchmark_aliases.end());
  return names;
}

template <class T, class NamesOf>
T find_by_name(const std::vector<T>& items, const config::ConfigNode& where, const char* what,
               NamesOf names_of) {
  const std::string wanted = where.as_string();
  const std::string key = normalize_name(wanted);
  std::vector<std::string> all;
  std::optional<std::string> guess;
  for (const T& item : items) {
    for (const std::string& n : names_of(item)) {
      const std::string norm = normalize_name(n);
      if (norm == key) return item;
      // A name the user abbreviated ("H100-SXM") is a better guess than a close spelling.
      if (!guess && !key.empty() && norm.find(key) != std::string::npos) guess = item.name;
    }
    all.push_back(item.name);
  }
  where.fail(std::string("unknown ") + what + " '" + wanted + "'", config::known_names_hint(wanted, all, guess));
}
}  // namespace

std::optional<Accelerator> Catalog::find_accelerator(const std::string& name) const {
  for (bool with_memory : {true, false}) {
    const std::string key = canonical_accelerator_name(name, with_memory);
    const Accelerator* found = nullptr;
    bool ambiguous = false;
    for (const Accelerator& a : accelerators()) {
      std::vector<std::string> names = a.aliases;
      names.push_back(a.name);
      for (const auto& n : names) {
        if (canonical_accelerator_name(n, with_memory) != key || key.empty()) continue;
        ambiguous = ambiguous || (found && found != &a);
        found = &a;
      }
    }
    if (found && !ambiguous) return *found;
  }
  return std::nullopt;
}

std::optional<Workload> Catalog::find_workload(const std::string& name) const {
  const std::string key = normalize_name(name);
  for (const Workload& w : workloads()) {
    for (const std::string& n : workload_names(w)) {
      if (normalize_name(n) == key) return w;
    }
  }
  return std::nullopt;
}

std::string Catalog::benchmark_name(const std::string& name) const {
  const std::optional<Workload> w = find_workload(name);
  if (!w) return name;
  return w->mlperf_benchmark.empty() ? w->name : w->mlperf_benchmark;
}

Accelerator Catalog::accelerator(const config::ConfigNode& where) const {
  if (auto a = find_accelerator(where.as_string())) return *a;
  return find_by_name(accelerators(), where, "accelerator", [](const Accelerator& a) {
    std::vector<std::string> names = a.aliases;
    names.push_back(a.name);
    return names;
  });
}

Workload Catalog::workload(const config::ConfigNode& where) const {
  return find_by_name(workloads(), where, "workload", workload_names);
}

Platform parse_platform(const config::ConfigNode& node, const Catalog& catalog) {
  return parse_platform(node, [&catalog](const config::ConfigNode& where) { return catalog.accelerator(where); });
}

}  // namespace sp::models
