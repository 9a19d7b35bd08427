// Glue shared by the learners' fit calls: the held-out votes of a
// cross-validation fold, so that a fold is *fit, then score* in the call
// that fits the map (kmaha/pipeline.hpp's vote, the one entry predict()
// uses).
#ifndef KMAHA_HELDOUT_H
#define KMAHA_HELDOUT_H

#include "fitted.h"
#include <string>

namespace kmaha_glue {

// A fold's `score` request: list(x = held-out coordinates (m x r, the
// feature map's coordinates of the held-out rows), k (one or several
// numbers of neighbours), optionally dim (the map's leading rows the model
// keeps), and classes (classification) or weights ("distance", "uniform"
// or "kernel"; regression)), read for a fit on n training rows.
struct heldout_request {
  arma::mat x;
  arma::uvec ks;      // each at most n
  arma::uword dim = 0;  // 0: every row of the map
  explicit heldout_request(const Rcpp::List& s, arma::uword n) : x(Rcpp::as<arma::mat>(s["x"])) {
    const Rcpp::IntegerVector kr = Rcpp::as<Rcpp::IntegerVector>(s["k"]);
    if (kr.size() < 1) throw kmaha::error("score: k must hold at least one number");
    ks.set_size(kr.size());
    for (R_xlen_t j = 0; j < kr.size(); ++j) {
      if (kr[j] == NA_INTEGER || kr[j] < 1)
        throw kmaha::error("score: k must be positive whole numbers");
      ks[j] = std::min<arma::uword>(static_cast<arma::uword>(kr[j]), n);
    }
    if (s.containsElementNamed("dim")) {
      const int d = Rcpp::as<int>(s["dim"]);
      if (d < 1) throw kmaha::error("score: dim must be a positive whole number");
      dim = static_cast<arma::uword>(d);
    }
  }
};

// With the training coordinates x (n x r), their labels y (0-based) and
// the learned map L0 (d x r): the 1-based classes of each held-out row of
// `score` (NULL, or a heldout_request with `classes`) voted by its k
// nearest training points in the learned metric, an m x length(k) integer
// matrix, one column per k, from one neighbour search (R_NilValue without
// `score`).
inline SEXP score_heldout(SEXP score, const arma::mat& x, const arma::uvec& y,
                          const arma::mat& L0, const kmaha::context& c) {
  if (Rf_isNull(score)) return R_NilValue;
  const Rcpp::List s(score);
  const heldout_request req(s, x.n_rows);
  fitted_pipeline fit(x, L0, req.dim, c);
  fit.model.y = y;
  fit.model.classes = static_cast<arma::uword>(Rcpp::as<int>(s["classes"]));
  const arma::umat r = kmaha::pipeline_classify_ks(fit.model, req.x, nullptr, req.ks, c);
  Rcpp::IntegerMatrix out(r.n_rows, r.n_cols);
  for (arma::uword j = 0; j < r.n_cols; ++j)
    for (arma::uword i = 0; i < r.n_rows; ++i)
      out(i, j) = static_cast<int>(r(i, j)) + 1;
  return out;
}

// The same for a regression learner (MLKR), with the training responses
// `response`: the k-NN regression predictions of the held-out rows in the
// learned metric (weights of the request, "distance" when absent), an m x
// length(k) numeric matrix, one column per k, from one neighbour search.
inline SEXP score_heldout_regress(SEXP score, const arma::mat& x,
                                  const arma::vec& response, const arma::mat& L0,
                                  const kmaha::context& c) {
  if (Rf_isNull(score)) return R_NilValue;
  const Rcpp::List s(score);
  const heldout_request req(s, x.n_rows);
  const kmaha::knn_weights w = s.containsElementNamed("weights")
                                   ? kmaha::knn_weights_from(Rcpp::as<std::string>(s["weights"]))
                                   : kmaha::knn_weights::distance;
  fitted_pipeline fit(x, L0, req.dim, c);
  fit.model.response = response;
  return Rcpp::wrap(kmaha::pipeline_regress_ks(fit.model, req.x, nullptr, req.ks, w, c));
}

}  // namespace kmaha_glue

#endif  // KMAHA_HELDOUT_H
