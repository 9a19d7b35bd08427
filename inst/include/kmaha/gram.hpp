// kmaha core: Gram matrices of kernel combinations, blocked and threaded.
//
// gram_sum() builds the Gram matrix of a non-negative combination of base
// kernels in blocks of columns that run in parallel (distances.hpp,
// parallel.hpp): each block's inner products come from one product of the
// core's kernel (gemm.hpp), its squared distances are derived from them, and
// both are shared by all base kernels, which makes the 21-kernel sums of the
// paper cost little more than one kernel.  kernel_block() is the one block,
// used by the Nystrom method and the KPCA projection too.
#ifndef KMAHA_GRAM_HPP
#define KMAHA_GRAM_HPP

#include <algorithm>
#include <limits>
#include <vector>
#include "common.hpp"
#include "distances.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kmaha {

namespace detail {

inline void kernel_needs(const std::vector<kernel_spec>& ks, bool& need_d,
                         bool& need_ip) {
  need_d = need_ip = false;
  for (const auto& k : ks) (uses_distance(k) ? need_d : need_ip) = true;
}

// out (X.n_rows x b) = sum_i w_i k_i(x_r, q_c) from P, the inner products
// of the rows of X with the b queries q0.. (overwritten); xx, qq: squared
// row norms of X and of the queries (qq starting at q0).  diag_zero: Q is X
// and distances of a query to itself are exactly 0.
inline void kernel_from_products(const std::vector<kernel_spec>& ks,
                                 const arma::vec& w, arma::mat& P,
                                 const arma::vec& xx, const double* qq,
                                 arma::uword q0, bool diag_zero, double D,
                                 arma::mat& out) {
  bool need_d = false, need_ip = false;
  kernel_needs(ks, need_d, need_ip);
  arma::mat d2;
  if (need_d) {
    d2 = P;
    products_to_sq_dist(d2, xx, qq);
    // Distances below the rounding error of ||x||^2 + ||q||^2 - 2 x'q are
    // zero: a point is at distance exactly 0 from its own copy, so a new
    // point equal to a training point gets that point's kernel values (the
    // Laplace kernel's square root would turn 1e-16 into 1e-8).
    const double tiny = 8.0 * std::numeric_limits<double>::epsilon();
    for (arma::uword c = 0; c < d2.n_cols; ++c) {
      double* col = d2.colptr(c);
      for (arma::uword r = 0; r < d2.n_rows; ++r)
        if (col[r] <= tiny * (xx[r] + qq[c])) col[r] = 0.0;
    }
    if (diag_zero)
      for (arma::uword c = 0; c < d2.n_cols && q0 + c < d2.n_rows; ++c)
        d2(q0 + c, c) = 0.0;
  }
  out.zeros(P.n_rows, P.n_cols);
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if (w[i] == 0.0) continue;
    out += w[i] * apply_kernel(ks[i], uses_distance(ks[i]) ? d2 : P, D);
  }
}

// Columns per block so that a block holds about 2^18 doubles.
inline arma::uword gram_block_cols(arma::uword n_rows) {
  const double target = 262144.0 / static_cast<double>(std::max<arma::uword>(n_rows, 1));
  return static_cast<arma::uword>(std::max(8.0, std::min(512.0, target)));
}

}  // namespace detail

// The kernel values between every row of X (n x D) and the rows [q0, q1) of
// Q, as the n x (q1 - q0) matrix `out`, single-threaded (callers run blocks
// in parallel), its product in instruction set s.  xx, qq: squared row norms
// of X and of all rows of Q.
inline void kernel_block(const std::vector<kernel_spec>& ks, const arma::vec& w,
                         const arma::mat& X, const arma::mat& Q, arma::uword q0,
                         arma::uword q1, const arma::vec& xx,
                         const arma::vec& qq, bool diag_zero, arma::mat& out,
                         gemm_buffers& buf, isa s) {
  const arma::uword n = X.n_rows, b = q1 - q0, m = Q.n_rows;
  arma::mat P(n, b);
  gemm(s, static_cast<std::ptrdiff_t>(n), static_cast<std::ptrdiff_t>(b),
       static_cast<std::ptrdiff_t>(X.n_cols), cview::col_major(X.memptr(), n),
       cview{Q.memptr() + q0, static_cast<std::ptrdiff_t>(m), 1}, P.memptr(), 1,
       static_cast<std::ptrdiff_t>(n), false, buf);
  detail::kernel_from_products(ks, w, P, xx, qq.memptr() + q0, q0, diag_zero,
                               static_cast<double>(X.n_cols), out);
}

