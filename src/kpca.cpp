#include "glue.h"
#include <kmaha/kpca.hpp>
#include <kmaha/nystrom.hpp>

namespace {

Rcpp::NumericVector as_r_vector(const arma::vec& v) {
  return Rcpp::NumericVector(v.begin(), v.end());
}

Rcpp::List kpca_to_list(const kmaha::kpca_result& r) {
  return Rcpp::List::create(
      Rcpp::Named("coords") = r.coords,
      Rcpp::Named("projection") = r.projection,
      Rcpp::Named("eigenvalues") = as_r_vector(r.eigenvalues),
      Rcpp::Named("col_means") = as_r_vector(r.col_means),
      Rcpp::Named("grand_mean") = r.grand_mean,
      Rcpp::Named("trace") = r.trace,
      Rcpp::Named("method") = r.method,
      Rcpp::Named("fallback") = r.fallback,
      Rcpp::Named("matvecs") = static_cast<double>(r.matvecs));
}

kmaha::kpca_result fit(const arma::mat& K, int rank, double tol,
                       const std::string& method, const kmaha::context& c) {
  return kmaha::kpca_fit(K, static_cast<arma::uword>(rank), tol,
                         kmaha::kpca_method_from_string(method), c);
}

// Nystrom coordinates of the rows of x, in an R matrix filled in place.
Rcpp::NumericMatrix nystrom_coords(const kmaha_glue::flat_kernel& k,
                                   const arma::mat& x, const arma::mat& landmarks,
                                   const arma::mat& projection,
                                   const arma::vec& col_means,
                                   const kmaha::context& c) {
  Rcpp::NumericMatrix out(x.n_rows, projection.n_cols);
  arma::mat z(out.begin(), x.n_rows, projection.n_cols, false, true);
  kmaha::nystrom_project(k.specs, k.weights, x, landmarks, projection,
                         col_means, z, c);
  return out;
}

}  // namespace

// KPCA from a precomputed Gram matrix (rank 0 = no cap).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kpca_gram(const arma::mat& K, int rank, double tol,
                         std::string method, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    return kpca_to_list(fit(K, rank, tol, method, c));
  });
}

// KPCA of the rows of x under a kernel object; the Gram matrix is built and
// used in C++ without a round trip through R.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kpca_kernel(const Rcpp::List& kernel, const arma::mat& x,
                           int rank, double tol, std::string method, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha_glue::flat_kernel k(kernel);
    const arma::mat K = kmaha::gram_sum(k.specs, k.weights, x, nullptr, c);
    return kpca_to_list(fit(K, rank, tol, method, c));
  });
}

// Projection of new points given their kernel rows Kx (m x n).
// [[Rcpp::export(rng = false)]]
arma::mat cpp_kpca_project(const arma::mat& Kx, const arma::mat& projection,
                           const arma::vec& col_means, double grand_mean,
                           SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context&) {
    return kmaha::kpca_project(Kx, projection, col_means, grand_mean);
  });
}

// Projection of the rows of newdata: kernel rows against the training rows x
// are built and projected in C++, in blocks of new rows.
// [[Rcpp::export(rng = false)]]
arma::mat cpp_kpca_project_kernel(const Rcpp::List& kernel,
                                  const arma::mat& newdata, const arma::mat& x,
                                  const arma::mat& projection,
                                  const arma::vec& col_means,
                                  double grand_mean, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha_glue::flat_kernel k(kernel);
    return kmaha::kpca_project_kernel(k.specs, k.weights, newdata, x, projection,
                                      col_means, grand_mean, c);
  });
}

// Nystrom KPCA of the rows of x with the landmark points (rows of
// `landmarks`); the training coordinates are returned as `coords`.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kpca_nystrom(const Rcpp::List& kernel, const arma::mat& x,
                            const arma::mat& landmarks, int rank, double tol,
                            std::string method, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha_glue::flat_kernel k(kernel);
    const kmaha::nystrom_result r = kmaha::nystrom_fit(
        k.specs, k.weights, x, landmarks, static_cast<arma::uword>(rank), tol,
        kmaha::kpca_method_from_string(method), c);
    Rcpp::NumericMatrix coords =
        nystrom_coords(k, x, landmarks, r.projection, r.col_means, c);
    return Rcpp::List::create(
        Rcpp::Named("coords") = coords,
        Rcpp::Named("projection") = r.projection,
        Rcpp::Named("eigenvalues") = as_r_vector(r.eigenvalues),
        Rcpp::Named("col_means") = as_r_vector(r.col_means),
        Rcpp::Named("trace") = r.trace,
        Rcpp::Named("residual") = r.residual,
        Rcpp::Named("landmark_rank") = static_cast<int>(r.landmark_rank),
        Rcpp::Named("method") = r.method,
        Rcpp::Named("fallback") = r.fallback,
        Rcpp::Named("matvecs") = static_cast<double>(r.matvecs));
  });
}

// Nystrom coordinates of the rows of newdata.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericMatrix cpp_nystrom_project(const Rcpp::List& kernel,
                                        const arma::mat& newdata,
                                        const arma::mat& landmarks,
                                        const arma::mat& projection,
                                        const arma::vec& col_means, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha_glue::flat_kernel k(kernel);
    return nystrom_coords(k, newdata, landmarks, projection, col_means, c);
  });
}

// Kernel k-means++ landmarks: 1-based row indices of x, from m uniform
// numbers u drawn in R.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector cpp_kmeanspp_landmarks(const Rcpp::List& kernel,
                                           const arma::mat& x, int m,
                                           const arma::vec& u, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha_glue::flat_kernel k(kernel);
    const arma::uvec idx = kmaha::kmeanspp_landmarks(
        k.specs, k.weights, x, static_cast<arma::uword>(m), u, c);
    Rcpp::IntegerVector out(idx.n_elem);
    for (arma::uword i = 0; i < idx.n_elem; ++i) out[i] = static_cast<int>(idx[i]) + 1;
    return out;
  });
}
