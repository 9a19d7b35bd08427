# Speed of kernel choice by cross-validation (5 folds x the 21 scaled RBF
# kernels of paper_kernels()), per learner and dataset, at the paper's
# training-set size (200 points, 100 for Glass and Iris; inputs standardized
# on the training split; the first split of bench/studies/paper_kernel.R).
#
# One core (a child process pinned to one CPU with `taskset`, one thread;
# see run_one_core() in bench/common.R):
#   fit         one kmaha() fit with the kernel the fast CV chose;
#   cv fast     kmaha(kernel = "cv") with the default cv_strategy = "fast";
#   cv exh.     kmaha(kernel = "cv", cv_strategy = "exhaustive").
# References measured in the same run, also on one core:
#   KNCA   scikit-learn's pipeline KernelPCA + NeighborhoodComponentsAnalysis
#          + 1-NN with 5-fold CV over the same 21 kernels on the same rows
#          (and one fit of it with the chosen kernel);
#   KLMNN  metric-learn's LMNN on the same KPCA coordinates as kmaha's fit
#          (one fit; the CV reference is 105 such fits, extrapolated), if
#          the Python module metric_learn can be imported (PYTHONPATH);
#          otherwise the script says so and prints the issue's mlpack figure
#          (6.5 s per fit at n = 200, D about 199) for comparison;
#   all    the exhaustive strategy of the same call.
# Two workers: the fast CV (kmaha(kernel = "cv")) under
# future::plan(multisession, workers = 2) against sequential, both with
# default threads, summed over the datasets.
#
# Environment:
#   KMAHA_DATA_DIR          the CSV files (yeast and musk2 need it)
#   KMAHA_BENCH_LEARNERS    subset of nca,dne,lmnn (default all three)
#   KMAHA_BENCH_DATASETS    comma-separated names (default all nine)
#   KMAHA_BENCH_REPS        repetitions of each timing, median (default 1)
#   KMAHA_BENCH_EXHAUSTIVE  0 skips the exhaustive strategy (default 1)
#   KMAHA_BENCH_LMNN_REF    datasets on which metric-learn's LMNN is timed:
#                           "ionosphere" (default; one fit takes minutes),
#                           "all" or "none"
#   KMAHA_BENCH_PARALLEL    0 skips the two-worker measurement (default 1)
#   KMAHA_BENCH_CPU         the CPU the one-core runs are pinned to (default
#                           0; "none": not pinned)
#   KMAHA_BENCH_OUT         CSV of the one-core rows (default
#                           bench/studies/results/cv_speed.csv)
# Usage: PYTHONPATH=/path/to/metric-learn Rscript bench/cv_speed.R
suppressPackageStartupMessages(library(kmaha))
options(width = 160)
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(bench_dir, "common.R"))
info <- paper_datasets()
learners <- env_list("KMAHA_BENCH_LEARNERS", c("nca", "dne", "lmnn"))
datasets <- env_list("KMAHA_BENCH_DATASETS", info$name)
reps <- as.integer(Sys.getenv("KMAHA_BENCH_REPS", "1"))
do_exh <- Sys.getenv("KMAHA_BENCH_EXHAUSTIVE", "1") != "0"
lmnn_ref <- Sys.getenv("KMAHA_BENCH_LMNN_REF", "ionosphere")
do_par <- Sys.getenv("KMAHA_BENCH_PARALLEL", "1") != "0"
out_file <- Sys.getenv("KMAHA_BENCH_OUT", file.path("bench", "results", "cv_speed.csv"))
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)

