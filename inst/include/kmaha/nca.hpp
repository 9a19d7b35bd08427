// kmaha core: the neighbourhood component analysis (NCA) objective.
//
// The paper's eq. (2), with the regulariser of its strong representer theorem:
//
//   f(A) = - sum_i sum_{j : y_j = y_i} p_ij  +  lambda * reg(A),
//   p_ij = exp(-||A x_i - A x_j||^2) / sum_{k != i} exp(-||A x_i - A x_k||^2),
//   p_ii = 0,
//
// where reg(A) = ||A||_F^2 (plain NCA) or trace(A R A') for a symmetric matrix
// R (kernel-trick NCA: R is the Gram matrix and A the coefficient matrix U).
//
// Evaluation.  With Z = X A' (n x d) and D2 the squared distances between the
// rows of Z, row i of the softmax only needs row i of D2.  The rows are
// processed in blocks of b rows: one product Z_I Z' gives the block of inner
// products, which is turned in place into distances, a numerically safe
// softmax (each row's smallest distance is subtracted before exponentiating,
// so the largest term is exp(0) = 1 and no finite input overflows or makes
// 0/0), and finally into the gradient weights
//
//   W_ij = df/dD2_ij = p_ij (1[y_j = y_i] - p_i),   p_i = sum_{j in c_i} p_ij.
//
// The rows of W sum to zero, so with S = W + W' the weighted Laplacian is
// L = diag(colsum(W)) - S and
//
//   df/dA = 2 (L Z)' X + lambda * dreg/dA,   L Z = colsum(W) .* Z - W Z - W' Z.
//
// W Z is produced block by block (rows of the block), W' Z is accumulated per
// thread (W_I' Z_I), so only b x n doubles per thread are ever live: no n x n
// matrix and never a per-pair outer product.  Rows are sorted by class once,
// which makes every "same class" set a contiguous column range.
//
// The blocked, multi-threaded pass over the rows is blocked_rows.hpp (shared
// with MLKR, mlkr.hpp); NCA supplies the softmax row and the regulariser.
// Every product goes through kmaha::gemm (gemm.hpp) on Armadillo memory, and
// the product kernels and the softmax row run in the instruction set of the
// caller's context (isa::avx2 or isa::baseline).  Row blocks are dealt to
// accumulators shared by the context's threads (dealt_for() of parallel.hpp,
// the one parallel policy); its interrupt callback is polled between waves
// of blocks, on the calling thread only, outside parallel regions
// (common.hpp).
#ifndef KMAHA_NCA_HPP
#define KMAHA_NCA_HPP

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>
#include "blocked_rows.hpp"
#include "common.hpp"
#include "context.hpp"
#include "distances.hpp"
#include "gemm.hpp"
#include "parallel.hpp"

namespace kmaha {

namespace nca_detail {

// ---------------------------------------------------------------------------
// One row of the softmax, fused: squared distances from the inner products,
// the row minimum, the shifted exponentials and their (same-class) sums, and
// finally the gradient weights, in three sweeps over the row.  Written once
// with GCC/clang vector extensions (4 doubles) and compiled, like the GEMM
// micro-kernel (gemm.hpp), for the baseline and for AVX2+FMA.

#if defined(__GNUC__) && ((!defined(__clang__) && __GNUC__ >= 9) || \
                          (defined(__clang__) && __clang_major__ >= 9))
#define KMAHA_NCA_VECTOR 1
// Vectors of 2 doubles for the baseline (SSE2), of 4 for AVX2, with the
// matching integer vectors for masks and bit manipulation.
typedef double v2d __attribute__((vector_size(16)));
typedef long long v2l __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));

// Vectors are passed by reference only: by value they would cross a
// function boundary in a baseline function (an ABI difference clang and GCC
// warn about), even though every helper here is inlined.
template <class V>
KMAHA_ALWAYS_INLINE void vsplat(V& v, double x) {
  for (unsigned k = 0; k < sizeof(V) / sizeof(double); ++k) v[k] = x;
}

