// kmaha core: Large Margin Nearest Neighbours (LMNN).
//
// Objective (paper, section "LMNN"; Weinberger et al. 2006), written with the
// usual (1 - mu) pull + mu push weighting, mu in (0, 1):
//
//   f(M) = (1 - mu) sum_{i,j} w_ij d_M(i, j)
//        + mu sum_{i,j,l} w_ij (1 - y_il) [1 + d_M(i, j) - d_M(i, l)]_+
//        + lambda trace(M),
//
// where d_M(i, j) = (x_i - x_j)' M (x_i - x_j), w_ij = 1 when x_j is one of the
// target neighbours of x_i, and y_il = 1 when x_i and x_l share a label.  This
// is (1 - mu) times the paper's objective with c = mu / (1 - mu), plus the
// optional regulariser lambda trace(M) = lambda ||L||_F^2 (for M = L'L).
//
// Two solvers:
//  * solve_M: the convex problem over M (D x D, PSD): projected sub-gradient
//    steps (projection = eigendecomposition with negative eigenvalues
//    clipped) with Nesterov momentum and an adaptive step size (grow after
//    an accepted step; after a rejected one undo it and restart the momentum,
//    or halve the step when a plain step failed; after a plain step succeeds
//    the step is doubled while that helps), non-monotone acceptance over a
//    short window, a change of variables that whitens the pull term (see
//    solve_M), and a continuation on a smoothed hinge (quadratic within eps
//    of the kink; eps = 0.5, 0.05, then the exact hinge) so that the
//    iterates do not stall at kinks.  Impostors live in an active set of
//    pairs refreshed periodically by a blocked all-pairs search; a refresh
//    that shows a higher objective than the previous one sends the solver
//    back there with the union of both sets.  Convergence is declared only
//    after a full refresh finds no violating pair missing from the set.
//  * solve_L: the low-rank problem over L (d x D, M = L'L) handed to a
//    quasi-Newton minimiser supplied by the caller (L-BFGS in the R glue),
//    restarted after each refresh of the active set, with the same smoothing
//    stages and refresh safeguard.
//
// Impostor pairs (i, l) (y_l != y_i) are kept, not triples: each pair is
// combined with the k targets of i when the objective is evaluated.  No n x n
// matrix is ever stored: the all-pairs search works on blocks of rows, and the
// gradient is the weighted-Laplacian product X' Lap X accumulated column by
// column from the (sparse) target and impostor pairs.
#ifndef KMAHA_LMNN_HPP
#define KMAHA_LMNN_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <string>
#include <vector>
#include "common.hpp"
#include "gemm.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif
#include "neighbors.hpp"

