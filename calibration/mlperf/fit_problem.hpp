// The least-squares problem behind `scalepoint calibrate mlperf`: log(predicted / published) of
// each MLPerf row, in units of the scatter between systems the model cannot tell apart, plus a
// weak prior per parameter. Parameters, each physical and bounded by its transform:
//  - per workload, software_efficiency within the file's plausible range (a logistic on the log
//    scale): how fast its MLPerf implementation runs relative to its ops as described;
//  - per workload, the host time per training step where its file has it, within the file's
//    plausible range (a logistic on the log scale, as the efficiency);
//  - per workload, the per-evaluation overhead, per-evaluation-batch overhead, host work and
//    asynchronous scoring where its file has them (log):
//    quantities once read off single rows, now fitted so that a row left out leaves them out too;
//  - the compute-clock gain of a run that boosts its SM clock (nvidia-smi boost-slider --vboost),
//    within [0, Calibration::kMaxClockBoostGain] (a logistic), on the rows whose configurations
//    set it (NVIDIA's one-node Llama2-70B LoRA ones): the same silicon at another clock;
//  - per software stack, architecture family on a stack, and accelerator kind with rows (log):
//    the software efficiency beyond what kernel costs explain, relative to a reference, with
//    zero-centred priors whose widths are the levels' spreads (models/calibration.hpp). The
//    reference is the kind with the most rows in the fit, with its family and stack: the anchor
//    of the levels must have data, or the workload efficiencies and every level drift together
//    where only the priors hold them (a fit without its reference kind is left with no
//    estimate of how that kind compares with the rest; it becomes an unseen kind instead).
// Nothing else is fitted: peaks, bandwidths, collectives, convergence and evaluation rules come
// from hardware, workload and platform data.
#pragma once

#include <string>
#include <vector>

#include <Eigen/Dense>

#include "calibration/fit/levenberg_marquardt.hpp"
#include "calibration/predict/system_model.hpp"
#include "models/calibration.hpp"

namespace sp::calibration {

struct Parameter {
  enum class Kind { efficiency, evaluation_cost, host_per_step, clock_boost, stack, family, kind } kind;
  std::string name;   // workload or level key
  int workload = -1;  // for the workload's parameters
  double prior = 0;   // centre, in the transformed space
  double sd = 2;      // width, in the transformed space
  int cost = -1;      // for an evaluation cost, its index in models::kEvaluationCosts
  std::string stack;  // for a host time per step: the stack whose code it is, empty for the files'
  double lo = 0, hi = 0;  // for a host time per step: its plausible range in seconds (a logistic on log)
};

// A row resolved once: its workload, platform, batch and layout do not depend on the parameters.
struct PreparedRow {
  MlperfResult row;
  models::Workload workload;
  models::Platform platform;
  std::int64_t gbs = 0;
  models::ParallelSpec spec;
  std::string system, kind, stack;  // hold-out groups and the software it ran
  std::string family;               // "family/stack"
  std::vector<Eigen::Index> deps;   // the parameters it depends on; deps[0] is its efficiency
  std::vector<Eigen::Index> levels; // those of deps that are software levels
  double converged_samples = 0;     // what its scored runs converged at (0: not in the table)
};

class FitProblem {
 public:
  /// Resolves every row with a published time; `skipped` gets the others and why.
  FitProblem(const std::vector<MlperfResult>& rows, const models::Catalog& catalog, const PlatformCatalog& platforms,
             std::vector<std::string>& skipped);

  const std::vector<PreparedRow>& rows() const { return rows_; }
  const std::vector<Parameter>& parameters() const { return parameters_; }
  Eigen::VectorXd prior() const;

  /// log(predicted / published) of one row at x, converging where the RCP table says, as any
  /// prediction does (the fit itself uses the row's own convergence: residuals below).
  double log_error(const PreparedRow& r, const Eigen::VectorXd& x) const;
  /// log(model / logs) of each of the row's phase observations at x (observed convergence).
  std::vector<double> phase_log_errors(const PreparedRow& r, const Eigen::VectorXd& x) const;

  struct Fit {
    Eigen::VectorXd x;
    std::string reference_stack, reference_family, reference_kind;  // levels held at 0
    Eigen::MatrixXd covariance;   // of the parameters seen, in the transformed space
    std::vector<bool> seen;       // parameters some fitted row depends on, the reference's excepted
    int iterations = 0;
    bool converged = false;
    double cost = 0;  // the objective at x: squared residuals of the rows and the priors
  };
  /// Fits on the rows `use`, from `start` (parameters no used row depends on, and the levels of
  /// the reference, are reset to their priors and stay there).
  Fit fit(const std::vector<std::size_t>& use, Eigen::VectorXd start, int iterations = 40) const;
  /// The fit on `use` from starts none of which is read off the data, the lowest cost kept (the
  /// first on a tie): the priors, and the priors with every host time per step at a tenth and at
  /// nine tenths of its log range. A software level trades against a host time where few rows
  /// pin them, and from the priors alone the fit stopped in the higher of two basins (tinygrad:
  /// cost 301.05 at 0.31 s a step and a level of x0.625; 299.85 at 1 ms and x0.207).
  Fit fit_from_starts(const std::vector<std::size_t>& use, int iterations) const;
  /// A held-out fold's fit: its objective has the same local minima, so it is fitted from the
  /// starts of fit_from_starts and from `also` (the fit on every row), and the lowest cost is kept
  /// (fit_from_starts' on a tie; `also` is not tried where it is the priors). Each is a start:
  /// the result is a stationary point of the fold's objective, which the left-out rows are not in.
  Fit fit_fold(const std::vector<std::size_t>& use, const Eigen::VectorXd& also, int iterations) const;

  /// The fit as a models::Calibration (levels the fit saw, with their uncertainties); model
  /// errors are left at 0 for the caller.
  models::Calibration calibration(const Fit& f) const;

 private:
  Eigen::Index add(Parameter p);
  /// Sets the fit's reference from the rows `use` and marks its levels as not fitted.
  void choose_reference(const std::vector<std::size_t>& use, Fit& f) const;
  models::Workload with(const PreparedRow& r, const Eigen::VectorXd& x, models::Platform& platform) const;
  /// The row's residuals at x, in units of their scatter: its time, then its phases, at the
  /// samples its own runs converged at, so that a submission's convergence luck (BERT on A100
  /// PCIe needed 1.4x the reference's samples) is not read as its hardware's or software's speed.
  void residuals(const PreparedRow& r, const Eigen::VectorXd& x, double* out) const;

  std::vector<PreparedRow> rows_;
  std::vector<Parameter> parameters_;
  std::vector<models::Workload> files_;  // the workloads as their files give them
  models::Calibration defaults_;         // spreads and references
};

/// The normal-consistent robust spread of log errors, median |log(1 + e)| / 0.6745: one row on an
/// unseen software stack does not widen every interval; it stays visible in the coverage.
double robust_log_spread(std::vector<double> abs_log);

}  // namespace sp::calibration
