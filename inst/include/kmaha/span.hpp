// kmaha core: the span of the centred rows of a matrix (the span of the
// differences x_i - x_j of its rows), from the eigen-decomposition of the
// centred Gram matrix.
//
// Learners whose objective depends on a metric only through differences of
// points (LMNN, DNE) can work in these r coordinates instead of all D when
// r < D (p >> n, or kernel PCA coordinates / kernel rows with a
// rank-deficient kernel).  One routine, centred_row_span(), serves them:
// LMNN takes its basis through difference_span(), DNE the basis, the
// points' coordinates in it and the eigenpairs (for its retention), NCA
// its basis through reducing_span(), which also finds collinear columns
// when there are fewer columns than rows (centred_column_span()).
#ifndef KMAHA_SPAN_HPP
#define KMAHA_SPAN_HPP

#include <cmath>
#include <string>
#include <vector>
#include "common.hpp"
#include "gemm.hpp"
#include "symeig.hpp"

namespace kmaha {

namespace detail {
// Eigen-decomposition of a centred Gram matrix Gc (n x n, symmetrised
// here), keeping the directions with eigenvalue above rtol times the
// largest, none when the largest is not positive (U: n x r, s: r, ascending).
inline void centred_gram_eigen(const arma::mat& Gc, arma::mat& U, arma::vec& s,
                               const char* who, double rtol = 1e-10,
                               const interrupt_fn& interrupt = interrupt_fn()) {
  arma::mat G = 0.5 * (Gc + Gc.t());
  const sym_eigen se(G, who, 0, interrupt);
  const arma::vec& ev = se.values();
  const double top = ev.n_elem ? ev.max() : 0.0;
  const arma::uvec keep = top > 0.0 ? arma::uvec(arma::find(ev > rtol * top))
                                    : arma::uvec();
  U = se.vectors(keep);
  s = ev.elem(keep);
}
}  // namespace detail

// The span of the centred rows of X (n x D): with Xc = X - 1 mean' and
// Xc Xc' = U diag(s) U' (the r eigenvalues above rtol times the largest),
// an orthonormal basis B = Xc' U diag(s)^(-1/2) (D x r) and the points'
// coordinates in it, Z = Xc B = U diag(s)^(1/2) (n x r).  Cost O(n^2 D),
// not O(D^3).  `kernels` selects the instruction set of the two products;
// `who` names the caller in the error of a failed eigen-decomposition.
struct row_span {
  arma::mat basis;   // B, D x r
  arma::mat coords;  // Z, n x r
  arma::mat U;       // n x r
  arma::vec s;       // r eigenvalues of Xc Xc', ascending
};

inline row_span centred_row_span(const arma::mat& X, isa kernels,
                                 double rtol = 1e-10,
                                 const char* who = "span",
                                 const interrupt_fn& interrupt = interrupt_fn()) {
  const arma::uword n = X.n_rows, D = X.n_cols;
  row_span out;
  const arma::mat Xc = X.each_row() - arma::mean(X, 0);
  gemm_buffers buf;
  // G = Xc Xc' (n x n)
  arma::mat G(n, n);
  gemm(kernels, n, n, D, cview::col_major(Xc.memptr(), n),
       cview::transposed(Xc.memptr(), n), G.memptr(), 1, n, false, buf);
  detail::centred_gram_eigen(G, out.U, out.s, who, rtol, interrupt);
  const arma::uword r = out.U.n_cols;
  out.basis.set_size(D, r);
  if (r > 0) {
    gemm(kernels, D, r, n, cview::transposed(Xc.memptr(), n),
         cview::col_major(out.U.memptr(), n), out.basis.memptr(), 1, D, false, buf);
  }
  out.coords = out.U;
  for (arma::uword c = 0; c < r; ++c) {
    const double sq = std::sqrt(out.s[c]);
    out.basis.col(c) /= sq;
    out.coords.col(c) *= sq;
  }
  return out;
}

// The same for points whose coordinates are principal components already
// (exact kernel PCA coordinates: columns centred, orthogonal, of squared
// norms s_j): the span is spanned by the axes, so B is the identity on the
// columns whose squared norm exceeds rtol times the largest, Z those
// columns, U = Z diag(s)^(-1/2), with no eigen-decomposition.
inline row_span principal_row_span(const arma::mat& X, double rtol = 1e-10) {
  const arma::uword D = X.n_cols;
  row_span out;
  const arma::rowvec s = arma::sum(arma::square(X), 0);
  const double top = s.n_elem ? s.max() : 0.0;
  std::vector<arma::uword> keep;
  for (arma::uword j = 0; j < D; ++j)
    if (top > 0.0 && s[j] > rtol * top) keep.push_back(j);
  const arma::uvec k(keep);
  out.coords = X.cols(k);
  out.s = arma::vec(s.elem(k));
  out.U = out.coords;
  for (arma::uword c = 0; c < k.n_elem; ++c) out.U.col(c) /= std::sqrt(out.s[c]);
  out.basis.zeros(D, k.n_elem);
  for (arma::uword c = 0; c < k.n_elem; ++c) out.basis(k[c], c) = 1.0;
  return out;
}

// LMNN's reduction: the basis of centred_row_span() when the span can be
// smaller than R^D (n - 1 < D), else an empty matrix (n - 1 >= D, or X has
// no rows).  When all rows are equal the span has no direction and the
// basis no column, which is empty too: the caller keeps all D coordinates.
inline arma::mat difference_span(const arma::mat& X, isa kernels,
                                 double rtol = 1e-10) {
  const arma::uword n = X.n_rows, D = X.n_cols;
  if (n == 0 || n - 1 >= D) return arma::mat();
  return centred_row_span(X, kernels, rtol, "difference_span").basis;
}

// The basis of the same span from the D x D matrix Xc' Xc = V diag(s) V'
// (Xc = X - 1 mean'): its eigenvectors with eigenvalue above rtol times the
// largest, none when Xc is zero.  For X with more rows than columns: cost
// O(n D^2 + D^3), memory O(D^2), where centred_row_span() would need the
// n x n Gram matrix.  The product is polled through `interrupt`.
inline arma::mat centred_column_span(const arma::mat& X, isa kernels, double rtol,
                                     const char* who, const interrupt_fn& interrupt) {
  const arma::mat Xc = X.each_row() - arma::mean(X, 0);
  const arma::mat C = product(kernels, Xc, true, Xc, false, interrupt);
  arma::mat V;
  arma::vec s;
  detail::centred_gram_eigen(C, V, s, who, rtol, interrupt);
  return V;
}

// The basis B (D x r) of the span of the centred rows of X when that span
// has fewer dimensions than X has columns, else an empty matrix (as when
// all rows are equal and the span has no direction).  With n - 1 < D the
// span always has r <= n - 1 < D dimensions: the basis of
// centred_row_span(), with rtol_wide as difference_span().  Otherwise
// r < D only for collinear columns, found from Xc'Xc, whose eigenvalues
// carry rounding errors of about eps times the largest: only directions
// below rtol_tall (default 1e-12) of the largest, i.e. collinear up to
// rounding, are dropped, and columns of very different scales (unscaled
// inputs in different units) keep all their directions.  The centred rows
// are first divided by a power of two near their largest absolute entry
// (the span does not change), so that the Gram matrix neither overflows
// nor underflows for inputs of extreme scale; centred rows that are zero
// or not finite give no reduction.
inline arma::mat reducing_span(const arma::mat& X, isa kernels,
                               const interrupt_fn& interrupt, const char* who,
                               double rtol_wide = 1e-10, double rtol_tall = 1e-12) {
  const arma::uword n = X.n_rows, D = X.n_cols;
  if (n == 0 || D == 0) return arma::mat();
  arma::mat Xc = X.each_row() - arma::mean(X, 0);
  const double top = arma::abs(Xc).max();
  if (!(top > 0.0) || !std::isfinite(top)) return arma::mat();
  int e = 0;
  std::frexp(top, &e);
  Xc *= std::ldexp(1.0, -e);
  arma::mat B = n - 1 < D ? centred_row_span(Xc, kernels, rtol_wide, who).basis
                          : centred_column_span(Xc, kernels, rtol_tall, who, interrupt);
  check_interrupt(interrupt);
  if (B.n_cols == 0 || B.n_cols >= D) return arma::mat();
  return B;
}

// A map with more rows than columns: the same metric with fewer rows
// (L' L = T' T, T the triangular factor of a QR decomposition).  The
// reductions to the span give a start L0 B (d x r) such a form when d > r.
inline arma::mat fewer_rows(const arma::mat& L) {
  if (L.n_rows <= L.n_cols) return L;
  arma::mat Q, T;
  if (!arma::qr_econ(Q, T, L)) throw error(error_kind::numerical, "span: QR decomposition failed");
  return T;
}

}  // namespace kmaha

#endif  // KMAHA_SPAN_HPP
