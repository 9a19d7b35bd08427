// kmaha core: nearest-neighbour searches, the one place the learners and
// kNN find neighbours: knn_search() (kNN classification), class_neighbors()
// (LMNN's target neighbours, target_neighbors() in R) and
// same_other_neighbors() with its Gram-matrix version (DNE's graph, and the
// targets of the kernel-trick learners).
//
// All searches work on blocks of query rows, so memory stays at
// O(block * n) rather than O(n^2).  Ties in distance are broken by the lower
// training index (a stable, documented and deterministic rule).
#ifndef KMAHA_NEIGHBORS_HPP
#define KMAHA_NEIGHBORS_HPP

#include <algorithm>
#include <numeric>
#include <vector>
#include "common.hpp"
#include "distances.hpp"

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
// Per-thread scratch of the searches.
struct search_scratch {
  std::vector<arma::uword> cand, row;
};

// Neighbour order does not change when every point is divided by the same
// power of two (which is exact), but squared distances do not survive
// extreme magnitudes: for_each_distance_block() rescales the points, then
// multiplies the distances back, and distances between points below ~1e-154
// underflow to 0 there (every point equally near) and between points above
// ~1e154 overflow to inf.  The searches below therefore rank points divided
// by this factor: the power of two just above their largest |entry| when that
// lies outside [2^-100, 2^100], else 1 (no copy).
inline double rank_scale(const arma::mat& X, const arma::mat* Q = nullptr) {
  double m = max_abs_entry(X);
  if (Q) m = std::max(m, max_abs_entry(*Q));
  if (!(m > 0.0) || !std::isfinite(m) ||
      (m <= std::ldexp(1.0, 100) && m >= std::ldexp(1.0, -100)))
    return 1.0;
  int e = 0;
  std::frexp(m, &e);
  return std::ldexp(1.0, e);
}
}  // namespace detail

// k nearest training rows (of X, n x D) for each query row (of Q, m x D).
// If `self` is true, Q is X itself and each point is excluded from its own
// neighbour list.  Returns an m x k matrix of 0-based indices.  Blocks of
// `block` queries run on the context's
// threads; each query is handled by one thread, so the result does not
// depend on the thread count.
inline arma::umat knn_search(const arma::mat& X, const arma::mat& Q,
                             arma::uword k, bool self, arma::uword block,
                             const context& ctx) {
  const arma::uword n = X.n_rows, m = Q.n_rows;
  if (k > (self ? n - 1 : n)) throw error("knn_search: k exceeds training size");
  const double c = detail::rank_scale(X, self ? nullptr : &Q);
  if (c != 1.0) {  // rank on rescaled points (detail::rank_scale())
    const arma::mat Xs = X / c;
    return self ? knn_search(Xs, Xs, k, true, block, ctx)
                : knn_search(Xs, arma::mat(Q / c), k, false, block, ctx);
  }
  arma::umat idx(m, k);
  per_thread<detail::search_scratch> work(ctx.threads);
  for_each_distance_block(
      X, self ? X : Q, block,
      [&](arma::uword q0, arma::uword q1, const arma::mat& D2) {
        detail::search_scratch& w = work.local();
        std::vector<arma::uword>& scratch = w.cand;
        std::vector<arma::uword>& row = w.row;
        row.resize(k);
        for (arma::uword qi = q0; qi < q1; ++qi) {
          const double* d = D2.colptr(qi - q0);
          detail::k_smallest(d, n, k,
                             [&](arma::uword j) { return !self || j != qi; },
                             scratch, row.data());
          for (arma::uword t = 0; t < k; ++t) idx(qi, t) = row[t];
        }
      },
      ctx);
  return idx;
}

// For each point, its k nearest points of the same class (same = true) or of
// any other class (same = false), excluding itself.  Classes too small to
// supply k neighbours leave trailing no_neighbor entries.  Returns n x k.
// Blocks of `block` queries run on the context's threads.
inline arma::umat class_neighbors(const arma::mat& X, const arma::uvec& y,
                                  arma::uword k, bool same, arma::uword block,
                                  const context& ctx) {
  const arma::uword n = X.n_rows;
  if (y.n_elem != n) throw error("class_neighbors: labels length mismatch");
  const double c = detail::rank_scale(X);
  if (c != 1.0)  // rank on rescaled points (detail::rank_scale())
    return class_neighbors(arma::mat(X / c), y, k, same, block, ctx);
  arma::umat idx(n, k);
  per_thread<detail::search_scratch> work(ctx.threads);
  for_each_distance_block(
      X, X, block,
      [&](arma::uword q0, arma::uword q1, const arma::mat& D2) {
        detail::search_scratch& w = work.local();
        std::vector<arma::uword>& scratch = w.cand;
        std::vector<arma::uword>& row = w.row;
        row.resize(k);
        for (arma::uword qi = q0; qi < q1; ++qi) {
          const arma::uword cq = y[qi];
          detail::k_smallest(D2.colptr(qi - q0), n, k,
                             [&](arma::uword j) {
                               return j != qi && ((y[j] == cq) == same);
                             },
                             scratch, row.data());
          for (arma::uword t = 0; t < k; ++t) idx(qi, t) = row[t];
        }
      },
      ctx);
  return idx;
}

