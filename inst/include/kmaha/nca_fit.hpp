// kmaha core: NCA's driver.  Fits the objective of nca.hpp (plain NCA, or
// kernel-trick NCA with reg = the Gram matrix) from a start map with the
// minimiser the caller supplies (minimizer.hpp), and retries from a
// rescaled start when the given one is far from the scale of the data.
//
// The retry.  A start far from the scale of the data (the mapped points
// spread over more than 2^100 or less than 2^-100) makes the objective flat
// or the problem badly scaled: every neighbour probability is 0 or 1, or all
// are equal, and the gradient vanishes or is out of all proportion to the
// map.  Then B = A / s is fitted instead, s a power of two from
// nca_objective::start_scale(), i.e. NCA on the inputs s x with lambda s^2:
// the same objective, started from s A0, on parameters of the scale of the
// data.  The same happens when the minimiser cannot move from the start (it
// stops at its first evaluation with a vanishing gradient).  Neither happens
// when the penalty at the rescaled start, lambda s^2 reg(A0), would exceed
// the largest possible data term (n): with such a penalty the optimum is a
// map near zero, which the unscaled fit reaches.
//
// Plain NCA works in the span of the centred training points when it has
// fewer dimensions than the inputs (p >= n - 1, or collinear columns): the
// same problem on r coordinates, its map returned on the D inputs (see
// nca_span.hpp, which also says how the start is carried over).
#ifndef KMAHA_NCA_FIT_HPP
#define KMAHA_NCA_FIT_HPP

#include <cmath>
#include <functional>
#include <sstream>
#include <string>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#include "gemm.hpp"
#include "minimizer.hpp"
#include "nca.hpp"
#include "nca_span.hpp"

