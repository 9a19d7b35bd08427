// kmaha core, LMNN: impostors.  The blocked all-pairs screen of pairs
// (i, l) of different classes that lie within i's margin, the active set of
// impostor pairs it collects (refreshed by the solvers), and the union of
// two sets used by the solvers' refresh safeguard.
//
// Impostor pairs (i, l) (y_l != y_i) are kept, not triples: each pair is
// combined with the k targets of i when the objective is evaluated.  No n x n
// matrix is ever stored: the search works on blocks of rows.
#ifndef KMAHA_LMNN_IMPOSTORS_HPP
#define KMAHA_LMNN_IMPOSTORS_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
#include "../parallel.hpp"
#include "problem.hpp"

namespace kmaha {
namespace lmnn {

// Visit every ordered pair (i, l), y_i != y_l, with ||z_i - z_l||^2 < thr[i],
// passing the squared distance recomputed from the difference.  Distances
// are screened in blocks of rows through one matrix product per block (the
// upper triangle only: each unordered pair is screened once).
struct pair_screen {
  const arma::mat& Zt;
  const arma::uvec& y;
  const arma::vec& thr;
  arma::rowvec zz;  // squared norms of the points
  double eps;       // screening tolerance for the rounding of the expansion
  arma::uword block;
  isa kernels;

  pair_screen(const arma::mat& Zt_, const arma::uvec& y_, const arma::vec& thr_,
              arma::uword block_, isa kernels_)
      : Zt(Zt_), y(y_), thr(thr_), zz(arma::sum(arma::square(Zt_), 0)),
        block(std::max<arma::uword>(1, block_)), kernels(kernels_) {
    eps = 1e-10 * std::max(1.0, zz.n_elem ? zz.max() : 0.0);
  }
  arma::uword blocks() const { return (Zt.n_cols + block - 1) / block; }

