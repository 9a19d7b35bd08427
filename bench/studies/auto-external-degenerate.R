# The external evaluation replayed with the degenerate-kernel rule: which
# base kernels (and the unweighted sum) are numerically degenerate on each
# fold's training rows is computed from the data (kernel_degeneracy(), no
# fit), the flags go into the recorded CV curve, and the installed
# kmaha:::auto_select() picks again; the chosen candidate's recorded test
# accuracy is looked up.  (The aligned kernel's weights are not recorded,
# so it is never flagged here.)
# Usage: Rscript bench/studies/auto-external-degenerate.R [cache dir]
suppressPackageStartupMessages(library(kmaha))
source("bench/studies/auto-external-data.R")
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "bench/studies/results/auto-external-cache"
fs <- list.files(dir, pattern = "\\.rds$", full.names = TRUE)
kernels <- paper_kernels()
sets <- list()
rows <- lapply(fs, function(f) {
  o <- readRDS(f)
  cv <- o$cv
  set <- o$res$set[1]
  if (is.null(sets[[set]])) sets[[set]] <<- load_set(set)
  d <- sets[[set]]
  # as bench/studies/auto-external.R: constant training columns dropped, then
  # standardized on the training split (kmaha() scales once, on all of it)
  xtr <- d$x[o$train, , drop = FALSE]
  xs <- scale(xtr[, apply(xtr, 2, function(v) length(unique(v)) > 1), drop = FALSE])
  cu <- cv$curve
  deg <- rep(FALSE, nrow(cu))
  for (k in sort(unique(cv$folds))) {
    xk <- xs[cv$folds != k, , drop = FALSE]
    for (j in which(cu$kind == "kernel")) {
      deg[j] <- deg[j] || !is.null(kmaha:::kernel_verdict(kernels[[j]], xk, ctx))
    }
    u <- which(cu$kind == "unweighted")
    deg[u] <- deg[u] || !is.null(kmaha:::kernel_verdict(kmaha:::kernel_sum(kernels), xk, ctx))
  }
  cu$degenerate <- deg
  v <- length(unique(cv$folds))
  before <- o$cand_acc[kmaha:::auto_select(cv$curve, cv$correct, v)$best]
  after <- o$cand_acc[kmaha:::auto_select(cu, cv$correct, v)$best]
  data.frame(set = set, split = o$res$split[1], degenerate = sum(deg), before = before,
             after = after, euclidean = o$cand_acc[cu$kind == "euclidean"],
             linear = o$cand_acc[cu$kind == "linear"])
})
res <- do.call(rbind, rows)
agg <- aggregate(cbind(degenerate, before, after, euclidean, linear) ~ set, res, mean)
agg$margin <- agg$after - pmax(agg$euclidean, agg$linear)
print(agg, digits = 4, row.names = FALSE)
cat(sprintf("%d splits (%d changed choice); mean before %.4f, after %.4f; sets below -0.01: %d\n",
            nrow(res), sum(res$before != res$after), mean(agg$before), mean(agg$after),
            sum(agg$margin < -0.01)))
