# MLKR: time and final objective of mlkr() against a plain-R implementation
# of the same objective and gradient minimised by optim(method = "L-BFGS-B")
# from the same start with the same stopping rule, on regression sets from
# mlbench (bench/mlkr-data.R).
#
#   Rscript bench/mlkr.R                         # uses the installed kmaha
#   KMAHA_LIB=/tmp/lib Rscript bench/mlkr.R      # a private library
#
# metric-learn's MLKR (Python), the natural external reference, is not
# installed on this machine (PyPI is unreachable), so the reference is the
# plain-R implementation below.  The held-out error of the choices behind
# mlkr()'s defaults is a study: bench/studies/mlkr-defaults.R.
# Environment: KMAHA_BENCH_OUT (results CSV, default bench/results/mlkr.csv).

lib <- Sys.getenv("KMAHA_LIB", "")
suppressPackageStartupMessages(library(kmaha, lib.loc = if (nzchar(lib)) lib else NULL))
if (!requireNamespace("mlbench", quietly = TRUE)) stop("bench/mlkr.R needs mlbench")
out_csv <- Sys.getenv("KMAHA_BENCH_OUT", file.path("bench", "results", "mlkr.csv"))
source(file.path("bench", "mlkr-data.R"))

cat("kmaha MLKR benchmark\n")
cat("R:", R.version.string, "  kmaha", as.character(utils::packageVersion("kmaha")), "\n")
cat("BLAS:", extSoftVersion()[["BLAS"]], "\n")
cat("cores:", parallel::detectCores(), "  load average:",
    tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")
cat("metric-learn (Python):",
    if (nzchar(Sys.which("python3")) &&
        system2("python3", c("-c", shQuote("import metric_learn")), stdout = FALSE,
                stderr = FALSE) == 0) "installed (not used by this script)"
    else "not installed; the reference is a plain-R implementation", "\n\n")

# The plain-R reference: the objective on standardized inputs and response,
# with the gradient 2 (Lap Z)' X of kmaha/mlkr.hpp written with n x n
# matrices (a numerically safe softmax: each row's smallest distance is
# subtracted before exponentiating).
mlkr_plain <- function(xs, ys, A0, max_iter, tol) {
  n <- nrow(xs)
  d <- nrow(A0)
  D <- ncol(xs)
  evals <- 0L
  fg <- function(a) {
    A <- matrix(a, d, D)
    z <- xs %*% t(A)
    nz <- rowSums(z^2)
    d2 <- pmax(outer(nz, nz, "+") - 2 * tcrossprod(z), 0)
    diag(d2) <- Inf
    K <- exp(-(d2 - apply(d2, 1, min)))
    P <- K / rowSums(K)
    yhat <- drop(P %*% ys)
    e <- yhat - ys
    W <- 2 * e * P * outer(yhat, ys, "-")
    lapz <- (rowSums(W) + colSums(W)) * z - W %*% z - crossprod(W, z)
    list(f = sum(e^2), g = 2 * crossprod(lapz, xs))
  }
  cache <- new.env()
  f <- function(a) {
    evals <<- evals + 1L
    r <- fg(a)
    cache$a <- a
    cache$g <- r$g
    r$f
  }
  g <- function(a) if (identical(a, cache$a)) as.vector(cache$g) else as.vector(fg(a)$g)
  t0 <- proc.time()[["elapsed"]]
  o <- stats::optim(as.vector(A0), f, g, method = "L-BFGS-B",
                    control = list(maxit = max_iter, factr = tol / .Machine$double.eps))
  list(seconds = proc.time()[["elapsed"]] - t0, value = o$value, evaluations = evals,
       converged = o$convergence == 0, map = matrix(o$par, d, D))
}

# Speed and objective ----------------------------------------------------------
data <- datasets()
speed <- list()
for (nm in names(data)) {
  x <- data[[nm]]$x
  y <- data[[nm]]$y
  n <- nrow(x)
  xs <- scale(x)
  ys <- (y - mean(y)) / stats::sd(y)
  for (th in c(1L, 2L)) {
    t0 <- proc.time()[["elapsed"]]
    fit <- mlkr(x, y, num_threads = th)
    sec <- proc.time()[["elapsed"]] - t0
    speed[[length(speed) + 1L]] <- data.frame(
      dataset = nm, n = n, D = ncol(x), implementation = sprintf("kmaha mlkr() %d thread%s", th,
                                                                 if (th > 1) "s" else ""),
      seconds = sec, objective = fit$convergence$objective,
      evaluations = fit$convergence$iterations, converged = fit$convergence$converged)
  }
  # the same start (the scaled identity of init = "auto") and stopping rule
  A0 <- diag(fit$convergence$start_scale, ncol(x))
  ref <- mlkr_plain(xs, ys, A0, 500L, 1e-5)
  speed[[length(speed) + 1L]] <- data.frame(
    dataset = nm, n = n, D = ncol(x), implementation = "plain R + optim(L-BFGS-B)",
    seconds = ref$seconds, objective = ref$value, evaluations = ref$evaluations,
    converged = ref$converged)
  one <- speed[[length(speed) - 2L]]  # kmaha on 1 thread
  cat(sprintf("%-17s n = %d, D = %2d: kmaha (1 thread) %.2f s (objective %.4f, %d evaluations); plain R %.2f s (objective %.4f, %d evaluations)\n",
              nm, n, ncol(x), one$seconds, one$objective, as.integer(one$evaluations),
              ref$seconds, ref$value, ref$evaluations))
}
speed <- do.call(rbind, speed)
# the machine's load while this ran (timings on a loaded machine compare only
# within the run)
speed$load_average <- as.numeric(strsplit(tryCatch(readLines("/proc/loadavg"),
                                                   error = function(e) "NA"), " ")[[1]][1])
print(speed, row.names = FALSE, digits = 4)


dir.create(dirname(out_csv), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(speed, out_csv, row.names = FALSE)
cat("\nwritten:", out_csv, "\n")
