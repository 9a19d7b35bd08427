// L-BFGS(-B) for the glue: wraps R's own lbfgsb() (R_ext/Applic.h) around an
// objective f(x, grad) supplied by the core.  Used by NCA, KNCA and the
// low-rank LMNN solver.
//
// lbfgsb() is C code: no C++ exception may cross it, and it calls R's
// error() (a longjmp) when the objective is not finite.  So the C callbacks
// below catch every exception of the objective (kmaha::interrupted included,
// see the interrupt policy in kmaha/common.hpp) and turn a non-finite value
// into an exception of their own; they then make lbfgsb() return at once, and
// minimize_lbfgs() rethrows the exception after it has returned.
#ifndef KMAHA_OPTIM_H
#define KMAHA_OPTIM_H

#include "glue.h"
#include <kmaha/minimizer.hpp>
#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <string>
#include <vector>

// R's L-BFGS-B, as declared in R_ext/Applic.h (part of R's API, "Writing R
// Extensions" 6.8).  That header is not included because the BLAS
// prototypes it pulls in clash with Armadillo's (GCC warns about every one).
extern "C" {
typedef double optimfn(int, double*, void*);
typedef void optimgr(int, double*, double*, void*);
void lbfgsb(int n, int m, double* x, double* l, double* u, int* nbd,
            double* Fmin, optimfn fn, optimgr gr, int* fail, void* ex,
            double factr, double pgtol, int* fncount, int* grcount, int maxit,
            char* msg, int trace, int nREPORT);
}

