// Glue for MLKR (metric learning for kernel regression): the core's
// objective and driver (kmaha/mlkr.hpp), minimised with R's L-BFGS-B
// (optim.h).
#include "glue.h"
#include "heldout.h"
#include "optim.h"
#include <kmaha/mlkr.hpp>

// MLKR objective, gradient and leave-one-out kernel-regression predictions
// at A (d x D) for inputs x (n x D, rows) and the response y as given (no
// standardization).  block = 0 and min_parallel_flops < 0 keep the core's
// defaults (tests set them to exercise small blocks and threads).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_mlkr_objective(const arma::mat& x, const arma::vec& y,
                              const arma::mat& A, double lambda, int block,
                              double min_parallel_flops, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    kmaha::mlkr_objective obj(x, y, lambda, static_cast<arma::uword>(std::max(block, 0)), c);
    if (min_parallel_flops >= 0.0) obj.set_min_parallel_flops(min_parallel_flops);
    arma::mat G;
    arma::vec yhat;
    const double f = obj.evaluate(A, &G, &yhat);
    return Rcpp::List::create(Rcpp::Named("value") = f, Rcpp::Named("gradient") = G,
                              Rcpp::Named("fitted") = Rcpp::NumericVector(yhat.begin(), yhat.end()),
                              Rcpp::Named("isa") = std::string(obj.isa_name()));
  });
}

// Fit MLKR from the start A0 (d x D; a 0 x 0 matrix: the identity) with R's
// L-BFGS-B, by the core's driver (kmaha/mlkr.hpp): the response is
// standardized there, the fit runs in the span of the centred rows when
// that is smaller (span = TRUE), and the start is rescaled when
// scale_start.  score: NULL, or a fold's held-out rows to predict in the
// learned metric (see score_heldout_regress() in heldout.h), returned as
// `score`.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_mlkr_fit(const arma::mat& x, const arma::vec& y, const arma::mat& A0,
                        double lambda, int max_iter, double tol, bool verbose,
                        bool scale_start, bool span, SEXP score, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    kmaha::mlkr_fit_options o;
    o.lambda = lambda;
    o.max_iter = max_iter;
    o.tol = tol;
    o.scale_start = scale_start;
    o.span = span;
    std::function<void(const std::string&)> log;
    if (verbose) log = [](const std::string& line) { Rcpp::Rcout << line << std::endl; };
    const kmaha::mlkr_fit_result r =
        kmaha::mlkr_fit(x, y, A0, o, kmaha_glue::lbfgs_minimizer(c.interrupt), log, c);
    Rcpp::List out = kmaha_glue::fit_result_list(r);
    out["span_rank"] = static_cast<int>(r.span_rank);
    out["fitted"] = Rcpp::NumericVector(r.fitted.begin(), r.fitted.end());
    out["y_center"] = r.y_center;
    out["y_scale"] = r.y_scale;
    out["score"] = kmaha_glue::score_heldout_regress(score, x, y, r.map, c);
    return out;
  });
}
