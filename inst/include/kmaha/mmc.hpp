// kmaha core: metric learning with side information (MMC; Xing, Ng, Jordan
// and Russell, 2003), the learner the paper cites.
//
// With similar pairs S and dissimilar pairs D (pairs.hpp) and d_ij = x_i -
// x_j, the paper's problem (its eqs. 5-7)
//
//   max_A g(A) = sum_{D} sqrt(d' A d)   s.t.   f(A) = sum_{S} d' A d <= 1,  A PSD,
//
// is its eqs. 2-4 (min f s.t. g >= 1) up to the scale of A.  g is concave, the
// constraints convex, so every local optimum is global; at the optimum the
// constraint f <= 1 is active (g grows with the scale of A).
//
// Full matrix (the paper's Fig. 1): from A = I / f(I), repeat
//   * a step along the gradient of g made orthogonal to the gradient of f,
//       A <- A + alpha (G - <G, S> / ||S||^2 S),  G = sum_D d d' / (2 sqrt(d'Ad)),
//     S = sum_S d d' (so the step keeps f to first order);
//   * the projections onto C1 = {f <= 1} (an affine half-space) and C2 = the
//     positive semi-definite cone (eigenvalues clipped at 0, symeig.hpp),
//     alternated until f <= 1 (1e-8 relative) or 50 rounds, then A / f(A) when
//     f(A) != 1: a feasible point with the constraint active (scaling keeps A
//     PSD and g grows with it);
//   the step is kept when g increased (alpha then grows by 1.5), else undone
//   and alpha halved (the first alpha gives a first-order gain of g / 10,
//   a rule that does not depend on the coordinates); the run stops when an
//   accepted step improves g by less than tol relative, or alpha shrinks
//   until the step's first-order gain is below 1e-14 g.
//   When the optimum is of low rank (common: g is not smooth where a
//   dissimilar pair's distance vanishes), the last digits of g come slowly.
//
// Diagonal matrix (the paper's section 2.2): A = diag(a), minimise
//   h(a) = f(a) - log g(a),  a >= 0,
// by L-BFGS (the caller's minimiser, minimizer.hpp) in a = w^2 (w free), so no
// bound is needed.  Over the scale of a, h is smallest where f = 1/2 and then
// equals a constant - log(g / sqrt(f)): the minimiser of h, rescaled to f = 1,
// solves eqs. 5-7 restricted to diagonal matrices, and that is what is
// returned (h is reported at its minimiser).  A column in which no similar
// pair differs (s_j = 0 to rounding) but some dissimilar pair does leaves h
// without a minimum: raising a_j lowers h without bound, and the minimiser
// runs off with a_j, driving the other weights to 0 beside it (1-NN then
// sees that column alone).  Such columns get weight 0, the problem is solved
// on the others (where it has a minimum), and they are reported in
// `unbounded`.
//
// p >= n (full matrix): every d lies in the span of the centred rows, as do
// S, G and every update; the problem is solved on the coordinates in that span
// (span.hpp) and the map returned acts on all p columns (at most r rows).  The
// full-dimension solution differs from it only off the span, where its A is
// the start's multiple of the identity: a term that is the same for every
// training point, so nearest neighbours among them do not change.
#ifndef KMAHA_MMC_HPP
#define KMAHA_MMC_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#include "minimizer.hpp"
#include "pairs.hpp"
#include "span.hpp"

