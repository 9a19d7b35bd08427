# The dense symmetric eigensolver of the core (inst/include/kmaha/symeig.hpp:
# Eigen's Householder tridiagonalization, LAPACK's MRRR dstevr, back-
# transformation of the wanted eigenvectors only) against Armadillo's
# eig_sym (LAPACK dsyevd, "dc", and dsyev, "std"), which DNE, the span and
# the Nystrom landmarks used before 0.5.0's second round, and R's eigen()
# (dsyevr), on the same matrices, one thread, in one run.  DNE needs every
# eigenvalue and the eigenvectors of the negative ones; "10 vectors" and
# "all vectors" bracket that.  Milliseconds per decomposition (median of 5
# runs of 10).
#   Rscript bench/symeig.R
suppressMessages(library(Rcpp))
Sys.setenv(OMP_NUM_THREADS = "1")
inc <- normalizePath("inst/include")
src <- '
// [[Rcpp::depends(RcppArmadillo, RcppEigen)]]
#include <RcppArmadillo.h>
#include <kmaha/symeig.hpp>
// [[Rcpp::export]]
double t_arma(const arma::mat& S, int reps, std::string method) {
  arma::vec ev; arma::mat V; double s = 0;
  for (int r = 0; r < reps; ++r) { arma::eig_sym(ev, V, S, method.c_str()); s += V(0, 0); }
  return s;
}
// [[Rcpp::export]]
double t_kmaha(const arma::mat& S, int reps, int nvec) {
  double s = 0;
  for (int r = 0; r < reps; ++r) {
    const kmaha::sym_eigen se(S, "bench");
    s += se.vectors(0, nvec)(0, 0);
  }
  return s;
}
// [[Rcpp::export]]
double max_diff(const arma::mat& S) {
  arma::vec ev; arma::mat V;
  arma::eig_sym(ev, V, S);
  const kmaha::sym_eigen se(S, "bench");
  arma::mat W = se.vectors(0, S.n_rows);
  // eigenvectors up to sign
  double d = arma::abs(se.values() - ev).max();
  for (arma::uword j = 0; j < S.n_cols; ++j)
    d = std::max(d, std::min(arma::abs(W.col(j) - V.col(j)).max(), arma::abs(W.col(j) + V.col(j)).max()));
  return d;
}
'
Sys.setenv(PKG_CXXFLAGS = paste0("-I", inc))
sourceCpp(code = src)
cat(sprintf("BLAS %s\n", extSoftVersion()[["BLAS"]]))
ms <- function(f) {
  reps <- 10
  median(replicate(5, system.time(f(reps))[["elapsed"]])) / reps * 1000
}
set.seed(1)
rows <- list()
for (n in c(100, 200, 300, 500)) {
  X <- matrix(rnorm(n * n), n)
  S <- crossprod(X) / n - diag(n)  # eigenvalues of both signs, as DNE's
  rows[[length(rows) + 1]] <- data.frame(
    n = n,
    arma_dc = ms(function(r) t_arma(S, r, "dc")),
    arma_std = ms(function(r) t_arma(S, r, "std")),
    r_eigen = ms(function(r) for (i in seq_len(r)) eigen(S, symmetric = TRUE)),
    kmaha_10 = ms(function(r) t_kmaha(S, r, 10)),
    kmaha_all = ms(function(r) t_kmaha(S, r, n)),
    max_abs_diff = max_diff(S))
}
res <- do.call(rbind, rows)
print(res, row.names = FALSE, digits = 3)