// exp(x) for x <= 0: 2^k e^r with k = round(x / ln 2), |r| <= ln(2) / 2 and a
// degree-13 Taylor polynomial (truncation error < 5e-18 relative).  Inputs
// below -708 (where the result is below the smallest normal double) give 0.
template <class V, class VL>
KMAHA_ALWAYS_INLINE void exp_nonpos(V& x) {
  V lo, zero;
  vsplat(lo, -708.0);
  vsplat(zero, 0.0);
  const VL under = x < lo;
  x = under ? lo : x;
  // Adding 1.5 * 2^52 rounds x / ln 2 to the integer k, which then sits in
  // the low bits of the sum's representation.
  const double shifter = 6755399441055744.0;
  const V ks = x * 1.4426950408889634 + shifter;
  const V kf = ks - shifter;
  V r = x - kf * 0.693145751953125;       // ln 2, high part (exact product)
  r = r - kf * 1.4286068203094172321e-06;   // ln 2, low part
  V p = r * (1.0 / 6227020800.0) + (1.0 / 479001600.0);
  p = p * r + (1.0 / 39916800.0);
  p = p * r + (1.0 / 3628800.0);
  p = p * r + (1.0 / 362880.0);
  p = p * r + (1.0 / 40320.0);
  p = p * r + (1.0 / 5040.0);
  p = p * r + (1.0 / 720.0);
  p = p * r + (1.0 / 120.0);
  p = p * r + (1.0 / 24.0);
  p = p * r + (1.0 / 6.0);
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  VL kbits;
  __builtin_memcpy(&kbits, &ks, sizeof(kbits));
  const long long shifter_bits = 0x4338000000000000LL;  // bits of 1.5 * 2^52
  const VL bits = (kbits - shifter_bits + 1023) << 52;
  V scale;
  __builtin_memcpy(&scale, &bits, sizeof(scale));
  const V res = p * scale;
  x = under ? zero : res;
}

template <class V>
KMAHA_ALWAYS_INLINE void vload(V& v, const double* p) {
  __builtin_memcpy(&v, p, sizeof(v));
}
template <class V>
KMAHA_ALWAYS_INLINE void vstore(double* p, const V& v) {
  __builtin_memcpy(p, &v, sizeof(v));
}
#else
// Without vector extensions the scalar loops below do all the work.
typedef double v2d;
typedef long long v2l;
typedef double v4d;
typedef long long v4l;
#endif

inline double exp_nonpos_scalar(double x) {
  return x < -708.0 ? 0.0 : std::exp(x);
}

// Sweep 1 of a row of the block (NCA's softmax row, MLKR's kernel row,
// mlkr.hpp): t holds the inner products z_i . z_j (j = 0..n-1), nz the
// squared norms; t is overwritten with the squared distances d_ij (clamped
// at 0) and t[i] with +infinity (the diagonal takes no part).  Returns the
// smallest d_ij, j != i.
template <class V>
KMAHA_ALWAYS_INLINE double distance_row(double* t, const double* nz, std::size_t n,
                                        std::size_t i) {
  const double nzi = nz[i];
  const double inf = std::numeric_limits<double>::infinity();
  std::size_t j = 0;
  double m = inf;
#ifdef KMAHA_NCA_VECTOR
  constexpr std::size_t W = sizeof(V) / sizeof(double);
  {
    V zero, vm;
    vsplat(zero, 0.0);
    vsplat(vm, inf);
    for (; j + W <= n; j += W) {
      V a, c;
      vload(a, nz + j);
      vload(c, t + j);
      V v = nzi + a - 2.0 * c;
      v = v < zero ? zero : v;
      vstore(t + j, v);
      vm = v < vm ? v : vm;
    }
    for (std::size_t k = 0; k < W; ++k) m = vm[k] < m ? vm[k] : m;
  }
#endif
  for (; j < n; ++j) {
    double v = nzi + nz[j] - 2.0 * t[j];
    v = v < 0.0 ? 0.0 : v;
    t[j] = v;
    m = v < m ? v : m;
  }
  // The diagonal is excluded: recompute the minimum without it if needed.
  if (t[i] <= m) {
    t[i] = inf;
    m = inf;
    for (std::size_t k = 0; k < n; ++k) m = t[k] < m ? t[k] : m;
  }
  t[i] = inf;
  return m;
}

