# Replays selection rules on the records of bench/studies/screen-study.R (no fitting):
# the learner's exhaustive CV of kernel = "auto"'s candidates (gold) against
# rules that let a cheap screen shortlist the kernels first.  Prints, per
# learner, the mean test accuracy of the candidate each rule picks, and the
# worst set's margin to max(Euclidean 1-NN, linear learner).
#   Rscript bench/studies/screen-analyse.R
suppressMessages(library(kmaha))
files <- list.files("bench/studies/results/screen-study-cache", full.names = TRUE, pattern = "_[0-9]+\\.rds$")
recs <- lapply(files, readRDS)
cat(sprintf("%d records\n", length(recs)))
sel_auto <- getFromNamespace("auto_select", "kmaha")

# auto's rule on a subset of the candidates (indices into the 25), with the
# gold CV scores; returns the index picked (into the 25)
auto_on <- function(g, keep) {
  cu <- g$curve[keep, , drop = FALSE]
  cu$candidate <- seq_len(nrow(cu))
  sel <- sel_auto(cu, g$correct[, keep, drop = FALSE], 5L)
  keep[sel$best]
}
kernel_ids <- c(1:21, 24, 25)

screen_score <- function(rec, j, name) {
  s <- rec$screens[[j]]
  if (is.null(s) || is.null(s[[name]])) return(NA_real_)
  mean(s[[name]], na.rm = TRUE)
}
trans_score <- function(rec, j, name) {
  s <- rec$trans[[j]]
  if (is.null(s) || is.null(s[[name]])) return(NA_real_)
  mean(s[[name]], na.rm = TRUE)
}
# 1-2-1 smoothing of the 21 sigma scores (others unchanged)
smooth21 <- function(v) {
  s <- v
  for (i in 1:21) {
    j <- max(1, i - 1):min(21, i + 1)
    w <- c(1, 2, 1)[j - i + 2]
    ok <- !is.na(v[j])
    s[i] <- if (is.na(v[i])) NA else sum(w[ok] * v[j][ok]) / sum(w[ok])
  }
  s
}

rules <- list(
  gold = function(rec, g) auto_on(g, 1:25),
  gold_noalign = function(rec, g) auto_on(g, c(1:23, 25)),
  base_unw = function(rec, g) auto_on(g, c(22, 23, 25)),
  base_unw_align = function(rec, g) auto_on(g, c(22, 23, 24, 25))
)
for (nm in c("knn_q4", "knn_q8", "knn_q16", "knn_q32", "knn_q64", "knn_r99", "dne_q32")) {
  for (K in c(1, 2, 3)) {
    for (sm in c(FALSE, TRUE)) {
      local({
        nm <- nm; K <- K; sm <- sm
        rules[[sprintf("screen_%s_top%d%s", nm, K, if (sm) "_sm" else "")]] <<- function(rec, g) {
          sc <- vapply(kernel_ids, function(j) screen_score(rec, j, nm), 0)
          if (sm) { v <- rep(NA, 25); v[kernel_ids] <- sc; v <- smooth21(v); sc <- v[kernel_ids] }
          top <- kernel_ids[order(-sc)][seq_len(K)]
          auto_on(g, sort(c(22, 23, top)))
        }
        rules[[sprintf("screen_%s_top%d_unw%s", nm, K, if (sm) "_sm" else "")]] <<- function(rec, g) {
          sc <- vapply(1:21, function(j) screen_score(rec, j, nm), 0)
          if (sm) { v <- rep(NA, 25); v[1:21] <- sc; v <- smooth21(v); sc <- v[1:21] }
          top <- (1:21)[order(-sc)][seq_len(K)]
          auto_on(g, sort(unique(c(22, 23, top, 25))))
        }
      })
    }
  }
}
for (nm in c("knn_q16", "knn_q32")) for (K in 1:2) local({
  nm <- nm; K <- K
  rules[[sprintf("trans_%s_top%d_unw", nm, K)]] <<- function(rec, g) {
    sc <- vapply(1:21, function(j) trans_score(rec, j, nm), 0)
    top <- (1:21)[order(-sc)][seq_len(K)]
    auto_on(g, sort(unique(c(22, 23, top, 25))))
  }
})
# oracle among the 25, and the baselines
rules$oracle <- function(rec, g) NA

out <- list()
for (lr in c("nca", "dne")) {
  for (rn in names(rules)) {
    for (rec in recs) {
      g <- rec$gold[[lr]]
      if (is.null(g$curve)) next
      tr <- rec$truth
      col_full <- paste0(lr, "_full"); col_32 <- paste0(lr, "_r32"); col_99 <- paste0(lr, "_r99")
      if (rn == "oracle") {
        acc <- max(tr[, col_full], na.rm = TRUE); a32 <- max(tr[, col_32], na.rm = TRUE); a99 <- NA; pick <- NA
      } else {
        pick <- tryCatch(rules[[rn]](rec, g), error = function(e) NA)
        if (is.na(pick)) next
        acc <- tr[pick, col_full]; a32 <- tr[pick, col_32]; a99 <- tr[pick, col_99]
      }
      out[[length(out) + 1]] <- data.frame(learner = lr, rule = rn, set = rec$set, split = rec$split,
                                           acc = acc, acc32 = a32, acc99 = a99, pick = pick,
                                           base = max(tr[22, col_full], tr[23, col_full]))
    }
  }
}
res <- do.call(rbind, out)
summ <- do.call(rbind, lapply(split(res, list(res$learner, res$rule), drop = TRUE), function(d) {
  per_set <- aggregate(cbind(acc, acc32, base) ~ set, d, mean, na.action = na.pass)
  data.frame(learner = d$learner[1], rule = d$rule[1], n = nrow(d), mean = mean(d$acc),
             mean32 = mean(d$acc32), mean99 = mean(d$acc99, na.rm = TRUE),
             worst = min(per_set$acc - per_set$base),
             worst32 = min(per_set$acc32 - per_set$base),
             kernels = mean(d$pick %in% c(1:21, 24, 25)))
}))
summ <- summ[order(summ$learner, -summ$mean), ]
options(width = 200)
print(summ, row.names = FALSE, digits = 4)
saveRDS(res, "bench/studies/results/screen-study-cache/replay.rds")