namespace kmaha {
namespace lmnn {

// Settings of the solvers.
struct options {
  double mu = 0.5;          // push weight, in (0, 1)
  double lambda = 0.0;      // Frobenius regulariser lambda ||L||_F^2 = lambda tr(M)
  unsigned max_iter = 1000; // iterations (M) / objective evaluations (L)
  double tol = 1e-7;        // relative objective decrease regarded as converged
  unsigned refresh = 10;    // iterations between active-set refreshes (M)
  unsigned max_refresh = 80;// the refresh interval doubles up to this while
                            // refreshes find nothing new
  unsigned inner = 100;     // L-BFGS iterations between refreshes (L)
  double slack = 0.2;       // active set keeps pairs with d_il < (1+slack)(1+max_j d_ij)
  double grow = 1.05;       // step-size growth after an accepted step (M)
  double shrink = 0.5;      // step-size shrink after a rejected step (M)
  unsigned patience = 10;   // stalled iterations before the convergence check (M)
  unsigned expand = 8;      // step doublings tried after a plain step (M)
  double smooth0 = 0.5;     // initial smoothing of the hinge (continuation)
  double smooth_factor = 0.1; // smoothing reduction per stage
  double smooth_min = 0.01; // below this the next stage is the exact hinge
  unsigned window = 10;     // non-monotone acceptance window (M)
  double change = 0.25;     // relative change of M forcing a refresh (M)
  bool momentum = true;     // Nesterov momentum, restarted on an increase (M)
  bool precondition = true; // whiten by the pull matrix (M)
  arma::uword block = 256;  // rows per block in the all-pairs search
  int threads = 1;          // OpenMP threads of the impostor search
  isa kernels = best_isa(); // instruction set of the matrix products
  arma::uword dense_max = 2048; // L-form: exact evaluation through the n x n
  double dense_share = 0.0625;  // Gram when n <= dense_max and the impostor
                                // pairs are at least this share of n^2
  std::size_t max_pairs = 0;  // active-set cap (8 bytes a pair; 0: the
                              // larger of 2^23 and 512 n); beyond it the
                              // L-form solver searches all pairs at every
                              // evaluation, so memory stays linear in n
};

// Problem data shared by both solvers.
struct problem {
  arma::mat Xt;        // D x n: one observation per column
  arma::uvec y;        // 0-based labels
  arma::umat Tt;       // k x n target neighbours (no_neighbor where absent)
  arma::mat pull;      // D x D: sum over target pairs of (x_i - x_j)(x_i - x_j)'
  arma::mat R;         // regulariser lambda tr(M R); empty means R = I
  arma::uword n_targets = 0;
  double mu = 0.5, lambda = 0.0;
  // Set by whiten(): the coordinates make the quadratic part of the
  // objective, (1 - mu) pull + lambda reg, equal to ||L||_F^2 exactly.
  bool unit_quadratic = false;
};

// Impostor pairs (i, l): l belongs to another class than i.
struct active_set {
  std::vector<std::uint32_t> i, l;
  std::size_t found = 0;  // pairs the search found (may exceed size() when capped)
  bool overflow = false;  // the search found more pairs than it may keep
  std::size_t size() const { return i.size(); }
};

// Outcome of a fit.
struct result {
  arma::mat L;                 // r x D map (M = L'L)
  arma::mat M;                 // D x D metric
  unsigned iterations = 0;
  double objective = 0.0;      // exact objective at the returned metric
  std::vector<double> trace;   // objective per iteration / evaluation
  bool converged = false;
  std::string message;
  std::size_t active_pairs = 0;    // impostor pairs in the final active set
  std::size_t active_triples = 0;  // triples with a positive hinge at the end
  unsigned refreshes = 0;
  unsigned evaluations = 0;    // objective/gradient evaluations on the active set
};

// Progress callback: (iteration, objective, step size or 0, active pairs).
using progress_fn = std::function<void(unsigned, double, double, std::size_t)>;
inline void no_progress(unsigned, double, double, std::size_t) {}

// Squared distance between columns a and b of Z.
inline double col_dist2(const arma::mat& Z, arma::uword a, arma::uword b) {
  const double* za = Z.colptr(a);
  const double* zb = Z.colptr(b);
  double s = 0.0;
  for (arma::uword r = 0; r < Z.n_rows; ++r) {
    const double t = za[r] - zb[r];
    s += t * t;
  }
  return s;
}

// Laplacian accumulation: Q(:, a) += w (F(:, a) - F(:, b)), Q(:, b) -= same.
// Then Q * G' = sum_pairs w (F_a - F_b)(G_a - G_b)' for any G with n columns.
inline void lap_add(const arma::mat& F, arma::uword a, arma::uword b, double w,
                    arma::mat& Q) {
  const double* fa = F.colptr(a);
  const double* fb = F.colptr(b);
  double* qa = Q.colptr(a);
  double* qb = Q.colptr(b);
  for (arma::uword r = 0; r < F.n_rows; ++r) {
    const double t = w * (fa[r] - fb[r]);
    qa[r] += t;
    qb[r] -= t;
  }
}

// C = op(A) op(B) for column-major matrices (op: transpose when the flag is
// set), through the core's product kernel (kmaha/gemm.hpp).
inline void product(isa s, const arma::mat& A, bool ta, const arma::mat& B,
                    bool tb, arma::mat& C, gemm_buffers& buf) {
  const arma::uword m = ta ? A.n_cols : A.n_rows, k = ta ? A.n_rows : A.n_cols;
  const arma::uword n = tb ? B.n_rows : B.n_cols;
  C.set_size(m, n);
  const cview a = ta ? cview::transposed(A.memptr(), A.n_rows)
                     : cview::col_major(A.memptr(), A.n_rows);
  const cview b = tb ? cview::transposed(B.memptr(), B.n_rows)
                     : cview::col_major(B.memptr(), B.n_rows);
  gemm(s, m, n, k, a, b, C.memptr(), 1, m, false, buf);
}

// Z' = L X' (r x n).
inline void map_points(const arma::mat& L, const arma::mat& Xt, arma::mat& Zt,
                       isa s, gemm_buffers& buf) {
  product(s, L, false, Xt, false, Zt, buf);
}

// Build the problem.  X is n x D (one observation per row), targets n x k with
// no_neighbor for missing entries.  Targets must be other points of the same
// class (validated here as well as in R).
inline problem make_problem(const arma::mat& X, const arma::uvec& y,
                            const arma::umat& targets, double mu,
                            double lambda) {
  const arma::uword n = X.n_rows;
  if (y.n_elem != n) throw error("lmnn: labels length differs from rows of x");
  if (targets.n_rows != n) throw error("lmnn: targets must have one row per point");
  if (n >= static_cast<arma::uword>(std::numeric_limits<std::uint32_t>::max()))
    throw error("lmnn: too many points");
  if (!(mu > 0.0 && mu < 1.0)) throw error("lmnn: mu must lie in (0, 1)");
  if (!(lambda >= 0.0)) throw error("lmnn: lambda must be non-negative");
  problem P;
  P.Xt = X.t();
  P.y = y;
  P.Tt = targets.t();
  P.mu = mu;
  P.lambda = lambda;
  arma::mat Q(X.n_cols, n, arma::fill::zeros);
  for (arma::uword i = 0; i < n; ++i) {
    for (arma::uword t = 0; t < P.Tt.n_rows; ++t) {
      const arma::uword j = P.Tt(t, i);
      if (j == no_neighbor) continue;
      if (j >= n) throw error("lmnn: target index out of range");
      if (j == i) throw error("lmnn: a point cannot be its own target");
      if (y[j] != y[i]) throw error("lmnn: target of another class");
      lap_add(P.Xt, i, j, 1.0, Q);
      ++P.n_targets;
    }
  }
  P.pull = P.Xt * Q.t();
  P.pull = 0.5 * (P.pull + P.pull.t());
  return P;
}

// Squared target distances (k x n; NaN where no target) in the metric given
// by Z = L X' (r x n), and each point's impostor threshold 1 + max_j d_ij
// (-infinity for points without targets).
inline void target_distances(const problem& P, const arma::mat& Zt,
                             arma::mat& dt, arma::vec& thr) {
  const arma::uword n = Zt.n_cols, k = P.Tt.n_rows;
  dt.set_size(k, n);
  thr.set_size(n);
  for (arma::uword i = 0; i < n; ++i) {
    double m = -std::numeric_limits<double>::infinity();
    for (arma::uword t = 0; t < k; ++t) {
      const arma::uword j = P.Tt(t, i);
      if (j == no_neighbor) {
        dt(t, i) = arma::datum::nan;
        continue;
      }
      const double d = col_dist2(Zt, i, j);
      dt(t, i) = d;
      m = std::max(m, d);
    }
    thr[i] = 1.0 + m;
  }
}

// Visit every ordered pair (i, l), y_i != y_l, with ||z_i - z_l||^2 < thr[i],
// passing the squared distance recomputed from the difference.  Distances
// are screened in blocks of rows through one matrix product per block (the
// upper triangle only: each unordered pair is screened once).
struct pair_screen {
  const arma::mat& Zt;
  const arma::uvec& y;
  const arma::vec& thr;
  arma::rowvec zz;  // squared norms of the points
  double eps;       // screening tolerance for the rounding of the expansion
  arma::uword block;
  isa kernels;

