// kmaha core: the eigen-decomposition of a dense symmetric matrix, the one
// solver behind exact KPCA (kpca.hpp), DNE (dne.hpp), the span of centred
// rows (span.hpp) and the Nystrom landmarks (nystrom.hpp).
//
// Three steps:
//  1. Householder tridiagonalization S = Q T Q' (Eigen's vectorized
//     symmetric products and rank-2 updates, polling for interrupts);
//  2. the eigenpairs of T by LAPACK's MRRR solver dstevr (O(n^2));
//  3. the eigenvectors a caller asks for, back-transformed as Q z with
//     Eigen's blocked Householder products.
// On the reference BLAS this is 2-5 times faster than LAPACK's dsyevd
// (arma::eig_sym) or dsyevr (R's eigen()) at n = 100-300, because Eigen's
// kernels are vectorized and no work is spent on eigenvectors that are not
// used (bench/symeig.R, bench/results/symeig.txt).  Eigenvalues ascending.
#ifndef KMAHA_SYMEIG_HPP
#define KMAHA_SYMEIG_HPP

#include <cmath>
#include <string>
#include <utility>
#include <vector>
#include <Eigen/Core>
#include <Eigen/Householder>
#include <Eigen/Eigenvalues>
#include "common.hpp"

// LAPACK's dstevr: eigenpairs of a symmetric tridiagonal matrix by the MRRR
// algorithm (Fortran; the hidden string-length arguments come last).
extern "C" void dstevr_(const char* jobz, const char* range,
                        const arma::blas_int* n, double* d, double* e,
                        const double* vl, const double* vu,
                        const arma::blas_int* il, const arma::blas_int* iu,
                        const double* abstol, arma::blas_int* m, double* w,
                        double* z, const arma::blas_int* ldz,
                        arma::blas_int* isuppz, double* work,
                        const arma::blas_int* lwork, arma::blas_int* iwork,
                        const arma::blas_int* liwork, arma::blas_int* info,
                        arma::blas_len jobz_len, arma::blas_len range_len);

namespace kmaha {

namespace detail {

// Eigenpairs of the symmetric tridiagonal matrix (diagonal d, off-diagonal
// e; both overwritten): all of them (il == 0) or those with ascending
// indices il..iu (1-based).  Eigenvalues ascending.  `who` names the caller
// in the error of a failure.
inline void tridiagonal_eigen(Eigen::VectorXd& d, Eigen::VectorXd& e,
                              arma::blas_int il, arma::blas_int iu,
                              Eigen::VectorXd& w, Eigen::MatrixXd& Z,
                              const char* who = "kpca") {
  const arma::blas_int n = static_cast<arma::blas_int>(d.size());
  const char jobz = 'V';
  const char range = il == 0 ? 'A' : 'I';
  const arma::blas_int m_max = il == 0 ? n : iu - il + 1;
  const double vl = 0.0, vu = 0.0, abstol = 0.0;
  arma::blas_int m = 0, info = 0, lwork = -1, liwork = -1, iwork_q = 0;
  double work_q = 0.0;
  w.resize(n);
  Z.resize(n, m_max);
  std::vector<arma::blas_int> isuppz(2 * static_cast<std::size_t>(m_max));
  const std::string fail = std::string(who) + ": the tridiagonal eigensolver failed";
  dstevr_(&jobz, &range, &n, d.data(), e.data(), &vl, &vu, &il, &iu, &abstol,
          &m, w.data(), Z.data(), &n, isuppz.data(), &work_q, &lwork, &iwork_q,
          &liwork, &info, 1, 1);
  if (info != 0) throw error(error_kind::numerical, fail);
  lwork = static_cast<arma::blas_int>(work_q);
  liwork = iwork_q;
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<arma::blas_int> iwork(static_cast<std::size_t>(liwork));
  dstevr_(&jobz, &range, &n, d.data(), e.data(), &vl, &vu, &il, &iu, &abstol,
          &m, w.data(), Z.data(), &n, isuppz.data(), work.data(), &lwork,
          iwork.data(), &liwork, &info, 1, 1);
  if (info != 0) throw error(error_kind::numerical, fail);
  w.conservativeResize(m);
  Z.conservativeResize(Eigen::NoChange, m);
}

}  // namespace detail

// The eigen-decomposition of a symmetric matrix S (n x n; its lower
// triangle is read): the eigenvalues, ascending, at construction; the
// eigenvectors of any of them on demand (vectors()), back-transformed from
// the tridiagonal factor.  With top = 0 every eigenpair; with top > 0 only
// the `top` largest (values() then holds those, ascending), by dstevr's
// subset solver (bisection and inverse iteration, whose cost grows with
// the count) below an eighth of n, else from all eigenpairs (MRRR, whose
// cost does not): bench/symeig.R, where the two break even near 16, 24 and
// 48 eigenpairs at n = 120, 200 and 400.  A non-finite S is an error naming
// `who`; `interrupt` is polled between the steps and inside the
// tridiagonalization.
class sym_eigen {
 public:
  sym_eigen(const arma::mat& S, const char* who, arma::uword top = 0,
            const interrupt_fn& interrupt = interrupt_fn())
      : n_(S.n_rows), who_(who) {
    if (S.n_cols != n_) throw error(std::string(who) + ": the matrix is not square");
    const Eigen::Index en = static_cast<Eigen::Index>(n_);
    A_.resize(en, en);
    for (arma::uword j = 0; j < n_; ++j) {
      const double* sj = S.colptr(j);
      double* aj = A_.data() + j * n_;
      for (arma::uword i = j; i < n_; ++i) aj[i] = sj[i];
    }
    solve(top, interrupt);
  }

