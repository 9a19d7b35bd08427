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
// The top `rank` eigenpairs from the tridiagonal factor: by the subset
// solver of dstevr (range "I": bisection and inverse iteration) or from all
// of them (range "A": MRRR), back-transforming the kept vectors only.
// [[Rcpp::export]]
double t_top(const arma::mat& S, int reps, int rank, bool all) {
  const Eigen::Index n = S.n_rows;
  double s = 0;
  for (int r = 0; r < reps; ++r) {
    Eigen::MatrixXd A = Eigen::Map<const Eigen::MatrixXd>(S.memptr(), n, n);
    Eigen::VectorXd h(n - 1);
    Eigen::internal::tridiagonalization_inplace(A, h);
    Eigen::VectorXd d = A.diagonal(), e(n);
    e.head(n - 1) = A.diagonal<-1>();
    e[n - 1] = 0;
    Eigen::VectorXd w;
    Eigen::MatrixXd Z;
    const arma::blas_int bn = static_cast<arma::blas_int>(n);
    if (all) kmaha::detail::tridiagonal_eigen(d, e, 0, 0, w, Z);
    else kmaha::detail::tridiagonal_eigen(d, e, bn - rank + 1, bn, w, Z);
    Eigen::MatrixXd Zk = Z.rightCols(rank);
    Eigen::HouseholderSequence<Eigen::MatrixXd, Eigen::VectorXd> Q(A, h);
    Q.setLength(n - 1).setShift(1);
    Q.applyThisOnTheLeft(Zk);
    s += Zk(0, 0);
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

# The top `rank` eigenpairs of a centred RBF Gram matrix (what KPCA with a
# rank asks for, e.g. the screen's 32 components): from the subset solver
# or from all eigenpairs of the tridiagonal factor, milliseconds.
cat("\nTop eigenpairs of a centred RBF Gram matrix (20 inputs, sigma = 1):\n")
rows <- list()
for (n in c(120, 200, 400)) {
  X <- matrix(rnorm(n * 20), n)
  K <- exp(-as.matrix(dist(X))^2 / 40)
  H <- diag(n) - 1 / n
  Kc <- H %*% K %*% H
  for (rank in c(8, 16, 32, 64)) {
    rows[[length(rows) + 1]] <- data.frame(
      n = n, rank = rank,
      subset = ms(function(r) t_top(Kc, r, rank, FALSE)),
      all = ms(function(r) t_top(Kc, r, rank, TRUE)))
  }
}
print(do.call(rbind, rows), row.names = FALSE, digits = 3)