namespace kmaha_glue {

struct lbfgs_result {
  arma::vec par;
  double value = 0.0;
  int fncount = 0, grcount = 0;
  int fail = 0;            // 0 converged, 1 iteration limit, 51/52 warnings
  std::string message;
  std::vector<double> trace;  // objective after each function evaluation
  // True when `value` is the objective evaluated exactly at `par` (the last
  // evaluation was at the returned parameters), so callers need not
  // evaluate again.
  bool value_at_par = false;
  // Why the run stopped, in words (see classify_stop()):
  //   "tolerance"               relative reduction of f below tol;
  //   "gradient"                the projected gradient vanished;
  //   "line search at optimum"  the line search found no decrease, but at a
  //                             point where f cannot be reduced beyond tol;
  //   "line search failed"      the line search found no decrease elsewhere;
  //   "iteration limit"         maxit iterations.
  std::string stop;
  // True for the first three: the result is a minimum to tolerance.
  bool converged = false;
  // Euclidean norm of the gradient at `par`.
  double grad_norm = std::numeric_limits<double>::quiet_NaN();
};

namespace detail {
struct lbfgs_state {
  std::function<double(const arma::vec&, arma::vec&)> fg;
  kmaha::interrupt_fn interrupt;
  arma::vec last_x, last_g;
  double last_f = 0.0;
  double last_gnorm = 0.0;  // norm of the objective's own gradient at last_x
  bool have = false;        // last_x, last_f, last_g belong together
  bool rejected = false;    // last_x was a trial point without a finite value
  double worst = -std::numeric_limits<double>::infinity();  // largest f seen
  std::exception_ptr stop;  // set once: the exception that stops the run
  std::vector<double>* trace = nullptr;
  int calls = 0;
};

// One evaluation for lbfgsb(), which is C code: nothing may be thrown from
// here, and lbfgsb() calls R's error() on a non-finite value.  So:
//  * an exception of the objective (an interrupt included) is kept, and
//    lbfgsb() is made to stop: a zero gradient ends it at its next test (the
//    projected gradient is <= pgtol) and a value far below any seen makes a
//    line search in progress accept the step at once;
//  * a trial point where the parameters or the objective are not finite
//    (a step too long for double precision) is rejected with a value above
//    any seen, so that the line search shortens the step; at the starting
//    point that is an error;
//  * a gradient so small that no step as long as the parameters themselves
//    (or of length 1) could change f beyond rounding,
//    ||g|| max(||x||, 1) <= eps max(|f|, 1), is reported as exactly zero:
//    the point is stationary in double precision, and lbfgsb() stops there
//    instead of computing a step from a gradient near underflow (which can
//    give NaN parameters).
inline void eval(lbfgs_state* c, int n, const double* x) {
  if (c->stop) return;  // stopping: last_f and last_g hold the stop values
  if (c->have && std::equal(x, x + n, c->last_x.memptr())) return;
  try {
    if ((++c->calls % 5) == 0) kmaha::check_interrupt(c->interrupt);
    c->have = false;
    c->last_x.set_size(n);
    std::copy(x, x + n, c->last_x.memptr());
    c->last_g.set_size(n);
    bool finite = c->last_x.is_finite();
    if (finite) {
      c->last_f = c->fg(c->last_x, c->last_g);
      finite = std::isfinite(c->last_f) && c->last_g.is_finite();
    }
    if (!finite) {
      if (c->calls == 1) {
        throw kmaha::error(
            kmaha::error_kind::numerical,
            "the objective or its gradient is not finite at the starting "
            "parameters");
      }
      c->rejected = true;
      c->last_f = c->worst + std::max(std::fabs(c->worst), 1.0);
      c->last_g.zeros();
      c->last_gnorm = std::numeric_limits<double>::quiet_NaN();
      c->have = true;
      return;
    }
    c->rejected = false;
    c->worst = std::max(c->worst, c->last_f);
    c->last_gnorm = arma::norm(c->last_g, 2);
    const double scale = std::max(std::fabs(c->last_f), 1.0);
    if (c->last_gnorm * std::max(arma::norm(c->last_x, 2), 1.0) <=
        std::numeric_limits<double>::epsilon() * scale) {
      c->last_g.zeros();
    }
    c->have = true;
    if (c->trace) c->trace->push_back(c->last_f);
  } catch (...) {
    c->stop = std::current_exception();
    c->have = false;
    c->last_f = -1e300;
    c->last_g.zeros(n);
  }
}

inline double fn(int n, double* x, void* ex) {
  auto* c = static_cast<lbfgs_state*>(ex);
  eval(c, n, x);
  return c->last_f;
}

inline void gr(int n, double* x, double* g, void* ex) {
  auto* c = static_cast<lbfgs_state*>(ex);
  eval(c, n, x);
  std::copy(c->last_g.begin(), c->last_g.end(), g);
}
}  // namespace detail

namespace detail {
// A line search that ends without a decrease ("ABNORMAL_TERMINATION_IN_
// LNSRCH") often sits at the optimum, where rounding hides any decrease.  It
// counts as converged when either
//  * the first-order change of f over a step as long as x itself (or of
//    length 1) is below tol relative to f: ||g|| max(||x||, 1) <= tol
//    max(|f|, 1); or
//  * the last improvements of f (the last two new minima among the
//    evaluations) differ by at most tol relative to f.
inline bool line_search_at_optimum(const std::vector<double>& trace, double f,
                                   double grad_norm, double x_norm,
                                   double tol) {
  const double scale = std::max(std::fabs(f), 1.0);
  if (grad_norm * std::max(x_norm, 1.0) <= tol * scale) return true;
  double best = std::numeric_limits<double>::infinity(), prev = best;
  for (double v : trace) {
    if (v < best) {
      prev = best;
      best = v;
    }
  }
  return std::isfinite(prev) && prev - best <= tol * std::max(std::fabs(prev), scale);
}
}  // namespace detail

// Minimise f starting from x0.  `factr` and `pgtol` have optim()'s meaning;
// `m` is the number of correction pairs kept; `interrupt` is polled every
// fifth evaluation.  Exceptions of f (kmaha::interrupted included) are
// rethrown once lbfgsb() has returned.
inline lbfgs_result minimize_lbfgs(
    std::function<double(const arma::vec&, arma::vec&)> f, const arma::vec& x0,
    int maxit, double factr, double pgtol, const kmaha::interrupt_fn& interrupt,
    int m = 10) {
  lbfgs_result res;
  detail::lbfgs_state st;
  st.fg = std::move(f);
  st.interrupt = interrupt;
  st.trace = &res.trace;
  st.last_g.zeros(x0.n_elem);
  const int n = static_cast<int>(x0.n_elem);
  res.par = x0;
  std::vector<double> lower(n, 0.0), upper(n, 0.0);
  std::vector<int> nbd(n, 0);  // unbounded
  char msg[60];
  double fmin = 0.0;
  lbfgsb(n, m, res.par.memptr(), lower.data(), upper.data(), nbd.data(), &fmin,
         detail::fn, detail::gr, &res.fail, &st, factr, pgtol, &res.fncount,
         &res.grcount, maxit, msg, 0, 10);
  if (st.stop) std::rethrow_exception(st.stop);
  res.value = fmin;
  res.message = msg;
  if (st.have && !st.rejected &&
      std::equal(res.par.begin(), res.par.end(), st.last_x.begin())) {
    res.value = st.last_f;
    res.value_at_par = true;
    res.grad_norm = st.last_gnorm;
  } else if (res.fail != 0) {
    // The gradient at the returned point is needed to classify the stop.
    arma::vec g(n);
    res.value = st.fg(res.par, g);
    res.value_at_par = true;
    res.grad_norm = arma::norm(g, 2);
  }
  if (res.fail == 0) {
    res.stop = res.message.find("PGTOL") != std::string::npos ? "gradient" : "tolerance";
    res.converged = true;
  } else if (res.fail == 1) {
    res.stop = "iteration limit";
  } else {
    const double tol = factr * std::numeric_limits<double>::epsilon();
    res.converged = detail::line_search_at_optimum(
        res.trace, res.value, res.grad_norm, arma::norm(res.par, 2), tol);
    res.stop = res.converged ? "line search at optimum" : "line search failed";
  }
  return res;
}

// R's L-BFGS-B as the core's minimiser (kmaha/minimizer.hpp): tol is the
// relative reduction of the objective at which it stops (optim()'s factr is
// in units of the machine epsilon); `interrupt` is polled as in
// minimize_lbfgs().
inline kmaha::minimizer_fn lbfgs_minimizer(kmaha::interrupt_fn interrupt) {
  return [interrupt](const kmaha::objective_fn& f, const arma::vec& x0,
                     int max_iter, double tol) {
    lbfgs_result lr = minimize_lbfgs(
        f, x0, max_iter, tol / std::numeric_limits<double>::epsilon(), 0.0,
        interrupt);
    kmaha::minimize_result r;
    r.par = std::move(lr.par);
    r.value = lr.value;
    r.value_at_par = lr.value_at_par;
    r.evaluations = lr.fncount;
    r.trace = std::move(lr.trace);
    r.fail = lr.fail;
    r.message = lr.message;
    r.stop = lr.stop;
    r.converged = lr.converged;
    r.grad_norm = lr.grad_norm;
    return r;
  };
}

// The fields the results of the drivers share (kmaha::nca_fit_result,
// kmaha::mlkr_fit_result: the map, the objective and how the minimiser ran),
// in this order, as an R list; the caller appends its own fields.
template <class FitResult>
Rcpp::List fit_result_list(const FitResult& r) {
  return Rcpp::List::create(
      Rcpp::Named("map") = r.map, Rcpp::Named("value") = r.value,
      Rcpp::Named("iterations") = r.iterations,
      Rcpp::Named("trace") = Rcpp::NumericVector(r.trace.begin(), r.trace.end()),
      Rcpp::Named("converged") = r.converged, Rcpp::Named("stop") = r.stop,
      Rcpp::Named("gradient_norm") = r.gradient_norm,
      Rcpp::Named("start_scale") = r.start_scale,
      Rcpp::Named("flat_start") = r.flat_start, Rcpp::Named("fail") = r.fail,
      Rcpp::Named("message") = r.message, Rcpp::Named("isa") = r.isa);
}

}  // namespace kmaha_glue

#endif  // KMAHA_OPTIM_H
