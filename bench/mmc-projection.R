# Study: where the full-matrix mmc()'s time goes, and what a correct
# projection would change (old vs new in one run, on the sets and splits of
# bench/learners-new.R, same standardized inputs and pairs).
#
# The core's step (inst/include/kmaha/mmc.hpp) projects A + alpha G onto
# {f <= 1} and the PSD cone by alternating the two projections until f <= 1
# (1e-8 relative) or 50 rounds, then rescales by 1/f.  Counted here: the
# rounds nearly always reach 50 (the alternation stalls above f = 1), so a
# trial step costs ~50 eigen-decompositions.  The variant "exact" replaces
# that by the Euclidean projection onto the intersection, which is
# Pi_PSD(X - lambda S) with the multiplier lambda >= 0 solving
# phi(lambda) = <Pi_PSD(X - lambda S), S> = 1 (phi is non-increasing):
# safeguarded Newton on log phi with phi' = -sum_ij Gamma_ij (Q'SQ)_ij^2
# (Gamma the divided differences of max(., 0) at the eigenvalues), started
# from the last step's lambda / alpha; ~4 eigen-decompositions per trial.
# Everything else (direction, step rule, tol = 1e-6, max_iter = 500) as in
# the core.  "ref" is an independent optimum: optim(L-BFGS-B) on the
# scale-free ratio g(B'B) / sqrt(f(B'B)) from the identity and from the
# exact variant's solution (the best of the two).
#
# Also the core's alternation with its cap of 50 rounds lowered to 5, 10, 20
# ("alt5" ...), and the core's algorithm re-run here with the trial steps
# and eigen-decompositions counted ("g_old_counted" must equal "g_old").
#
# Columns: g (objective at f = 1), 1-NN test accuracy, rank of M (eigenvalues
# above 1e-6 of the largest), seconds, accepted steps, trial steps,
# eigen-decompositions.
#
# Usage:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 KMAHA_NUM_THREADS=1 \
#           KMAHA_DATA_DIR=/work/shared/data KMAHA_LIB=/tmp/lib-x \
#           R_LIBS=/usr/local/lib/R/kmaha-suggests Rscript bench/mmc-projection.R
# Output: bench/results/mmc_projection.csv.
# Env:    KMAHA_BENCH_SPLITS (default 3), KMAHA_BENCH_SETS (comma list),
#         KMAHA_BENCH_REF (1: compute the reference optimum, default 1).
lib <- Sys.getenv("KMAHA_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages({
  library(kmaha)
  library(Rcpp)
})
options(kmaha.num_threads = 1L)
source("bench/common.R")
n_splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "3"))
do_ref <- Sys.getenv("KMAHA_BENCH_REF", "1") == "1"
sets <- env_list("KMAHA_BENCH_SETS",
                 c("iris", "glass", "balance", "breast_cancer", "ionosphere", "pima",
                   "yeast", "Sonar", "Vehicle", "Vowel"))

src <- '
// [[Rcpp::depends(RcppArmadillo, RcppEigen)]]
#include <RcppArmadillo.h>
#include <kmaha/mmc.hpp>
using namespace kmaha;

// Pi_PSD(Y) with its eigenpairs
static arma::mat psd_eig(const arma::mat& Y, const context& ctx, arma::vec& mu, arma::mat& Q,
                         long& n_eig) {
  const sym_eigen se(0.5 * (Y + Y.t()), "mmc", 0, ctx.interrupt);
  ++n_eig;
  mu = se.values();
  Q = se.vectors(0, mu.n_elem);
  const arma::mat A = Q * arma::diagmat(arma::clamp(mu, 0.0, arma::datum::inf)) * Q.t();
  return 0.5 * (A + A.t());
}
// phi\'(lambda) at the eigenpairs of X - lambda S
static double dphi(const arma::vec& mu, const arma::mat& Q, const arma::mat& S) {
  const arma::mat Sq = Q.t() * S * Q;
  double d = 0;
  for (arma::uword j = 0; j < mu.n_elem; ++j)
    for (arma::uword i = 0; i < mu.n_elem; ++i) {
      double gam;
      if (mu[i] > 0 && mu[j] > 0) gam = 1;
      else if (mu[i] <= 0 && mu[j] <= 0) gam = 0;
      else gam = (std::max(mu[i], 0.0) - std::max(mu[j], 0.0)) / (mu[i] - mu[j]);
      d += gam * Sq(i, j) * Sq(i, j);
    }
  return -d;
}
static arma::mat project_exact(const arma::mat& X, const arma::mat& S, double s2, double alpha,
                               double& ratio, const context& ctx, long& n_eig) {
  arma::vec mu;
  arma::mat Q;
  double lam = ratio > 0 ? ratio * alpha : 0.0, lo = 0, hi = -1;
  arma::mat A = psd_eig(lam > 0 ? arma::mat(X - lam * S) : X, ctx, mu, Q, n_eig);
  double phi = arma::accu(A % S);
  for (int it = 0; it < 100 && std::abs(phi - 1) > 1e-9; ++it) {
    if (phi > 1) lo = lam; else hi = lam;
    const double d = dphi(mu, Q, S);
    double nl = (d < 0 && phi > 0) ? lam - phi * std::log(phi) / d : -1;
    if (!(nl > lo) || (hi >= 0 && !(nl < hi)))
      nl = hi >= 0 ? 0.5 * (lo + hi) : (lo > 0 ? 2 * lo : (phi - 1) / s2);
    lam = nl;
    A = psd_eig(X - lam * S, ctx, mu, Q, n_eig);
    phi = arma::accu(A % S);
  }
  if (lam > 0) ratio = lam / alpha;
  return A / phi;
}

