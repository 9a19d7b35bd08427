# With k unset, which k should the classification default consider?  On the
# acceptance run of 0.6.0 (bench/results/default_accept_new.csv) the
# default chose k = 9, the largest of its grid 1, 3, 5, 7, 9, on 31 of 93
# splits, more often than any other k: a sign that the grid stops too
# early.  On the development splits (the paper's nine sets and
# auto-external-data.R's seventeen, two splits each, as default-study.R)
# the candidates are scored once by score_candidates() at the defaults with
# the widest grid below (every learner, every k: the fold fits do not
# depend on the k that votes), and each grid then selects from those
# scores (restrict(): each candidate at its best k within the grid; the
# rule and margin of the default); the pipeline it picks is fitted on the
# training rows by kmaha() and scored on the test rows.
# With `accept` as third argument the same replay runs on the acceptance
# sets and splits of bench/default-accept.R (three splits each), whose
# grid k1_9 is the default of bench/results/default_accept_new.csv; with
# `fresh`, on the fresh sets of bench/fresh-data.R (three splits each),
# which no choice was made on.
#   Rscript bench/studies/k-grid.R [out.csv] [sets] [dev|accept|fresh]
suppressMessages(library(kmaha))
source("bench/studies/auto-external-data.R")
args <- commandArgs(TRUE)
collection <- if (length(args) >= 3) args[3] else "dev"
out <- if (length(args) >= 1 && nzchar(args[1])) args[1] else
  sprintf("bench/studies/results/k_grid_%s.csv", collection)
paper_sets <- paper_datasets()$name
dev_sets <- c(paper_sets, SETS)
if (collection %in% c("accept", "fresh")) {
  source("bench/fresh-data.R")
  fresh <- collection == "fresh"
  dev_sets <- if (fresh) FRESH_SETS else ACCEPT_SETS
  load_dev_set <- if (fresh) fresh_load else accept_load
  n_splits <- 3L
  split_of <- function(d, s, r) {
    sp <- if (fresh) fresh_split(d, s, r) else
      holdout_split_data(d, seed = 7000 + 10 * match(s, ACCEPT_SETS) + r)
    sp$xs <- scale(sp$xtr)
    sp$xt <- scale(sp$xte, attr(sp$xs, "scaled:center"), attr(sp$xs, "scaled:scale"))
    sp
  }
} else {
  n_splits <- 2L
  split_of <- function(d, s, r) split_standardized(d, 100 * match(s, dev_sets) + r)
}
sets <- if (length(args) >= 2 && nzchar(args[2])) strsplit(args[2], ",")[[1]] else dev_sets
options(kmaha.num_threads = 1)
orig_grid <- get("k_grid", envir = asNamespace("kmaha"))
set_grid <- function(value) utils::assignInNamespace("k_grid", value, "kmaha")

grids <- list(
  k1_9 = c(1L, 3L, 5L, 7L, 9L),
  k1_15 = c(1L, 3L, 5L, 7L, 9L, 11L, 13L, 15L),
  k1_21 = c(1L, 3L, 5L, 7L, 9L, 11L, 13L, 15L, 17L, 19L, 21L),
  k1_31 = c(1L, 3L, 5L, 7L, 9L, 11L, 13L, 15L, 17L, 19L, 21L, 25L, 31L),
  # the odd k up to the square root of the training rows (at least 9)
  sqrt_n = function(n) seq(1L, max(9L, as.integer(floor(sqrt(n)))), by = 2L))
grid_ks <- function(g, n) if (is.function(g)) g(n) else g
widest <- sort(unique(unlist(grids[!vapply(grids, is.function, NA)])))

# The scores as a grid reads them: every row at its best k among `ks`.
restrict <- function(sc, ks) {
  kk <- match(ks[ks %in% sc$k], sc$k)
  acc_k <- sc$accuracy_k[, , kk, drop = FALSE]
  cor_k <- sc$correct_k[, , kk, drop = FALSE]
  at <- kmaha:::scores_at_best_k(acc_k, cor_k)
  sc$curve$k <- sc$k[kk][at$k_index]
  sc$curve$mean <- at$mean
  sc$curve$sd <- at$sd
  sc$curve$n_ok <- at$n_ok
  sc$accuracy <- at$accuracy
  sc$correct <- at$correct
  sc$accuracy_k <- acc_k
  sc$correct_k <- cor_k
  sc$k <- sc$k[kk]
  sc
}

acc <- function(pred, y) mean(as.character(pred) == as.character(y))
rows <- list()
for (s in sets) {
  d <- tryCatch(load_dev_set(s), error = function(e) NULL)
  if (is.null(d)) next
  for (r in seq_len(n_splits)) {
    sp <- split_of(d, s, r)
    set_grid(sort(unique(c(widest, grid_ks(grids$sqrt_n, nrow(sp$xtr))))))
    sc <- suppressWarnings(score_candidates(sp$xtr, sp$ytr, seed = r))
    set_grid(orig_grid)
    base <- acc(knn_classify(sp$xs, sp$ytr, sp$xt)$class, sp$yte)
    fits <- list()
    for (g in names(grids)) {
      scg <- restrict(sc, grid_ks(grids[[g]], nrow(sp$xtr)))
      fit <- suppressWarnings(kmaha(sp$xtr, sp$ytr, kernel = scg, seed = r))
      ch <- fit$kernel_choice
      rows[[length(rows) + 1L]] <- data.frame(
        set = s, split = r, n_train = nrow(sp$xtr), p = ncol(sp$xtr),
        classes = nlevels(sp$ytr), min_class = min(table(sp$ytr)), grid = g,
        acc = acc(predict(fit, sp$xte), sp$yte), cv = ch$cv$curve$mean[ch$index],
        chosen = ch$cv$curve$label[ch$index], learner = ch$learner, k = ch$k,
        euclid1 = base, stringsAsFactors = FALSE)
    }
    cat(sprintf("%s split %d: %s\n", s, r, paste(sprintf("%s %.3f (k %d)", names(grids),
        vapply(rows[length(rows) - rev(seq_along(grids)) + 1L], `[[`, 0, "acc"),
        vapply(rows[length(rows) - rev(seq_along(grids)) + 1L], `[[`, 0L, "k")), collapse = ", ")))
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, out, row.names = FALSE)
agg <- aggregate(acc ~ set + grid, res, mean)
w <- reshape(agg, idvar = "set", timevar = "grid", direction = "wide")
names(w) <- sub("^acc\\.", "", names(w))
cat("\nmean test accuracy over the sets (each set's mean over its splits):\n")
print(round(colMeans(w[names(grids)]), 4))
cat("\nper set, against the current grid k1_9:\n")
for (g in names(grids)[-1]) {
  dlt <- w[[g]] - w$k1_9
  cat(sprintf("%s: better by > 0.005 on %d sets, worse by > 0.005 on %d, worst %+.3f (%s), best %+.3f (%s)\n",
              g, sum(dlt > 0.005), sum(dlt < -0.005), min(dlt), w$set[which.min(dlt)],
              max(dlt), w$set[which.max(dlt)]))
}
cat("\nk chosen:\n")
print(table(res$grid, res$k))
