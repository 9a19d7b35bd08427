#include "glue.h"
#include <kmaha/dne.hpp>

// Same- and other-class k nearest neighbours (1-based, NA = none), by
// Euclidean distance between rows of x (gram = FALSE) or by feature-space
// distance from the Gram matrix x (gram = TRUE).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_dne_neighbors(const arma::mat& x, const arma::ivec& y, int k,
                             bool gram, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const arma::uvec yy = kmaha_glue::labels_from_r(y);
    arma::umat same, other;
    if (gram) {
      kmaha::dne_neighbors_gram(x, yy, k, same, other, c);
    } else {
      kmaha::dne_neighbors(x, yy, k, same, other, 256, c);
    }
    return Rcpp::List::create(Rcpp::Named("same") = kmaha_glue::index_to_r(same),
                              Rcpp::Named("other") = kmaha_glue::index_to_r(other));
  });
}

// The DNE graph as an edge list (i < j, 1-based) with weights +1 / -1.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_dne_graph(const Rcpp::IntegerMatrix& same,
                         const Rcpp::IntegerMatrix& other, int n, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context&) {
    const kmaha::dne_graph g = kmaha::make_dne_graph(kmaha_glue::index_from_r(same),
                                                     kmaha_glue::index_from_r(other), n);
    Rcpp::IntegerVector i(g.weight.n_elem), j(g.weight.n_elem);
    for (arma::uword e = 0; e < g.weight.n_elem; ++e) {
      i[e] = static_cast<int>(g.edges(0, e)) + 1;
      j[e] = static_cast<int>(g.edges(1, e)) + 1;
    }
    return Rcpp::List::create(Rcpp::Named("i") = i, Rcpp::Named("j") = j,
                              Rcpp::Named("w") = Rcpp::NumericVector(
                                  g.weight.begin(), g.weight.end()));
  });
}

// DNE map from data x (n x D) and neighbour lists; dim = 0: automatic.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_dne_fit(const arma::mat& x, const Rcpp::IntegerMatrix& same,
                       const Rcpp::IntegerMatrix& other, int dim,
                       double lambda, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha::dne_graph g = kmaha::make_dne_graph(kmaha_glue::index_from_r(same),
                                                     kmaha_glue::index_from_r(other), x.n_rows);
    const kmaha::dne_result r = kmaha::dne_fit(x, g, dim, lambda, c);
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
