// kmaha core: kernel candidates screened on cross-validation folds before
// any learner is fitted (the first step of kernel choice, R/score.R).
//
// For a kernel (a non-negative combination of base kernels) and a fold, the
// kernel PCA of the fold's training rows keeps its top q components; DNE
// (dne.hpp), a closed-form metric learner, maps those coordinates; the
// held-out rows are projected with the training statistics (kpca.hpp) and
// mapped alike, and each is classified by a k-nearest-neighbour vote among
// the training rows.  The held-out correctness is the screen's score: cheap
// (q small, one eigen-solve of a q x q matrix) and honest (the held-out rows
// take no part in their fold's KPCA or map).  A metric, not the plain KPCA
// coordinates, is what the learners use: on two thin concentric rings the
// leading components of the best bandwidths do not separate the rings by
// themselves, a metric on them does (bench/studies/screen-study.R).
//
// Which kernels are screened:
//  * a kernel that is numerically degenerate on a fold's training rows
//    (degeneracy.hpp), or nearly the identity on all rows (the median over
//    rows of the normalized kernel value k(x, x') / sqrt(k(x, x) k(x', x'))
//    with the nearest other row x' is below `near_identity`: neighbours are
//    almost orthogonal in feature space, so nothing a metric could learn
//    reaches a new point), is not screened;
//  * with `grid` (the kernels form an ordered one-parameter family, e.g. the
//    paper's 21 scaled RBF bandwidths), every other kernel of the grid is
//    screened first, then the neighbours of the best of those: the screen's
//    accuracy varies smoothly along the grid, and this halves the work.
//
// All Gram values come from one matrix of inner products of the rows (and
// the squared distances derived from it), shared by every kernel and fold:
// a task (kernel, fold) builds only its fold's blocks from it.  Tasks run in
// parallel on the context's threads; each is computed by one thread in a
// fixed order, so results do not depend on the thread count.
#ifndef KMAHA_SCREEN_HPP
#define KMAHA_SCREEN_HPP

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#include "degeneracy.hpp"
#include "distances.hpp"
#include "dne.hpp"
#include "gemm.hpp"
#include "gram.hpp"
#include "kernels.hpp"
#include "knn.hpp"
#include "neighbors.hpp"
#include "kpca.hpp"
#include "parallel.hpp"

