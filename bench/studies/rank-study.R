# How many KPCA components do the kernel candidates of kernel = "auto" need?
# On the records of bench/studies/screen-study.R (same sets, splits and folds), for
# the base kernel the screen would pass to the learner and for the unweighted
# sum, the learner's 5-fold CV (held-out correctness of every training row)
# and the test accuracy of the fit on the whole training split, under rank
# policies: every component above tol = 1e-8 (today), a fixed cap, and the
# relative tolerances 1e-4, 1e-3, 1e-2 (components whose eigenvalue exceeds
# that share of the largest).  bench/studies/rank-analyse.R replays kernel =
# "auto"'s rule with each policy.  Usage, after bench/studies/screen-study.R:
#   Rscript bench/studies/rank-study.R [learners]
suppressMessages(library(kmaha))
source("bench/studies/auto-external-data.R")
args <- commandArgs(TRUE)
learners <- if (length(args) >= 1) strsplit(args[1], ",")[[1]] else c("nca", "dne")
files <- list.files("bench/studies/results/screen-study-cache", full.names = TRUE, pattern = "_[0-9]+\\.rds$")
out_dir <- "bench/studies/results/rank-study-cache"
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
options(kmaha.num_threads = 1)
paper_sets <- paper_datasets()$name
ks <- paper_kernels()
policies <- list(full = list(rank = NULL, tol = 1e-8), r16 = list(rank = 16L, tol = 1e-8),
                 r32 = list(rank = 32L, tol = 1e-8), r64 = list(rank = 64L, tol = 1e-8),
                 t4 = list(rank = NULL, tol = 1e-4), t3 = list(rank = NULL, tol = 1e-3),
                 t2 = list(rank = NULL, tol = 1e-2))
# second pass (KMAHA_RANK_PASS=2): NCA's output dimension capped (the map is
# dim x r on every component), for NCA only
if (identical(Sys.getenv("KMAHA_RANK_PASS"), "2")) {
  policies <- list(d16 = list(rank = NULL, tol = 1e-8, dim = 16L),
                   d32 = list(rank = NULL, tol = 1e-8, dim = 32L),
                   d64 = list(rank = NULL, tol = 1e-8, dim = 64L))
  out_dir <- "bench/studies/results/rank-study-cache2"
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
}
ctx <- kmaha:::kmaha_context(1L)
quiet <- function(expr) tryCatch(suppressWarnings(expr), error = function(e) NULL)
for (f in files) {
  rec <- readRDS(f)
  out_file <- file.path(out_dir, basename(f))
  if (file.exists(out_file)) next
  d <- load_dev_set(rec$set)
  sp <- split_standardized(d, rec$seed)
  xs <- sp$xs; xt <- sp$xt; ytr <- sp$ytr; yte <- sp$yte
  res <- list()
  t0 <- proc.time()[[3]]
  for (lr in learners) {
    g <- if (is.null(rec$gold[[lr]]$folds)) rec$gold$nca else rec$gold[[lr]]
    folds <- g$folds
    sc <- vapply(1:21, function(j) mean(rec$screens[[j]]$knn_q8, na.rm = TRUE), 0)
    sc[is.nan(sc)] <- -Inf
    top <- order(-sc, 1:21)[1]
    cands <- list(sigma = rbf_kernel(rec$sigma[top]), unweighted = kernel_sum(ks))
    spec0 <- kmaha:::learner_spec(lr, list())
    for (cn in names(cands)) {
      cand <- if (cn == "unweighted") kmaha:::cand_unweighted(ks) else kmaha:::cand_kernel(cands[[cn]])
      spec <- kmaha:::candidate_spec(spec0, cand)
      for (pn in names(policies)) {
        pol <- policies[[pn]]
        correct <- rep(NA, nrow(xs))
        secs <- 0
        for (fo in 1:5) {
          te <- folds == fo
          ytf <- droplevels(ytr[!te])
          t1 <- proc.time()[[3]]
          rk <- if (is.null(pol$rank)) NULL else min(pol$rank, sum(!te))
          fs <- kmaha:::feature_kpca(cand$kernel, rk, pol$tol)
          sp <- spec
          if (!is.null(pol$dim)) {
            fm <- quiet(kmaha:::fit_feature_map(fs, xs[!te, , drop = FALSE], ctx, warn = FALSE))
            sp <- kmaha:::candidate_spec(kmaha:::learner_spec(lr, list(dim = min(pol$dim, ncol(fm$coords)))), cand)
          }
          p <- quiet(kmaha:::fit_pipeline(xs[!te, , drop = FALSE], ytf, fs, sp, ctx,
                                          neighbors = "feature", warn = FALSE))
          if (!is.null(p)) {
            m <- list(feature_map = p$feature, L = p$map, coords = p$coords, y = ytf)
            cls <- kmaha:::pipeline_apply(m, xs[te, , drop = FALSE], "class", 1L, ctx)
            correct[te] <- as.character(cls) == as.character(ytr[te])
          }
          secs <- secs + proc.time()[[3]] - t1
        }
        t1 <- proc.time()[[3]]
        la <- list()
        if (!is.null(pol$dim)) {
          kp0 <- quiet(kpca(xs, cand$kernel, rank = pol$rank, tol = pol$tol))
          la <- list(dim = min(pol$dim, ncol(kp0$coords)))
        }
        fit <- quiet(kmaha(xs, ytr, learner = lr, kernel = cand$kernel, rank = pol$rank, tol = pol$tol,
                           scale = FALSE, learner_args = la))
        fsec <- proc.time()[[3]] - t1
        acc <- if (is.null(fit)) NA else mean(as.character(predict(fit, xt)) == as.character(yte))
        res[[length(res) + 1]] <- list(learner = lr, cand = cn, policy = pn, sigma = rec$sigma[top],
                                       correct = correct, test = acc, cv_seconds = secs,
                                       fit_seconds = fsec, r = if (is.null(fit)) NA else ncol(fit$L))
      }
    }
  }
  saveRDS(list(set = rec$set, split = rec$split, res = res), out_file)
  cat(sprintf("%s %d: %.0f s\n", rec$set, rec$split, proc.time()[[3]] - t0))
}