  // The pairs (a, b), a < b, with a in block q; B and buf are scratch.
  // recompute = false passes the expanded distance itself (rounding of
  // order 1e-16 ||z||^2; used when nearly every pair is visited anyway).
  template <class Visit>
  void scan(arma::uword q, std::vector<double>& B, gemm_buffers& buf,
            Visit&& visit, bool recompute = true) const {
    const arma::uword n = Zt.n_cols, s = q * block, e = std::min(n, s + block);
    B.resize((e - s) * (n - s));
    // inner products of the block's points with those from s on
    gemm(kernels, e - s, n - s, Zt.n_rows,
         cview::transposed(Zt.colptr(s), Zt.n_rows),
         cview::col_major(Zt.colptr(s), Zt.n_rows), B.data(), 1, e - s,
         false, buf);
    for (arma::uword c = 0; c < n - s; ++c) {
      const arma::uword b = s + c;
      const double* col = B.data() + c * (e - s);
      const arma::uword rmax = std::min(e, b) - s;  // rows a < b in the block
      const double tb = thr[b];
      const arma::uword yb = y[b];
      for (arma::uword r = 0; r < rmax; ++r) {
        const arma::uword a = s + r;
        if (y[a] == yb) continue;
        const double approx = zz[a] + zz[b] - 2.0 * col[r];
        const double ta = thr[a];
        if (approx >= ta + eps && approx >= tb + eps) continue;
        const double d = recompute ? col_dist2(Zt, a, b) : std::max(0.0, approx);
        if (d < ta) visit(a, b, d);
        if (d < tb) visit(b, a, d);
      }
    }
  }
};

// Every pair within the thresholds, block after block on the calling
// thread (interrupts polled between blocks).
template <class Visit>
inline void close_pairs(const arma::mat& Zt, const arma::uvec& y,
                        const arma::vec& thr, arma::uword block, Visit visit,
                        const interrupt_fn& interrupt, isa kernels,
                        bool recompute = true) {
  if (Zt.n_cols < 2) return;
  const pair_screen ps(Zt, y, thr, block, kernels);
  std::vector<double> B;
  gemm_buffers buf;
  for (arma::uword q = 0; q < ps.blocks(); ++q) {
    ps.scan(q, B, buf, visit, recompute);
    check_interrupt(interrupt);
  }
}

// Collect the impostor pairs within the (slackened) thresholds, keeping at
// most max_pairs of them (the count goes on; overflow is flagged).  Blocks of
// rows are shared among ctx.threads threads by the core's ordered reduction
// (kmaha/parallel.hpp): each block's pairs are collected in a buffer of its
// own and appended in block order on the calling thread, so the set does not
// depend on the threads, and at most one wave of blocks is held beyond the
// cap.
inline active_set find_impostors(const problem& P, const arma::mat& Zt,
                                 const arma::vec& thr, double slack,
                                 arma::uword block, std::size_t max_pairs,
                                 const context& ctx) {
  active_set A;
  if (Zt.n_cols < 2) return A;
  const arma::vec thr2 = thr * (1.0 + slack);
  const pair_screen ps(Zt, P.y, thr2, block, ctx.kernels);
  struct block_pairs {
    std::vector<std::uint32_t> i, l;
    std::vector<double> B;  // scratch of the screen
    gemm_buffers buf;
  };
  ordered_reduce<block_pairs>(
      ps.blocks(), ctx, [] { return block_pairs(); },
      [&](std::size_t q, block_pairs& bp) {
        bp.i.clear();
        bp.l.clear();
        ps.scan(q, bp.B, bp.buf, [&](arma::uword i, arma::uword l, double) {
          bp.i.push_back(static_cast<std::uint32_t>(i));
          bp.l.push_back(static_cast<std::uint32_t>(l));
        });
      },
      [&](block_pairs& bp) {
        A.found += bp.i.size();
        if (!A.overflow && A.found > max_pairs) {
          A.overflow = true;
          std::vector<std::uint32_t>().swap(A.i);
          std::vector<std::uint32_t>().swap(A.l);
        }
        if (!A.overflow) {
          A.i.insert(A.i.end(), bp.i.begin(), bp.i.end());
          A.l.insert(A.l.end(), bp.l.begin(), bp.l.end());
        }
      });
  return A;
}

// Full impostor search under the map Lc: target distances first (they set
// each point's margin threshold), then a blocked scan for violators.  Shared
// by the M and L solvers.
inline active_set refresh_impostors(const problem& P, const arma::mat& Lc,
                                    const options& o, const context& ctx) {
  arma::mat Zt;
  gemm_buffers buf;
  map_points(Lc, P.Xt, Zt, ctx.kernels, buf, &ctx.interrupt);
  arma::mat dt;
  arma::vec thr;
  target_distances(P, Zt, dt, thr);
  return find_impostors(P, Zt, thr, o.slack, o.block, o.max_pairs, ctx);
}

// a > b beyond rounding (used to compare objectives before and after a
// refresh of the active set).
inline bool relative_gt(double a, double b) {
  return a > b + 1e-12 * std::max(1.0, std::abs(b));
}

// Union of two impostor-pair sets (duplicates removed).
inline active_set merge_sets(const active_set& A, const active_set& B,
                             arma::uword n) {
  std::vector<std::uint64_t> key;
  key.reserve(A.size() + B.size());
  for (std::size_t p = 0; p < A.size(); ++p)
    key.push_back(static_cast<std::uint64_t>(A.i[p]) * n + A.l[p]);
  for (std::size_t p = 0; p < B.size(); ++p)
    key.push_back(static_cast<std::uint64_t>(B.i[p]) * n + B.l[p]);
  std::sort(key.begin(), key.end());
  key.erase(std::unique(key.begin(), key.end()), key.end());
  active_set U;
  U.i.reserve(key.size());
  U.l.reserve(key.size());
  for (const std::uint64_t q : key) {
    U.i.push_back(static_cast<std::uint32_t>(q / n));
    U.l.push_back(static_cast<std::uint32_t>(q % n));
  }
  U.found = U.size();
  return U;
}

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_IMPOSTORS_HPP