namespace kmaha {

struct nca_fit_options {
  double lambda = 0.0;        // weight of the regulariser
  int max_iter = 500;         // the minimiser's iterations
  double tol = 1e-5;          // relative reduction of f regarded as converged
  bool rescale_start = true;  // retry from a rescaled start (see above)
  bool span = true;           // plain NCA in the span of the centred points
                              // (false: on all D inputs, a reference for tests)
};

struct nca_fit_result {
  arma::mat map;              // d x D
  double value = 0.0;         // objective at map
  int iterations = 0;         // objective evaluations of the last run
  std::vector<double> trace;  // objective after each evaluation
  bool converged = false;
  std::string stop;           // why the minimiser stopped (minimizer.hpp)
  double gradient_norm = 0.0;
  double start_scale = 1.0;   // s of the retry, 1 without one
  bool flat_start = false;    // stopped at the first evaluation, gradient 0
  int fail = 0;
  std::string message;        // the minimiser's own message
  std::string isa;            // instruction set of the kernels
  arma::uword span_rank = 0;  // r when solved in the span, else 0
  double start_log_norm = 0;  // log ||A0||_F of the start in the solver's coordinates
};

namespace detail {

// One run of the minimiser on obj from A0 (d x D).
inline nca_fit_result nca_minimize(const nca_objective& obj, const arma::mat& A0,
                                   const nca_fit_options& o,
                                   const minimizer_fn& minimize,
                                   const log_fn& log) {
  const arma::uword d = A0.n_rows, D = A0.n_cols;
  const objective_fn fg = map_objective(
      d, D, [&obj](const arma::mat& A, arma::mat* G) { return obj.evaluate(A, G); }, log);
  minimize_result res = minimize(fg, arma::vectorise(A0), o.max_iter, o.tol);
  nca_fit_result r;
  r.map = arma::reshape(res.par, d, D);
  // The value reported is the one at the returned parameters.
  r.value = res.value_at_par ? res.value : obj.evaluate(r.map, nullptr);
  log_minimize_end(log, res, r.value);
  r.iterations = res.evaluations;
  r.trace = std::move(res.trace);
  r.converged = res.converged;
  r.stop = res.stop;
  r.gradient_norm = res.grad_norm;
  r.start_scale = 1.0;
  // The minimiser stopped at its first evaluation, with a vanishing gradient.
  r.flat_start = res.evaluations <= 1 && res.stop == "gradient";
  r.fail = res.fail;
  r.message = res.message;
  return r;
}

// The fit on the solver's coordinates X from the start A0 (d x D), with the
// retry of a rescaled start.
inline nca_fit_result nca_fit_on(const arma::mat& X, const arma::uvec& y,
                                 const arma::mat& A0, const arma::mat* reg,
                                 const nca_fit_options& o,
                                 const minimizer_fn& minimize, const log_fn& log,
                                 const context& ctx) {
  const nca_objective obj(X, y, o.lambda, reg, 0, ctx);
  if (A0.n_cols != X.n_cols)
    throw error("the start map must have one column per feature");
  auto refit_scaled = [&](double s) {
    if (log) {
      std::ostringstream m;
      m << "the start map is far from the scale of the data; "
        << "fitting from the start map times " << s;
      log(m.str());
    }
    const arma::mat Xs = X * s;
    nca_fit_options os = o;
    os.lambda = o.lambda * s * s;
    const nca_objective obj_s(Xs, y, os.lambda, reg, 0, ctx);
    nca_fit_result r = detail::nca_minimize(obj_s, A0, os, minimize, log);
    r.map = r.map * s;
    r.start_scale = s;
    return r;
  };
  auto usable = [&](double s) {
    if (s == 1.0) return false;
    const double pen = o.lambda * s * s * obj.reg_value(A0);
    return std::isfinite(pen) && pen <= static_cast<double>(X.n_rows);
  };
  if (o.rescale_start) {
    const double zmax = arma::abs(apply_map(X, A0, obj.kernels_isa())).max();
    check_interrupt(ctx.interrupt);
    if (!(zmax <= std::ldexp(1.0, 100) && zmax >= std::ldexp(1.0, -100))) {
      const double s = obj.start_scale(A0);
      if (usable(s)) {
        nca_fit_result r = refit_scaled(s);
        r.isa = obj.isa_name();
        return r;
      }
    }
  }
  nca_fit_result r = detail::nca_minimize(obj, A0, o, minimize, log);
  if (o.rescale_start && r.flat_start) {
    const double s = obj.start_scale(A0);
    if (usable(s)) r = refit_scaled(s);
  }
  r.isa = obj.isa_name();
  return r;
}

}  // namespace detail

// Fit NCA (reg = nullptr) or kernel-trick NCA (X = reg = the Gram matrix)
// on the rows of X (n x D) with 0-based labels y, from `start` (nca_span.hpp:
// a d x D map, rows of the identity, or a start in the span's coordinates).
// Plain NCA is solved in the span of the centred rows of X when it has
// fewer than D dimensions (o.span); the map returned acts on X (d x D, at
// most r rows then).
inline nca_fit_result nca_fit(const arma::mat& X, const arma::uvec& y,
                              const nca_start& start, const arma::mat* reg,
                              const nca_fit_options& o,
                              const minimizer_fn& minimize, const log_fn& log,
                              const context& ctx) {
  const nca_coords c = nca_solver_coords(X, start, o.span && reg == nullptr, ctx);
  if (log && c.reduced()) {
    std::ostringstream m;
    m << "NCA in the " << c.basis.n_cols << "-dimensional span of the centred training points ("
      << X.n_cols << " inputs)";
    log(m.str());
  }
  nca_fit_result r = detail::nca_fit_on(c.inputs(X), y, c.A0, reg, o, minimize, log, ctx);
  r.start_log_norm = log_frobenius(c.A0);
  r.span_rank = c.reduced() ? c.basis.n_cols : 0;
  r.map = c.to_inputs(r.map, ctx);
  return r;
}

}  // namespace kmaha

#endif  // KMAHA_NCA_FIT_HPP
