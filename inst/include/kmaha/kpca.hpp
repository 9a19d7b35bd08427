// kmaha core: kernel principal component analysis (KPCA).
//
// Given the Gram matrix K (n x n) of the training points, KPCA works with the
// Gram matrix of the points centred in feature space,
//     Kc = H K H,  H = I - 11'/n,
// i.e. Kc(i,j) = K(i,j) - m(i) - m(j) + g, where m holds the column means of
// K and g its grand mean (H itself is never formed).  With the eigen-
// decomposition Kc = V diag(lambda) V' (lambda descending, kept components
// only), the training coordinates are
//     coords = V diag(lambda)^{1/2},
// so coords * coords' = Kc when every non-zero component is kept, and
//     ||coords_i - coords_j||^2 = K(i,i) + K(j,j) - 2 K(i,j)
// (the paper's Proposition "parseval").  A new point with kernel row
// k (k_j = k(x, x_j)) is centred with the *training* statistics,
//     kc_j = k_j - m(j) - mean(k) + g,
// and projected as kc' V diag(lambda)^{-1/2}; for a training point this
// reproduces its training coordinates exactly.
//
// Eigenvalues here are those of Kc itself (not Kc / n).
//
// Two eigensolvers:
//  * full: the dense symmetric eigensolver of symeig.hpp on a centred copy
//    of K (Householder tridiagonalization, LAPACK's dstevr, back-
//    transformation of the kept eigenvectors only); every eigenpair, or
//    only the top `rank` when a rank is given;
//  * truncated: the top `rank` eigenpairs by the implicitly restarted
//    Lanczos method of Spectra.  Kc is never formed: each product Kc v is
//    K v followed by rank-one corrections, with K read in place through an
//    Eigen map of the Armadillo memory.
// Eigenvector signs are fixed so that the entry of largest magnitude of each
// component is positive, which makes the two solvers agree.
#ifndef KMAHA_KPCA_HPP
#define KMAHA_KPCA_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>
#include <Eigen/Core>
#include <Eigen/Householder>
#include <Eigen/Eigenvalues>
#include <Spectra/SymEigsSolver.h>
#include "common.hpp"
#include "gram.hpp"
#include "parallel.hpp"
#include "symeig.hpp"


namespace kmaha {

enum class kpca_method { automatic, full, truncated };

inline kpca_method kpca_method_from_string(const std::string& s) {
  if (s == "auto") return kpca_method::automatic;
  if (s == "full") return kpca_method::full;
  if (s == "truncated") return kpca_method::truncated;
  throw error("unknown KPCA method '" + s + "'");
}

// The rule behind method = "auto": the truncated solver is used when a rank
// is requested (rank > 0) with n >= 200 and rank < n / 10, or n >= 500 and
// rank < n / 5.  Measured on Satellite with the scaled RBF kernel (bench/):
// below these sizes the full decomposition is as fast and exact, above them
// the Lanczos iterations stop paying off.
inline bool kpca_use_truncated(arma::uword n, arma::uword rank) {
  if (rank == 0) return false;
  return (n >= 200 && 10 * rank < n) || (n >= 500 && 5 * rank < n);
}

struct kpca_result {
  arma::mat coords;       // n x r training coordinates V diag(lambda)^{1/2}
  arma::mat projection;   // n x r projection matrix V diag(lambda)^{-1/2}
  arma::vec eigenvalues;  // r kept eigenvalues of Kc, descending
  arma::vec col_means;    // n column means of the training K
  double grand_mean = 0;  // grand mean of the training K
  double trace = 0;       // trace of Kc = sum of all its eigenvalues
  std::string method;     // solver actually used: "full" or "truncated"
  bool fallback = false;  // truncated requested but did not converge
  arma::uword matvecs = 0;  // Lanczos products (truncated only)
};

namespace detail {

// Largest |K(i,j)|; used to detect an all-zero kernel matrix and to scale
// the threshold below which the centred matrix is treated as zero.
inline double max_abs(const arma::mat& K) {
  return K.n_elem ? arma::abs(K).max() : 0.0;
}

// Number of leading eigenvalues (descending vector) above tol * largest,
// capped at `rank` when rank > 0.
inline arma::uword n_keep(const arma::vec& lambda_desc, double tol,
                          arma::uword rank) {
  const double cut = tol * lambda_desc[0];
  arma::uword r = 0;
  while (r < lambda_desc.n_elem && lambda_desc[r] > cut) ++r;
  if (rank > 0) r = std::min(r, rank);
  return r;
}

// Matrix operation for Spectra: y = Kc x with Kc = K - 1 m' - m 1' + g 11',
// evaluated as K x (Eigen, lower triangle of K read in place) plus rank-one
// corrections, so no n x n matrix is allocated.
class centred_gram_op {
 public:
  centred_gram_op(const arma::mat& K, const arma::vec& m, double g,
                  const interrupt_fn& interrupt)
      : K_(K.memptr(), K.n_rows, K.n_cols),
        m_(m.memptr(), m.n_elem),
        g_(g),
        interrupt_(interrupt) {}

