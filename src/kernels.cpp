#include "glue.h"

// Gram matrix of a kernel object between the rows of x and y (or within x).
// [[Rcpp::export(rng = false)]]
arma::mat cpp_kernel_matrix(const Rcpp::List& kernel, const arma::mat& x,
                            Rcpp::Nullable<Rcpp::NumericMatrix> y) {
  return kmaha_glue::guarded([&] {
    std::vector<kmaha::kernel_spec> specs;
    std::vector<double> w;
    kmaha_glue::flatten_kernel(kernel, 1.0, specs, w);
    if (y.isNull())
      return kmaha::gram_sum(specs, arma::vec(w), x, nullptr,
                             kmaha_glue::user_interrupt());
    const arma::mat Y = Rcpp::as<arma::mat>(y.get());
    return kmaha::gram_sum(specs, arma::vec(w), x, &Y, kmaha_glue::user_interrupt());
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