# Kernel-target alignment as the screen: uncentred (the paper's, on the
# ideal kernel with -1/(p-1) off the classes) and centred (Cortes, Mohri and
# Rostamizadeh 2012), on the whole training split; recomputed from the data.
source("bench/studies/auto-external-data.R")
paper_sets <- paper_datasets()$name
all_sets <- c(paper_sets, SETS)
align_scores <- function(rec) {
  s <- rec$set
  sp <- split_standardized(load_dev_set(s), rec$seed)
  xs <- sp$xs
  ytr <- sp$ytr
  p <- nlevels(ytr)
  Y <- ifelse(outer(ytr, ytr, "=="), 1, -1 / (p - 1))
  n <- nrow(xs)
  H <- diag(n) - 1 / n
  Yc <- H %*% Y %*% H
  d2 <- as.matrix(dist(xs))^2
  t(vapply(rec$sigma, function(sg) {
    K <- exp(-d2 / (2 * ncol(xs) * sg^2))
    Kc <- H %*% K %*% H
    c(unc = sum(K * Y) / sqrt(sum(K * K) * sum(Y * Y)),
      cen = sum(Kc * Yc) / sqrt(sum(Kc * Kc) * sum(Yc * Yc)))
  }, c(unc = 0, cen = 0)))
}
al <- lapply(recs, align_scores)
out2 <- list()
for (lr in c("nca", "dne")) for (variant in c("unc", "cen")) for (K in 1:2) {
  for (i in seq_along(recs)) {
    rec <- recs[[i]]; g <- rec$gold[[lr]]
    if (is.null(g$curve)) next
    top <- order(-al[[i]][, variant])[seq_len(K)]
    pick <- auto_on(g, sort(unique(c(22, 23, top, 25))))
    tr <- rec$truth
    out2[[length(out2) + 1]] <- data.frame(learner = lr, rule = sprintf("align_%s_top%d_unw", variant, K),
      set = rec$set, split = rec$split, acc = tr[pick, paste0(lr, "_full")],
      base = max(tr[22, paste0(lr, "_full")], tr[23, paste0(lr, "_full")]))
  }
}
r2 <- do.call(rbind, out2)
print(aggregate(acc ~ learner + rule, r2, mean), digits = 4)

# Hybrid: centred alignment keeps the m best bandwidths, the screen (held-out
# 1-NN on the q leading KPCA components) ranks those.
out3 <- list()
for (lr in c("nca", "dne")) for (m in c(3, 5, 7)) for (nm in c("knn_q8", "knn_q4")) {
  for (i in seq_along(recs)) {
    rec <- recs[[i]]; g <- rec$gold[[lr]]
    if (is.null(g$curve)) next
    pre <- order(-al[[i]][, "cen"])[seq_len(m)]
    sc <- vapply(pre, function(j) screen_score(rec, j, nm), 0)
    top <- pre[order(-sc, pre)][1]
    pick <- auto_on(g, sort(unique(c(22, 23, top, 25))))
    tr <- rec$truth
    out3[[length(out3) + 1]] <- data.frame(learner = lr, rule = sprintf("hybrid_cen%d_%s_top1_unw", m, nm),
      set = rec$set, split = rec$split, acc = tr[pick, paste0(lr, "_full")])
  }
}
r3 <- do.call(rbind, out3)
print(aggregate(acc ~ learner + rule, r3, mean), digits = 4)

# Per set: the candidate rules against gold and the baselines.
res_all <- rbind(res[, c("learner", "rule", "set", "split", "acc", "base")],
                 r2[, c("learner", "rule", "set", "split", "acc", "base")])
keep_rules <- c("gold", "screen_knn_q8_top1_unw", "align_cen_top1_unw", "base_unw")
ps <- aggregate(cbind(acc, base) ~ learner + rule + set, res_all[res_all$rule %in% keep_rules, ], mean)
w <- reshape(ps[, c("learner", "rule", "set", "acc")], idvar = c("learner", "set"), timevar = "rule", direction = "wide")
w$base <- ps$base[match(paste(w$learner, w$set), paste(ps$learner, ps$set))]
print(w, digits = 3, row.names = FALSE)
for (r in keep_rules) {
  cat(r, ": worst vs base", tapply(w[[paste0("acc.", r)]] - w$base, w$learner, min), "\n")
}
