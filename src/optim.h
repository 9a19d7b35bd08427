// L-BFGS(-B) for the glue: wraps R's own lbfgsb() (R_ext/Applic.h) around an
// objective f(x, grad) supplied by the core.  Used by NCA, KNCA and the
// low-rank LMNN solver.
#ifndef KMAHA_OPTIM_H
#define KMAHA_OPTIM_H

#include <RcppArmadillo.h>
#include <R_ext/Applic.h>
#include <R_ext/Utils.h>
#include <functional>
#include <limits>
#include <vector>

namespace kmaha_glue {

struct lbfgs_result {
  arma::vec par;
  double value = 0.0;
  int fncount = 0, grcount = 0;
  int fail = 0;            // 0 converged, 1 iteration limit, 51/52 warnings
  std::string message;
  std::vector<double> trace;  // objective after each function evaluation
  bool interrupted = false;
  // True when `value` is the objective evaluated exactly at `par` (the last
  // evaluation was at the returned parameters), so callers need not
  // evaluate again.
  bool value_at_par = false;
};

namespace detail {
struct lbfgs_ctx {
  std::function<double(const arma::vec&, arma::vec&)> fg;
  arma::vec last_x, last_g;
  double last_f = 0.0;
  bool have = false;
  bool interrupted = false;
  std::vector<double>* trace = nullptr;
  int calls = 0;
};

inline void check_interrupt_fn(void*) { R_CheckUserInterrupt(); }

inline void eval(lbfgs_ctx* c, int n, const double* x) {
  if (c->have && std::equal(x, x + n, c->last_x.memptr())) return;
  if (c->interrupted) return;
  if ((++c->calls % 5) == 0 && !R_ToplevelExec(check_interrupt_fn, nullptr)) {
    // Stop at once: report a zero gradient so lbfgsb returns, and let the
    // caller raise the interrupt outside the C optimizer.
    c->interrupted = true;
    c->last_g.zeros();
    return;
  }
  c->last_x.set_size(n);
  std::copy(x, x + n, c->last_x.memptr());
  c->last_g.set_size(n);
  c->last_f = c->fg(c->last_x, c->last_g);
  c->have = true;
  if (c->trace) c->trace->push_back(c->last_f);
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
// `m` is the number of correction pairs kept.
inline lbfgs_result minimize_lbfgs(
    std::function<double(const arma::vec&, arma::vec&)> f, const arma::vec& x0,
    int maxit, double factr, double pgtol, int m = 10) {
  lbfgs_result res;
  detail::lbfgs_ctx ctx;
  ctx.fg = std::move(f);
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
  res.value = fmin;
  if (ctx.have && !ctx.interrupted &&
      std::equal(res.par.begin(), res.par.end(), ctx.last_x.begin())) {
    res.value = ctx.last_f;
    res.value_at_par = true;
  }
  res.message = msg;
  res.interrupted = ctx.interrupted;
  if (ctx.interrupted) throw Rcpp::internal::InterruptedException();
  return res;
}

}  // namespace kmaha_glue

#endif  // KMAHA_OPTIM_H
