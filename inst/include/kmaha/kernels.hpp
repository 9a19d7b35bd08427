// kmaha core: kernel functions and Gram matrices.
//
// Every Gram matrix is built from one matrix product (either the inner
// products X Y' or the squared distances derived from them), never from a
// loop over pairs.
#ifndef KMAHA_KERNELS_HPP
#define KMAHA_KERNELS_HPP

#include <cmath>
#include <vector>
#include "common.hpp"

namespace kmaha {

enum class kernel_type { linear, rbf, gaussian, poly, laplace };

struct kernel_spec {
  kernel_type type = kernel_type::linear;
  double sigma = 1.0;   // rbf (scaled by D), gaussian, laplace
  double degree = 2.0;  // poly
  double scale = 1.0;   // poly
  double offset = 0.0;  // poly
};

inline bool uses_distance(const kernel_spec& k) {
  return k.type == kernel_type::rbf || k.type == kernel_type::gaussian ||
         k.type == kernel_type::laplace;
}

// Apply kernel k elementwise to precomputed squared distances (distance
// kernels) or inner products (linear / polynomial).  `D` is the input
// dimension used by the paper's scaled RBF: exp(-d2 / (2 D sigma^2)).
inline arma::mat apply_kernel(const kernel_spec& k, const arma::mat& base,
                              double D) {
  switch (k.type) {
    case kernel_type::linear:
      return base;
    case kernel_type::rbf:
      return arma::exp(base * (-1.0 / (2.0 * D * k.sigma * k.sigma)));
    case kernel_type::gaussian:
      return arma::exp(base * (-1.0 / (2.0 * k.sigma * k.sigma)));
    case kernel_type::laplace:
      return arma::exp(arma::sqrt(base) * (-1.0 / k.sigma));
    case kernel_type::poly: {
      arma::mat P = k.scale * base + k.offset;
      const double deg = k.degree;
      if (deg == 1.0) return P;
      if (deg == 2.0) return P % P;
      return arma::pow(P, deg);
    }
  }
  throw error("unknown kernel type");
}

// Gram matrix between the rows of X and Y (Y == nullptr: within X).
inline arma::mat gram(const kernel_spec& k, const arma::mat& X,
                      const arma::mat* Y = nullptr) {
  const double D = static_cast<double>(X.n_cols);
  if (Y != nullptr && Y->n_cols != X.n_cols)
    throw error("gram: X and Y differ in columns");
  if (uses_distance(k)) {
    return apply_kernel(k, Y ? sq_dist(X, *Y) : sq_dist(X), D);
  }
  return apply_kernel(k, Y ? arma::mat(X * Y->t()) : arma::mat(X * X.t()), D);
}

// Non-negative combination sum_i w_i k_i.  The squared distances and inner
// products are computed once and shared by all base kernels, which makes the
// 21-kernel sums of the paper cost little more than one kernel.
inline arma::mat gram_sum(const std::vector<kernel_spec>& ks,
                          const arma::vec& w, const arma::mat& X,
                          const arma::mat* Y = nullptr,
                          const interrupt_fn& interrupt = no_interrupt) {
  if (ks.size() != w.n_elem) throw error("gram_sum: weights length mismatch");
  const double D = static_cast<double>(X.n_cols);
  bool need_d = false, need_ip = false;
  for (const auto& k : ks) (uses_distance(k) ? need_d : need_ip) = true;
  arma::mat d2, ip;
  if (need_ip) ip = Y ? arma::mat(X * Y->t()) : arma::mat(X * X.t());
  if (need_d) d2 = Y ? sq_dist(X, *Y) : sq_dist(X);
  arma::mat K(X.n_rows, Y ? Y->n_rows : X.n_rows, arma::fill::zeros);
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if (w[i] == 0.0) continue;
    K += w[i] * apply_kernel(ks[i], uses_distance(ks[i]) ? d2 : ip, D);
    check_interrupt(interrupt);
  }
  return K;
}

}  // namespace kmaha

#endif  // KMAHA_KERNELS_HPP
