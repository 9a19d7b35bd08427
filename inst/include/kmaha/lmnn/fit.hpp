// kmaha core, LMNN: the entry point.  fit() chooses the coordinates the
// solvers work in, runs one of them and maps the result back.
//
// The span of the centred training points.  The data terms depend on M
// only through (x_i - x_j)' M (x_i - x_j): on the span of the differences of
// the rows of X, which is the span of the centred rows.  When that span has
// r < D dimensions (more columns than rows, p >= n - 1, or collinear
// columns), with B (D x r) an orthonormal basis of it (kmaha/span.hpp), every
// map L (d x D) gives the training points the same distances as
// L~ = L B (d x r), and lambda tr(M) = lambda ||L||_F^2 >= lambda ||L B||_F^2
// with equality when L = L B B'.  So the problem in the r coordinates
// x~ = B' x has the same optimal value as the full one, its solution L~
// maps back as L = L~ B' (d x D, acting on the original inputs) with the
// same objective value, and the start L0 becomes L0 B (the identity: the
// r x r identity, since B'B = I).  Its cost is O(n^2 D) for the basis and
// O(n D r) for the coordinates, after which nothing of size D is formed
// (unless options::metric asks for M = L'L).  The metric returned ignores
// the directions in which the training points do not vary: with lambda > 0
// the full problem's optimum has no component there either; with lambda = 0
// a full-dimension solver would keep its start's component there, which
// changes no distance between training points.  options::span = false
// solves the full-dimension problem instead (a reference for tests).
//
// Kernel rows (X equal to R, the kernel trick: inputs k_i, the columns of
// the Gram matrix K, and the regulariser lambda tr(U K U')).  The span of the
// centred points in feature space has the KPCA coordinates Z = V S^{1/2}
// (H K H = V S V', kmaha/kpca.hpp, every eigenvalue above 1e-10 of the
// largest kept) and the basis Q = Phi H V S^{-1/2}.  A map A (d x r) on Z is
// the map U = A S^{-1/2} V' H = A P' H (P = V S^{-1/2}, the KPCA projection)
// on kernel rows: U (k_i - k_j) = A (z_i - z_j) and tr(U K U') = ||A||_F^2
// (as P' H K H P = I), and the optimum over U has this form (its feature-
// space map U Phi' has no component outside the centred span at the
// optimum, by the argument above).  So the kernel trick is LMNN on Z with
// lambda tr(M) — the KPCA trick's problem — at the cost of one n x n
// eigen-decomposition, and the start U0 becomes A0 = U0 K P =
// U0 Z + (U0 1) (P' m)' (m: the column means of K, since K P = Z + 1 m' P
// exactly); for the identity A0' A0 = S + n (P' m)(P' m)'.
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
// A general regulariser lambda tr(M R) (lambda > 0, R not the identity and
// not the Gram matrix of kernel-row inputs).  Here the order is reversed:
// first the whitening, on all D coordinates, then the reduction.  With
// H = (1 - mu) P + lambda R = V S V' (eigenvalues below 1e-12 of the largest
// dropped: directions in which neither the target pairs nor R see
// anything), W = V_+ S_+^{-1/2} and x^ = W' x, the quadratic part of
// tr(L H L') is ||L^||_F^2 for L = L^ W'; the data terms depend on L^ only
// through the span of the differences of the x^, so the best L^ lies in
// that span (the regulariser being isotropic there), and the reduction to it
// (x~ = B' x^, L = L~ B' W') is exact.  (Reducing first would not be: R
// couples the span of the data with its complement, and the small
// directions that the reduction drops can carry a large map.)
//
// Interrupts: every step that costs more than a few hundred million
// multiply-adds is either a product or a triangular solve cut into polled
// blocks (lmnn/problem.hpp) or a single decomposition followed by a poll.
#ifndef KMAHA_LMNN_FIT_HPP
#define KMAHA_LMNN_FIT_HPP

#include "../kpca.hpp"
#include "../span.hpp"
#include "problem.hpp"
#include "solve_l.hpp"
#include "solve_m.hpp"

