// kmaha core: shared types, errors and helpers.
//
// Conventions used everywhere in the core:
//  * one observation per ROW (n x D), exactly as R stores a data matrix, so the
//    glue can hand R memory to the core without transposing;
//  * class labels are 0-based unsigned integers (arma::uvec);
//  * errors are reported by throwing kmaha::error (the glue turns them into R
//    errors); long loops call an interrupt callback supplied by the caller,
//    which may throw to abort the computation.
// No R header is included by any file of the core.
#ifndef KMAHA_COMMON_HPP
#define KMAHA_COMMON_HPP

#include <armadillo>
#include <functional>
#include <stdexcept>
#include <string>

namespace kmaha {

struct error : public std::runtime_error {
  explicit error(const std::string& what) : std::runtime_error(what) {}
};

// Callback polled by long loops (on the calling thread only).  The R glue
// passes a function that checks for a user interrupt and throws.
using interrupt_fn = std::function<void()>;

inline void no_interrupt() {}

// Squared Euclidean distances between the rows of X (n x D) and of Y (m x D),
// computed through one matrix product: ||x||^2 + ||y||^2 - 2 x'y.  Rounding can
// make tiny distances negative; they are clamped at zero.
inline arma::mat sq_dist(const arma::mat& X, const arma::mat& Y) {
  if (X.n_cols != Y.n_cols) throw error("sq_dist: X and Y differ in columns");
  arma::mat G = X * Y.t();
  const arma::vec xx = arma::sum(arma::square(X), 1);
  const arma::rowvec yy = arma::sum(arma::square(Y), 1).t();
  G *= -2.0;
  G.each_col() += xx;
  G.each_row() += yy;
  G.transform([](double v) { return v < 0.0 ? 0.0 : v; });
  return G;
}

// Symmetric version for distances within one set: exact zero diagonal and
// exactly symmetric output (the product X X' is evaluated as a rank-k update).
inline arma::mat sq_dist(const arma::mat& X) {
  arma::mat G = X * X.t();
  const arma::vec d = G.diag();
  const arma::uword n = X.n_rows;
  for (arma::uword j = 0; j < n; ++j) {
    for (arma::uword i = j + 1; i < n; ++i) {
      double v = d[i] + d[j] - 2.0 * G(i, j);
      if (v < 0.0) v = 0.0;
      G(i, j) = v;
    }
  }
  for (arma::uword j = 0; j < n; ++j) {
    G(j, j) = 0.0;
    for (arma::uword i = 0; i < j; ++i) G(i, j) = G(j, i);
  }
  return G;
}

}  // namespace kmaha

#endif  // KMAHA_COMMON_HPP
