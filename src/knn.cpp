// Glue for the neighbour searches and kNN (kmaha/neighbors.hpp,
// kmaha/knn.hpp), the learned map's product, and the instruction-set
// queries.
#include "glue.h"
#include <kmaha/knn.hpp>
#ifdef _OPENMP
#include <omp.h>
#endif

// kNN vote of query rows q against training rows x with labels y (1-based
// integer codes, p classes).  self = TRUE: q is x, leave-one-out.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_knn_classify(const arma::mat& x, const arma::ivec& y, int p,
                            const arma::mat& q, int k, bool self, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const arma::uvec yy = kmaha_glue::labels_from_r(y);
    kmaha::knn_result r = kmaha::knn_classify(x, yy, p, q, k, self, c);
    return Rcpp::List::create(
        Rcpp::Named("class") = Rcpp::IntegerVector(r.cls.begin(), r.cls.end()) + 1,
        Rcpp::Named("prob") = r.prob);
  });
}

// The classes of query rows q voted by their ks[j] nearest training rows
// of x for every j: a length(q rows) x length(ks) matrix of 1-based codes,
// from one neighbour search (the held-out votes of Euclidean k-NN in a
// cross-validation fold, several k at once).
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerMatrix cpp_knn_votes(const arma::mat& x, const arma::ivec& y, int p,
                                  const arma::mat& q, const arma::ivec& ks, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const arma::uvec yy = kmaha_glue::labels_from_r(y);
    if (ks.n_elem == 0 || ks.min() < 1 || static_cast<arma::uword>(ks.max()) > x.n_rows)
      throw kmaha::error("knn votes: every k must lie between 1 and the training rows");
    const arma::uvec kk = arma::conv_to<arma::uvec>::from(ks);
    const arma::umat idx = kmaha::knn_search(x, q, kk.max(), false, 512, c);
    const arma::umat r = kmaha::knn_vote_ks(idx, yy, static_cast<arma::uword>(p), kk);
    Rcpp::IntegerMatrix out(r.n_rows, r.n_cols);
    for (arma::uword j = 0; j < r.n_cols; ++j)
      for (arma::uword i = 0; i < r.n_rows; ++i) out(i, j) = static_cast<int>(r(i, j)) + 1;
    return out;
  });
}

// Same-class (same = TRUE) or other-class k nearest neighbours within x.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerMatrix cpp_class_neighbors(const arma::mat& x, const arma::ivec& y,
                                        int k, bool same, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const arma::uvec yy = kmaha_glue::labels_from_r(y);
    const arma::umat idx = kmaha_glue::class_targets(x, yy, k, same, c);
    return kmaha_glue::index_to_r(idx);
  });
}

// Same- and other-class k nearest neighbours (1-based, NA = none), by
// Euclidean distance between rows of x (gram = FALSE) or by feature-space
// distance from the Gram matrix x (gram = TRUE): DNE's graph and the target
// neighbours of the kernel-trick learners.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_dne_neighbors(const arma::mat& x, const arma::ivec& y, int k,
                             bool gram, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    const arma::uvec yy = kmaha_glue::labels_from_r(y);
    arma::umat same, other;
    if (gram) {
      kmaha::same_other_neighbors_gram(x, yy, k, same, other, c);
    } else {
      kmaha_glue::dne_lists(x, yy, k, same, other, c);
    }
    return Rcpp::List::create(Rcpp::Named("same") = kmaha_glue::index_to_r(same),
                              Rcpp::Named("other") = kmaha_glue::index_to_r(other));
  });
}

// x %*% t(L) through the core's product kernels (independent of R's BLAS).
// [[Rcpp::export(rng = false)]]
arma::mat cpp_apply_map(const arma::mat& x, const arma::mat& L, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    return kmaha::apply_map(x, L, c.kernels);
  });
}

// Whether this build has AVX2+FMA kernels and whether this CPU can run them:
// R asks when it resolves an instruction-set setting of "avx2", before any
// context exists (so this is the one export without a context).
// [[Rcpp::export(rng = false)]]
Rcpp::LogicalVector cpp_isa_support() {
  return Rcpp::LogicalVector::create(Rcpp::Named("compiled") = kmaha::avx2_compiled(),
                                     Rcpp::Named("cpu") = kmaha::cpu_has_avx2_fma());
}

// The number of products the core's product kernels have run in this
// process with each instruction set (c(default = , avx2 = )); reset = TRUE
// sets both counters to zero first.  A diagnostic for the tests, which check
// that a computation ran every product in the instruction set its context
// asked for.
// [[Rcpp::export(rng = false)]]
Rcpp::NumericVector cpp_gemm_calls(bool reset, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context&) {
    if (reset) {
      kmaha::gemm_calls(kmaha::isa::baseline).store(0);
      kmaha::gemm_calls(kmaha::isa::avx2).store(0);
    }
    return Rcpp::NumericVector::create(
        Rcpp::Named("default") = static_cast<double>(kmaha::gemm_calls(kmaha::isa::baseline).load()),
        Rcpp::Named("avx2") = static_cast<double>(kmaha::gemm_calls(kmaha::isa::avx2).load()));
  });
}

// The largest thread count any call of the compiled code has run with since
// the last reset (reset = TRUE sets it to 0 first and returns 0): a
// diagnostic for the tests of the thread setting.
// [[Rcpp::export(rng = false)]]
int cpp_threads_seen(bool reset) {
  if (reset) kmaha_glue::threads_seen().store(0);
  return kmaha_glue::threads_seen().load();
}
