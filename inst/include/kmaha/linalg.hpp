// kmaha core: dense products that every learner's prediction needs.
//
// Mapping n observations (rows of X, n x D) by a learned d x D map L is the
// product X L'.  It runs through Eigen's own GEMM, which on this package's
// typical shapes (n in the thousands, D and d up to a few hundred) is many
// times faster than the reference BLAS R is often linked against.
#ifndef KMAHA_LINALG_HPP
#define KMAHA_LINALG_HPP

#include <Eigen/Dense>
#include "common.hpp"
#include "parallel.hpp"

namespace kmaha {

// X L' (n x d) for X n x D and L d x D, on num_threads threads (Eigen's own
// parallel product).
inline arma::mat apply_map(const arma::mat& X, const arma::mat& L,
                           int num_threads = 1) {
  const thread_scope threads(num_threads);
  if (X.n_cols != L.n_cols) {
    throw error("apply_map: the map must have one column per column of X");
  }
  arma::mat Z(X.n_rows, L.n_rows);
  const Eigen::Map<const Eigen::MatrixXd> Xm(X.memptr(), X.n_rows, X.n_cols);
  const Eigen::Map<const Eigen::MatrixXd> Lm(L.memptr(), L.n_rows, L.n_cols);
  Eigen::Map<Eigen::MatrixXd> Zm(Z.memptr(), Z.n_rows, Z.n_cols);
  if (X.n_rows > 0 && L.n_rows > 0) {
    if (X.n_cols == 0) {
      Zm.setZero();
    } else {
      Zm.noalias() = Xm * Lm.transpose();
    }
  }
  return Z;
}

}  // namespace kmaha

#endif  // KMAHA_LINALG_HPP
