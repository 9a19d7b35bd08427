// kmaha core: an orthonormal basis of the span of the centred rows of a
// matrix (the span of the differences x_i - x_j of its rows).
//
// Learners whose objective depends on a metric only through differences of
// points (LMNN, DNE) can work in these r coordinates instead of all D when
// r < D (p >> n, or kernel PCA coordinates / kernel rows with a
// rank-deficient kernel).
#ifndef KMAHA_SPAN_HPP
#define KMAHA_SPAN_HPP

#include <cmath>
#include "common.hpp"
#include "gemm.hpp"

namespace kmaha {

// Orthonormal basis (D x r) of the span of the differences of the rows of X
// (n x D) if r < D; an empty matrix when that span can be all of R^D
// (n - 1 >= D) or X has no rows.  Eigenvalues of the centred Gram matrix
// below rtol times the largest are dropped (at least one direction is
// kept).  `kernels` selects the instruction set of the two products.
inline arma::mat difference_span(const arma::mat& X, isa kernels,
                                 double rtol = 1e-10) {
  const arma::uword n = X.n_rows, D = X.n_cols;
  if (n == 0 || n - 1 >= D) return arma::mat();
  const arma::mat Xc = X.each_row() - arma::mean(X, 0);
  gemm_buffers buf;
  // G = Xc Xc' (n x n)
  arma::mat G(n, n);
  gemm(kernels, n, n, D, cview::col_major(Xc.memptr(), n),
       cview::transposed(Xc.memptr(), n), G.memptr(), 1, n, false, buf);
  G = 0.5 * (G + G.t());
  arma::vec s;
  arma::mat U;
  if (!arma::eig_sym(s, U, G)) throw error("difference_span: eigendecomposition failed");
  const double top = s.max();
  arma::uvec keep = arma::find(s > rtol * top);
  if (!(top > 0.0) || keep.n_elem == 0) keep = arma::uvec{s.n_elem - 1};
  // B = Xc' U_r diag(1 / sqrt(s_r)): orthonormal columns spanning the rows
  const arma::mat Ur = U.cols(keep);
  const arma::uword r = Ur.n_cols;
  arma::mat B(D, r);
  gemm(kernels, D, r, n, cview::transposed(Xc.memptr(), n),
       cview::col_major(Ur.memptr(), n), B.memptr(), 1, D, false, buf);
  for (arma::uword c = 0; c < keep.n_elem; ++c) B.col(c) /= std::sqrt(s[keep[c]]);
  return B;
}

}  // namespace kmaha

#endif  // KMAHA_SPAN_HPP
