# Which k should the regression default consider when `k` is unset?  kmaha
# 0.6.0 first used the classification grid, 1, 3, 5, 7, 9
# (k_grid_regression in R/score.R); averaging more neighbours smooths a
# k-NN regression, so the grid with 12, 15 and 20 added is compared, the
# default's test RMSE under each:
#   1. on the development sets of the regression (bench/mlkr-data.R's four,
#      plus Friedman 3 and mlbench's "peak", 400 rows each; 3 splits 75% /
#      25%, as bench/studies/regression-margin.R), where the grid is chosen;
#   2. then, as a check, on the 12 acceptance sets of
#      bench/regression-accept.R (same splits), with Euclidean k-NN (k by
#      the same cross-validation) and kknn at its defaults beside.
#
#   Rscript bench/studies/regression-kgrid.R
#
# Needs mlbench, modeldata, MASS and kknn.  Writes
# bench/studies/results/regression_kgrid_dev.csv and
# regression_kgrid_accept.csv, and prints the summaries.
suppressPackageStartupMessages(library(kmaha))
options(kmaha.num_threads = 1, kmaha.reuse_fits = FALSE)
ns <- asNamespace("kmaha")
grids <- list(old = c(1L, 3L, 5L, 7L, 9L), new = c(1L, 3L, 5L, 7L, 9L, 12L, 15L, 20L))
set_grid <- function(g) {
  unlockBinding("k_grid_regression", ns)
  assign("k_grid_regression", g, envir = ns)
  lockBinding("k_grid_regression", ns)
}
shipped <- get("k_grid_regression", ns)
on.exit(set_grid(shipped), add = TRUE)
rmse <- function(p, y) sqrt(mean((p - y)^2))

# 1. Development sets.
source("bench/mlkr-data.R")
dev_res <- each_dev_split(function(nm, s, sp, tr) {
  do.call(rbind, lapply(names(grids), function(g) {
    set_grid(grids[[g]])
    fit <- suppressWarnings(kmaha(s$x[tr, , drop = FALSE], s$y[tr], seed = sp))
    data.frame(set = nm, split = sp, grid = g, k = fit$k,
               rmse = rmse(predict(fit, s$x[-tr, , drop = FALSE]), s$y[-tr]))
  }))
})
dir.create("bench/studies/results", showWarnings = FALSE)
utils::write.csv(dev_res, "bench/studies/results/regression_kgrid_dev.csv", row.names = FALSE)
w <- reshape(dev_res, idvar = c("set", "split"), timevar = "grid", direction = "wide")
print(aggregate(cbind(rmse.old, rmse.new) ~ set, w, mean), digits = 4)
a <- aggregate(cbind(rmse.old, rmse.new) ~ set, w, mean)
cat(sprintf("development: mean over the sets of RMSE new / old %.4f\n",
            mean(a$rmse.new / a$rmse.old)))

# 2. The acceptance sets (the definitions of bench/regression-accept.R,
# up to its loop).
ex <- parse("bench/regression-accept.R")
stop_at <- which(vapply(ex, function(e) identical(deparse(e)[1], "splits <- 3L"), NA))
defs <- new.env()
for (e in ex[seq_len(stop_at - 1L)]) eval(e, defs)
rows <- list()
all_sets <- defs$sets()
for (nm in names(all_sets)) {
  for (sp in 1:3) {
    d <- defs$accept_split(all_sets[[nm]], sp)
    xtr <- d$xtr
    xte <- d$xte
    ytr <- d$ytr
    yte <- d$yte
    kk <- rmse(kknn::kknn(.y ~ ., data.frame(xtr, .y = ytr),
                          data.frame(xte, .y = yte))$fitted.values, yte)
    for (g in names(grids)) {
      set_grid(grids[[g]])
      fit <- suppressWarnings(kmaha(xtr, ytr, seed = sp))
      cv <- fit$kernel_choice$cv
      k_eu <- cv$curve$k[cv$curve$kind == "euclidean"]
      rows[[length(rows) + 1L]] <- data.frame(
        set = nm, split = sp, grid = g, k = fit$k, default = rmse(predict(fit, xte), yte),
        euclid = rmse(defs$knn_euclidean(xtr, ytr, xte, k_eu), yte), kknn = kk)
    }
  }
}
acc_res <- do.call(rbind, rows)
utils::write.csv(acc_res, "bench/studies/results/regression_kgrid_accept.csv", row.names = FALSE)
a <- aggregate(cbind(default, euclid, kknn) ~ set + grid, acc_res, mean)
w <- reshape(a, idvar = "set", timevar = "grid", direction = "wide")
w$new_over_old <- w$default.new / w$default.old
print(w[, c("set", "default.old", "default.new", "new_over_old")], digits = 4, row.names = FALSE)
cat(sprintf("acceptance: mean over the sets of RMSE new / old %.4f (range %.4f-%.4f)\n",
            mean(w$new_over_old), min(w$new_over_old), max(w$new_over_old)))
for (g in names(grids)) {
  cat(sprintf("%s grid: default <= Euclidean k-NN on %d of %d sets, <= kknn on %d\n", g,
              sum(w[[paste0("default.", g)]] <= w[[paste0("euclid.", g)]] + 1e-12), nrow(w),
              sum(w[[paste0("default.", g)]] <= w[[paste0("kknn.", g)]])))
}
