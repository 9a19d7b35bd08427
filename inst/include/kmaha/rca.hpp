// kmaha core: relevant component analysis (RCA; Bar-Hillel, Hertz, Shental
// and Weinshall, 2005).
//
// Chunklets are small groups of points known to belong to the same class.
// With chunklets j = 1..J of sizes n_j >= 2 (smaller groups carry no
// equivalence and are ignored) and N = sum_j n_j points in them, the
// within-chunklet covariance is
//
//   C = (1/N) sum_j sum_{i in j} (x_i - m_j)(x_i - m_j)',
//
// and RCA whitens it: the map is W = C^{-1/2} (symmetric), from the dense
// symmetric eigensolver (symeig.hpp), C = Q diag(s) Q', W = Q diag((s +
// rho)^{-1/2}) Q'.  A singular C (fewer chunklet points than dimensions, or
// collinear chunklets) has no inverse square root; rho > 0 is then a ridge
// the caller chose (and reports), else 0.
//
// Optional dimension reduction (the paper's Fisher-like criterion): the d
// directions maximising |A' S_t A| / |A' C A|, S_t the total covariance of
// all rows, i.e. the top generalized eigenvectors of S_t v = lambda (C +
// rho I) v (through the Cholesky factor of C + rho I); RCA is then applied
// in the reduced space: with V (p x d) those eigenvectors, C_d = V' C V and
// W = (C_d + rho_d I)^{-1/2} V' (d x p).
//
// C and S_t depend on the rows only through differences, so when p >= n the
// problem is solved on the points' coordinates in the span of the centred
// rows (span.hpp): the map W_s B' (at most r = rank rows) on all p columns.
// Off the span the full-dimension metric adds rho^{-1} ||P_perp (x - x')||^2,
// which is the same for every training point x' (their differences lie in
// the span), so nearest neighbours among the training points do not change.
#ifndef KMAHA_RCA_HPP
#define KMAHA_RCA_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include "common.hpp"
#include "context.hpp"
#include "span.hpp"
#include "symeig.hpp"

