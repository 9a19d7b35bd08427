# Benchmark of dne() (and kdne() for small n) on the satellite data
# (D = 36): fit time and peak memory for n = 200 ... 4000 training points.
#
# Times: dne_s is the median elapsed time of 5 fits of dne() (everything the
# user waits for, including the leave-one-out 1-NN accuracy that
# new_linear_fit() computes), dne_cpu_s its CPU time (user + system, all
# threads); neighbours_s and scatter_eigen_s time the two C++ stages alone.
#
# Each n runs in a fresh Rscript, so the peak resident memory (VmHWM from
# /proc/self/status) belongs to that fit alone. The reference measured in the
# same child is a dense plain-R DNE (n x n distance matrix and graph, then
# X'(D - W)X and eigen()); the ratio shows what the sparse C++ path saves.
#
# Usage:  Rscript bench/learners-dne.R            (uses the installed kmaha)
#         KMAHA_LIB=/tmp/lib-dne Rscript bench/learners-dne.R
# Data:   $KMAHA_DATA_DIR/satellite.csv, otherwise mlbench::Satellite.

args <- commandArgs(trailingOnly = TRUE)
lib <- Sys.getenv("KMAHA_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))

vm_hwm_mb <- function() {
  st <- readLines("/proc/self/status")
  kb <- as.numeric(gsub("[^0-9]", "", grep("^VmHWM", st, value = TRUE)))
  kb / 1024
}

load_satellite <- function() {
  dir <- Sys.getenv("KMAHA_DATA_DIR")
  f <- file.path(dir, "satellite.csv")
  if (nzchar(dir) && file.exists(f)) {
    d <- utils::read.csv(f, stringsAsFactors = FALSE)
    list(x = as.matrix(d[, setdiff(names(d), "class")]), y = factor(d$class),
         source = f)
  } else {
    e <- new.env()
    utils::data("Satellite", package = "mlbench", envir = e)
    list(x = as.matrix(e$Satellite[, 1:36]), y = e$Satellite$classes,
         source = "mlbench::Satellite")
  }
}

# Plain-R dense DNE: the reference.
dense_dne <- function(x, y, k = 3) {
  xs <- scale(x)
  d2 <- as.matrix(stats::dist(xs))^2
  n <- nrow(xs)
  W <- matrix(0, n, n)
  same <- outer(as.integer(y), as.integer(y), "==")
  diag(d2) <- Inf
  ds <- d2; ds[!same] <- Inf
  do <- d2; do[same] <- Inf
  for (i in seq_len(n)) {
    js <- order(ds[i, ])[1:k]
    jo <- order(do[i, ])[1:k]
    W[i, js] <- W[js, i] <- 1
    W[i, jo] <- W[jo, i] <- -1
  }
  S <- crossprod(xs, (diag(rowSums(W)) - W) %*% xs)
  e <- eigen(S, symmetric = TRUE)
  sum(e$values < 0)
}

child <- function(n, reps) {
  suppressPackageStartupMessages(library(kmaha))
  dat <- load_satellite()
  set.seed(n)
  idx <- sample(nrow(dat$x), n)
  x <- dat$x[idx, ]
  y <- droplevels(dat$y[idx])
  invisible(dne(x[1:100, ], y[1:100]))  # warm up (lazy loading, BLAS)
  base_mb <- vm_hwm_mb()
  t_fit <- vapply(seq_len(reps), function(r) {
    gc(FALSE)
    st <- system.time(dne(x, y, k = 3))
    c(st[["elapsed"]], st[["user.self"]] + st[["sys.self"]])
  }, numeric(2))
  fit <- dne(x, y, k = 3)
  hwm_dne <- vm_hwm_mb()
  # parts of the fit: neighbour search and the sparse scatter + eigen-solve
  xs <- scale(x)
  t_nb <- system.time(nb <- kmaha:::core_dne_neighbors(xs, as.integer(y), 3L, FALSE, kmaha:::kmaha_context()))[["elapsed"]]
  t_eig <- system.time(kmaha:::core_dne_fit(xs, nb$same, nb$other, 0L, 0, kmaha:::kmaha_context()))[["elapsed"]]
  t_kdne <- NA_real_
  if (n <= 1000) {
    t_kdne <- system.time(kdne(x, y, kernel = rbf_kernel(1), k = 3))[["elapsed"]]
  }
  t_ref <- NA_real_
  if (n <= 4000) {
    t_ref <- system.time(nneg <- dense_dne(x, y))[["elapsed"]]
    stopifnot(nneg == fit$n_negative)
  }
  hwm_all <- vm_hwm_mb()
  cat(sprintf("RESULT %d %d %.4f %.4f %.4f %.4f %.4f %.4f %.1f %.1f %.1f\n", n,
              nrow(fit$L), stats::median(t_fit[1, ]), stats::median(t_fit[2, ]),
              t_nb, t_eig, t_kdne, t_ref, base_mb, hwm_dne, hwm_all))
}

if (length(args) >= 2 && args[1] == "--child") {
  child(as.integer(args[2]), reps = 5L)
  quit(save = "no")
}

# ---- driver ----
suppressPackageStartupMessages(library(kmaha))
cat("kmaha", format(utils::packageVersion("kmaha")), "from",
    dirname(system.file(package = "kmaha")), "\n")
cat("R:", R.version.string, "\n")
cat("BLAS:", sessionInfo()$BLAS, "\n")
cat("LAPACK:", La_library(), "\n")
cat("Data:", load_satellite()$source, "\n")
cat("Cores:", parallel::detectCores(), "\n\n")
script <- normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)))
ns <- c(200L, 500L, 1000L, 2000L, 4000L)
rows <- lapply(ns, function(n) {
  out <- system2(file.path(R.home("bin"), "Rscript"),
                 c(shQuote(script), "--child", n), stdout = TRUE,
                 env = c(sprintf("KMAHA_LIB=%s", lib),
                         sprintf("KMAHA_DATA_DIR=%s", Sys.getenv("KMAHA_DATA_DIR"))))
  line <- grep("^RESULT", out, value = TRUE)
  if (!length(line)) stop("child failed for n = ", n, ":\n", paste(out, collapse = "\n"))
  v <- suppressWarnings(as.numeric(strsplit(line, " ")[[1]][-1]))
  data.frame(n = v[1], dim = v[2], dne_s = v[3], dne_cpu_s = v[4],
             neighbours_s = v[5], scatter_eigen_s = v[6], kdne_s = v[7],
             dense_R_ref_s = v[8], ref_over_dne = v[8] / v[3], base_MB = v[9],
             peak_dne_MB = v[10], dne_extra_MB = v[10] - v[9],
             peak_with_ref_MB = v[11])
})
res <- do.call(rbind, rows)
print(res, row.names = FALSE, digits = 4)
t4000 <- res$dne_s[res$n == 4000]
c4000 <- res$dne_cpu_s[res$n == 4000]
cat(sprintf("\nDNE on 4000 points: %.3f s elapsed, %.3f s CPU (target <= 0.5 s): %s\n",
            t4000, c4000, if (t4000 <= 0.5) "met" else "NOT met"))
cat(sprintf("Load average while running: %s\n",
            paste(utils::head(scan("/proc/loadavg", what = "", quiet = TRUE), 3),
                  collapse = " ")))
