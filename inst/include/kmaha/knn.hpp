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

// The classes voted by the ks[j] nearest of the neighbours idx (m x k,
// nearest first, k >= max(ks)) for every j: m x ks.n_elem, 0-based classes,
// each column what knn_vote() of the first ks[j] columns gives (the same
// tie rule), from one neighbour search for several k.
inline arma::umat knn_vote_ks(const arma::umat& idx, const arma::uvec& y,
                              arma::uword p, const arma::uvec& ks) {
  const arma::uword m = idx.n_rows;
  arma::umat out(m, ks.n_elem);
  for (arma::uword j = 0; j < ks.n_elem; ++j) {
    if (ks[j] < 1 || ks[j] > idx.n_cols)
      throw error("knn_vote_ks: every k must lie between 1 and the neighbours found");
    out.col(j) = knn_vote(idx.cols(0, ks[j] - 1), y, p).cls;
  }
  return out;
}

inline knn_result knn_classify(const arma::mat& X, const arma::uvec& y,
                               arma::uword p, const arma::mat& Q, arma::uword k,
                               bool self, const context& ctx) {
  const arma::umat idx = knn_search(X, Q, k, self, 512, ctx);
  return knn_vote(idx, y, p);
}

}  // namespace kmaha

#endif  // KMAHA_KNN_HPP
