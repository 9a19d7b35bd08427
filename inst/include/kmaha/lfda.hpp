// kmaha core: local Fisher discriminant analysis (LFDA; Sugiyama, 2007).
//
// With one observation per row of X (n x p) and classes c of sizes n_c, the
// local-scaling affinity of two points of the same class is
//
//   A_ij = exp(-||x_i - x_j||^2 / (sigma_i sigma_j)),
//
// sigma_i the distance from x_i to its k-th nearest other point of its class
// (k capped at n_c - 1; A_ij = 0 when sigma_i sigma_j = 0).  The local
// within-class and between-class scatters are
//
//   S_lw = 1/2 sum_ij W^lw_ij (x_i - x_j)(x_i - x_j)',
//   S_lb = 1/2 sum_ij W^lb_ij (x_i - x_j)(x_i - x_j)',
//
//   W^lw_ij = A_ij / n_c            (y_i = y_j = c),   0 otherwise,
//   W^lb_ij = A_ij (1/n - 1/n_c)    (y_i = y_j = c),   1/n otherwise.
//
// In terms of G_c = X_c' (diag(A_c 1) - A_c) X_c (the affinity Laplacian of
// class c), the class-centred scatters SC_c and the classical between-class
// scatter S_b = sum_c n_c (m_c - m)(m_c - m)':
//
//   S_lw = sum_c G_c / n_c,
//   S_lb = S_b + sum_c [(1 - n_c/n) SC_c + G_c/n] - S_lw,
//
// every term computed from class-centred rows (no cancellation of large
// means).  Each class's affinities are visited a block of rows at a time
// (distances.hpp), so memory is O(n_c * block), not O(n_c^2).
//
// The embedding solves S_lb v = lambda S_w v with the regularized
// within-class scatter
//
//   S_w = S_lw + rho I + reg s^2 S_t^+,   s = trace(S_t) / n,
//
// S_t = Xc' Xc the total scatter of the centred rows and S_t^+ its
// pseudo-inverse (eigenvalues below 1e-10 times the largest count as 0).
// rho = 1e-8 trace(S_lw) unless given keeps a singular S_lw solvable.  The
// last term is the ridge of kernel LFDA (Sugiyama 2007; lfda's
// klfda(), `reg`): a feature-space direction w = sum_i alpha_i x_i has
// min |alpha|^2 = w' S_t^+ w, so reg |alpha|^2 is reg w' S_t^+ w; on exact
// KPCA coordinates S_t = diag(Lambda), the kernel's eigenvalues, and the
// term is reg s^2 u' Lambda^-1 u.  The factor s^2 (s is the mean squared
// norm of a centred row) makes the term scale as S_lw does, so that the map
// of c X is the map of X divided by c (for a unit-diagonal kernel such as
// the RBF kernel, s = 1 - mean(K) <= 1).  reg = 0: Sugiyama's LFDA.
//
// The problem is solved through the Cholesky factor R of S_w (R'R):
// C = R^{-T} S_lb R^{-1} is symmetric, its eigenpairs come from the dense
// symmetric solver (symeig.hpp), and v = R^{-1} u, so that V' S_w V = I.  The d eigenvectors of the
// largest eigenvalues (signs fixed) are then returned as the rows of the map
// L = T', with T:
//   plain:           V;
//   weighted:        V diag(sqrt(lambda)) (negative eigenvalues count as 0),
//                    the default of Sugiyama's code;
//   orthonormalized: the orthonormal factor Q of V = Q R (R's diagonal
//                    positive), an orthonormal basis of the same subspace.
//
// Every scatter is a Laplacian form, zero on the orthogonal complement of the
// span of the centred rows.  When p >= n that span is smaller than R^p, and
// the problem is solved on the points' coordinates Z in an orthonormal basis
// B of it (span.hpp): S(Z) = B' S(X) B, the eigenvectors are B v, and the
// complement only carries the eigenvalue 0 (S_lb = 0 there, S_lw + rho I =
// rho I), so no p x p matrix is formed and the map has at most r = rank rows.
// In the span S_t = diag(s_1..s_r), the eigenvalues of the centred Gram
// matrix, and S_t^+ = diag(1/s), the same penalty as on all p coordinates.
#ifndef KMAHA_LFDA_HPP
#define KMAHA_LFDA_HPP

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#include "distances.hpp"
#include "gemm.hpp"
#include "parallel.hpp"
#include "span.hpp"
#include "symeig.hpp"