// the core\'s detail::mmc_project() with the eigen-decompositions counted and
// the cap on the rounds a parameter (50 in the core)
static arma::mat project_alternating(arma::mat A, const arma::mat& S, double s2, int rounds,
                                     const context& ctx, long& n_eig) {
  for (int round = 0; round < rounds; ++round) {
    const double f = arma::accu(A % S);
    if (f > 1.0) A -= ((f - 1.0) / s2) * S;
    A = detail::psd_projection(A, "mmc", ctx);
    ++n_eig;
    if (arma::accu(A % S) <= 1.0 + 1e-8) break;
  }
  return A / arma::accu(A % S);
}

// mmc_full_on() of the core with the projection chosen: rounds > 0, the
// alternating one with that cap; rounds = 0, the exact one
// [[Rcpp::export]]
Rcpp::List mmc_variant(const arma::mat& Ds, const arma::mat& Dd, int max_iter, double tol,
                       int rounds) {
  const context ctx(1, isa::baseline, interrupt_fn([]() { return false; }));
  long n_eig = 0;
  arma::mat S = Ds.t() * Ds;
  S = 0.5 * (S + S.t());
  const double s2 = arma::accu(S % S);
  arma::mat A = arma::eye(S.n_rows, S.n_rows) / arma::trace(S);
  arma::vec w;
  double g = detail::mmc_g(Dd, A, w), alpha = -1, ratio = -1;
  int iters = 0;
  long trials = 0;
  for (int it = 0; it < max_iter; ++it) {
    Rcpp::checkUserInterrupt();
    arma::mat G = Dd.t() * arma::diagmat(w) * Dd;
    G -= (arma::accu(G % S) / s2) * S;
    G = 0.5 * (G + G.t());
    const double gg = arma::accu(G % G);
    if (!(gg > 0)) break;
    if (alpha < 0) alpha = 0.1 * g / gg;
    bool accepted = false, done = false;
    while (!accepted) {
      if (alpha * gg <= 1e-14 * g) break;
      ++trials;
      const arma::mat At = rounds > 0
          ? project_alternating(A + alpha * G, S, s2, rounds, ctx, n_eig)
          : project_exact(A + alpha * G, S, s2, alpha, ratio, ctx, n_eig);
      arma::vec wt;
      const double gt = detail::mmc_g(Dd, At, wt);
      if (gt > g) {
        accepted = true;
        done = (gt - g) / g < tol;
        A = At; w = wt; g = gt; alpha *= 1.5; ++iters;
      } else {
        alpha *= 0.5;
      }
    }
    if (!accepted || done) break;
  }
  return Rcpp::List::create(Rcpp::Named("M") = A, Rcpp::Named("g") = g,
                            Rcpp::Named("f") = arma::accu(A % S),
                            Rcpp::Named("iterations") = iters, Rcpp::Named("trials") = trials,
                            Rcpp::Named("eig") = n_eig);
}
'
Sys.setenv(PKG_CPPFLAGS = paste0("-I", normalizePath("inst/include")))
sourceCpp(code = src)

