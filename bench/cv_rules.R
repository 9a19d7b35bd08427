# How the fast kernel-choice strategy was chosen: replays candidate
# shortcuts on recorded fold results.
#
# Step 1 (slow, resumable): for every dataset and split of the paper's
# protocol (bench/common.R), the KPCA trick with the learner is fitted on
# every fold of the 5-fold CV (the folds kmaha(kernel = "cv", seed = split)
# draws) for each of the 21 paper kernels, at one or more inner tolerances
# (NCA and LMNN), and the correctness of every held-out point is recorded,
# with the time of each fit; and the final model of every kernel is fitted
# on the whole training split and scored on the test rows.
# Step 2: every candidate rule -- which kernels to drop after which folds,
# at which inner tolerance -- is replayed on those records: its choice, the
# test accuracy of that choice against the exhaustive full-precision choice
# (mean over cells), how often the choice is the same, the fits it runs and
# their recorded time relative to exhaustive CV.
# A dropping rule keeps kernel j after a fold when the best kernel so far
# (most held-out points correct) beats it by at most z paired standard
# errors on the points scored so far: wins_best - wins_j <=
# z * sqrt(wins_best + wins_j + 1); "topq" keeps the best fraction q.
#
# Environment:
#   KMAHA_DATA_DIR        the CSV files
#   KMAHA_BENCH_LEARNER   nca (default), dne or lmnn
#   KMAHA_BENCH_TOLS      comma-separated inner tolerances, the first being
#                         the learner's default (nca: 1e-5,1e-4,1e-3;
#                         lmnn: the solver's default only; dne: none)
#   KMAHA_BENCH_SPLITS    splits per dataset (default 10)
#   KMAHA_BENCH_OUT       the records (default
#                         bench/results/cv_rules_<learner>.rds); cells
#                         already recorded are not fitted again
# Usage: Rscript bench/cv_rules.R   (one core; NCA takes about 15 minutes
# on an idle machine, DNE a few)
suppressPackageStartupMessages(library(kmaha))
options(width = 150)
options(kmaha.num_threads = 1L)   # one thread per fit, as in cv_kernel()
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(bench_dir, "common.R"))

learner <- Sys.getenv("KMAHA_BENCH_LEARNER", "nca")
tols <- Sys.getenv("KMAHA_BENCH_TOLS")
tols <- if (nzchar(tols)) as.numeric(strsplit(tols, ",")[[1]]) else
  switch(learner, nca = c(1e-5, 1e-4, 1e-3), NA_real_)
n_splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "10"))
out_file <- Sys.getenv("KMAHA_BENCH_OUT",
                       file.path("bench", "results", sprintf("cv_rules_%s.rds", learner)))
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
info <- paper_datasets()
ks <- paper_kernels()

# The map of one fold fit on coordinates z, as cv_kernel() fits it; tol NA:
# the learner's default.
fit_map <- function(z, y, tol) {
  spec <- kmaha:::fold_learner(kmaha:::resolve_learner(learner),
                               if (is.na(tol)) list() else list(tol = tol))
  suppressWarnings(kmaha:::fold_map(spec, z, y))
}

rec <- if (file.exists(out_file)) readRDS(out_file) else list()
for (ds in info$name) for (s in seq_len(n_splits)) {
  key <- paste(ds, s)
  if (!is.null(rec[[key]])) next
  sp <- paper_split(ds, s, info)
  if (is.null(sp)) break
  xs <- kmaha:::apply_scaling(sp$x, kmaha:::fit_scaling(sp$x, TRUE))
  y <- sp$y
  set.seed(s)
  fid <- kmaha:::make_folds(y, 5)    # the folds of kmaha(kernel = "cv", seed = s)
  t0 <- proc.time()[["elapsed"]]
  corr <- array(NA, c(length(ks), length(tols), length(y)))
  secs <- array(NA_real_, c(length(ks), length(tols), 5))
  for (j in seq_along(ks)) for (f in 1:5) {
    tr <- fid != f
    kp <- suppressWarnings(kpca(xs[tr, ], ks[[j]]))
    zte <- predict(kp, xs[!tr, ])
    for (ti in seq_along(tols)) {
      t1 <- proc.time()[["elapsed"]]
      L <- tryCatch(fit_map(kp$coords, droplevels(y[tr]), tols[ti]), error = function(e) NULL)
      # a failed fit scores every held-out point wrong
      corr[j, ti, !tr] <- if (is.null(L)) FALSE else
        kmaha:::knn_vote(kmaha:::apply_map(kp$coords, L), y[tr],
                         kmaha:::apply_map(zte, L), 1)$class == y[!tr]
      secs[j, ti, f] <- proc.time()[["elapsed"]] - t1
    }
  }
  test_acc <- vapply(seq_along(ks), function(j) {
    fit <- suppressWarnings(kmaha(sp$x, y, learner = learner, kernel = ks[[j]]))
    mean(as.character(predict(fit, sp$xte)) == as.character(sp$yte))
  }, 0)
  rec[[key]] <- list(ds = ds, split = s, folds = fid, corr = corr, secs = secs,
                     tols = tols, test_acc = test_acc)
  saveRDS(rec, out_file)
  cat(sprintf("%-14s split %2d recorded (%.1f s)\n", ds, s, proc.time()[["elapsed"]] - t0))
}

