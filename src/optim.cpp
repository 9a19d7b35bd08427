// Test hook for optim.h: R's L-BFGS-B, as the core's learners drive it, on
// an objective written in R (fn returns the value, gr the gradient).  Used
// by tests/testthat/test-optim.R to check how runs stop and how errors and
// non-finite values inside the C optimizer are handled.
#include "glue.h"
#include "optim.h"

// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_lbfgs_test(Rcpp::Function fn, Rcpp::Function gr,
                          const arma::vec& x0, int max_iter, double tol,
                          SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    auto fg = [&](const arma::vec& x, arma::vec& g) -> double {
      const Rcpp::NumericVector xr(x.begin(), x.end());
      const double f = Rcpp::as<double>(fn(xr));
      g = Rcpp::as<arma::vec>(gr(xr));
      if (g.n_elem != x.n_elem) throw kmaha::error("gr returned the wrong length");
      return f;
    };
    const kmaha_glue::lbfgs_result r = kmaha_glue::minimize_lbfgs(
        fg, x0, max_iter, tol / std::numeric_limits<double>::epsilon(), 0.0,
        c.interrupt);
    return Rcpp::List::create(
        Rcpp::Named("par") = Rcpp::NumericVector(r.par.begin(), r.par.end()),
        Rcpp::Named("value") = r.value, Rcpp::Named("stop") = r.stop,
        Rcpp::Named("converged") = r.converged,
        Rcpp::Named("message") = r.message,
        Rcpp::Named("evaluations") = r.fncount,
        Rcpp::Named("gradient_norm") = r.grad_norm);
  });
}
