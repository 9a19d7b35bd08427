// kmaha core: k-nearest-neighbour classification by majority vote, and
// k-nearest-neighbour regression by a weighted mean.
//
// Tie rule (documented in ?knn_classify): neighbours are ordered by distance,
// equal distances by training index; when several classes share the largest
// vote count, the class of the nearest neighbour among them wins.  The
// regression takes the same k neighbours (the same order and ties).
#ifndef KMAHA_KNN_HPP
#define KMAHA_KNN_HPP

#include <cmath>
#include <limits>
#include <string>
#include "neighbors.hpp"
#include "parallel.hpp"

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

// The weights of the k neighbours in a regression: "uniform" (the mean),
// "distance" (1 / Euclidean distance; neighbours at distance 0, if any, share
// all the weight equally) or "kernel" (exp(-squared distance), MLKR's
// Gaussian kernel: with k = all points, its Nadaraya-Watson prediction).
enum class knn_weights { uniform, distance, kernel };

inline knn_weights knn_weights_from(const std::string& s) {
  if (s == "uniform") return knn_weights::uniform;
  if (s == "distance") return knn_weights::distance;
  if (s == "kernel") return knn_weights::kernel;
  throw error("knn: weights must be \"uniform\", \"distance\" or \"kernel\"");
}

// The weighted mean of the responses of the neighbours idx (m x k, nearest
// first; no_neighbor slots skipped) of the query rows Q among the rows of X.
// Distances are recomputed from the coordinates (differences, so that
// duplicated points are at distance 0 exactly).  When the weights cannot be
// formed (all zero or not finite: distances that overflow), the plain mean.
inline arma::vec knn_weighted_mean(const arma::mat& X, const arma::vec& response,
                                   const arma::mat& Q, const arma::umat& idx,
                                   knn_weights w, const context& ctx) {
  const arma::uword m = idx.n_rows, k = idx.n_cols, d = X.n_cols;
  arma::vec out(m);
  const row_blocks blocks(m, 256);
  parallel_for(blocks.count(), ctx, [&](std::size_t bi, std::size_t) {
    std::vector<double> d2(k), wt(k);
    for (arma::uword q = blocks.start(bi); q < blocks.end(bi); ++q) {
      arma::uword used = 0;
      double plain = 0.0, dmin = std::numeric_limits<double>::infinity();
      for (arma::uword t = 0; t < k; ++t) {
        const arma::uword j = idx.at(q, t);
        if (j == no_neighbor) continue;
        double s = 0.0;
        for (arma::uword c = 0; c < d; ++c) {
          const double v = Q.at(q, c) - X.at(j, c);
          s += v * v;
        }
        d2[t] = s;
        dmin = std::min(dmin, s);
        plain += response[j];
        ++used;
      }
      if (used == 0) {
        out[q] = arma::datum::nan;
        continue;
      }
      plain /= static_cast<double>(used);
      if (w == knn_weights::uniform) {
        out[q] = plain;
        continue;
      }
      double sw = 0.0, swy = 0.0;
      for (arma::uword t = 0; t < k; ++t) {
        const arma::uword j = idx.at(q, t);
        if (j == no_neighbor) continue;
        double v;
        if (w == knn_weights::kernel) {
          v = std::exp(-(d2[t] - dmin));  // 1 for the nearest
        } else if (dmin == 0.0) {
          v = d2[t] == 0.0 ? 1.0 : 0.0;
        } else {
          v = 1.0 / std::sqrt(d2[t]);
        }
        sw += v;
        swy += v * response[j];
      }
      out[q] = (sw > 0.0 && std::isfinite(sw) && std::isfinite(swy)) ? swy / sw : plain;
    }
  });
  return out;
}

// k-NN regression of the query rows Q against the rows of X with responses
// `response`; `self`: Q is X, each point left out of its own neighbours.
inline arma::vec knn_regress(const arma::mat& X, const arma::vec& response,
                             const arma::mat& Q, arma::uword k, bool self,
                             knn_weights w, const context& ctx) {
  if (response.n_elem != X.n_rows)
    throw error("knn: one response per reference point is needed");
  const arma::umat idx = knn_search(X, Q, k, self, 512, ctx);
  return knn_weighted_mean(X, response, self ? X : Q, idx, w, ctx);
}

}  // namespace kmaha

#endif  // KMAHA_KNN_HPP
