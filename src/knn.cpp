#include "glue.h"
#include <kmaha/knn.hpp>
#ifdef _OPENMP
#include <omp.h>
#endif

// kNN vote of query rows q against training rows x with labels y (1-based
// integer codes, p classes).  self = TRUE: q is x, leave-one-out.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_knn_classify(const arma::mat& x, const arma::ivec& y, int p,
                            const arma::mat& q, int k, bool self) {
  return kmaha_glue::guarded([&] {
    const arma::uvec yy = arma::conv_to<arma::uvec>::from(y - 1);
    kmaha::knn_result r = kmaha::knn_classify(x, yy, p, q, k, self,
                                              kmaha_glue::user_interrupt(),
                                              kmaha_glue::isa_setting());
    return Rcpp::List::create(
        Rcpp::Named("class") = Rcpp::IntegerVector(r.cls.begin(), r.cls.end()) + 1,
        Rcpp::Named("prob") = r.prob);
  });
}

// Neighbour indices (1-based; NA where none exists) and squared distances.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_knn_search(const arma::mat& x, const arma::mat& q, int k,
                          bool self) {
  return kmaha_glue::guarded([&] {
    arma::mat d;
    const arma::umat idx = kmaha::knn_search(x, q, k, self, &d, 512,
                                             kmaha_glue::user_interrupt(),
                                             kmaha_glue::isa_setting());
    Rcpp::IntegerMatrix out(idx.n_rows, idx.n_cols);
    for (arma::uword i = 0; i < idx.n_elem; ++i)
      out[i] = idx[i] == kmaha::no_neighbor ? NA_INTEGER : static_cast<int>(idx[i]) + 1;
    return Rcpp::List::create(Rcpp::Named("index") = out,
                              Rcpp::Named("dist2") = d);
  });
}

// Same-class (same = TRUE) or other-class k nearest neighbours within x.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerMatrix cpp_class_neighbors(const arma::mat& x, const arma::ivec& y,
                                        int k, bool same) {
  return kmaha_glue::guarded([&] {
    const arma::uvec yy = arma::conv_to<arma::uvec>::from(y - 1);
    const arma::umat idx = kmaha::class_neighbors(x, yy, k, same, 512,
                                                  kmaha_glue::user_interrupt(),
                                                  kmaha_glue::isa_setting());
    Rcpp::IntegerMatrix out(idx.n_rows, idx.n_cols);
    for (arma::uword i = 0; i < idx.n_elem; ++i)
      out[i] = idx[i] == kmaha::no_neighbor ? NA_INTEGER : static_cast<int>(idx[i]) + 1;
    return out;
  });
}

// x %*% t(L) through the core's product kernels (independent of R's BLAS).
// [[Rcpp::export(rng = false)]]
arma::mat cpp_apply_map(const arma::mat& x, const arma::mat& L) {
  return kmaha_glue::guarded([&] {
    return kmaha::apply_map(x, L, kmaha_glue::isa_setting());
  });
}

// Sets the number of OpenMP threads that the core's parallel loops and
// Eigen's products use from now on in this process (n <= 0: leave it) and
// returns the previous setting; 1 without OpenMP.
// [[Rcpp::export(rng = false)]]
int cpp_omp_threads(int n) {
#ifdef _OPENMP
  const int old = omp_get_max_threads();
  if (n > 0) omp_set_num_threads(n);
  return old;
#else
  (void)n;
  return 1;
#endif
}
