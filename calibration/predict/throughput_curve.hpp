// The baseline the scaling is judged against: a per-accelerator throughput curve with two
// parameters per benchmark, thr(x) = p x / (x + k), x the global batch per accelerator (a fixed
// cost per step of k samples' worth of work, whatever the batch), and the samples to converge
// from the same RCP tables the model reads. Time to train at N and global batch G:
//   T = S(G) / (N thr(x)) = S(G) (x + k) / (p G)
// Anchored on a measured time T_a of another row of the same benchmark, p cancels:
//   T = T_a x [S(G) (x + k) / G] / [S(G_a) (x_a + k) / G_a]
// so only k matters for a scaling prediction. k is fitted per benchmark on the rows it is given,
// with p in closed form per accelerator kind (a kind's p cancels in its own anchored ratios, and a
// common p would let the gap between an RTX and a B200 pass for a batch effect); a kind with a
// single row then says nothing about k.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace sp::calibration {

struct CurvePoint {
  std::string kind;                // accelerator kind: each has its own p
  double samples_to_converge = 0;  // S(G): what the score stands for (RCP tables)
  double global_batch = 0;         // G
  double accelerators = 0;         // N
  double minutes = 0;              // the published time to train
};

struct ThroughputCurve {
  std::map<std::string, double> p;  // per kind: samples per minute per accelerator at an infinite batch
  double k = 0;  // samples per accelerator of fixed cost per step (k >= 0)

  /// Minutes to train `x` (minutes is ignored) at p = 1: what the anchored ratio uses.
  double shape(const CurvePoint& x) const;
  /// `target`'s time from `anchor`'s published time and the curve's ratio.
  double anchored(const CurvePoint& target, const CurvePoint& anchor) const;
};

/// The least-squares fit in log time over `points` (at least two; k searched over [0, 10^4]
/// samples per accelerator, each kind's p in closed form for each k).
ThroughputCurve fit_throughput_curve(const std::vector<CurvePoint>& points);

}  // namespace sp::calibration
