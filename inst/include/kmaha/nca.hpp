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
// Products are Eigen's own GEMM on Armadillo memory (no copies).  Row blocks
// are shared among OpenMP threads; the interrupt callback is polled between
// chunks of blocks, on the calling thread only, outside parallel regions.
//
// Instruction sets.  The implementation lives in an inline namespace named by
// KMAHA_NCA_ISA (default `isa_default`), so that a translation unit can
// compile a second copy for another instruction set (src/nca_avx2.cpp builds
// one for AVX2+FMA, with Eigen's templates renamed) without clashing with this
// one.  Callers hold either copy through the abstract kmaha::nca_function.
#ifndef KMAHA_NCA_HPP
#define KMAHA_NCA_HPP

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>
#include "common.hpp"
#include "nca_function.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef KMAHA_NCA_ISA
#define KMAHA_NCA_ISA isa_default
#endif

namespace kmaha {


inline namespace KMAHA_NCA_ISA {

namespace nca_detail {

using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ColMat = Eigen::MatrixXd;
using CMap = Eigen::Map<const Eigen::MatrixXd>;

// Sets the OpenMP thread count of the calling thread for the lifetime of the
// guard (Eigen sizes its own parallel products by it) and restores it after.
class thread_guard {
 public:
  explicit thread_guard(int nt) {
#ifdef _OPENMP
    old_ = omp_get_max_threads();
    omp_set_num_threads(nt);
#else
    (void)nt;
#endif
  }
  ~thread_guard() {
#ifdef _OPENMP
    omp_set_num_threads(old_);
#endif
  }
  thread_guard(const thread_guard&) = delete;
  thread_guard& operator=(const thread_guard&) = delete;

 private:
  int old_ = 1;
};

inline int thread_id() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

// ---------------------------------------------------------------------------
// One row of the softmax, fused: squared distances from the inner products,
// the row minimum, the shifted exponentials and their (same-class) sums, and
// finally the gradient weights, in three sweeps over the row.  Written with
// GCC/Clang vector extensions (4 doubles); on Linux/x86-64 with GCC the
// function is compiled for AVX2+FMA and for the baseline ISA and chosen at
// load time (target_clones), so no special compiler flags are needed.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__) && (__GNUC__ >= 11) && !defined(KMAHA_NCA_NO_CLONES)
#define KMAHA_NCA_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define KMAHA_NCA_CLONES
#endif
#ifndef KMAHA_NCA_ISA_NAME
#define KMAHA_NCA_ISA_NAME "default"
#endif

// The vector helpers are always inlined, so passing vectors by value never
// crosses an ABI boundary (GCC may still print a -Wpsabi note about AVX
// argument passing; it is harmless here).

#if defined(__GNUC__) && ((!defined(__clang__) && __GNUC__ >= 9) || \
                          (defined(__clang__) && __clang_major__ >= 9))
#define KMAHA_NCA_VECTOR 1
typedef double v4d __attribute__((vector_size(32)));
typedef long long v4l __attribute__((vector_size(32)));

// exp(x) for x <= 0: 2^k e^r with k = round(x / ln 2), |r| <= ln(2) / 2 and a
// degree-13 Taylor polynomial (truncation error < 5e-18 relative).  Inputs
// below -708 (where the result is below the smallest normal double) give 0.
static inline __attribute__((always_inline)) void exp_nonpos(v4d& x) {
  const v4d lo = {-708.0, -708.0, -708.0, -708.0};
  const v4l under = x < lo;
  x = under ? lo : x;
  // Adding 1.5 * 2^52 rounds x / ln 2 to the integer k, which then sits in
  // the low bits of the sum's representation.
  const double shifter = 6755399441055744.0;
  const v4d ks = x * 1.4426950408889634 + shifter;
  const v4d kf = ks - shifter;
  v4d r = x - kf * 0.693145751953125;       // ln 2, high part (exact product)
  r = r - kf * 1.4286068203094172321e-06;   // ln 2, low part
  v4d p = r * (1.0 / 6227020800.0) + (1.0 / 479001600.0);
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
  v4l kbits;
  __builtin_memcpy(&kbits, &ks, sizeof(kbits));
  const long long shifter_bits = 0x4338000000000000LL;  // bits of 1.5 * 2^52
  const v4l bits = (kbits - shifter_bits + 1023) << 52;
  v4d scale;
  __builtin_memcpy(&scale, &bits, sizeof(scale));
  const v4d res = p * scale;
  const v4d zero = {0.0, 0.0, 0.0, 0.0};
  x = under ? zero : res;
}

static inline __attribute__((always_inline)) void load4(v4d& v, const double* p) {
  __builtin_memcpy(&v, p, sizeof(v));
}
static inline __attribute__((always_inline)) void store4(double* p, const v4d& v) {
  __builtin_memcpy(p, &v, sizeof(v));
}
#endif

inline double exp_nonpos_scalar(double x) {
  return x < -708.0 ? 0.0 : std::exp(x);
}

// Row i of the block: t holds the inner products z_i . z_j (j = 0..n-1) and
// is overwritten with p_ij, or with the gradient weights W_ij when grad is
// true.  [cs, ce) is the column range of i's class.  Returns p_i.
KMAHA_NCA_CLONES
static double softmax_row(double* t, const double* nz, std::size_t n,
                          std::size_t i, std::size_t cs, std::size_t ce,
                          bool grad) {
  const double nzi = nz[i];
  const double inf = std::numeric_limits<double>::infinity();
  std::size_t j = 0;
  double m = inf;
#ifdef KMAHA_NCA_VECTOR
  // Sweep 1: distances (clamped at 0) and their minimum.
  {
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    v4d vm = {inf, inf, inf, inf};
    for (; j + 4 <= n; j += 4) {
      v4d a, c;
      load4(a, nz + j);
      load4(c, t + j);
      v4d v = nzi + a - 2.0 * c;
      v = v < zero ? zero : v;
      store4(t + j, v);
      vm = v < vm ? v : vm;
    }
    for (int k = 0; k < 4; ++k) m = vm[k] < m ? vm[k] : m;
  }
#endif
  for (; j < n; ++j) {
    double v = nzi + nz[j] - 2.0 * t[j];
    v = v < 0.0 ? 0.0 : v;
    t[j] = v;
    m = v < m ? v : m;
  }
  // The diagonal is excluded: recompute the minimum without it if needed.
  const double tii = t[i];
  if (tii <= m) {
    t[i] = inf;
    m = inf;
    for (std::size_t k = 0; k < n; ++k) m = t[k] < m ? t[k] : m;
  }
  t[i] = inf;
  // Sweep 2: e_ij = exp(m - d_ij) (<= 1, the nearest neighbour gives 1).
  double s = 0.0;
  j = 0;
#ifdef KMAHA_NCA_VECTOR
  {
    v4d vs = {0.0, 0.0, 0.0, 0.0};
    for (; j + 4 <= n; j += 4) {
      v4d e;
      load4(e, t + j);
      e = m - e;
      exp_nonpos(e);
      store4(t + j, e);
      vs += e;
    }
    s = (vs[0] + vs[1]) + (vs[2] + vs[3]);
  }
#endif
  for (; j < n; ++j) {
    const double e = exp_nonpos_scalar(m - t[j]);
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


}  // namespace nca_detail

// Number of threads actually usable (1 without OpenMP).
inline int nca_max_threads(int requested) {
#ifdef _OPENMP
  return std::max(1, requested);
#else
  (void)requested;
  return 1;
#endif
}

class nca_objective : public nca_function {
 public:
  // X: n x D, one observation per row.  y: 0-based class labels.
  // lambda >= 0; reg: nullptr for lambda ||A||_F^2, else a symmetric D x D
  // matrix R for lambda trace(A R A') (the object keeps a pointer: R must
  // outlive it).  block = 0 picks the row block size automatically.
  nca_objective(const arma::mat& X, const arma::uvec& y, double lambda = 0.0,
                const arma::mat* reg = nullptr, int num_threads = 1,
                arma::uword block = 0, interrupt_fn interrupt = no_interrupt)
      : lambda_(lambda), reg_(reg), nt_(nca_max_threads(num_threads)),
        interrupt_(std::move(interrupt)) {
    const arma::uword n = X.n_rows;
    if (n < 2) throw error("nca: at least two observations are needed");
    if (y.n_elem != n) throw error("nca: labels and rows differ in length");
    if (!X.is_finite()) throw error("nca: inputs must be finite");
    if (!(lambda >= 0.0) || !std::isfinite(lambda))
      throw error("nca: lambda must be finite and non-negative");
    if (reg != nullptr && (reg->n_rows != X.n_cols || reg->n_cols != X.n_cols))
      throw error("nca: the regularisation matrix must be D x D");
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
    if (block == 0) {
      // Aim at ~1 MiB per thread for the b x n work block, b in [16, 256]
      // (measured on satellite, d = 36: b = 32 beat 16 and 64 at n = 4000).
      const double target = 131072.0 / static_cast<double>(n);
      block = static_cast<arma::uword>(std::max(16.0, std::min(256.0, target)));
    }
    block_ = std::min<arma::uword>(block, n);
  }

  arma::uword n_obs() const override { return Xs_.n_rows; }
  arma::uword n_features() const override { return Xs_.n_cols; }
  int threads() const override { return nt_; }
  void set_min_parallel_flops(double flops) override { min_parallel_flops = flops; }
  const char* isa() const override { return KMAHA_NCA_ISA_NAME; }

  // Objective at A (d x D); the gradient is written to *grad when non-null.
  double evaluate(const arma::mat& A, arma::mat* grad = nullptr) const override {
    using namespace nca_detail;
    const arma::uword n = Xs_.n_rows, D = Xs_.n_cols, d = A.n_rows;
    if (A.n_cols != D) throw error("nca: the map must have one column per feature");
    if (d == 0) throw error("nca: the map must have at least one row");
    if (!A.is_finite()) throw error("nca: the map has non-finite entries");
    const bool want_grad = grad != nullptr;
    const Eigen::Index N = static_cast<Eigen::Index>(n);
    const Eigen::Index Dd = static_cast<Eigen::Index>(D);
    const Eigen::Index dd = static_cast<Eigen::Index>(d);
    const Eigen::Index b = static_cast<Eigen::Index>(block_);
    const Eigen::Index nblocks = (N + b - 1) / b;
    // Threads pay off only when a block pass has enough work; the flop count
    // of one evaluation is about 6 n^2 d.
    const double flops = 6.0 * static_cast<double>(n) * static_cast<double>(n) *
                         static_cast<double>(d);
    const int nt = flops < min_parallel_flops ? 1
                   : static_cast<int>(std::min<Eigen::Index>(nt_, nblocks));
    // Products outside our own parallel regions run on one thread (they are
    // O(n D d)); Eigen must not start teams of its own.
    thread_guard guard(1);
    CMap Xm(Xs_.memptr(), N, Dd);
    CMap Am(A.memptr(), dd, Dd);

    // Z = X A' and the squared row norms.
    // Buffers persist between evaluations (an optimiser calls evaluate() with
    // the same shapes over and over): no allocation, page faults or zeroing
    // of fresh memory per call.
    workspace& w = ws_;
    ColMat& Z = w.Z;
    Z.resize(N, dd);
    Z.noalias() = Xm * Am.transpose();
    w.nz = Z.rowwise().squaredNorm();
    const Eigen::VectorXd& nz = w.nz;

    ColMat& WZ = w.WZ;
    std::vector<ColMat>& acc_wtz = w.acc_wtz;
    std::vector<Eigen::VectorXd>& acc_col = w.acc_col;
    std::vector<RowMat>& work = w.work;
    if (static_cast<int>(work.size()) < nt) work.resize(nt);
    if (want_grad && static_cast<int>(acc_wtz.size()) < nt) {
      acc_wtz.resize(nt);
      acc_col.resize(nt);
    }
    // used[t]: thread t got a block in this evaluation (its accumulators are
    // zeroed on first use and summed at the end).
    std::vector<char> used(nt, 0);
    std::vector<double> acc_f(nt, 0.0);
    if (want_grad) WZ.resize(N, dd);
    // Blocks are handed out in chunks of about chunk_flops of work; the
    // interrupt callback is polled between chunks.
    const double block_flops = flops / static_cast<double>(nblocks);
    const Eigen::Index chunk = std::max<Eigen::Index>(
        nt, static_cast<Eigen::Index>(chunk_flops / std::max(block_flops, 1.0)));

    for (Eigen::Index c0 = 0; c0 < nblocks; c0 += chunk) {
      const Eigen::Index c1 = std::min(nblocks, c0 + chunk);
      parallel_errors errs;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1)
#endif
      {
        const int t = thread_id();
        RowMat& T = work[t];
        errs.run([&] {
          if (want_grad && !used[t]) {
            acc_wtz[t].setZero(N, dd);
            acc_col[t].setZero(N);
          }
          used[t] = 1;
        });
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (Eigen::Index blk = c0; blk < c1; ++blk) {
          errs.run([&] {
            const Eigen::Index i0 = blk * b, len = std::min(b, N - i0);
            if (T.rows() != len || T.cols() != N) T.resize(len, N);
            T.noalias() = Z.middleRows(i0, len) * Z.transpose();
            double fsum = 0.0;
            for (Eigen::Index r = 0; r < len; ++r) {
              const std::size_t i = static_cast<std::size_t>(i0 + r);
              fsum += softmax_row(T.row(r).data(), nz.data(), n, i, start_[i],
                                  end_[i], want_grad);
            }
            acc_f[t] -= fsum;
            if (want_grad) {
              WZ.middleRows(i0, len).noalias() = T * Z;
              acc_wtz[t].noalias() += T.transpose() * Z.middleRows(i0, len);
              acc_col[t].noalias() += T.colwise().sum().transpose();
            }
          });
        }
      }
      errs.rethrow();
      check_interrupt(interrupt_);
    }

    double f = 0.0;
    for (int t = 0; t < nt; ++t) f += acc_f[t];
    f += lambda_ * reg_value(A);
    if (!want_grad) return f;

    Eigen::VectorXd colsum = Eigen::VectorXd::Zero(N);
    for (int t = 0; t < nt; ++t) {
      if (!used[t]) continue;  // a thread that got no block
      WZ += acc_wtz[t];
      colsum += acc_col[t];
    }
    // L Z = colsum .* Z - (W Z + W' Z), then the gradient 2 (L Z)' X.
    WZ = colsum.asDiagonal() * Z - WZ;
    grad->set_size(d, D);
    Eigen::Map<ColMat> G(grad->memptr(), dd, Dd);
    G.noalias() = 2.0 * (WZ.transpose() * Xm);
    if (lambda_ > 0.0) {
      if (reg_ == nullptr) {
        *grad += (2.0 * lambda_) * A;
      } else {
        *grad += (2.0 * lambda_) * (A * (*reg_));
      }
    }
    return f;
  }

  // The regulariser reg(A) alone (without lambda).
  double reg_value(const arma::mat& A) const {
    if (lambda_ == 0.0) return 0.0;
    if (reg_ == nullptr) return arma::accu(arma::square(A));
    return arma::accu((A * (*reg_)) % A);
  }

 private:
  double lambda_;
  const arma::mat* reg_;
  int nt_;
  interrupt_fn interrupt_;
  arma::uvec order_;
  arma::mat Xs_;
  arma::uvec start_, end_;
  arma::uword block_ = 64;
  // Scratch memory of evaluate(), kept between calls.  One object must
  // therefore not be evaluated from several threads at once.
  struct workspace {
    nca_detail::ColMat Z, WZ;
    Eigen::VectorXd nz;
    std::vector<nca_detail::ColMat> acc_wtz;
    std::vector<Eigen::VectorXd> acc_col;
    std::vector<nca_detail::RowMat> work;
  };
  mutable workspace ws_;

 public:
  // Below this many flops per evaluation one thread is used; chunks of about
  // chunk_flops separate the interrupt polls.
  double min_parallel_flops = 2.0e7;
  double chunk_flops = 2.0e8;
};

}  // inline namespace KMAHA_NCA_ISA
}  // namespace kmaha

#endif  // KMAHA_NCA_HPP
