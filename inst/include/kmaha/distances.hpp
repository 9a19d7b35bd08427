// kmaha core: squared Euclidean distances in blocks, the one loop behind the
// neighbour searches (neighbors.hpp, dne.hpp) and the alignment statistics
// (alignment.hpp).
//
// For training rows X (n x D) and query rows Q (m x D), the queries are
// taken `block` at a time; each block's distances to all training rows,
//   D2(j, q) = ||x_j||^2 + ||q||^2 - 2 <x_j, q>   (clamped at 0),
// form an n x b matrix with one contiguous column per query, computed through
// one product (kmaha::gemm, in the context's instruction set), so memory
// stays O(n * block) rather than O(n * m).  Blocks run on the context's
// threads (parallel.hpp); its interrupt callback is polled between them.
#ifndef KMAHA_DISTANCES_HPP
#define KMAHA_DISTANCES_HPP

#include <algorithm>
#include "common.hpp"
#include "gemm.hpp"
#include "parallel.hpp"

namespace kmaha {

// Calls visit(q0, q1, P) for consecutive query blocks [q0, q1), where P is
// the n x (q1 - q0) matrix of inner products <x_j, q> between the training
// rows and queries q0..q1-1 (the visitor may overwrite it).  Q may be X.
// With ctx.threads > 1 the blocks run in parallel (parallel.hpp): the
// visitor must then be safe to call from several threads at once for
// different blocks (each block's results go to its own rows, scratch per
// thread); the blocks do not depend on the thread count.
template <class Visit>
inline void for_each_product_block(const arma::mat& X, const arma::mat& Q,
                                   arma::uword block, Visit&& visit,
                                   const context& ctx) {
  const arma::uword n = X.n_rows, m = Q.n_rows, D = X.n_cols;
  if (Q.n_cols != D) throw error("distances: X and Q differ in columns");
  if (block == 0) block = 1;
  struct scratch {
    arma::mat P;
    gemm_buffers buf;
  };
  per_thread<scratch> work(ctx.threads);
  const row_blocks blocks(m, block);
  parallel_for(blocks.count(), ctx, [&](std::size_t bi, std::size_t) {
    scratch& w = work.local();
    const arma::uword q0 = blocks.start(bi), q1 = blocks.end(bi), b = q1 - q0;
    w.P.set_size(n, b);
    gemm(ctx.kernels, static_cast<std::ptrdiff_t>(n), static_cast<std::ptrdiff_t>(b),
         static_cast<std::ptrdiff_t>(D), cview::col_major(X.memptr(), n),
         cview{Q.memptr() + q0, static_cast<std::ptrdiff_t>(m), 1}, w.P.memptr(),
         1, static_cast<std::ptrdiff_t>(n), false, w.buf);
    visit(q0, q1, w.P);
  });
}

// Turns a block of inner products P (n x b, training rows x queries) into
// squared distances, clamped at 0; xx: squared norms of the training rows,
// qq: those of the block's queries.
inline void products_to_sq_dist(arma::mat& P, const arma::vec& xx,
                                const double* qq) {
  for (arma::uword c = 0; c < P.n_cols; ++c) {
    double* col = P.colptr(c);
    const double qc = qq[c];
    for (arma::uword j = 0; j < P.n_rows; ++j) {
      const double v = xx[j] + qc - 2.0 * col[j];
      col[j] = v < 0.0 ? 0.0 : v;
    }
  }
}

// Calls visit(q0, q1, D2) for consecutive query blocks, where D2 is the
// n x (q1 - q0) matrix of squared distances from the training rows to
// queries q0..q1-1.  Q may be X.  Points of extreme magnitude are rescaled
// first (detail::distance_scale() in common.hpp).
template <class Visit>
inline void for_each_distance_block(const arma::mat& X, const arma::mat& Q,
                                    arma::uword block, Visit&& visit,
                                    const context& ctx) {
  const bool same = &Q == &X;
  const double c = detail::distance_scale(std::max(
      detail::max_abs_entry(X), same ? 0.0 : detail::max_abs_entry(Q)));
  arma::mat Xs, Qs;
  const arma::mat* Xp = &X;
  const arma::mat* Qp = same ? &X : &Q;
  if (c != 1.0) {
    Xs = X / c;
    Xp = &Xs;
    if (same) {
      Qp = &Xs;
    } else {
      Qs = Q / c;
      Qp = &Qs;
    }
  }
  const arma::vec xx = arma::sum(arma::square(*Xp), 1);
  const arma::vec qq = same ? xx : arma::vec(arma::sum(arma::square(*Qp), 1));
  for_each_product_block(
      *Xp, *Qp, block,
      [&](arma::uword q0, arma::uword q1, arma::mat& P) {
        products_to_sq_dist(P, xx, qq.memptr() + q0);
        detail::unscale_sq_dist(P, c);
        visit(q0, q1, static_cast<const arma::mat&>(P));
      },
      ctx);
}

}  // namespace kmaha

#endif  // KMAHA_DISTANCES_HPP