namespace kmaha {

struct mmc_result {
  arma::mat L;               // d x p map
  arma::mat M;               // full: the p x p metric (empty in the span)
  arma::vec a;               // diagonal: the weights
  double objective = 0.0;    // g: sum over dissimilar pairs of the distance
  double constraint = 0.0;   // f: sum over similar pairs of the squared distance
  double h = 0.0;            // diagonal: the paper's h at its minimiser
  int iterations = 0;
  bool converged = false;
  std::string stop;
  std::vector<double> trace;  // g after each accepted step (full) or h per evaluation
  arma::uword span_rank = 0;
  arma::uvec unbounded;      // diagonal: the columns left at weight 0, along
                             // which h has no minimum (0-based)
};

namespace detail {

// g(A) and the weights 1 / (2 sqrt(d'Ad)) of G = Dd' diag(w) Dd (0 for a
// pair at distance 0, which adds nothing to g).
inline double mmc_g(const arma::mat& Dd, const arma::mat& A, arma::vec& w) {
  const arma::vec q = arma::sum((Dd * A) % Dd, 1);
  w.set_size(q.n_elem);
  double g = 0.0;
  for (arma::uword k = 0; k < q.n_elem; ++k) {
    if (q[k] > 0.0) {
      const double s = std::sqrt(q[k]);
      g += s;
      w[k] = 0.5 / s;
    } else {
      w[k] = 0.0;
    }
  }
  return g;
}

// The projections onto C1 and C2 as described above; f(A) = <A, S> = 1 after.
inline arma::mat mmc_project(arma::mat A, const arma::mat& S, double s2, const context& ctx) {
  for (int round = 0; round < 50; ++round) {
    const double f = arma::accu(A % S);
    if (f > 1.0) A -= ((f - 1.0) / s2) * S;
    A = psd_projection(A, "mmc", ctx);
    if (arma::accu(A % S) <= 1.0 + 1e-8) break;
  }
  const double f = arma::accu(A % S);
  if (!(f > 0.0))
    throw error(error_kind::numerical, "mmc: the metric collapsed on the similar pairs");
  return A / f;
}

}  // namespace detail

// Full-matrix MMC on the differences of the similar (Ds) and dissimilar (Dd)
// pairs, one per row, in q coordinates.
inline mmc_result mmc_full_on(const arma::mat& Ds, const arma::mat& Dd, int max_iter,
                              double tol, const context& ctx) {
  const arma::uword q = Ds.n_cols;
  mmc_result r;
  arma::mat S = Ds.t() * Ds;
  S = 0.5 * (S + S.t());
  const double s2 = arma::accu(S % S);
  const double trS = arma::trace(S);
  if (!(trS > 0.0))
    throw error(error_kind::degenerate, "mmc: every similar pair is a pair of equal points");
  arma::mat A = arma::eye(q, q) / trS;
  arma::vec w;
  double g = detail::mmc_g(Dd, A, w);
  if (!(g > 0.0))
    throw error(error_kind::degenerate, "mmc: every dissimilar pair is a pair of equal points");
  r.trace.push_back(g);
  double alpha = -1.0;
  r.stop = "iteration limit";
  for (int it = 0; it < max_iter; ++it) {
    check_interrupt(ctx.interrupt);
    arma::mat G = Dd.t() * arma::diagmat(w) * Dd;
    G -= (arma::accu(G % S) / s2) * S;
    G = 0.5 * (G + G.t());
    const double gg = arma::accu(G % G);
    if (!(gg > 0.0)) {
      r.converged = true;
      r.stop = "gradient";
      break;
    }
    // first step: a first-order gain of a tenth of g
    if (alpha < 0.0) alpha = 0.1 * g / gg;
    bool accepted = false;
    while (!accepted) {
      if (alpha * gg <= 1e-14 * g) break;
      const arma::mat At = detail::mmc_project(A + alpha * G, S, s2, ctx);
      arma::vec wt;
      const double gt = detail::mmc_g(Dd, At, wt);
      if (gt > g) {
        accepted = true;
        const double gain = (gt - g) / g;
        A = At;
        w = std::move(wt);
        g = gt;
        r.trace.push_back(g);
        alpha *= 1.5;
        ++r.iterations;
        if (gain < tol) {
          r.converged = true;
          r.stop = "tolerance";
        }
      } else {
        alpha *= 0.5;
      }
    }
    if (!accepted) {
      r.converged = true;
      r.stop = "step size";
      break;
    }
    if (r.converged) break;
  }
  r.M = A;
  r.objective = g;
  r.constraint = arma::accu(A % S);
  return r;
}

// Full-matrix MMC on the rows of X (n x p) with pairs ps.  span: solve in
// the span of the centred rows when p >= n (false: always on all p
// coordinates, a reference for tests).
inline mmc_result mmc_full(const arma::mat& X, const pair_set& ps, int max_iter, double tol,
                           bool span, const context& ctx) {
  const arma::uword n = X.n_rows, p = X.n_cols;
  const bool use_span = span && n > 0 && p >= n;
  if (use_span) {
    const row_span sp = centred_row_span(X, ctx.kernels, 1e-10, "mmc", ctx.interrupt);
    if (sp.basis.n_cols == 0) throw error(error_kind::degenerate, "mmc: all rows of x are equal");
    mmc_result r = mmc_full_on(pair_differences(sp.coords, ps, 1.0),
                               pair_differences(sp.coords, ps, -1.0), max_iter, tol, ctx);
    r.span_rank = sp.basis.n_cols;
    r.L = detail::metric_map(r.M, "mmc", ctx) * sp.basis.t();
    r.M.reset();
    return r;
  }
  mmc_result r = mmc_full_on(pair_differences(X, ps, 1.0), pair_differences(X, ps, -1.0),
                             max_iter, tol, ctx);
  r.L = detail::metric_map(r.M, "mmc", ctx);
  return r;
}

namespace detail {
// The paper's diagonal objective h(a) = s'a - log(sum_k sqrt(Q_k a)) with s
// the column sums of the squared similar differences and Q the squared
// dissimilar differences (one row per pair); its gradient in a.
inline double mmc_diag_h(const arma::vec& s, const arma::mat& Q, const arma::vec& a,
                         arma::vec& grad) {
  const arma::vec q = Q * a;
  double g = 0.0;
  arma::vec w(q.n_elem);
  for (arma::uword k = 0; k < q.n_elem; ++k) {
    if (q[k] > 0.0) {
      const double t = std::sqrt(q[k]);
      g += t;
      w[k] = 0.5 / t;
    } else {
      w[k] = 0.0;
    }
  }
  if (!(g > 0.0)) {
    grad.set_size(a.n_elem);
    grad.fill(arma::datum::nan);
    return arma::datum::inf;
  }
  grad = s - (Q.t() * w) / g;
  return arma::dot(s, a) - std::log(g);
}
}  // namespace detail

// The diagonal objective and its gradient on the rows of X (a test hook).
inline double mmc_diag_objective(const arma::mat& X, const pair_set& ps, const arma::vec& a,
                                 arma::vec& grad) {
  const arma::mat Ds = pair_differences(X, ps, 1.0);
  const arma::mat Dd = pair_differences(X, ps, -1.0);
  const arma::vec s = arma::sum(arma::square(Ds), 0).t();
  return detail::mmc_diag_h(s, arma::square(Dd), a, grad);
}

// Diagonal MMC on the rows of X with the caller's minimiser.
inline mmc_result mmc_diag(const arma::mat& X, const pair_set& ps, int max_iter, double tol,
                           const minimizer_fn& minimize, const context& ctx) {
  const arma::mat Ds = pair_differences(X, ps, 1.0);
  const arma::mat Dd = pair_differences(X, ps, -1.0);
  const arma::vec s = arma::sum(arma::square(Ds), 0).t();
  const arma::mat Q = arma::square(Dd);
  const double ss = arma::accu(s);
  if (!(ss > 0.0))
    throw error(error_kind::degenerate, "mmc: every similar pair is a pair of equal points");
  if (!(arma::accu(Q) > 0.0))
    throw error(error_kind::degenerate, "mmc: every dissimilar pair is a pair of equal points");
  const arma::uword p = X.n_cols;
  // The columns along which h has a minimum, and those along which it has
  // none (no similar pair differs there, to rounding, and a dissimilar pair
  // does).
  const arma::rowvec qsum = arma::sum(Q, 0);
  const double eps = std::numeric_limits<double>::epsilon();
  std::vector<arma::uword> kept, unbounded;
  for (arma::uword j = 0; j < p; ++j) {
    if (s[j] <= eps * s.max() && qsum[j] > eps * qsum.max())
      unbounded.push_back(j);
    else
      kept.push_back(j);
  }
  const arma::uvec keep(kept);
  const arma::vec sk = s.elem(keep);
  const arma::mat Qk = Q.cols(keep);
  if (!(arma::accu(Qk) > 0.0))
    throw error(error_kind::degenerate,
                "mmc: the dissimilar pairs differ only in columns in which no similar pair "
                "differs, so the diagonal objective has no minimum: give similar pairs that "
                "differ in those columns");
  // start: a = 1 scaled to f = 1/2, the best scale of the direction
  const arma::vec w0 = arma::vec(keep.n_elem, arma::fill::ones) * std::sqrt(0.5 / ss);
  const objective_fn fw = [&](const arma::vec& w, arma::vec& gw) {
    check_interrupt(ctx.interrupt);
    arma::vec ga;
    const double v = detail::mmc_diag_h(sk, Qk, arma::square(w), ga);
    gw = 2.0 * (w % ga);
    return v;
  };
  const minimize_result mr = minimize(fw, w0, max_iter, tol);
  mmc_result r;
  r.a.zeros(p);
  r.a.elem(keep) = arma::square(mr.par);
  r.unbounded = arma::uvec(unbounded);
  arma::vec ga;
  r.h = detail::mmc_diag_h(s, Q, r.a, ga);
  r.iterations = mr.evaluations;
  r.converged = mr.converged;
  r.stop = mr.stop;
  r.trace = mr.trace;
  const double f = arma::dot(s, r.a);
  if (!(f > 0.0)) throw error(error_kind::numerical, "mmc: the diagonal metric collapsed");
  r.a /= f;
  r.constraint = arma::dot(s, r.a);
  const arma::vec q = Q * r.a;
  r.objective = arma::accu(arma::sqrt(arma::clamp(q, 0.0, arma::datum::inf)));
  const arma::uvec pos = arma::find(r.a > 0.0);
  r.L.zeros(pos.n_elem, p);
  for (arma::uword i = 0; i < pos.n_elem; ++i) r.L(i, pos[i]) = std::sqrt(r.a[pos[i]]);
  return r;
}

}  // namespace kmaha

#endif  // KMAHA_MMC_HPP
