// kmaha core, LMNN: the entry point.  fit() chooses the coordinates the
// solvers work in, runs one of them and maps the result back.
//
// Reduction.  The data terms depend on M only through (x_i - x_j)' M
// (x_i - x_j), i.e. on the span of the differences of the rows of X.  When
// there are more columns than rows (p >> n, or kernel PCA coordinates with
// every component kept and a rank-deficient kernel), that span has r < D
// dimensions; the solvers then work on the r coordinates x~ = B' x (B: an
// orthonormal basis of the span, kmaha/span.hpp) and the map returned is
// L = L~ B'.  The objective is unchanged (for lambda > 0 the optimum has no
// component outside the span anyway); the metric ignores directions in
// which the training data do not vary.
//
// Whitening (L-form).  With H = (1 - mu) P + lambda I (P the pull matrix),
// the quadratic part of the objective is tr(L H L').  Writing H = C C'
// (Cholesky) and L = L^ C^{-1}, i.e. working on x^ = C^{-1} x~, makes it
// ||L^||_F^2: the problem is the same, but its curvature is isotropic, which
// is what lets a quasi-Newton method converge in few evaluations even when D
// is about n.  For lambda = 0, H may be singular (e.g. the direction between
// class means when every class can be collapsed onto a point); a ridge of
// 1e-6 max(diag(H)) is then added to H for the change of variables only, and
// the pull term is evaluated as it is.
//
// A general regulariser lambda tr(M R) (lambda > 0, R not the identity).
// Here the order is reversed: first the whitening, on all D coordinates,
// then the reduction.  With H = (1 - mu) P + lambda R = V S V' (eigenvalues
// below 1e-12 of the largest dropped: directions in which neither the
// target pairs nor R see anything), W = V_+ S_+^{-1/2} and x^ = W' x, the
// quadratic part of tr(L H L') is ||L^||_F^2 for L = L^ W'; the data terms
// depend on L^ only through the span of the differences of the x^, so the
// best L^ lies in that span (the regulariser being isotropic there), and the
// reduction to it (x~ = B' x^, L = L~ B' W') is exact.  (Reducing first
// would not be: R couples the span of the data with its complement, and the
// small directions that the reduction drops can carry a large map.)  The
// kernel trick's tr(U K U') with kernel rows as inputs is the case this is
// for.
#ifndef KMAHA_LMNN_FIT_HPP
#define KMAHA_LMNN_FIT_HPP

#include "../span.hpp"
#include "problem.hpp"
#include "solve_l.hpp"
#include "solve_m.hpp"

