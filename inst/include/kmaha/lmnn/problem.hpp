// kmaha core, LMNN: the problem, the solvers' options, the run context and
// the results, with the small helpers every other part of LMNN uses
// (distances between columns, Laplacian accumulation, products).
//
// The objective (see kmaha/lmnn.hpp for the whole picture):
//
//   f(M) = (1 - mu) sum_{i,j} w_ij d_M(i, j)
//        + mu sum_{i,j,l} w_ij (1 - y_il) [1 + d_M(i, j) - d_M(i, l)]_+
//        + lambda tr(M R),
//
// with R = I unless the caller gives a positive semi-definite R (D x D).
#ifndef KMAHA_LMNN_PROBLEM_HPP
#define KMAHA_LMNN_PROBLEM_HPP

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>
#include "../common.hpp"
#include "../context.hpp"
#include "../gemm.hpp"
#include "../neighbors.hpp"

namespace kmaha {
namespace lmnn {

// How a fit runs: the threads of the impostor search, the instruction set
// of the core's products and the interrupt callback.  No defaults: every
// entry point is told.
using context = kmaha::context;

// Settings of the solvers.
struct options {
  double mu = 0.5;          // push weight, in (0, 1)
  double lambda = 0.0;      // regulariser lambda tr(M R) (= lambda ||L||_F^2 for R = I)
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
  // Low-rank mode of the L-form solver (see solve_L): allowed when low_rank
  // is set and fit() finds it applies (lambda > 0, the identity as start,
  // D >= rank_min_dim, n <= dense_max).
  bool low_rank = true;
  arma::uword rank_min_dim = 16;
  arma::uword rank_start = 16;  // directions of the start
  arma::uword rank_step = 8;    // directions added at most per test
  unsigned rank_rounds = 2;     // optimality tests per smoothing stage
  double rank_check = 1e-3;     // eigenvalues of the M-gradient below -rank_check
                                // are directions of descent
  double rank_tol = 1e-3;       // rows with singular values below rank_tol
                                // times the largest are dropped
  double rank_scale = 1e-2;     // added rows: rank_scale ||L||_2 times a direction
  double rank_tol_factor = 0.1; // the minimiser's tolerance: tol times this
  unsigned window = 10;     // non-monotone acceptance window (M)
  double change = 0.25;     // relative change of M forcing a refresh (M)
  bool momentum = true;     // Nesterov momentum, restarted on an increase (M)
  bool precondition = true; // whiten by the pull matrix (M)
  arma::uword block = 256;  // rows per block in the all-pairs search
  arma::uword dense_max = 2048; // L-form: exact evaluation through the n x n
  double dense_share = 0.0625;  // Gram when n <= dense_max and the impostor
                                // pairs are at least this share of n^2
  std::size_t max_pairs = 0;  // active-set cap (8 bytes a pair; 0: the
                              // larger of 2^23 and 512 n); beyond it the
                              // L-form solver searches all pairs at every
                              // evaluation, so memory stays linear in n
  // fit(): solve in the span of the centred training points when it has
  // fewer dimensions than the inputs (see lmnn/fit.hpp); false solves the
  // full-dimension problem (a reference for tests and benchmarks).
  bool span = true;
  // fit(): form the D x D metric M = L'L of the result (false leaves
  // result::M empty; for D in the thousands it is the largest object of a
  // fit).
  bool metric = true;
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

// Solve T X = B for X in place (B becomes X) with T triangular (lower when
// `lower`), in blocks of the columns of B with an interrupt poll after each
// block when the work is large (as product()).
inline void triangular_solve(const arma::mat& T, bool lower, arma::mat& B,
                             const interrupt_fn& interrupt) {
  const arma::uword n = B.n_cols;
  const double work = static_cast<double>(T.n_rows) * T.n_rows;
  arma::uword step = n;
  if (work * n > poll_flops)
    step = std::max<arma::uword>(1, static_cast<arma::uword>(poll_flops / work));
  for (arma::uword c0 = 0; c0 < n; c0 += step) {
    const arma::uword c1 = std::min(n, c0 + step) - 1;
    const arma::mat Bb = B.cols(c0, c1);
    arma::mat Xb;
    const bool ok = lower ? arma::solve(Xb, arma::trimatl(T), Bb)
                          : arma::solve(Xb, arma::trimatu(T), Bb);
    if (!ok) throw error(error_kind::numerical, "lmnn: a triangular solve failed");
    B.cols(c0, c1) = Xb;
    check_interrupt(interrupt);
  }
}

// Z' = L X' (r x n); polled as product() when `interrupt` is given.
inline void map_points(const arma::mat& L, const arma::mat& Xt, arma::mat& Zt,
                       isa s, gemm_buffers& buf,
                       const interrupt_fn* interrupt = nullptr) {
  product(s, L, false, Xt, false, Zt, buf, interrupt);
}

// The regulariser's matrix as the problem keeps it: empty for the identity
// (given as an empty matrix or exactly the identity, so that both take the
// same arithmetic); otherwise checked to be D x D, finite, symmetric and
// positive semi-definite (to rounding) and returned symmetrised.  A matrix
// that is not positive semi-definite is an error of kind singular (the
// caller may name the matrix, e.g. the kernel trick's Gram matrix).
inline arma::mat regulariser(const arma::mat& R, arma::uword D) {
  if (R.is_empty()) return arma::mat();
  if (R.n_rows != D || R.n_cols != D)
    throw error("lmnn: the regulariser R must be a D x D matrix (D = columns of x)");
  if (!R.is_finite()) throw error("lmnn: the regulariser R has non-finite entries");
  const double scale = std::max(1.0, arma::abs(R).max());
  if (arma::abs(R - R.t()).max() > 1e-10 * scale)
    throw error("lmnn: the regulariser R must be symmetric");
  bool identity = true;
  for (arma::uword c = 0; c < D && identity; ++c)
    for (arma::uword r = 0; r < D; ++r)
      if (R(r, c) != (r == c ? 1.0 : 0.0)) {
        identity = false;
        break;
      }
  if (identity) return arma::mat();
  arma::mat Rs = 0.5 * (R + R.t());
  // positive semi-definite up to rounding: a Cholesky factor exists once a
  // ridge of 1e-8 times the largest diagonal entry is added
  const double top = Rs.diag().max();
  arma::mat Rr = Rs;
  Rr.diag() += 1e-8 * std::max(top, 0.0) + std::numeric_limits<double>::min();
  arma::mat C;
  if (!(top >= 0.0) || !arma::chol(C, Rr))
    throw error(error_kind::singular,
                "lmnn: the regulariser R must be positive semi-definite");
  return Rs;
}

// Build the problem.  X is n x D (one observation per row), targets n x k with
// no_neighbor for missing entries; R the regulariser's matrix (empty: the
// identity).  Targets must be other points of the same class (validated here
// as well as in R).
// The pull matrix is one product of D x n x D multiply-adds, polled as
// product() does.
inline problem make_problem(const arma::mat& X, const arma::uvec& y,
                            const arma::umat& targets, double mu,
                            double lambda, const arma::mat& R,
                            const context& ctx) {
  const arma::uword n = X.n_rows;
  if (y.n_elem != n) throw error("lmnn: labels length differs from rows of x");
  if (targets.n_rows != n) throw error("lmnn: targets must have one row per point");
  if (n >= static_cast<arma::uword>(std::numeric_limits<std::uint32_t>::max()))
    throw error("lmnn: too many points");
  if (!(mu > 0.0 && mu < 1.0)) throw error("lmnn: mu must lie in (0, 1)");
  if (!(lambda >= 0.0)) throw error("lmnn: lambda must be non-negative");
  problem P;
  P.R = regulariser(R, X.n_cols);
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
  gemm_buffers buf;
  product(ctx.kernels, P.Xt, false, Q, true, P.pull, buf, &ctx.interrupt);
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

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_PROBLEM_HPP
