# MLKR's defaults: the held-out RMSE of its starts (the scaled identity of
# init = "auto" against the unscaled identity of metric-learn) and of the
# k-NN regressions in the learned metric (k = 5, 10, 20, n; weights
# "distance", "uniform", "kernel"), beside Euclidean k-NN, on the sets of
# bench/mlkr-data.R.  Behind mlkr()'s init = "auto", k = 10 and
# weights = "distance".
#
#   Rscript bench/studies/mlkr-defaults.R       # from the package's top directory
#
# Environment: KMAHA_LIB (a private library), KMAHA_BENCH_SPLITS (random
# splits per set, default 5), KMAHA_BENCH_OUT (results CSV, default
# bench/studies/results/mlkr_defaults.csv).

lib <- Sys.getenv("KMAHA_LIB", "")
suppressPackageStartupMessages(library(kmaha, lib.loc = if (nzchar(lib)) lib else NULL))
if (!requireNamespace("mlbench", quietly = TRUE)) stop("this study needs mlbench")
splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "5"))
out_csv <- Sys.getenv("KMAHA_BENCH_OUT",
                      file.path("bench", "studies", "results", "mlkr_defaults.csv"))
source(file.path("bench", "mlkr-data.R"))
cat("kmaha", as.character(utils::packageVersion("kmaha")), " load average:",
    tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")

rmse <- function(a, b) sqrt(mean((a - b)^2))

# Euclidean k-NN regression (the mean of the k nearest training responses).
knn_mean <- function(xtr, ytr, xte, k) {
  d2 <- outer(rowSums(xte^2), rowSums(xtr^2), "+") - 2 * tcrossprod(xte, xtr)
  apply(d2, 1, function(r) mean(ytr[order(r)[seq_len(k)]]))
}

data <- datasets()

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


dir.create(dirname(out_csv), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(agg, out_csv, row.names = FALSE)
cat("\nwritten:", out_csv, "\n")
