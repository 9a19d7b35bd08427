// Glue for NCA and kernel-trick NCA: the core objective (kmaha/nca.hpp)
// minimised with R's L-BFGS-B (optim.h).
#include "glue.h"
#include "optim.h"
#include <kmaha/nca.hpp>
#include <kmaha/nca_minibatch.hpp>
#include <memory>

namespace {

std::unique_ptr<kmaha::nca_objective> make_nca(
    const arma::mat& X, const arma::uvec& y, double lambda,
    const arma::mat* reg, arma::uword block, const kmaha::context& c) {
  return std::unique_ptr<kmaha::nca_objective>(
      new kmaha::nca_objective(X, y, lambda, reg, block, c));
}

// Runs L-BFGS-B on an NCA objective from the d x D start A0.
Rcpp::List fit_nca(const kmaha::nca_objective& obj, const arma::mat& A0,
                   int max_iter, double tol, bool verbose,
                   const kmaha::context& c) {
  const arma::uword d = A0.n_rows, D = A0.n_cols;
  int evals = 0;
  auto fg = [&](const arma::vec& par, arma::vec& g) -> double {
    const arma::mat A(const_cast<double*>(par.memptr()), d, D, false, true);
    // The gradient is written straight into g (same d*D doubles).
    g.set_size(d * D);
    arma::mat G(g.memptr(), d, D, false, true);
    const double f = obj.evaluate(A, &G);
    ++evals;
    if (verbose) {
      Rcpp::Rcout << "  evaluation " << evals << ": objective " << f
                  << ", gradient norm " << arma::norm(g, 2) << std::endl;
    }
    return f;
  };
  // tol is the relative reduction of the objective at which L-BFGS-B stops
  // (optim()'s factr is in units of the machine epsilon).
  const double factr = tol / std::numeric_limits<double>::epsilon();
  kmaha_glue::lbfgs_result res =
      kmaha_glue::minimize_lbfgs(fg, arma::vectorise(A0), max_iter, factr, 0.0,
                                 c.interrupt);
  arma::mat A = arma::reshape(res.par, d, D);
  // The value reported is the one at the returned parameters.
  const double value = res.value_at_par ? res.value : obj.evaluate(A, nullptr);
  if (verbose) {
    Rcpp::Rcout << "L-BFGS-B: " << res.message << " after " << res.fncount
                << " evaluations (" << res.stop << "); objective " << value
                << std::endl;
  }
  return Rcpp::List::create(
      Rcpp::Named("map") = A, Rcpp::Named("value") = value,
      Rcpp::Named("iterations") = res.fncount,
      Rcpp::Named("trace") = Rcpp::NumericVector(res.trace.begin(), res.trace.end()),
      Rcpp::Named("converged") = res.converged, Rcpp::Named("stop") = res.stop,
      Rcpp::Named("gradient_norm") = res.grad_norm,
      Rcpp::Named("start_scale") = 1.0,
      // L-BFGS-B stopped at its first evaluation, with a vanishing gradient.
      Rcpp::Named("flat_start") = res.fncount <= 1 && res.stop == "gradient",
      Rcpp::Named("fail") = res.fail, Rcpp::Named("message") = res.message);
}

}  // namespace

// NCA objective and gradient at A (d x D) for inputs x (n x D, rows) and
// 1-based class codes y.  reg = NULL: lambda ||A||_F^2, else lambda tr(A R A').
// block = 0 and min_parallel_flops < 0 keep the core's defaults (tests set
// them to exercise small blocks and threads on small problems).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_nca_objective(const arma::mat& x, const arma::ivec& y,
                             const arma::mat& A, double lambda,
                             Rcpp::Nullable<Rcpp::NumericMatrix> reg, int block,
                             double min_parallel_flops, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    arma::mat R;
    if (reg.isNotNull()) R = Rcpp::as<arma::mat>(reg.get());
    std::unique_ptr<kmaha::nca_objective> obj =
        make_nca(x, kmaha_glue::labels_from_r(y), lambda, reg.isNotNull() ? &R : nullptr,
                 static_cast<arma::uword>(std::max(block, 0)), c);
    if (min_parallel_flops >= 0.0) obj->set_min_parallel_flops(min_parallel_flops);
    arma::mat G;
    const double f = obj->evaluate(A, &G);
    return Rcpp::List::create(Rcpp::Named("value") = f, Rcpp::Named("gradient") = G,
                              Rcpp::Named("isa") = std::string(obj->isa_name()));
  });
}