  pair_screen(const arma::mat& Zt_, const arma::uvec& y_, const arma::vec& thr_,
              arma::uword block_, isa kernels_)
      : Zt(Zt_), y(y_), thr(thr_), zz(arma::sum(arma::square(Zt_), 0)),
        block(std::max<arma::uword>(1, block_)), kernels(kernels_) {
    eps = 1e-10 * std::max(1.0, zz.n_elem ? zz.max() : 0.0);
  }
  arma::uword blocks() const { return (Zt.n_cols + block - 1) / block; }

  // The pairs (a, b), a < b, with a in block q; B and buf are scratch.
  template <class Visit>
  void scan(arma::uword q, std::vector<double>& B, gemm_buffers& buf,
            Visit&& visit) const {
    const arma::uword n = Zt.n_cols, s = q * block, e = std::min(n, s + block);
    B.resize((e - s) * (n - s));
    // inner products of the block's points with those from s on
    gemm(kernels, e - s, n - s, Zt.n_rows,
         cview::transposed(Zt.colptr(s), Zt.n_rows),
         cview::col_major(Zt.colptr(s), Zt.n_rows), B.data(), 1, e - s,
         false, buf);
    for (arma::uword c = 0; c < n - s; ++c) {
      const arma::uword b = s + c;
      const double* col = B.data() + c * (e - s);
      const arma::uword rmax = std::min(e, b) - s;  // rows a < b in the block
      const double tb = thr[b];
      const arma::uword yb = y[b];
      for (arma::uword r = 0; r < rmax; ++r) {
        const arma::uword a = s + r;
        if (y[a] == yb) continue;
        const double approx = zz[a] + zz[b] - 2.0 * col[r];
        const double ta = thr[a];
        if (approx >= ta + eps && approx >= tb + eps) continue;
        const double d = col_dist2(Zt, a, b);
        if (d < ta) visit(a, b, d);
        if (d < tb) visit(b, a, d);
      }
    }
  }
};

template <class Visit>
inline void close_pairs(const arma::mat& Zt, const arma::uvec& y,
                        const arma::vec& thr, arma::uword block, Visit visit,
                        const interrupt_fn& interrupt, isa kernels = best_isa()) {
  if (Zt.n_cols < 2) return;
  const pair_screen ps(Zt, y, thr, block, kernels);
  std::vector<double> B;
  gemm_buffers buf;
  for (arma::uword q = 0; q < ps.blocks(); ++q) {
    ps.scan(q, B, buf, visit);
    check_interrupt(interrupt);
  }
}

// Accumulator of the push term over impostor pairs.  With gradients on, it
// records the weight of the active triples per target pair (wt, k x n) and
// adds the impostor pairs' Laplacian weights (minus their triples' weights)
// into Q (built from F).
//
// eps > 0 selects the smoothed hinge s(h) = h^2 / (2 eps) for 0 < h < eps,
// h - eps / 2 for h >= eps (gradient weight min(h / eps, 1)), used by the
// solvers' continuation; `loss` is always the exact hinge sum and `smooth`
// the smoothed one.
struct push_accum {
  const problem& P;
  const arma::mat& dt;
  const arma::mat* F;  // nullptr: value only
  arma::mat* Q;
  double eps;
  arma::mat& wt;
  // Laplacian weights: push_w multiplies the hinge weights, pull_w is added
  // to every target pair (the pull term folded into the same Laplacian).
  double push_w = 1.0, pull_w = 0.0;
  // Dense sink (n x n): when set, the Laplacian weight of pair (a, b) is
  // added to (*Wd)(a, b) instead of being applied to F.
  arma::mat* Wd = nullptr;
  double loss = 0.0, smooth = 0.0;
  std::size_t triples = 0;

  push_accum(const problem& P_, const arma::mat& dt_, const arma::mat* F_,
             arma::mat* Q_, double eps_, arma::mat& wt_, double push_w_ = 1.0,
             double pull_w_ = 0.0)
      : P(P_), dt(dt_), F(F_), Q(Q_), eps(eps_), wt(wt_), push_w(push_w_),
        pull_w(pull_w_) {
    if (F) wt.zeros(dt.n_rows, dt.n_cols);
  }

