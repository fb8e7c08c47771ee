// What the model has to beat: the prediction anyone could make from the published table alone.
// For each row, the nearest other published row of the same benchmark (its own kind first, then
// the nearest accelerator count; never a row the hold-out leaves out, so it leaks as little as
// the model) scaled linearly in the accelerator count and in dense peak FLOP/s at the workload's
// precision: T = T_other x (N_other / N) x (peak_other / peak). It knows nothing of convergence
// at a larger batch, communication, evaluation or software, which is what the simulator adds;
// where it is as good, the simulator is not earning its keep.
#pragma once

#include <vector>

#include "calibration/predict/predict_table.hpp"

namespace sp::calibration {

enum class BaselineExclusion {
  system,  // rows of the row's own system are not used (in sample and leave one system out)
  kind,    // nor are rows of its accelerator kind (leave one kind out)
};

/// Sets baseline_error (naive prediction / published - 1) on every row that has a candidate.
void add_naive_baselines(std::vector<ValidationRow>& rows, BaselineExclusion exclusion);

}  // namespace sp::calibration
