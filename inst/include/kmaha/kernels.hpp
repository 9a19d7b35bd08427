// kmaha core: kernel functions.
//
// The blocked, multi-threaded Gram matrices of kernel combinations are in
// gram.hpp.  Every Gram matrix is built from one matrix product (either the inner
// products X Y' or the squared distances derived from them), never from a
// loop over pairs: apply_kernel() turns either into kernel values.
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

}  // namespace kmaha

#endif  // KMAHA_KERNELS_HPP