// Row i of the block: t holds the inner products z_i . z_j (j = 0..n-1) and
// is overwritten with p_ij, or with the gradient weights W_ij when grad is
// true.  [cs, ce) is the column range of i's class.  Returns p_i.  V and VL
// are the vector types (W doubles) of the instruction set.  The inner
// products may be those of Z / c (c a power of two, see evaluate()): the
// distances are then multiplied by c^2 (as (d c) c, which keeps 0 at 0
// even when c^2 overflows) before exponentiating.
template <class V, class VL>
KMAHA_ALWAYS_INLINE double softmax_row_body(double* t, const double* nz,
                                            std::size_t n, std::size_t i,
                                            std::size_t cs, std::size_t ce,
                                            bool grad, double c) {
  // Sweep 1: distances (clamped at 0) and their minimum.
  const double m = distance_row<V>(t, nz, n, i);
  // Sweep 2: e_ij = exp(m - d_ij) (<= 1, the nearest neighbour gives 1).
  double s = 0.0;
  std::size_t j = 0;
#ifdef KMAHA_NCA_VECTOR
  constexpr std::size_t W = sizeof(V) / sizeof(double);
  {
    V vs;
    vsplat(vs, 0.0);
    for (; j + W <= n; j += W) {
      V e;
      vload(e, t + j);
      e = m - e;
      if (c != 1.0) e = (e * c) * c;
      exp_nonpos<V, VL>(e);
      vstore(t + j, e);
      vs += e;
    }
    for (std::size_t k = 0; k < W; ++k) s += vs[k];
  }
#endif
  for (; j < n; ++j) {
    const double e = exp_nonpos_scalar(c != 1.0 ? ((m - t[j]) * c) * c : m - t[j]);
    t[j] = e;
    s += e;
  }
  s -= t[i];
  t[i] = 0.0;
  double same = 0.0;
  for (std::size_t k = cs; k < ce; ++k) same += t[k];
  const double pi = same / s;
  // Sweep 3: probabilities or gradient weights p_ij (1[same class] - p_i).
  const double inv = 1.0 / s;
  if (!grad) return pi;
  const double w_other = -pi * inv, w_same = (1.0 - pi) * inv;
  for (std::size_t k = 0; k < cs; ++k) t[k] *= w_other;
  for (std::size_t k = cs; k < ce; ++k) t[k] *= w_same;
  for (std::size_t k = ce; k < n; ++k) t[k] *= w_other;
  return pi;
}

inline double softmax_row_baseline(double* t, const double* nz, std::size_t n,
                                   std::size_t i, std::size_t cs,
                                   std::size_t ce, bool grad, double c) {
  return softmax_row_body<v2d, v2l>(t, nz, n, i, cs, ce, grad, c);
}

#ifdef KMAHA_GEMM_AVX2
KMAHA_TARGET_AVX2
inline double softmax_row_avx2(double* t, const double* nz, std::size_t n,
                               std::size_t i, std::size_t cs, std::size_t ce,
                               bool grad, double c) {
  return softmax_row_body<v4d, v4l>(t, nz, n, i, cs, ce, grad, c);
}
#endif

// Row i of the block with the kernel compiled for instruction set s.
inline double softmax_row(isa s, double* t, const double* nz, std::size_t n,
                          std::size_t i, std::size_t cs, std::size_t ce,
                          bool grad, double c) {
#ifdef KMAHA_GEMM_AVX2
  if (s == isa::avx2) return softmax_row_avx2(t, nz, n, i, cs, ce, grad, c);
#else
  (void)s;
#endif
  return softmax_row_baseline(t, nz, n, i, cs, ce, grad, c);
}

}  // namespace nca_detail

