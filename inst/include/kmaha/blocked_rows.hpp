// kmaha core: the blocked, multi-threaded evaluation shared by the
// objectives in which row i depends on row i of the squared distances
// between the mapped points only: NCA's softmax (nca.hpp) and MLKR's
// leave-one-out kernel regression (mlkr.hpp).
//
// For a map A (d x D) and inputs X (n x D): Z = X A' (divided by a power of
// two c when its squared row norms could overflow or underflow:
// rescale_rows()), and the rows are processed in blocks of b
// rows.  One product Z_I Z' gives the block of inner products; the caller's
// row function turns row i of it into row i's term of the objective and,
// for a gradient, into the weights W_ij = df/dd_ij of that row.  The terms
// are summed, and the gradient of the sum is
//
//   df/dA = 2 (L Z)' X,   L Z = deg .* Z - W Z - W' Z,
//
// deg = colsum(W), plus rowsum(W) when asked (the rows of W sum to zero in
// exact arithmetic; MLKR keeps their computed sums, NCA does not).  W Z is
// produced block by block (rows of the block), W' Z accumulated per slot of
// dealt_for() (parallel.hpp), so only b x n doubles per thread are live: no
// n x n matrix and never a per-pair outer product.
//
// The blocks are dealt to accumulators (slots) in a fixed order, so the sums
// depend on the thread count only and a run is reproducible: one slot on one
// thread (the plain sums in block order), four per thread otherwise, which
// the threads take up as they come free.  Blocks are handed out in waves of
// about chunk_flops of work; the context's interrupt callback is polled
// between waves and after the products outside the block passes, on the
// calling thread only (common.hpp).  Every product goes through kmaha::gemm
// (gemm.hpp) in the instruction set of the context.
#ifndef KMAHA_BLOCKED_ROWS_HPP
#define KMAHA_BLOCKED_ROWS_HPP

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#include "gemm.hpp"
#include "parallel.hpp"

namespace kmaha {

// Divides Z by the power of two c nearest above max |Z| when the squared
// norms of its rows could overflow (or underflow), and returns c (1 when Z
// is left alone).  Returns infinity when Z has non-finite entries.
inline double rescale_rows(arma::mat& Z) {
  const double zmax = Z.n_elem ? arma::abs(Z).max() : 0.0;
  if (!std::isfinite(zmax)) return std::numeric_limits<double>::infinity();
  if (!(zmax > 0.0) || (zmax <= std::ldexp(1.0, 480) && zmax >= std::ldexp(1.0, -480)))
    return 1.0;
  int e = 0;
  std::frexp(zmax, &e);
  e = std::min(e, 1023);  // c itself must be finite
  Z *= std::ldexp(1.0, -e);
  return std::ldexp(1.0, e);
}

class blocked_rows {
 public:
  // n: the number of rows; block = 0 picks the block size automatically.
  // ctx: threads, instruction set and interrupt callback (a copy is kept).
  blocked_rows(arma::uword n, arma::uword block, const context& ctx)
      : nt_(usable_threads(ctx.threads)), isa_(ctx.kernels), ctx_(ctx) {
    if (block == 0) {
      // Aim at ~1 MiB per thread for the b x n work block, b in [16, 256]
      // (measured for NCA on satellite, d = 36: b = 32 beat 16 and 64 at
      // n = 4000).
      const double target = 131072.0 / static_cast<double>(n);
      block = static_cast<arma::uword>(std::max(16.0, std::min(256.0, target)));
    }
    block_ = std::min<arma::uword>(block, n);
  }

  int threads() const { return nt_; }

