// Levenberg-Marquardt for nonlinear least squares, min_x sum_i r_i(x)^2 (Eigen, dense normal
// equations with Marquardt's diagonal scaling). The caller gives the residuals and their
// Jacobian (it knows which residuals each parameter touches, so finite differences stay cheap).
#pragma once

#include <functional>

#include <Eigen/Dense>

namespace sp::calibration {

struct LeastSquaresProblem {
  std::function<Eigen::VectorXd(const Eigen::VectorXd&)> residuals;
  /// Jacobian at x, given the residuals there.
  std::function<Eigen::MatrixXd(const Eigen::VectorXd&, const Eigen::VectorXd&)> jacobian;
};

struct LeastSquaresResult {
  Eigen::VectorXd x;
  Eigen::VectorXd residuals;
  double cost = 0;  // sum of squared residuals
  int iterations = 0;
  bool converged = false;
};

LeastSquaresResult levenberg_marquardt(const LeastSquaresProblem& problem, Eigen::VectorXd x0, int max_iterations = 60,
                                       double tolerance = 1e-10);

/// Forward-difference Jacobian of all residuals (for problems without structure to exploit).
Eigen::MatrixXd numeric_jacobian(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& f,
                                 const Eigen::VectorXd& x, const Eigen::VectorXd& fx, double step = 1e-6);

}  // namespace sp::calibration
