// kmaha core: nearest-neighbour searches.
//
// All searches work on blocks of query rows, so memory stays at
// O(block * n) rather than O(n^2); the blocks run in parallel.  Ties in distance are broken by the lower
// training index (a stable, documented and deterministic rule).
#ifndef KMAHA_NEIGHBORS_HPP
#define KMAHA_NEIGHBORS_HPP

#include <algorithm>
#include <numeric>
#include <vector>
#include <Eigen/Dense>
#include "common.hpp"
#include "parallel.hpp"

namespace kmaha {

// Sentinel for "no neighbour" (e.g. a class with fewer than k + 1 members).
constexpr arma::uword no_neighbor = static_cast<arma::uword>(-1);

namespace detail {
// Indices of the k smallest entries of d among candidates accepted by `keep`,
// ordered by (distance, index).  Unfilled slots hold no_neighbor.
template <class Keep>
inline void k_smallest(const double* d, arma::uword n, arma::uword k,
                       Keep keep, std::vector<arma::uword>& scratch,
                       arma::uword* out) {
  scratch.clear();
  for (arma::uword j = 0; j < n; ++j)
    if (keep(j)) scratch.push_back(j);
  auto less = [d](arma::uword a, arma::uword b) {
    return d[a] < d[b] || (d[a] == d[b] && a < b);
  };
  const arma::uword m = std::min<arma::uword>(k, scratch.size());
  std::partial_sort(scratch.begin(), scratch.begin() + m, scratch.end(), less);
  for (arma::uword t = 0; t < k; ++t) out[t] = t < m ? scratch[t] : no_neighbor;
}
}  // namespace detail

// Query rows per block when `block` is 0: about 2^21 doubles of distances
// per block (16 MiB), between 16 and 512 rows.
inline arma::uword neighbor_block(arma::uword n, arma::uword block) {
  if (block > 0) return block;
  const double target = 2097152.0 / static_cast<double>(std::max<arma::uword>(n, 1));
  return static_cast<arma::uword>(std::max(16.0, std::min(512.0, target)));
}

namespace detail {
// Squared distances (up to the constant ||q||^2 per column, which the
// selection does not need unless `with_q`) between the training rows X and
// the query rows [s, e) of Q, one contiguous column of n entries per query:
// ||x||^2 - 2 x'q (+ ||q||^2).  Eigen's blocked product (single-threaded
// here: blocks run in parallel) is independent of the BLAS R links.
inline void block_sq_dist(const arma::mat& X, const arma::vec& xx,
                          const arma::mat& Q, arma::uword s, arma::uword e,
                          arma::mat& Bt) {
  const arma::uword n = X.n_rows;
  Bt.set_size(n, e - s);
  {
    const Eigen::Map<const Eigen::MatrixXd> Xe(X.memptr(), n, X.n_cols);
    const Eigen::Map<const Eigen::MatrixXd> Qe(Q.memptr(), Q.n_rows, Q.n_cols);
    Eigen::Map<Eigen::MatrixXd> Be(Bt.memptr(), n, e - s);
    Be.noalias() = Xe * Qe.middleRows(s, e - s).transpose();
  }
  const arma::vec qq = arma::sum(arma::square(Q.rows(s, e - 1)), 1);
  Bt *= -2.0;
  Bt.each_col() += xx;
  Bt.each_row() += qq.t();
}

struct search_scratch {
  arma::mat Bt;
  std::vector<arma::uword> cand, row;
};

// The k nearest rows of X for every row of Q among the candidates j with
// keep(qi, j), by blocks of query rows on num_threads threads (each query is
// handled by one thread, so the result does not depend on the thread
// count); store(qi, row, d) receives the ordered indices and the squared
// distances of query qi.  Memory is O(block * n) per thread.
template <class Keep, class Store>
inline void blocked_search(const arma::mat& X, const arma::mat& Q,
                           arma::uword k, arma::uword block, Keep keep,
                           Store store, const interrupt_fn& interrupt,
                           int num_threads) {
  const arma::uword n = X.n_rows;
  const arma::vec xx = arma::sum(arma::square(X), 1);
  const row_blocks blocks(Q.n_rows, neighbor_block(n, block));
  per_thread<search_scratch> scratch(num_threads);
  parallel_for(blocks.count(), num_threads, [&](std::size_t b, std::size_t) {
    search_scratch& w = scratch.local();
    w.row.resize(k);
    const arma::uword s = blocks.start(b), e = blocks.end(b);
    block_sq_dist(X, xx, Q, s, e, w.Bt);
    for (arma::uword q = 0; q < e - s; ++q) {
      const arma::uword qi = s + q;
      const double* d = w.Bt.colptr(q);
      k_smallest(d, n, k, [&](arma::uword j) { return keep(qi, j); }, w.cand,
                 w.row.data());
      store(qi, w.row.data(), d);
    }
  }, interrupt);
}
}  // namespace detail

// k nearest training rows (of X, n x D) for each query row (of Q, m x D).
// If `self` is true, Q is X itself and each point is excluded from its own
// neighbour list.  Returns an m x k matrix of 0-based indices, and optionally
// the matching squared distances.  Blocks of query rows run in parallel.
inline arma::umat knn_search(const arma::mat& X, const arma::mat& Q,
                             arma::uword k, bool self,
                             arma::mat* dist_out = nullptr,
                             arma::uword block = 0,
                             const interrupt_fn& interrupt = no_interrupt,
                             int num_threads = 1) {
  const arma::uword n = X.n_rows, m = Q.n_rows;
  if (k > (self ? n - 1 : n)) throw error("knn_search: k exceeds training size");
  if (Q.n_cols != X.n_cols) throw error("knn_search: X and Q differ in columns");
  arma::umat idx(m, k);
  if (dist_out) dist_out->set_size(m, k);
  detail::blocked_search(
      X, Q, k, block,
      [&](arma::uword qi, arma::uword j) { return !self || j != qi; },
      [&](arma::uword qi, const arma::uword* row, const double* d) {
        for (arma::uword t = 0; t < k; ++t) {
          idx(qi, t) = row[t];
          if (dist_out) (*dist_out)(qi, t) = std::max(0.0, d[row[t]]);
        }
      },
      interrupt, num_threads);
  return idx;
}

// For each point, its k nearest points of the same class (same = true) or of
// any other class (same = false), excluding itself.  Classes too small to
// supply k neighbours leave trailing no_neighbor entries.  Returns n x k.
// Threads and memory as in knn_search().
inline arma::umat class_neighbors(const arma::mat& X, const arma::uvec& y,
                                  arma::uword k, bool same,
                                  arma::uword block = 0,
                                  const interrupt_fn& interrupt = no_interrupt,
                                  int num_threads = 1) {
  const arma::uword n = X.n_rows;
  if (y.n_elem != n) throw error("class_neighbors: labels length mismatch");
  arma::umat idx(n, k);
  detail::blocked_search(
      X, X, k, block,
      [&](arma::uword qi, arma::uword j) {
        return j != qi && ((y[j] == y[qi]) == same);
      },
      [&](arma::uword qi, const arma::uword* row, const double*) {
        for (arma::uword t = 0; t < k; ++t) idx(qi, t) = row[t];
      },
      interrupt, num_threads);
  return idx;
}

}  // namespace kmaha

#endif  // KMAHA_NEIGHBORS_HPP