  // The sum over the rows i of row(t, i, grad, c, nz) at the map A, with X
  // the inputs (n x D) and A d x D (both checked by the caller).  row gets t,
  // the n inner products z_i . z_j of the (rescaled) mapped points, nz their
  // squared norms and the factor c (the inner products are those of Z / c),
  // and returns row i's term; with grad it overwrites t with the weights
  // W_ij.  With grad non-null the gradient of the sum, 2 (L Z)' X (see the
  // file comment; row_sums: deg includes the row sums of W), goes to *grad.
  // *scale receives c; when X A' overflows c is infinite, the sum returned
  // is +infinity and *grad zero.
  template <class RowFn>
  double evaluate(const arma::mat& X, const arma::mat& A, arma::mat* grad,
                  bool row_sums, RowFn&& row, double* scale) const {
    const arma::uword n = X.n_rows, D = X.n_cols, d = A.n_rows;
    const bool want_grad = grad != nullptr;
    const std::ptrdiff_t N = static_cast<std::ptrdiff_t>(n);
    const std::ptrdiff_t Dd = static_cast<std::ptrdiff_t>(D);
    const std::ptrdiff_t dd = static_cast<std::ptrdiff_t>(d);
    const std::ptrdiff_t b = static_cast<std::ptrdiff_t>(block_);
    const std::ptrdiff_t nblocks = (N + b - 1) / b;
    // Threads pay off only when a block pass has enough work; the flop count
    // of one evaluation is about 6 n^2 d.
    const double flops = 6.0 * static_cast<double>(n) * static_cast<double>(n) *
                         static_cast<double>(d);
    const int nt = flops < min_parallel_flops
                       ? 1
                       : static_cast<int>(std::min<std::ptrdiff_t>(nt_, nblocks));

    // Buffers persist between evaluations (an optimiser calls evaluate() with
    // the same shapes over and over): no allocation, page faults or zeroing
    // of fresh memory per call.
    workspace& w = ws_;
    // Z = X A' (n x d) and its transpose Zt (d x n: the rows of Z, each
    // contiguous), and the squared row norms.
    w.Z.set_size(n, d);
    gemm(isa_, N, dd, Dd, cview::col_major(X.memptr(), N),
         cview::transposed(A.memptr(), dd), w.Z.memptr(), 1, N, false, w.buf);
    // (the products outside the block passes are polled after: n x D x d
    // multiply-adds each, a large share of the work when D is about n, as
    // for kernel rows)
    check_interrupt(ctx_.interrupt);
    // For finite inputs the terms stay finite: when the entries of Z are
    // huge (or tiny) the distances are computed on Z / c, c a power of two,
    // and the row function scales them back.  Only when X A' itself
    // overflows is the sum +infinity.
    const double c = rescale_rows(w.Z);
    *scale = c;
    if (!std::isfinite(c)) {
      if (want_grad) grad->zeros(d, D);
      return std::numeric_limits<double>::infinity();
    }
    w.Zt = w.Z.t();
    w.nz = arma::sum(arma::square(w.Z), 1);
    if (row_sums) w.rowsum.set_size(n);
    const double* Z = w.Z.memptr();
    const double* Zt = w.Zt.memptr();
    const double* nz = w.nz.memptr();
    double* rs = w.rowsum.memptr();
    if (want_grad) w.WZ.set_size(n, d);
    double* WZ = w.WZ.memptr();
    const std::size_t slots = nt <= 1 ? 1 : std::min<std::size_t>(
        4 * static_cast<std::size_t>(nt), static_cast<std::size_t>(nblocks));
    if (w.sums.size() < slots) w.sums.resize(slots);
    for (slot_sums& ts : w.sums) ts.used = false;
    per_thread<block_scratch>& scratch = w.scratch(nt);
    const double block_flops = flops / static_cast<double>(nblocks);
    const std::ptrdiff_t chunk = std::max<std::ptrdiff_t>(
        static_cast<std::ptrdiff_t>(slots),
        static_cast<std::ptrdiff_t>(chunk_flops / std::max(block_flops, 1.0)));
    dealt_for(
        static_cast<std::size_t>(nblocks), slots, ctx_.with_threads(nt),
        [&](std::size_t task, std::size_t slot) {
          slot_sums& ts = w.sums[slot];
          block_scratch& bs = scratch.local();
          if (!ts.used) {
            ts.used = true;
            ts.f = 0.0;
            if (want_grad) {
              ts.acc.zeros(n, d);
              ts.col.zeros(n);
            }
          }
          bs.T.resize(static_cast<std::size_t>(b * N));
          const std::ptrdiff_t i0 = static_cast<std::ptrdiff_t>(task) * b;
          const std::ptrdiff_t len = std::min(b, N - i0);
          double* T = bs.T.data();
          // T = Z_I Z' (len x n, row-major).
          gemm(isa_, len, N, dd, cview{Zt + i0 * dd, dd, 1}, cview{Z, N, 1}, T, N, 1,
               false, bs.buf);
          double fsum = 0.0;
          for (std::ptrdiff_t r = 0; r < len; ++r)
            fsum += row(T + r * N, static_cast<std::size_t>(i0 + r), want_grad, c, nz);
          ts.f += fsum;
          if (!want_grad) return;
          // Rows I of W Z, and W_I' Z_I accumulated; T now holds W_I.
          gemm(isa_, len, dd, N, cview{T, N, 1}, cview{Zt, dd, 1}, WZ + i0, 1, N,
               false, bs.buf);
          gemm(isa_, N, dd, len, cview{T, 1, N}, cview{Zt + i0 * dd, dd, 1},
               ts.acc.memptr(), 1, N, true, bs.buf);
          double* col = ts.col.memptr();
          for (std::ptrdiff_t r = 0; r < len; ++r) {
            const double* tr = T + r * N;
            if (row_sums) {
              double rsum = 0.0;
              for (std::ptrdiff_t j = 0; j < N; ++j) {
                col[j] += tr[j];
                rsum += tr[j];
              }
              rs[i0 + r] = rsum;
            } else {
              for (std::ptrdiff_t j = 0; j < N; ++j) col[j] += tr[j];
            }
          }
        },
        static_cast<std::size_t>(chunk));

    double f = 0.0;
    for (const slot_sums& ts : w.sums)
      if (ts.used) f += ts.f;
    if (!want_grad) return f;
    arma::vec deg = row_sums ? arma::vec(w.rowsum) : arma::vec(n, arma::fill::zeros);
    for (const slot_sums& ts : w.sums) {
      if (!ts.used) continue;  // a slot that got no block
      w.WZ += ts.acc;
      deg += ts.col;
    }
    // L Z = deg .* Z - (W Z + W' Z), then the gradient 2 (L Z)' X (Z here
    // is Z / c).
    w.WZ = w.Z.each_col() % deg - w.WZ;
    grad->set_size(d, D);
    gemm(isa_, dd, Dd, N, cview::transposed(w.WZ.memptr(), N),
         cview::col_major(X.memptr(), N), grad->memptr(), 1, dd, false, w.buf);
    check_interrupt(ctx_.interrupt);
    *grad *= 2.0;
    if (c != 1.0) *grad *= c;
    return f;
  }

