#include "glue.h"
#include <kmaha/gram.hpp>

// Gram matrix of a kernel object between the rows of x and y (or within x).
// [[Rcpp::export(rng = false)]]
arma::mat cpp_kernel_matrix(const Rcpp::List& kernel, const arma::mat& x,
                            Rcpp::Nullable<Rcpp::NumericMatrix> y, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha_glue::flat_kernel k(kernel);
    if (y.isNull()) return kmaha::gram_sum(k.specs, k.weights, x, nullptr, c);
    const arma::mat Y = Rcpp::as<arma::mat>(y.get());
    return kmaha::gram_sum(k.specs, k.weights, x, &Y, c);
  });
}