namespace kmaha {

// Marks a row that belongs to no chunklet.
constexpr arma::uword no_chunk = std::numeric_limits<arma::uword>::max();

struct rca_result {
  arma::mat L;              // d x p map
  arma::mat C;              // within-chunklet covariance (p x p; empty in the span)
  arma::vec c_eigval;       // eigenvalues of the covariance whitened, ascending
  arma::vec fisher_eigval;  // generalized eigenvalues of the reduction, descending
  double ridge = 0.0;       // rho added to the covariance whitened
  bool ridge_added = false;
  arma::uword rank = 0;     // numerical rank of that covariance
  arma::uword n_chunklets = 0, n_points = 0;
  arma::uword span_rank = 0;
};

namespace detail {

// Within-chunklet covariance of the rows of X; counts the chunklets (>= 2
// points) and their points.
inline arma::mat chunklet_covariance(const arma::mat& X, const arma::uvec& chunks,
                                     arma::uword& n_chunklets, arma::uword& n_points) {
  const arma::uword p = X.n_cols;
  arma::mat C(p, p, arma::fill::zeros);
  n_chunklets = n_points = 0;
  const arma::uvec in = arma::find(chunks != no_chunk);
  if (in.n_elem == 0) return C;
  const arma::uvec ids = arma::unique(chunks.elem(in));
  for (const arma::uword id : ids) {
    const arma::uvec idx = arma::find(chunks == id);
    if (idx.n_elem < 2) continue;
    arma::mat Xj = X.rows(idx);
    Xj.each_row() -= arma::mean(Xj, 0);
    C += Xj.t() * Xj;
    ++n_chunklets;
    n_points += idx.n_elem;
  }
  if (n_points > 0) C /= static_cast<double>(n_points);
  return 0.5 * (C + C.t());
}

// Eigenvalues at or below 1e-10 times the largest count as zero.
inline arma::uword numerical_rank(const arma::vec& ev) {
  if (ev.n_elem == 0) return 0;
  const double top = ev.max();
  if (!(top > 0.0)) return 0;
  return static_cast<arma::uword>(arma::accu(ev > 1e-10 * top));
}

// (C + rho I)^{-1/2} (symmetric) with rho: `ridge` when >= 0, else
// 1e-6 times the largest eigenvalue when C is singular, else 0.
inline arma::mat inv_sqrt(const arma::mat& C, double ridge, rca_result& r,
                          const context& ctx) {
  const sym_eigen se(C, "rca", 0, ctx.interrupt);
  r.c_eigval = se.values();
  r.rank = numerical_rank(r.c_eigval);
  const double top = r.c_eigval.n_elem ? r.c_eigval.max() : 0.0;
  if (!(top > 0.0))
    throw error(error_kind::degenerate,
                "rca: the within-chunklet covariance is zero (every chunklet's points coincide)");
  if (ridge >= 0.0) {
    r.ridge = ridge;
  } else if (r.rank < C.n_rows) {
    r.ridge = 1e-6 * top;
  } else {
    r.ridge = 0.0;
  }
  r.ridge_added = r.ridge > 0.0;
  const arma::mat Q = se.vectors(0, C.n_rows);
  arma::vec w(C.n_rows);
  for (arma::uword i = 0; i < C.n_rows; ++i) {
    const double v = std::max(r.c_eigval[i], 0.0) + r.ridge;
    if (!(v > 0.0))
      throw error(error_kind::singular,
                  "rca: the within-chunklet covariance is singular; add a ridge");
    w[i] = 1.0 / std::sqrt(v);
  }
  arma::mat W = Q * arma::diagmat(w) * Q.t();
  return 0.5 * (W + W.t());
}

}  // namespace detail

// RCA on the rows of X with chunklet ids `chunks` (no_chunk: in none).
// dim = 0 or p: no reduction.  ridge < 0: automatic (see inv_sqrt()).  span,
// principal: as in lfda_fit().
inline rca_result rca_fit(const arma::mat& X, const arma::uvec& chunks, arma::uword dim,
                          double ridge, bool span, bool principal, const context& ctx) {
  const arma::uword n = X.n_rows, p = X.n_cols;
  if (chunks.n_elem != n) throw error("rca: one chunklet id per row of X is needed");
  if (dim > p) throw error("rca: dim exceeds the number of columns");
  rca_result r;
  const bool use_span = span && n > 0 && p >= n;
  row_span sp;
  const arma::mat* Xp = &X;
  if (use_span) {
    sp = principal ? principal_row_span(X, 1e-10)
                   : centred_row_span(X, ctx.kernels, 1e-10, "rca", ctx.interrupt);
    r.span_rank = sp.basis.n_cols;
    if (r.span_rank == 0) throw error(error_kind::degenerate, "rca: all rows of x are equal");
    Xp = &sp.coords;
  }
  const arma::uword q = Xp->n_cols;
  const arma::mat C = detail::chunklet_covariance(*Xp, chunks, r.n_chunklets, r.n_points);
  if (r.n_chunklets == 0)
    throw error(error_kind::degenerate, "rca: no chunklet has two or more points");
  check_interrupt(ctx.interrupt);
  arma::mat Lq;
  if (dim == 0 || dim >= q) {
    Lq = detail::inv_sqrt(C, ridge, r, ctx);
  } else {
    // Fisher-like reduction: top generalized eigenvectors of (S_t, C + rho I)
    arma::mat Xc = Xp->each_row() - arma::mean(*Xp, 0);
    arma::mat St = (Xc.t() * Xc) / static_cast<double>(n);
    St = 0.5 * (St + St.t());
    const sym_eigen sc(C, "rca", 0, ctx.interrupt);
    const double top = sc.values().n_elem ? sc.values().max() : 0.0;
    if (!(top > 0.0))
      throw error(error_kind::degenerate,
                  "rca: the within-chunklet covariance is zero (every chunklet's points coincide)");
    const double rho_f = ridge >= 0.0 ? ridge
                         : (detail::numerical_rank(sc.values()) < q ? 1e-6 * top : 0.0);
    arma::mat Cr = C;
    Cr.diag() += rho_f;
    arma::mat R;
    if (!arma::chol(R, Cr))
      throw error(error_kind::singular,
                  "rca: the within-chunklet covariance is singular; add a ridge");
    const arma::mat Rt = R.t();
    const arma::mat Y = arma::solve(arma::trimatl(Rt), St);
    arma::mat F = arma::solve(arma::trimatl(Rt), arma::mat(Y.t()));
    F = 0.5 * (F + F.t());
    const sym_eigen sf(F, "rca", 0, ctx.interrupt);
    r.fisher_eigval = arma::flipud(sf.values());
    arma::uvec idx(dim);
    for (arma::uword i = 0; i < dim; ++i) idx[i] = q - 1 - i;
    arma::mat V = arma::solve(arma::trimatu(R), sf.vectors(idx));
    // RCA in the reduced space
    arma::mat Cd = V.t() * C * V;
    Cd = 0.5 * (Cd + Cd.t());
    const arma::mat Wd = detail::inv_sqrt(Cd, ridge, r, ctx);
    Lq = Wd * V.t();
  }
  if (use_span) {
    r.L = Lq * sp.basis.t();
  } else {
    r.L = std::move(Lq);
    r.C = C;
  }
  return r;
}

}  // namespace kmaha

#endif  // KMAHA_RCA_HPP
