// kmaha core: information-theoretic metric learning (ITML; Davis, Kulis,
// Jain, Sra and Dhillon, 2007).
//
// ITML finds the metric A closest to a prior A0 in the LogDet divergence
// subject to d_A(x_i, x_j) = (x_i - x_j)' A (x_i - x_j) <= u for similar pairs
// and >= l for dissimilar ones, with slack: the targets xi_c (starting at u or
// l) may move, at a cost gamma D_ld(diag(xi), diag(xi0)).  The paper's
// Algorithm 1 cycles through the constraints, each step a Bregman projection:
// for constraint c = (i, j) with delta = +1 (similar) or -1 (dissimilar),
// v = x_i - x_j and p = v' A v,
//
//   alpha   = min(lambda_c, delta gamma/(gamma + 1) (1/p - 1/xi_c)),
//   beta    = delta alpha / (1 - delta alpha p),
//   1/xi_c <- 1/xi_c + delta alpha / gamma,
//   lambda_c <- lambda_c - alpha,
//   A      <- A + beta (A v)(A v)'.
//
// (This is the form of the authors' code; the paper prints alpha and the xi
// update with the slack factor placed differently.)  Since 1/(v'A'v) = 1/p -
// delta alpha, a step not capped by lambda_c ends exactly on the moved
// target: v' A' v = xi_c.  gamma = Inf gives hard constraints (xi fixed).
// The cycles stop when the dual variables settle,
// ||lambda - lambda_prev||_1 / (||lambda||_1 + ||lambda_prev||_1) < tol.
//
// The thresholds, unless given: u and l are the 5th and 95th percentiles
// (R's quantile type 7) of d_A0 over all pairs of the distinct rows that
// appear in a constraint (at most 2 000 rows: beyond that, every k-th of
// them), as in the paper's experiments.
//
// p >= n with the identity prior: each update adds a matrix in the span of
// the centred rows, so A = I + B (A_s - I) B' with B a basis of that span;
// the problem is solved on the coordinates in it (span.hpp) with prior I_r and
// the map A_s^{1/2} B' returned.  The identity off the span adds
// ||P_perp (x - x')||^2, the same for every training point x', so nearest
// neighbours among the training points do not change.
#ifndef KMAHA_ITML_HPP
#define KMAHA_ITML_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#include "pairs.hpp"
#include "span.hpp"

