// Closed forms of a run that checkpoints every tau of training and fails as a Poisson process of
// rate lambda, each failure costing a restart R (which can itself be hit) and the work since the
// last checkpoint. Daly (2006, "A higher order estimate of the optimum checkpoint interval for
// restart dumps", Future Generation Computer Systems 22(3)): a segment of w wall seconds that must
// run without a failure takes, in expectation,
//   E[w] = e^{lambda R} (e^{lambda w} - 1) / lambda,
// and a run of `work` is ceil(work / tau) segments, each of tau + C but the last (no checkpoint
// after the end). The Monte Carlo of run_simulation.hpp simulates the same process; these are
// its exact expectations and the optimum interval they give.
#pragma once

namespace sp::models {

/// Expected wall seconds of one segment of `w` seconds, restart `r`, failures per second `lambda`.
double expected_segment_s(double w, double r, double lambda);
/// Expected wall seconds of `work` with a checkpoint of `cost` after every `tau` of it.
double expected_run_s(double work, double tau, double cost, double r, double lambda);
/// The interval minimising expected_run_s over tau = work / k (whole segments), tau >= `min_tau`.
double optimal_interval_s(double work, double cost, double r, double lambda, double min_tau);

/// Young (1974, "A first order approximation to the optimum checkpoint interval", CACM 17(9)):
/// sqrt(2 C M).
double young_interval_s(double cost, double mtbf);
/// Daly (2006), eq. 37: sqrt(2 C M) [1 + sqrt(C / 2M) / 3 + (C / 2M) / 9] - C for C < 2M, else M.
double daly_interval_s(double cost, double mtbf);

}  // namespace sp::models
