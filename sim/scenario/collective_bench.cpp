#include "sim/scenario/collective_bench.hpp"

#include <cmath>
#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "sim/config/csv.hpp"
#include "sim/config/loader.hpp"
#include "sim/config/quantity.hpp"

namespace sp {

namespace fs = std::filesystem;

fs::path find_platform_file(const std::string& name, const SourceLocation& where, const std::string& key) {
  fs::path file(name);
  if (!config::exists_quietly(file.string())) {
    file = models::shipped_platform_file(name);
    if (!config::exists_quietly(file.string())) {
      throw InputError(where, key, "unknown platform '" + name + "'",
                       config::known_names_hint(name, models::shipped_platforms()) + ", or a path to a platform file");
    }
  }
  return file;
}

models::Platform load_platform(const std::string& name, const models::Catalog& catalog, const SourceLocation& where,
                               const std::string& key) {
  return models::parse_platform(config::load_file(find_platform_file(name, where, key).string()), catalog);
}

std::vector<Bytes> size_range(const std::string& spec, double factor) {
  const SourceLocation where{"--bytes " + spec, 0, 0};
  const auto parse = [&](const std::string& s) {
    try {
      const Bytes b = config::parse_bytes(s);
      if (!(b.value() >= 1)) throw InputError(where, "", "sizes must be at least 1 B");
      if (b.value() != std::floor(b.value())) throw InputError(where, "", "sizes must be whole bytes");
      // Beyond a terabyte a message is no collective anyone runs, and its time leaves the
      // simulated range on slow links.
      if (b.value() > 0x1p40) throw InputError(where, "", "sizes are limited to 1 TiB");
      return b;
    } catch (const config::QuantityError& e) {
      throw InputError(where, "", e.what(), e.hint());
    }
  };
  const std::size_t colon = spec.find(':');
  const Bytes lo = parse(spec.substr(0, colon));
  const Bytes hi = colon == std::string::npos ? lo : parse(spec.substr(colon + 1));
  if (hi < lo) throw InputError(where, "", "the range must go from small to large");
  if (!(factor > 1)) throw InputError(SourceLocation{"--factor", 0, 0}, "", "must be greater than 1");
  // nccl-tests steps by 2; a factor of 1.0000001 would ask for hundreds of millions of sizes.
  const double count = std::floor(std::log(hi.value() / lo.value()) / std::log(factor)) + 1;
  if (count > 10000) {
    throw InputError(SourceLocation{"--factor", 0, 0}, "",
                     fmt::format("gives {:.0f} sizes from {} to {} B; at most 10000", count, lo.value(), hi.value()));
  }
  std::vector<Bytes> sizes;
  for (double s = lo.value(); s <= hi.value() * (1 + 1e-12); s *= factor) sizes.push_back(Bytes(std::round(s)));
  return sizes;
}

std::vector<CollectiveRow> collective_sweep(const models::Platform& platform, models::CollectiveOp op, int ranks,
                                            const std::vector<Bytes>& sizes, const models::CollectiveChoice& choice,
                                            models::Fidelity fidelity, const std::function<void(int done)>& progress) {
  const models::Group group = models::packed_group(platform.topology, ranks);
  std::vector<CollectiveRow> rows;
  for (Bytes n : sizes) {
    CollectiveRow r;
    r.size = n;
    if (ranks > 1) {
      const models::CollectiveTiming s = models::time_collective(platform, group, op, n, choice, fidelity);
      r.time = s.time;
      r.algorithm = s.algorithm;
      r.protocol = s.protocol;
      r.algbw_gbs = n.value() / to_seconds(s.time) / 1e9;
      r.busbw_gbs = r.algbw_gbs * models::bus_factor(op, ranks);
    }
    rows.push_back(r);
    if (progress) progress(static_cast<int>(rows.size()));
  }
  return rows;
}

std::string nccl_tests_table(const std::vector<CollectiveRow>& rows, models::CollectiveOp op) {
  const bool reduces = op == models::CollectiveOp::all_reduce || op == models::CollectiveOp::reduce_scatter;
  const char* root = op == models::CollectiveOp::broadcast ? "0" : "-1";
  std::string out = fmt::format("#{:>12} {:>13} {:>9} {:>7} {:>7} {:>10} {:>8} {:>8}  {}\n", "size", "count", "type",
                                "redop", "root", "time", "algbw", "busbw", "algorithm");
  out += fmt::format("#{:>12} {:>13} {:>9} {:>7} {:>7} {:>10} {:>8} {:>8}\n", "(B)", "(elements)", "", "", "", "(us)",
                     "(GB/s)", "(GB/s)");
  for (const CollectiveRow& r : rows) {
    out += fmt::format(" {:>12.0f} {:>13.0f} {:>9} {:>7} {:>7} {:>10.2f} {:>8.2f} {:>8.2f}  {}/{}\n", r.size.value(),
                       std::floor(r.size.value() / 4), "float", reduces ? "sum" : "none", root,
                       to_seconds(r.time) * 1e6, r.algbw_gbs, r.busbw_gbs, models::algorithm_name(r.algorithm),
                       models::protocol_name(r.protocol));
  }
  return out;
}

output::Table validate_collectives(const std::string& published_csv, const models::Catalog& catalog) {
  const config::CsvTable csv = config::CsvTable::read_rows(published_csv);
  std::map<std::string, models::Platform> platforms;
  output::Table t;
  t.columns = {{"ranks", "count", "accelerators in the collective", true, {}, {}},
               {"bytes", "B", "buffer size as nccl-tests counts it", true, {}, {}},
               {"published_time_us", "us", "measured time (derived from busbw when only that is published)", false, {}, {}},
               {"simulated_time_us", "us", "model time", false, {}, {}},
               {"published_busbw_gbs", "GB/s", "measured bus bandwidth", false, {}, {}},
               {"simulated_busbw_gbs", "GB/s", "model bus bandwidth", false, {}, {}},
               {"time_error", "1", "simulated / published time - 1", false, {}, {}},
               {"bound", "1", "allowed |time_error|: 0.10 from 64 MiB up, 0.25 below", false, {}, {}}};
  std::vector<std::string> names, ops, requested, chosen, sources;
  for (std::size_t i = 0; i < csv.rows(); ++i) {
    const std::string name = csv.cell(i, "platform");
    if (!platforms.count(name)) {
      platforms.emplace(name, load_platform(name, catalog, SourceLocation{csv.file(), csv.line(i), 0}, "platform"));
    }
    const models::Platform& p = platforms.at(name);
    const auto op = models::op_from_name(csv.cell(i, "op"));
    if (!op) csv.fail(i, "op", "unknown collective '" + csv.cell(i, "op") + "'");
    const auto ranks = csv.integer(i, "ranks");
    const auto bytes = csv.integer(i, "bytes");
    if (!ranks || *ranks < 2 || *ranks > config::kMaxCount) {
      csv.fail(i, "ranks", "needs between 2 and " + std::to_string(config::kMaxCount) + " ranks");
    }
    // As `collective --gpus`: whole nodes, or a divisor of one.
    const int per_node = p.accelerators_per_node();
    if ((*ranks > per_node && *ranks % per_node != 0) || (*ranks < per_node && per_node % *ranks != 0)) {
      csv.fail(i, "ranks", fmt::format("{} ranks are not whole {}-GPU nodes of {}", *ranks, per_node, p.name));
    }
    if (!bytes || *bytes < 1 || *bytes > (1LL << 40)) csv.fail(i, "bytes", "needs a size between 1 B and 1 TiB");
    models::CollectiveChoice choice;
    const std::string algo = csv.cell(i, "algorithm");
    if (algo != "auto") {
      choice.algorithm = models::algorithm_from_name(algo);
      if (!choice.algorithm) csv.fail(i, "algorithm", "unknown algorithm '" + algo + "'");
    }
    const auto time = csv.number(i, "time_us");
    const auto busbw = csv.number(i, "busbw_gbs");
    if (!time && !busbw) csv.fail(i, "time_us", "give time_us or busbw_gbs");
    // A collective from a microsecond to a thousand seconds; a bus from 1 MB/s to 100 TB/s.
    if (time && !(*time >= 1e-3 && *time <= 1e9)) csv.fail(i, "time_us", "must be from 0.001 to 1e9 us");
    if (busbw && !(*busbw >= 1e-3 && *busbw <= 1e5)) csv.fail(i, "busbw_gbs", "must be from 0.001 to 100000 GB/s");
    std::vector<CollectiveRow> rows;
    try {
      rows = collective_sweep(p, *op, static_cast<int>(*ranks), {Bytes(static_cast<double>(*bytes))}, choice);
    } catch (const ModelError& e) {
      // The row asked for an algorithm the platform does not run (NVLS on a PCIe pair): its input.
      if (!choice.algorithm) throw;
      csv.fail(i, "algorithm", e.what());
    }
    const double factor = models::bus_factor(*op, static_cast<int>(*ranks));
    const double published_us = time ? *time : static_cast<double>(*bytes) * factor / (*busbw * 1e9) * 1e6;
    const double simulated_us = to_seconds(rows[0].time) * 1e6;
    const double values[] = {static_cast<double>(*ranks),
                             static_cast<double>(*bytes),
                             published_us,
                             simulated_us,
                             busbw ? *busbw : static_cast<double>(*bytes) * factor / (published_us * 1e3),
                             rows[0].busbw_gbs,
                             simulated_us / published_us - 1,
                             *bytes >= (64LL << 20) ? 0.10 : 0.25};
    for (std::size_t c = 0; c < t.columns.size(); ++c) t.columns[c].values.push_back(values[c]);
    names.push_back(name);
    ops.push_back(csv.cell(i, "op"));
    requested.push_back(algo);
    chosen.push_back(std::string(models::algorithm_name(rows[0].algorithm)) + "/" +
                     models::protocol_name(rows[0].protocol));
    sources.push_back(csv.cell(i, "source"));
  }
  t.columns.insert(t.columns.begin(),
                   {output::text_column("platform", "scenarios/platforms file", names),
                    output::text_column("op", "collective", ops),
                    output::text_column("algorithm", "as measured: auto = the library's choice", requested)});
  t.columns.push_back(output::text_column("simulated_algorithm", "algorithm/protocol the model ran", chosen));
  t.columns.push_back(output::text_column("source", "where the measurement is published", sources));
  return t;
}

}  // namespace sp
