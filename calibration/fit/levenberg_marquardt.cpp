#include "calibration/fit/levenberg_marquardt.hpp"

#include <cmath>

namespace sp::calibration {

Eigen::MatrixXd numeric_jacobian(const std::function<Eigen::VectorXd(const Eigen::VectorXd&)>& f,
                                 const Eigen::VectorXd& x, const Eigen::VectorXd& fx, double step) {
  Eigen::MatrixXd j(fx.size(), x.size());
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    Eigen::VectorXd xh = x;
    const double h = step * std::max(1.0, std::abs(x[k]));
    xh[k] += h;
    j.col(k) = (f(xh) - fx) / h;
  }
  return j;
}

LeastSquaresResult levenberg_marquardt(const LeastSquaresProblem& p, Eigen::VectorXd x, int max_iterations,
                                       double tolerance) {
  LeastSquaresResult out;
  Eigen::VectorXd r = p.residuals(x);
  double cost = r.squaredNorm();
  double lambda = 1e-3;
  for (int it = 0; it < max_iterations; ++it) {
    out.iterations = it + 1;
    const Eigen::MatrixXd j = p.jacobian(x, r);
    const Eigen::MatrixXd jtj = j.transpose() * j;
    const Eigen::VectorXd g = j.transpose() * r;
    bool improved = false;
    // At a minimum no step helps: give up once the damping leaves only steps far below the
    // tolerance rather than after a fixed count (each try costs a residual evaluation).
    for (int tries = 0; tries < 20 && !improved && lambda < 1e8; ++tries) {
      Eigen::MatrixXd a = jtj;
      for (Eigen::Index k = 0; k < a.rows(); ++k) a(k, k) += lambda * std::max(jtj(k, k), 1e-12);
      const Eigen::VectorXd step = a.ldlt().solve(-g);
      const Eigen::VectorXd xn = x + step;
      const Eigen::VectorXd rn = p.residuals(xn);
      const double cn = rn.squaredNorm();
      if (std::isfinite(cn) && cn < cost) {
        const double gain = (cost - cn) / std::max(cost, 1e-300);
        x = xn;
        r = rn;
        cost = cn;
        lambda = std::max(lambda / 3, 1e-12);
        improved = true;
        if (gain < tolerance || step.norm() < tolerance * (1 + x.norm())) {
          out.converged = true;
          it = max_iterations;  // done
        }
      } else {
        lambda *= 4;
      }
    }
    if (!improved) {
      out.converged = true;  // no step reduces the cost: a minimum (to the damping's resolution)
      break;
    }
  }
  out.x = x;
  out.residuals = r;
  out.cost = cost;
  return out;
}

}  // namespace sp::calibration
