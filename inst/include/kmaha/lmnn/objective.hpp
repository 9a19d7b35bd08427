// kmaha core, LMNN: the objective and its gradient.
//
//  * push_accum: the hinge terms of the impostor pairs, exact or smoothed
//    (the solvers' continuation), accumulated into a weighted Laplacian;
//  * evaluate: the reference evaluation (gradient with respect to M or L);
//  * evaluate_L: the L-form solver's evaluation, with the pull term folded
//    into the same Laplacian, so that the gradient costs two products of the
//    size of Z = L X' and nothing of size D x D.
// The gradient is the weighted-Laplacian product X' Lap X accumulated column
// by column from the (sparse) target and impostor pairs, or, when most pairs
// carry weight, as one product with the dense Laplacian.
#ifndef KMAHA_LMNN_OBJECTIVE_HPP
#define KMAHA_LMNN_OBJECTIVE_HPP

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>
#include "impostors.hpp"
#include "problem.hpp"

namespace kmaha {
namespace lmnn {

// A pair (a, b) with its weight in the gradient's Laplacian.
struct weighted_pair {
  std::uint32_t a, b;
  double w;
};

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
  // Recording sink: when set, the Laplacian weight of each pair is appended
  // here instead of being applied to F (the caller applies them).
  std::vector<weighted_pair>* pairs = nullptr;
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
      if (pairs) pairs->push_back({static_cast<std::uint32_t>(i),
                                   static_cast<std::uint32_t>(l), -push_w * wsum});
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
        if (pairs) pairs->push_back({static_cast<std::uint32_t>(i),
                                     static_cast<std::uint32_t>(P.Tt(t, i)), w});
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

// value: the objective optimised (with the smoothed hinge when eps > 0);
// exact: the objective itself; pull: the sum of squared target distances;
// push: the exact hinge sum; reg: tr(M R); triples: active triples.
struct eval_out {
  double value = 0.0, exact = 0.0, pull = 0.0, push = 0.0, reg = 0.0;
  std::size_t triples = 0;
};

// Scratch matrices reused across evaluations (avoids reallocating n-sized
// buffers at every step), and the instruction set of the products.
struct workspace {
  arma::mat Zt, dt, Q, wt;
  arma::vec thr;
  arma::mat S;      // dense Laplacian (n x n), when most pairs carry weight
  std::vector<weighted_pair> pairs;
  arma::uword dense_max = 2048;  // largest n for the pair list / dense Laplacian
  gemm_buffers buf;
  isa kernels;
  explicit workspace(isa kernels_) : kernels(kernels_) {}
};

// Value of the objective and (optionally) its gradient, for the map L
// (r x D, M = L'L).  The impostor pairs come from A, or from an exhaustive
// search when A is null (then the value is exact).  gradM: D x D gradient
// with respect to M; gradL: r x D gradient with respect to L.
inline eval_out evaluate(const problem& P, const arma::mat& L,
                         const active_set* A, arma::mat* gradM,
                         arma::mat* gradL, double eps, arma::uword block,
                         const interrupt_fn& interrupt, workspace& w) {
  arma::mat& Zt = w.Zt;
  arma::mat& dt = w.dt;
  arma::vec& thr = w.thr;
  Zt = L * P.Xt;
  check_interrupt(interrupt);
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
    close_pairs(Zt, P.y, thr, block, std::ref(acc), interrupt, w.kernels);
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
  check_interrupt(interrupt);
  if (gradM) {
    arma::mat G = P.Xt * Q.t();
    check_interrupt(interrupt);
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
                           workspace& w, bool expanded = false) {
  map_points(L, P.Xt, w.Zt, w.kernels, w.buf, &interrupt);
  const arma::mat& Zt = w.Zt;
  const arma::uword n = Zt.n_cols, dd = Zt.n_rows;
  target_distances(P, Zt, w.dt, w.thr);
  const arma::mat* F = gradL ? &Zt : nullptr;
  const double pull_w = P.unit_quadratic ? 0.0 : 1.0 - P.mu;
  push_accum acc(P, w.dt, F, nullptr, eps, w.wt, P.mu, pull_w);
  // Small n: record the weighted pairs and apply them below; large n: apply
  // them at once (no pair list, memory stays linear in n).
  const bool record = F && n <= w.dense_max;
  w.pairs.clear();
  acc.pairs = record ? &w.pairs : nullptr;
  if (F && !record) {
    w.Q.zeros(dd, n);
    acc.Q = &w.Q;
  }
  if (A) {
    for (std::size_t p = 0; p < A->size(); ++p) {
      const arma::uword i = A->i[p], l = A->l[p];
      const double d = col_dist2(Zt, i, l);
      if (d < w.thr[i]) acc(i, l, d);
    }
  } else {
    // every pair, by the blocked search; with `expanded` the distances are
    // taken from the block products themselves (see pair_screen)
    close_pairs(Zt, P.y, w.thr, block, std::ref(acc), interrupt, w.kernels,
                !expanded);
  }
  acc.finish();
  if (record) {
    // Q = Z Lap for the weighted Laplacian of the recorded pairs: pair by
    // pair, or (many pairs) as one product with the dense Laplacian,
    // whichever costs less.
    if (16 * w.pairs.size() > static_cast<std::size_t>(n) * n) {
      arma::mat& S = w.S;
      S.zeros(n, n);
      for (const weighted_pair& q : w.pairs) {
        S(q.a, q.b) -= q.w;
        S(q.b, q.a) -= q.w;
        S(q.a, q.a) += q.w;
        S(q.b, q.b) += q.w;
      }
      product(w.kernels, Zt, false, S, false, w.Q, w.buf, &interrupt);
    } else {
      w.Q.zeros(dd, n);
      for (const weighted_pair& q : w.pairs) lap_add(Zt, q.a, q.b, q.w, w.Q);
    }
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
    product(w.kernels, w.Q, false, P.Xt, true, *gradL, w.buf, &interrupt);
    *gradL *= 2.0;
    if (P.unit_quadratic) {
      *gradL += 2.0 * L;
    } else if (P.lambda > 0.0) {
      *gradL += 2.0 * P.lambda * (P.R.empty() ? L : arma::mat(L * P.R));
    }
  }
  return out;
}

// The gradient with respect to M = L'L (D x D) of the objective as
// evaluate_L() defines it (same problem conventions, impostors from A or all
// pairs when A is null, hinge smoothed over eps), from the Laplacian of the
// x-differences: G = X' Lap X plus the quadratic part's gradient.  The
// L-form solver uses it to test a low-rank point for optimality over all M
// (G must be positive semi-definite there).
inline arma::mat m_gradient(const problem& P, const arma::mat& L,
                            const active_set* A, double eps, arma::uword block,
                            const interrupt_fn& interrupt, workspace& w) {
  map_points(L, P.Xt, w.Zt, w.kernels, w.buf, &interrupt);
  const arma::mat& Zt = w.Zt;
  const arma::uword n = Zt.n_cols, D = P.Xt.n_rows;
  target_distances(P, Zt, w.dt, w.thr);
  const double pull_w = P.unit_quadratic ? 0.0 : 1.0 - P.mu;
  arma::mat Q(D, n, arma::fill::zeros);
  push_accum acc(P, w.dt, &P.Xt, &Q, eps, w.wt, P.mu, pull_w);
  if (A) {
    for (std::size_t p = 0; p < A->size(); ++p) {
      const arma::uword i = A->i[p], l = A->l[p];
      const double d = col_dist2(Zt, i, l);
      if (d < w.thr[i]) acc(i, l, d);
    }
  } else {
    close_pairs(Zt, P.y, w.thr, block, std::ref(acc), interrupt, w.kernels);
  }
  acc.finish();
  arma::mat G;
  product(w.kernels, Q, false, P.Xt, true, G, w.buf, &interrupt);
  G = 0.5 * (G + G.t());
  if (P.unit_quadratic) {
    G.diag() += 1.0;
  } else if (P.lambda > 0.0) {
    if (P.R.empty()) G.diag() += P.lambda;
    else G += P.lambda * P.R;
  }
  return G;
}

}  // namespace lmnn
}  // namespace kmaha

#endif  // KMAHA_LMNN_OBJECTIVE_HPP