  Eigen::Index rows() const { return K_.rows(); }
  Eigen::Index cols() const { return K_.cols(); }

  void perform_op(const double* x_in, double* y_out) const {
    Eigen::Map<const Eigen::VectorXd> x(x_in, K_.cols());
    Eigen::Map<Eigen::VectorXd> y(y_out, K_.rows());
    y.noalias() = K_.selfadjointView<Eigen::Lower>() * x;
    const double mx = m_.dot(x);
    const double sx = x.sum();
    y.array() += g_ * sx - mx;
    y.noalias() -= sx * m_;
    ++count_;
    check_interrupt(interrupt_);
  }

  arma::uword count() const { return count_; }

 private:
  Eigen::Map<const Eigen::MatrixXd> K_;
  Eigen::Map<const Eigen::VectorXd> m_;
  double g_;
  const interrupt_fn& interrupt_;
  mutable arma::uword count_ = 0;
};

inline void check_gram(const arma::mat& K) {
  if (K.n_rows != K.n_cols) throw error("kpca: the kernel matrix must be square");
  if (K.n_rows < 2) throw error("kpca: at least 2 points are needed");
  if (!K.is_finite())
    throw error(error_kind::numerical, "kpca: the kernel matrix has non-finite entries");
}

inline void zero_centred_error() {
  throw error(error_kind::degenerate,
      "the centred kernel matrix is zero: all points coincide in feature "
      "space, so there is no component to extract. Use a kernel that "
      "separates the points (e.g. a smaller RBF sigma) or check for "
      "constant data");
}

inline void zero_gram_error() {
  throw error(error_kind::degenerate,
      "the kernel matrix is zero: every kernel value is 0 (e.g. a linear or "
      "polynomial kernel without offset on all-zero data), so there is no "
      "component to extract");
}

// Fill r's components from descending eigenpairs (lambda, V), keeping the
// first `r_keep`.  V is taken by value so that callers can move it in; the
// projection is built in its memory.
inline void set_components(kpca_result& r, const arma::vec& lambda,
                           arma::mat V, arma::uword r_keep) {
  r.eigenvalues = lambda.head(r_keep);
  if (V.n_cols != r_keep) V.resize(V.n_rows, r_keep);
  fix_signs(V);
  const arma::rowvec sq = arma::sqrt(r.eigenvalues).t();
  r.coords = V.each_row() % sq;
  V.each_row() /= sq;
  r.projection = std::move(V);
}

// The full solver: the lower triangle of the centred Gram matrix handed to
// the dense symmetric eigensolver (symeig.hpp), the top `rank` eigenpairs
// (every one when rank = 0), the kept eigenvectors only back-transformed.
inline void kpca_full(const arma::mat& K, double tol, arma::uword rank,
                      double zero_cut, kpca_result& r,
                      const interrupt_fn& interrupt) {
  const arma::uword n = K.n_rows;
  const Eigen::Index en = static_cast<Eigen::Index>(n);
  // Lower triangle of Kc = H K H (the tridiagonalization reads nothing else).
  Eigen::MatrixXd A(en, en);
  for (arma::uword j = 0; j < n; ++j) {
    const double cj = r.grand_mean - r.col_means[j];
    const double* kj = K.colptr(j);
    double* aj = A.data() + j * n;
    for (arma::uword i = j; i < n; ++i) aj[i] = kj[i] - r.col_means[i] + cj;
  }
  const sym_eigen se(std::move(A), "kpca", rank < n ? rank : 0, interrupt);
  const arma::vec& w = se.values();  // ascending
  const arma::uword m = w.n_elem;
  const arma::vec lambda = arma::flipud(w);  // descending
  if (m == 0 || !(lambda[0] > zero_cut)) zero_centred_error();
  const arma::uword r_keep = n_keep(lambda, tol, rank);
  arma::mat V = arma::fliplr(se.vectors(m - r_keep, r_keep));
  check_interrupt(interrupt);
  set_components(r, lambda, std::move(V), r_keep);
  r.method = "full";
}

// Returns false when Lanczos did not converge (the caller falls back).
inline bool kpca_truncated(const arma::mat& K, double tol, arma::uword rank,
                           double zero_cut, kpca_result& r,
                           const interrupt_fn& interrupt) {
  const arma::uword n = K.n_rows;
  const Eigen::Index nev = static_cast<Eigen::Index>(rank);
  const Eigen::Index ncv = std::min<Eigen::Index>(
      static_cast<Eigen::Index>(n), std::max<Eigen::Index>(2 * nev + 1, nev + 20));
  centred_gram_op op(K, r.col_means, r.grand_mean, interrupt);
  Spectra::SymEigsSolver<double, Spectra::LARGEST_ALGE, centred_gram_op> eigs(
      &op, nev, ncv);
  eigs.init();
  eigs.compute(1000, 1e-10, Spectra::LARGEST_ALGE);
  r.matvecs = op.count();
  if (eigs.info() != Spectra::SUCCESSFUL) return false;
  const Eigen::VectorXd ev = eigs.eigenvalues();
  const Eigen::MatrixXd evec = eigs.eigenvectors();
  const arma::vec lambda(ev.data(), ev.size());
  arma::mat V(evec.data(), evec.rows(), evec.cols());
  if (!(lambda[0] > zero_cut)) zero_centred_error();
  set_components(r, lambda, std::move(V), n_keep(lambda, tol, rank));
  r.method = "truncated";
  return true;
}

}  // namespace detail

namespace detail {

// The eigen-solve shared by kpca_fit() and the Nystrom method: fills r's
// components from the matrix K centred with r.col_means and r.grand_mean
// (zero statistics: K itself), by the solver that `method` and `rank` select.
inline void kpca_solve(const arma::mat& K, arma::uword rank, double tol,
                       kpca_method method, double kmax, kpca_result& r,
                       const interrupt_fn& interrupt) {
  const arma::uword n = K.n_rows;
  // Eigenvalues of Kc below this are rounding noise of a zero matrix.
  const double zero_cut =
      64.0 * std::numeric_limits<double>::epsilon() * kmax * static_cast<double>(n);
  bool truncated = method == kpca_method::truncated ||
                   (method == kpca_method::automatic && kpca_use_truncated(n, rank));
  if (method == kpca_method::truncated && rank == 0)
    throw error("kpca: the truncated solver needs a rank");
  // Lanczos needs rank < n - 1 (and room for its Krylov basis); the full
  // solver is exact and cheap in the remaining cases.
  if (truncated && (n < 3 || rank + 1 >= n)) truncated = false;
  if (truncated) {
    if (kpca_truncated(K, tol, rank, zero_cut, r, interrupt)) return;
    r.fallback = true;
  }
  kpca_full(K, tol, rank, zero_cut, r, interrupt);
}

}  // namespace detail

// Fit KPCA from a symmetric Gram matrix K (n x n).
//  tol:  components with eigenvalue <= tol * (largest eigenvalue) are dropped;
//  rank: 0 = keep every component above the tolerance; otherwise keep at most
//        the top `rank` (fewer if fewer are above the tolerance);
//  method: full, truncated (needs rank > 0) or automatic (see
//        kpca_use_truncated());
//  ctx:  threads of Eigen's parallel products, the interrupt callback.
// Throws kmaha::error for a zero kernel matrix or a zero centred matrix.
inline kpca_result kpca_fit(const arma::mat& K, arma::uword rank, double tol,
                            kpca_method method, const context& ctx) {
  detail::check_gram(K);
  if (!(tol > 0.0 && tol < 1.0)) throw error("kpca: tol must lie in (0, 1)");
  const arma::uword n = K.n_rows;
  if (rank > n) throw error("kpca: rank exceeds the number of points");
  const double kmax = detail::max_abs(K);
  if (kmax == 0.0) detail::zero_gram_error();
  const thread_scope threads(ctx.threads);

  kpca_result r;
  r.col_means = arma::mean(K, 0).t();
  r.grand_mean = arma::mean(r.col_means);
  r.trace = arma::sum(K.diag()) - static_cast<double>(n) * r.grand_mean;
  detail::kpca_solve(K, rank, tol, method, kmax, r, ctx.interrupt);
  return r;
}

// Project new points given their kernel rows against the training points,
// Kx (m x n), with the training centring statistics and projection matrix.
// Kx is not modified or copied: (centred Kx) * P is evaluated as
// Kx P - 1 (m'P) - rowmeans(Kx) (1'P) + g 1 (1'P).
inline arma::mat kpca_project(const arma::mat& Kx, const arma::mat& projection,
                              const arma::vec& col_means, double grand_mean) {
  if (Kx.n_cols != projection.n_rows || col_means.n_elem != projection.n_rows)
    throw error("kpca_project: the kernel rows must have one column per training point");
  // The product runs in Eigen's vectorized, cache-blocked GEMM on maps of
  // the Armadillo memory (much faster than a reference BLAS dgemm).
  arma::mat Z(Kx.n_rows, projection.n_cols);
  {
    Eigen::Map<const Eigen::MatrixXd> kx(Kx.memptr(), Kx.n_rows, Kx.n_cols);
    Eigen::Map<const Eigen::MatrixXd> p(projection.memptr(), projection.n_rows,
                                        projection.n_cols);
    Eigen::Map<Eigen::MatrixXd> z(Z.memptr(), Z.n_rows, Z.n_cols);
    z.noalias() = kx * p;
  }
  const arma::rowvec mP = col_means.t() * projection;
  const arma::rowvec sP = arma::sum(projection, 0);
  const arma::vec rm = arma::mean(Kx, 1);
  Z.each_row() += grand_mean * sP - mP;
  Z -= rm * sP;
  return Z;
}

// Coordinates of the rows of newdata (m x D) under the KPCA of the training
// rows X (n x D) with kernel sum_i w_i k_i: kernel rows are built and
// projected in blocks of new rows on the context's threads, so memory is
// O(block * n) per thread, never m x n.
inline arma::mat kpca_project_kernel(const std::vector<kernel_spec>& ks,
                                     const arma::vec& w,
                                     const arma::mat& newdata,
                                     const arma::mat& X,
                                     const arma::mat& projection,
                                     const arma::vec& col_means,
                                     double grand_mean, const context& ctx) {
  if (newdata.n_cols != X.n_cols)
    throw error("kpca_project: new points and training points differ in columns");
  const arma::uword n = X.n_rows;
  arma::mat Z(newdata.n_rows, projection.n_cols);
  const arma::vec xx = arma::sum(arma::square(X), 1);
  const double target = 1048576.0 / static_cast<double>(std::max<arma::uword>(n, 1));
  const row_blocks blocks(newdata.n_rows, static_cast<arma::uword>(
                                              std::max(8.0, std::min(256.0, target))));
  parallel_for(blocks.count(), ctx, [&](std::size_t b, std::size_t) {
    const arma::uword s = blocks.start(b), e = blocks.end(b);
    arma::mat Kx;
    gram_rows(ks, w, newdata, s, e, X, xx, Kx, ctx.kernels);
    Z.rows(s, e - 1) = kpca_project(Kx, projection, col_means, grand_mean);
  });
  return Z;
}

}  // namespace kmaha

#endif  // KMAHA_KPCA_HPP
