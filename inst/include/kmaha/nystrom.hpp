// kmaha core: kernel PCA by the Nystrom method, in O(n m) time per pass and
// O(n r + m^2) memory for n training rows, m landmarks and r components.
//
// With landmarks z_1..z_m, W = k(Z, Z) (m x m) = U diag(s) U' and the
// kernel row c(x) = (k(x, z_1), ..., k(x, z_m)), the Nystrom feature map
//     f(x) = diag(s)^{-1/2} U' c(x)                       (q entries)
// gives the coordinates of P phi(x), the orthogonal projection of phi(x) onto
// the span of phi(z_1), ..., phi(z_m), in an orthonormal basis of that span
// (directions of W with s_j <= tol * max(s) are dropped: q <= m).  Hence
//     ||f(x) - f(x')||^2 = ||P (phi(x) - phi(x'))||^2,
// which equals the feature-space distance whenever phi(x) - phi(x') lies in
// the span (e.g. when every training point is a landmark).  KPCA is then
// ordinary PCA of the explicit features: with mu the mean of c(x_i) over the
// training rows, T = U diag(s)^{-1/2} and
//     M = T' (sum_i (c(x_i) - mu)(c(x_i) - mu)') T  =  V diag(lambda) V',
// the coordinates of any point are (c(x) - mu)' T V_r, i.e. the projection
// matrix is P = T V_r (m x r) and the centring statistic is mu (m).  The
// lambda are the eigenvalues of the centred Gram matrix of the approximated
// kernel k~(x, x') = f(x)' f(x') on the training rows (the same scale as the
// exact KPCA's eigenvalues).
//
// The n x m matrix of kernel rows is never stored: the training rows are
// processed in blocks, in three passes (mu; the m x m scatter; the
// coordinates), each recomputing the block's kernel rows, which costs
// O(b m D) against the O(b m^2) of the scatter.  Blocks run on the context's
// threads; the scatter is summed in block order (ordered_reduce), so the
// result does not depend on the thread count.
//
// Landmarks chosen by kernel k-means++ seeding (Oglic and Gaertner, ICML
// 2017): the first uniformly, each next one with probability proportional to
// its squared feature-space distance to the nearest landmark chosen so far.
#ifndef KMAHA_NYSTROM_HPP
#define KMAHA_NYSTROM_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include <Eigen/Dense>
#include "common.hpp"
#include "gram.hpp"
#include "kpca.hpp"
#include "parallel.hpp"