  // From a matrix whose lower triangle holds S (the upper one is not read),
  // taken over without a copy.
  sym_eigen(Eigen::MatrixXd&& lower, const char* who, arma::uword top = 0,
            const interrupt_fn& interrupt = interrupt_fn())
      : n_(static_cast<arma::uword>(lower.rows())), who_(who), A_(std::move(lower)) {
    if (static_cast<arma::uword>(A_.cols()) != n_)
      throw error(std::string(who) + ": the matrix is not square");
    solve(top, interrupt);
  }

  // The eigenvalues, ascending (all of them, or the `top` largest).
  const arma::vec& values() const { return values_; }

  // The unit eigenvectors of the eigenvalues lo, ..., lo + count - 1 (in
  // the order of values()), as the columns of an n x count matrix.
  arma::mat vectors(arma::uword lo, arma::uword count) const {
    if (lo + count > values_.n_elem)
      throw error(std::string(who_) + ": eigenvector index out of range");
    if (count == 0) return arma::mat(n_, 0);
    return vectors(arma::regspace<arma::uvec>(lo, lo + count - 1));
  }

  // The eigenvectors of the eigenvalues with indices `idx` (in the order
  // of values()), as columns.
  arma::mat vectors(const arma::uvec& idx) const {
    arma::mat V(n_, idx.n_elem);
    if (idx.n_elem == 0) return V;
    Eigen::MatrixXd Zk(static_cast<Eigen::Index>(n_), static_cast<Eigen::Index>(idx.n_elem));
    for (arma::uword c = 0; c < idx.n_elem; ++c) {
      if (idx[c] >= values_.n_elem)
        throw error(std::string(who_) + ": eigenvector index out of range");
      Zk.col(static_cast<Eigen::Index>(c)) = Z_.col(static_cast<Eigen::Index>(idx[c]));
    }
    if (n_ > 1) {
      Eigen::HouseholderSequence<Eigen::MatrixXd, Eigen::VectorXd> Q(A_, h_);
      Q.setLength(static_cast<Eigen::Index>(n_) - 1).setShift(1);
      Q.applyThisOnTheLeft(Zk);
    }
    std::copy(Zk.data(), Zk.data() + Zk.size(), V.memptr());
    return V;
  }

