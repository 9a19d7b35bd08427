// kmaha core: mini-batch NCA for large n.
//
// Full-batch NCA costs O(n^2 d) per evaluation and L-BFGS needs tens of
// evaluations: about a minute at n = 16 000 on two cores.  The mini-batch
// variant estimates the gradient of the objective of nca.hpp,
//     f(A) = - sum_i p_i(A) + lambda ||A||_F^2,
// on a batch B of b rows at a time: the NCA objective of the batch alone
// (softmax over the batch's points, evaluated by the same nca_function as
// the full objective, nca.hpp) scaled by n / b, plus the exact gradient of the
// penalty.  Steps follow Adam (Kingma and Ba, 2015) with a step size that is
// constant for the first half of the steps and then decays linearly to 2% of
// it; the step size is relative to the root-mean-square row norm of the
// starting map, so it does not depend on the units of the inputs.  Cost:
// O(steps * b^2 d), independent of n, and O(b^2) memory per thread.
//
// Within a batch the neighbourhoods are those of b points, not n: the map is
// learned for sparser neighbourhoods than the full data's.  A k-NN rule only
// uses the direction of the map (its scale does not change the neighbours),
// and bench/scale.R measures the test accuracy against full-batch NCA.
//
// The batches (row indices) are drawn by the caller, so its random number
// generator decides and the fit does not depend on the thread count except
// through rounding in the objective's sums.
//
// Like the full-batch fit, it works in the span of the centred training
// points when that has fewer dimensions than the inputs (nca_span.hpp):
// every batch's differences lie in it, and so do the gradients of the batch
// objectives.  Adam's steps are not invariant to a rotation of the
// coordinates (they scale each coordinate by its own gradient history), so
// the steps on the span's coordinates are not those the full-dimension
// iteration would take on the same batches; they run on the same objective,
// with the step size relative to the start in those coordinates, and move
// nothing outside the span (the full-dimension iteration moves the start's
// component there too, which no batch objective sees).  At p >> n the
// full-dimension iteration would hold three d x D matrices with d up to D.
#ifndef KMAHA_NCA_MINIBATCH_HPP
#define KMAHA_NCA_MINIBATCH_HPP

#include <algorithm>
#include <cmath>
#include <string>
#include "common.hpp"
#include "nca.hpp"
#include "nca_span.hpp"

namespace kmaha {

struct nca_minibatch_options {
  double lambda = 0.0;          // weight of ||A||_F^2
  double learning_rate = 0.02;  // relative to the rms row norm of A0
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  bool span = true;             // in the span of the centred points (see above)
};

struct nca_minibatch_result {
  arma::mat A;           // d x D map after the last step
  arma::vec trace;       // per step: batch objective scaled to n points
  double objective = 0;  // mean of trace over the last min(50, steps) steps
  std::string isa;       // instruction set of the objective's compiled copy
  arma::uword span_rank = 0;  // r when solved in the span, else 0
  double start_log_norm = 0;  // log ||A0||_F in the solver's coordinates
};

// X: n x Din rows, y: 0-based labels, start: the d x Din start (nca_span.hpp),
// batches: b x steps 0-based row indices (one column per step).  Each
// batch's objective (without penalty) runs on the context's threads and
// instruction set.  The map returned acts on X (d x Din; at most r rows when
// solved in the span).
inline nca_minibatch_result nca_minibatch(const arma::mat& Xin,
                                          const arma::uvec& y,
                                          const nca_start& start,
                                          const arma::umat& batches,
                                          const nca_minibatch_options& o,
                                          const context& ctx) {
  const arma::uword n = Xin.n_rows, b = batches.n_rows, steps = batches.n_cols;
  if (y.n_elem != n) throw error("nca: labels and rows differ in length");
  if (b < 2) throw error("nca: a batch needs at least two rows");
  if (steps == 0) throw error("nca: at least one step is needed");
  if (batches.max() >= n) throw error("nca: batch index out of range");
  if (!(o.lambda >= 0.0) || !(o.learning_rate > 0.0))
    throw error("nca: lambda must be >= 0 and the learning rate > 0");
  const nca_coords coords = nca_solver_coords(Xin, start, o.span, ctx);
  const arma::mat& X = coords.inputs(Xin);
  const arma::mat& A0 = coords.A0;
  const double rms_row = arma::norm(A0, "fro") / std::sqrt(static_cast<double>(A0.n_rows));
  if (!(rms_row > 0.0)) throw error("nca: the starting map must not be zero");
  const double lr0 = o.learning_rate * rms_row;
  const double scale = static_cast<double>(n) / static_cast<double>(b);

  nca_minibatch_result r;
  r.A = A0;
  r.trace.set_size(steps);
  arma::mat m1(arma::size(A0), arma::fill::zeros), m2(arma::size(A0), arma::fill::zeros);
  arma::mat g, Xb;
  arma::uvec yb;
  double b1t = 1.0, b2t = 1.0;
  for (arma::uword t = 0; t < steps; ++t) {
    const arma::uvec rows = batches.col(t);
    Xb = X.rows(rows);
    yb = y.elem(rows);
    const nca_objective f(Xb, yb, 0.0, nullptr, 0, ctx);
    if (t == 0) r.isa = f.isa_name();
    const double fb = f.evaluate(r.A, &g);
    g *= scale;
    double pen = 0.0;
    if (o.lambda > 0.0) {
      g += (2.0 * o.lambda) * r.A;
      pen = o.lambda * arma::accu(arma::square(r.A));
    }
    r.trace[t] = scale * fb + pen;
    b1t *= o.beta1;
    b2t *= o.beta2;
    const double frac = static_cast<double>(t + 1) / static_cast<double>(steps);
    const double lr = lr0 * (frac <= 0.5 ? 1.0 : std::max(0.02, 2.0 * (1.0 - frac)));
    // The Adam step as a plain loop: Armadillo's elementwise sqrt would open
    // an OpenMP team for these few thousand entries at every step, which
    // cost more than the batch's objective on a busy machine.
    const double c1 = 1.0 / (1.0 - b1t), c2 = 1.0 / (1.0 - b2t);
    double* a = r.A.memptr();
    double* p1 = m1.memptr();
    double* p2 = m2.memptr();
    const double* pg = g.memptr();
    for (arma::uword k = 0; k < r.A.n_elem; ++k) {
      p1[k] = o.beta1 * p1[k] + (1.0 - o.beta1) * pg[k];
      p2[k] = o.beta2 * p2[k] + (1.0 - o.beta2) * pg[k] * pg[k];
      a[k] -= lr * (p1[k] * c1) / (std::sqrt(p2[k] * c2) + o.eps);
    }
    if (!r.A.is_finite()) throw error(error_kind::numerical, "nca: the mini-batch steps diverged");
    check_interrupt(ctx.interrupt);
  }
  const arma::uword last = std::min<arma::uword>(50, steps);
  r.objective = arma::mean(r.trace.tail(last));
  r.start_log_norm = log_frobenius(A0);
  r.span_rank = coords.reduced() ? coords.basis.n_cols : 0;
  r.A = coords.to_inputs(r.A, ctx);
  return r;
}

}  // namespace kmaha

#endif  // KMAHA_NCA_MINIBATCH_HPP
