# Replays variants of kernel = "auto"'s selection rule on recorded
# cross-validation, without fitting anything: for every recorded unit the
# rule picks a candidate from the held-out correctness of every candidate on
# every fold, and the candidate's test accuracy (fitted on the whole
# training split when the records were made) is looked up.
#
# Two record sets:
#   * the kernel-choice investigation (data-raw/investigate-cv.R; its cache
#     directory in KMAHA_CVINV_CACHE, default data-raw/cache/cv_investigation):
#     paper data, NCA splits 1-3, DNE splits 1-5, LMNN split 1 of five sets,
#     and NCA on five external sets x 3 splits (the shipped 5-fold folds,
#     scheme "cv5");
#   * the external evaluation of the default (bench/studies/auto-external.R; its
#     cache directory as the first argument): 14 sets, 99 splits, NCA.
#
# The rules (see bench/studies/auto.md, "Rule variants replayed"):
#   shipped     kmaha:::auto_select() of the installed package;
#   guard_z     the same with the baseline guard at z standard errors
#               (a learned candidate must beat the better baseline by more
#               than z paired SE; z = 1 is the shipped rule);
#   unw_first   single kernels must first beat the unweighted sum by more
#               than one SE (the sum is not selected among 21, so its CV
#               score is not optimistic), then the baseline guard;
#   two_stage   plain argmax among Euclidean, linear and the unweighted sum
#               (Euclidean still needs one SE over linear), then the winning
#               single kernel must beat that by more than one SE.
#
# Usage: Rscript bench/studies/auto-rules-replay.R [external cache dir]
suppressPackageStartupMessages(library(kmaha))
args <- commandArgs(trailingOnly = TRUE)
ext_dir <- if (length(args)) args[1] else "bench/studies/results/auto-external-cache"
inv_dir <- Sys.getenv("KMAHA_CVINV_CACHE", file.path("data-raw", "cache", "cv_investigation"))
options(width = 160)

# The raw winner before any guard: auto_select() with the baselines (and
# optionally other kinds) taken out of the running.
raw_winner <- function(curve, correct, v, out = c("euclidean", "linear")) {
  cu <- curve
  cu$n_ok[cu$kind %in% out] <- -1L
  kmaha:::auto_select(cu, correct, v)$best
}
eligible_of <- function(curve, v) curve$n_ok == v & !curve$dropped & !is.na(curve$mean)
beats <- function(correct, a, b, z = 1) {
  pg <- kmaha:::paired_gain(correct, a, b)
  pg$gain - z * pg$se > 1e-9
}
# Euclidean replaces the linear learner only with one SE to spare.
baseline_of <- function(curve, correct, ok) {
  eu <- which(curve$kind == "euclidean" & ok)
  lin <- which(curve$kind == "linear" & ok)
  if (length(eu) && length(lin) && curve$mean[eu] > curve$mean[lin] &&
      beats(correct, eu, lin)) eu else lin
}

# The raw winner, optionally first held to the unweighted sum (a single
# kernel must beat it by one SE), then the baseline guard at z SE.
rule_guard <- function(z, unweighted_first = FALSE) function(curve, correct, v) {
  ok <- eligible_of(curve, v)
  w <- raw_winner(curve, correct, v)
  u <- which(curve$kind == "unweighted" & ok)
  if (unweighted_first && curve$kind[w] == "kernel" && length(u) &&
      !beats(correct, w, u)) w <- u
  base <- which(curve$kind %in% c("euclidean", "linear") & ok)
  b <- base[which.max(curve$mean[base])]
  best <- if (beats(correct, w, b, z)) w else b
  if (curve$kind[best] == "euclidean") best <- baseline_of(curve, correct, ok)
  best
}
rule_two_stage <- function(curve, correct, v) {
  ok <- eligible_of(curve, v)
  best <- baseline_of(curve, correct, ok)
  u <- which(curve$kind == "unweighted" & ok)
  if (length(u) && kmaha:::paired_gain(correct, u, best)$gain > 0) best <- u
  w <- raw_winner(curve, correct, v, out = setdiff(unique(curve$kind), "kernel"))
  if (curve$kind[w] == "kernel" && beats(correct, w, best)) best <- w
  best
}
rules <- list(
  shipped = function(curve, correct, v) kmaha:::auto_select(curve, correct, v)$best,
  guard_0.5 = rule_guard(0.5), guard_1 = rule_guard(1), guard_1.5 = rule_guard(1.5),
  guard_2 = rule_guard(2), unw_first = rule_guard(1, unweighted_first = TRUE),
  two_stage = rule_two_stage)

