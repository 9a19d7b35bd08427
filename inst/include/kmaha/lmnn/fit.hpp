// kmaha core, LMNN: the entry point.  fit() chooses the coordinates the
// solvers work in, runs one of them and maps the result back.
//
// Reduction.  The data terms depend on M only through (x_i - x_j)' M
// (x_i - x_j), i.e. on the span of the differences of the rows of X.  When
// there are more columns than rows (p >> n, kernel PCA coordinates with
// every component kept and a rank-deficient kernel, or kernel rows), that
// span has r < D dimensions (B: an orthonormal basis, kmaha/span.hpp); the
// solvers then work on the r coordinates x~ = B' x.  Write L = L1 B' +
// L2 B2' with B2 an orthonormal basis of the rest of R^D.  The data terms
// depend on L1 only, so the best L2 minimises the regulariser
// tr(L R L') for the given L1:
//  * R = I: L2 = 0, the map returned is L = L~ B' and the regulariser on
//    the reduced coordinates is again the identity (the metric ignores
//    directions in which the training data do not vary);
//  * general R: L2 = L1 C with C = -(B' R B2)(B2' R B2)^+, and the reduced
//    regulariser is the Schur complement R~ = B'RB + C (B' R B2)'; the map
//    returned is L = L~ (B + B2 C')'.  Both solvers then minimise exactly
//    the full problem over all maps L (the kernel trick's tr(U K U') with
//    kernel rows as inputs is the case that needs it).
//
// Whitening (L-form).  With H = (1 - mu) P + lambda R (P the pull matrix),
// the quadratic part of the objective is tr(L H L').  Writing H = C C'
// (Cholesky) and L = L^ C^{-1}, i.e. working on x^ = C^{-1} x~, makes it
// ||L^||_F^2: the problem is the same, but its curvature is isotropic, which
// is what lets a quasi-Newton method converge in few evaluations even when D
// is about n.  For lambda = 0 (or H singular) a ridge of 1e-6 max(diag(H))
// is added to H for the change of variables only, and the quadratic part is
// evaluated as it is.
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

// The regulariser on the reduced coordinates x~ = B' x for a general R
// (D x D, PSD) and the map back: the full map is L = L~ E'.  See the
// reduction above.
inline void reduce_regulariser(const arma::mat& B, const arma::mat& R,
                               arma::mat& E, arma::mat& Rr) {
  const arma::uword D = B.n_rows, r = B.n_cols;
  const arma::mat RB = R * B;
  Rr = B.t() * RB;
  E = B;
  if (r < D) {
    // an orthonormal basis of the complement of span(B): the last D - r
    // columns of the complete QR factor of B
    arma::mat Q, T;
    if (!arma::qr(Q, T, B)) throw error("lmnn: QR decomposition failed");
    const arma::mat B2 = Q.cols(r, D - 1);
    const arma::mat S12 = RB.t() * B2;          // B' R B2
    arma::mat S22 = B2.t() * R * B2;
    S22 = 0.5 * (S22 + S22.t());
    arma::vec s;
    arma::mat V;
    if (!arma::eig_sym(s, V, S22)) throw error("lmnn: eigendecomposition failed");
    const double cut = 1e-10 * std::max(R.diag().max(), 0.0);
    const arma::uvec keep = arma::find(s > cut);
    if (keep.n_elem > 0) {
      const arma::mat Vk = V.cols(keep);
      // C = -S12 S22^+
      const arma::mat C =
          -(S12 * Vk) * arma::diagmat(1.0 / s.elem(keep)) * Vk.t();
      Rr += C * S12.t();
      E += B2 * C.t();
    }
  }
  Rr = 0.5 * (Rr + Rr.t());
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
  const arma::mat B = difference_span(X, ctx.isa);
  const bool reduce = !B.is_empty();
  arma::mat E, Rr;  // the map back (L = L~ E') and the reduced regulariser
  if (reduce) {
    if (Rg.is_empty()) E = B;
    else reduce_regulariser(B, Rg, E, Rr);
  }
  const arma::mat Xr = reduce ? arma::mat(X * B) : arma::mat();
  problem P = make_problem(reduce ? Xr : X, y, targets, o.mu, o.lambda,
                           reduce ? Rr : Rg);
  arma::mat L0r = reduce ? arma::mat(L0 * B) : L0;
  if (L0r.n_rows > L0r.n_cols) {
    // more rows than the span has dimensions: the same metric with fewer
    // rows (L0r' L0r = R' R)
    arma::mat Q, T;
    if (!arma::qr_econ(Q, T, L0r)) throw error("lmnn: QR decomposition failed");
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
      bool factored = false;
      if (P.lambda > 0.0 && P.R.empty()) {
        H.diag() += P.lambda;
      } else {
        if (P.lambda > 0.0) {
          // lambda R may be singular where the pull is: a ridge only if
          // needed
          H += P.lambda * P.R;
          factored = arma::chol(C, H, "lower");
        }
        if (!factored) {
          ridge = 1e-6 * H.diag().max();
          if (!(ridge > 0.0)) whiten = false;
          H.diag() += ridge;
        }
      }
      if (whiten && !factored && !arma::chol(C, H, "lower")) {
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
          // lambda tr(L~ R L~') = lambda tr(L^ C^{-1} R C^{-T} L^')
          const arma::mat Ci = arma::solve(arma::trimatl(C),
                                           arma::eye(C.n_rows, C.n_cols));
          P.R = P.R.empty() ? arma::mat(Ci * Ci.t()) : arma::mat(Ci * P.R * Ci.t());
        }
      }
    }
    const arma::mat Lw = whiten ? arma::mat(L0r * C) : L0r;
    res = solve_L(P, Lw, o, minimize, ctx, progress);
    if (whiten) {
      // L~ = L^ C^{-1}:  L~' = C^{-T} L^'
      res.L = arma::solve(arma::trimatu(C.t()), res.L.t()).t();
    }
  }
  if (reduce) res.L = res.L * E.t();
  res.M = res.L.t() * res.L;
  res.M = 0.5 * (res.M + res.M.t());
  return res;
}

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_FIT_HPP