namespace kmaha {
namespace lmnn {

// Which solver fit() runs.
enum class solver_kind { L, M };

// Whether a start is the D x D identity: given as an empty matrix (the
// default start) or exactly.
inline bool identity_start(const arma::mat& L0) {
  if (L0.is_empty()) return true;
  if (!L0.is_square()) return false;
  for (arma::uword c = 0; c < L0.n_cols; ++c)
    for (arma::uword r = 0; r < L0.n_rows; ++r)
      if (L0(r, c) != (r == c ? 1.0 : 0.0)) return false;
  return true;
}

// Whether the L-form solver runs in its low-rank mode (see solve_L): allowed
// by the options, the start is the identity (`identity`: the default; a start
// given by the caller is kept), the inputs have at least o.rank_min_dim
// columns (D) and n is at most o.dense_max (the start visits all pairs).
// The caller also requires the regularised, whitened problem
// (P.unit_quadratic).
inline bool low_rank_applies(bool identity, arma::uword D, const problem& P,
                             const options& o) {
  return o.low_rank && identity && D >= o.rank_min_dim &&
         P.Xt.n_cols <= o.dense_max;
}

// The solvers on problem P in its own coordinates (regulariser lambda
// ||L||_F^2, or lambda tr(M P.R) for the M solver), from the start L0 (d x D
// in P's coordinates).  The L-form solver works on whitened coordinates
// (see the file comment); `low_rank` says whether its low-rank mode may run
// (low_rank_applies(), given the start and D of the caller's problem).  The
// result's L is in P's coordinates; M is not formed.
inline result solve_in(problem& P, const arma::mat& L0, bool low_rank,
                       const options& o, solver_kind kind,
                       const minimizer_fn& minimize, const context& ctx,
                       const progress_fn& progress) {
  if (kind == solver_kind::M) return solve_M(P, L0.t() * L0, o, ctx, progress);
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
    check_interrupt(ctx.interrupt);
    if (whiten) {
      // x^ = C^{-1} x~ for every observation (columns of Xt)
      triangular_solve(C, true, P.Xt, ctx.interrupt);
      P.pull.reset();  // not used by the L-form solver
      P.unit_quadratic = P.lambda > 0.0 && ridge == 0.0;
      if (!P.unit_quadratic && P.lambda > 0.0) {
        // lambda ||L~||^2 = lambda tr(L^ C^{-1} C^{-T} L^')
        arma::mat Ci = arma::eye(C.n_rows, C.n_cols);
        triangular_solve(C, true, Ci, ctx.interrupt);
        P.R = product(ctx.kernels, Ci, false, Ci, true, ctx.interrupt);
      }
    }
  }
  const arma::mat Lw = whiten ? product(ctx.kernels, L0, false, C, false, ctx.interrupt) : L0;
  result res = solve_L(P, Lw, o, minimize, ctx, progress,
                       P.unit_quadratic && low_rank);
  if (whiten) {
    // L~ = L^ C^{-1}:  L~' = C^{-T} L^'
    arma::mat Lt = res.L.t();
    triangular_solve(arma::mat(C.t()), false, Lt, ctx.interrupt);
    res.L = Lt.t();
  }
  return res;
}

// The coordinates of a general regulariser (see above): W (D x q) with
// W' H W = I on the range of H = (1 - mu) pull + lambda R, for the pull
// matrix of X (n x D), and Winv = H W (W' Winv = I), which takes a map L to
// L^ = L Winv.
inline void regulariser_whitening(const arma::mat& X, const arma::uvec& y,
                                  const arma::umat& targets, double mu,
                                  double lambda, const arma::mat& R,
                                  arma::mat& W, arma::mat& Winv,
                                  const context& ctx) {
  const problem P0 = make_problem(X, y, targets, mu, 0.0, arma::mat(), ctx);
  arma::mat H = (1.0 - mu) * P0.pull + lambda * R;
  H = 0.5 * (H + H.t());
  arma::vec s;
  arma::mat V;
  if (!arma::eig_sym(s, V, H)) throw error(error_kind::numerical, "lmnn: eigendecomposition failed");
  check_interrupt(ctx.interrupt);
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

// fit() with lambda > 0 and a general regulariser R (see above): the
// whitening by H, then the reduction.
inline result fit_regularised(const arma::mat& X, const arma::uvec& y,
                              const arma::umat& targets, const arma::mat& L0,
                              bool identity, const arma::mat& R,
                              const options& o, solver_kind kind,
                              const minimizer_fn& minimize, const context& ctx,
                              const progress_fn& progress) {
  const isa k = ctx.kernels;
  arma::mat W, Winv;
  regulariser_whitening(X, y, targets, o.mu, o.lambda, R, W, Winv, ctx);
  const arma::mat Xw = product(k, X, false, W, false, ctx.interrupt);
  const arma::mat B = o.span ? difference_span(Xw, k) : arma::mat();
  check_interrupt(ctx.interrupt);
  const bool reduce = !B.is_empty();
  // x~ = T' x (r coordinates) and L = L~ T'
  const arma::mat T = reduce ? product(k, W, false, B, false, ctx.interrupt) : W;
  problem P = make_problem(reduce ? product(k, Xw, false, B, false, ctx.interrupt) : Xw,
                           y, targets, o.mu, o.lambda, arma::mat(), ctx);
  // the start: L0 Winv (B)
  const arma::mat S = reduce ? product(k, Winv, false, B, false, ctx.interrupt) : Winv;
  const arma::mat L0r = fewer_rows(identity ? S : product(k, L0, false, S, false, ctx.interrupt));
  result res;
  if (kind == solver_kind::M) {
    // the M-form solver evaluates the regulariser as it is: tr(M~ T' R T)
    P.R = product(k, T, true, product(k, R, false, T, false, ctx.interrupt), false,
                  ctx.interrupt);
    P.R = 0.5 * (P.R + P.R.t());
    res = solve_M(P, L0r.t() * L0r, o, ctx, progress);
  } else {
    // (1 - mu) pull + lambda T' R T = T' H T = I: the quadratic part is
    // ||L~||_F^2
    P.pull.reset();
    P.unit_quadratic = true;
    res = solve_L(P, L0r, o, minimize, ctx, progress,
                  low_rank_applies(identity, X.n_cols, P, o));
  }
  res.L = product(k, res.L, false, T, true, ctx.interrupt);
  return res;
}

// fit() on kernel rows, X = R = K (see above): LMNN on the KPCA coordinates.
inline result fit_kernel_rows(const arma::mat& K, const arma::uvec& y,
                              const arma::umat& targets, const arma::mat& U0,
                              bool identity, const options& o,
                              solver_kind kind, const minimizer_fn& minimize,
                              const context& ctx, const progress_fn& progress) {
  const isa k = ctx.kernels;
  const arma::uword n = K.n_rows;
  const kpca_result kp = kpca_fit(K, 0, 1e-10, kpca_method::full, ctx);
  const arma::mat& Z = kp.coords;         // n x r
  const arma::mat& Pm = kp.projection;    // n x r, P = V S^{-1/2}
  // c = P' m: K P = Z + 1 c'
  const arma::vec c = Pm.t() * kp.col_means;
  arma::mat A0;  // the start on Z
  if (identity) {
    // A0 = K P, with A0' A0 = S + n c c': its triangular factor
    arma::mat G = arma::diagmat(kp.eigenvalues) + static_cast<double>(n) * (c * c.t());
    G = 0.5 * (G + G.t());
    if (!arma::chol(A0, G)) A0 = fewer_rows(Z.each_row() + c.t());
  } else {
    // A0 = U0 Z + (U0 1) c'
    A0 = product(k, U0, false, Z, false, ctx.interrupt) + arma::sum(U0, 1) * c.t();
    A0 = fewer_rows(A0);
  }
  check_interrupt(ctx.interrupt);
  problem P = make_problem(Z, y, targets, o.mu, o.lambda, arma::mat(), ctx);
  result res = solve_in(P, A0, low_rank_applies(identity, n, P, o), o, kind,
                        minimize, ctx, progress);
  // U = A P' H: the rows of U centred (P H: the columns of P centred)
  arma::mat Pc = Pm;
  Pc.each_row() -= arma::mean(Pm, 0);
  res.L = product(k, res.L, false, Pc, true, ctx.interrupt);
  return res;
}

// Fit LMNN.  X: n x D inputs (one observation per row), y: 0-based labels,
// targets: n x k (no_neighbor where absent), L0: d x D starting map (empty:
// the D x D identity), R: the regulariser's D x D positive semi-definite
// matrix (lambda tr(M R); empty: the identity).  With o.span the solvers work
// in the span of the centred training points when it has fewer dimensions
// than D; kernel rows (X equal to R) are solved on their KPCA coordinates
// (see the file comment).  The result's L (d x D, or at most as many rows as
// the span has dimensions, or rank rows for the M solver) acts on the
// original inputs; M = L'L when o.metric.
inline result fit(const arma::mat& X, const arma::uvec& y,
                  const arma::umat& targets, const arma::mat& L0,
                  const arma::mat& R, const options& o, solver_kind kind,
                  const minimizer_fn& minimize, const context& ctx,
                  const progress_fn& progress = no_progress) {
  const arma::uword D = X.n_cols;
  const bool identity = identity_start(L0);
  if (!identity && (L0.n_cols != D || L0.n_rows == 0))
    throw error("lmnn: initial L has wrong size");
  if (!identity && L0.n_rows > D)
    throw error("lmnn: initial L has more rows than columns");
  const arma::mat Rg = regulariser(R, D);
  check_interrupt(ctx.interrupt);
  result res;
  if (o.span && !Rg.is_empty() && X.n_rows == D && arma::all(arma::vectorise(X == Rg))) {
    res = fit_kernel_rows(X, y, targets, L0, identity, o, kind, minimize, ctx, progress);
  } else if (!Rg.is_empty() && o.lambda > 0.0) {
    res = fit_regularised(X, y, targets, L0, identity, Rg, o, kind, minimize, ctx,
                          progress);
  } else {
    const isa k = ctx.kernels;
    const arma::mat B = o.span ? difference_span(X, k) : arma::mat();
    check_interrupt(ctx.interrupt);
    const bool reduce = !B.is_empty();
    problem P = make_problem(reduce ? product(k, X, false, B, false, ctx.interrupt) : X,
                             y, targets, o.mu, o.lambda, arma::mat(), ctx);
    const arma::uword Dr = P.Xt.n_rows;
    // the start in the solver's coordinates: L0 B; the identity's is I (B'B = I)
    const arma::mat L0r = identity ? arma::mat(arma::eye(Dr, Dr))
                          : fewer_rows(reduce ? product(k, L0, false, B, false, ctx.interrupt) : L0);
    res = solve_in(P, L0r, low_rank_applies(identity, D, P, o), o, kind, minimize,
                   ctx, progress);
    if (reduce) res.L = product(k, res.L, false, B, true, ctx.interrupt);
  }
  res.M.reset();
  if (o.metric) {
    res.M = product(ctx.kernels, res.L, true, res.L, false, ctx.interrupt);
    res.M = 0.5 * (res.M + res.M.t());
  }
  return res;
}

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_FIT_HPP