// Rows [s, e) of X against all rows of Y (yy: their squared norms), as the
// (e - s) x Y.n_rows block `out`; single-threaded, its product in
// instruction set `is`.
inline void gram_rows(const std::vector<kernel_spec>& ks, const arma::vec& w,
                      const arma::mat& X, arma::uword s, arma::uword e,
                      const arma::mat& Y, const arma::vec& yy, arma::mat& out,
                      isa is) {
  const arma::vec xb = arma::sum(arma::square(X.rows(s, e - 1)), 1);
  const arma::uword m = Y.n_rows, b = e - s, n = X.n_rows;
  arma::mat P(m, b), Kt;
  gemm_buffers buf;
  gemm(is, static_cast<std::ptrdiff_t>(m), static_cast<std::ptrdiff_t>(b),
       static_cast<std::ptrdiff_t>(Y.n_cols), cview::col_major(Y.memptr(), m),
       cview{X.memptr() + s, static_cast<std::ptrdiff_t>(n), 1}, P.memptr(), 1,
       static_cast<std::ptrdiff_t>(m), false, buf);
  detail::kernel_from_products(ks, w, P, yy, xb.memptr(), 0, false,
                               static_cast<double>(X.n_cols), Kt);
  out = Kt.t();
}

// Non-negative combination sum_i w_i k_i between the rows of X (n x D) and
// of Y (m x D; nullptr: within X, exactly symmetric), n x m.  Blocks of
// columns run on the context's threads; each entry is computed by one thread
// in a fixed order, so the result does not depend on the thread count.
inline arma::mat gram_sum(const std::vector<kernel_spec>& ks,
                          const arma::vec& w, const arma::mat& X,
                          const arma::mat* Y, const context& ctx) {
  if (ks.size() != w.n_elem) throw error("gram_sum: weights length mismatch");
  if (Y != nullptr && Y->n_cols != X.n_cols)
    throw error("gram_sum: X and Y differ in columns");
  const arma::mat& Yr = Y ? *Y : X;
  const arma::uword n = X.n_rows, m = Yr.n_rows;
  arma::mat K(n, m);
  if (n == 0 || m == 0) return K;
  const arma::vec xx = arma::sum(arma::square(X), 1);
  const arma::vec yy = Y ? arma::vec(arma::sum(arma::square(Yr), 1)) : xx;
  const double D = static_cast<double>(X.n_cols);
  for_each_product_block(
      X, Yr, detail::gram_block_cols(n),
      [&](arma::uword q0, arma::uword q1, arma::mat& P) {
        arma::mat out(K.colptr(q0), n, q1 - q0, false, true);
        detail::kernel_from_products(ks, w, P, xx, yy.memptr() + q0, q0,
                                     Y == nullptr, D, out);
      },
      ctx);
  if (Y == nullptr) {  // exact symmetry: the upper triangle mirrors the lower
    for (arma::uword j = 1; j < n; ++j) {
      double* kj = K.colptr(j);
      for (arma::uword i = 0; i < j; ++i) kj[i] = K(j, i);
    }
  }
  return K;
}

// k(x_i, x_i) of sum_i w_i k_i for every row of X.
inline arma::vec gram_diag(const std::vector<kernel_spec>& ks,
                           const arma::vec& w, const arma::mat& X) {
  if (ks.size() != w.n_elem) throw error("gram_diag: weights length mismatch");
  const double D = static_cast<double>(X.n_cols);
  const arma::mat zero(X.n_rows, 1, arma::fill::zeros);
  const arma::mat ip = arma::sum(arma::square(X), 1);
  arma::mat d(X.n_rows, 1, arma::fill::zeros);
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if (w[i] == 0.0) continue;
    d += w[i] * apply_kernel(ks[i], uses_distance(ks[i]) ? zero : ip, D);
  }
  return arma::vec(d);
}

}  // namespace kmaha

#endif  // KMAHA_GRAM_HPP
