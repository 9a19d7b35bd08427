// kmaha core: the interface of an unconstrained minimiser that the caller
// (the R glue: R's own L-BFGS-B, src/optim.h) supplies to the core's
// drivers, e.g. NCA's (nca_fit.hpp).  The core decides what to minimise and
// from where; the minimiser only minimises.
#ifndef KMAHA_MINIMIZER_HPP
#define KMAHA_MINIMIZER_HPP

#include <functional>
#include <limits>
#include <string>
#include <vector>
#include "common.hpp"

namespace kmaha {

// f(x, grad): the objective at x, its gradient written to grad (resized by
// f as needed).
using objective_fn = std::function<double(const arma::vec&, arma::vec&)>;

struct minimize_result {
  arma::vec par;              // the parameters returned
  double value = 0.0;         // the objective there (see value_at_par)
  bool value_at_par = false;  // value was evaluated exactly at par
  int evaluations = 0;        // objective evaluations
  std::vector<double> trace;  // objective after each evaluation
  int fail = 0;               // the minimiser's own code (L-BFGS-B: 0 converged,
                              // 1 iteration limit, 51/52 warnings)
  std::string message;        // the minimiser's own message
  // Why it stopped, in words: "tolerance", "gradient", "line search at
  // optimum", "line search failed" or "iteration limit"; converged for the
  // first three.
  std::string stop;
  bool converged = false;
  double grad_norm = std::numeric_limits<double>::quiet_NaN();  // at par
};

// minimize(f, x0, max_iter, tol): minimise f from x0 with at most max_iter
// iterations, stopping when the relative reduction of f falls below tol.
// Exceptions of f (kmaha::interrupted included) propagate.
using minimizer_fn = std::function<minimize_result(
    const objective_fn&, const arma::vec&, int /* max_iter */, double /* tol */)>;

}  // namespace kmaha

#endif  // KMAHA_MINIMIZER_HPP
