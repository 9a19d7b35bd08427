# Which k should the screen of kernel = "auto" vote with when the user
# gives k?  kmaha 0.6.0 screens with the user's k (screen_k() in R/score.R:
# the first k the folds vote).  Screening with k = 1 whatever the k (as the
# default does with k unset) would make the screen's shortlist, and so the
# fold fits, the same for every k, so that a loop over k (tune_grid() over
# `neighbors`) takes every fold fit of its first call (see Reuse in
# ?score_candidates).  This compares the two on the paper's nine data sets
# (development data; the paper's protocol splits), for k = 5 and 10:
#   - test accuracy of kmaha(x, y, k = k, seed = 1) under each rule;
#   - CPU of the three fits k = 1, 5, 10 on the same rows, in that order,
#     with reuse (a tuning loop's pattern), under each rule.
#
#   Rscript bench/studies/screen-k.R [out.csv] [splits]
#
# Needs the paper's data (KMAHA_DATA_DIR or kmaha_data()'s cache).
suppressPackageStartupMessages(library(kmaha))
source("bench/common.R")
args <- commandArgs(TRUE)
out <- if (length(args) >= 1) args[1] else "bench/studies/results/screen_k.csv"
splits <- if (length(args) >= 2) as.integer(args[2]) else 3L
options(kmaha.num_threads = 1)
ns <- asNamespace("kmaha")
rules <- list(user_k = get("screen_k", ns), k1 = function(ks) 1L)
set_rule <- function(f) {
  unlockBinding("screen_k", ns)
  assign("screen_k", f, envir = ns)
  lockBinding("screen_k", ns)
}
cpu <- function() { t <- proc.time(); t[["user.self"]] + t[["sys.self"]] }
acc <- function(fit, d) mean(predict(fit, d$xte) == d$yte)

rows <- list()
for (ds in paper_datasets()$name) for (s in seq_len(splits)) {
  d <- paper_split(ds, s)
  if (is.null(d)) next
  for (rule in names(rules)) {
    set_rule(rules[[rule]])
    # accuracy at k = 5 and 10, each fit from scratch
    options(kmaha.reuse_fits = FALSE)
    a <- vapply(c(5L, 10L), function(k) acc(kmaha(d$x, d$y, k = k, seed = 1), d), 0)
    # the loop k = 1, 5, 10 with reuse
    options(kmaha.reuse_fits = TRUE)
    kmaha:::score_memo_clear()
    t0 <- cpu()
    for (k in c(1L, 5L, 10L)) kmaha(d$x, d$y, k = k, seed = 1)
    loop <- cpu() - t0
    rows[[length(rows) + 1L]] <- data.frame(dataset = ds, split = s, rule = rule,
                                            acc_k5 = a[1], acc_k10 = a[2], loop_cpu_s = loop)
    print(rows[[length(rows)]], row.names = FALSE)
  }
}
set_rule(rules$user_k)
res <- do.call(rbind, rows)
res$kmaha_version <- as.character(packageVersion("kmaha"))
utils::write.csv(res, out, row.names = FALSE)
agg <- aggregate(cbind(acc_k5, acc_k10, loop_cpu_s) ~ rule + dataset, res, mean)
print(agg, digits = 3, row.names = FALSE)
w <- reshape(res[, c("dataset", "split", "rule", "acc_k5", "acc_k10", "loop_cpu_s")],
             idvar = c("dataset", "split"), timevar = "rule", direction = "wide")
cat(sprintf("mean accuracy k = 5: user k %.4f, k = 1 %.4f; k = 10: user k %.4f, k = 1 %.4f\n",
            mean(w$acc_k5.user_k), mean(w$acc_k5.k1), mean(w$acc_k10.user_k), mean(w$acc_k10.k1)))
cat(sprintf("paired difference (k1 - user k): k = 5 %.4f (se %.4f), k = 10 %.4f (se %.4f)\n",
            mean(w$acc_k5.k1 - w$acc_k5.user_k), sd(w$acc_k5.k1 - w$acc_k5.user_k) / sqrt(nrow(w)),
            mean(w$acc_k10.k1 - w$acc_k10.user_k), sd(w$acc_k10.k1 - w$acc_k10.user_k) / sqrt(nrow(w))))
cat(sprintf("loop k = 1, 5, 10 with reuse: CPU k1 / user k %.3f (sum over splits)\n",
            sum(w$loop_cpu_s.k1) / sum(w$loop_cpu_s.user_k)))
