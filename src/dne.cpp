// Glue for DNE and KDNE (kmaha/dne.hpp): the map from neighbour lists.  The
// lists come from cpp_dne_neighbors() (src/knn.cpp), or DNE's fitting call
// finds them by the same search (glue.h).
#include "glue.h"
#include "heldout.h"
#include <kmaha/dne.hpp>

// DNE map from data x (n x D) and neighbour lists; dim = 0: automatic;
// principal: the columns of x are exact kernel principal components.  same
// and other NULL: the lists are found here, the k nearest same- and
// other-class rows of x by class codes y (as cpp_dne_neighbors() finds
// them), and returned.  score: NULL, or a fold's held-out rows to vote in
// the learned metric (see heldout.h; needs y), returned as `score`.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_dne_fit(const arma::mat& x, SEXP same, SEXP other, int dim,
                       double lambda, bool principal, SEXP y, int k,
                       SEXP score, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const bool find = Rf_isNull(same) || Rf_isNull(other);
    arma::uvec yy;
    if (!Rf_isNull(y)) yy = kmaha_glue::labels_from_r(Rcpp::as<arma::ivec>(y));
    if ((find || !Rf_isNull(score)) && yy.n_elem != x.n_rows)
      throw kmaha::error("dne: one class code per row of x is needed");
    arma::umat s, o;
    if (find) {
      kmaha_glue::dne_lists(x, yy, static_cast<arma::uword>(std::max(k, 1)), s, o, c);
    } else {
      s = kmaha_glue::index_from_r(Rcpp::IntegerMatrix(same));
      o = kmaha_glue::index_from_r(Rcpp::IntegerMatrix(other));
    }
    const kmaha::dne_graph g = kmaha::make_dne_graph(s, o, x.n_rows);
    const kmaha::dne_result r = kmaha::dne_fit(x, g, dim, lambda, principal, c);
    Rcpp::List out = Rcpp::List::create(
        Rcpp::Named("A") = r.A, Rcpp::Named("eigenvalues") = Rcpp::NumericVector(
                                    r.eigval.begin(), r.eigval.end()),
        Rcpp::Named("scatter") = r.S, Rcpp::Named("dim") = static_cast<int>(r.dim),
        Rcpp::Named("n_negative") = static_cast<int>(r.n_negative),
        Rcpp::Named("n_edges") = static_cast<int>(g.weight.n_elem),
        Rcpp::Named("span_rank") = static_cast<int>(r.span_rank),
        Rcpp::Named("retention") = r.retention);
    if (find) {
      out["same"] = kmaha_glue::index_to_r(s);
      out["other"] = kmaha_glue::index_to_r(o);
    }
    out["score"] = kmaha_glue::score_heldout(score, x, yy, r.A, c);
    return out;
  });
}

// KDNE coefficients from the Gram matrix and neighbour lists.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kdne_fit(const arma::mat& K, const Rcpp::IntegerMatrix& same,
                        const Rcpp::IntegerMatrix& other, int dim, double eps,
                        SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha::dne_graph g = kmaha::make_dne_graph(kmaha_glue::index_from_r(same),
                                                     kmaha_glue::index_from_r(other), K.n_rows);
    const kmaha::kdne_result r = kmaha::kdne_fit(K, g, dim, eps, c);
    return Rcpp::List::create(
        Rcpp::Named("U") = r.U, Rcpp::Named("eigenvalues") = Rcpp::NumericVector(
                                    r.eigval.begin(), r.eigval.end()),
        Rcpp::Named("dim") = static_cast<int>(r.dim),
        Rcpp::Named("n_negative") = static_cast<int>(r.n_negative),
        Rcpp::Named("retention") = r.retention);
  });
}
