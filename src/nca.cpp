// Glue for NCA and kernel-trick NCA: the core objective (kmaha/nca.hpp)
// minimised with R's L-BFGS-B (optim.h).
#include "glue.h"
#include "optim.h"
#include <kmaha/nca.hpp>
#include <memory>

namespace {

std::unique_ptr<kmaha::nca_objective> make_nca(
    const arma::mat& X, const arma::uvec& y, double lambda,
    const arma::mat* reg, int threads, arma::uword block) {
  return std::unique_ptr<kmaha::nca_objective>(new kmaha::nca_objective(
      X, y, lambda, reg, threads, block, kmaha_glue::user_interrupt(),
      kmaha_glue::isa_setting()));
}

arma::uvec zero_based(const arma::ivec& y) {
  if (y.n_elem == 0 || y.min() < 1) Rcpp::stop("labels must be positive integer codes");
  return arma::conv_to<arma::uvec>::from(y - 1);
}

// Runs L-BFGS-B on an NCA objective from the d x D start A0.
Rcpp::List fit_nca(const kmaha::nca_objective& obj, const arma::mat& A0,
                   int max_iter, double tol, bool verbose) {
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
      kmaha_glue::minimize_lbfgs(fg, arma::vectorise(A0), max_iter, factr, 0.0);
  arma::mat A = arma::reshape(res.par, d, D);
  // The value reported is the one at the returned parameters.
  const double value = res.value_at_par ? res.value : obj.evaluate(A, nullptr);
  if (verbose) {
    Rcpp::Rcout << "L-BFGS-B: " << res.message << " after " << res.fncount
                << " evaluations; objective " << value << std::endl;
  }
  return Rcpp::List::create(
      Rcpp::Named("map") = A, Rcpp::Named("value") = value,
      Rcpp::Named("iterations") = res.fncount,
      Rcpp::Named("trace") = Rcpp::NumericVector(res.trace.begin(), res.trace.end()),
      Rcpp::Named("converged") = (res.fail == 0),
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
                             Rcpp::Nullable<Rcpp::NumericMatrix> reg,
                             int threads, int block = 0,
                             double min_parallel_flops = -1.0) {
  return kmaha_glue::guarded([&] {
    arma::mat R;
    if (reg.isNotNull()) R = Rcpp::as<arma::mat>(reg.get());
    std::unique_ptr<kmaha::nca_objective> obj =
        make_nca(x, zero_based(y), lambda, reg.isNotNull() ? &R : nullptr,
                 threads, static_cast<arma::uword>(std::max(block, 0)));
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
                       double tol, bool verbose, int threads) {
  return kmaha_glue::guarded([&] {
    arma::mat R;
    if (reg.isNotNull()) R = Rcpp::as<arma::mat>(reg.get());
    const std::unique_ptr<kmaha::nca_objective> obj =
        make_nca(x, zero_based(y), lambda, reg.isNotNull() ? &R : nullptr,
                 threads, 0);
    if (A0.n_cols != x.n_cols) Rcpp::stop("the start map must have one column per feature");
    Rcpp::List res = fit_nca(*obj, A0, max_iter, tol, verbose);
    res["isa"] = std::string(obj->isa_name());
    return res;
  });
}
