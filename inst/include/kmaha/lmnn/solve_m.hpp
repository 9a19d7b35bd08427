// kmaha core, LMNN: the convex solver over M (D x D, PSD).
//
// Projected sub-gradient steps (projection = eigendecomposition with
// negative eigenvalues clipped) with Nesterov momentum and an adaptive step
// size (grow after an accepted step; after a rejected one undo it and
// restart the momentum, or halve the step when a plain step failed; after a
// plain step succeeds the step is doubled while that helps), non-monotone
// acceptance over a short window, a change of variables that whitens the
// pull term (solve_M), and a continuation on a smoothed hinge (quadratic
// within eps of the kink; eps = 0.5, 0.05, then the exact hinge) so that
// the iterates do not stall at kinks.  Impostors live in an active set of
// pairs refreshed periodically by the blocked all-pairs search; a refresh
// that shows a higher objective than the previous one sends the solver back
// there with the union of both sets.  Convergence is declared only after a
// full refresh finds no violating pair missing from the set.
#ifndef KMAHA_LMNN_SOLVE_M_HPP
#define KMAHA_LMNN_SOLVE_M_HPP

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include "impostors.hpp"
#include "objective.hpp"
#include "problem.hpp"

namespace kmaha {
namespace lmnn {

// Projection of a symmetric matrix onto the PSD cone, returning the factor
// L = Lambda^{1/2} V' (rows for eigenvalues above a relative threshold,
// largest first; at least one row).
inline arma::mat psd_project(arma::mat& M) {
  M = 0.5 * (M + M.t());
  arma::vec ev;
  arma::mat V;
  if (!arma::eig_sym(ev, V, M)) throw error(error_kind::numerical, "lmnn: eigendecomposition failed");
  const arma::uword D = M.n_rows;
  const double top = std::max(0.0, ev.max());
  const double cut = top * 1e-12;
  arma::uword r = 0;
  for (arma::uword q = 0; q < D; ++q)
    if (ev[q] > cut && ev[q] > 0.0) ++r;
  if (r == 0) {
    M.zeros();
    return arma::mat(1, D, arma::fill::zeros);
  }
  arma::mat L(r, D);
  arma::uword row = 0;
  for (arma::uword q = D; q-- > 0;) {
    if (!(ev[q] > cut && ev[q] > 0.0)) continue;
    L.row(row++) = std::sqrt(ev[q]) * V.col(q).t();
  }
  M = L.t() * L;
  M = 0.5 * (M + M.t());
  return L;
}

// Convex solver over M (in the coordinates of P).
//
// Between refreshes the objective is evaluated on the active set only, which
// can miss impostors that the moving metric brings in.  Each refresh
// evaluates the exact objective; if it is higher than at the previous
// refresh, the solver returns to that point, keeps the union of both sets
// (so the same impostors cannot be missed twice) and halves the step.  The
// exact objective is therefore non-increasing from refresh to refresh.  A
// refresh is also forced when M has moved by more than o.change (relative
// Frobenius norm) since the last one.
inline result solve_M_plain(const problem& P, arma::mat M, const options& o,
                            const context& ctx,
                            const progress_fn& progress = no_progress) {
  result res;
  const arma::uword D = P.Xt.n_rows, n = P.Xt.n_cols;
  if (M.n_rows != D || M.n_cols != D) throw error("lmnn: initial M has wrong size");
  arma::mat L = psd_project(M);
  workspace ws(ctx.kernels);
  options oc = o;  // this solver always keeps every pair it finds
  oc.max_pairs = std::numeric_limits<std::size_t>::max();
  auto refresh = [&](const arma::mat& Lc) {
    ++res.refreshes;
    return refresh_impostors(P, Lc, oc, ctx);
  };
  active_set A = refresh(L);
  arma::mat G;
  double eps = o.smooth0;  // smoothing of the hinge (continuation to 0)
  eval_out ev = evaluate(P, L, &A, &G, nullptr, eps, o.block, ctx.interrupt, ws);
  double f = ev.value;
  // the last refresh point: exact objective there
  arma::mat M_ref = M, L_ref = L;
  double f_ref = f;
  res.trace.push_back(ev.exact);
  progress(0, ev.exact, 0.0, A.size());
  const double gnorm = arma::norm(G, "fro");
  const double m_scale = std::max(arma::norm(M, "fro"), 1e-300);
  double alpha = gnorm > 0.0 ? 0.01 * m_scale / gnorm : 0.0;
  unsigned interval = std::max(1u, o.refresh), since = 0, it = 0, stall = 0;
  bool converged = gnorm == 0.0;
  std::string msg = converged ? "zero gradient at the start" : "";
  arma::mat Mprev = M;
  double tk = 1.0;  // Nesterov's sequence; momentum (t_{k-1} - 1) / t_{k}
  arma::mat M_best = M, L_best = L;  // best point since the last refresh
  double f_best = f;
  std::deque<double> hist(1, f);     // last accepted values
  while (!converged && it < o.max_iter) {
    ++it;
    check_interrupt(ctx.interrupt);
    const double tn = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * tk * tk));
    const double beta = o.momentum ? (tk - 1.0) / tn : 0.0;
    arma::mat Mn = M - alpha * G;
    if (beta > 0.0) Mn += beta * (M - Mprev);
    arma::mat Ln = psd_project(Mn);
    arma::mat Gn;
    eval_out en = evaluate(P, Ln, &A, &Gn, nullptr, eps, o.block, ctx.interrupt, ws);
    ++res.evaluations;
    if (beta == 0.0 && en.value <= f && o.expand > 0) {
      // A plain step succeeded (start, or after a restart): double the step
      // while that keeps lowering the objective.
      for (unsigned e = 0; e < o.expand; ++e) {
        check_interrupt(ctx.interrupt);
        arma::mat Mt = M - 2.0 * alpha * G;
        arma::mat Lt = psd_project(Mt);
        arma::mat Gt;
        const eval_out et = evaluate(P, Lt, &A, &Gt, nullptr, eps, o.block, ctx.interrupt, ws);
        ++res.evaluations;
        if (!(et.value < en.value)) break;
        alpha *= 2.0;
        Mn = std::move(Mt);
        Ln = std::move(Lt);
        Gn = std::move(Gt);
        en = et;
      }
    }
    const double step = arma::norm(Mn - M, "fro");
    bool small = false;
    const double fmax = *std::max_element(hist.begin(), hist.end());
    if (en.value <= fmax) {
      // non-monotone acceptance: not above the worst of the last few
      // accepted values (lets the iterates cross kinks of the hinges)
      const double rel = (f_best - en.value) / std::max(std::abs(f_best), 1e-300);
      stall = rel < o.tol ? stall + 1 : 0;
      if (en.value < f_best) {
        f_best = en.value;
        M_best = Mn;
        L_best = Ln;
      }
      hist.push_back(en.value);
      if (hist.size() > o.window) hist.pop_front();
      Mprev = std::move(M);
      M = std::move(Mn);
      L = std::move(Ln);
      G = std::move(Gn);
      f = en.value;
      ev = en;
      alpha *= o.grow;
      tk = tn;
    } else {
      // undo; restart the momentum, and shrink the step if it was a plain
      // sub-gradient step that failed
      if (beta == 0.0) alpha *= o.shrink;
      tk = 1.0;
      Mprev = M;
    }
    if (stall >= o.patience) small = true;
    // a plain step too small to change M: nothing more to gain
    if (beta == 0.0 && step <= o.tol * std::max(arma::norm(M, "fro"), 1e-6 * m_scale))
      small = true;
    ++since;
    const bool moved = arma::norm(M - M_ref, "fro") >
                       o.change * std::max(arma::norm(M_ref, "fro"), 1e-300);
    if (since >= interval || small || moved) {
      if (f_best < f) {  // continue from the best point seen
        M = M_best;
        L = L_best;
        Mprev = M;
        tk = 1.0;
      }
      active_set An = refresh(L);
      arma::mat Gr;
      const eval_out er = evaluate(P, L, &An, &Gr, nullptr, eps, o.block, ctx.interrupt, ws);
      since = 0;
      if (relative_gt(er.value, f_ref)) {
        // missed impostors made the exact objective rise: go back
        A = merge_sets(A, An, n);
        M = M_ref;
        L = L_ref;
        ev = evaluate(P, L, &A, &G, nullptr, eps, o.block, ctx.interrupt, ws);
        f = ev.value;
        alpha *= o.shrink;
        tk = 1.0;
        Mprev = M;
        stall = 0;
        interval = std::max(1u, o.refresh);
      } else {
        const bool missed = relative_gt(er.value, f);
        A = std::move(An);
        G = std::move(Gr);
        f = er.value;
        ev = er;
        M_ref = M;
        L_ref = L;
        f_ref = f;
        if (missed) {
          stall = 0;
          tk = 1.0;
          Mprev = M;
          interval = std::max(1u, o.refresh);
        } else {
          interval = std::min(2 * interval, std::max(o.refresh, o.max_refresh));
          if (small && eps > 0.0) {
            // next continuation stage: less smoothing (finally none)
            eps = eps > o.smooth_min ? eps * o.smooth_factor : 0.0;
            ev = evaluate(P, L, &A, &G, nullptr, eps, o.block, ctx.interrupt, ws);
            f = ev.value;
            f_ref = f;
            stall = 0;
            tk = 1.0;
            Mprev = M;
          } else if (small) {
            converged = true;
            msg = "relative objective change below tol";
          }
        }
      }
      M_best = M;
      L_best = L;
      f_best = f;
      hist.assign(1, f);
    }
    res.trace.push_back(ev.exact);
    progress(it, ev.exact, alpha, A.size());
  }
  if (!converged) {
    msg = "iteration limit reached";
    if (f_best < f) {
      M = M_best;
      L = L_best;
    }
    // the exact value at the returned metric; fall back to the last refresh
    // point if that is better
    eps = 0.0;
    arma::mat Gr;
    A = refresh(L);
    ev = evaluate(P, L, &A, &Gr, nullptr, eps, o.block, ctx.interrupt, ws);
    f = ev.value;
    active_set Ar = refresh(L_ref);
    const eval_out er = evaluate(P, L_ref, &Ar, &Gr, nullptr, eps, o.block, ctx.interrupt, ws);
    if (er.value < f) {
      M = M_ref;
      L = L_ref;
      A = std::move(Ar);
      ev = er;
      f = er.value;
    }
    res.trace.push_back(f);
  }
  res.L = L;
  res.M = M;
  res.iterations = it;
  res.objective = f;
  res.converged = converged;
  res.message = msg;
  res.active_pairs = A.size();
  res.active_triples = ev.triples;
  return res;
}

