# LMNN speed and memory on Satellite (D = 36, k = 3).
#
# Each training size n runs in a fresh Rscript so that the peak resident
# memory (VmHWM from /proc/self/status) belongs to that fit alone: peak_MB is
# the whole process after lmnn() (base_MB before it), solver_MB the peak
# increase during the LMNN solver alone (a third fresh process that only
# reads the scaled inputs and the targets).  Reports
# fit seconds (elapsed and CPU), peak memory, iterations, convergence, test
# accuracy of 1-NN in the learned metric (and Euclidean 1-NN for reference),
# and the speed ratio against mlpack 4.7's LMNN measured on this machine
# (reference BLAS; numbers given in the project brief).
#
# Usage:  Rscript bench/learners-lmnn.R            (uses library(kmaha))
#         KMAHA_LIB=/tmp/lib-x Rscript bench/learners-lmnn.R
# Data:   $KMAHA_DATA_DIR/satellite.csv when set, otherwise mlbench::Satellite.

sizes <- c(200, 500, 1000, 2000, 4000)
mlpack_sec <- c(`200` = 0.37, `500` = 2.42, `1000` = 9.59, `2000` = 36.9,
                `4000` = 147)
metric_learn_sec <- c(`200` = 0.15, `500` = 0.50, `1000` = 1.29,
                      `2000` = 4.34, `4000` = 15)

child <- function(n) {
  lib <- Sys.getenv("KMAHA_LIB")
  if (nzchar(lib)) library(kmaha, lib.loc = lib) else library(kmaha)
  dd <- Sys.getenv("KMAHA_DATA_DIR")
  f <- file.path(dd, "satellite.csv")
  if (nzchar(dd) && file.exists(f)) {
    sat <- utils::read.csv(f)
    x <- as.matrix(sat[, setdiff(names(sat), "class")])
    y <- factor(sat$class)
    source <- "KMAHA_DATA_DIR/satellite.csv"
  } else {
    e <- new.env()
    utils::data("Satellite", package = "mlbench", envir = e)
    x <- as.matrix(e$Satellite[, 1:36])
    y <- e$Satellite$classes
    source <- "mlbench::Satellite"
  }
  set.seed(20100 + n)
  idx <- sample(nrow(x))
  tr <- idx[seq_len(n)]
  te <- idx[n + seq_len(2000)]
  hwm <- function() {
    s <- readLines("/proc/self/status")
    as.numeric(gsub("[^0-9]", "", s[grepl("^VmHWM", s)])) / 1024
  }
  gc()
  base_mb <- hwm()
  t0 <- proc.time()
  fit <- lmnn(x[tr, ], y[tr], k = 3)
  t1 <- proc.time() - t0
  peak_mb <- hwm()
  acc <- mean(predict(fit, x[te, ]) == y[te])
  prep <- fit$prep
  sc <- function(z) sweep(sweep(z, 2, prep$center), 2, prep$scale, "/")
  eu <- mean(knn_classify(sc(x[tr, ]), y[tr], sc(x[te, ]), k = 1)$class == y[te])
  # Memory of the LMNN solver alone: a second fresh process that only reads
  # the scaled inputs and the targets and runs the solver.
  f_in <- tempfile(fileext = ".rds")
  saveRDS(list(x = sc(x[tr, ]), y = as.integer(y[tr]), tg = fit$targets), f_in)
  script <- normalizePath(sub("^--file=", "",
    grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
  out <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE,
                 stderr = FALSE, env = paste0("LMNN_BENCH_CORE=", f_in))
  core_mb <- as.numeric(sub("^CORE ", "", grep("^CORE", out, value = TRUE)))
  unlink(f_in)
  cat(sprintf("RESULT %d %.3f %.3f %.1f %.1f %d %s %.4f %.4f %d %s %.1f\n", n,
              t1[["elapsed"]], t1[["user.self"]] + t1[["sys.self"]], peak_mb,
              base_mb, fit$convergence$iterations, fit$convergence$converged,
              acc, eu, as.integer(fit$impostors), source, core_mb))
}

core_child <- function(f_in) {
  lib <- Sys.getenv("KMAHA_LIB")
  if (nzchar(lib)) library(kmaha, lib.loc = lib) else library(kmaha)
  d <- readRDS(f_in)
  hwm <- function() {
    s <- readLines("/proc/self/status")
    as.numeric(gsub("[^0-9]", "", s[grepl("^VmHWM", s)])) / 1024
  }
  gc()
  before <- hwm()
  kmaha:::core_lmnn_fit(d$x, d$y, d$tg, diag(ncol(d$x)), 0.5, 0, 1000L, 1e-7,
                        "M", 10L, 0.2, FALSE, kmaha:::kmaha_context())
  cat(sprintf("CORE %.1f\n", hwm() - before))
}

if (nzchar(Sys.getenv("LMNN_BENCH_CORE"))) {
  core_child(Sys.getenv("LMNN_BENCH_CORE"))
  quit(save = "no")
}

if (nzchar(Sys.getenv("LMNN_BENCH_CHILD"))) {
  child(as.integer(Sys.getenv("LMNN_BENCH_CHILD")))
  quit(save = "no")
}

lib <- Sys.getenv("KMAHA_LIB")
if (nzchar(lib)) library(kmaha, lib.loc = lib) else library(kmaha)
cat("BLAS:", extSoftVersion()[["BLAS"]], "\n")
cat("BLAS (sessionInfo):", sessionInfo()$BLAS, "\n")
cat("LAPACK:", La_library(), "\n")
cat("cores:", parallel::detectCores(), "\n\n")
script <- normalizePath(sub("^--file=", "",
  grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
rows <- lapply(sizes, function(n) {
  out <- system2(file.path(R.home("bin"), "Rscript"), script, stdout = TRUE,
                 stderr = FALSE, env = paste0("LMNN_BENCH_CHILD=", n))
  r <- strsplit(grep("^RESULT", out, value = TRUE), " ")[[1]]
  data.frame(n = n, fit_s = as.numeric(r[3]), cpu_s = as.numeric(r[4]),
             peak_MB = as.numeric(r[5]), base_MB = as.numeric(r[6]),
             iterations = as.integer(r[7]), converged = as.logical(r[8]),
             acc_lmnn = as.numeric(r[9]), acc_euclid = as.numeric(r[10]),
             impostor_pairs = as.integer(r[11]), solver_MB = as.numeric(r[13]),
             data = r[12])
})
res <- do.call(rbind, rows)
res$mlpack_s <- mlpack_sec[as.character(res$n)]
res$speedup_vs_mlpack <- round(res$mlpack_s / res$fit_s, 1)
res$metric_learn_s <- metric_learn_sec[as.character(res$n)]
print(res, row.names = FALSE)
