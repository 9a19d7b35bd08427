# Speed of kernel choice at n = 200 (the paper's training-set size):
#   * KNCA (the KPCA trick with NCA) with 5-fold CV over the 21 scaled RBF
#     kernels, the whole kmaha(kernel = "cv") fit, on one core (target
#     <= 2 s), measured in a child process pinned to CPU 0 with `taskset`
#     and one thread; and the same CV with scikit-learn's pipeline
#     (KernelPCA + NeighborhoodComponentsAnalysis + 1-NN, 5-fold CV over the
#     same 21 kernels) on the same data in the same run, also on one core;
#   * kernel alignment over the 21 kernels (target <= 0.2 s), against one
#     21-kernel Gram sum (kernel_matrix of the unweighted kernel);
#   * the overhead of the unweighted kernel over a single kernel in kmaha()
#     (target <= 0.1 s);
#   * CV wall time with future::plan(multisession, workers = 2) against
#     sequential (target >= 1.6x faster).
# Data: 200 random rows of Ionosphere (KMAHA_DATA_DIR or mlbench), else of a
# generated two-class problem. Run with kmaha installed:
#   Rscript bench/kernel_choice_speed.R
# KMAHA_BENCH_LEARNER (default nca), KMAHA_BENCH_REPS (default 3).
suppressPackageStartupMessages(library(kmaha))
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(bench_dir, "common.R"))
cat("BLAS:", extSoftVersion()["BLAS"], "\n")
cat("cores:", parallel::detectCores(), "  load average:",
    tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")
learner <- Sys.getenv("KMAHA_BENCH_LEARNER", "nca")
reps <- as.integer(Sys.getenv("KMAHA_BENCH_REPS", "3"))

set.seed(1)
d <- tryCatch(kmaha_data("ionosphere"), error = function(e) NULL)
if (is.null(d)) {
  n <- 400
  x_all <- matrix(rnorm(n * 10), n)
  y_all <- factor(ifelse(rowSums(x_all[, 1:3]^2) > 3, "a", "b"))
  cat("data: generated (ionosphere not available)\n")
} else {
  x_all <- as.matrix(d[, -ncol(d)])
  y_all <- d$class
  cat("data: ionosphere\n")
}
i <- sample(nrow(x_all), 200)
x <- x_all[i, ]
x <- x[, apply(x, 2, sd) > 0]
y <- droplevels(y_all[i])
xs <- scale(x)
cat(sprintf("n = %d, D = %d, learner = %s\n\n", nrow(x), ncol(x), learner))

med_time <- function(f, reps) stats::median(vapply(seq_len(reps), function(r)
  system.time(f())[["elapsed"]], numeric(1)))

work <- tempfile("kchoice-")
dir.create(work)
dat_file <- file.path(work, "data.rds")
saveRDS(list(x = x, y = y), dat_file)
rscript <- file.path(R.home("bin"), "Rscript")
has_taskset <- nzchar(Sys.which("taskset"))

# 1. The whole kmaha(kernel = "cv") fit on one core, in a child process.
child <- file.path(work, "cv.R")
writeLines(c(
  "suppressPackageStartupMessages(library(kmaha))",
  "a <- commandArgs(TRUE); d <- readRDS(a[1]); reps <- as.integer(a[3])",
  "options(kmaha.num_threads = 1)",
  "t1 <- system.time(kmaha(d$x, d$y, learner = a[2], kernel = rbf_kernel(1)))[['elapsed']]",
  "tt <- vapply(seq_len(reps), function(r) system.time(",
  "  f <<- kmaha(d$x, d$y, learner = a[2], kernel = 'cv', seed = 1))[['elapsed']], 0)",
  "cat(sprintf('%.4f %.4f %g %.4f\\n', t1, stats::median(tt), f$kernel$sigma,",
  "            max(f$kernel_choice$cv$curve$mean, na.rm = TRUE)))"), child)
v <- line_numbers(run_one_core(rscript, c(shQuote(child), shQuote(dat_file), learner,
                                          max(1, reps - 1))))
cat(sprintf("one core (%s):\n", if (has_taskset) "taskset -c 0, 1 thread" else "1 thread"))
cat(sprintf("  K%s, one fixed kernel:              %7.3f s\n", toupper(learner), v[1]))
cat(sprintf("  K%s, 5-fold CV over 21 kernels:     %7.3f s  (%.1f single fits; target <= 2 s); chose sigma = %g (CV accuracy %.3f)\n",
            toupper(learner), v[2], v[2] / v[1], v[3], v[4]))

# scikit-learn's pipeline on the same rows, same kernels, same fold count.
python <- "/usr/bin/python3"
have_sklearn <- learner == "nca" && python_has("sklearn", python)
if (have_sklearn) {
  utils::write.table(x, file.path(work, "x.csv"), sep = ",", row.names = FALSE, col.names = FALSE)
  writeLines(as.character(y), file.path(work, "y.csv"))
  py <- file.path(work, "cv.py")
  write_sklearn_nca_cv(py)
  s <- line_numbers(run_one_core(python, c(shQuote(py), shQuote(file.path(work, "x.csv")),
                                           shQuote(file.path(work, "y.csv")), v[3])))[-1]
  cat(sprintf("  scikit-learn KernelPCA + NCA + 1-NN, 5-fold CV over 21 kernels: %7.3f s (chose sigma = %g, CV accuracy %.3f)\n",
              s[1], s[2], s[3]))
  cat(sprintf("  ratio scikit-learn / kmaha CV: %.1fx (target 5x)\n", s[1] / v[2]))
} else {
  cat("  scikit-learn not available (apt-get install python3-sklearn); no pipeline comparison\n")
}

# 2. Alignment vs one 21-kernel Gram sum.
t_gram <- med_time(function() kernel_matrix(kernel_sum(paper_kernels()), xs), 10)
t_align <- med_time(function() align_kernels(xs, y), 10)
t_align_lp <- med_time(function() align_kernels(xs, y, method = "lp"), 10)
cat(sprintf("\n21-kernel Gram sum (reference):   %7.3f s\n", t_gram))
cat(sprintf("alignment QP over 21 kernels:     %7.3f s  (%.1fx the Gram sum; target <= 0.2 s)\n",
            t_align, t_align / t_gram))
cat(sprintf("alignment LP over 21 kernels:     %7.3f s\n", t_align_lp))
# The core's blocked products against a plain-R computation that keeps all
# 21 Gram matrices and calls crossprod() (the alternative design).
yi <- as.integer(y)
r_products <- function() {
  G <- vapply(paper_kernels(), function(k) c(kernel_matrix(k, xs)), numeric(nrow(xs)^2))
  Y <- ifelse(outer(yi, yi, "=="), 1, -1 / (nlevels(y) - 1))
  list(S = crossprod(G), b = crossprod(G, c(Y)))
}
t_r <- med_time(r_products, 10)
t_core <- med_time(function() kmaha:::core_alignment_products(paper_kernels(), xs, yi, nlevels(y), kmaha:::kmaha_context()), 10)
cat(sprintf("S and b: plain R crossprod %.3f s, core (blocked, shared distances) %.3f s: %.2fx\n",
            t_r, t_core, t_r / t_core))

# 3. Unweighted kernel overhead in kmaha() over a single kernel, with the
#    same KPCA rank so that the learner does the same amount of work.
one <- kmaha(x, y, learner = learner, kernel = rbf_kernel(1))
r <- ncol(one$kpca$coords)
t_single <- med_time(function() kmaha(x, y, learner = learner, kernel = rbf_kernel(1), rank = r), reps)
t_unw <- med_time(function() kmaha(x, y, learner = learner, kernel = "unweighted", rank = r), reps)
t_kpca1 <- med_time(function() kpca(xs, rbf_kernel(1), rank = r), 10)
t_kpcau <- med_time(function() kpca(xs, kernel_sum(paper_kernels()), rank = r), 10)
cat(sprintf("kmaha single kernel (rank %d):     %7.3f s\n", r, t_single))
cat(sprintf("kmaha unweighted (rank %d):        %7.3f s  (overhead %+.3f s; target <= 0.1 s)\n",
            r, t_unw, t_unw - t_single))
cat(sprintf("  of which KPCA: single %.3f s, unweighted %.3f s (overhead %+.3f s)\n",
            t_kpca1, t_kpcau, t_kpcau - t_kpca1))

# 4. CV sequential vs multisession (2 workers), both with the default
#    thread settings of a user session.
cv_time <- function() system.time(cv_kernel(xs, y, learner, paper_kernels(), folds = 5,
                                            seed = 1))[["elapsed"]]
future::plan(future::sequential)
t_seq <- stats::median(replicate(max(1, reps - 1), cv_time()))
future::plan(future::multisession, workers = 2)
invisible(cv_kernel(xs, y, learner, paper_kernels()[1:2], folds = 2, seed = 1))  # warm-up
t_par <- stats::median(replicate(max(1, reps - 1), cv_time()))
future::plan(future::sequential)
cat(sprintf("\nCV sequential (default threads):  %7.3f s\n", t_seq))
cat(sprintf("CV multisession, 2 workers:       %7.3f s  (speed-up %.2fx; target >= 1.6x)\n",
            t_par, t_seq / t_par))
