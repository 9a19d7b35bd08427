// kmaha core: the span of the centred rows of a matrix (the span of the
// differences x_i - x_j of its rows), from the eigen-decomposition of the
// centred Gram matrix.
//
// Learners whose objective depends on a metric only through differences of
// points (LMNN, DNE) can work in these r coordinates instead of all D when
// r < D (p >> n, or kernel PCA coordinates / kernel rows with a
// rank-deficient kernel).  One routine, centred_row_span(), serves both:
// LMNN takes its basis through difference_span(), DNE the basis, the
// points' coordinates in it and the eigenpairs (for its retention).
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
                               const char* who, double rtol = 1e-10) {
  arma::mat G = 0.5 * (Gc + Gc.t());
  const sym_eigen se(G, who);
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
                                 const char* who = "span") {
  const arma::uword n = X.n_rows, D = X.n_cols;
  row_span out;
  const arma::mat Xc = X.each_row() - arma::mean(X, 0);
  gemm_buffers buf;
  // G = Xc Xc' (n x n)
  arma::mat G(n, n);
  gemm(kernels, n, n, D, cview::col_major(Xc.memptr(), n),
       cview::transposed(Xc.memptr(), n), G.memptr(), 1, n, false, buf);
  detail::centred_gram_eigen(G, out.U, out.s, who, rtol);
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

}  // namespace kmaha

#endif  // KMAHA_SPAN_HPP
