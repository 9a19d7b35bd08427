#include "glue.h"
#include <kmaha/dne.hpp>

namespace {

// 1-based R integer matrix (NA = none) -> 0-based indices with sentinel.
arma::umat to_index(const Rcpp::IntegerMatrix& m) {
  arma::umat out(m.nrow(), m.ncol());
  for (R_xlen_t i = 0; i < m.size(); ++i)
    out[i] = m[i] == NA_INTEGER ? kmaha::no_neighbor
                                : static_cast<arma::uword>(m[i] - 1);
  return out;
}

Rcpp::IntegerMatrix from_index(const arma::umat& idx) {
  Rcpp::IntegerMatrix out(idx.n_rows, idx.n_cols);
  for (arma::uword i = 0; i < idx.n_elem; ++i)
    out[i] = idx[i] == kmaha::no_neighbor ? NA_INTEGER
                                          : static_cast<int>(idx[i]) + 1;
  return out;
}

}  // namespace

// Same- and other-class k nearest neighbours (1-based, NA = none), by
// Euclidean distance between rows of x (gram = FALSE) or by feature-space
// distance from the Gram matrix x (gram = TRUE).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_dne_neighbors(const arma::mat& x, const arma::ivec& y, int k,
                             bool gram) {
  return kmaha_glue::guarded([&] {
    const arma::uvec yy = arma::conv_to<arma::uvec>::from(y - 1);
    arma::umat same, other;
    if (gram) {
      kmaha::dne_neighbors_gram(x, yy, k, same, other,
                                kmaha_glue::user_interrupt());
    } else {
      kmaha::dne_neighbors(x, yy, k, same, other, 256,
                           kmaha_glue::user_interrupt(),
                           kmaha_glue::isa_setting());
    }
    return Rcpp::List::create(Rcpp::Named("same") = from_index(same),
                              Rcpp::Named("other") = from_index(other));
  });
}

// The DNE graph as an edge list (i < j, 1-based) with weights +1 / -1.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_dne_graph(const Rcpp::IntegerMatrix& same,
                         const Rcpp::IntegerMatrix& other, int n) {
  return kmaha_glue::guarded([&] {
    const kmaha::dne_graph g = kmaha::make_dne_graph(to_index(same),
                                                     to_index(other), n);
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
                       double lambda) {
  return kmaha_glue::guarded([&] {
    const kmaha::dne_graph g = kmaha::make_dne_graph(to_index(same),
                                                     to_index(other), x.n_rows);
    const kmaha::dne_result r = kmaha::dne_fit(x, g, dim, lambda,
                                               kmaha_glue::user_interrupt());
    return Rcpp::List::create(
        Rcpp::Named("A") = r.A, Rcpp::Named("eigenvalues") = Rcpp::NumericVector(
                                    r.eigval.begin(), r.eigval.end()),
        Rcpp::Named("scatter") = r.S, Rcpp::Named("dim") = static_cast<int>(r.dim),
        Rcpp::Named("n_negative") = static_cast<int>(r.n_negative),
        Rcpp::Named("n_edges") = static_cast<int>(g.weight.n_elem));
  });
}

// KDNE coefficients from the Gram matrix and neighbour lists.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kdne_fit(const arma::mat& K, const Rcpp::IntegerMatrix& same,
                        const Rcpp::IntegerMatrix& other, int dim, double eps) {
  return kmaha_glue::guarded([&] {
    const kmaha::dne_graph g = kmaha::make_dne_graph(to_index(same),
                                                     to_index(other), K.n_rows);
    const kmaha::kdne_result r = kmaha::kdne_fit(K, g, dim, eps,
                                                 kmaha_glue::user_interrupt());
    return Rcpp::List::create(
        Rcpp::Named("U") = r.U, Rcpp::Named("eigenvalues") = Rcpp::NumericVector(
                                    r.eigval.begin(), r.eigval.end()),
        Rcpp::Named("dim") = static_cast<int>(r.dim),
        Rcpp::Named("n_negative") = static_cast<int>(r.n_negative));
  });
}
