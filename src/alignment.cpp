#include "glue.h"
#include <kmaha/alignment.hpp>

// Frobenius products of the base Grams for kernel alignment.  `kernels` is a
// list of kernel objects (each possibly a weighted sum); y holds 1-based
// class codes of p classes.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_alignment_products(const Rcpp::List& kernels, const arma::mat& x,
                                  const arma::ivec& y, int p, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    std::vector<kmaha::base_kernel> bks;
    bks.reserve(kernels.size());
    for (R_xlen_t i = 0; i < kernels.size(); ++i) {
      const kmaha_glue::flat_kernel k(Rcpp::as<Rcpp::List>(kernels[i]));
      kmaha::base_kernel bk;
      bk.parts = k.specs;
      bk.weights = k.weights;
      bks.push_back(bk);
    }
    const arma::uvec yy = kmaha_glue::labels_from_r(y);
    const kmaha::alignment_stats st = kmaha::alignment_products(
        bks, x, yy, static_cast<arma::uword>(p), 4.0e6, c);
    return Rcpp::List::create(
        Rcpp::Named("S") = st.S, Rcpp::Named("b") = Rcpp::NumericVector(st.b.begin(), st.b.end()),
        Rcpp::Named("l1") = Rcpp::NumericVector(st.l1.begin(), st.l1.end()),
        Rcpp::Named("min_entry") = Rcpp::NumericVector(st.min_entry.begin(), st.min_entry.end()),
        Rcpp::Named("y_norm") = st.y_norm);
  });
}
