// kmaha core: metric learning for kernel regression (MLKR; Weinberger and
// Tesauro, AISTATS 2007): the objective, its gradient and the driver.
//
// The objective.  For a map A (d x D), squared distances d_ij = ||A x_i -
// A x_j||^2, kernel weights k_ij = exp(-d_ij) (j != i) and the leave-one-out
// Nadaraya-Watson prediction
//
//   yhat_i = sum_j p_ij y_j,   p_ij = k_ij / sum_{l != i} k_il,   p_ii = 0,
//
//   f(A) = sum_i (y_i - yhat_i)^2  +  lambda ||A||_F^2.
//
// The gradient.  Row i of the softmax depends on row i of the distances
// only; with e_i = yhat_i - y_i,
//
//   dyhat_i / dd_ij = -p_ij y_j + p_ij yhat_i = p_ij (yhat_i - y_j),
//   W_ij = df / dd_ij (through row i) = 2 e_i p_ij (yhat_i - y_j),
//
// and dd_ij / dA = 2 A (x_i - x_j)(x_i - x_j)', so
//
//   df/dA = 4 A sum_i e_i sum_j p_ij (yhat_i - y_j) (x_i - x_j)(x_i - x_j)'
//           + 2 lambda A
//         = 2 (Lap Z)' X + 2 lambda A,   Z = X A',
//   Lap = diag(rowsum(W) + colsum(W)) - W - W',
//   Lap Z = (rowsum(W) + colsum(W)) .* Z - W Z - W' Z.
//
// The rows of W sum to zero (sum_j p_ij (yhat_i - y_j) = yhat_i - yhat_i), as
// NCA's do; their computed sums, rounding-level, are kept anyway.
//
// Evaluation is NCA's, by the driver both share (blocked_rows.hpp): rows in blocks of b, one product Z_I Z' per
// block turned in place into distances, a numerically safe softmax (each
// row's smallest distance subtracted before exponentiating, so the largest
// weight is exp(0) = 1 and no finite input gives 0/0 or overflows), then the
// prediction and the gradient weights W_I; W Z is produced block by block
// and W' Z accumulated per slot of dealt_for() (parallel.hpp), so memory is
// O(n d + n D) plus b x n per thread, never n x n and never per pair.  The
// vectorised exponential is NCA's (nca_detail::exp_nonpos()), the rescaling
// of extreme coordinates the driver's (rescale_rows()).
//
// The driver, mlkr_fit().
//  * The response is standardized first (centred, divided by its standard
//    deviation): the map that minimises f does not change under an affine
//    change of y (yhat follows y), and on the standardized scale the
//    convergence test (relative to max(|f|, 1)) and lambda do not depend on
//    the units of y.  f(0) is then about n - 1 (every prediction the mean).
//  * The span of the centred training rows, as for NCA (nca_span.hpp): f
//    depends on A only through A (x_i - x_j), i.e. through A B for an
//    orthonormal basis B (D x r) of the span of the centred rows
//    (span.hpp: reducing_span()), and ||A||_F >= ||A B||_F.  When r < D
//    (p >= n - 1, or collinear columns) the problem is solved on the
//    coordinates X B (n x r) from the start A0 B (the identity: the r x r
//    identity; a start with more rows than r: the same metric with r rows,
//    fewer_rows()).  The map returned, A~ B', has D columns, at most r rows
//    and the same objective value.  With lambda = 0 L-BFGS from A0 moves
//    only within the span (every gradient's rows lie in it, and the inner
//    products of such matrices are those of their coordinates on B), so
//    the full-dimension fit from A0 gives the training points the distances
//    of the returned map, plus A0's component outside the span, which
//    changes no distance between them.
//  * The start.  A0 empty means the identity (D x D, r x r in the span).
//    With scale_start the start is multiplied by s = 1 / sqrt(median
//    squared distance between the mapped training points) (pairs of at
//    most 1000 evenly spaced rows), so that the median pairwise kernel
//    weight is exp(-1): from standardized inputs in D dimensions the
//    squared distances are about 2 D, and exp(-2 D) leaves each point one
//    neighbour with weight ~1 (a 1-NN regression whose objective is nearly
//    flat in most directions); from the rescaled start every point sees a
//    smooth average over many neighbours, and the fit sharpens the kernel
//    where that lowers the leave-one-out error.
#ifndef KMAHA_MLKR_HPP
#define KMAHA_MLKR_HPP

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>
#include "blocked_rows.hpp"
#include "common.hpp"
#include "context.hpp"
#include "gemm.hpp"
#include "minimizer.hpp"
#include "nca.hpp"
#include "parallel.hpp"
#include "span.hpp"

