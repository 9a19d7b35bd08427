# Benchmark: Gram matrix + kernel PCA fit, and projection of new points,
# kmaha versus kernlab::kpca in the same run, on the Satellite data.
#
#   Rscript bench/kpca.R [largest n, default 4000]
#
# Data: Satellite (kmaha_data("satellite"): mlbench, or the CSV in
# KMAHA_DATA_DIR), rows in a fixed random order, columns standardized.  For
# each n, the first n rows are the training set and the next 1000 rows are
# projected.  Kernel: the paper's scaled RBF with sigma = 1, which is
# kernlab's rbfdot with sigma_kernlab = 1 / (2 D sigma^2).
#
# Timed (elapsed seconds, best of `reps` runs):
#   kmaha full       kpca(x, rbf_kernel(1), method = "full"): every component
#   kmaha trunc50    kpca(x, rbf_kernel(1), rank = 50, method = "truncated")
#   kernlab          kernlab::kpca(x, "rbfdot", features = 0): full eigen()
#   *_proj           predict() of 1000 new rows with the fitted models
# Ratios are kernlab time / kmaha time (> 1: kmaha faster).  The eigenvalues
# of both packages are compared so that the timings are of the same problem.
suppressPackageStartupMessages(library(kmaha))
if (!requireNamespace("kernlab", quietly = TRUE)) stop("bench/kpca.R needs kernlab")

args <- commandArgs(trailingOnly = TRUE)
n_max <- if (length(args)) as.integer(args[1]) else 4000L
sizes <- c(500L, 1000L, 2000L, 4000L)
sizes <- sizes[sizes <= n_max]
reps <- c(`500` = 5L, `1000` = 3L, `2000` = 2L, `4000` = 1L)
sigma <- 1
m_new <- 1000L

cat("BLAS:  ", extSoftVersion()[["BLAS"]], "\n")
cat("LAPACK:", La_library(), "\n")
cat("sessionInfo()$BLAS:", sessionInfo()$BLAS, "\n")
cat(sprintf("R %s, kmaha %s, kernlab %s, cores: %d\n\n", getRversion(),
            packageVersion("kmaha"), packageVersion("kernlab"),
            parallel::detectCores()))

sat <- kmaha_data("satellite")
set.seed(1)
x_all <- scale(as.matrix(sat[sample(nrow(sat)), -ncol(sat)]))
D <- ncol(x_all)
kl_sigma <- 1 / (2 * D * sigma^2)

best_time <- function(expr_fun, r) {
  times <- numeric(r)
  value <- NULL
  for (i in seq_len(r)) {
    gc(FALSE)
    t <- system.time(value <- expr_fun())[["elapsed"]]
    times[i] <- t
  }
  list(time = min(times), value = value)
}

rows <- list()
for (n in sizes) {
  x <- x_all[seq_len(n), ]
  xn <- x_all[n + seq_len(m_new), ]
  r <- reps[[as.character(n)]]
  full <- best_time(function() kpca(x, rbf_kernel(sigma), method = "full"), r)
  trunc <- best_time(function() kpca(x, rbf_kernel(sigma), rank = 50,
                                     method = "truncated"), r)
  kl <- best_time(function() kernlab::kpca(x, kernel = "rbfdot",
                                           kpar = list(sigma = kl_sigma),
                                           features = 0), r)
  full_p <- best_time(function() predict(full$value, xn), r)
  trunc_p <- best_time(function() predict(trunc$value, xn), r)
  kl_p <- best_time(function() kernlab::predict(kl$value, xn), r)
  # same problem: kernlab's eigenvalues are those of Kc / n
  ev_err <- max(abs(full$value$eigenvalues[1:50] / n -
                      kernlab::eig(kl$value)[1:50])) / full$value$eigenvalues[1] * n
  tr_err <- max(abs(trunc$value$eigenvalues - full$value$eigenvalues[1:50])) /
    full$value$eigenvalues[1]
  rows[[length(rows) + 1L]] <- data.frame(
    n = n, kmaha_full = full$time, kmaha_trunc50 = trunc$time,
    kernlab = kl$time,
    ratio_full = kl$time / full$time, ratio_trunc50 = kl$time / trunc$time,
    kmaha_full_proj = full_p$time, kmaha_trunc50_proj = trunc_p$time,
    kernlab_proj = kl_p$time,
    comps_kmaha = full$value$rank, comps_kernlab = length(kernlab::eig(kl$value)),
    eig_rel_diff = signif(max(ev_err, tr_err), 2))
  print(rows[[length(rows)]], row.names = FALSE)
}
tab <- do.call(rbind, rows)

cat("\nSummary (elapsed seconds; ratio = kernlab / kmaha):\n")
print(format(tab, digits = 3), row.names = FALSE)
ok_full <- all(tab$ratio_full >= 1)
ok_trunc <- if (4000L %in% tab$n) tab$ratio_trunc50[tab$n == 4000L] >= 10 else NA
cat(sprintf("\nTarget full KPCA no slower than kernlab at every n: %s\n",
            if (ok_full) "met" else "NOT met"))
cat(sprintf("Target truncated (rank 50) >= 10x faster than kernlab at n = 4000: %s\n",
            if (is.na(ok_trunc)) "not measured" else if (ok_trunc) "met" else "NOT met"))

cat("\nMarkdown:\n\n")
cat("| n | kmaha full (s) | kmaha rank 50 (s) | kernlab (s) | ratio full | ratio rank 50 | projection 1000 rows: full / rank 50 / kernlab (s) | components kmaha / kernlab |\n")
cat("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
for (i in seq_len(nrow(tab))) {
  with(tab[i, ], cat(sprintf("| %d | %.2f | %.2f | %.2f | %.2f | %.1f | %.3f / %.3f / %.3f | %d / %d |\n",
                             n, kmaha_full, kmaha_trunc50, kernlab, ratio_full,
                             ratio_trunc50, kmaha_full_proj, kmaha_trunc50_proj,
                             kernlab_proj, comps_kmaha, comps_kernlab)))
}
