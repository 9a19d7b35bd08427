// kmaha core: the eigen-decomposition of a dense symmetric matrix, the one
// solver behind KPCA (kpca.hpp), DNE (dne.hpp), the span of centred rows
// (span.hpp) and the Nystrom landmarks (nystrom.hpp).
//
// Three steps:
//  1. Householder tridiagonalization S = Q T Q' (Eigen, vectorized);
//  2. the eigenpairs of T by LAPACK's MRRR solver dstevr (O(n^2));
//  3. the eigenvectors a caller asks for, back-transformed as Q z with
//     Eigen's blocked Householder products.
// On the reference BLAS this is 2-5 times faster than LAPACK's dsyevd
// (arma::eig_sym) or dsyevr (R's eigen()) at n = 100-300, because Eigen's
// kernels are vectorized and no work is spent on eigenvectors that are not
// used (bench/symeig.R, bench/results/symeig.txt).  Eigenvalues ascending.
#ifndef KMAHA_SYMEIG_HPP
#define KMAHA_SYMEIG_HPP

#include <string>
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
// triangle is read): every eigenvalue, ascending, at construction; the
// eigenvectors of any range of them on demand (vectors()), each computed
// once from the tridiagonal factor.  A non-finite S is an error naming
// `who`.
class sym_eigen {
 public:
  sym_eigen(const arma::mat& S, const char* who) : n_(S.n_rows), who_(who) {
    if (S.n_cols != n_) throw error(std::string(who) + ": the matrix is not square");
    if (!S.is_finite())
      throw error(error_kind::numerical,
                  std::string(who) + ": the eigen-decomposition failed (non-finite entries)");
    values_.set_size(n_);
    if (n_ == 0) return;
    const Eigen::Index en = static_cast<Eigen::Index>(n_);
    A_.resize(en, en);
    for (arma::uword j = 0; j < n_; ++j) {
      const double* sj = S.colptr(j);
      double* aj = A_.data() + j * n_;
      for (arma::uword i = j; i < n_; ++i) aj[i] = sj[i];
    }
    if (n_ == 1) {
      values_[0] = S(0, 0);
      Z_ = Eigen::MatrixXd::Ones(1, 1);
      return;
    }
    h_.resize(en - 1);
    Eigen::internal::tridiagonalization_inplace(A_, h_);
    Eigen::VectorXd d = A_.diagonal();
    Eigen::VectorXd e(en);
    e.head(en - 1) = A_.template diagonal<-1>();
    e[en - 1] = 0.0;
    Eigen::VectorXd w;
    detail::tridiagonal_eigen(d, e, 0, 0, w, Z_, who);
    if (static_cast<arma::uword>(w.size()) != n_)
      throw error(error_kind::numerical,
                  std::string(who) + ": the eigen-decomposition failed");
    for (arma::uword i = 0; i < n_; ++i) values_[i] = w[static_cast<Eigen::Index>(i)];
  }

  // All eigenvalues, ascending.
  const arma::vec& values() const { return values_; }

  // The unit eigenvectors of the eigenvalues lo, ..., lo + count - 1 (in
  // the order of values()), as the columns of an n x count matrix.
  arma::mat vectors(arma::uword lo, arma::uword count) const {
    if (lo + count > n_) throw error(std::string(who_) + ": eigenvector index out of range");
    if (count == 0) return arma::mat(n_, 0);
    return vectors(arma::regspace<arma::uvec>(lo, lo + count - 1));
  }

  // The eigenvectors of the eigenvalues with indices `idx` (ascending
  // order of values()), as columns.
  arma::mat vectors(const arma::uvec& idx) const {
    arma::mat V(n_, idx.n_elem);
    if (idx.n_elem == 0) return V;
    Eigen::MatrixXd Zk(static_cast<Eigen::Index>(n_), static_cast<Eigen::Index>(idx.n_elem));
    for (arma::uword c = 0; c < idx.n_elem; ++c) {
      if (idx[c] >= n_) throw error(std::string(who_) + ": eigenvector index out of range");
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
  arma::uword n_;
  const char* who_;
  arma::vec values_;
  Eigen::MatrixXd A_;  // the Householder vectors below the subdiagonal
  Eigen::VectorXd h_;  // their coefficients
  Eigen::MatrixXd Z_;  // eigenvectors of the tridiagonal factor
};

}  // namespace kmaha

#endif  // KMAHA_SYMEIG_HPP
