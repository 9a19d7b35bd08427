# How many standard errors of the paired squared-error differences must a
# kernelized regression pipeline beat the better baseline by (the margin of
# kmaha()'s regression rule, R/learner-mlkr.R)?  On the development sets of
# the regression (../mlkr-data.R's four, plus Friedman 3 and mlbench's
# "peak", 400 rows each), 3 splits each (75% / 25%): the candidates are
# scored once per split (score_candidates()), then each margin's choice is
# fitted from those scores (kmaha(kernel = <scores>)) and its test RMSE
# recorded, beside Euclidean k-NN's (the Euclidean candidate).  Margin Inf
# keeps the better baseline always.
#
#   Rscript bench/studies/regression-margin.R
#
# Writes bench/studies/results/regression_margin.csv.

suppressPackageStartupMessages(library(kmaha))
source("bench/mlkr-data.R")

margins <- c(0.5, 1, 2, Inf)
dev <- dev_datasets()

ns <- asNamespace("kmaha")
old <- get("auto_margin", ns)
on.exit(assignInNamespace("auto_margin", old, "kmaha"), add = TRUE)
rows <- list()
for (nm in names(dev)) {
  s <- dev[[nm]]
  for (sp in 1:3) {
    tr <- dev_split(s, sp)
    xtr <- s$x[tr, , drop = FALSE]
    ytr <- s$y[tr]
    xte <- s$x[-tr, , drop = FALSE]
    yte <- s$y[-tr]
    sc <- score_candidates(xtr, ytr, seed = sp)
    for (m in margins) {
      assignInNamespace("auto_margin", m, "kmaha")
      fit <- suppressWarnings(kmaha(xtr, ytr, kernel = sc))
      cv <- fit$kernel_choice$cv
      rows[[length(rows) + 1L]] <- data.frame(
        set = nm, split = sp, margin = m, chosen = cv$curve$label[cv$best],
        cv_rmse = cv$curve$mean[cv$best],
        test_rmse = sqrt(mean((predict(fit, xte) - yte)^2)), stringsAsFactors = FALSE)
    }
    assignInNamespace("auto_margin", Inf, "kmaha")
    eu <- which(sc$curve$kind == "euclidean")
    cat(sprintf("%s %d: %s\n", nm, sp, paste(sprintf("%s %.4g (%s)", margins,
      vapply(rows[length(rows) - 3:0], `[[`, 0, "test_rmse"),
      vapply(rows[length(rows) - 3:0], `[[`, "", "chosen")), collapse = "; ")))
  }
}
res <- do.call(rbind, rows)
dir.create("bench/studies/results", showWarnings = FALSE)
utils::write.csv(res, "bench/studies/results/regression_margin.csv", row.names = FALSE)
agg <- aggregate(test_rmse ~ set + margin, res, mean)
print(reshape(agg, idvar = "set", timevar = "margin", direction = "wide"))
# relative to margin 0.5, per set, then the mean over sets
w <- reshape(agg, idvar = "set", timevar = "margin", direction = "wide")
print(colMeans(w[, -1] / w[, 2]))
