# Does the regression default need its screen?  kmaha() with a numeric `y`
# and cv_strategy = "fast" (the kernel-ridge screen passes one base kernel
# to MLKR) against "exhaustive" (MLKR on all 21 base kernels), on the
# development sets of regression-margin.R, 3 splits each (75% / 25%): test
# RMSE of the fitted default and CPU seconds of the fit.
#
#   Rscript bench/studies/regression-screen.R
#
# Writes bench/studies/results/regression_screen.csv.

suppressPackageStartupMessages(library(kmaha))
source("bench/mlkr-data.R")
dev <- dev_datasets()
rows <- list()
for (nm in names(dev)) {
  s <- dev[[nm]]
  for (sp in 1:3) {
    tr <- dev_split(s, sp)
    for (st in c("fast", "exhaustive")) {
      t0 <- proc.time()
      fit <- suppressWarnings(kmaha(s$x[tr, , drop = FALSE], s$y[tr], seed = sp, cv_strategy = st))
      t <- proc.time() - t0
      cv <- fit$kernel_choice$cv
      rows[[length(rows) + 1L]] <- data.frame(
        set = nm, split = sp, strategy = st, chosen = cv$curve$label[cv$best],
        test_rmse = sqrt(mean((predict(fit, s$x[-tr, , drop = FALSE]) - s$y[-tr])^2)),
        cpu = t[["user.self"]] + t[["sys.self"]], stringsAsFactors = FALSE)
      r <- rows[[length(rows)]]
      cat(sprintf("%s %d %s: %.4g (%s) %.1fs\n", nm, sp, st, r$test_rmse, r$chosen, r$cpu))
    }
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, "bench/studies/results/regression_screen.csv", row.names = FALSE)
agg <- aggregate(cbind(test_rmse, cpu) ~ set + strategy, res, mean)
print(agg)
w <- reshape(agg[c("set", "strategy", "test_rmse")], idvar = "set", timevar = "strategy",
             direction = "wide")
cat(sprintf("mean test RMSE exhaustive / fast: %.3f; CPU exhaustive / fast: %.2f\n",
            mean(w$test_rmse.exhaustive / w$test_rmse.fast),
            sum(res$cpu[res$strategy == "exhaustive"]) / sum(res$cpu[res$strategy == "fast"])))
