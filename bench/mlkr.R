# MLKR: time and final objective of mlkr() against a plain-R implementation
# of the same objective and gradient minimised by optim(method = "L-BFGS-B")
# from the same start with the same stopping rule, on regression data sets
# from mlbench; and the held-out error of the choices behind mlkr()'s
# defaults (start, k, neighbour weights).
#
#   Rscript bench/mlkr.R                         # uses the installed kmaha
#   KMAHA_LIB=/tmp/lib Rscript bench/mlkr.R      # a private library
#
# metric-learn's MLKR (Python), the natural external reference, is not
# installed on this machine (PyPI is unreachable), so the reference is the
# plain-R implementation below.  Environment: KMAHA_BENCH_SPLITS (random
# splits of the defaults study, default 5), KMAHA_BENCH_OUT (directory of
# the results, default bench/results): mlkr.csv (speed and objective),
# mlkr_defaults.csv (held-out RMSE of the choices).

lib <- Sys.getenv("KMAHA_LIB", "")
suppressPackageStartupMessages(library(kmaha, lib.loc = if (nzchar(lib)) lib else NULL))
if (!requireNamespace("mlbench", quietly = TRUE)) stop("bench/mlkr.R needs mlbench")
splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "5"))
out_dir <- Sys.getenv("KMAHA_BENCH_OUT", file.path("bench", "results"))

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

# Data -----------------------------------------------------------------------
datasets <- function() {
  e <- new.env()
  utils::data("BostonHousing", package = "mlbench", envir = e)
  bh <- e$BostonHousing
  bh$chas <- as.numeric(as.character(bh$chas))
  set.seed(1)
  f1 <- mlbench::mlbench.friedman1(500, sd = 1)
  set.seed(2)
  f2 <- mlbench::mlbench.friedman2(500, sd = 125)
  # Friedman 1 with 40 more uniform noise columns (D = 50)
  set.seed(3)
  f1n <- mlbench::mlbench.friedman1(400, sd = 1)
  list(
    BostonHousing = list(x = as.matrix(bh[, names(bh) != "medv"]), y = bh$medv),
    friedman1 = list(x = f1$x, y = f1$y),
    friedman2 = list(x = f2$x, y = f2$y),
    friedman1_noise40 = list(x = cbind(f1n$x, matrix(stats::runif(400 * 40), 400, 40)),
                             y = f1n$y))
}

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

rmse <- function(a, b) sqrt(mean((a - b)^2))

# Euclidean k-NN regression (the mean of the k nearest training responses).
knn_mean <- function(xtr, ytr, xte, k) {
  d2 <- outer(rowSums(xte^2), rowSums(xtr^2), "+") - 2 * tcrossprod(xte, xtr)
  apply(d2, 1, function(r) mean(ytr[order(r)[seq_len(k)]]))
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
  cat(sprintf("%-14s n = %d, D = %2d: kmaha %.2f s (objective %.4f, %d evaluations); plain R %.2f s (objective %.4f, %d evaluations)\n",
              nm, n, ncol(x), speed[[length(speed) - 2L]]$seconds, fit$convergence$objective,
              as.integer(fit$convergence$iterations), ref$seconds, ref$value,
              ref$evaluations))
}
speed <- do.call(rbind, speed)
# the machine's load while this ran (timings on a loaded machine compare only
# within the run)
speed$load_average <- as.numeric(strsplit(tryCatch(readLines("/proc/loadavg"),
                                                   error = function(e) "NA"), " ")[[1]][1])
print(speed, row.names = FALSE, digits = 4)

# Defaults: held-out RMSE of the choices ---------------------------------------
# Per split: 2/3 of the rows for training, the rest for testing.  Fits:
# Euclidean k-NN (no metric), MLKR from the automatic (scaled) start and
# from the unscaled identity (the start of metric-learn), and for the
# automatic fit the k-NN regressions with several k and weights (k = n:
# every training point, MLKR's own kernel regression; the default of mlkr()
# is k = 10, "distance").
study <- list()
for (nm in names(data)) {
  x <- data[[nm]]$x
  y <- data[[nm]]$y
  for (s in seq_len(splits)) {
    set.seed(100 * s + match(nm, names(data)))
    tr <- sample(nrow(x), round(2 * nrow(x) / 3))
    prep_c <- colMeans(x[tr, ])
    prep_s <- apply(x[tr, ], 2, stats::sd)
    xs_tr <- scale(x[tr, ], prep_c, prep_s)
    xs_te <- scale(x[-tr, ], prep_c, prep_s)
    add <- function(method, pred, seconds = NA_real_, objective = NA_real_) {
      study[[length(study) + 1L]] <<- data.frame(
        dataset = nm, split = s, method = method, rmse = rmse(pred, y[-tr]),
        seconds = seconds, objective = objective)
    }
    for (k in c(5L, 10L, 20L)) {
      add(sprintf("Euclidean k-NN, k = %d, uniform", k), knn_mean(xs_tr, y[tr], xs_te, k))
    }
    t0 <- proc.time()[["elapsed"]]
    fit <- mlkr(x[tr, ], y[tr])
    sec <- proc.time()[["elapsed"]] - t0
    for (w in c("distance", "uniform", "kernel")) {
      for (k in c(5L, 10L, 20L)) {
        add(sprintf("MLKR auto start, k = %d, %s", k, w),
            predict(fit, x[-tr, ], k = k, weights = w), sec, fit$convergence$objective)
      }
    }
    add("MLKR auto start, k = n, kernel (MLKR's own predictor)",
        predict(fit, x[-tr, ], k = length(tr), weights = "kernel"), sec,
        fit$convergence$objective)
    t0 <- proc.time()[["elapsed"]]
    fit_i <- suppressWarnings(mlkr(x[tr, ], y[tr], init = "identity"))
    sec_i <- proc.time()[["elapsed"]] - t0
    add("MLKR identity start, k = 5, kernel", predict(fit_i, x[-tr, ], k = 5, weights = "kernel"),
        sec_i, fit_i$convergence$objective)
    add("MLKR identity start, k = n, kernel",
        predict(fit_i, x[-tr, ], k = length(tr), weights = "kernel"), sec_i,
        fit_i$convergence$objective)
  }
}
study <- do.call(rbind, study)
agg <- stats::aggregate(cbind(rmse, seconds, objective) ~ dataset + method, data = study,
                        FUN = mean, na.action = stats::na.pass)
agg <- agg[order(agg$dataset, agg$rmse), ]
cat(sprintf("\nHeld-out RMSE, mean over %d splits (2/3 train):\n", splits))
print(agg, row.names = FALSE, digits = 4)

dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
utils::write.csv(speed, file.path(out_dir, "mlkr.csv"), row.names = FALSE)
utils::write.csv(agg, file.path(out_dir, "mlkr_defaults.csv"), row.names = FALSE)
cat("\nwritten:", file.path(out_dir, "mlkr.csv"), file.path(out_dir, "mlkr_defaults.csv"), "\n")