  // Below this many flops per evaluation one thread is used; waves of about
  // chunk_flops separate the interrupt polls.
  double min_parallel_flops = 2.0e7;
  double chunk_flops = 2.0e8;

 private:
  int nt_;
  isa isa_;
  context ctx_;
  arma::uword block_ = 64;
  // Scratch memory of evaluate(), kept between calls.  One object must
  // therefore not be evaluated from several threads at once.  One
  // slot_sums per slot of dealt_for(), one block_scratch per thread.
  struct slot_sums {
    arma::mat acc;          // n x d: sum of W_I' Z_I
    arma::vec col;          // n: column sums of W
    double f = 0.0;
    bool used = false;
  };
  struct block_scratch {
    std::vector<double> T;  // b x n block, row-major
    gemm_buffers buf;
  };
  struct workspace {
    arma::mat Z, Zt, WZ;
    arma::vec nz, rowsum;
    gemm_buffers buf;
    std::vector<slot_sums> sums;
    std::unique_ptr<per_thread<block_scratch>> blocks;
    int block_threads = 0;
    per_thread<block_scratch>& scratch(int nt) {
      if (!blocks || block_threads != nt) {
        blocks.reset(new per_thread<block_scratch>(nt));
        block_threads = nt;
      }
      return *blocks;
    }
  };
  mutable workspace ws_;
};

}  // namespace kmaha

#endif  // KMAHA_BLOCKED_ROWS_HPP
