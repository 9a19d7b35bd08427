// kmaha core: Gram matrices of kernel combinations, blocked and threaded.
//
// gram_sum() builds the Gram matrix of a non-negative combination of base
// kernels in blocks of columns that run in parallel (parallel.hpp); each
// block's inner products come from one Eigen product and its squared
// distances are derived from them, and both are shared by all base kernels.
// Kept apart from kernels.hpp so that only the files that build Gram
// matrices include Eigen.
#ifndef KMAHA_GRAM_HPP
#define KMAHA_GRAM_HPP

#include <algorithm>
#include <vector>
#include <Eigen/Dense>
#include "common.hpp"
#include "kernels.hpp"
#include "parallel.hpp"

namespace kmaha {

namespace detail {

inline void kernel_needs(const std::vector<kernel_spec>& ks, bool& need_d,
                         bool& need_ip) {
  need_d = need_ip = false;
  for (const auto& k : ks) (uses_distance(k) ? need_d : need_ip) = true;
}

// Columns [c0, c1) of the Gram matrix of sum_i w_i k_i between the rows of X
// and of Y, written into out (n x (c1 - c0), may alias the full matrix).
// The inner products come from one Eigen product (single-threaded here: the
// callers run blocks in parallel); xx, yy are the squared row norms.
// diag_zero: X is Y and the block's diagonal distances are exactly 0.
inline void gram_columns(const std::vector<kernel_spec>& ks, const arma::vec& w,
                         const arma::mat& X, const arma::mat& Y,
                         arma::uword c0, arma::uword c1, const arma::vec& xx,
                         const arma::vec& yy, bool diag_zero, arma::mat& out) {
  const arma::uword n = X.n_rows, nb = c1 - c0;
  const double D = static_cast<double>(X.n_cols);
  bool need_d = false, need_ip = false;
  kernel_needs(ks, need_d, need_ip);
  arma::mat ip(n, nb), d2;
  {
    const Eigen::Map<const Eigen::MatrixXd> Xe(X.memptr(), n, X.n_cols);
    const Eigen::Map<const Eigen::MatrixXd> Ye(Y.memptr(), Y.n_rows, Y.n_cols);
    Eigen::Map<Eigen::MatrixXd> Ie(ip.memptr(), n, nb);
    if (X.n_cols == 0) Ie.setZero();
    else Ie.noalias() = Xe * Ye.middleRows(c0, nb).transpose();
  }
  if (need_d) {
    d2 = ip * -2.0;
    d2.each_col() += xx;
    d2.each_row() += yy.subvec(c0, c1 - 1).t();
    d2.transform([](double v) { return v < 0.0 ? 0.0 : v; });
    if (diag_zero)
      for (arma::uword j = c0; j < c1 && j < n; ++j) d2(j, j - c0) = 0.0;
  }
  out.zeros();
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if (w[i] == 0.0) continue;
    out += w[i] * apply_kernel(ks[i], uses_distance(ks[i]) ? d2 : ip, D);
  }
}

// Rows [s, e) of X against all rows of Y (yy: their squared norms), as the
// (e - s) x Y.n_rows block `out`; single-threaded.
inline void gram_rows(const std::vector<kernel_spec>& ks, const arma::vec& w,
                      const arma::mat& X, arma::uword s, arma::uword e,
                      const arma::mat& Y, const arma::vec& yy, arma::mat& out) {
  const arma::mat Xb = X.rows(s, e - 1);
  const arma::vec xb = arma::sum(arma::square(Xb), 1);
  out.set_size(e - s, Y.n_rows);
  gram_columns(ks, w, Xb, Y, 0, Y.n_rows, xb, yy, false, out);
}

// Columns per block so that a block holds about 2^18 doubles.
inline arma::uword gram_block_cols(arma::uword n_rows) {
  const double target = 262144.0 / static_cast<double>(std::max<arma::uword>(n_rows, 1));
  return static_cast<arma::uword>(std::max(8.0, std::min(512.0, target)));
}

}  // namespace detail

// Non-negative combination sum_i w_i k_i between the rows of X (n x D) and
// of Y (m x D; nullptr: within X, exactly symmetric), n x m.  Blocks of
// columns run on `num_threads` threads; each entry is computed by one thread
// in a fixed order, so the result does not depend on the thread count.  The
// squared distances and inner products of a block are computed once and
// shared by all base kernels, which makes the 21-kernel sums of the paper
// cost little more than one kernel.
inline arma::mat gram_sum(const std::vector<kernel_spec>& ks,
                          const arma::vec& w, const arma::mat& X,
                          const arma::mat* Y = nullptr,
                          const interrupt_fn& interrupt = no_interrupt,
                          int num_threads = 1) {
  if (ks.size() != w.n_elem) throw error("gram_sum: weights length mismatch");
  if (Y != nullptr && Y->n_cols != X.n_cols)
    throw error("gram_sum: X and Y differ in columns");
  const arma::mat& Yr = Y ? *Y : X;
  const arma::uword n = X.n_rows, m = Yr.n_rows;
  arma::mat K(n, m);
  if (n == 0 || m == 0) return K;
  const arma::vec xx = arma::sum(arma::square(X), 1);
  const arma::vec yy = Y ? arma::vec(arma::sum(arma::square(Yr), 1)) : xx;
  const row_blocks cols(m, detail::gram_block_cols(n));
  parallel_for(cols.count(), num_threads,
               [&](std::size_t b, std::size_t) {
                 const arma::uword c0 = cols.start(b), c1 = cols.end(b);
                 arma::mat out(K.colptr(c0), n, c1 - c0, false, true);
                 detail::gram_columns(ks, w, X, Yr, c0, c1, xx, yy, Y == nullptr, out);
               },
               interrupt);
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