namespace kmaha {

namespace mlkr_detail {

// Row i of a block: t holds the inner products z_i . z_j (j = 0..n-1), nz
// the squared norms, y the response.  Sets *yhat to the leave-one-out
// prediction of row i and returns its squared residual; with grad, t is
// overwritten with the gradient weights W_ij.  c: as in NCA, the inner
// products may be those of Z / c (the distances are multiplied back by c^2
// inside the exponential).
template <class V, class VL>
KMAHA_ALWAYS_INLINE double kernel_row_body(double* t, const double* nz,
                                           const double* y, std::size_t n,
                                           std::size_t i, bool grad, double c,
                                           double* yhat) {
  // distances (clamped at 0) and their minimum without the diagonal (NCA's)
  const double m = nca_detail::distance_row<V>(t, nz, n, i);
  // e_ij = exp(m - d_ij) <= 1, their sum and their sum weighted by y.
  double s = 0.0, sy = 0.0;
  std::size_t j = 0;
#ifdef KMAHA_NCA_VECTOR
  constexpr std::size_t W = sizeof(V) / sizeof(double);
  {
    V vs, vsy;
    nca_detail::vsplat(vs, 0.0);
    nca_detail::vsplat(vsy, 0.0);
    for (; j + W <= n; j += W) {
      V e, yy;
      nca_detail::vload(e, t + j);
      e = m - e;
      if (c != 1.0) e = (e * c) * c;
      nca_detail::exp_nonpos<V, VL>(e);
      nca_detail::vstore(t + j, e);
      nca_detail::vload(yy, y + j);
      vs += e;
      vsy += e * yy;
    }
    for (std::size_t k = 0; k < W; ++k) {
      s += vs[k];
      sy += vsy[k];
    }
  }
#endif
  for (; j < n; ++j) {
    const double e = nca_detail::exp_nonpos_scalar(c != 1.0 ? ((m - t[j]) * c) * c : m - t[j]);
    t[j] = e;
    s += e;
    sy += e * y[j];
  }
  // (t[i] is exp(-inf) = 0: nothing to take out of the sums)
  t[i] = 0.0;
  const double yh = sy / s;
  *yhat = yh;
  const double r = yh - y[i];
  if (grad) {
    // W_ij = 2 r p_ij (yhat_i - y_j)
    const double a = 2.0 * r / s;
    for (std::size_t k = 0; k < n; ++k) t[k] *= a * (yh - y[k]);
  }
  return r * r;
}

inline double kernel_row_baseline(double* t, const double* nz, const double* y,
                                  std::size_t n, std::size_t i, bool grad, double c,
                                  double* yhat) {
  return kernel_row_body<nca_detail::v2d, nca_detail::v2l>(t, nz, y, n, i, grad, c, yhat);
}

#ifdef KMAHA_GEMM_AVX2
KMAHA_TARGET_AVX2
inline double kernel_row_avx2(double* t, const double* nz, const double* y,
                              std::size_t n, std::size_t i, bool grad, double c,
                              double* yhat) {
  return kernel_row_body<nca_detail::v4d, nca_detail::v4l>(t, nz, y, n, i, grad, c, yhat);
}
#endif

inline double kernel_row(isa s, double* t, const double* nz, const double* y,
                         std::size_t n, std::size_t i, bool grad, double c,
                         double* yhat) {
#ifdef KMAHA_GEMM_AVX2
  if (s == isa::avx2) return kernel_row_avx2(t, nz, y, n, i, grad, c, yhat);
#else
  (void)s;
#endif
  return kernel_row_baseline(t, nz, y, n, i, grad, c, yhat);
}

}  // namespace mlkr_detail

class mlkr_objective {
 public:
  // X: n x D, one observation per row (kept centred: distances and the
  // gradient do not change, since the columns of the Laplacian sum to zero,
  // and the distances computed from inner products lose less to
  // cancellation); y: n finite responses (used as given: mlkr_fit()
  // standardizes them).  lambda >= 0.  block = 0 picks
  // the row block size automatically.  ctx: threads, instruction set and
  // interrupt callback (a copy is kept).
  mlkr_objective(const arma::mat& X, const arma::vec& y, double lambda,
                 arma::uword block, const context& ctx)
      : lambda_(lambda), isa_(ctx.kernels), X_(X.each_row() - arma::mean(X, 0)),
        y_(y), rows_(X.n_rows, block, ctx) {
    const arma::uword n = X.n_rows;
    if (n < 2) throw error("mlkr: at least two observations are needed");
    if (y.n_elem != n) throw error("mlkr: the response and the rows differ in length");
    if (!X.is_finite()) throw error("mlkr: inputs must be finite");
    if (!y.is_finite()) throw error("mlkr: the response must be finite");
    if (!(lambda >= 0.0) || !std::isfinite(lambda))
      throw error("mlkr: lambda must be finite and non-negative");
    if (isa_ == isa::avx2 && !cpu_has_avx2_fma())
      throw error("mlkr: the AVX2+FMA kernels are not available here");
  }

