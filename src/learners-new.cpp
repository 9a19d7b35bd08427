// Glue for the learners of issue 34: LFDA (kmaha/lfda.hpp), RCA
// (kmaha/rca.hpp), MMC (kmaha/mmc.hpp) and ITML (kmaha/itml.hpp).  R checks
// every argument (R/learner-lfda.R, R/learner-rca.R, R/learner-mmc.R, R/learner-itml.R); the core's own
// checks are internal errors.
#include "glue.h"
#include "optim.h"
#include <kmaha/itml.hpp>
#include <kmaha/lfda.hpp>
#include <kmaha/mmc.hpp>
#include <kmaha/rca.hpp>

namespace {
// R's m x 2 matrix of 1-based row indices and its +1/-1 signs.
kmaha::pair_set pairs_from_r(const Rcpp::IntegerMatrix& pairs, const arma::vec& similar,
                             arma::uword n, const char* who) {
  arma::umat idx(pairs.nrow(), pairs.ncol());
  for (R_xlen_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i] == NA_INTEGER || pairs[i] < 1)
      throw kmaha::error(std::string(who) + ": pair indices must be positive");
    idx[i] = static_cast<arma::uword>(pairs[i] - 1);
  }
  return kmaha::make_pair_set(idx, similar, n, who);
}

Rcpp::NumericVector as_r(const arma::vec& v) { return Rcpp::NumericVector(v.begin(), v.end()); }
Rcpp::NumericVector as_r(const std::vector<double>& v) {
  return Rcpp::NumericVector(v.begin(), v.end());
}
// 0-based column indices as R's 1-based ones.
Rcpp::IntegerVector as_r_index(const arma::uvec& v) {
  Rcpp::IntegerVector out(v.n_elem);
  for (arma::uword i = 0; i < v.n_elem; ++i) out[i] = static_cast<int>(v[i]) + 1;
  return out;
}
}  // namespace

// LFDA map of the rows of x with class codes y (1-based); dim = 0: all;
// ridge < 0: the default; reg: the weight of the total-scatter ridge; span: solve in the span of the centred rows when
// ncol(x) >= nrow(x); principal: the columns of x are exact KPCA
// coordinates.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_lfda_fit(const arma::mat& x, const arma::ivec& y, int dim, int k,
                        std::string metric, double ridge, double reg, bool span,
                        bool principal, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const arma::uvec yy = kmaha_glue::labels_from_r(y);
    const kmaha::lfda_result r = kmaha::lfda_fit(
        x, yy, static_cast<arma::uword>(std::max(dim, 0)),
        static_cast<arma::uword>(std::max(k, 1)), kmaha::lfda_metric_from(metric), ridge,
        reg, span, principal, c);
    return Rcpp::List::create(
        Rcpp::Named("L") = r.L,
        Rcpp::Named("eigenvalues") = Rcpp::NumericVector(r.eigval.begin(), r.eigval.end()),
        Rcpp::Named("Slb") = r.Slb, Rcpp::Named("Slw") = r.Slw,
        Rcpp::Named("sigma") = Rcpp::NumericVector(r.sigma.begin(), r.sigma.end()),
        Rcpp::Named("dim") = static_cast<int>(r.dim),
        Rcpp::Named("span_rank") = static_cast<int>(r.span_rank),
        Rcpp::Named("ridge") = r.ridge, Rcpp::Named("reg") = r.reg,
        Rcpp::Named("reg_weight") = r.reg_weight);
  });
}

// RCA map of the rows of x with chunklet ids `chunks` (integers, NA: in no
// chunklet); dim = 0: no reduction; ridge < 0: automatic.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_rca_fit(const arma::mat& x, const Rcpp::IntegerVector& chunks, int dim,
                       double ridge, bool span, bool principal, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    arma::uvec ch(chunks.size());
    for (R_xlen_t i = 0; i < chunks.size(); ++i)
      ch[i] = chunks[i] == NA_INTEGER ? kmaha::no_chunk : static_cast<arma::uword>(chunks[i]);
    const kmaha::rca_result r = kmaha::rca_fit(
        x, ch, static_cast<arma::uword>(std::max(dim, 0)), ridge, span, principal, c);
    return Rcpp::List::create(
        Rcpp::Named("L") = r.L, Rcpp::Named("C") = r.C,
        Rcpp::Named("c_eigenvalues") = as_r(r.c_eigval),
        Rcpp::Named("fisher_eigenvalues") = as_r(r.fisher_eigval),
        Rcpp::Named("ridge") = r.ridge, Rcpp::Named("ridge_added") = r.ridge_added,
        Rcpp::Named("rank") = static_cast<int>(r.rank),
        Rcpp::Named("n_chunklets") = static_cast<int>(r.n_chunklets),
        Rcpp::Named("n_points") = static_cast<int>(r.n_points),
        Rcpp::Named("span_rank") = static_cast<int>(r.span_rank));
  });
}

