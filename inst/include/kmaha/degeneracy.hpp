// kmaha core: numerically degenerate kernels.
//
// A kernel whose Gram matrix on the training points is numerically the
// identity (up to a constant factor) or a constant decides nearest
// neighbours in feature space by ties: every point is equally far from every
// other, or all points sit on top of each other.  The verdict reads the
// feature-space squared distances d_ij = K_ii + K_jj - 2 K_ij on up to 256
// evenly spaced points, over the pairs of points that differ in input space
// (for a precomputed Gram matrix, every pair):
//   constant: every d_ij is below 1e-8 of the largest |K_ij| (inputs far too
//             close for the kernel, e.g. x * 1e-150 under an RBF kernel);
//   identity: at least three pairs and every d_ij equal to 1e-8 relative
//             (inputs far too far apart, or a far too small bandwidth).
// Every KPCA of the package returns this verdict with its fit (the R layer
// warns about it, and kernel choice leaves such kernels out).
#ifndef KMAHA_DEGENERACY_HPP
#define KMAHA_DEGENERACY_HPP

#include <algorithm>
#include <cmath>
#include <string>
#include "common.hpp"

namespace kmaha {

enum class degeneracy { none = 0, constant = 1, identity = 2 };

inline const char* degeneracy_name(degeneracy d) {
  switch (d) {
    case degeneracy::constant: return "constant";
    case degeneracy::identity: return "identity";
    default: return "";
  }
}

// The rows the verdict reads: all of them up to 256, else 256 evenly spaced
// ones (first and last included).
inline arma::uvec degeneracy_rows(arma::uword n) {
  const arma::uword m = std::min<arma::uword>(n, 256);
  arma::uvec idx(m);
  if (m == n) {
    for (arma::uword i = 0; i < n; ++i) idx[i] = i;
    return idx;
  }
  const double step = static_cast<double>(n - 1) / static_cast<double>(m - 1);
  for (arma::uword i = 0; i < m; ++i)
    idx[i] = static_cast<arma::uword>(std::llround(static_cast<double>(i) * step));
  return idx;
}

namespace detail {

// The verdict on K at the sampled rows; differ(i, j) says whether points i
// and j differ in input space (pairs that do not are left out).
template <class Differ>
inline degeneracy gram_degeneracy_on(const arma::mat& K, Differ differ) {
  const arma::uword n = K.n_rows;
  if (n < 2) return degeneracy::none;
  const arma::uvec idx = degeneracy_rows(n);
  const arma::uword m = idx.n_elem;
  double top = 0.0;
  for (arma::uword b = 0; b < m; ++b)
    for (arma::uword a = 0; a < m; ++a) top = std::max(top, std::fabs(K(idx[a], idx[b])));
  if (!std::isfinite(top) || top == 0.0) return degeneracy::none;
  double dmax = 0.0, dmin = 0.0;
  arma::uword pairs = 0;
  for (arma::uword b = 1; b < m; ++b) {
    const arma::uword j = idx[b];
    for (arma::uword a = 0; a < b; ++a) {
      const arma::uword i = idx[a];
      if (!differ(i, j)) continue;
      const double d = K(i, i) + K(j, j) - 2.0 * K(i, j);
      if (pairs == 0) {
        dmax = dmin = d;
      } else {
        dmax = std::max(dmax, d);
        dmin = std::min(dmin, d);
      }
      ++pairs;
    }
  }
  if (pairs == 0) return degeneracy::none;
  if (dmax <= 1e-8 * top) return degeneracy::constant;
  if (pairs >= 3 && dmax - dmin <= 1e-8 * dmax) return degeneracy::identity;
  return degeneracy::none;
}

}  // namespace detail

// The verdict on the Gram matrix K (n x n, symmetric) of the rows of X
// (n x D): pairs of equal inputs are left out.
inline degeneracy gram_degeneracy(const arma::mat& K, const arma::mat& X) {
  return detail::gram_degeneracy_on(K, [&](arma::uword i, arma::uword j) {
    for (arma::uword c = 0; c < X.n_cols; ++c)
      if (X(i, c) != X(j, c)) return true;
    return false;
  });
}

// The same with the points' squared input distances `sq` (n x n) at hand.
inline degeneracy gram_degeneracy(const arma::mat& K, const arma::mat* sq) {
  return detail::gram_degeneracy_on(K, [&](arma::uword i, arma::uword j) {
    return sq == nullptr || (*sq)(i, j) > 0.0;
  });
}

// A precomputed Gram matrix: every pair counts.
inline degeneracy gram_degeneracy(const arma::mat& K) {
  return gram_degeneracy(K, static_cast<const arma::mat*>(nullptr));
}

}  // namespace kmaha

#endif  // KMAHA_DEGENERACY_HPP
