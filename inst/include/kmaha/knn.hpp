// kmaha core: k-nearest-neighbour classification by majority vote.
//
// Tie rule (documented in ?knn_classify): neighbours are ordered by distance,
// equal distances by training index; when several classes share the largest
// vote count, the class of the nearest neighbour among them wins.
#ifndef KMAHA_KNN_HPP
#define KMAHA_KNN_HPP

#include "neighbors.hpp"

namespace kmaha {

struct knn_result {
  arma::uvec cls;   // predicted class (0-based) per query
  arma::mat prob;   // m x p vote fractions
};

// idx: m x k neighbour indices (ordered nearest first); y: training labels
// in 0..p-1.
inline knn_result knn_vote(const arma::umat& idx, const arma::uvec& y,
                           arma::uword p) {
  const arma::uword m = idx.n_rows, k = idx.n_cols;
  knn_result r;
  r.cls.set_size(m);
  r.prob.zeros(m, p);
  arma::uvec votes(p);
  for (arma::uword q = 0; q < m; ++q) {
    votes.zeros();
    arma::uword used = 0;
    for (arma::uword t = 0; t < k; ++t) {
      if (idx(q, t) == no_neighbor) continue;
      ++votes[y[idx(q, t)]];
      ++used;
    }
    const arma::uword best = votes.max();
    arma::uword winner = 0;
    for (arma::uword t = 0; t < k; ++t) {  // nearest among the tied classes
      if (idx(q, t) == no_neighbor) continue;
      const arma::uword c = y[idx(q, t)];
      if (votes[c] == best) { winner = c; break; }
    }
    r.cls[q] = winner;
    if (used > 0)
      for (arma::uword c = 0; c < p; ++c)
        r.prob(q, c) = static_cast<double>(votes[c]) / used;
  }
  return r;
}

inline knn_result knn_classify(const arma::mat& X, const arma::uvec& y,
                               arma::uword p, const arma::mat& Q, arma::uword k,
                               bool self, const context& ctx) {
  const arma::umat idx = knn_search(X, Q, k, self, 512, ctx);
  return knn_vote(idx, y, p);
}

}  // namespace kmaha

#endif  // KMAHA_KNN_HPP