  arma::uword n_obs() const { return X_.n_rows; }
  arma::uword n_features() const { return X_.n_cols; }
  const char* isa_name() const { return kmaha::isa_name(isa_); }
  void set_min_parallel_flops(double flops) { rows_.min_parallel_flops = flops; }

  // Objective at A (d x D); the gradient goes to *grad and the leave-one-out
  // predictions to *yhat when they are non-null.
  double evaluate(const arma::mat& A, arma::mat* grad = nullptr,
                  arma::vec* yhat = nullptr) const {
    const arma::uword n = X_.n_rows, D = X_.n_cols, d = A.n_rows;
    if (A.n_cols != D) throw error("mlkr: the map must have one column per feature");
    if (d == 0) throw error("mlkr: the map must have at least one row");
    if (!A.is_finite()) throw error("mlkr: the map has non-finite entries");
    // The data term through the blocked driver (blocked_rows.hpp): row i's
    // term is its squared residual (kernel_row_body()), with the row sums
    // of W kept.
    workspace& w = ws_;
    w.yhat.set_size(n);
    const double* y = y_.memptr();
    double* yh = w.yhat.memptr();
    double c = 1.0;
    double f = rows_.evaluate(
        X_, A, grad, true,
        [&](double* t, std::size_t i, bool g, double cc, const double* nz) {
          return mlkr_detail::kernel_row(isa_, t, nz, y, n, i, g, cc, yh + i);
        },
        &c);
    if (!std::isfinite(c)) {
      // X A' overflows: every kernel weight but the nearest is 0 in any
      // case; report the objective as infinite (the minimiser backs off).
      if (yhat) {
        yhat->set_size(n);
        yhat->fill(arma::datum::nan);
      }
      return std::numeric_limits<double>::infinity();
    }
    if (lambda_ > 0.0) {
      f += lambda_ * arma::accu(arma::square(A));
      if (grad != nullptr) *grad += (2.0 * lambda_) * A;
    }
    if (yhat) *yhat = w.yhat;
    return f;
  }