 private:
  // Tridiagonalization of A_ in place, then the eigenpairs of the factor.
  void solve(arma::uword top, const interrupt_fn& interrupt) {
    for (arma::uword j = 0; j < n_; ++j)
      for (arma::uword i = j; i < n_; ++i)
        if (!std::isfinite(A_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))))
          throw error(error_kind::numerical,
                      std::string(who_) + ": the eigen-decomposition failed (non-finite entries)");
    if (top > n_) top = n_;
    if (n_ == 0) return;
    if (n_ == 1) {
      values_ = arma::vec{A_(0, 0)};
      Z_ = Eigen::MatrixXd::Ones(1, 1);
      return;
    }
    const Eigen::Index en = static_cast<Eigen::Index>(n_);
    check_interrupt(interrupt);
    tridiagonalize(interrupt);
    check_interrupt(interrupt);
    Eigen::VectorXd d = A_.diagonal();
    Eigen::VectorXd e(en);
    e.head(en - 1) = A_.template diagonal<-1>();
    e[en - 1] = 0.0;
    Eigen::VectorXd w;
    const arma::blas_int bn = static_cast<arma::blas_int>(n_);
    const bool subset = top > 0 && 8 * top < n_;
    if (subset)
      detail::tridiagonal_eigen(d, e, bn - static_cast<arma::blas_int>(top) + 1, bn, w, Z_, who_);
    else
      detail::tridiagonal_eigen(d, e, 0, 0, w, Z_, who_);
    const Eigen::Index want = static_cast<Eigen::Index>(top > 0 ? top : n_);
    if (w.size() < want)
      throw error(error_kind::numerical, std::string(who_) + ": the eigen-decomposition failed");
    // keep the `want` largest (the last columns: dstevr sorts ascending)
    const Eigen::Index from = w.size() - want;
    values_.set_size(static_cast<arma::uword>(want));
    for (Eigen::Index i = 0; i < want; ++i) values_[static_cast<arma::uword>(i)] = w[from + i];
    if (from > 0) Z_ = Z_.rightCols(want).eval();
    check_interrupt(interrupt);
  }

  // Householder tridiagonalization of A_ in place (Golub and Van Loan,
  // Matrix Computations, Algorithm 8.3.1): for each column i, the
  // reflector H = I - tau v v' (v(0) = 1) that zeroes A(i+2:n, i), applied
  // to the trailing block as A22 - v w' - w v' with p = tau A22 v and
  // w = p - (tau / 2) (p'v) v.  Afterwards the diagonal and subdiagonal of
  // A_ hold T, the entries below the subdiagonal the reflectors' vectors
  // (without their leading 1) and h_ their tau: the layout of Eigen's
  // HouseholderSequence (vectors()).  The interrupt is polled every few
  // columns, so a time limit acts within a fraction of a second of this
  // O(n^3) step at any n.
  void tridiagonalize(const interrupt_fn& interrupt) {
    const Eigen::Index n = A_.rows();
    h_.resize(n - 1);
    Eigen::VectorXd w(n);
    // poll about every 2e7 flops (the column i step costs ~4 (n - i)^2)
    double since_poll = 0.0;
    for (Eigen::Index i = 0; i < n - 1; ++i) {
      const Eigen::Index m = n - i - 1;
      since_poll += 4.0 * static_cast<double>(m) * static_cast<double>(m);
      if (since_poll > 2e7) {
        check_interrupt(interrupt);
        since_poll = 0.0;
      }
      Eigen::Block<Eigen::MatrixXd, Eigen::Dynamic, 1, true> col = A_.col(i);
      auto v = col.tail(m);
      double tau = 0.0, beta = 0.0;
      v.makeHouseholderInPlace(tau, beta);
      A_(i + 1, i) = 1.0;
      auto A22 = A_.bottomRightCorner(m, m);
      auto wm = w.head(m);
      wm.noalias() = A22.template selfadjointView<Eigen::Lower>() * (tau * v);
      wm += (-0.5 * tau * wm.dot(v)) * v;
      A22.template selfadjointView<Eigen::Lower>().rankUpdate(v, wm, -1.0);
      A_(i + 1, i) = beta;
      h_(i) = tau;
    }
  }

  arma::uword n_;
  const char* who_;
  Eigen::MatrixXd A_;  // S's lower triangle, then the Householder vectors
  Eigen::VectorXd h_;  // their coefficients
  arma::vec values_;
  Eigen::MatrixXd Z_;  // eigenvectors of the tridiagonal factor (kept ones)
};

}  // namespace kmaha

#endif  // KMAHA_SYMEIG_HPP