namespace kmaha {

struct nystrom_result {
  arma::mat projection;   // m x r: coordinates are (c(x) - col_means)' projection
  arma::vec col_means;    // m: mean kernel row of the training points
  arma::vec eigenvalues;  // r kept eigenvalues, descending
  double trace = 0;       // sum of all eigenvalues (variance in the landmark span)
  double residual = 0;    // mean over training rows of ||phi(x) - P phi(x)||^2
  arma::uword landmark_rank = 0;  // q: directions of W kept
  std::string method;     // eigensolver of the q x q problem
  bool fallback = false;  // truncated requested but did not converge
  arma::uword matvecs = 0;
};

namespace detail {

// Training rows per block of a Nystrom pass: about 2^17 doubles of kernel
// rows (1 MiB), between 32 and 512 rows.
inline arma::uword nystrom_block(arma::uword m) {
  const double target = 131072.0 / static_cast<double>(std::max<arma::uword>(m, 1));
  return static_cast<arma::uword>(std::max(32.0, std::min(512.0, target)));
}

}  // namespace detail

// Nystrom KPCA of the rows of X (n x D) with landmarks Z (m x D) and kernel
// sum_i w_i k_i.  rank, tol, method as in kpca_fit() (tol also drops the
// directions of the landmark Gram matrix W with eigenvalue <= tol * max).
// Coordinates are computed afterwards by nystrom_project() on X.
inline nystrom_result nystrom_fit(const std::vector<kernel_spec>& ks,
                                  const arma::vec& w, const arma::mat& X,
                                  const arma::mat& Z, arma::uword rank,
                                  double tol, kpca_method method,
                                  const context& ctx) {
  const arma::uword n = X.n_rows, m = Z.n_rows;
  if (Z.n_cols != X.n_cols)
    throw error("nystrom: landmarks and points differ in columns");
  if (n < 2) throw error("kpca: at least 2 points are needed");
  if (m < 1) throw error("nystrom: at least one landmark is needed");
  if (!(tol > 0.0 && tol < 1.0)) throw error("kpca: tol must lie in (0, 1)");
  const thread_scope threads(ctx.threads);

  // 1. The landmark Gram matrix and its inverse square root T (m x q).
  const arma::mat W = gram_sum(ks, w, Z, nullptr, ctx);
  if (!W.is_finite()) throw error(error_kind::numerical, "kpca: the kernel matrix has non-finite entries");
  const sym_eigen se(W, "nystrom", 0, ctx.interrupt);
  const arma::vec& s = se.values();
  const double smax = s.n_elem ? s.max() : 0.0;
  if (!(smax > 0.0)) detail::zero_gram_error();
  const arma::uvec keep = arma::find(s > tol * smax);
  nystrom_result r;
  r.landmark_rank = keep.n_elem;
  arma::mat T = se.vectors(keep);
  T.each_row() /= arma::sqrt(s.elem(keep)).t();
  check_interrupt(ctx.interrupt);

  // 2. Mean kernel row mu (pass 1) and the centred scatter of the kernel
  //    rows (pass 2), block by block.
  const arma::vec zz = arma::sum(arma::square(Z), 1);
  const row_blocks blocks(n, detail::nystrom_block(m));
  arma::vec mu(m, arma::fill::zeros);
  ordered_reduce<arma::vec>(
      blocks.count(), ctx, [&]() { return arma::vec(); },
      [&](std::size_t b, arma::vec& part) {
        arma::mat C;
        gram_rows(ks, w, X, blocks.start(b), blocks.end(b), Z, zz, C, ctx.kernels);
        part = arma::sum(C, 0).t();
      },
      [&](arma::vec& part) { mu += part; });
  mu /= static_cast<double>(n);
  if (!mu.is_finite()) throw error(error_kind::numerical, "kpca: the kernel matrix has non-finite entries");

  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(m, m);
  ordered_reduce<Eigen::MatrixXd>(
      blocks.count(), ctx, [&]() { return Eigen::MatrixXd(); },
      [&](std::size_t b, Eigen::MatrixXd& part) {
        arma::mat C;
        gram_rows(ks, w, X, blocks.start(b), blocks.end(b), Z, zz, C, ctx.kernels);
        C.each_row() -= mu.t();
        const Eigen::Map<const Eigen::MatrixXd> Ce(C.memptr(), C.n_rows, C.n_cols);
        part.setZero(m, m);
        part.selfadjointView<Eigen::Lower>().rankUpdate(Ce.transpose());
      },
      [&](Eigen::MatrixXd& part) { G += part; });
  G.triangularView<Eigen::StrictlyUpper>() = G.transpose();

  // 3. M = T' G T (q x q) and its leading eigenpairs.
  const arma::uword q = T.n_cols;
  arma::mat M(q, q);
  {
    const Eigen::Map<const Eigen::MatrixXd> Te(T.memptr(), m, q);
    Eigen::Map<Eigen::MatrixXd> Me(M.memptr(), q, q);
    const Eigen::MatrixXd GT = G * Te;
    Me.noalias() = Te.transpose() * GT;
  }
  M = 0.5 * (M + M.t());
  check_interrupt(ctx.interrupt);
  if (rank > q) rank = q;
  const double mmax = detail::max_abs(M);
  if (!(mmax > 0.0)) detail::zero_centred_error();
  kpca_result e;
  e.col_means.zeros(q);
  e.grand_mean = 0.0;
  if (q == 1) {  // a single direction: nothing to decompose
    e.eigenvalues = arma::vec{M(0, 0)};
    e.projection = arma::mat{1.0 / std::sqrt(M(0, 0))};
    e.method = "full";
  } else {
    detail::kpca_solve(M, rank, tol, method, mmax, e, ctx.interrupt);
  }

  // V = projection * diag(lambda)^{1/2}; P = T V.
  arma::mat V = e.projection;
  V.each_row() %= arma::sqrt(e.eigenvalues).t();
  r.projection = T * V;
  r.col_means = mu;
  r.eigenvalues = e.eigenvalues;
  r.trace = arma::trace(M);
  const arma::vec Tmu = T.t() * mu;
  const arma::vec kd = gram_diag(ks, w, X);
  r.residual = std::max(0.0, arma::mean(kd) - r.trace / static_cast<double>(n) -
                                 arma::dot(Tmu, Tmu));
  r.method = e.method;
  r.fallback = e.fallback;
  r.matvecs = e.matvecs;
  return r;
}

// Coordinates of the rows of X (n x D) under a Nystrom KPCA with landmarks
// Z: (c(x) - col_means)' projection, written into out (n x r, which may
// alias memory owned by the caller), in blocks on the context's threads.
inline void nystrom_project(const std::vector<kernel_spec>& ks,
                            const arma::vec& w, const arma::mat& X,
                            const arma::mat& Z, const arma::mat& projection,
                            const arma::vec& col_means, arma::mat& out,
                            const context& ctx) {
  const arma::uword n = X.n_rows, m = Z.n_rows;
  if (Z.n_cols != X.n_cols)
    throw error("nystrom: new points and landmarks differ in columns");
  if (projection.n_rows != m || col_means.n_elem != m)
    throw error("nystrom: the projection must have one row per landmark");
  if (out.n_rows != n || out.n_cols != projection.n_cols)
    throw error("nystrom: the output has the wrong shape");
  const arma::vec zz = arma::sum(arma::square(Z), 1);
  const row_blocks blocks(n, detail::nystrom_block(m));
  const Eigen::Map<const Eigen::MatrixXd> Pe(projection.memptr(), m, projection.n_cols);
  parallel_for(blocks.count(), ctx, [&](std::size_t b, std::size_t) {
    const arma::uword s = blocks.start(b), e = blocks.end(b);
    arma::mat C;
    gram_rows(ks, w, X, s, e, Z, zz, C, ctx.kernels);
    C.each_row() -= col_means.t();
    const Eigen::Map<const Eigen::MatrixXd> Ce(C.memptr(), C.n_rows, C.n_cols);
    const Eigen::MatrixXd Zb = Ce * Pe;
    for (arma::uword j = 0; j < out.n_cols; ++j)
      for (arma::uword i = 0; i < e - s; ++i) out(s + i, j) = Zb(i, j);
  });
}

// Kernel k-means++ seeding: m distinct row indices of X (0-based).  u holds
// m numbers in [0, 1) drawn by the caller (the first picks a row uniformly,
// the others by D^2 sampling), so the caller's random generator decides and
// the choice does not depend on the thread count.  When every remaining
// point coincides in feature space with a chosen landmark, the next one is
// drawn uniformly among the points not yet chosen.  O(n m D) time, O(n)
// memory.
inline arma::uvec kmeanspp_landmarks(const std::vector<kernel_spec>& ks,
                                     const arma::vec& w, const arma::mat& X,
                                     arma::uword m, const arma::vec& u,
                                     const context& ctx) {
  const arma::uword n = X.n_rows;
  if (m < 1 || m > n) throw error("kmeans++: the number of landmarks must lie in 1..n");
  if (u.n_elem < m) throw error("kmeans++: one uniform number per landmark is needed");
  // One kernel column per landmark: serial, and Armadillo's elementwise
  // kernels must not open a thread team for each column.
  const thread_scope serial(1);
  const arma::vec kd = gram_diag(ks, w, X);
  const arma::vec xx = arma::sum(arma::square(X), 1);
  arma::vec dmin(n);
  dmin.fill(std::numeric_limits<double>::infinity());
  std::vector<char> chosen(n, 0);
  arma::uvec idx(m);
  arma::mat kc(n, 1);
  gemm_buffers buf;
  for (arma::uword t = 0; t < m; ++t) {
    arma::uword c = n;
    if (t > 0) {
      double total = 0.0;
      for (arma::uword i = 0; i < n; ++i) total += dmin[i];
      if (total > 0.0 && std::isfinite(total)) {
        const double target = u[t] * total;
        double cum = 0.0;
        for (arma::uword i = 0; i < n; ++i) {
          if (chosen[i] || dmin[i] <= 0.0) continue;
          cum += dmin[i];
          c = i;
          if (cum > target) break;
        }
      }
    }
    if (c == n) {  // first landmark, or no distance left: uniform
      arma::uword r = std::min<arma::uword>(
          n - t - 1, static_cast<arma::uword>(u[t] * static_cast<double>(n - t)));
      for (arma::uword i = 0; i < n; ++i) {
        if (chosen[i]) continue;
        if (r == 0) { c = i; break; }
        --r;
      }
    }
    idx[t] = c;
    chosen[c] = 1;
    kernel_block(ks, w, X, X, c, c + 1, xx, xx, true, kc, buf, ctx.kernels);
    for (arma::uword i = 0; i < n; ++i) {
      const double d = std::max(0.0, kd[i] + kd[c] - 2.0 * kc[i]);
      if (d < dmin[i]) dmin[i] = d;
    }
    dmin[c] = 0.0;
    if ((t & 15u) == 15u) check_interrupt(ctx.interrupt);
  }
  return idx;
}

}  // namespace kmaha

#endif  // KMAHA_NYSTROM_HPP