g_of <- function(M, Dd) sum(sqrt(pmax(rowSums((Dd %*% M) * Dd), 0)))
f_of <- function(M, Ds) sum(rowSums((Ds %*% M) * Ds))
map_of <- function(M) {
  e <- eigen((M + t(M)) / 2, symmetric = TRUE)
  k <- e$values > 1e-12 * max(e$values)
  t(e$vectors[, k, drop = FALSE] %*% diag(sqrt(e$values[k]), sum(k)))
}
rank_of <- function(M) {
  e <- eigen((M + t(M)) / 2, symmetric = TRUE, only.values = TRUE)$values
  sum(e > 1e-6 * max(e))
}
acc_1nn <- function(L, sp) {
  mean(as.character(knn_classify(sp$xs %*% t(L), droplevels(sp$y), sp$xte %*% t(L), k = 1)$class) ==
         as.character(sp$yte))
}
ref_opt <- function(Ds, Dd, starts) {
  D <- ncol(Ds)
  S <- crossprod(Ds)
  fn <- function(b) {
    B <- matrix(b, D)
    -sum(sqrt(rowSums((Dd %*% t(B))^2))) / sqrt(sum((Ds %*% t(B))^2))
  }
  gr <- function(b) {
    B <- matrix(b, D)
    BD <- Dd %*% t(B)
    nr <- sqrt(rowSums(BD^2))
    g <- sum(nr)
    f <- sum((Ds %*% t(B))^2)
    -((t(BD / pmax(nr, 1e-300)) %*% Dd) / sqrt(f) - g * f^-1.5 * (B %*% S))
  }
  # (a start that leaves the domain, f = 0 or a non-finite value, counts as
  # failed)
  best <- max(vapply(starts, function(B0) tryCatch(
    -stats::optim(as.vector(B0), fn, gr, method = "L-BFGS-B",
                  control = list(maxit = 20000, factr = 1e2, pgtol = 0))$value,
    error = function(e) -Inf), 0))
  if (is.finite(best)) best else NA_real_
}

rows <- list()
for (ds in sets) {
  for (s in seq_len(n_splits)) {
    sp <- get_split(ds, s)
    if (is.null(sp)) next
    st <- standardize_split(sp)
    sp$xs <- unname(st$xs)
    sp$xte <- unname(st$xte)
    set.seed(s)
    pr <- kmaha:::draw_pairs(sp$y, kmaha:::default_n_pairs(sp$y))
    dif <- function(sg) {
      p <- pr$pairs[pr$similar == sg, , drop = FALSE]
      sp$xs[p[, 1], , drop = FALSE] - sp$xs[p[, 2], , drop = FALSE]
    }
    Ds <- dif(1)
    Dd <- dif(-1)
    t_old <- system.time(old <- suppressWarnings(
      mmc(sp$xs, sp$y, pairs = pr$pairs, similar = pr$similar, scale = FALSE)))[["elapsed"]]
    M_old <- crossprod(old$L)
    t_new <- system.time(new <- mmc_variant(Ds, Dd, 500L, 1e-6, 0L))[["elapsed"]]
    # the core's algorithm, counted (its g must be the package's)
    cnt <- mmc_variant(Ds, Dd, 500L, 1e-6, 50L)
    alt <- lapply(c(5L, 10L, 20L), function(r) {
      t <- system.time(v <- mmc_variant(Ds, Dd, 500L, 1e-6, r))[["elapsed"]]
      list(g = v$g, acc = acc_1nn(map_of(v$M), sp), time = t)
    })
    ref <- if (do_ref) ref_opt(Ds, Dd, list(diag(ncol(Ds)), chol(new$M + 1e-9 * diag(ncol(Ds))))) else NA_real_
    rows[[length(rows) + 1L]] <- data.frame(
      dataset = ds, split = s, D = ncol(sp$xs),
      g_old = g_of(M_old, Dd) / sqrt(f_of(M_old, Ds)), g_exact = new$g, g_ref = ref,
      acc_euclidean = acc_1nn(diag(ncol(sp$xs)), sp),
      acc_old = acc_1nn(old$L, sp), acc_exact = acc_1nn(map_of(new$M), sp),
      rank_old = rank_of(M_old), rank_exact = rank_of(new$M),
      steps_old = old$convergence$iterations, steps_exact = new$iterations,
      g_old_counted = cnt$g, trials_old = cnt$trials, eig_old = cnt$eig,
      trials_exact = new$trials, eig_exact = new$eig, time_old = t_old, time_exact = t_new,
      g_alt5 = alt[[1]]$g, g_alt10 = alt[[2]]$g, g_alt20 = alt[[3]]$g,
      acc_alt5 = alt[[1]]$acc, acc_alt10 = alt[[2]]$acc, acc_alt20 = alt[[3]]$acc,
      time_alt5 = alt[[1]]$time, time_alt10 = alt[[2]]$time, time_alt20 = alt[[3]]$time)
    cat(sprintf("%s split %d done\n", ds, s))
  }
}
res <- do.call(rbind, rows)
dir.create("bench/results", showWarnings = FALSE)
utils::write.csv(res, "bench/results/mmc_projection.csv", row.names = FALSE)
print(res, digits = 3, row.names = FALSE)
print(colMeans(res[, -(1:3)]), digits = 4)
