// Glue for the screen of kernel candidates (kmaha/screen.hpp).
#include "glue.h"
#include <kmaha/screen.hpp>

// The screen of the kernel objects `kernels` (built-in kernels and their
// sums) on the folds `fold` (1-based fold labels 1..folds) of the rows of x
// with labels y (1-based codes, `classes` of them); grid = TRUE when the
// kernels form an ordered grid (see kmaha/screen.hpp).  Returns
// list(correct = n x kernels integer matrix (1/0, NA where not scored),
// degenerate = kernels x folds codes (0 none, 1 constant, 2 identity),
// screened, near_identity (logical, one per kernel), errors = kernels x folds
// messages).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_screen_kernels(const arma::mat& x, const arma::ivec& y, int classes,
                              const arma::ivec& fold, int folds,
                              const Rcpp::List& kernels, int components, int k,
                              double tol, bool grid, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
    std::vector<kmaha::kernel_combo> combos;
    for (R_xlen_t i = 0; i < kernels.size(); ++i) {
      const kmaha_glue::flat_kernel fk(Rcpp::as<Rcpp::List>(kernels[i]));
      combos.push_back(kmaha::kernel_combo{fk.specs, fk.weights});
    }
    kmaha::screen_options opt;
    opt.components = static_cast<arma::uword>(components);
    opt.k = static_cast<arma::uword>(k);
    opt.tol = tol;
    opt.grid = grid;
    const kmaha::screen_result r = kmaha::screen_kernels(
        x, kmaha_glue::labels_from_r(y), static_cast<arma::uword>(classes),
        kmaha_glue::labels_from_r(fold), static_cast<arma::uword>(folds), combos,
        opt, c);
    Rcpp::IntegerMatrix correct(r.correct.n_rows, r.correct.n_cols);
    for (arma::uword i = 0; i < r.correct.n_elem; ++i)
      correct[i] = r.correct[i] < 0 ? NA_INTEGER : static_cast<int>(r.correct[i]);
    Rcpp::IntegerMatrix degenerate(r.degenerate.n_rows, r.degenerate.n_cols);
    for (arma::uword i = 0; i < r.degenerate.n_elem; ++i)
      degenerate[i] = static_cast<int>(r.degenerate[i]);
    Rcpp::CharacterMatrix errors(r.degenerate.n_rows, r.degenerate.n_cols);
    const arma::uword nf = static_cast<arma::uword>(folds);
    for (arma::uword j = 0; j < r.degenerate.n_rows; ++j)
      for (arma::uword f = 0; f < nf; ++f)
        errors(j, f) = r.errors[j * nf + f];
    Rcpp::LogicalVector screened(r.screened.n_elem), near(r.near_identity.n_elem);
    for (arma::uword i = 0; i < r.screened.n_elem; ++i) {
      screened[i] = r.screened[i] != 0;
      near[i] = r.near_identity[i] != 0;
    }
    return Rcpp::List::create(Rcpp::Named("correct") = correct,
                              Rcpp::Named("degenerate") = degenerate,
                              Rcpp::Named("screened") = screened,
                              Rcpp::Named("near_identity") = near,
                              Rcpp::Named("errors") = errors);
  });
}