class nca_objective {
 public:
  // X: n x D, one observation per row.  y: 0-based class labels.
  // lambda >= 0; reg: nullptr for lambda ||A||_F^2, else a symmetric D x D
  // matrix R for lambda trace(A R A') (the object keeps a pointer: R must
  // outlive it).  block = 0 picks the row block size automatically.  ctx:
  // threads, instruction set of the kernels (isa::avx2 needs
  // cpu_has_avx2_fma()) and interrupt callback; the object keeps a copy.
  nca_objective(const arma::mat& X, const arma::uvec& y, double lambda,
                const arma::mat* reg, arma::uword block, const context& ctx)
      : lambda_(lambda), reg_(reg), isa_(ctx.kernels), ctx_(ctx),
        rows_(X.n_rows, block, ctx) {
    const arma::uword n = X.n_rows;
    if (n < 2) throw error("nca: at least two observations are needed");
    if (y.n_elem != n) throw error("nca: labels and rows differ in length");
    if (!X.is_finite()) throw error("nca: inputs must be finite");
    if (!(lambda >= 0.0) || !std::isfinite(lambda))
      throw error("nca: lambda must be finite and non-negative");
    if (reg != nullptr && (reg->n_rows != X.n_cols || reg->n_cols != X.n_cols))
      throw error("nca: the regularisation matrix must be D x D");
    if (isa_ == isa::avx2 && !cpu_has_avx2_fma())
      throw error("nca: the AVX2+FMA kernels are not available here");
    // Stable sort by class: same-class columns become contiguous ranges.
    order_ = arma::stable_sort_index(y);
    Xs_ = X.rows(order_);
    start_.set_size(n);
    end_.set_size(n);
    arma::uword i = 0;
    while (i < n) {
      arma::uword j = i;
      const arma::uword c = y[order_[i]];
      while (j < n && y[order_[j]] == c) ++j;
      for (arma::uword k = i; k < j; ++k) {
        start_[k] = i;
        end_[k] = j;
      }
      i = j;
    }
  }

  arma::uword n_obs() const { return Xs_.n_rows; }
  arma::uword n_features() const { return Xs_.n_cols; }
  int threads() const { return rows_.threads(); }
  void set_min_parallel_flops(double flops) { rows_.min_parallel_flops = flops; }
  // The regulariser reg(A), without lambda: ||A||_F^2 or trace(A R A').
  double reg_value(const arma::mat& A) const {
    if (reg_ == nullptr) return arma::accu(arma::square(A));
    return arma::accu((A * (*reg_)) % A);
  }

  // The instruction set the kernels run in, and its name.
  isa kernels_isa() const { return isa_; }
  const char* isa_name() const { return kmaha::isa_name(isa_); }

