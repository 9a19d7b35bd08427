// Glue for the prediction pipeline (kmaha/pipeline.hpp): one call from new
// raw inputs to classes.
#include "fitted.h"
#include <string>

// The one path from inputs to learned coordinates and votes
// (kmaha/pipeline.hpp): predict(), fitted() and the projection of kpca()
// fits (a cross-validation fold's held-out rows go through the same core
// functions inside its fitting calls: src/kpca.cpp, src/heldout.h).
//   type "transform": the n_new x d learned coordinates of the rows of x
//     (without a map `L`, the feature map's coordinates);
//   "class", "prob": list(class = 1-based codes, prob = n_new x p vote
//     fractions) of the k nearest reference points;
//   "loo": the same for the reference points themselves, each left out of
//     its own neighbours (x and Kx NULL);
//   "value", "loo_value": regression (a model with a numeric `response`
//     instead of `y`, and `vote`: "uniform", "distance" or "kernel"): the
//     weighted mean of the responses of the k nearest reference points, as
//     a numeric vector, of the new points or (leave-one-out) of the
//     reference points.
// x: n_new x D raw inputs (complete rows), or NULL with Kx; Kx: NULL, or
// kernel rows (n_new x points of the feature map) used instead of evaluating
// the kernel (kernels evaluated in R, precomputed Gram matrices).
// `model`: a fitted model's R list (fitted_pipeline in src/fitted.h).
// [[Rcpp::export(rng = false)]]
SEXP cpp_pipeline_apply(const Rcpp::List& model, SEXP x, SEXP Kx,
                        std::string type, int k, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) -> SEXP {
    if (type != "transform" && type != "class" && type != "prob" && type != "loo" &&
        type != "value" && type != "loo_value")
      throw kmaha::error("pipeline: type must be \"transform\", \"class\", \"prob\", \"loo\", \"value\" or \"loo_value\"");
    const bool regression = type == "value" || type == "loo_value";
    kmaha::knn_weights vote = kmaha::knn_weights::distance;
    if (regression) {
      const SEXP v = kmaha_glue::list_element(model, "vote");
      if (!Rf_isNull(v)) vote = kmaha::knn_weights_from(Rcpp::as<std::string>(v));
    }
    if (k < 1 && type != "transform") throw kmaha::error("pipeline: k must be a positive whole number");
    auto votes = [](const kmaha::knn_result& r) {
      return Rcpp::List::create(
          Rcpp::Named("class") = Rcpp::IntegerVector(r.cls.begin(), r.cls.end()) + 1,
          Rcpp::Named("prob") = r.prob);
    };
    const bool loo = type == "loo" || type == "loo_value";
    // the reference points among themselves need no feature map
    const kmaha_glue::fitted_pipeline fit(model, !Rf_isNull(Kx), regression, loo, c);
    const kmaha::pipeline_model& m = fit.model;
    if (type == "loo_value") {
      const arma::vec v = kmaha::pipeline_loo_regress(m, static_cast<arma::uword>(k), vote, c);
      return Rcpp::NumericVector(v.begin(), v.end());
    }
    if (type == "loo") return votes(kmaha::pipeline_loo(m, static_cast<arma::uword>(k), c));
    std::unique_ptr<const arma::mat> X, K;
    if (!Rf_isNull(Kx)) K = kmaha_glue::r_matrix(Kx, "Kx");
    if (!Rf_isNull(x)) {
      X = kmaha_glue::r_matrix(x, "x");
    } else if (K) {
      X.reset(new arma::mat(K->n_rows, 0));
    } else {
      throw kmaha::error("pipeline: the new points or their kernel rows are needed");
    }
    if (type == "transform") return Rcpp::wrap(kmaha::pipeline_transform(m, *X, K.get(), c));
    if (regression) {
      const arma::vec v = kmaha::pipeline_regress(m, *X, K.get(), static_cast<arma::uword>(k), vote, c);
      return Rcpp::NumericVector(v.begin(), v.end());
    }
    return votes(kmaha::pipeline_classify(m, *X, K.get(), static_cast<arma::uword>(k), c));
  });
}