// Convex solver over M.  With o.precondition, it runs in whitened
// coordinates x -> W x, W = (C + eps I)^{-1/2} for the pull matrix C (the
// change of variables M = W Mw W keeps the problem convex and PSD-constrained
// and makes the pull term isotropic, which conditions the sub-gradient steps
// far better), and maps the solution back.
inline result solve_M(const problem& P, const arma::mat& M0, const options& o,
                      const context& ctx,
                      const progress_fn& progress = no_progress) {
  const arma::uword D = P.Xt.n_rows;
  if (M0.n_rows != D || M0.n_cols != D) throw error("lmnn: initial M has wrong size");
  if (!o.precondition || P.n_targets == 0) return solve_M_plain(P, M0, o, ctx, progress);
  arma::vec s;
  arma::mat V;
  if (!arma::eig_sym(s, V, P.pull)) throw error(error_kind::numerical, "lmnn: eigendecomposition failed");
  check_interrupt(ctx.interrupt);
  if (!(s.max() > 0.0)) return solve_M_plain(P, M0, o, ctx, progress);
  const double floor = std::max(s.max(), 1e-300) * 1e-6;
  s.transform([floor](double v) { return std::max(v, 0.0) + floor; });
  // W = V diag(s^-1/2) V', Winv = V diag(s^1/2) V' (products polled)
  const isa k = ctx.kernels;
  const arma::mat W = product(k, arma::mat(V.each_row() % (1.0 / arma::sqrt(s)).t()),
                              false, V, true, ctx.interrupt);
  const arma::mat Winv = product(k, arma::mat(V.each_row() % arma::sqrt(s).t()),
                                 false, V, true, ctx.interrupt);
  problem Pw;
  Pw.Xt = product(k, W, false, P.Xt, false, ctx.interrupt);
  Pw.y = P.y;
  Pw.Tt = P.Tt;
  Pw.pull = product(k, product(k, W, false, P.pull, false, ctx.interrupt), false, W,
                    false, ctx.interrupt);
  Pw.pull = 0.5 * (Pw.pull + Pw.pull.t());
  Pw.R = P.R.empty() ? product(k, W, false, W, false, ctx.interrupt)
                     : product(k, product(k, W, false, P.R, false, ctx.interrupt),
                               false, W, false, ctx.interrupt);
  Pw.n_targets = P.n_targets;
  Pw.mu = P.mu;
  Pw.lambda = P.lambda;
  result r = solve_M_plain(Pw, Winv * M0 * Winv, o, ctx, progress);
  r.M = W * r.M * W;
  r.L = psd_project(r.M);
  return r;
}

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_SOLVE_M_HPP
