#include "glue.h"
#include <kmaha/gram.hpp>

// Gram matrix of a kernel object between the rows of x and y (or within x),
// on `threads` threads (0: the package setting).
// [[Rcpp::export(rng = false)]]
arma::mat cpp_kernel_matrix(const Rcpp::List& kernel, const arma::mat& x,
                            Rcpp::Nullable<Rcpp::NumericMatrix> y,
                            int threads = 0) {
  return kmaha_glue::guarded([&] {
    const kmaha_glue::flat_kernel k(kernel);
    const int nt = kmaha_glue::resolve_threads(threads);
    const kmaha::isa s = kmaha_glue::isa_setting();
    if (y.isNull())
      return kmaha::gram_sum(k.specs, k.weights, x, nullptr,
                             kmaha_glue::user_interrupt(), nt, s);
    const arma::mat Y = Rcpp::as<arma::mat>(y.get());
    return kmaha::gram_sum(k.specs, k.weights, x, &Y, kmaha_glue::user_interrupt(),
                           nt, s);
  });
}

// Squared Euclidean distances between rows (y = NULL: within x).
// [[Rcpp::export(rng = false)]]
arma::mat cpp_sq_dist(const arma::mat& x, Rcpp::Nullable<Rcpp::NumericMatrix> y) {
  return kmaha_glue::guarded([&] {
    if (y.isNull()) return kmaha::sq_dist(x);
    const arma::mat Y = Rcpp::as<arma::mat>(y.get());
    return kmaha::sq_dist(x, Y);
  });
}
