#include "sim/scenario/break_even.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace sp {

std::vector<BreakEven> break_even_points(const std::vector<int>& n_in, const std::vector<double>& t_in,
                                         const BreakEvenOptions& o, const std::vector<double>* e_in) {
  std::vector<int> n;
  std::vector<double> t, e, w;
  for (std::size_t i = 0; i < n_in.size(); ++i) {
    if (std::isfinite(t_in[i]) && t_in[i] > 0) {
      n.push_back(n_in[i]);
      t.push_back(t_in[i]);
      e.push_back(e_in && i < e_in->size() ? (*e_in)[i] : std::numeric_limits<double>::quiet_NaN());
      const double wall = o.wall_s && i < o.wall_s->size() ? (*o.wall_s)[i] : t_in[i];
      w.push_back(std::isfinite(wall) && wall > 0 ? wall : t_in[i]);
    }
  }
  BreakEven energy{"energy_optimal", "N with the least energy per run", std::nullopt};
  double least = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (std::isfinite(e[i]) && (!energy.accelerators || e[i] < least)) {
      least = e[i];
      energy.accelerators = n[i];
    }
  }
  BreakEven eff{"efficiency", fmt::format("largest N with E' >= {}", o.efficiency_threshold), std::nullopt};
  BreakEven dbl{"doubling", fmt::format("first N where doubling buys < {}x", o.doubling_speedup), std::nullopt};
  BreakEven knee{"knee", "knee of log T vs log N", std::nullopt};
  BreakEven cost{"time_x_gpu_hours", "N minimising N x T^2", std::nullopt};
  std::vector<BreakEven> out;
  BreakEven cheapest{"deadline_cheapest", "", std::nullopt};
  if (o.deadline_s) {
    cheapest.definition = fmt::format("fewest GPU-hours with T <= {:.0f} s", *o.deadline_s);
    double best = 0;
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (w[i] <= *o.deadline_s && (!cheapest.accelerators || n[i] * w[i] < best)) {
        best = n[i] * w[i];
        cheapest.accelerators = n[i];
      }
    }
  }
  const auto finish = [&](std::vector<BreakEven> v) {
    if (o.deadline_s) v.push_back(cheapest);
    if (e_in) v.push_back(energy);
    for (BreakEven& b : v) {
      for (std::size_t i = 0; b.accelerators && i < n.size(); ++i) {
        if (n[i] == *b.accelerators) b.time_s = t[i], b.wall_s = w[i];
      }
    }
    return v;
  };
  if (n.empty()) return finish({eff, dbl, knee, cost});

  for (std::size_t i = 0; i < n.size(); ++i) {
    const double e_prime = (t[0] / t[i]) / (static_cast<double>(n[i]) / n[0]);
    if (e_prime >= o.efficiency_threshold) eff.accelerators = n[i];
  }
  for (std::size_t i = 0; i + 1 < n.size(); ++i) {
    const double doublings = std::log2(static_cast<double>(n[i + 1]) / n[i]);
    const double per_doubling = std::pow(t[i] / t[i + 1], 1.0 / doublings);
    if (per_doubling < o.doubling_speedup) {
      dbl.accelerators = n[i];
      break;
    }
  }
  if (n.size() >= 3) {
    // Scale log N and log T to [0, 1]; the curve falls, so measure how far each point lies below
    // the chord from the first to the last point.
    const double x0 = std::log(n.front()), x1 = std::log(n.back());
    double ymin = std::log(t[0]), ymax = ymin;
    for (double v : t) {
      ymin = std::min(ymin, std::log(v));
      ymax = std::max(ymax, std::log(v));
    }
    double best = 0;
    for (std::size_t i = 1; i + 1 < n.size(); ++i) {
      const double x = (std::log(n[i]) - x0) / (x1 - x0);
      const double y = ymax > ymin ? (std::log(t[i]) - ymin) / (ymax - ymin) : 0;
      const double chord = (std::log(t[0]) - ymin) / (ymax - ymin) +
                           x * ((std::log(t.back()) - std::log(t[0])) / (ymax - ymin));
      const double below = chord - y;
      if (below > best) {
        best = below;
        knee.accelerators = n[i];
      }
    }
  }
  double best_cost = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const double c = n[i] * t[i] * t[i];
    if (!cost.accelerators || c < best_cost) {
      best_cost = c;
      cost.accelerators = n[i];
    }
  }
  return finish({eff, dbl, knee, cost});
}

std::string describe(const std::vector<BreakEven>& points) {
  std::string out;
  for (const BreakEven& b : points) {
    out += fmt::format("  {:<17} {:<42} {}\n", b.name, b.definition,
                       b.accelerators ? fmt::format("N = {}", *b.accelerators) : std::string("not reached"));
  }
  return out;
}

}  // namespace sp
