# Cost of kernels from elsewhere (R/kernel-sources.R) against the built-in
# kernels evaluated in the C++ core, in the same run:
#   * the training Gram matrix of n points (kernel_matrix()) for the
#     Gaussian kernel exp(-0.1 |x - y|^2) as the built-in kernel, as
#     kernlab::rbfdot(0.1) (translated into the built-in one), as an R
#     function of two matrices (custom_kernel(matrix = TRUE)) and as an R
#     function of two points (called n(n+1)/2 times); and kernlab's tanhdot(),
#     evaluated in R;
#   * a whole fit (kmaha(learner = "dne")) and the prediction of m new points
#     (KPCA projection in blocks) with the built-in kernel and with the R
#     matrix function;
#   * kernel alignment over 5 kernels, built-in (the core's products) and as
#     R matrix functions (products accumulated in R).
# Data: Satellite (KMAHA_DATA_DIR) or standard normal data with 36 columns.
# Best of KMAHA_BENCH_REPS (default 3) runs; the R function of two points
# once, and only up to n = 1000.  Run with kmaha installed:
#   Rscript bench/kernel-sources.R
suppressPackageStartupMessages(library(kmaha))
cat("BLAS:", extSoftVersion()["BLAS"], "\n")
cat("cores:", parallel::detectCores(), "  load average:",
    tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")
options(kmaha.num_threads = 1L)
reps <- as.integer(Sys.getenv("KMAHA_BENCH_REPS", "3"))

d <- tryCatch(kmaha_data("satellite"), error = function(e) NULL)
if (is.null(d)) {
  set.seed(1)
  x_all <- matrix(rnorm(6000 * 36), 6000)
  y_all <- factor(sample(1:3, 6000, TRUE))
} else {
  x_all <- as.matrix(d[, setdiff(names(d), "class")])
  y_all <- d$class
}
x_all <- scale(x_all)

best <- function(f, r = reps) min(replicate(r, system.time(f())[["elapsed"]]))

gauss_block <- function(s) {
  force(s)
  function(a, b) {
    d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
    exp(-s * pmax(d2, 0))
  }
}
gauss_pair <- function(s) {
  force(s)
  function(a, b) exp(-s * sum((a - b)^2))
}
k_core <- gaussian_kernel(1 / sqrt(0.2))
k_mat <- custom_kernel(gauss_block(0.1), matrix = TRUE, name = "matrix")
k_pair <- custom_kernel(gauss_pair(0.1), name = "pair")

cat("\nTraining Gram matrix (s)\n")
cat(sprintf("%6s %9s %9s %9s %9s %9s\n", "n", "core", "rbfdot", "R matrix", "R pairs", "tanhdot"))
for (n in c(500, 1000, 2000)) {
  x <- x_all[seq_len(n), ]
  t_core <- best(function() kernel_matrix(k_core, x))
  t_kl <- if (requireNamespace("kernlab", quietly = TRUE))
    best(function() kernel_matrix(kernlab::rbfdot(0.1), x)) else NA
  t_mat <- best(function() kernel_matrix(k_mat, x))
  t_pair <- if (n <= 1000) best(function() kernel_matrix(k_pair, x), 1) else NA
  t_tanh <- if (requireNamespace("kernlab", quietly = TRUE))
    best(function() kernel_matrix(kernlab::tanhdot(0.01), x)) else NA
  cat(sprintf("%6d %9.3f %9.3f %9.3f %9.3f %9.3f\n", n, t_core, t_kl, t_mat, t_pair, t_tanh))
}

cat("\nkmaha(learner = \"dne\") fit of n points, prediction of 4000 new points (s)\n")
cat(sprintf("%6s %10s %10s %12s %12s\n", "n", "fit core", "fit R mat", "pred core", "pred R mat"))
xn <- x_all[2001:6000, ]
for (n in c(500, 1000, 2000)) {
  x <- x_all[seq_len(n), ]
  y <- droplevels(y_all[seq_len(n)])
  f_core <- NULL
  f_mat <- NULL
  t_fc <- best(function() f_core <<- kmaha(x, y, learner = "dne", kernel = k_core))
  t_fm <- best(function() f_mat <<- kmaha(x, y, learner = "dne", kernel = k_mat))
  t_pc <- best(function() predict(f_core, xn))
  t_pm <- best(function() predict(f_mat, xn))
  agree <- mean(predict(f_core, xn) == predict(f_mat, xn))
  cat(sprintf("%6d %10.3f %10.3f %12.3f %12.3f   (predictions agree: %.4f)\n",
              n, t_fc, t_fm, t_pc, t_pm, agree))
}

cat("\nalign_kernels() over 5 Gaussian kernels, n = 1000 (s)\n")
x <- x_all[1:1000, ]
y <- droplevels(y_all[1:1000])
s <- c(0.01, 0.03, 0.1, 0.3, 1)
kc <- lapply(s, function(v) gaussian_kernel(1 / sqrt(2 * v)))
kr <- lapply(s, function(v) custom_kernel(gauss_block(v), matrix = TRUE))
a_c <- NULL
a_r <- NULL
t_ac <- best(function() a_c <<- align_kernels(x, y, kc))
t_ar <- best(function() a_r <<- align_kernels(x, y, kr))
cat(sprintf("core %.3f   R matrix functions %.3f   max weight difference %.2g\n",
            t_ac, t_ar, max(abs(a_c$weights - a_r$weights))))
