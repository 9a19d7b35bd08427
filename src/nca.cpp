// Glue for NCA and kernel-trick NCA: the core's objective (kmaha/nca.hpp)
// and driver (kmaha/nca_fit.hpp), minimised with R's L-BFGS-B (optim.h).
#include "glue.h"
#include "heldout.h"
#include "optim.h"
#include <kmaha/nca.hpp>
#include <kmaha/nca_fit.hpp>
#include <kmaha/nca_minibatch.hpp>

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
    kmaha::nca_objective obj(x, kmaha_glue::labels_from_r(y), lambda,
                             reg.isNotNull() ? &R : nullptr,
                             static_cast<arma::uword>(std::max(block, 0)), c);
    if (min_parallel_flops >= 0.0) obj.set_min_parallel_flops(min_parallel_flops);
    arma::mat G;
    const double f = obj.evaluate(A, &G);
    return Rcpp::List::create(Rcpp::Named("value") = f, Rcpp::Named("gradient") = G,
                              Rcpp::Named("isa") = std::string(obj.isa_name()));
  });
}

// The start of an NCA fit (kmaha/nca_span.hpp): A0 (d x D), or a 0 x 0
// matrix for the first identity_rows rows of the identity (0: all D);
// in_span: A0 holds coordinates on the basis of the span of the centred
// training points (its first r columns are used).
static kmaha::nca_start nca_start_from_r(const arma::mat& A0, int identity_rows,
                                         bool in_span) {
  kmaha::nca_start s;
  s.A = A0;
  s.identity_rows = static_cast<arma::uword>(std::max(identity_rows, 0));
  s.in_span = in_span;
  return s;
}

// Fit NCA (reg = NULL) or kernel-trick NCA (x = Gram matrix, reg = Gram
// matrix) from the start (A0, identity_rows, in_span: see nca_start_from_r())
// with R's L-BFGS-B, by the core's driver (kmaha/nca_fit.hpp).  span: plain
// NCA in the span of the centred training points when it has fewer
// dimensions than x has columns (false: on all of them, for tests).  score:
// NULL, or a fold's held-out rows to vote in the learned metric (see
// heldout.h), returned as `score`.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_nca_fit(const arma::mat& x, const arma::ivec& y,
                       const arma::mat& A0, int identity_rows, bool in_span,
                       double lambda, Rcpp::Nullable<Rcpp::NumericMatrix> reg,
                       int max_iter, double tol, bool verbose, bool rescale_start,
                       bool span, SEXP score, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    arma::mat R;
    if (reg.isNotNull()) R = Rcpp::as<arma::mat>(reg.get());
    kmaha::nca_fit_options o;
    o.lambda = lambda;
    o.max_iter = max_iter;
    o.tol = tol;
    o.rescale_start = rescale_start;
    o.span = span;
    kmaha::log_fn log;
    if (verbose) log = [](const std::string& line) { Rcpp::Rcout << line << std::endl; };
    const arma::uvec yy = kmaha_glue::labels_from_r(y);
    const kmaha::nca_fit_result r = kmaha::nca_fit(
        x, yy, nca_start_from_r(A0, identity_rows, in_span), reg.isNotNull() ? &R : nullptr,
        o, kmaha_glue::lbfgs_minimizer(c.interrupt), log, c);
    Rcpp::List out = kmaha_glue::fit_result_list(r);
    out["span_rank"] = static_cast<int>(r.span_rank);
    out["start_log_norm"] = r.start_log_norm;
    out["score"] = kmaha_glue::score_heldout(score, x, yy, r.map, c);
    return out;
  });
}

// ---------------------------------------------------------------------------
// Mini-batch NCA (kmaha/nca_minibatch.hpp): Adam steps on the NCA objective
// of batches of rows.  batches: b x steps matrix of 1-based row indices, one
// column per step (drawn in R).  The start and `span` as for
// cpp_nca_fit().
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_nca_minibatch(const arma::mat& x, const arma::ivec& y,
                             const arma::mat& A0, int identity_rows, bool in_span,
                             double lambda, const arma::imat& batches,
                             double learning_rate, bool span, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    if (batches.min() < 1) throw kmaha::error("batch indices must be positive");
    kmaha::nca_minibatch_options o;
    o.lambda = lambda;
    o.learning_rate = learning_rate;
    o.span = span;
    const kmaha::nca_minibatch_result r = kmaha::nca_minibatch(
        x, kmaha_glue::labels_from_r(y), nca_start_from_r(A0, identity_rows, in_span),
        arma::conv_to<arma::umat>::from(batches - 1), o, c);
    return Rcpp::List::create(
        Rcpp::Named("map") = r.A, Rcpp::Named("value") = r.objective,
        Rcpp::Named("trace") = Rcpp::NumericVector(r.trace.begin(), r.trace.end()),
        Rcpp::Named("isa") = r.isa, Rcpp::Named("span_rank") = static_cast<int>(r.span_rank),
        Rcpp::Named("start_log_norm") = r.start_log_norm);
  });
}
