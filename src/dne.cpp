// Glue for DNE and KDNE (kmaha/dne.hpp): the map from neighbour lists.  The
// lists themselves come from cpp_dne_neighbors() (src/knn.cpp).
#include "glue.h"
#include <kmaha/dne.hpp>

// DNE map from data x (n x D) and neighbour lists; dim = 0: automatic;
// principal: the columns of x are exact kernel principal components.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_dne_fit(const arma::mat& x, const Rcpp::IntegerMatrix& same,
                       const Rcpp::IntegerMatrix& other, int dim,
                       double lambda, bool principal, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha::dne_graph g = kmaha::make_dne_graph(kmaha_glue::index_from_r(same),
                                                     kmaha_glue::index_from_r(other), x.n_rows);
    const kmaha::dne_result r = kmaha::dne_fit(x, g, dim, lambda, principal, c);
    return Rcpp::List::create(
        Rcpp::Named("A") = r.A, Rcpp::Named("eigenvalues") = Rcpp::NumericVector(
                                    r.eigval.begin(), r.eigval.end()),
        Rcpp::Named("scatter") = r.S, Rcpp::Named("dim") = static_cast<int>(r.dim),
        Rcpp::Named("n_negative") = static_cast<int>(r.n_negative),
        Rcpp::Named("n_edges") = static_cast<int>(g.weight.n_elem),
        Rcpp::Named("span_rank") = static_cast<int>(r.span_rank),
        Rcpp::Named("retention") = r.retention);
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
