// kmaha core, LMNN: the solver over L (d x D, M = L'L), non-convex,
// driven by a quasi-Newton minimiser that the caller supplies (L-BFGS in the
// R glue), with a low-rank mode for the regularised problem.
#ifndef KMAHA_LMNN_SOLVE_L_HPP
#define KMAHA_LMNN_SOLVE_L_HPP

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>
#include "impostors.hpp"
#include "objective.hpp"
#include "problem.hpp"

namespace kmaha {
namespace lmnn {

// Result of one run of the caller's minimiser.
struct inner_result {
  arma::vec par;
  unsigned evaluations = 0;
  bool stopped = false;  // true when the minimiser stopped by its own test
  std::string message;
  std::vector<double> trace;
};
// The caller's minimiser: (objective and gradient, start, maximum number of
// evaluations, relative tolerance) -> result.  It stops by its own test when
// one iteration lowers the objective by less than the tolerance (relative).
using minimizer_fn = std::function<inner_result(
    std::function<double(const arma::vec&, arma::vec&)>, const arma::vec&,
    unsigned /* max evaluations */, double /* relative tolerance */)>;

// The eigenvectors (as rows, most negative first) of the symmetric matrix G
// whose eigenvalues lie below -thr, at most k of them.  For D above 64 by
// the Lanczos method with full reorthogonalisation from a fixed start
// (m = min(D, 2k + 40) steps; the extreme eigenvalues, which these are,
// converge first), otherwise by a full eigendecomposition.
inline arma::mat negative_directions(const arma::mat& G, arma::uword k,
                                     double thr) {
  const arma::uword D = G.n_rows;
  arma::vec s;
  arma::mat V;
  const arma::uword m = std::min<arma::uword>(D, 2 * k + 40);
  if (D <= 64 || m >= D) {
    if (!arma::eig_sym(s, V, G)) throw error(error_kind::numerical, "lmnn: eigendecomposition failed");
  } else {
    arma::mat Q(D, m + 1);
    arma::vec alpha(m), beta(m);
    // a fixed start with every component present
    arma::vec q(D);
    for (arma::uword i = 0; i < D; ++i) q[i] = 1.0 + 0.5 * std::sin(1.0 + 7.0 * static_cast<double>(i));
    Q.col(0) = q / arma::norm(q);
    arma::uword steps = 0;
    for (arma::uword j = 0; j < m; ++j) {
      arma::vec w = G * Q.col(j);
      alpha[j] = arma::dot(w, Q.col(j));
      // full reorthogonalisation, twice
      for (int pass = 0; pass < 2; ++pass) {
        const arma::vec c = Q.cols(0, j).t() * w;
        w -= Q.cols(0, j) * c;
      }
      beta[j] = arma::norm(w);
      steps = j + 1;
      if (!(beta[j] > 1e-12 * std::max(1.0, std::abs(alpha[j])))) break;
      Q.col(j + 1) = w / beta[j];
    }
    arma::mat T(steps, steps, arma::fill::zeros);
    for (arma::uword j = 0; j < steps; ++j) {
      T(j, j) = alpha[j];
      if (j + 1 < steps) T(j, j + 1) = T(j + 1, j) = beta[j];
    }
    arma::mat Y;
    if (!arma::eig_sym(s, Y, T)) throw error(error_kind::numerical, "lmnn: eigendecomposition failed");
    V = Q.cols(0, steps - 1) * Y;
  }
  arma::uword n_neg = 0;
  while (n_neg < s.n_elem && n_neg < k && s[n_neg] < -thr) ++n_neg;
  arma::mat Vt(n_neg, D);
  for (arma::uword c = 0; c < n_neg; ++c) Vt.row(c) = arma::normalise(V.col(c)).t();
  return Vt;
}

// Solver over L (d x D, M = L'L): L-BFGS (the caller's minimiser) on the
// smoothed objective, with a continuation on the smoothing.
//
// Impostors are handled in one of three ways, re-decided at each refresh:
//  * exact, expanded: when n <= o.dense_max and the impostor pairs are a
//    large share of all pairs (typical of kernel PCA coordinates and small
//    training sets), every evaluation visits every pair by the blocked
//    search, with distances read off its products, so the objective is
//    exact and the minimiser runs without interruption;
//  * active set: otherwise evaluations visit an active set of pairs,
//    refreshed by a full search after at most o.inner evaluations; a
//    refresh that shows a higher objective than at the previous refresh
//    (impostors the set missed) sends the solver back there with the union
//    of both sets;
//  * exact, searched: when the active set would exceed o.max_pairs, every
//    evaluation searches all pairs (memory stays linear in n).
// A smoothing stage ends when the minimiser stops by its own test (and, with
// an active set, the refresh finds nothing missed); convergence is declared
// at the end of the exact-hinge stage.
//
// Low-rank mode (low_rank = true; fit() chooses it for the regularised
// problem in whitened coordinates, P.unit_quadratic, started from the
// identity).  The regulariser lambda tr(M) makes the optimal M of low rank
// (typically 5-30 on kernel PCA coordinates with D about 200), and every
// evaluation costs in proportion to the rows of L.  So:
//  * the start is not the identity but the directions of steepest descent
//    at M = 0: the eigenvectors of the gradient with respect to M there
//    with the most negative eigenvalues (at most o.rank_start of them),
//    scaled along the ray by a geometric search on the smoothed objective;
//  * at the end of each smoothed stage, rows whose singular values fall
//    below o.rank_tol of the largest are dropped, and the point is tested
//    for optimality over all M: the smoothed objective is differentiable
//    and convex in M, so a point is optimal when its gradient G with respect
//    to M is positive semi-definite (it vanishes on the range of M at a
//    stationary point of the L-form).  The eigenvectors of eigenvalues of G
//    below -o.rank_check (at most o.rank_step) are added as small rows and
//    the stage goes on (at most o.rank_rounds times per stage);
//  * every run of the minimiser stops at o.rank_tol_factor times o.tol, as
//    runs are cheap here;
//  * the map returned has d rows as asked, the dropped ones zero.
inline result solve_L(const problem& P, arma::mat L, const options& o,
                      const minimizer_fn& minimize, const context& ctx,
                      const progress_fn& progress, bool low_rank) {
  result res;
  const arma::uword D = P.Xt.n_rows, d0 = L.n_rows, n = P.Xt.n_cols;
  if (L.n_cols != D || d0 == 0) throw error("lmnn: initial L has wrong size");
  workspace ws(ctx.kernels);
  ws.dense_max = o.dense_max;
  options oc = o;
  if (oc.max_pairs == 0) oc.max_pairs = std::max<std::size_t>(std::size_t(1) << 23, 512 * n);
  auto refresh = [&](const arma::mat& Lc) {
    ++res.refreshes;
    return refresh_impostors(P, Lc, oc, ctx);
  };
  // exact: every evaluation covers all pairs by the blocked search (gram:
  // distances read off its products); else the active set A.
  bool exact = false, gram = false;
  auto choose = [&](const active_set& S) {
    gram = n <= o.dense_max &&
           static_cast<double>(S.found) >= o.dense_share * static_cast<double>(n) * n;
    exact = gram || S.overflow;
  };
  active_set A;
  auto eval = [&](const arma::mat& Lx, arma::mat* g, double e) {
    return evaluate_L(P, Lx, exact ? nullptr : &A, g, e, o.block, ctx.interrupt, ws,
                      gram);
  };
  double eps = o.smooth0;  // smoothing of the hinge (continuation to 0)
  unsigned used = 0;       // evaluations
  const double tol = low_rank ? o.tol * o.rank_tol_factor : o.tol;
  // Low rank: directions (rows) in which the gradient with respect to M at
  // Lc has eigenvalues below -o.rank_check, most negative first, at most cap.
  auto descent_directions = [&](const arma::mat& Lc, arma::uword cap) {
    const arma::mat G = m_gradient(P, Lc, exact ? nullptr : &A, eps, o.block,
                                   ctx.interrupt, ws);
    ++res.evaluations;
    return negative_directions(G, cap, o.rank_check);
  };
  if (low_rank) {
    exact = true;  // (the start's evaluations visit all pairs)
    const arma::mat L1 = descent_directions(arma::mat(1, D, arma::fill::zeros),
                                            std::min<arma::uword>(d0, o.rank_start));
    if (L1.n_rows > 0) {
      double best = std::numeric_limits<double>::infinity(), tb = 1.0;
      for (double t = 1.0 / 64; t <= 64.0; t *= 2.0) {
        const double v = eval(t * L1, nullptr, eps).value;
        ++used;
        if (!(v < best)) break;
        best = v;
        tb = t;
      }
      L = tb * L1;
    }
    // (no direction of descent at M = 0: the start given)
  }
  A = refresh(L);
  choose(A);
  eval_out ev = eval(L, nullptr, eps);
  double f = ev.value;
  arma::mat L_ref = L;  // last refresh point and its objective
  double f_ref = f;
  res.trace.push_back(ev.exact);
  progress(0, ev.exact, 0.0, A.size());
  // the objective is never negative: zero is the global minimum
  bool converged = ev.exact == 0.0;
  std::string msg = converged ? "zero objective at the start" : "";
  // Low rank: drop the rows of L that the solution does not need.
  auto truncate = [&]() {
    if (!low_rank || L.n_rows <= 1) return;
    arma::mat U, V;
    arma::vec s;
    if (!arma::svd_econ(U, s, V, L, "right")) throw error("lmnn: SVD failed");
    const arma::uword r = arma::accu(s > o.rank_tol * s[0]);
    if (r == 0 || r >= L.n_rows) return;
    L = arma::diagmat(s.head(r)) * V.cols(0, r - 1).t();
    ev = eval(L, nullptr, eps);
    f = ev.value;
  };
  unsigned rounds = 0;  // rank tests in this stage
  // Low rank, at the end of a smoothed stage: drop unneeded rows, then add
  // the directions in which M can still descend.  Returns true when rows
  // were added (the stage goes on).
  auto rank_up = [&]() -> bool {
    if (!low_rank || !(eps > 0.0) || rounds >= o.rank_rounds) return false;
    ++rounds;
    truncate();
    if (L.n_rows >= d0) return false;
    const arma::mat Vn = descent_directions(L, std::min<arma::uword>(d0 - L.n_rows, o.rank_step));
    if (Vn.n_rows == 0) return false;
    L = arma::join_cols(L, (o.rank_scale * arma::norm(L, 2)) * Vn);
    ev = eval(L, nullptr, eps);
    f = ev.value;
    f_ref = f;
    L_ref = L;
    return true;
  };
  // The end of a smoothing stage: the next one (less smoothing, finally
  // none), or convergence.  Returns true when converged.
  auto next_stage = [&](const std::string& why) {
    if (eps > 0.0 && ev.triples > 0) {
      truncate();
      eps = eps > o.smooth_min ? eps * o.smooth_factor : 0.0;
      rounds = 0;
      ev = eval(L, nullptr, eps);
      f = ev.value;
      f_ref = f;
      L_ref = L;
      return false;
    }
    msg = why;
    return true;
  };
  while (!converged && used < o.max_iter) {
    const arma::uword d = L.n_rows;
    auto fg = [&](const arma::vec& x, arma::vec& g) {
      const arma::mat Lx(const_cast<double*>(x.memptr()), d, D, false, true);
      arma::mat GL;
      const eval_out e = eval(Lx, &GL, eps);
      res.trace.push_back(e.exact);
      g = arma::vectorise(GL);
      return e.value;
    };
    const unsigned left = o.max_iter - used;
    const unsigned budget = exact ? left : std::min(o.inner, left);
    inner_result ir = minimize(fg, arma::vectorise(L), budget, tol);
    used += std::max(1u, ir.evaluations);
    arma::mat Ln = arma::reshape(ir.par, d, D);
    const eval_out eo = eval(Ln, nullptr, eps);
    // keep the better of old and new (the minimiser returns its best point)
    if (eo.value <= f) {
      L = std::move(Ln);
      f = eo.value;
      ev = eo;
    }
    check_interrupt(ctx.interrupt);
    if (exact) {
      res.trace.push_back(ev.exact);
      progress(used, ev.exact, 0.0, A.size());
      if (ir.stopped && !rank_up() && (converged = next_stage(ir.message))) break;
      continue;
    }
    active_set An = refresh(L);
    const eval_out er = evaluate_L(P, L, An.overflow ? nullptr : &An, nullptr,
                                   eps, o.block, ctx.interrupt, ws);
    if (relative_gt(er.value, f_ref)) {
      // missed impostors made the objective rise: go back with both sets
      A = An.overflow ? std::move(An) : merge_sets(A, An, n);
      L = L_ref;
      choose(A);
      ev = eval(L, nullptr, eps);
      f = ev.value;
      res.trace.push_back(ev.exact);
      continue;
    }
    const bool missed = relative_gt(er.value, f);
    A = std::move(An);
    choose(A);
    ev = exact ? eval(L, nullptr, eps) : er;
    f = ev.value;
    L_ref = L;
    f_ref = f;
    res.trace.push_back(ev.exact);
    progress(used, ev.exact, 0.0, A.size());
    if (!missed && ir.stopped && !rank_up() && (converged = next_stage(ir.message))) break;
  }
  if (!converged) msg = "iteration limit reached";
  if (L.n_rows < d0) L = arma::join_cols(L, arma::mat(d0 - L.n_rows, D, arma::fill::zeros));
  res.L = L;
  res.M = L.t() * L;
  res.iterations = used;
  res.objective = ev.exact;
  res.converged = converged;
  res.message = msg;
  res.active_pairs = A.found;
  res.active_triples = ev.triples;
  return res;
}

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_SOLVE_L_HPP
