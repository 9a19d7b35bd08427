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
#ifndef KMAHA_NCA_HPP
#define KMAHA_NCA_HPP

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>
#include "common.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace kmaha {

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

class nca_objective {
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
      // Aim at ~256 KiB per thread for the b x n work block, b in [16, 256].
      const double target = 32768.0 / static_cast<double>(n);
      block = static_cast<arma::uword>(std::max(16.0, std::min(256.0, target)));
    }
    block_ = std::min<arma::uword>(block, n);
  }

  arma::uword n_obs() const { return Xs_.n_rows; }
  arma::uword n_features() const { return Xs_.n_cols; }
  int threads() const { return nt_; }

  // Objective at A (d x D); the gradient is written to *grad when non-null.
  double evaluate(const arma::mat& A, arma::mat* grad = nullptr) const {
    using namespace nca_detail;
    const arma::uword n = Xs_.n_rows, D = Xs_.n_cols, d = A.n_rows;
    if (A.n_cols != D) throw error("nca: the map must have one column per feature");
    if (d == 0) throw error("nca: the map must have at least one row");
    if (!A.is_finite()) throw error("nca: the map has non-finite entries");
    thread_guard guard(nt_);
    const Eigen::Index N = static_cast<Eigen::Index>(n);
    const Eigen::Index Dd = static_cast<Eigen::Index>(D);
    const Eigen::Index dd = static_cast<Eigen::Index>(d);
    CMap Xm(Xs_.memptr(), N, Dd);
    CMap Am(A.memptr(), dd, Dd);
    const bool want_grad = grad != nullptr;
    const Eigen::Index b = static_cast<Eigen::Index>(block_);
    const Eigen::Index nblocks = (N + b - 1) / b;
    const int nt = nt_;

    // Z = X A' and the squared row norms.
    ColMat Z(N, dd);
    Eigen::VectorXd nz(N);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (Eigen::Index blk = 0; blk < nblocks; ++blk) {
      const Eigen::Index i0 = blk * b, len = std::min(b, N - i0);
      Z.middleRows(i0, len).noalias() = Xm.middleRows(i0, len) * Am.transpose();
      nz.segment(i0, len) = Z.middleRows(i0, len).rowwise().squaredNorm();
    }
    interrupt_();

    ColMat WZ;
    std::vector<ColMat> acc_wtz(want_grad ? nt : 0);
    std::vector<Eigen::VectorXd> acc_col(want_grad ? nt : 0);
    std::vector<RowMat> work(nt);
    std::vector<double> acc_f(nt, 0.0);
    if (want_grad) {
      WZ.resize(N, dd);
      for (int t = 0; t < nt; ++t) {
        acc_wtz[t].setZero(N, dd);
        acc_col[t].setZero(N);
      }
    }
    const Eigen::RowVectorXd nzt = nz.transpose();
    const double inf = std::numeric_limits<double>::infinity();
    const Eigen::Index chunk = 4 * static_cast<Eigen::Index>(nt);

    for (Eigen::Index c0 = 0; c0 < nblocks; c0 += chunk) {
      const Eigen::Index c1 = std::min(nblocks, c0 + chunk);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
      for (Eigen::Index blk = c0; blk < c1; ++blk) {
        const int t = thread_id();
        RowMat& T = work[t];
        const Eigen::Index i0 = blk * b, len = std::min(b, N - i0);
        if (T.rows() != len || T.cols() != N) T.resize(len, N);
        T.noalias() = Z.middleRows(i0, len) * Z.transpose();
        double fsum = 0.0;
        for (Eigen::Index r = 0; r < len; ++r) {
          const Eigen::Index i = i0 + r;
          auto row = T.row(r).array();
          row = (nz[i] + nzt.array() - 2.0 * row).max(0.0);
          row[i] = inf;
          const double m = row.minCoeff();
          row = (m - row).exp();
          row[i] = 0.0;
          const double s = row.sum();  // >= 1: the nearest term is exp(0)
          const Eigen::Index cs = static_cast<Eigen::Index>(start_[i]);
          const Eigen::Index ce = static_cast<Eigen::Index>(end_[i]);
          const double pi = row.segment(cs, ce - cs).sum() / s;
          fsum += pi;
          if (want_grad) {
            const double w_other = -pi / s, w_same = (1.0 - pi) / s;
            row.head(cs) *= w_other;
            row.segment(cs, ce - cs) *= w_same;
            row.tail(N - ce) *= w_other;
          }
        }
        acc_f[t] -= fsum;
        if (want_grad) {
          WZ.middleRows(i0, len).noalias() = T * Z;
          acc_wtz[t].noalias() += T.transpose() * Z.middleRows(i0, len);
          acc_col[t].noalias() += T.colwise().sum().transpose();
        }
      }
      interrupt_();
    }

    double f = 0.0;
    for (int t = 0; t < nt; ++t) f += acc_f[t];
    f += lambda_ * reg_value(A);
    if (!want_grad) return f;

    for (int t = 0; t < nt; ++t) {
      WZ += acc_wtz[t];
    }
    Eigen::VectorXd colsum = acc_col[0];
    for (int t = 1; t < nt; ++t) colsum += acc_col[t];
    // L Z = colsum .* Z - (W Z + W' Z), stored in WZ.
    WZ = colsum.asDiagonal() * Z - WZ;

    // Gradient 2 (L Z)' X, accumulated over row blocks.
    std::vector<ColMat> acc_g(nt, ColMat::Zero(dd, Dd));
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (Eigen::Index blk = 0; blk < nblocks; ++blk) {
      const int t = thread_id();
      const Eigen::Index i0 = blk * b, len = std::min(b, N - i0);
      acc_g[t].noalias() += WZ.middleRows(i0, len).transpose() * Xm.middleRows(i0, len);
    }
    grad->set_size(d, D);
    Eigen::Map<ColMat> G(grad->memptr(), dd, Dd);
    G = 2.0 * acc_g[0];
    for (int t = 1; t < nt; ++t) G += 2.0 * acc_g[t];
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
};

}  // namespace kmaha

#endif  // KMAHA_NCA_HPP