namespace kmaha {
namespace lmnn {

// Which solver fit() runs.
enum class solver_kind { L, M };

// Whether the L-form solver runs in its low-rank mode (see solve_L): allowed
// by the options, the start is the identity (the default: a start given by
// the caller is kept), D is at least o.rank_min_dim and n at most
// o.dense_max (the start visits all pairs).  The caller also requires the
// regularised, whitened problem (P.unit_quadratic).
inline bool low_rank_applies(const arma::mat& L0, const problem& P,
                             const options& o) {
  if (!o.low_rank || !L0.is_square() || L0.n_rows < o.rank_min_dim ||
      P.Xt.n_cols > o.dense_max)
    return false;
  for (arma::uword c = 0; c < L0.n_cols; ++c)
    for (arma::uword r = 0; r < L0.n_rows; ++r)
      if (L0(r, c) != (r == c ? 1.0 : 0.0)) return false;
  return true;
}

// The coordinates of a general regulariser (see above): W (D x q) with
// W' H W = I on the range of H = (1 - mu) pull + lambda R, for the pull
// matrix of X (n x D), and Winv = H W (W' Winv = I), which takes a map L to
// L^ = L Winv.
inline void regulariser_whitening(const arma::mat& X, const arma::uvec& y,
                                  const arma::umat& targets, double mu,
                                  double lambda, const arma::mat& R,
                                  arma::mat& W, arma::mat& Winv) {
  const problem P0 = make_problem(X, y, targets, mu, 0.0, arma::mat());
  arma::mat H = (1.0 - mu) * P0.pull + lambda * R;
  H = 0.5 * (H + H.t());
  arma::vec s;
  arma::mat V;
  if (!arma::eig_sym(s, V, H)) throw error(error_kind::numerical, "lmnn: eigendecomposition failed");
  const double top = s.max();
  if (!(top > 0.0)) throw error("lmnn: the regulariser R and the pull term are both zero");
  const arma::uvec keep = arma::find(s > 1e-12 * top);
  W = V.cols(keep);
  Winv = W;
  for (arma::uword c = 0; c < keep.n_elem; ++c) {
    const double r = std::sqrt(s[keep[c]]);
    W.col(c) /= r;
    Winv.col(c) *= r;
  }
}

// fit() with lambda > 0 and a regulariser R other than the identity: the
// whitening by H, then the reduction (see above).
inline result fit_regularised(const arma::mat& X, const arma::uvec& y,
                              const arma::umat& targets, const arma::mat& L0,
                              const arma::mat& R, const options& o,
                              solver_kind kind, const minimizer_fn& minimize,
                              const context& ctx, const progress_fn& progress) {
  arma::mat W, Winv;
  regulariser_whitening(X, y, targets, o.mu, o.lambda, R, W, Winv);
  const arma::mat Xw = X * W;
  const arma::mat B = difference_span(Xw, ctx.kernels);
  const bool reduce = !B.is_empty();
  // x~ = T' x (r coordinates) and L = L~ T'
  const arma::mat T = reduce ? arma::mat(W * B) : W;
  problem P = make_problem(reduce ? arma::mat(Xw * B) : Xw, y, targets, o.mu,
                           o.lambda, arma::mat());
  arma::mat L0r = reduce ? arma::mat(L0 * Winv * B) : arma::mat(L0 * Winv);
  if (L0r.n_rows > L0r.n_cols) {
    arma::mat Q, Rq;
    if (!arma::qr_econ(Q, Rq, L0r)) throw error(error_kind::numerical, "lmnn: QR decomposition failed");
    L0r = Rq;
  }
  result res;
  if (kind == solver_kind::M) {
    // the M-form solver evaluates the regulariser as it is: tr(M~ T' R T)
    P.R = T.t() * R * T;
    P.R = 0.5 * (P.R + P.R.t());
    res = solve_M(P, L0r.t() * L0r, o, ctx, progress);
  } else {
    // (1 - mu) pull + lambda T' R T = T' H T = I: the quadratic part is
    // ||L~||_F^2
    P.pull.reset();
    P.unit_quadratic = true;
    res = solve_L(P, L0r, o, minimize, ctx, progress, low_rank_applies(L0, P, o));
  }
  res.L = res.L * T.t();
  res.M = res.L.t() * res.L;
  res.M = 0.5 * (res.M + res.M.t());
  return res;
}

// Fit LMNN.  X: n x D inputs (one observation per row), y: 0-based labels,
// targets: n x k (no_neighbor where absent), L0: d x D starting map, R: the
// regulariser's D x D positive semi-definite matrix (lambda tr(M R); empty:
// the identity).  The L-form solver (default) works in reduced, whitened
// coordinates; the M-form solver in reduced coordinates (it whitens by its
// own rule).  The result's L (d x D, or rank rows for the M solver) and
// M = L'L are on the original coordinates.
inline result fit(const arma::mat& X, const arma::uvec& y,
                  const arma::umat& targets, const arma::mat& L0,
                  const arma::mat& R, const options& o, solver_kind kind,
                  const minimizer_fn& minimize, const context& ctx,
                  const progress_fn& progress = no_progress) {
  const arma::uword D = X.n_cols;
  if (L0.n_cols != D || L0.n_rows == 0) throw error("lmnn: initial L has wrong size");
  const arma::mat Rg = regulariser(R, D);
  if (!Rg.is_empty() && o.lambda > 0.0)
    return fit_regularised(X, y, targets, L0, Rg, o, kind, minimize, ctx, progress);
  const arma::mat B = difference_span(X, ctx.kernels);
  const bool reduce = !B.is_empty();
  const arma::mat Xr = reduce ? arma::mat(X * B) : arma::mat();
  problem P = make_problem(reduce ? Xr : X, y, targets, o.mu, o.lambda, arma::mat());
  arma::mat L0r = reduce ? arma::mat(L0 * B) : L0;
  if (L0r.n_rows > L0r.n_cols) {
    // more rows than the span has dimensions: the same metric with fewer
    // rows (L0r' L0r = R' R)
    arma::mat Q, T;
    if (!arma::qr_econ(Q, T, L0r)) throw error(error_kind::numerical, "lmnn: QR decomposition failed");
    L0r = T;
  }
  result res;
  if (kind == solver_kind::M) {
    res = solve_M(P, L0r.t() * L0r, o, ctx, progress);
  } else {
    arma::mat C;  // H = C C', lower triangular
    bool whiten = o.precondition && P.n_targets > 0;
    if (whiten) {
      arma::mat H = (1.0 - P.mu) * P.pull;
      double ridge = 0.0;
      if (P.lambda > 0.0) {
        H.diag() += P.lambda;
      } else {
        ridge = 1e-6 * H.diag().max();
        if (!(ridge > 0.0)) whiten = false;
        H.diag() += ridge;
      }
      if (whiten && !arma::chol(C, H, "lower")) {
        // numerically not positive definite: a larger ridge, once
        H.diag() += 1e-4 * H.diag().max();
        ridge = 1.0;  // (the quadratic part is no longer exactly ||L||^2)
        if (!arma::chol(C, H, "lower")) whiten = false;
      }
      if (whiten) {
        // x^ = C^{-1} x~ for every observation (columns of Xt)
        P.Xt = arma::solve(arma::trimatl(C), P.Xt);
        P.pull.reset();  // not used by the L-form solver
        P.unit_quadratic = P.lambda > 0.0 && ridge == 0.0;
        if (!P.unit_quadratic && P.lambda > 0.0) {
          // lambda ||L~||^2 = lambda tr(L^ C^{-1} C^{-T} L^')
          const arma::mat Ci = arma::solve(arma::trimatl(C),
                                           arma::eye(C.n_rows, C.n_cols));
          P.R = Ci * Ci.t();
        }
      }
    }
    const arma::mat Lw = whiten ? arma::mat(L0r * C) : L0r;
    res = solve_L(P, Lw, o, minimize, ctx, progress,
                  P.unit_quadratic && low_rank_applies(L0, P, o));
    if (whiten) {
      // L~ = L^ C^{-1}:  L~' = C^{-T} L^'
      res.L = arma::solve(arma::trimatu(C.t()), res.L.t()).t();
    }
  }
  if (reduce) res.L = res.L * B.t();
  res.M = res.L.t() * res.L;
  res.M = 0.5 * (res.M + res.M.t());
  return res;
}

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_FIT_HPP
