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
  // Infinity norm of the gradient at `par` when the last evaluation was
  // there (value_at_par), else NaN.
  double grad_inf = std::numeric_limits<double>::quiet_NaN();
};

namespace detail {
struct lbfgs_ctx {
  std::function<double(const arma::vec&, arma::vec&)> fg;
  kmaha::interrupt_fn interrupt;
  arma::vec last_x, last_g;
  double last_f = 0.0;
  bool have = false;
  std::exception_ptr stop;  // set once: the exception that stops the run
  std::vector<double>* trace = nullptr;
  int calls = 0;
};

inline void eval(lbfgs_ctx* c, int n, const double* x) {
  if (c->stop) return;  // stopping: last_f and last_g hold the stop values
  if (c->have && std::equal(x, x + n, c->last_x.memptr())) return;
  try {
    if ((++c->calls % 5) == 0) kmaha::check_interrupt(c->interrupt);
    c->have = false;
    c->last_x.set_size(n);
    std::copy(x, x + n, c->last_x.memptr());
    c->last_g.set_size(n);
    c->last_f = c->fg(c->last_x, c->last_g);
    if (!std::isfinite(c->last_f) || !c->last_g.is_finite()) {
      throw kmaha::error(
          "the objective or its gradient is not finite at the parameters "
          "L-BFGS-B reached");
    }
    c->have = true;
    if (c->trace) c->trace->push_back(c->last_f);
  } catch (...) {
    c->stop = std::current_exception();
    c->have = false;
    // A zero gradient ends lbfgsb() at its next test (the projected gradient
    // is <= pgtol), and a value far below any seen so far makes a line
    // search in progress accept the step at once.
    c->last_f = -1e300;
    c->last_g.zeros(n);
  }
}

inline double fn(int n, double* x, void* ex) {
  auto* c = static_cast<lbfgs_ctx*>(ex);
  eval(c, n, x);
  return c->last_f;
}

inline void gr(int n, double* x, double* g, void* ex) {
  auto* c = static_cast<lbfgs_ctx*>(ex);
  eval(c, n, x);
  std::copy(c->last_g.begin(), c->last_g.end(), g);
}
}  // namespace detail

// Minimise f starting from x0.  `factr` and `pgtol` have optim()'s meaning;
// `m` is the number of correction pairs kept.  Exceptions of f are rethrown
// once lbfgsb() has returned (kmaha::interrupted as an R interrupt).
inline lbfgs_result minimize_lbfgs(
    std::function<double(const arma::vec&, arma::vec&)> f, const arma::vec& x0,
    int maxit, double factr, double pgtol, int m = 10) {
  lbfgs_result res;
  detail::lbfgs_ctx ctx;
  ctx.fg = std::move(f);
  ctx.interrupt = user_interrupt();
  ctx.trace = &res.trace;
  ctx.last_g.zeros(x0.n_elem);
  const int n = static_cast<int>(x0.n_elem);
  res.par = x0;
  std::vector<double> lower(n, 0.0), upper(n, 0.0);
  std::vector<int> nbd(n, 0);  // unbounded
  char msg[60];
  double fmin = 0.0;
  lbfgsb(n, m, res.par.memptr(), lower.data(), upper.data(), nbd.data(), &fmin,
         detail::fn, detail::gr, &res.fail, &ctx, factr, pgtol, &res.fncount,
         &res.grcount, maxit, msg, 0, 10);
  // Rethrown through guarded(), so that an interrupt reaches R as one even
  // from a caller without its own guard.
  if (ctx.stop) guarded([&] { std::rethrow_exception(ctx.stop); });
  res.value = fmin;
  if (ctx.have && std::equal(res.par.begin(), res.par.end(), ctx.last_x.begin())) {
    res.value = ctx.last_f;
    res.value_at_par = true;
    res.grad_inf = arma::abs(ctx.last_g).max();
  }
  res.message = msg;
  return res;
}

}  // namespace kmaha_glue

#endif  // KMAHA_OPTIM_H
