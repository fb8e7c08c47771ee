// `scalepoint validate --transformer FILE`: published iteration times of transformer training
// runs (a CSV of architecture, layout and measured time, a source per row; the shipped one is
// Korthikanti et al.'s Selene runs, calibration/data/transformer/) against the step the model
// simulates for the same architecture (models/workloads/transformer.hpp) and layout on the
// platform the file names. Nothing is fitted to the rows: the MLPerf calibration is not applied
// (another software stack), every efficiency is the platform's and the accelerator's as shipped.
#pragma once

#include <string>
#include <vector>

#include "models/catalog.hpp"
#include "models/network/platform.hpp"
#include "models/step/step_model.hpp"
#include "sim/config/csv.hpp"

namespace sp::calibration {

struct TransformerRun {
  std::string model, source, layout;
  int accelerators = 0;
  double measured_s = 0;
  double predicted_s = 0;  // the simulated step (one iteration of the global batch)
  double memory_gb = 0;    // per accelerator, as the model estimates it
  double states_activations_gb = 0;  // of which weights, gradients, optimizer and activations (no reserve)
  double published_memory_gb = 0;    // where published (0: not), weights, optimizer and activations
  bool fits = true;
  models::StepResult step;

  double error() const { return predicted_s / measured_s - 1; }
  double memory_error() const { return states_activations_gb / published_memory_gb - 1; }
};

/// Every row of `table` on `platform`; an InputError names the file, line and column of a bad cell.
std::vector<TransformerRun> validate_transformers(const config::CsvTable& table, const models::Platform& platform,
                                                  const models::Catalog& catalog);

}  // namespace sp::calibration