cat("BLAS:", extSoftVersion()["BLAS"], "\n")
cat("kmaha", format(packageVersion("kmaha")), "  cores:", parallel::detectCores(),
    "  load average:", tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")

python <- "/usr/bin/python3"
have_sklearn <- python_has("sklearn", python)
have_ml <- python_has("metric_learn", python)
cat("scikit-learn:", if (have_sklearn) "available" else "NOT available", "\n")
cat("metric-learn:", if (have_ml) {
  system2(python, c("-c", shQuote("import metric_learn; print(metric_learn.__file__)")),
          stdout = TRUE)
} else {
  "NOT importable (set PYTHONPATH to a copy of metric-learn); the KLMNN reference is the issue's mlpack figure, 6.5 s per fit"
}, "\n\n")

work <- tempfile("cvspeed-")
dir.create(work)
# The one-core kmaha timings, in a child process.
child <- file.path(work, "child.R")
writeLines(c(
  "suppressPackageStartupMessages(library(kmaha))",
  "options(kmaha.num_threads = 1L)",
  "a <- commandArgs(TRUE); d <- readRDS(a[1]); l <- a[2]; reps <- as.integer(a[3]); exh <- a[4] == '1'",
  "med <- function(f) { r <- NULL; t <- stats::median(vapply(seq_len(reps), function(i)",
  "  system.time(r <<- suppressWarnings(f()))[['elapsed']], 0)); list(t = t, r = r) }",
  "# warm-up: loads the namespaces and code paths the timed calls use",
  "invisible(suppressWarnings(kmaha(d$x, d$y, learner = l, kernel = 'cv', seed = 1,",
  "                                 kernels = paper_kernels()[c(8, 12, 16)], cv_folds = 2)))",
  "fa <- med(function() kmaha(d$x, d$y, learner = l, kernel = 'cv', seed = 1))",
  "cpu <- system.time(suppressWarnings(kmaha(d$x, d$y, learner = l, kernel = 'cv', seed = 1)))",
  "cpu <- cpu[['user.self']] + cpu[['sys.self']]",
  "cv <- fa$r$kernel_choice$cv",
  "fit <- med(function() kmaha(d$x, d$y, learner = l, kernel = cv$kernel))",
  "saveRDS(fit$r$kpca$coords, a[5])",
  "ex <- if (exh) med(function() kmaha(d$x, d$y, learner = l, kernel = 'cv', seed = 1,",
  "                                    cv_strategy = 'exhaustive')) else list(t = NA, r = NULL)",
  "sig_ex <- if (exh) ex$r$kernel_choice$cv$kernel$sigma else NA",
  "cat(sprintf('%.4f %.4f %.4f %g %g %d %.4f\\n', fit$t, fa$t, ex$t, cv$kernel$sigma, sig_ex,",
  "            cv$n_fits, cpu))"),
  child)

nca_py <- file.path(work, "nca.py")
write_sklearn_nca_cv(nca_py)
lmnn_py <- file.path(work, "lmnn.py")
writeLines(c(
  "import sys, time, warnings, numpy as np",
  "warnings.filterwarnings('ignore')",
  "from metric_learn import LMNN",
  "z = np.loadtxt(sys.argv[1], delimiter=','); y = np.loadtxt(sys.argv[2], dtype=str)",
  "t0 = time.perf_counter(); m = LMNN(n_neighbors=3, regularization=0.5).fit(z, y)",
  "print('%.4f %d' % (time.perf_counter() - t0, m.n_iter_))"),
  lmnn_py)

rows <- list()
for (ds in datasets) {
  dat <- paper_split(ds, 1L, info)
  if (is.null(dat)) {
    cat(sprintf("%-14s skipped (data not available)\n", ds))
    next
  }
  dat_file <- file.path(work, "data.rds")
  saveRDS(dat[c("x", "y")], dat_file)
  utils::write.table(dat$x, file.path(work, "x.csv"), sep = ",", row.names = FALSE, col.names = FALSE)
  writeLines(as.character(dat$y), file.path(work, "y.csv"))
  for (l in learners) {
    zfile <- file.path(work, "z.rds")
    v <- line_numbers(run_one_core(file.path(R.home("bin"), "Rscript"),
                      c(shQuote(child), shQuote(dat_file), l, reps, as.integer(do_exh), shQuote(zfile))))
    ref_fit <- ref_cv <- NA_real_
    ref <- "exhaustive"
    if (l == "nca" && have_sklearn) {
      s <- line_numbers(run_one_core(python, c(shQuote(nca_py), shQuote(file.path(work, "x.csv")),
                                  shQuote(file.path(work, "y.csv")), v[4])))
      ref_fit <- s[1]
      ref_cv <- s[2]
      ref <- sprintf("scikit-learn (chose sigma %g)", s[3])
    }
    if (l == "lmnn" && have_ml && (lmnn_ref == "all" || ds %in% strsplit(lmnn_ref, ",")[[1]])) {
      z <- readRDS(zfile)
      utils::write.table(z, file.path(work, "z.csv"), sep = ",", row.names = FALSE, col.names = FALSE)
      s <- line_numbers(run_one_core(python, c(shQuote(lmnn_py), shQuote(file.path(work, "z.csv")),
                                  shQuote(file.path(work, "y.csv")))))
      ref_fit <- s[1]
      ref_cv <- 105 * s[1]
      ref <- sprintf("metric-learn LMNN, D = %d, %d iterations; CV = 105 fits (extrapolated)",
                     ncol(z), as.integer(s[2]))
    }
    row <- data.frame(learner = toupper(l), dataset = ds, fit_s = v[1], cv_fast_s = v[2],
                      cv_fast_cpu_s = v[7], cv_exhaustive_s = v[3], fits_fast = v[6], sigma_fast = v[4],
                      sigma_exhaustive = v[5], ref_fit_s = ref_fit, ref_cv_s = ref_cv,
                      fast_vs_exhaustive = v[3] / v[2], ref_vs_fast = ref_cv / v[2],
                      reference = ref)
    rows[[length(rows) + 1L]] <- row
    cat(sprintf("%-5s %-14s fit %6.3f s  cv fast %7.3f s (cpu %6.3f s, %3d fits)  cv exhaustive %7.3f s  reference cv %8.2f s  [%s]\n",
                toupper(l), ds, v[1], v[2], v[7], v[6], v[3], ref_cv, ref))
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, out_file, row.names = FALSE)
cat("\nOne core, per learner: CV time per training split averaged over the datasets\n")
print(do.call(rbind, lapply(split(res, res$learner), function(g) data.frame(
  learner = g$learner[1], datasets = nrow(g), fit_s = mean(g$fit_s),
  cv_fast_s = mean(g$cv_fast_s), cv_fast_cpu_s = mean(g$cv_fast_cpu_s),
  cv_exhaustive_s = mean(g$cv_exhaustive_s),
  fast_vs_exhaustive = mean(g$cv_exhaustive_s) / mean(g$cv_fast_s),
  ref_cv_s = mean(g$ref_cv_s, na.rm = TRUE)))), row.names = FALSE, digits = 3)
cat("(targets: KNCA <= 2 s, KDNE <= 1 s, KLMNN <= 15 s; cpu: the process's CPU time, a\n",
    " check on the wall times when other jobs share the machine)\n", sep = "")
if (!have_ml && "lmnn" %in% learners) {
  cat("metric-learn was not importable: KLMNN reference = the issue's mlpack figure, 6.5 s per fit (about 680 s for 105 fits).\n")
}

# Two workers against sequential (default threads), fast CV, summed over
# the datasets.
if (do_par) {
  cat("\nfast CV, future::plan(multisession, workers = 2) vs sequential (default threads)\n")
  data_all <- lapply(stats::setNames(datasets, datasets), paper_split, s = 1L, info = info)
  data_all <- Filter(Negate(is.null), data_all)
  cv_all <- function(l) sum(vapply(data_all, function(dat) system.time(suppressWarnings(
    kmaha(dat$x, dat$y, learner = l, kernel = "cv", seed = 1)))[["elapsed"]], 0))
  warm <- function(l) invisible(suppressWarnings(kmaha(
    data_all[[1]]$x, data_all[[1]]$y, learner = l, kernel = "cv", seed = 1,
    kernels = paper_kernels()[c(8, 12, 16)], cv_folds = 2)))
  # Control: what two workers give on this machine now, for independent
  # CPU-bound tasks (dense products) of about the same total time.
  burn <- function(i) {
    m <- matrix(stats::runif(200 * 150), 200)
    for (r in 1:15) m <- m / max(abs(crossprod(m))) + 1
    sum(m)
  }
  control <- function() system.time(future.apply::future_lapply(
    seq_len(120), burn, future.seed = TRUE))[["elapsed"]]
  future::plan(future::sequential)
  c_seq <- control()
  future::plan(future::multisession, workers = 2)
  invisible(future.apply::future_lapply(1:2, burn, future.seed = TRUE))
  c_par <- control()
  future::plan(future::sequential)
  cat(sprintf("control (120 independent products): sequential %.2f s, multisession %.2f s: %.2fx\n",
              c_seq, c_par, c_seq / c_par))
  for (l in learners) {
    future::plan(future::sequential)
    warm(l)
    t_seq <- cv_all(l)
    future::plan(future::multisession, workers = 2)
    warm(l)   # starts the workers and loads kmaha in them
    t_par <- cv_all(l)
    future::plan(future::sequential)
    cat(sprintf("%-5s sequential %7.2f s, multisession %7.2f s (mean per split %.2f / %.2f s): %.2fx (target >= 1.6x)\n",
                toupper(l), t_seq, t_par, t_seq / length(data_all), t_par / length(data_all),
                t_seq / t_par))
  }
}
cat("One-core rows:", out_file, "\n")