namespace kmaha {

struct itml_result {
  arma::mat L;            // d x p map
  arma::mat A;            // the p x p metric (empty in the span)
  arma::vec lambda, xi;   // dual variables and moved targets, one per pair
  double u = 0.0, l = 0.0;
  int iterations = 0;     // cycles through the constraints
  bool converged = false;
  double change = 0.0;    // the last relative change of lambda
  std::vector<double> trace;  // that change after each cycle
  arma::uword span_rank = 0;
};

// One Bregman projection (in place): A, the pair's difference v, its sign,
// dual variable and target; returns alpha.
inline double itml_project(arma::mat& A, const arma::vec& v, double delta, double& lambda,
                           double& xi, double gamma) {
  const arma::vec Av = A * v;
  const double p = arma::dot(v, Av);
  if (!(p > 0.0)) return 0.0;
  const double factor = std::isinf(gamma) ? 1.0 : gamma / (gamma + 1.0);
  const double alpha = std::min(lambda, delta * factor * (1.0 / p - 1.0 / xi));
  const double beta = delta * alpha / (1.0 - delta * alpha * p);
  if (!std::isinf(gamma)) xi = 1.0 / (1.0 / xi + delta * alpha / gamma);
  lambda -= alpha;
  A += beta * (Av * Av.t());
  return alpha;
}

namespace detail {
// Quantile of type 7 (R's default) of v at probability prob.
inline double quantile7(std::vector<double> v, double prob) {
  const std::size_t m = v.size();
  if (m == 0) return arma::datum::nan;
  const double h = (static_cast<double>(m) - 1.0) * prob;
  const std::size_t lo = static_cast<std::size_t>(std::floor(h));
  std::nth_element(v.begin(), v.begin() + lo, v.end());
  const double a = v[lo];
  if (lo + 1 >= m) return a;
  const double b = *std::min_element(v.begin() + lo + 1, v.end());
  return a + (h - static_cast<double>(lo)) * (b - a);
}

// The 5th and 95th percentiles of d_A0 over pairs of the distinct rows in ps.
inline void itml_bounds(const arma::mat& X, const arma::mat& A0, const pair_set& ps,
                        double& u, double& l, const context& ctx) {
  arma::uvec rows = arma::unique(arma::vectorise(ps.idx));
  const arma::uword cap = 2000;
  if (rows.n_elem > cap) {
    const arma::uword step = (rows.n_elem + cap - 1) / cap;
    rows = rows.elem(arma::regspace<arma::uvec>(0, step, rows.n_elem - 1));
  }
  const arma::mat Xr = X.rows(rows);
  const arma::mat XA = A0.n_elem ? arma::mat(Xr * A0) : Xr;
  const arma::uword m = Xr.n_rows;
  std::vector<double> d;
  d.reserve(m * (m - 1) / 2);
  for (arma::uword i = 0; i < m; ++i) {
    for (arma::uword j = i + 1; j < m; ++j) {
      const arma::rowvec dv = Xr.row(i) - Xr.row(j);
      const arma::rowvec da = XA.row(i) - XA.row(j);
      d.push_back(std::max(arma::dot(dv, da), 0.0));
    }
    if ((i & 63u) == 63u) check_interrupt(ctx.interrupt);
  }
  u = quantile7(d, 0.05);
  l = quantile7(d, 0.95);
}
}  // namespace detail

// ITML on q coordinates: X (n x q), prior A0 (empty: identity), pairs ps.
// u, l: NaN for the percentiles.
inline itml_result itml_on(const arma::mat& X, const arma::mat& A0, const pair_set& ps,
                           double gamma, double u, double l, int max_iter, double tol,
                           const context& ctx) {
  const arma::uword q = X.n_cols, m = ps.idx.n_rows;
  itml_result r;
  if (std::isnan(u) || std::isnan(l)) {
    double uu = 0.0, ll = 0.0;
    detail::itml_bounds(X, A0, ps, uu, ll, ctx);
    if (std::isnan(u)) u = uu;
    if (std::isnan(l)) l = ll;
  }
  if (!(u > 0.0) || !(l > 0.0))
    throw error(error_kind::degenerate,
                "itml: a distance threshold is zero (most pairs of points coincide); give `bounds`");
  r.u = u;
  r.l = l;
  arma::mat A = A0.n_elem ? A0 : arma::mat(arma::eye(q, q));
  arma::mat V(q, m);
  for (arma::uword k = 0; k < m; ++k)
    V.col(k) = (X.row(ps.idx(k, 0)) - X.row(ps.idx(k, 1))).t();
  r.lambda.zeros(m);
  r.xi.set_size(m);
  for (arma::uword k = 0; k < m; ++k) r.xi[k] = ps.sign[k] > 0.0 ? u : l;
  arma::vec prev = r.lambda;
  for (int it = 0; it < max_iter; ++it) {
    for (arma::uword k = 0; k < m; ++k) {
      itml_project(A, V.col(k), ps.sign[k], r.lambda[k], r.xi[k], gamma);
      if ((k & 255u) == 255u) check_interrupt(ctx.interrupt);
    }
    check_interrupt(ctx.interrupt);
    ++r.iterations;
    const double den = arma::norm(r.lambda, 1) + arma::norm(prev, 1);
    r.change = den > 0.0 ? arma::norm(r.lambda - prev, 1) / den : 0.0;
    r.trace.push_back(r.change);
    prev = r.lambda;
    if (r.change < tol) {
      r.converged = true;
      break;
    }
    if (!A.is_finite())
      throw error(error_kind::numerical, "itml: the metric became non-finite");
  }
  r.A = 0.5 * (A + A.t());
  return r;
}

// ITML on the rows of X (n x p).  A0 empty: the identity prior, and then,
// with span and p >= n, the problem is solved in the span of the centred rows.
inline itml_result itml_fit(const arma::mat& X, const arma::mat& A0, const pair_set& ps,
                            double gamma, double u, double l, int max_iter, double tol,
                            bool span, const context& ctx) {
  const arma::uword n = X.n_rows, p = X.n_cols;
  if (A0.n_elem && (A0.n_rows != p || A0.n_cols != p))
    throw error("itml: the prior must be p x p");
  const bool use_span = span && A0.n_elem == 0 && n > 0 && p >= n;
  if (use_span) {
    const row_span sp = centred_row_span(X, ctx.kernels, 1e-10, "itml", ctx.interrupt);
    if (sp.basis.n_cols == 0) throw error(error_kind::degenerate, "itml: all rows of x are equal");
    itml_result r = itml_on(sp.coords, arma::mat(), ps, gamma, u, l, max_iter, tol, ctx);
    r.span_rank = sp.basis.n_cols;
    r.L = detail::metric_map(r.A, "itml", ctx) * sp.basis.t();
    r.A.reset();
    return r;
  }
  itml_result r = itml_on(X, A0, ps, gamma, u, l, max_iter, tol, ctx);
  r.L = detail::metric_map(r.A, "itml", ctx);
  return r;
}

}  // namespace kmaha

#endif  // KMAHA_ITML_HPP
