#include "fitted.h"
#include <kmaha/degeneracy.hpp>
#include <kmaha/kpca.hpp>
#include <kmaha/nystrom.hpp>

namespace {

Rcpp::NumericVector as_r_vector(const arma::vec& v) {
  return Rcpp::NumericVector(v.begin(), v.end());
}

Rcpp::List kpca_to_list(const kmaha::kpca_result& r, kmaha::degeneracy deg) {
  return Rcpp::List::create(
      Rcpp::Named("degenerate") = std::string(kmaha::degeneracy_name(deg)),
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

// The KPCA coordinates of held-out points (a cross-validation fold's), by
// the pipeline's transform (kmaha/pipeline.hpp) without a map: from their
// raw rows newdata under the kernel k with the training points `points`
// (kpca: the training rows, nystrom: the landmarks), or from their kernel
// rows Kx (points null).  R_NilValue when newdata and Kx are both NULL.
SEXP heldout_coords(kmaha::feature_map map, const kmaha_glue::flat_kernel* k,
                    const arma::mat* points, SEXP newdata, SEXP Kx,
                    arma::uword n_points, const arma::mat& projection,
                    const arma::vec& col_means, double grand_mean,
                    const kmaha::context& c) {
  if (Rf_isNull(newdata) && Rf_isNull(Kx)) return R_NilValue;
  const kmaha_glue::fitted_pipeline fit(map, k, points, n_points, projection, col_means,
                                        grand_mean);
  if (!Rf_isNull(Kx)) {
    const arma::mat K = Rcpp::as<arma::mat>(Kx);
    const arma::mat X(K.n_rows, 0);
    return Rcpp::wrap(kmaha::pipeline_transform(fit.model, X, &K, c));
  }
  const arma::mat X = Rcpp::as<arma::mat>(newdata);
  return Rcpp::wrap(kmaha::pipeline_transform(fit.model, X, nullptr, c));
}

// The degeneracy verdict (kmaha/degeneracy.hpp) of a kernel on the rows of
// x, from the Gram matrix of the rows the verdict reads.
kmaha::degeneracy verdict_on_rows(const kmaha_glue::flat_kernel& k,
                                  const arma::mat& x, const kmaha::context& c) {
  const arma::uvec idx = kmaha::degeneracy_rows(x.n_rows);
  const arma::mat xs = x.rows(idx);
  const arma::mat K = kmaha::gram_sum(k.specs, k.weights, xs, nullptr, c);
  return kmaha::gram_degeneracy(K, xs);
}

}  // namespace

// KPCA from a Gram matrix computed elsewhere (rank 0 = no cap): a kernel
// evaluated in R on the rows of x, a precomputed Gram matrix (x NULL), or
// the training block of a Gram matrix shared by cross-validation folds.
// The result carries the kernel's degeneracy verdict ("" when none), and
// with Kx (NULL, or the kernel rows of held-out points against the training
// points) their coordinates `new_coords`: a fold's fit and the projection of
// its held-out rows in one call.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kpca_gram(const arma::mat& K, SEXP x, int rank, double tol,
                         std::string method, SEXP Kx, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    kmaha::degeneracy deg;
    if (Rf_isNull(x)) {
      deg = kmaha::gram_degeneracy(K);
    } else {
      const arma::mat X = Rcpp::as<arma::mat>(x);
      deg = kmaha::gram_degeneracy(K, X);
    }
    const kmaha::kpca_result r = fit(K, rank, tol, method, c);
    Rcpp::List out = kpca_to_list(r, deg);
    out["new_coords"] = heldout_coords(kmaha::feature_map::kpca, nullptr, nullptr,
                                       R_NilValue, Kx, K.n_rows, r.projection,
                                       r.col_means, r.grand_mean, c);
    return out;
  });
}

// KPCA of the rows of x under a kernel object; the Gram matrix is built and
// used in C++ without a round trip through R.  newdata: NULL, or held-out
// rows (a cross-validation fold's), whose coordinates come back as
// `new_coords`.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kpca_kernel(const Rcpp::List& kernel, const arma::mat& x,
                           int rank, double tol, std::string method,
                           SEXP newdata, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha_glue::flat_kernel k(kernel);
    const arma::mat K = kmaha::gram_sum(k.specs, k.weights, x, nullptr, c);
    const kmaha::kpca_result r = fit(K, rank, tol, method, c);
    Rcpp::List out = kpca_to_list(r, kmaha::gram_degeneracy(K, x));
    out["new_coords"] = heldout_coords(kmaha::feature_map::kpca, &k, &x, newdata,
                                       R_NilValue, 0, r.projection, r.col_means,
                                       r.grand_mean, c);
    return out;
  });
}

// Nystrom KPCA of the rows of x with the landmark points (rows of
// `landmarks`); the training coordinates are returned as `coords`, those of
// held-out rows `newdata` (NULL: none) as `new_coords`.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_kpca_nystrom(const Rcpp::List& kernel, const arma::mat& x,
                            const arma::mat& landmarks, int rank, double tol,
                            std::string method, SEXP newdata, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const kmaha_glue::flat_kernel k(kernel);
    const kmaha::nystrom_result r = kmaha::nystrom_fit(
        k.specs, k.weights, x, landmarks, static_cast<arma::uword>(rank), tol,
        kmaha::kpca_method_from_string(method), c);
    Rcpp::NumericMatrix coords =
        nystrom_coords(k, x, landmarks, r.projection, r.col_means, c);
    return Rcpp::List::create(
        Rcpp::Named("degenerate") = std::string(kmaha::degeneracy_name(verdict_on_rows(k, x, c))),
        Rcpp::Named("coords") = coords,
        Rcpp::Named("projection") = r.projection,
        Rcpp::Named("eigenvalues") = as_r_vector(r.eigenvalues),
        Rcpp::Named("col_means") = as_r_vector(r.col_means),
        Rcpp::Named("trace") = r.trace,
        Rcpp::Named("residual") = r.residual,
        Rcpp::Named("landmark_rank") = static_cast<int>(r.landmark_rank),
        Rcpp::Named("method") = r.method,
        Rcpp::Named("fallback") = r.fallback,
        Rcpp::Named("matvecs") = static_cast<double>(r.matvecs),
        Rcpp::Named("new_coords") = heldout_coords(
            kmaha::feature_map::nystrom, &k, &landmarks, newdata, R_NilValue, 0,
            r.projection, r.col_means, 0.0, c));
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

// The degeneracy verdict of a Gram matrix K of the rows of x (x NULL: a
// precomputed Gram matrix, every pair counts): "", "constant" or "identity".
// [[Rcpp::export(rng = false)]]
std::string cpp_gram_degeneracy(const arma::mat& K, SEXP x, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context&) {
    if (Rf_isNull(x)) return std::string(kmaha::degeneracy_name(kmaha::gram_degeneracy(K)));
    const arma::mat X = Rcpp::as<arma::mat>(x);
    return std::string(kmaha::degeneracy_name(kmaha::gram_degeneracy(K, X)));
  });
}