// Fit NCA (reg = NULL) or kernel-trick NCA (x = Gram matrix, reg = Gram
// matrix) from the start A0 with L-BFGS-B.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_nca_fit(const arma::mat& x, const arma::ivec& y,
                       const arma::mat& A0, double lambda,
                       Rcpp::Nullable<Rcpp::NumericMatrix> reg, int max_iter,
                       double tol, bool verbose, bool rescale_start, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    arma::mat R;
    if (reg.isNotNull()) R = Rcpp::as<arma::mat>(reg.get());
    const std::unique_ptr<kmaha::nca_objective> obj =
        make_nca(x, kmaha_glue::labels_from_r(y), lambda, reg.isNotNull() ? &R : nullptr,
                 0, c);
    if (A0.n_cols != x.n_cols) throw kmaha::error("the start map must have one column per feature");
    // A built-in start far from the scale of the data (the mapped points
    // spread over more than 2^100 or less than 2^-100) makes the objective
    // flat or the problem badly scaled: every neighbour probability is 0 or
    // 1, or all are equal, and the gradient vanishes or is out of all
    // proportion to the map.  Then B = A / s is fitted instead, s a power of
    // two from start_scale(), i.e. NCA on the inputs s x with lambda s^2:
    // the same objective, started from s A0, on parameters of the scale of
    // the data.  The same happens when L-BFGS-B cannot move from the start.
    auto refit_scaled = [&](double s) {
      if (verbose) {
        Rcpp::Rcout << "the start map is far from the scale of the data; "
                    << "fitting from the start map times " << s << std::endl;
      }
      const arma::mat xs = x * s;
      const std::unique_ptr<kmaha::nca_objective> obj_s =
          make_nca(xs, kmaha_glue::labels_from_r(y), lambda * s * s,
                   reg.isNotNull() ? &R : nullptr, 0, c);
      Rcpp::List r = fit_nca(*obj_s, A0, max_iter, tol, verbose, c);
      r["map"] = Rcpp::as<arma::mat>(r["map"]) * s;
      r["start_scale"] = s;
      return r;
    };
    // Unless the penalty at the rescaled start, lambda s^2 reg(A0), would
    // exceed the largest possible data term (n): with such a penalty the
    // optimum is a map near zero, which the unscaled fit reaches.
    auto usable = [&](double s) {
      if (s == 1.0) return false;
      const double pen = lambda * s * s * obj->reg_value(A0);
      return std::isfinite(pen) && pen <= static_cast<double>(x.n_rows);
    };
    if (rescale_start) {
      const double zmax = arma::abs(kmaha::apply_map(x, A0, obj->kernels_isa())).max();
      if (!(zmax <= std::ldexp(1.0, 100) && zmax >= std::ldexp(1.0, -100))) {
        const double s = obj->start_scale(A0);
        if (usable(s)) {
          Rcpp::List res = refit_scaled(s);
          res["isa"] = std::string(obj->isa_name());
          return res;
        }
      }
    }
    Rcpp::List res = fit_nca(*obj, A0, max_iter, tol, verbose, c);
    if (rescale_start && Rcpp::as<bool>(res["flat_start"])) {
      const double s = obj->start_scale(A0);
      if (usable(s)) res = refit_scaled(s);
    }
    res["isa"] = std::string(obj->isa_name());
    return res;
  });
}

// ---------------------------------------------------------------------------
// Mini-batch NCA (kmaha/nca_minibatch.hpp): Adam steps on the NCA objective
// of batches of rows.  batches: b x steps matrix of 1-based row indices, one
// column per step (drawn in R).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_nca_minibatch(const arma::mat& x, const arma::ivec& y,
                             const arma::mat& A0, double lambda,
                             const arma::imat& batches, double learning_rate,
                             SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    if (batches.min() < 1) throw kmaha::error("batch indices must be positive");
    kmaha::nca_minibatch_options o;
    o.lambda = lambda;
    o.learning_rate = learning_rate;
    const kmaha::nca_minibatch_result r = kmaha::nca_minibatch(
        x, kmaha_glue::labels_from_r(y), A0, arma::conv_to<arma::umat>::from(batches - 1), o,
        c);
    return Rcpp::List::create(
        Rcpp::Named("map") = r.A, Rcpp::Named("value") = r.objective,
        Rcpp::Named("trace") = Rcpp::NumericVector(r.trace.begin(), r.trace.end()),
        Rcpp::Named("isa") = r.isa);
  });
}