  // A power of two s such that the points mapped by s A0 have a median
  // squared distance to their nearest neighbour of about 1 (positive
  // distances only; the upper median of an even count).  From a start where every neighbour probability is 0
  // or 1 (distances huge) or all are equal (distances tiny), the objective
  // is flat and L-BFGS cannot move; s A0 is the same start on the scale of
  // the data.  Returns 1 when the mapped points all coincide.
  double start_scale(const arma::mat& A0) const {
    const arma::uword n = Xs_.n_rows, d = A0.n_rows;
    if (A0.n_cols != Xs_.n_cols || d == 0) throw error("nca: bad start map");
    arma::mat Z(n, d);
    gemm_buffers buf;
    gemm(isa_, static_cast<std::ptrdiff_t>(n), static_cast<std::ptrdiff_t>(d),
         static_cast<std::ptrdiff_t>(Xs_.n_cols),
         cview::col_major(Xs_.memptr(), static_cast<std::ptrdiff_t>(n)),
         cview::transposed(A0.memptr(), static_cast<std::ptrdiff_t>(d)),
         Z.memptr(), 1, static_cast<std::ptrdiff_t>(n), false, buf);
    check_interrupt(ctx_.interrupt);
    const double c = rescale_rows(Z);
    if (!std::isfinite(c)) return 1.0;
    // Distances formed from inner products leave duplicated points a
    // rounding-level distance instead of 0: below this they count as 0.
    const double tiny = 64.0 * std::numeric_limits<double>::epsilon() *
                        arma::max(arma::sum(arma::square(Z), 1));
    std::vector<double> nn;
    nn.reserve(n);
    for_each_distance_block(
        Z, Z, 256,
        [&](arma::uword q0, arma::uword q1, const arma::mat& D2) {
          for (arma::uword q = q0; q < q1; ++q) {
            double best = std::numeric_limits<double>::infinity();
            const double* col = D2.colptr(q - q0);
            for (arma::uword j = 0; j < n; ++j)
              if (j != q && col[j] < best) best = col[j];
            if (best > tiny && std::isfinite(best)) nn.push_back(best);
          }
        },
        ctx_.with_threads(1));
    if (nn.empty()) return 1.0;
    std::nth_element(nn.begin(), nn.begin() + nn.size() / 2, nn.end());
    const double med = nn[nn.size() / 2];  // of the distances of Z / c
    const double log2s = -std::log2(c) - 0.5 * std::log2(med);
    return std::ldexp(1.0, static_cast<int>(std::lround(log2s)));
  }

  // Objective at A (d x D); the gradient is written to *grad when non-null.
  double evaluate(const arma::mat& A, arma::mat* grad = nullptr) const {
    const arma::uword n = Xs_.n_rows, D = Xs_.n_cols, d = A.n_rows;
    if (A.n_cols != D) throw error("nca: the map must have one column per feature");
    if (d == 0) throw error("nca: the map must have at least one row");
    if (!A.is_finite()) throw error("nca: the map has non-finite entries");
    const std::ptrdiff_t Dd = static_cast<std::ptrdiff_t>(D);
    const std::ptrdiff_t dd = static_cast<std::ptrdiff_t>(d);
    // The data term through the blocked driver (blocked_rows.hpp): row i's
    // term is -p_i (softmax_row_body()), the rows sorted by class.
    double c = 1.0;
    double f = rows_.evaluate(
        Xs_, A, grad, false,
        [&](double* t, std::size_t i, bool g, double cc, const double* nz) {
          return -nca_detail::softmax_row(isa_, t, nz, n, i, start_[i], end_[i], g, cc);
        },
        &c);
    if (!std::isfinite(c)) return std::numeric_limits<double>::infinity();
    // The regulariser: lambda ||A||_F^2, or lambda tr(A R A') with A R
    // through the same product kernels (R is n x n for kernel-trick NCA).
    if (lambda_ > 0.0) {
      if (reg_ == nullptr) {
        f += lambda_ * arma::accu(arma::square(A));
        if (grad != nullptr) *grad += (2.0 * lambda_) * A;
      } else {
        arma::mat& AR = ws_.AR;
        AR.set_size(d, D);
        gemm(isa_, dd, Dd, Dd, cview::col_major(A.memptr(), dd),
             cview::col_major(reg_->memptr(), Dd), AR.memptr(), 1, dd, false,
             ws_.buf);
        check_interrupt(ctx_.interrupt);
        f += lambda_ * arma::accu(AR % A);
        if (grad != nullptr) *grad += (2.0 * lambda_) * AR;
      }
    }
    return f;
  }

 private:
  double lambda_;
  const arma::mat* reg_;
  isa isa_;
  context ctx_;
  arma::uvec order_;
  arma::mat Xs_;
  arma::uvec start_, end_;
  blocked_rows rows_;
  // Scratch of the regulariser tr(A R A'), kept between calls (one object
  // must not be evaluated from several threads at once).
  struct workspace {
    arma::mat AR;
    gemm_buffers buf;
  };
  mutable workspace ws_;
};

}  // namespace kmaha

#endif  // KMAHA_NCA_HPP
