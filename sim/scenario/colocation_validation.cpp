#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/core/error.hpp"
#include "sim/scenario/colocation.hpp"

namespace sp {

output::Table validate_colocation(const std::string& published_csv, const models::Catalog& catalog) {
  const config::CsvTable csv = config::CsvTable::read(published_csv);
  if (csv.rows() == 0) throw InputError({published_csv, 0, 0}, "", "no published points to compare with");
  // Each scenario once, at every K its rows ask for, with the strategies they name.
  std::map<std::string, ColocationSpec> specs;
  std::map<std::string, std::vector<ColocationPoint>> runs;
  for (std::size_t i = 0; i < csv.rows(); ++i) {
    const std::string name = csv.cell(i, "scenario");
    if (specs.count(name)) continue;
    const std::filesystem::path file = models::data_root() / "scenarios" / "colocation" / (name + ".yaml");
    if (name.find('/') != std::string::npos || !config::regular_file_quietly(file.string())) {
      csv.fail(i, "scenario", "no scenarios/colocation/" + name + ".yaml");
    }
    specs.emplace(name, load_colocation(file.string(), {}, catalog));
  }
  for (std::size_t i = 0; i < csv.rows(); ++i) {
    ColocationSpec& s = specs.at(csv.cell(i, "scenario"));
    const auto k = csv.integer(i, "jobs");
    if (!k || *k < 1 || *k > 1024) csv.fail(i, "jobs", "needs a job count between 1 and 1024");
    const std::optional<Strategy> st = strategy_named(csv.cell(i, "strategy"));
    if (!st) csv.fail(i, "strategy", "unknown strategy '" + csv.cell(i, "strategy") + "' (valid: " + strategy_names() + ")");
    if (*st == Strategy::mig && !s.accelerator.mig) csv.fail(i, "strategy", s.accelerator.name + " has no MIG");
    if (std::find(s.strategies.begin(), s.strategies.end(), *st) == s.strategies.end()) s.strategies.push_back(*st);
    if (std::find(s.jobs.begin(), s.jobs.end(), static_cast<int>(*k)) == s.jobs.end()) s.jobs.push_back(static_cast<int>(*k));
  }
  for (auto& [name, s] : specs) {
    std::sort(s.jobs.begin(), s.jobs.end());
    runs[name] = run_colocation(s);
  }
  output::Column jobs{"jobs", "count", "K", true, {}, {}}, published{"published_speedup", "1", "aggregate throughput / one job at a time, published", false, {}, {}},
      model{"model_speedup", "1", "the same, simulated", false, {}, {}}, error{"error", "1", "model / published - 1", false, {}, {}},
      tolerance{"tolerance", "1", "accepted |error|", false, {}, {}}, inside{"within_tolerance", "1", "1 if |error| <= tolerance", true, {}, {}};
  std::vector<std::string> scenario, strategy, accelerator, source;
  for (std::size_t i = 0; i < csv.rows(); ++i) {
    const std::string name = csv.cell(i, "scenario"), st = csv.cell(i, "strategy");
    const int k = static_cast<int>(*csv.integer(i, "jobs"));
    const auto pub = csv.number(i, "published_speedup");
    const auto tol = csv.number(i, "tolerance");
    if (!pub || !(*pub > 0)) csv.fail(i, "published_speedup", "needs a positive number");
    if (!tol || !(*tol > 0)) csv.fail(i, "tolerance", "needs a positive number");
    double got = std::nan("");
    for (const ColocationPoint& p : runs.at(name)) {
      if (p.jobs == k && st == strategy_name(p.strategy) && p.status == "ok") got = p.speedup;
    }
    scenario.push_back(name);
    strategy.push_back(st);
    accelerator.push_back(specs.at(name).accelerator.name);
    source.push_back(csv.has_column("source") ? csv.cell(i, "source") : "-");
    jobs.values.push_back(k);
    published.values.push_back(*pub);
    model.values.push_back(got);
    error.values.push_back(got / *pub - 1);
    tolerance.values.push_back(*tol);
    inside.values.push_back(std::abs(got / *pub - 1) <= *tol ? 1 : 0);
  }
  output::Table t;
  t.columns = {output::text_column("scenario", "scenarios/colocation file", scenario),
               output::text_column("accelerator", "catalog kind", accelerator),
               output::text_column("strategy", "sharing strategy", strategy), jobs, published, model, error, tolerance, inside,
               output::text_column("source", "where the published value comes from", source)};
  return t;
}

}  // namespace sp
