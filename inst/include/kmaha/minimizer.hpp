// kmaha core: the interface of an unconstrained minimiser that the caller
// (the R glue: R's own L-BFGS-B, src/optim.h) supplies to the core's
// drivers, e.g. NCA's (nca_fit.hpp).  The core decides what to minimise and
// from where; the minimiser only minimises.
#ifndef KMAHA_MINIMIZER_HPP
#define KMAHA_MINIMIZER_HPP

#include <functional>
#include <limits>
#include <sstream>
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

// Progress lines of a driver when verbose (the glue prints them); empty:
// silent.
using log_fn = std::function<void(const std::string&)>;

// The minimiser's view of an objective on d x D maps: the parameters are
// the map vectorised (column-major), eval(A, &G) returns f(A) and writes the
// gradient into G (a d x D view of the minimiser's gradient vector); `log`
// (may be empty; must outlive the result) gets a line per evaluation.
template <class Eval>
objective_fn map_objective(arma::uword d, arma::uword D, Eval eval, const log_fn& log) {
  int evals = 0;
  return [d, D, eval, &log, evals](const arma::vec& par, arma::vec& g) mutable -> double {
    const arma::mat A(const_cast<double*>(par.memptr()), d, D, false, true);
    // The gradient is written straight into g (same d*D doubles).
    g.set_size(d * D);
    arma::mat G(g.memptr(), d, D, false, true);
    const double f = eval(A, &G);
    ++evals;
    if (log) {
      std::ostringstream s;
      s << "  evaluation " << evals << ": objective " << f << ", gradient norm "
        << arma::norm(g, 2);
      log(s.str());
    }
    return f;
  };
}

// The line a driver logs when the minimiser has returned, with the
// objective `value` at the parameters returned.
inline void log_minimize_end(const log_fn& log, const minimize_result& mr, double value) {
  if (!log) return;
  std::ostringstream s;
  s << "L-BFGS-B: " << mr.message << " after " << mr.evaluations << " evaluations ("
    << mr.stop << "); objective " << value;
  log(s.str());
}

}  // namespace kmaha

#endif  // KMAHA_MINIMIZER_HPP
