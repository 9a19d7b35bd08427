#include "glue.h"
#include <kmaha/kpca.hpp>

namespace {

Rcpp::List kpca_to_list(const kmaha::kpca_result& r) {
  return Rcpp::List::create(
      Rcpp::Named("coords") = r.coords,
      Rcpp::Named("projection") = r.projection,
      Rcpp::Named("eigenvalues") = Rcpp::NumericVector(r.eigenvalues.begin(),
                                                       r.eigenvalues.end()),
      Rcpp::Named("col_means") = Rcpp::NumericVector(r.col_means.begin(),
                                                     r.col_means.end()),
      Rcpp::Named("grand_mean") = r.grand_mean,
      Rcpp::Named("trace") = r.trace,
      Rcpp::Named("method") = r.method,
      Rcpp::Named("fallback") = r.fallback,
      Rcpp::Named("matvecs") = static_cast<double>(r.matvecs));
}

kmaha::kpca_result fit(const arma::mat& K, int rank, double tol,
                       const std::string& method) {
  return kmaha::kpca_fit(K, static_cast<arma::uword>(rank), tol,
                         kmaha::kpca_method_from_string(method),
                         kmaha_glue::user_interrupt());
}

arma::mat gram_of(const Rcpp::List& kernel, const arma::mat& x,
                  const arma::mat* y) {
  std::vector<kmaha::kernel_spec> specs;
  std::vector<double> w;
  kmaha_glue::flatten_kernel(kernel, 1.0, specs, w);
  return kmaha::gram_sum(specs, arma::vec(w), x, y, kmaha_glue::user_interrupt());
}

}  // namespace

// KPCA from a precomputed Gram matrix (rank 0 = no cap).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kpca_gram(const arma::mat& K, int rank, double tol,
                         std::string method) {
  return kmaha_glue::guarded([&] {
    return kpca_to_list(fit(K, rank, tol, method));
  });
}

// KPCA of the rows of x under a kernel object; the Gram matrix is built and
// used in C++ without a round trip through R.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kpca_kernel(const Rcpp::List& kernel, const arma::mat& x,
                           int rank, double tol, std::string method) {
  return kmaha_glue::guarded([&] {
    const arma::mat K = gram_of(kernel, x, nullptr);
    return kpca_to_list(fit(K, rank, tol, method));
  });
}

// Projection of new points given their kernel rows Kx (m x n).
// [[Rcpp::export(rng = false)]]
arma::mat cpp_kpca_project(const arma::mat& Kx, const arma::mat& projection,
                           const arma::vec& col_means, double grand_mean) {
  return kmaha_glue::guarded([&] {
    return kmaha::kpca_project(Kx, projection, col_means, grand_mean);
  });
}

// Projection of the rows of newdata: kernel rows against the training rows x
// are built and projected in C++.
// [[Rcpp::export(rng = false)]]
arma::mat cpp_kpca_project_kernel(const Rcpp::List& kernel,
                                  const arma::mat& newdata, const arma::mat& x,
                                  const arma::mat& projection,
                                  const arma::vec& col_means,
                                  double grand_mean) {
  return kmaha_glue::guarded([&] {
    const arma::mat Kx = gram_of(kernel, newdata, &x);
    return kmaha::kpca_project(Kx, projection, col_means, grand_mean);
  });
}