  void operator()(arma::uword i, arma::uword l, double d) {
    const arma::uword k = dt.n_rows;
    const double* di = dt.colptr(i);
    double wsum = 0.0;
    for (arma::uword t = 0; t < k; ++t) {
      const double h = 1.0 + di[t] - d;  // NaN (no target) compares false
      if (h > 0.0) {
        loss += h;
        ++triples;
        double w = 1.0;
        if (eps > 0.0) {
          if (h < eps) {
            w = h / eps;
            smooth += 0.5 * h * w;
          } else {
            smooth += h - 0.5 * eps;
          }
        }
        wsum += w;
        if (F) wt(t, i) += w;
      }
    }
    if (F && wsum > 0.0) {
      if (Wd) (*Wd)(i, l) -= push_w * wsum;
      else lap_add(*F, i, l, -push_w * wsum, *Q);
    }
  }

  // Add the target pairs' weights into Q.
  void finish() {
    if (!F) return;
    const arma::uword n = dt.n_cols, k = dt.n_rows;
    for (arma::uword i = 0; i < n; ++i)
      for (arma::uword t = 0; t < k; ++t) {
        if (std::isnan(dt(t, i))) continue;  // no target in this slot
        const double w = push_w * wt(t, i) + pull_w;
        if (!(w > 0.0)) continue;
        if (Wd) (*Wd)(i, P.Tt(t, i)) += w;
        else lap_add(*F, i, P.Tt(t, i), w, *Q);
      }
  }
};

// Sum of squared target distances.
inline double pull_value(const arma::mat& dt) {
  double s = 0.0;
  for (arma::uword q = 0; q < dt.n_elem; ++q)
    if (!std::isnan(dt[q])) s += dt[q];
  return s;
}

// Collect the impostor pairs within the (slackened) thresholds.
// Collect the impostor pairs within the (slackened) thresholds, keeping at
// most max_pairs of them (the count goes on; overflow is flagged).  Blocks of
// rows are shared among `threads` OpenMP threads, a chunk of blocks at a
// time (interrupts are polled between chunks, on the calling thread); the
// pairs are kept in block order, so the set does not depend on the threads.
inline active_set find_impostors(const problem& P, const arma::mat& Zt,
                                 const arma::vec& thr, double slack,
                                 arma::uword block, std::size_t max_pairs,
                                 const interrupt_fn& interrupt, isa kernels,
                                 int threads = 1) {
  active_set A;
  if (Zt.n_cols < 2) return A;
  const arma::vec thr2 = thr * (1.0 + slack);
  const pair_screen ps(Zt, P.y, thr2, block, kernels);
  const arma::uword nb = ps.blocks();
  const int nt = std::max(1, threads);
  const arma::uword chunk = static_cast<arma::uword>(4 * nt);
  std::vector<std::vector<std::uint32_t>> pi(chunk), pl(chunk);
  for (arma::uword q0 = 0; q0 < nb; q0 += chunk) {
    const arma::uword q1 = std::min(nb, q0 + chunk);
    parallel_errors errs;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt) if (nt > 1 && q1 - q0 > 1)
#endif
    {
      std::vector<double> B;
      gemm_buffers buf;
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
      for (arma::uword q = q0; q < q1; ++q) {
        errs.run([&] {
          std::vector<std::uint32_t>& vi = pi[q - q0];
          std::vector<std::uint32_t>& vl = pl[q - q0];
          vi.clear();
          vl.clear();
          ps.scan(q, B, buf, [&](arma::uword i, arma::uword l, double) {
            vi.push_back(static_cast<std::uint32_t>(i));
            vl.push_back(static_cast<std::uint32_t>(l));
          });
        });
      }
    }
    errs.rethrow();
    for (arma::uword q = q0; q < q1; ++q) {
      std::vector<std::uint32_t>& vi = pi[q - q0];
      A.found += vi.size();
      if (!A.overflow && A.found > max_pairs) {
        A.overflow = true;
        std::vector<std::uint32_t>().swap(A.i);
        std::vector<std::uint32_t>().swap(A.l);
      }
      if (!A.overflow) {
        A.i.insert(A.i.end(), vi.begin(), vi.end());
        A.l.insert(A.l.end(), pl[q - q0].begin(), pl[q - q0].end());
      }
    }
    check_interrupt(interrupt);
  }
  return A;
}

// Value of the objective and (optionally) its gradient, for the map L
// (r x D, M = L'L).  The impostor pairs come from A, or from an exhaustive
// search when A is null (then the value is exact).  gradM: D x D gradient
// with respect to M; gradL: r x D gradient with respect to L.
// value: the objective optimised (with the smoothed hinge when eps > 0);
// exact: the objective itself; push: the exact hinge sum.
// Full impostor search under the map Lc: target distances first (they set
// each point's margin threshold), then a blocked scan for violators.  Shared
// by the M and L solvers.
inline active_set refresh_impostors(const problem& P, const arma::mat& Lc,
                                    const options& o,
                                    const interrupt_fn& interrupt) {
  arma::mat Zt;
  gemm_buffers buf;
  map_points(Lc, P.Xt, Zt, o.kernels, buf);
  arma::mat dt;
  arma::vec thr;
  target_distances(P, Zt, dt, thr);
  return find_impostors(P, Zt, thr, o.slack, o.block, o.max_pairs, interrupt,
                        o.kernels, o.threads);
}

struct eval_out {
  double value = 0.0, exact = 0.0, pull = 0.0, push = 0.0, reg = 0.0;
  std::size_t triples = 0;
};

// Scratch matrices reused across evaluations (avoids reallocating n-sized
// buffers at every step).
struct workspace {
  arma::mat Zt, dt, Q, wt;
  arma::vec thr;
  arma::mat G, Wd;  // exact (dense) evaluation: Gram and pair weights, n x n
  gemm_buffers buf;
  isa kernels = best_isa();
};

inline eval_out evaluate(const problem& P, const arma::mat& L,
                         const active_set* A, arma::mat* gradM,
                         arma::mat* gradL, double eps = 0.0,
                         arma::uword block = 256,
                         const interrupt_fn& interrupt = no_interrupt,
                         workspace* ws = nullptr) {
  workspace local;
  workspace& w = ws ? *ws : local;
  arma::mat& Zt = w.Zt;
  arma::mat& dt = w.dt;
  arma::vec& thr = w.thr;
  Zt = L * P.Xt;
  target_distances(P, Zt, dt, thr);
  // Laplacian source: x-differences for the M gradient, z-differences for L.
  const arma::mat* F = gradM ? &P.Xt : (gradL ? &Zt : nullptr);
  arma::mat& Q = w.Q;
  if (F) Q.zeros(F->n_rows, F->n_cols);
  push_accum acc(P, dt, F, F ? &Q : nullptr, eps, w.wt);
  if (A) {
    for (std::size_t p = 0; p < A->size(); ++p) {
      const arma::uword i = A->i[p], l = A->l[p];
      const double d = col_dist2(Zt, i, l);
      if (d < thr[i]) acc(i, l, d);
    }
  } else {
    close_pairs(Zt, P.y, thr, block, std::ref(acc), interrupt);
  }
  acc.finish();
  eval_out out;
  out.pull = pull_value(dt);
  out.push = acc.loss;
  out.reg = P.R.empty() ? arma::accu(arma::square(L))
                        : arma::accu((L * P.R) % L);
  out.triples = acc.triples;
  out.exact = (1.0 - P.mu) * out.pull + P.mu * out.push + P.lambda * out.reg;
  out.value = eps > 0.0
                  ? (1.0 - P.mu) * out.pull + P.mu * acc.smooth + P.lambda * out.reg
                  : out.exact;
  if (gradM) {
    arma::mat G = P.Xt * Q.t();
    G = (1.0 - P.mu) * P.pull + P.mu * 0.5 * (G + G.t());
    if (P.R.empty()) G.diag() += P.lambda;
    else G += P.lambda * P.R;
    *gradM = std::move(G);
  }
  if (gradL) {
    if (gradM) {
      *gradL = 2.0 * L * (*gradM);
    } else {
      *gradL = 2.0 * (1.0 - P.mu) * (L * P.pull) + 2.0 * P.mu * (Q * P.Xt.t()) +
               2.0 * P.lambda * (P.R.empty() ? L : arma::mat(L * P.R));
    }
  }
  return out;
}

// The objective and its gradient with respect to L, as the L-form solver
// needs them: the push term over the active set A (all pairs when A is
// null), the pull term folded into the same weighted Laplacian, so that the
// gradient costs two products of the size of Z (Z = L X' and Q X) and
// nothing of size D x D.  With P.unit_quadratic (whitened coordinates,
// lambda > 0) the quadratic part is ||L||_F^2 and its gradient 2 L.
inline eval_out evaluate_L(const problem& P, const arma::mat& L,
                           const active_set* A, arma::mat* gradL, double eps,
                           arma::uword block, const interrupt_fn& interrupt,
                           workspace& w, bool dense = false) {
  map_points(L, P.Xt, w.Zt, w.kernels, w.buf);
  const arma::mat& Zt = w.Zt;
  const arma::uword n = Zt.n_cols, dd = Zt.n_rows;
  target_distances(P, Zt, w.dt, w.thr);
  const arma::mat* F = gradL ? &Zt : nullptr;
  const double pull_w = P.unit_quadratic ? 0.0 : 1.0 - P.mu;
  push_accum acc(P, w.dt, F, nullptr, eps, w.wt, P.mu, pull_w);
  if (dense) {
    // Every pair, through the Gram matrix of the mapped points (lower
    // triangle): exact, and for small n with many impostors cheaper than
    // visiting pairs one by one.
    product(w.kernels, Zt, true, Zt, false, w.G, w.buf);
    if (F) {
      w.Wd.zeros(n, n);
      acc.Wd = &w.Wd;
    }
    const arma::vec g = w.G.diag();
    for (arma::uword b = 0; b < n; ++b) {
      const double* col = w.G.colptr(b);
      const arma::uword yb = P.y[b];
      const double tb = w.thr[b];
      for (arma::uword a = b + 1; a < n; ++a) {
        if (P.y[a] == yb) continue;
        const double ta = w.thr[a];
        double d = g[a] + g[b] - 2.0 * col[a];
        if (d >= ta && d >= tb) continue;
        if (d < 0.0) d = 0.0;
        if (d < ta) acc(a, b, d);
        if (d < tb) acc(b, a, d);
      }
    }
  } else {
    if (F) w.Q.zeros(dd, n);
    acc.Q = F ? &w.Q : nullptr;
    if (A) {
      for (std::size_t p = 0; p < A->size(); ++p) {
        const arma::uword i = A->i[p], l = A->l[p];
        const double d = col_dist2(Zt, i, l);
        if (d < w.thr[i]) acc(i, l, d);
      }
    } else {
      close_pairs(Zt, P.y, w.thr, block, std::ref(acc), interrupt, w.kernels);
    }
  }
  acc.finish();
  if (F && dense) {
    // Q = Z Lap with Lap = diag(rowsums(S)) - S, S = Wd + Wd'
    arma::mat& S = w.Wd;
    S += S.t();
    const arma::vec deg = arma::sum(S, 1);
    S *= -1.0;
    S.diag() += deg;
    product(w.kernels, Zt, false, S, false, w.Q, w.buf);
  }
  eval_out out;
  out.pull = pull_value(w.dt);
  out.push = acc.loss;
  out.triples = acc.triples;
  double quad;
  if (P.unit_quadratic) {
    quad = arma::accu(arma::square(L));
    out.reg = P.lambda > 0.0 ? (quad - (1.0 - P.mu) * out.pull) / P.lambda : 0.0;
  } else {
    out.reg = P.lambda > 0.0 ? (P.R.empty() ? arma::accu(arma::square(L))
                                            : arma::accu((L * P.R) % L))
                             : 0.0;
    quad = (1.0 - P.mu) * out.pull + P.lambda * out.reg;
  }
  out.exact = quad + P.mu * out.push;
  out.value = eps > 0.0 ? quad + P.mu * acc.smooth : out.exact;
  if (gradL) {
    product(w.kernels, w.Q, false, P.Xt, true, *gradL, w.buf);
    *gradL *= 2.0;
    if (P.unit_quadratic) {
      *gradL += 2.0 * L;
    } else if (P.lambda > 0.0) {
      *gradL += 2.0 * P.lambda * (P.R.empty() ? L : arma::mat(L * P.R));
    }
  }
  return out;
}

// Projection of a symmetric matrix onto the PSD cone, returning the factor
// L = Lambda^{1/2} V' (rows for eigenvalues above a relative threshold,
// largest first; at least one row).
inline arma::mat psd_project(arma::mat& M) {
  M = 0.5 * (M + M.t());
  arma::vec ev;
  arma::mat V;
  if (!arma::eig_sym(ev, V, M)) throw error("lmnn: eigendecomposition failed");
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

// a > b beyond rounding (used to compare objectives before and after a
// refresh of the active set).
inline bool relative_gt(double a, double b) {
  return a > b + 1e-12 * std::max(1.0, std::abs(b));
}

// Union of two impostor-pair sets (duplicates removed).
inline active_set merge_sets(const active_set& A, const active_set& B,
                             arma::uword n) {
  std::vector<std::uint64_t> key;
  key.reserve(A.size() + B.size());
  for (std::size_t p = 0; p < A.size(); ++p)
    key.push_back(static_cast<std::uint64_t>(A.i[p]) * n + A.l[p]);
  for (std::size_t p = 0; p < B.size(); ++p)
    key.push_back(static_cast<std::uint64_t>(B.i[p]) * n + B.l[p]);
  std::sort(key.begin(), key.end());
  key.erase(std::unique(key.begin(), key.end()), key.end());
  active_set U;
  U.i.reserve(key.size());
  U.l.reserve(key.size());
  for (const std::uint64_t q : key) {
    U.i.push_back(static_cast<std::uint32_t>(q / n));
    U.l.push_back(static_cast<std::uint32_t>(q % n));
  }
  U.found = U.size();
  return U;
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
                            const interrupt_fn& interrupt = no_interrupt,
                            const progress_fn& progress = no_progress) {
  result res;
  const arma::uword D = P.Xt.n_rows, n = P.Xt.n_cols;
  if (M.n_rows != D || M.n_cols != D) throw error("lmnn: initial M has wrong size");
  arma::mat L = psd_project(M);
  workspace ws;
  ws.kernels = o.kernels;
  options oc = o;  // this solver always keeps every pair it finds
  oc.max_pairs = std::numeric_limits<std::size_t>::max();
  auto refresh = [&](const arma::mat& Lc) {
    ++res.refreshes;
    return refresh_impostors(P, Lc, oc, interrupt);
  };
  active_set A = refresh(L);
  arma::mat G;
  double eps = o.smooth0;  // smoothing of the hinge (continuation to 0)
  eval_out ev = evaluate(P, L, &A, &G, nullptr, eps, o.block, interrupt, &ws);
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
    check_interrupt(interrupt);
    const double tn = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * tk * tk));
    const double beta = o.momentum ? (tk - 1.0) / tn : 0.0;
    arma::mat Mn = M - alpha * G;
    if (beta > 0.0) Mn += beta * (M - Mprev);
    arma::mat Ln = psd_project(Mn);
    arma::mat Gn;
    eval_out en = evaluate(P, Ln, &A, &Gn, nullptr, eps, o.block, interrupt, &ws);
    ++res.evaluations;
    if (beta == 0.0 && en.value <= f && o.expand > 0) {
      // A plain step succeeded (start, or after a restart): double the step
      // while that keeps lowering the objective.
      for (unsigned e = 0; e < o.expand; ++e) {
        arma::mat Mt = M - 2.0 * alpha * G;
        arma::mat Lt = psd_project(Mt);
        arma::mat Gt;
        const eval_out et = evaluate(P, Lt, &A, &Gt, nullptr, eps, o.block, interrupt, &ws);
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
      const eval_out er = evaluate(P, L, &An, &Gr, nullptr, eps, o.block, interrupt, &ws);
      since = 0;
      if (relative_gt(er.value, f_ref)) {
        // missed impostors made the exact objective rise: go back
        A = merge_sets(A, An, n);
        M = M_ref;
        L = L_ref;
        ev = evaluate(P, L, &A, &G, nullptr, eps, o.block, interrupt, &ws);
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
            ev = evaluate(P, L, &A, &G, nullptr, eps, o.block, interrupt, &ws);
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
    ev = evaluate(P, L, &A, &Gr, nullptr, eps, o.block, interrupt, &ws);
    f = ev.value;
    active_set Ar = refresh(L_ref);
    const eval_out er = evaluate(P, L_ref, &Ar, &Gr, nullptr, eps, o.block, interrupt, &ws);
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
                      const interrupt_fn& interrupt = no_interrupt,
                      const progress_fn& progress = no_progress) {
  const arma::uword D = P.Xt.n_rows;
  if (M0.n_rows != D || M0.n_cols != D) throw error("lmnn: initial M has wrong size");
  if (!o.precondition || P.n_targets == 0) return solve_M_plain(P, M0, o, interrupt, progress);
  arma::vec s;
  arma::mat V;
  if (!arma::eig_sym(s, V, P.pull)) throw error("lmnn: eigendecomposition failed");
  if (!(s.max() > 0.0)) return solve_M_plain(P, M0, o, interrupt, progress);
  const double floor = std::max(s.max(), 1e-300) * 1e-6;
  s.transform([floor](double v) { return std::max(v, 0.0) + floor; });
  const arma::mat W = V * arma::diagmat(1.0 / arma::sqrt(s)) * V.t();
  const arma::mat Winv = V * arma::diagmat(arma::sqrt(s)) * V.t();
  problem Pw;
  Pw.Xt = W * P.Xt;
  Pw.y = P.y;
  Pw.Tt = P.Tt;
  Pw.pull = W * P.pull * W;
  Pw.pull = 0.5 * (Pw.pull + Pw.pull.t());
  Pw.R = P.R.empty() ? arma::mat(W * W) : arma::mat(W * P.R * W);
  Pw.n_targets = P.n_targets;
  Pw.mu = P.mu;
  Pw.lambda = P.lambda;
  result r = solve_M_plain(Pw, Winv * M0 * Winv, o, interrupt, progress);
  r.M = W * r.M * W;
  r.L = psd_project(r.M);
  return r;
}

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
// Impostors are handled in one of two ways, re-decided at each refresh:
//  * exact: when n <= o.dense_max and the impostor pairs are a large share
//    of all pairs (typical of kernel PCA coordinates and small training
//    sets), every evaluation visits every pair through the n x n Gram
//    matrix of the mapped points, so the objective is exact and the
//    minimiser runs without interruption;
//  * active set: otherwise evaluations visit an active set of pairs,
//    refreshed by a full search after at most o.inner evaluations; a
//    refresh that shows a higher objective than at the previous refresh
//    (impostors the set missed) sends the solver back there with the union
//    of both sets.
// A smoothing stage ends when the minimiser stops by its own test (and, with
// an active set, the refresh finds nothing missed); convergence is declared
// at the end of the exact-hinge stage.
inline result solve_L(const problem& P, arma::mat L, const options& o,
                      const minimizer_fn& minimize,
                      const interrupt_fn& interrupt = no_interrupt,
                      const progress_fn& progress = no_progress) {
  result res;
  const arma::uword D = P.Xt.n_rows, d = L.n_rows, n = P.Xt.n_cols;
  if (L.n_cols != D || d == 0) throw error("lmnn: initial L has wrong size");
  workspace ws;
  ws.kernels = o.kernels;
  options oc = o;
  if (oc.max_pairs == 0) oc.max_pairs = std::max<std::size_t>(std::size_t(1) << 23, 512 * n);
  auto refresh = [&](const arma::mat& Lc) {
    ++res.refreshes;
    return refresh_impostors(P, Lc, oc, interrupt);
  };
  // exact: every evaluation covers all pairs, through the Gram matrix
  // (gram) or the blocked search (otherwise); else the active set A.
  bool exact = false, gram = false;
  auto choose = [&](const active_set& S) {
    gram = n <= o.dense_max &&
           static_cast<double>(S.found) >= o.dense_share * static_cast<double>(n) * n;
    exact = gram || S.overflow;
  };
  active_set A;
  auto eval = [&](const arma::mat& Lx, arma::mat* g, double e) {
    return evaluate_L(P, Lx, exact ? nullptr : &A, g, e, o.block, interrupt, ws,
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
  bool converged = false;
  std::string msg;
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
  while (used < o.max_iter) {
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
    check_interrupt(interrupt);
    if (exact) {
      res.trace.push_back(ev.exact);
      progress(used, ev.exact, 0.0, A.size());
      if (ir.stopped && (converged = next_stage(ir.message))) break;
      continue;
    }
    active_set An = refresh(L);
    const eval_out er = evaluate_L(P, L, An.overflow ? nullptr : &An, nullptr,
                                   eps, o.block, interrupt, ws);
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

// ---------------------------------------------------------------------------
// The coordinates the solvers work in, and the entry point.
//
// Reduction.  The objective depends on M only through (x_i - x_j)' M
// (x_i - x_j), i.e. on the span of the differences of the rows of X.  When
// there are more columns than rows (p >> n, or kernel PCA coordinates with
// every component kept and a rank-deficient kernel), that span has r < D
// dimensions; the solvers then work on the r coordinates x~ = B' x (B: an
// orthonormal basis of the span) and the map returned is L = L~ B'.  The
// objective is unchanged (for lambda > 0 the optimum has no component
// outside the span anyway); the metric ignores directions in which the
// training data do not vary.
//
// Whitening (L-form).  With H = (1 - mu) P + lambda I (P the pull matrix),
// the quadratic part of the objective is tr(L H L').  Writing H = C C'
// (Cholesky) and L = L^ C^{-1}, i.e. working on x^ = C^{-1} x~, makes it
// ||L^||_F^2: the problem is the same, but its curvature is isotropic, which
// is what lets a quasi-Newton method converge in few evaluations even when D
// is about n.  For lambda = 0, H may be singular (e.g. the direction between
// class means when every class can be collapsed onto a point); a ridge of
// 1e-6 max(diag(H)) is then added to H for the change of variables only, and
// the pull term is evaluated as it is.

// Orthonormal basis (D x r) of the span of the differences of the rows of X
// if r < D; an empty matrix when the span is all of R^D or r < D is not
// possible (n > D).
inline arma::mat difference_span(const arma::mat& X, isa kernels,
                                 double rtol = 1e-10) {
  const arma::uword n = X.n_rows, D = X.n_cols;
  if (n == 0 || n - 1 >= D) return arma::mat();
  const arma::mat Xc = X.each_row() - arma::mean(X, 0);
  gemm_buffers buf;
  arma::mat G;
  product(kernels, Xc, false, Xc, true, G, buf);
  G = 0.5 * (G + G.t());
  arma::vec s;
  arma::mat U;
  if (!arma::eig_sym(s, U, G)) throw error("lmnn: eigendecomposition failed");
  const double top = s.max();
  arma::uvec keep = arma::find(s > rtol * top);
  if (!(top > 0.0) || keep.n_elem == 0) keep = arma::uvec{s.n_elem - 1};
  // B = Xc' U_r diag(1 / sqrt(s_r)): orthonormal columns spanning the rows
  const arma::mat Ur = U.cols(keep);
  arma::mat B;
  product(kernels, Xc, true, Ur, false, B, buf);
  for (arma::uword c = 0; c < keep.n_elem; ++c) B.col(c) /= std::sqrt(s[keep[c]]);
  return B;
}

// Which solver fit() runs.
enum class solver_kind { L, M };

// Fit LMNN.  X: n x D inputs (one observation per row), y: 0-based labels,
// targets: n x k (no_neighbor where absent), L0: d x D starting map.  The
// L-form solver (default) works in reduced, whitened coordinates; the
// M-form solver in reduced coordinates (it whitens by its own rule).  The
// result's L (d x D, or rank rows for the M solver) and M = L'L are on the
// original coordinates.
inline result fit(const arma::mat& X, const arma::uvec& y,
                  const arma::umat& targets, const arma::mat& L0,
                  const options& o, solver_kind kind,
                  const minimizer_fn& minimize,
                  const interrupt_fn& interrupt = no_interrupt,
                  const progress_fn& progress = no_progress) {
  const arma::uword D = X.n_cols;
  if (L0.n_cols != D || L0.n_rows == 0) throw error("lmnn: initial L has wrong size");
  const arma::mat B = difference_span(X, o.kernels);
  const bool reduce = !B.is_empty();
  const arma::mat Xr = reduce ? arma::mat(X * B) : arma::mat();
  problem P = make_problem(reduce ? Xr : X, y, targets, o.mu, o.lambda);
  arma::mat L0r = reduce ? arma::mat(L0 * B) : L0;
  if (L0r.n_rows > L0r.n_cols) {
    // more rows than the span has dimensions: the same metric with fewer
    // rows (L0r' L0r = R' R)
    arma::mat Q, R;
    if (!arma::qr_econ(Q, R, L0r)) throw error("lmnn: QR decomposition failed");
    L0r = R;
  }
  result res;
  if (kind == solver_kind::M) {
    res = solve_M(P, L0r.t() * L0r, o, interrupt, progress);
  } else {
    arma::mat C;  // H = C C', lower triangular
    bool whiten = o.precondition && P.n_targets > 0;
    if (whiten) {
      arma::mat H = (1.0 - P.mu) * P.pull;
      double ridge = 0.0;
      if (P.lambda > 0.0) {
        H.diag() += P.lambda;
      } else {
        ridge = 1e-6 * H.diag().max();
        if (!(ridge > 0.0)) whiten = false;
        H.diag() += ridge;
      }
      if (whiten && !arma::chol(C, H, "lower")) {
        // numerically not positive definite: a larger ridge, once
        H.diag() += 1e-4 * H.diag().max();
        ridge = 1.0;  // (the quadratic part is no longer exactly ||L||^2)
        if (!arma::chol(C, H, "lower")) whiten = false;
      }
      if (whiten) {
        // x^ = C^{-1} x~ for every observation (columns of Xt)
        P.Xt = arma::solve(arma::trimatl(C), P.Xt);
        P.pull.reset();  // not used by the L-form solver
        P.unit_quadratic = P.lambda > 0.0 && ridge == 0.0;
        if (!P.unit_quadratic && P.lambda > 0.0) {
          // lambda ||L~||^2 = lambda tr(L^ C^{-1} C^{-T} L^')
          const arma::mat Ci = arma::solve(arma::trimatl(C),
                                           arma::eye(C.n_rows, C.n_cols));
          P.R = Ci * Ci.t();
        }
      }
    }
    const arma::mat Lw = whiten ? arma::mat(L0r * C) : L0r;
    res = solve_L(P, Lw, o, minimize, interrupt, progress);
    if (whiten) {
      // L~ = L^ C^{-1}:  L~' = C^{-T} L^'
      res.L = arma::solve(arma::trimatu(C.t()), res.L.t()).t();
    }
  }
  if (reduce) res.L = res.L * B.t();
  res.M = res.L.t() * res.L;
  res.M = 0.5 * (res.M + res.M.t());
  return res;
}

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_HPP
