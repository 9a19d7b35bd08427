// kmaha core, NCA: the coordinates the solvers work in.  The full-batch
// driver (nca_fit.hpp) and the mini-batch one (nca_minibatch.hpp) both take
// their start and their inputs from nca_solver_coords() and map their
// result back with nca_coords::to_inputs().
//
// The span of the centred training points.  The objective of nca.hpp
// depends on the map A (d x D) only through the differences A (x_i - x_j),
// and the differences x_i - x_j lie in the span of the centred rows of X.
// When that span has r < D dimensions (more columns than rows, p >= n - 1,
// or collinear columns), with B (D x r) an orthonormal basis of it
// (kmaha/span.hpp: reducing_span()), every map A gives the training points
// the same distances as A~ = A B (d x r) acting on the coordinates
// z = B' x, so the data terms of A and of A B B' are equal, and
//   lambda ||A||_F^2 = lambda ||A B||_F^2 + lambda ||A (I - B B')||_F^2
//                   >= lambda ||A B||_F^2,
// with equality when A = A B B'.  So NCA on the r coordinates Z = X B with
// the penalty lambda ||A~||_F^2 has the same optimal value as NCA on X; its
// solution A~ maps back as A = A~ B' (d x D), with the same objective value,
// and the gradient at A~ B' is the reduced one times B' (the data gradient
// 2 (L Z)' X of nca.hpp lies in the span, since the weighted Laplacian L
// has rows summing to zero).  With lambda > 0 the optimum of the full
// problem has no component outside the span either.  With lambda = 0 a
// full-dimension solver keeps its start's component outside the span
// (A0 (I - B B'), which gets no gradient), which changes no distance between
// training points.  For the D x D identity and the principal directions
// (the default starts) it does not change which training points are
// nearest to a new point either: the full solver's iterates are then
// (I - B B') + B M B', resp. principal directions in the span plus rows
// orthogonal to it, and the component outside the span maps the new
// point's difference to every training point to the same vector,
// orthogonal to the rest of its image.  (For other starts it adds cross
// terms that differ between training points.)
//
// The start A0 (d x D) becomes A0 B: the D x D identity becomes the r x r
// identity (B'B = I; the same metric on the span as B, up to a rotation of
// the output, which leaves the objective unchanged), k < D rows of the
// identity the first k rows of B, a start with more rows than r the same
// metric with r rows (fewer_rows()).  A random start may be drawn in the
// span's coordinates directly (nca_start::in_span): the restriction A0 B of
// a d x D matrix with independent N(0, s^2) entries has independent
// N(0, s^2) entries in any orthonormal basis.  The map returned has D
// columns and at most r rows.
//
// Cost: the basis is O(n^2 D) (or O(n D^2) without more columns than rows),
// the coordinates O(n D r), after which nothing of size D is formed: memory
// O(n D + n^2) at p >> n, where the full-dimension solver kept several
// d x D matrices (map, gradient, L-BFGS-B's correction pairs) with d = D.
// Kernel-trick NCA (a regulariser trace(A R A'), R not the identity) is not
// reduced: there the penalty is not isotropic.
#ifndef KMAHA_NCA_SPAN_HPP
#define KMAHA_NCA_SPAN_HPP

#include <cmath>
#include "common.hpp"
#include "context.hpp"
#include "gemm.hpp"
#include "span.hpp"

namespace kmaha {

// The start of an NCA fit as the caller gives it.
struct nca_start {
  arma::mat A;                    // d x D; empty: rows of the identity
  arma::uword identity_rows = 0;  // with A empty: the identity's first rows (0: all D)
  bool in_span = false;           // A is d x m (m >= r): coordinates on the span's
                                  // basis, its first r columns used
};

// The coordinates an NCA solver works in: X itself (basis empty), or
// Z = X B on the span's basis; and the start in them.
struct nca_coords {
  arma::mat basis;  // B, D x r; empty: no reduction
  arma::mat Z;      // X B (n x r) when reduced
  arma::mat A0;     // the start in the solver's coordinates
  bool reduced() const { return !basis.is_empty(); }
  // The inputs the solver works on.
  const arma::mat& inputs(const arma::mat& X) const { return reduced() ? Z : X; }
  // A map on the solver's coordinates as a map on the inputs: A~ B'.
  arma::mat to_inputs(const arma::mat& A, const context& ctx) const {
    if (!reduced()) return A;
    return product(ctx.kernels, A, false, basis, true, ctx.interrupt);
  }
};

// The solver's coordinates for inputs X (n x D) and start s.  `span`:
// reduce when the span of the centred rows has fewer than D dimensions
// (false: always work on X, the full-dimension problem, a reference for
// tests).  A start in the span's coordinates needs the reduction.
inline nca_coords nca_solver_coords(const arma::mat& X, const nca_start& s, bool span,
                                    const context& ctx) {
  const arma::uword D = X.n_cols;
  const arma::uword k = s.identity_rows ? s.identity_rows : D;
  if (s.A.is_empty() && k > D) throw error("nca: the start has more rows than the inputs have columns");
  if (!s.A.is_empty() && !s.in_span && s.A.n_cols != D)
    throw error("nca: the start map must have one column per feature");
  nca_coords c;
  if (span) c.basis = reducing_span(X, ctx.kernels, ctx.interrupt, "nca");
  if (!c.reduced()) {
    if (s.in_span)
      throw error("nca: the training points all coincide; there is nothing to learn");
    c.A0 = s.A.is_empty() ? arma::mat(arma::eye(k, D)) : s.A;
    return c;
  }
  const arma::mat& B = c.basis;
  const arma::uword r = B.n_cols;
  c.Z = product(ctx.kernels, X, false, B, false, ctx.interrupt);
  if (s.A.is_empty()) {
    c.A0 = k == D ? arma::mat(arma::eye(r, r)) : arma::mat(B.rows(0, k - 1));
  } else if (s.in_span) {
    if (s.A.n_cols < r) throw error("nca: the start in the span has too few columns");
    c.A0 = s.A.cols(0, r - 1);
  } else {
    c.A0 = product(ctx.kernels, s.A, false, B, false, ctx.interrupt);
  }
  c.A0 = fewer_rows(c.A0);
  return c;
}

// log ||A||_F without overflow or underflow (-inf for a zero map).
inline double log_frobenius(const arma::mat& A) {
  const double m = A.n_elem ? arma::abs(A).max() : 0.0;
  if (!(m > 0.0) || !std::isfinite(m)) return std::log(m);
  return std::log(m) + 0.5 * std::log(arma::accu(arma::square(A / m)));
}

}  // namespace kmaha

#endif  // KMAHA_NCA_SPAN_HPP