namespace detail {
struct nb_entry {
  double d;
  arma::uword j;
};

// Offer candidate (d, j) to a list of at most k entries sorted by distance.
// Candidates arrive in increasing j, so an equal distance never displaces an
// entry already present: ties go to the lower index, as in k_smallest().
inline void offer(nb_entry* list, arma::uword& cnt, arma::uword k, double d,
                  arma::uword j) {
  if (cnt == k && !(d < list[k - 1].d)) return;
  arma::uword p = cnt < k ? cnt++ : k - 1;
  while (p > 0 && list[p - 1].d > d) {
    list[p] = list[p - 1];
    --p;
  }
  list[p] = nb_entry{d, j};
}

// Both neighbour lists of point qi in one scan of its squared distances
// d[j] to every point j.
inline void select_both(const double* d, arma::uword qi, const arma::uvec& y,
                        arma::uword k, std::vector<nb_entry>& bs,
                        std::vector<nb_entry>& bo, arma::umat& same,
                        arma::umat& other) {
  const arma::uword n = y.n_elem, cq = y[qi];
  // lists[1]: same class, lists[0]: other classes.  Indexing by the class
  // test instead of branching on it avoids a mispredicted branch per pair.
  nb_entry* lists[2] = {bo.data(), bs.data()};
  arma::uword cnt[2] = {0, 0};
  const arma::uword* yp = y.memptr();
  for (arma::uword j = 0; j < n; ++j) {
    if (j == qi) continue;
    const unsigned s = yp[j] == cq ? 1u : 0u;
    offer(lists[s], cnt[s], k, d[j], j);
  }
  for (arma::uword t = 0; t < k; ++t) {
    same(qi, t) = t < cnt[1] ? bs[t].j : no_neighbor;
    other(qi, t) = t < cnt[0] ? bo[t].j : no_neighbor;
  }
}
}  // namespace detail

// Same-class and other-class k nearest neighbours of every row of X
// (Euclidean distance) in one pass over blocks of distances
// (distances.hpp): DNE's graph, and the target neighbours of the learners
// that borrow it.  Ties are broken by the lower index, as in
// class_neighbors().  Blocks of `block` points run on the context's
// threads; each point's lists are built by one thread, so they do not depend
// on the thread count.
inline void same_other_neighbors(const arma::mat& X, const arma::uvec& y,
                                 arma::uword k, arma::umat& same,
                                 arma::umat& other, arma::uword block,
                                 const context& ctx) {
  const arma::uword n = X.n_rows;
  if (y.n_elem != n) throw error("dne neighbours: labels length mismatch");
  const double c = detail::rank_scale(X);
  if (c != 1.0) {  // rank on rescaled points (detail::rank_scale())
    same_other_neighbors(arma::mat(X / c), y, k, same, other, block, ctx);
    return;
  }
  same.set_size(n, k);
  other.set_size(n, k);
  if (k == 0 || n == 0) return;
  struct lists {
    std::vector<detail::nb_entry> bs, bo;
  };
  per_thread<lists> work(ctx.threads);
  for_each_distance_block(
      X, X, block,
      [&](arma::uword q0, arma::uword q1, const arma::mat& D2) {
        lists& w = work.local();
        w.bs.resize(k);
        w.bo.resize(k);
        for (arma::uword q = q0; q < q1; ++q)
          detail::select_both(D2.colptr(q - q0), q, y, k, w.bs, w.bo, same, other);
      },
      ctx);
}

// The same lists by feature-space distance from a Gram matrix K:
// ||phi_i - phi_j||^2 = K_ii + K_jj - 2 K_ij (the kernel-trick learners'
// targets).  Serial (O(n^2) reads of K).
inline void same_other_neighbors_gram(const arma::mat& K, const arma::uvec& y,
                                      arma::uword k, arma::umat& same,
                                      arma::umat& other, const context& ctx) {
  const arma::uword n = K.n_rows;
  if (K.n_cols != n) throw error("dne neighbours: Gram matrix not square");
  if (y.n_elem != n) throw error("dne neighbours: labels length mismatch");
  same.set_size(n, k);
  other.set_size(n, k);
  if (k == 0 || n == 0) return;
  const arma::vec kd = K.diag();
  std::vector<double> d(n);
  std::vector<detail::nb_entry> bs(k), bo(k);
  for (arma::uword q = 0; q < n; ++q) {
    const double* c = K.colptr(q);
    for (arma::uword j = 0; j < n; ++j) d[j] = kd[j] + kd[q] - 2.0 * c[j];
    detail::select_both(d.data(), q, y, k, bs, bo, same, other);
    if ((q & 255u) == 255u) check_interrupt(ctx.interrupt);
  }
}

}  // namespace kmaha

#endif  // KMAHA_NEIGHBORS_HPP