namespace kmaha {

// A kernel as the non-negative combination sum_i weights[i] * specs[i].
struct kernel_combo {
  std::vector<kernel_spec> specs;
  arma::vec weights;
};

struct screen_options {
  arma::uword components = 32;  // q: leading KPCA components DNE maps
  arma::uword k = 1;            // neighbours of the vote
  arma::uword dne_k = 3;        // DNE's neighbours (same and other class)
  double tol = 1e-8;            // KPCA's relative eigenvalue tolerance
  double near_identity = 0.01;  // median nearest-row kernel correlation below
                                // which a kernel is not screened
  bool grid = false;            // the kernels form an ordered grid
};

struct screen_result {
  // n x kernels: 1 when the row, held out, was classified correctly, 0 when
  // not, -1 when its fold's task did not run or failed.
  arma::imat correct;
  // kernels x folds: degeneracy of the kernel on the fold's training rows.
  arma::umat degenerate;
  // kernels: screened (1) or not (0); near the identity on the rows (1).
  arma::uvec screened;
  arma::uvec near_identity;
  // kernels x folds: the message of a failed task ("" when none).
  std::vector<std::string> errors;
};

namespace detail {

// Kernel values of `combo` on the block (rows, cols) of the shared products
// P (inner products) and S (squared distances), D input columns.
inline arma::mat combo_block(const kernel_combo& combo, const arma::mat& P,
                             const arma::mat& S, const arma::uvec& rows,
                             const arma::uvec& cols, double D) {
  bool need_d = false, need_ip = false;
  kernel_needs(combo.specs, need_d, need_ip);
  arma::mat pb, sb;
  if (need_ip) pb = P.submat(rows, cols);
  if (need_d) sb = S.submat(rows, cols);
  arma::mat out(rows.n_elem, cols.n_elem, arma::fill::zeros);
  for (std::size_t i = 0; i < combo.specs.size(); ++i) {
    if (combo.weights[i] == 0.0) continue;
    out += combo.weights[i] *
           apply_kernel(combo.specs[i], uses_distance(combo.specs[i]) ? sb : pb, D);
  }
  return out;
}

// The kernel's values on the pairs (i, nb[i]) as an n x 1 matrix, from the
// shared products; with self = true on the pairs (nb[i], nb[i]).
inline arma::vec combo_pairs(const kernel_combo& combo, const arma::mat& P,
                             const arma::mat& S, const arma::uvec& a,
                             const arma::uvec& b, double D) {
  const arma::uword n = a.n_elem;
  arma::mat pb(n, 1), sb(n, 1);
  for (arma::uword i = 0; i < n; ++i) {
    pb(i, 0) = P(a[i], b[i]);
    sb(i, 0) = S(a[i], b[i]);
  }
  arma::mat out(n, 1, arma::fill::zeros);
  for (std::size_t i = 0; i < combo.specs.size(); ++i) {
    if (combo.weights[i] == 0.0) continue;
    out += combo.weights[i] *
           apply_kernel(combo.specs[i], uses_distance(combo.specs[i]) ? sb : pb, D);
  }
  return arma::vec(out);
}

}  // namespace detail

// The screen of `kernels` on the folds `fold` (0-based, one per row of X,
// values 0 .. folds - 1) for the rows of X (n x D) with labels y (0-based,
// `classes` of them).
inline screen_result screen_kernels(const arma::mat& X, const arma::uvec& y,
                                    arma::uword classes, const arma::uvec& fold,
                                    arma::uword folds,
                                    const std::vector<kernel_combo>& kernels,
                                    const screen_options& opt,
                                    const context& ctx) {
  const arma::uword n = X.n_rows, nk = kernels.size();
  if (y.n_elem != n || fold.n_elem != n) throw error("screen: one label and one fold per row");
  if (opt.components < 1 || opt.k < 1) throw error("screen: components and k must be positive");
  for (const auto& kc : kernels)
    if (kc.specs.empty() || kc.specs.size() != kc.weights.n_elem)
      throw error("screen: a kernel needs its base kernels and weights");
  // The shared products: inner products and squared distances of the rows.
  const std::vector<kernel_spec> lin(1);  // the linear kernel
  const arma::mat P = gram_sum(lin, arma::vec{1.0}, X, nullptr, ctx);
  arma::mat S = P;
  {
    const arma::vec xx = P.diag();
    products_to_sq_dist(S, xx, xx.memptr());
    S.diag().zeros();
  }
  std::vector<arma::uvec> train(folds), held(folds);
  for (arma::uword f = 0; f < folds; ++f) {
    train[f] = arma::find(fold != f);
    held[f] = arma::find(fold == f);
  }
  const double D = static_cast<double>(X.n_cols);
  screen_result r;
  r.correct.set_size(n, nk);
  r.correct.fill(-1);
  r.degenerate.zeros(nk, folds);
  r.screened.zeros(nk);
  r.near_identity.zeros(nk);
  r.errors.assign(nk * folds, std::string());

  // Kernels near the identity on the rows: from each row's nearest other
  // row (distinct inputs only).
  if (n >= 2 && opt.near_identity > 0.0) {
    arma::uvec self = arma::regspace<arma::uvec>(0, n - 1), nb(n);
    for (arma::uword i = 0; i < n; ++i) {
      double best = std::numeric_limits<double>::infinity();
      arma::uword bj = i;
      for (arma::uword j = 0; j < n; ++j) {
        const double d = S(i, j);
        if (j != i && d > 0.0 && d < best) {
          best = d;
          bj = j;
        }
      }
      nb[i] = bj;
    }
    for (arma::uword j = 0; j < nk; ++j) {
      const arma::vec kii = detail::combo_pairs(kernels[j], P, S, self, self, D);
      const arma::vec kjj = detail::combo_pairs(kernels[j], P, S, nb, nb, D);
      const arma::vec kij = detail::combo_pairs(kernels[j], P, S, self, nb, D);
      arma::vec c(n);
      for (arma::uword i = 0; i < n; ++i) {
        const double den = std::sqrt(kii[i] * kjj[i]);
        c[i] = nb[i] == i ? 1.0 : (den > 0.0 ? kij[i] / den : 0.0);
      }
      if (arma::median(c) < opt.near_identity) r.near_identity[j] = 1;
    }
  }

  // Each task on one thread, without the interrupt callback (polled by
  // parallel_for() on the calling thread between waves).
  const context task_ctx(1, ctx.kernels, [] { return false; });
  auto task = [&](arma::uword j, arma::uword f) {
    const arma::uvec& tr = train[f];
    const arma::uvec& te = held[f];
    if (tr.n_elem < 3 || te.n_elem == 0) return;
    try {
      const arma::mat Ktr = detail::combo_block(kernels[j], P, S, tr, tr, D);
      const degeneracy deg = detail::gram_degeneracy_on(
          Ktr, [&](arma::uword a, arma::uword b) { return S(tr[a], tr[b]) > 0.0; });
      r.degenerate(j, f) = static_cast<arma::uword>(deg);
      if (deg != degeneracy::none) return;
      const arma::uword q = std::min<arma::uword>(opt.components, tr.n_elem);
      const kpca_result kp = kpca_fit(Ktr, q, opt.tol, kpca_method::automatic, task_ctx);
      const arma::mat Kte = detail::combo_block(kernels[j], P, S, te, tr, D);
      arma::mat zte = kpca_project(Kte, kp.projection, kp.col_means, kp.grand_mean);
      arma::mat ztr = kp.coords;
      const arma::uvec ytr = y.elem(tr);
      // DNE on the fold's coordinates, its map applied to both sides
      arma::umat same, other;
      const arma::uword dk = std::min<arma::uword>(opt.dne_k, tr.n_elem - 1);
      same_other_neighbors(ztr, ytr, dk, same, other, 256, task_ctx);
      const dne_graph g = make_dne_graph(same, other, tr.n_elem);
      const dne_result fit = dne_fit(ztr, g, 0, 0.0, true, task_ctx);
      ztr = apply_map(ztr, fit.A, task_ctx.kernels);
      zte = apply_map(zte, fit.A, task_ctx.kernels);
      const arma::uword kk = std::min<arma::uword>(opt.k, tr.n_elem);
      const knn_result v = knn_classify(ztr, ytr, classes, zte, kk, false, task_ctx);
      for (arma::uword i = 0; i < te.n_elem; ++i)
        r.correct(te[i], j) = v.cls[i] == y[te[i]] ? 1 : 0;
    } catch (const interrupted&) {
      throw;
    } catch (const std::exception& e) {
      r.errors[j * folds + f] = e.what();
      for (arma::uword i = 0; i < te.n_elem; ++i) r.correct(te[i], j) = -1;
    }
  };
  auto run = [&](const std::vector<arma::uword>& which) {
    parallel_for(which.size() * folds, ctx, [&](std::size_t t, std::size_t) {
      task(which[t / folds], static_cast<arma::uword>(t % folds));
    });
    for (arma::uword j : which) r.screened[j] = 1;
  };
  // The held-out accuracy of a screened kernel (-1 when it has no score).
  auto accuracy = [&](arma::uword j) {
    double s = 0.0;
    arma::uword m = 0;
    for (arma::uword i = 0; i < n; ++i)
      if (r.correct(i, j) >= 0) {
        s += static_cast<double>(r.correct(i, j));
        ++m;
      }
    return m ? s / static_cast<double>(m) : -1.0;
  };
  std::vector<arma::uword> first;
  for (arma::uword j = 0; j < nk; ++j)
    if (!r.near_identity[j] && (!opt.grid || j % 2 == 0)) first.push_back(j);
  run(first);
  if (opt.grid && nk > 1) {
    // the neighbours on the grid of the best kernel screened so far
    arma::uword best = nk;
    double top = -1.0;
    for (arma::uword j : first) {
      const double a = accuracy(j);
      if (a > top) {
        top = a;
        best = j;
      }
    }
    std::vector<arma::uword> second;
    if (best < nk) {
      for (arma::uword j : {best - 1, best + 1})
        if (best > 0 || j != best - 1)
          if (j < nk && !r.screened[j] && !r.near_identity[j]) second.push_back(j);
    }
    run(second);
  }
  return r;
}

}  // namespace kmaha

#endif  // KMAHA_SCREEN_HPP