// MMC (full matrix, or diagonal) from pairs (m x 2, 1-based rows of x) and
// their signs (1 similar, -1 dissimilar).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_mmc_fit(const arma::mat& x, const Rcpp::IntegerMatrix& pairs,
                       const arma::vec& similar, bool diagonal, int max_iter, double tol,
                       bool span, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha::pair_set ps = pairs_from_r(pairs, similar, x.n_rows, "mmc");
    const kmaha::mmc_result r =
        diagonal ? kmaha::mmc_diag(x, ps, max_iter, tol, kmaha_glue::lbfgs_minimizer(c.interrupt), c)
                 : kmaha::mmc_full(x, ps, max_iter, tol, span, c);
    return Rcpp::List::create(
        Rcpp::Named("L") = r.L, Rcpp::Named("M") = r.M, Rcpp::Named("a") = as_r(r.a),
        Rcpp::Named("objective") = r.objective, Rcpp::Named("constraint") = r.constraint,
        Rcpp::Named("h") = r.h, Rcpp::Named("iterations") = r.iterations,
        Rcpp::Named("converged") = r.converged, Rcpp::Named("stop") = r.stop,
        Rcpp::Named("trace") = as_r(r.trace),
        Rcpp::Named("span_rank") = static_cast<int>(r.span_rank),
        Rcpp::Named("unbounded") = as_r_index(r.unbounded));
  });
}

// The diagonal MMC objective h(a) and its gradient (a test hook).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_mmc_diag_objective(const arma::mat& x, const Rcpp::IntegerMatrix& pairs,
                                  const arma::vec& similar, const arma::vec& a, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context&) {
    const kmaha::pair_set ps = pairs_from_r(pairs, similar, x.n_rows, "mmc");
    arma::vec g;
    const double v = kmaha::mmc_diag_objective(x, ps, a, g);
    return Rcpp::List::create(Rcpp::Named("value") = v, Rcpp::Named("gradient") = as_r(g));
  });
}

// ITML from pairs; prior: NULL (identity) or a p x p matrix; u, l: NA for
// the percentiles.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_itml_fit(const arma::mat& x, const Rcpp::IntegerMatrix& pairs,
                        const arma::vec& similar, SEXP prior, double gamma, double u,
                        double l, int max_iter, double tol, bool span, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha::pair_set ps = pairs_from_r(pairs, similar, x.n_rows, "itml");
    const arma::mat A0 = Rf_isNull(prior) ? arma::mat() : Rcpp::as<arma::mat>(prior);
    const kmaha::itml_result r = kmaha::itml_fit(x, A0, ps, gamma, u, l, max_iter, tol, span, c);
    return Rcpp::List::create(
        Rcpp::Named("L") = r.L, Rcpp::Named("A") = r.A, Rcpp::Named("lambda") = as_r(r.lambda),
        Rcpp::Named("xi") = as_r(r.xi), Rcpp::Named("u") = r.u, Rcpp::Named("l") = r.l,
        Rcpp::Named("iterations") = r.iterations, Rcpp::Named("converged") = r.converged,
        Rcpp::Named("change") = r.change, Rcpp::Named("trace") = as_r(r.trace),
        Rcpp::Named("span_rank") = static_cast<int>(r.span_rank));
  });
}

// One ITML Bregman projection (a test hook).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_itml_project(arma::mat A, const arma::vec& v, double delta, double lambda,
                            double xi, double gamma, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context&) {
    const double alpha = kmaha::itml_project(A, v, delta, lambda, xi, gamma);
    return Rcpp::List::create(Rcpp::Named("A") = A, Rcpp::Named("lambda") = lambda,
                              Rcpp::Named("xi") = xi, Rcpp::Named("alpha") = alpha);
  });
}