# Step 2: replay.
fold_acc <- function(cell, ti) {
  vapply(1:5, function(f) rowMeans(matrix(cell$corr[, ti, cell$folds == f],
                                          nrow = dim(cell$corr)[1])), numeric(dim(cell$corr)[1]))
}
paired_keep <- function(z) function(cell, ti, alive, f) {
  C <- matrix(cell$corr[, ti, cell$folds <= f], nrow = dim(cell$corr)[1])
  score <- ifelse(alive, rowSums(C), -Inf)
  b <- which.max(score)
  vapply(seq_along(alive), function(j) {
    wb <- sum(C[b, ] & !C[j, ])
    wj <- sum(C[j, ] & !C[b, ])
    alive[j] && wb - wj <= z * sqrt(wb + wj + 1)
  }, NA)
}
top_keep <- function(q) function(cell, ti, alive, f) {
  m <- ifelse(alive, rowMeans(fold_acc(cell, ti)[, 1:f, drop = FALSE]), -Inf)
  alive & m >= sort(m, decreasing = TRUE)[max(1L, ceiling(q * sum(alive)))]
}
replay <- function(cell, ti, keep, after) {
  acc <- fold_acc(cell, ti)
  alive <- rep(TRUE, nrow(acc))
  ran <- matrix(FALSE, nrow(acc), 5)
  for (f in 1:5) {
    ran[alive, f] <- TRUE
    if (f %in% after) alive <- keep(cell, ti, alive, f)
  }
  list(best = which.max(ifelse(alive, rowMeans(acc), -Inf)), fits = sum(ran),
       secs = sum(cell$secs[, ti, ][ran]))
}
rules <- list(
  "none (exhaustive)" = list(keep = NULL, after = integer()),
  "z = 1 after fold 1 (the fast strategy)" = list(keep = paired_keep(1), after = 1),
  "z = 1.5 after fold 1" = list(keep = paired_keep(1.5), after = 1),
  "z = 2 after fold 1" = list(keep = paired_keep(2), after = 1),
  "z = 1 after folds 1 and 3" = list(keep = paired_keep(1), after = c(1, 3)),
  "z = 1 after folds 1-4" = list(keep = paired_keep(1), after = 1:4),
  "z = 1.5 after folds 1-4" = list(keep = paired_keep(1.5), after = 1:4),
  "best third after fold 1" = list(keep = top_keep(1 / 3), after = 1),
  "best half after folds 1-4" = list(keep = top_keep(1 / 2), after = 1:4))
cells <- Filter(function(cell) identical(cell$tols, tols), rec)
ref <- lapply(cells, replay, ti = 1, keep = NULL, after = integer())
ref_acc <- mapply(function(cell, r) cell$test_acc[r$best], cells, ref)
ref_secs <- sum(vapply(ref, `[[`, 0, "secs"))
out <- list()
for (ti in seq_along(tols)) for (nm in names(rules)) {
  r <- lapply(cells, replay, ti = ti, keep = rules[[nm]]$keep, after = rules[[nm]]$after)
  acc <- mapply(function(cell, x) cell$test_acc[x$best], cells, r)
  out[[length(out) + 1L]] <- data.frame(
    inner_tol = if (is.na(tols[ti])) "default" else format(tols[ti]), rule = nm,
    test_acc = mean(acc), diff = mean(acc) - mean(ref_acc),
    worst_cell = min(acc - ref_acc),
    same_choice = mean(mapply(function(a, b) a$best == b$best, r, ref)),
    fits = mean(vapply(r, `[[`, 0, "fits")),
    time = sum(vapply(r, `[[`, 0, "secs")) / ref_secs)
}
cat(sprintf("\n%s, %d cells: test accuracy of the chosen model against exhaustive CV at the default tolerance;\nfits per CV and fit time relative to exhaustive CV\n",
            toupper(learner), length(cells)))
print(do.call(rbind, out), row.names = FALSE, digits = 3)