# --- the investigation's records (scheme cv5, full KPCA rank, DNE's default
# dimension rule: the first variant recorded)
inv_curve <- function(names, mean, v) {
  kind <- ifelse(names %in% c("euclidean", "linear", "unweighted"), names,
                 ifelse(names == "aligned", "align", "kernel"))
  sigma <- suppressWarnings(as.numeric(sub("^rbf", "", names)))
  sigma[kind != "kernel"] <- NA_real_
  data.frame(kind = kind, sigma = sigma, mean = mean, n_ok = v, dropped = FALSE,
             label = names, stringsAsFactors = FALSE)
}
inv_files <- list.files(inv_dir, pattern = "\\.rds$", full.names = TRUE)
inv <- do.call(rbind, lapply(inv_files, function(f) {
  u <- readRDS(f)
  variant <- dimnames(u$held$cv5)[[2]][1]
  held <- u$held$cv5[, variant, ]                   # candidate x point
  folds <- u$folds$cv5
  v <- max(folds)
  fold_acc <- vapply(seq_len(v), function(k) rowMeans(held[, folds == k, drop = FALSE]),
                     numeric(nrow(held)))
  curve <- inv_curve(dimnames(held)[[1]], rowMeans(fold_acc), v)
  correct <- t(held)
  test <- u$test[, variant]
  acc <- vapply(rules, function(r) test[[r(curve, correct, v)]], 0)
  data.frame(records = if (u$meta$ext) "investigation, external (NCA)" else
               paste0("investigation, paper (", toupper(u$meta$learner), ")"),
             set = u$meta$dataset, euclidean = test[["euclidean"]],
             linear = test[["linear"]], t(acc), check.names = FALSE)
}))

# --- the external evaluation's records
ext_files <- list.files(ext_dir, pattern = "\\.rds$", full.names = TRUE)
ext <- do.call(rbind, lapply(ext_files, function(f) {
  o <- readRDS(f)
  cv <- o$cv
  v <- length(unique(cv$folds))
  acc <- vapply(rules, function(r) o$cand_acc[[r(cv$curve, cv$correct, v)]], 0)
  data.frame(records = "external evaluation (NCA)", set = o$res$set[1],
             euclidean = o$cand_acc[[which(cv$curve$kind == "euclidean")]],
             linear = o$cand_acc[[which(cv$curve$kind == "linear")]], t(acc),
             check.names = FALSE)
}))

all <- rbind(inv, ext)
rn <- names(rules)
cat("Mean test accuracy of the chosen candidate:\n")
means <- aggregate(all[, c("euclidean", "linear", rn)], all["records"], mean)
means$units <- as.vector(table(all$records)[means$records])
print(means, digits = 4, row.names = FALSE)
cat("\nExternal sets: worst per-set margin to max(Euclidean 1-NN, linear NCA), and sets below -0.01:\n")
for (recs in unique(all$records[grepl("external", all$records)])) {
  g <- all[all$records == recs, ]
  per_set <- aggregate(g[, c("euclidean", "linear", rn)], g["set"], mean)
  margin <- per_set[, rn] - pmax(per_set$euclidean, per_set$linear)
  cat(sprintf("  %s:\n", recs))
  print(data.frame(worst = round(vapply(margin, min, 0), 4),
                   below = vapply(margin, function(m) sum(m < -0.01), 0L),
                   worst_set = vapply(margin, function(m) per_set$set[which.min(m)], "")))
}
if (nzchar(Sys.getenv("KMAHA_REPLAY_DETAIL"))) {
  cat("\nPer set:\n")
  print(aggregate(all[, c("euclidean", "linear", rn)], all[c("records", "set")], mean), digits = 3)
}
