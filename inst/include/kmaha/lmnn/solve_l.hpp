// kmaha core, LMNN: the solver over L (d x D, M = L'L), low-rank and
// non-convex, driven by a quasi-Newton minimiser that the caller supplies
// (L-BFGS in the R glue).
#ifndef KMAHA_LMNN_SOLVE_L_HPP
#define KMAHA_LMNN_SOLVE_L_HPP

#include <algorithm>
#include <functional>
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
using minimizer_fn = std::function<inner_result(
    std::function<double(const arma::vec&, arma::vec&)>, const arma::vec&,
    unsigned /* max iterations */)>;

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
inline result solve_L(const problem& P, arma::mat L, const options& o,
                      const minimizer_fn& minimize,
                      const context& ctx,
                      const progress_fn& progress = no_progress) {
  result res;
  const arma::uword D = P.Xt.n_rows, d = L.n_rows, n = P.Xt.n_cols;
  if (L.n_cols != D || d == 0) throw error("lmnn: initial L has wrong size");
  workspace ws(ctx.isa);
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
  A = refresh(L);
  choose(A);
  eval_out ev = eval(L, nullptr, eps);
  double f = ev.value;
  arma::mat L_ref = L;  // last refresh point and its objective
  double f_ref = f;
  res.trace.push_back(ev.exact);
  progress(0, ev.exact, 0.0, A.size());
  unsigned used = 0;
  // the objective is never negative: zero is the global minimum
  bool converged = ev.exact == 0.0;
  std::string msg = converged ? "zero objective at the start" : "";
  // The end of a smoothing stage: the next one (less smoothing, finally
  // none), or convergence.  Returns true when converged.
  auto next_stage = [&](const std::string& why) {
    if (eps > 0.0 && ev.triples > 0) {
      eps = eps > o.smooth_min ? eps * o.smooth_factor : 0.0;
      ev = eval(L, nullptr, eps);
      f = ev.value;
      f_ref = f;
      return false;
    }
    msg = why;
    return true;
  };
  while (!converged && used < o.max_iter) {
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
    inner_result ir = minimize(fg, arma::vectorise(L), budget);
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
      if (ir.stopped && (converged = next_stage(ir.message))) break;
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
    if (!missed && ir.stopped && (converged = next_stage(ir.message))) break;
  }
  if (!converged) msg = "iteration limit reached";
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