namespace kmaha {

enum class lfda_metric { weighted, orthonormalized, plain };

inline lfda_metric lfda_metric_from(const std::string& s) {
  if (s == "weighted") return lfda_metric::weighted;
  if (s == "orthonormalized") return lfda_metric::orthonormalized;
  if (s == "plain") return lfda_metric::plain;
  throw error("lfda: metric must be \"weighted\", \"orthonormalized\" or \"plain\"");
}

struct lfda_scatter {
  arma::mat Slb, Slw;  // p x p
  arma::vec sigma;     // local scale of every point (0 for a class of one)
};

struct lfda_result {
  arma::mat L;            // d x p map
  arma::vec eigval;       // generalized eigenvalues, descending (r of them in the span)
  arma::mat Slb, Slw;     // the scatters; empty when solved in the span
  arma::vec sigma;        // local scales
  arma::uword dim = 0;    // rows of L
  arma::uword span_rank = 0;  // rank of the centred rows when solved in their span, else 0
  double ridge = 0.0;     // rho added to S_lw
  double reg = 0.0;       // the ridge weight on S_t^+ as given
  double reg_weight = 0.0;  // reg s^2, the multiplier of S_t^+ in S_w
};

namespace detail {

// G_c = Xc' (diag(A 1) - A) Xc for the (class-centred) rows Xc of one class,
// and the local scales of its points (k-th nearest other point, k capped at
// n_c - 1).  Two passes over blocks of rows: the scales, then the affinity
// Laplacian times Xc.
inline arma::mat lfda_class_laplacian(const arma::mat& Xc, arma::uword k,
                                      arma::vec& sigma, const context& ctx) {
  const arma::uword nc = Xc.n_rows, p = Xc.n_cols;
  sigma.zeros(nc);
  if (nc < 2) return arma::mat(p, p, arma::fill::zeros);
  const arma::uword kk = std::min<arma::uword>(std::max<arma::uword>(k, 1), nc - 1);
  const arma::uword block = 256;
  // pass 1: sigma_i = sqrt of the kk-th smallest squared distance to the
  // other points (the point itself, at distance 0, sorts first).  Squared
  // distances come from norms and inner products, so those of repeated
  // rows are rounding noise (~1e-16 of the squared norms) rather than 0;
  // below 1e-12 of the two squared norms they count as 0, so a point whose
  // k-th neighbour is a copy of it gets scale 0 (affinity 0), not a scale
  // made of noise.
  const arma::vec nrm = arma::sum(arma::square(Xc), 1);
  for_each_distance_block(
      Xc, Xc, block,
      [&](arma::uword q0, arma::uword q1, const arma::mat& D2) {
        std::vector<double> col(nc);
        for (arma::uword q = q0; q < q1; ++q) {
          const double* d = D2.colptr(q - q0);
          for (arma::uword j = 0; j < nc; ++j)
            col[j] = d[j] <= 1e-12 * (nrm[q] + nrm[j]) ? 0.0 : d[j];
          col[q] = 0.0;
          std::nth_element(col.begin(), col.begin() + kk, col.end());
          sigma[q] = std::sqrt(col[kk]);
        }
      },
      ctx);
  check_interrupt(ctx.interrupt);
  // pass 2: column q of LXt is (Laplacian Xc)' row q = a_q x_q - Xc' A(:, q)
  arma::mat LXt(p, nc);
  per_thread<gemm_buffers> bufs(ctx.threads);
  for_each_distance_block(
      Xc, Xc, block,
      [&](arma::uword q0, arma::uword q1, const arma::mat& D2) {
        const arma::uword b = q1 - q0;
        arma::mat A(nc, b);
        arma::vec a(b);
        for (arma::uword c = 0; c < b; ++c) {
          const arma::uword q = q0 + c;
          const double* d = D2.colptr(c);
          double* ac = A.colptr(c);
          double s = 0.0;
          for (arma::uword j = 0; j < nc; ++j) {
            const double ls = sigma[j] * sigma[q];
            const double v = (j == q || !(ls > 0.0)) ? 0.0 : std::exp(-d[j] / ls);
            ac[j] = v;
            s += v;
          }
          a[c] = s;
        }
        // LXt(:, q0..q1) = Xc' A  (p x b), then a_q x_q - that
        double* out = LXt.colptr(q0);
        gemm(ctx.kernels, static_cast<std::ptrdiff_t>(p), static_cast<std::ptrdiff_t>(b),
             static_cast<std::ptrdiff_t>(nc), cview::transposed(Xc.memptr(), nc),
             cview::col_major(A.memptr(), nc), out, 1, static_cast<std::ptrdiff_t>(p),
             false, bufs.local());
        for (arma::uword c = 0; c < b; ++c) {
          const arma::uword q = q0 + c;
          double* o = out + c * p;
          for (arma::uword r = 0; r < p; ++r) o[r] = a[c] * Xc(q, r) - o[r];
        }
      },
      ctx);
  check_interrupt(ctx.interrupt);
  arma::mat G(p, p);
  gemm_buffers buf;
  gemm(ctx.kernels, static_cast<std::ptrdiff_t>(p), static_cast<std::ptrdiff_t>(p),
       static_cast<std::ptrdiff_t>(nc), cview::col_major(LXt.memptr(), p),
       cview::col_major(Xc.memptr(), nc), G.memptr(), 1, static_cast<std::ptrdiff_t>(p),
       false, buf);
  return 0.5 * (G + G.t());
}

}  // namespace detail

// The local scatters of the rows of X (n x p) with 0-based class labels y
// (classes 0..max(y); an empty class is skipped) and k neighbours for the
// local scales.
inline lfda_scatter lfda_scatters(const arma::mat& X, const arma::uvec& y,
                                  arma::uword k, const context& ctx) {
  const arma::uword n = X.n_rows, p = X.n_cols;
  if (y.n_elem != n) throw error("lfda: one class label per row of X is needed");
  if (n == 0) throw error("lfda: X has no rows");
  lfda_scatter s;
  s.Slb.zeros(p, p);
  s.Slw.zeros(p, p);
  s.sigma.zeros(n);
  const arma::rowvec m = arma::mean(X, 0);
  const arma::uword nclass = y.max() + 1;
  for (arma::uword c = 0; c < nclass; ++c) {
    const arma::uvec idx = arma::find(y == c);
    const arma::uword nc = idx.n_elem;
    if (nc == 0) continue;
    const arma::mat Xk = X.rows(idx);
    const arma::rowvec mc = arma::mean(Xk, 0);
    const arma::mat Xc = Xk.each_row() - mc;
    arma::vec sig;
    const arma::mat G = detail::lfda_class_laplacian(Xc, k, sig, ctx);
    s.sigma.elem(idx) = sig;
    const arma::mat SC = Xc.t() * Xc;
    const arma::rowvec dm = mc - m;
    const double fn = static_cast<double>(n), fc = static_cast<double>(nc);
    s.Slw += G / fc;
    s.Slb += fc * (dm.t() * dm) + (1.0 - fc / fn) * SC + G / fn;
    check_interrupt(ctx.interrupt);
  }
  s.Slb -= s.Slw;
  s.Slb = 0.5 * (s.Slb + s.Slb.t());
  s.Slw = 0.5 * (s.Slw + s.Slw.t());
  return s;
}

namespace detail {

// The generalized eigenproblem Slb v = lambda Sw v (Sw the regularized
// within-class scatter): all eigenvalues (descending) and the
// Sw-normalized eigenvectors of the `dim` largest as columns.
inline arma::mat lfda_eigen(const arma::mat& Slb, const arma::mat& Sw, arma::uword dim,
                            arma::vec& eigval, const context& ctx) {
  const arma::uword p = Sw.n_rows;
  arma::mat R;
  if (!arma::chol(R, Sw))
    throw error(error_kind::singular,
                "lfda: the local within-class scatter plus its ridges is not positive "
                "definite; raise the ridge");
  check_interrupt(ctx.interrupt);
  // C = R^{-T} Slb R^{-1}
  const arma::mat Rt = R.t();
  const arma::mat Y = arma::solve(arma::trimatl(Rt), Slb);              // R^{-T} Slb
  arma::mat C = arma::solve(arma::trimatl(Rt), arma::mat(Y.t()));       // R^{-T} (Slb R^{-1})
  C = 0.5 * (C + C.t());
  const sym_eigen se(C, "lfda", 0, ctx.interrupt);
  const arma::vec& ev = se.values();  // ascending
  eigval = arma::flipud(ev);
  if (dim > p) dim = p;
  arma::uvec idx(dim);
  for (arma::uword i = 0; i < dim; ++i) idx[i] = p - 1 - i;
  const arma::mat U = se.vectors(idx);
  return arma::solve(arma::trimatu(R), U);  // V = R^{-1} U
}

// The pseudo-inverse of the total scatter St = Xc' Xc of the rows of X
// (p x p): V diag(1/s) V' over the eigenvalues s above 1e-10 times the
// largest; its trace(St) in `trace`.
inline arma::mat total_scatter_pinv(const arma::mat& X, double& trace, const context& ctx) {
  const arma::mat Xc = X.each_row() - arma::mean(X, 0);
  arma::mat St = Xc.t() * Xc;
  St = 0.5 * (St + St.t());
  trace = arma::trace(St);
  const sym_eigen se(St, "lfda", 0, ctx.interrupt);
  const arma::vec& ev = se.values();  // ascending
  const double top = ev.n_elem ? ev.max() : 0.0;
  const arma::uvec keep = top > 0.0 ? arma::uvec(arma::find(ev > 1e-10 * top)) : arma::uvec();
  const arma::mat V = se.vectors(keep);
  arma::mat Vs = V;
  for (arma::uword j = 0; j < keep.n_elem; ++j) Vs.col(j) /= ev[keep[j]];
  arma::mat P = Vs * V.t();
  return 0.5 * (P + P.t());
}

// T0 (p x d, signs fixed) and the eigenvalues to the map of the metric.
inline arma::mat lfda_map(arma::mat T0, const arma::vec& eigval, lfda_metric metric) {
  const arma::uword d = T0.n_cols;
  switch (metric) {
    case lfda_metric::plain:
      break;
    case lfda_metric::weighted:
      for (arma::uword j = 0; j < d; ++j) T0.col(j) *= std::sqrt(std::max(eigval[j], 0.0));
      break;
    case lfda_metric::orthonormalized: {
      arma::mat Q, Rq;
      if (!arma::qr_econ(Q, Rq, T0))
        throw error(error_kind::numerical, "lfda: the QR decomposition failed");
      for (arma::uword j = 0; j < d; ++j)
        if (Rq(j, j) < 0.0) Q.col(j) *= -1.0;
      T0 = Q;
      break;
    }
  }
  return T0.t();
}

}  // namespace detail

// LFDA on the rows of X with 0-based labels y.  dim = 0: all dimensions
// (p, or the rank r of the centred rows in the span).  ridge < 0: 1e-8
// trace(S_lw).  reg >= 0: the weight of the total-scatter ridge (0: none).
// span: solve in the span of the centred rows when p >= n
// (false: always on all p coordinates, a reference for tests); principal:
// the columns of X are principal components already (exact KPCA
// coordinates, principal_row_span()).
inline lfda_result lfda_fit(const arma::mat& X, const arma::uvec& y, arma::uword dim,
                            arma::uword k, lfda_metric metric, double ridge, double reg,
                            bool span, bool principal, const context& ctx) {
  const arma::uword n = X.n_rows, p = X.n_cols;
  if (dim > p) throw error("lfda: dim exceeds the number of columns");
  if (!(reg >= 0.0) || !std::isfinite(reg))
    throw error("lfda: reg must be a non-negative finite number");
  lfda_result r;
  const bool use_span = span && n > 0 && p >= n;
  row_span sp;
  const arma::mat* Xp = &X;
  if (use_span) {
    sp = principal ? principal_row_span(X, 1e-10)
                   : centred_row_span(X, ctx.kernels, 1e-10, "lfda", ctx.interrupt);
    r.span_rank = sp.basis.n_cols;
    if (r.span_rank == 0)
      throw error(error_kind::degenerate, "lfda: all rows of x are equal");
    Xp = &sp.coords;
  }
  const arma::uword q = Xp->n_cols;
  lfda_scatter s = lfda_scatters(*Xp, y, k, ctx);
  const double tr = arma::trace(s.Slw);
  if (!(tr > 0.0))
    throw error(error_kind::degenerate,
                "lfda: the local within-class scatter is zero (no class has two distinct "
                "points with a positive local scale)");
  r.ridge = ridge >= 0.0 ? ridge : 1e-8 * tr;
  r.reg = reg;
  arma::mat Sw = s.Slw;
  Sw.diag() += r.ridge;
  if (reg > 0.0) {
    // reg s^2 S_t^+, s = trace(S_t) / n; in the span S_t = diag(sp.s)
    double trt = 0.0;
    if (use_span) {
      trt = arma::accu(sp.s);
      const double w = reg * (trt / n) * (trt / n);
      Sw.diag() += w / sp.s;
      r.reg_weight = w;
    } else {
      const arma::mat P = detail::total_scatter_pinv(*Xp, trt, ctx);
      r.reg_weight = reg * (trt / n) * (trt / n);
      Sw += r.reg_weight * P;
    }
    check_interrupt(ctx.interrupt);
  }
  const arma::uword d = dim == 0 ? q : std::min(dim, q);
  arma::mat V = detail::lfda_eigen(s.Slb, Sw, d, r.eigval, ctx);
  if (use_span) V = sp.basis * V;
  detail::fix_signs(V);
  r.L = detail::lfda_map(V, r.eigval, metric);
  r.dim = d;
  r.sigma = std::move(s.sigma);
  if (!use_span) {
    r.Slb = std::move(s.Slb);
    r.Slw = std::move(s.Slw);
  }
  return r;
}

}  // namespace kmaha

#endif  // KMAHA_LFDA_HPP
