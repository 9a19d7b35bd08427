// Glue shared by the learners' fit calls: the held-out votes of a
// cross-validation fold, so that a fold is *fit, then score* in the call
// that fits the map (kmaha/pipeline.hpp's vote, the one entry predict()
// uses).
#ifndef KMAHA_HELDOUT_H
#define KMAHA_HELDOUT_H

#include "glue.h"
#include <kmaha/pipeline.hpp>

namespace kmaha_glue {

// `score`: NULL, or list(x = held-out coordinates (m x r, the feature map's
// coordinates of the held-out rows), k, classes, and optionally dim: the
// map's leading rows the model keeps).  With the training coordinates x
// (n x r), their labels y (0-based) and the learned map L0 (d x r): the
// 1-based classes of the k nearest training points of each held-out row in
// the learned metric (R_NilValue without `score`).
inline SEXP score_heldout(SEXP score, const arma::mat& x, const arma::uvec& y,
                          const arma::mat& L0, const kmaha::context& c) {
  if (Rf_isNull(score)) return R_NilValue;
  const Rcpp::List s(score);
  const arma::mat xte = Rcpp::as<arma::mat>(s["x"]);
  const int k = Rcpp::as<int>(s["k"]);
  if (k < 1) throw kmaha::error("score: k must be a positive whole number");
  arma::uword d = L0.n_rows;
  if (s.containsElementNamed("dim")) {
    const int dim = Rcpp::as<int>(s["dim"]);
    if (dim < 1) throw kmaha::error("score: dim must be a positive whole number");
    d = std::min(d, static_cast<arma::uword>(dim));
  }
  const arma::mat L = d == L0.n_rows ? L0 : arma::mat(L0.rows(0, d - 1));
  const arma::mat emb = kmaha::apply_map(x, L, c.kernels);
  kmaha::pipeline_model m;
  m.L = &L;
  m.embedding = &emb;
  m.y = y;
  m.classes = static_cast<arma::uword>(Rcpp::as<int>(s["classes"]));
  const kmaha::knn_result r = kmaha::pipeline_classify(
      m, xte, nullptr, std::min<arma::uword>(static_cast<arma::uword>(k), x.n_rows), c);
  Rcpp::IntegerVector out(r.cls.n_elem);
  for (arma::uword i = 0; i < r.cls.n_elem; ++i) out[i] = static_cast<int>(r.cls[i]) + 1;
  return out;
}

// The same for a regression learner (MLKR): `score` is NULL or list(x, k,
// weights ("uniform", "distance" or "kernel"), and optionally dim); with
// the training responses `response`, the k-NN regression predictions of the
// held-out rows in the learned metric (a numeric vector; R_NilValue without
// `score`).
inline SEXP score_heldout_regress(SEXP score, const arma::mat& x,
                                  const arma::vec& response, const arma::mat& L0,
                                  const kmaha::context& c) {
  if (Rf_isNull(score)) return R_NilValue;
  const Rcpp::List s(score);
  const arma::mat xte = Rcpp::as<arma::mat>(s["x"]);
  const int k = Rcpp::as<int>(s["k"]);
  if (k < 1) throw kmaha::error("score: k must be a positive whole number");
  arma::uword d = L0.n_rows;
  if (s.containsElementNamed("dim")) {
    const int dim = Rcpp::as<int>(s["dim"]);
    if (dim < 1) throw kmaha::error("score: dim must be a positive whole number");
    d = std::min(d, static_cast<arma::uword>(dim));
  }
  const kmaha::knn_weights w = s.containsElementNamed("weights")
                                   ? kmaha::knn_weights_from(Rcpp::as<std::string>(s["weights"]))
                                   : kmaha::knn_weights::uniform;
  const arma::mat L = d == L0.n_rows ? L0 : arma::mat(L0.rows(0, d - 1));
  const arma::mat emb = kmaha::apply_map(x, L, c.kernels);
  kmaha::pipeline_model m;
  m.L = &L;
  m.embedding = &emb;
  m.response = response;
  const arma::vec v = kmaha::pipeline_regress(
      m, xte, nullptr, std::min<arma::uword>(static_cast<arma::uword>(k), x.n_rows), w, c);
  return Rcpp::NumericVector(v.begin(), v.end());
}

}  // namespace kmaha_glue

#endif  // KMAHA_HELDOUT_H