 private:
  double lambda_;
  isa isa_;
  arma::mat X_;
  arma::vec y_;
  blocked_rows rows_;
  // Scratch of evaluate(), kept between calls (one object must not be
  // evaluated from several threads at once).
  struct workspace {
    arma::vec yhat;
  };
  mutable workspace ws_;
};

// The factor s of the automatic start (see the file comment): 1 / sqrt of
// the median squared distance between the rows of X A0' over the pairs of
// at most `rows` evenly spaced rows (distances at rounding level count as
// 0 and are left out); 1 when the mapped rows all coincide.
inline double mlkr_start_scale(const arma::mat& X, const arma::mat& A0, isa kernels,
                               arma::uword rows = 1000) {
  const arma::uword n = X.n_rows;
  if (A0.n_cols != X.n_cols || A0.n_rows == 0) throw error("mlkr: bad start map");
  const arma::uword m = std::min(n, rows);
  arma::uvec idx(m);
  for (arma::uword q = 0; q < m; ++q)
    idx[q] = static_cast<arma::uword>((static_cast<double>(q) * n) / m);
  arma::mat Z = apply_map(arma::mat(X.rows(idx)), A0, kernels);
  const double c = rescale_rows(Z);  // Z / c, c a power of two
  if (!std::isfinite(c)) return 1.0;
  const arma::vec nz = arma::sum(arma::square(Z), 1);
  const arma::mat G = Z * Z.t();
  const double tiny = 64.0 * std::numeric_limits<double>::epsilon() *
                      (nz.n_elem ? nz.max() : 0.0);
  std::vector<double> d2;
  d2.reserve(m * (m - 1) / 2);
  for (arma::uword j = 0; j < m; ++j)
    for (arma::uword i = j + 1; i < m; ++i) {
      const double v = nz[i] + nz[j] - 2.0 * G(i, j);
      if (v > tiny) d2.push_back(v);
    }
  if (d2.empty()) return 1.0;
  std::nth_element(d2.begin(), d2.begin() + d2.size() / 2, d2.end());
  const double med = d2[d2.size() / 2];  // of Z / c
  return 1.0 / (c * std::sqrt(med));
}

struct mlkr_fit_options {
  double lambda = 0.0;       // weight of lambda ||A||_F^2 (standardized y)
  int max_iter = 500;        // the minimiser's iterations
  double tol = 1e-5;         // relative reduction of f regarded as converged
  bool scale_start = false;  // multiply the start by mlkr_start_scale()
  bool span = true;          // solve in the span of the centred rows when smaller
};

struct mlkr_fit_result {
  arma::mat map;              // d x D (at most r rows in the span)
  double value = 0.0;         // objective at map (standardized response)
  int iterations = 0;         // objective evaluations
  std::vector<double> trace;  // objective after each evaluation
  bool converged = false;
  std::string stop;           // why the minimiser stopped (minimizer.hpp)
  double gradient_norm = 0.0;
  double start_scale = 1.0;   // s of the automatic start, else 1
  bool flat_start = false;    // stopped at its first evaluation, gradient 0
  int fail = 0;
  std::string message;        // the minimiser's own message
  std::string isa;            // instruction set of the kernels
  arma::uword span_rank = 0;  // r when solved in the span, else 0
  arma::vec fitted;           // leave-one-out kernel-regression predictions (y's units)
  double y_center = 0.0, y_scale = 1.0;  // the standardization of y
};

// Fit MLKR on the rows of X (n x D) with response y from the start A0
// (d x D; empty: the identity), with the caller's minimiser; `log`
// (may be empty) receives progress lines.
inline mlkr_fit_result mlkr_fit(const arma::mat& X, const arma::vec& y,
                                const arma::mat& A0, const mlkr_fit_options& o,
                                const minimizer_fn& minimize,
                                const log_fn& log,
                                const context& ctx) {
  const arma::uword n = X.n_rows, D = X.n_cols;
  if (n < 2) throw error("mlkr: at least two observations are needed");
  if (y.n_elem != n) throw error("mlkr: the response and the rows differ in length");
  if (!y.is_finite()) throw error("mlkr: the response must be finite");
  if (!A0.is_empty() && (A0.n_cols != D || A0.n_rows == 0))
    throw error("mlkr: the start map must have one column per feature");
  if (o.max_iter < 1) throw error("mlkr: max_iter must be positive");
  const isa k = ctx.kernels;
  mlkr_fit_result res;
  // the standardized response
  res.y_center = arma::mean(y);
  const double sd = std::sqrt(arma::accu(arma::square(y - res.y_center)) /
                              static_cast<double>(n - 1));
  if (!(sd > 0.0) || !std::isfinite(sd))
    throw error(error_kind::degenerate, "mlkr: the response is constant");
  res.y_scale = sd;
  const arma::vec ys = (y - res.y_center) / sd;
  // the span of the centred rows, when smaller than R^D
  const arma::mat B = o.span ? reducing_span(X, k, ctx.interrupt, "mlkr") : arma::mat();
  check_interrupt(ctx.interrupt);
  const bool reduce = !B.is_empty();
  const arma::mat Xr = reduce ? apply_map(X, arma::mat(B.t()), k) : X;
  const arma::uword Dr = Xr.n_cols;
  res.span_rank = reduce ? Dr : 0;
  arma::mat A;  // the start in the solver's coordinates
  if (A0.is_empty()) {
    A.eye(Dr, Dr);
  } else {
    A = fewer_rows(reduce ? arma::mat(A0 * B) : A0);
  }
  if (o.scale_start) {
    res.start_scale = mlkr_start_scale(Xr, A, k);
    A *= res.start_scale;
  }
  const mlkr_objective obj(Xr, ys, o.lambda, 0, ctx);
  const arma::uword d = A.n_rows;
  const objective_fn fg = map_objective(
      d, Dr, [&obj](const arma::mat& Am, arma::mat* G) { return obj.evaluate(Am, G); }, log);
  minimize_result mr = minimize(fg, arma::vectorise(A), o.max_iter, o.tol);
  arma::mat Af = arma::reshape(mr.par, d, Dr);
  arma::vec yh;
  res.value = obj.evaluate(Af, nullptr, &yh);
  log_minimize_end(log, mr, res.value);
  res.fitted = res.y_center + sd * yh;
  res.iterations = mr.evaluations;
  res.trace = std::move(mr.trace);
  res.converged = mr.converged;
  res.stop = mr.stop;
  res.gradient_norm = mr.grad_norm;
  res.flat_start = mr.evaluations <= 1 && mr.stop == "gradient";
  res.fail = mr.fail;
  res.message = mr.message;
  res.isa = obj.isa_name();
  res.map = reduce ? apply_map(Af, B, k) : Af;  // A~ B'
  return res;
}

}  // namespace kmaha

#endif  // KMAHA_MLKR_HPP
