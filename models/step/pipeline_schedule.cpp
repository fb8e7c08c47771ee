#include "models/step/pipeline_schedule.hpp"

#include <algorithm>

namespace sp::models {

std::vector<std::vector<int>> split_contiguous(const std::vector<double>& costs, int parts) {
  const int n = static_cast<int>(costs.size());
  std::vector<double> mid(costs.size());
  double total = 0;
  for (std::size_t k = 0; k < costs.size(); ++k) {
    mid[k] = total + costs[k] / 2;
    total += costs[k];
  }
  std::vector<int> start(static_cast<std::size_t>(parts) + 1, 0);
  start[static_cast<std::size_t>(parts)] = n;
  for (int j = 1; j < parts; ++j) {
    int k = 0;
    while (k < n && mid[static_cast<std::size_t>(k)] < total * j / parts) ++k;
    start[static_cast<std::size_t>(j)] = std::clamp(k, start[static_cast<std::size_t>(j) - 1] + 1, n - (parts - j));
  }
  std::vector<std::vector<int>> out(static_cast<std::size_t>(parts));
  for (int j = 0; j < parts; ++j) {
    for (int k = start[static_cast<std::size_t>(j)]; k < start[static_cast<std::size_t>(j) + 1]; ++k) {
      out[static_cast<std::size_t>(j)].push_back(k);
    }
  }
  return out;
}

std::vector<std::vector<int>> split_on_compute(const std::vector<const LayerCompute*>& instances, int parts) {
  std::vector<double> costs;
  for (const LayerCompute* c : instances) costs.push_back(to_seconds(c->forward.time + c->backward.time));
  return split_contiguous(costs, parts);
}

double micro_batches_in_flight(int stage, int stages, int v, int m) {
  if (v == 1) return std::min(stages - stage, m);
  return std::min(m * v, 2 * (stages - stage - 1) + (v - 1) * stages + 1) / static_cast<double>(v);
}

std::vector<ScheduleUnit> pipeline_order(int stage, int stages, int v, int m) {
  const auto unit = [&](bool forward, int i) {
    const int c = (i / stages) % v;
    return ScheduleUnit{forward, forward ? c : v - 1 - c, (i / (stages * v)) * stages + i % stages};
  };
  std::vector<ScheduleUnit> order;
  const int units = m * v;
  const int warm = v == 1 ? std::min(stages - stage - 1, m) : std::min(2 * (stages - stage - 1) + (v - 1) * stages, units);
  for (int i = 0; i < warm; ++i) order.push_back(unit(true, i));
  for (int i = 0; i < units - warm; ++i) {
    order.push_back(unit(true, warm + i));
    order.push_back(unit(false, i));
  }
  for (int i = units - warm; i < units; ++i) order.push_back(unit(false, i));
  return order;
}

}  // namespace sp::models
