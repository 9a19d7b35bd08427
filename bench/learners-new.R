# Benchmark of the learners of issue 34 against CRAN implementations:
# 1-NN test accuracy and fit time of kmaha's lfda(), rca(), mmc() and itml()
# next to lfda::lfda() and dml::rca(), dml::GdmFull(), dml::GdmDiag() (the
# anchors), on the paper's data sets in the paper's protocol (bench/common.R
# paper_split(): 200 random training rows, 100 for Glass and Iris, the rest
# for testing) plus mlbench's Sonar, Vehicle and Vowel (200 training rows,
# at most half the set), several splits.
#
# Every method sees the same standardized training inputs (the training
# rows' mean and sd), the same labels, and for the pair learners the same
# pairs (kmaha's draw from the labels, 40 c^2 pairs, half similar); the
# 1-NN vote is the same function for all (kmaha::knn_classify() on the
# mapped rows).  Defaults: LFDA k = 7 and the weighted metric (ours),
# knn = 5 and the orthonormalized metric (lfda::lfda's defaults), both of
# full dimension (at full dimension lfda::lfda's orthonormalized map is a
# rotation, so its 1-NN is Euclidean 1-NN's); rows "lfda_weighted" run
# both with the same settings, ours (k = 7, weighted, full dimension); RCA with the classes as chunklets; MMC full and diagonal;
# ITML has no R anchor (metric-learn is Python), so the Euclidean metric is
# its reference.  Times are elapsed seconds of the fitting call alone, on
# one thread (run with the environment below).  An anchor's error is
# recorded in the column `error` (accuracy NA): dml::GdmFull() fails for
# any number of columns but 3 (its projection reshapes with a hard-coded
# matrix(x, 3, 3)); lfda::lfda() stops when a class has fewer than knn + 1
# rows; dml::GdmDiag() is cut by the time limit below.  dml::rca() takes the
# chunklets as a list of row indices and centres them with a recycling
# mistake (a matrix minus a vector of column means), so its map is not
# C^(-1/2) of the chunklet covariance; it is run as it is.
#
# Second part: LFDA at 2 000 training rows of Satellite (D = 36), median of
# 3 fits of each, ours vs lfda::lfda (both full dimension).
#
# Usage:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 KMAHA_NUM_THREADS=1 \
#           KMAHA_DATA_DIR=/work/shared/data KMAHA_LIB=/tmp/lib-learners \
#           R_LIBS=/usr/local/lib/R/kmaha-suggests Rscript bench/learners-new.R
# Output: bench/results/learners_new.csv (one row per data set, split and
#         method) and bench/results/learners_new_lfda_2000.csv.
# Env:    KMAHA_BENCH_SPLITS (default 5), KMAHA_BENCH_SETS (comma list),
#         KMAHA_BENCH_LEARNERS (comma list of the `learner` column's values,
#         e.g. "euclidean,rca,mmc_full": only those rows are fitted, and
#         written to bench/results/learners_new_<learners>.csv instead; the
#         LFDA part runs only when "lfda" is listed), KMAHA_BENCH_REPEAT
#         (default 1: time_s is the median of that many fits).

lib <- Sys.getenv("KMAHA_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages({
  library(kmaha)
  requireNamespace("lfda")
  requireNamespace("dml")
})
options(kmaha.num_threads = 1L)
source("bench/common.R")

n_splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "5"))
sets <- env_list("KMAHA_BENCH_SETS",
                 c("iris", "glass", "balance", "breast_cancer", "ionosphere", "pima",
                   "yeast", "satellite", "musk2", "Sonar", "Vehicle", "Vowel"))
learners <- env_list("KMAHA_BENCH_LEARNERS", NULL)



acc_1nn <- function(ztr, y, zte, yte) {
  mean(as.character(knn_classify(ztr, droplevels(y), zte, k = 1)$class) == as.character(yte))
}

# The fitting call's value (or its error) and elapsed time; anchors are cut
# at KMAHA_BENCH_LIMIT seconds (default 60; their R loops honour
# setTimeLimit()), recorded as an error.
limit_s <- as.numeric(Sys.getenv("KMAHA_BENCH_LIMIT", "60"))
# With KMAHA_BENCH_REPEAT = r > 1 the time is the median of r fits (each
# method alike; an error or a time limit ends the repeats), for fits of a few
# milliseconds, where one call measures mostly the timer's resolution and
# the machine's load.
n_repeat <- as.integer(Sys.getenv("KMAHA_BENCH_REPEAT", "1"))
timed <- function(expr) {
  e <- substitute(expr)
  env <- parent.frame()
  on.exit(setTimeLimit(elapsed = Inf))
  ts <- numeric()
  for (r in seq_len(max(1L, n_repeat))) {
    setTimeLimit(elapsed = limit_s, transient = TRUE)
    t <- system.time(v <- tryCatch(eval(e, env), error = function(e) e))[["elapsed"]]
    setTimeLimit(elapsed = Inf)
    ts <- c(ts, t)
    if (inherits(v, "error")) break
  }
  list(value = v, time = stats::median(ts))
}

# Xing et al.'s objective for a diagonal metric diag(a), which both
# diagonal MMCs minimise over a >= 0: h(a) = f(a) - log g(a), f the sum of
# the similar pairs' squared distances, g the sum of the dissimilar pairs'
# distances (Xing et al. 2003, the diagonal case; `mmc(diagonal = TRUE)`'s
# h).  Taken at the best scale of a (h(c a) is least at c = 1 / (2 f),
# where it is 1/2 + log(2 f) / 2 - log g), so that it does not depend on
# the scale a fit reports its weights in (kmaha rescales to f = 1; 1-NN
# does not see the scale either).  Recorded in the column `objective` for
# the diagonal rows (NA elsewhere): lower is a better solution of the
# problem both claim to solve.
xing_diag_objective <- function(a, x, pr) {
  d2 <- (x[pr$pairs[, 1], , drop = FALSE] - x[pr$pairs[, 2], , drop = FALSE])^2 %*% a
  f <- sum(d2[pr$similar == 1])
  g <- sum(sqrt(d2[pr$similar == -1]))
  0.5 + 0.5 * log(2 * f) - log(g)
}

rows <- list()
add <- function(...) rows[[length(rows) + 1L]] <<- data.frame(..., stringsAsFactors = FALSE)

for (ds in sets) {
  for (s in seq_len(n_splits)) {
    sp <- get_split(ds, s)
    if (is.null(sp)) next
    st <- standardize_split(sp)
    xs <- st$xs
    xte <- st$xte
    y <- sp$y
    yte <- sp$yte
    D <- ncol(xs)
    set.seed(s)
    pr <- kmaha:::draw_pairs(y, kmaha:::default_n_pairs(y))
    simi <- pr$pairs[pr$similar == 1, , drop = FALSE]
    dism <- pr$pairs[pr$similar == -1, , drop = FALSE]
    base <- list(dataset = ds, split = s, n_train = nrow(xs), D = D)
    # `weights_fun`: for the diagonal MMC rows, the fit's weights a (the
    # metric diag(a)), at which Xing's objective is recorded.
    record <- function(learner, impl, res, map_fun, weights_fun = NULL) {
      # (`res` is evaluated here: a learner not asked for is not fitted)
      if (!is.null(learners) && !(learner %in% learners)) return(invisible(NULL))
      v <- res$value
      acc <- if (inherits(v, "error")) NA_real_ else
        tryCatch(acc_1nn(map_fun(v, xs), y, map_fun(v, xte), yte), error = function(e) NA_real_)
      obj <- if (is.null(weights_fun) || inherits(v, "error")) NA_real_ else
        xing_diag_objective(weights_fun(v), xs, pr)
      do.call(add, c(base, list(learner = learner, impl = impl, accuracy = acc,
                                time_s = res$time,
                                error = if (inherits(v, "error")) conditionMessage(v) else "",
                                objective = obj)))
    }
    ours <- function(v, z) z %*% t(v$L)
    record("euclidean", "none", list(value = NULL, time = 0), function(v, z) z)
    record("lfda", "kmaha", timed(kmaha::lfda(xs, y, scale = FALSE)), ours)
    record("lfda", "lfda::lfda", timed(lfda::lfda(xs, y, r = D)), function(v, z) z %*% v$T)
    # the same settings on both sides: our defaults (k = 7, weighted)
    record("lfda_weighted", "lfda::lfda", timed(lfda::lfda(xs, y, r = D, metric = "weighted",
                                                           knn = 7)),
           function(v, z) z %*% v$T)
    record("lfda_weighted", "kmaha", timed(kmaha::lfda(xs, y, scale = FALSE)), ours)
    record("rca", "kmaha", timed(suppressWarnings(rca(xs, y, scale = FALSE))), ours)
    record("rca", "dml::rca", timed(dml::rca(xs, unname(split(seq_along(y), y)))),
           function(v, z) z %*% v$A)
    record("mmc_full", "kmaha", timed(mmc(xs, y, pairs = pr$pairs, similar = pr$similar,
                                           scale = FALSE)), ours)
    record("mmc_full", "dml::GdmFull", timed(dml::GdmFull(xs, simi, dism)),
           function(v, z) z %*% v$dmlA)
    record("mmc_diag", "kmaha", timed(mmc(xs, y, pairs = pr$pairs, similar = pr$similar,
                                           diagonal = TRUE, scale = FALSE)), ours,
           function(v) colSums(v$L^2))
    record("mmc_diag", "dml::GdmDiag", timed(dml::GdmDiag(xs, simi, dism)),
           function(v, z) z %*% v$dmlA, function(v) diag(v$dmlA)^2)
    record("itml", "kmaha", timed(suppressWarnings(itml(xs, y, pairs = pr$pairs,
                                                         similar = pr$similar, scale = FALSE))),
           ours)
    cat(sprintf("%s split %d done\n", ds, s))
  }
}
res <- do.call(rbind, rows)
dir.create("bench/results", showWarnings = FALSE)
out_csv <- if (is.null(learners)) "bench/results/learners_new.csv" else
  sprintf("bench/results/learners_new_%s.csv", paste(learners, collapse = "_"))
utils::write.csv(res, out_csv, row.names = FALSE)

# Summary: mean accuracy and median time per data set, learner, implementation.
agg <- stats::aggregate(cbind(accuracy, time_s) ~ dataset + learner + impl, res,
                        function(v) c(mean = mean(v)), na.action = na.pass)
print(agg[order(agg$dataset, agg$learner, agg$impl), ], row.names = FALSE)

# LFDA at 2 000 rows.
if (!is.null(learners) && !("lfda" %in% learners)) quit(save = "no")
sat <- kmaha_data("satellite")
set.seed(1)
tr <- sample(nrow(sat), 2000)
x2 <- scale(as.matrix(sat[tr, setdiff(names(sat), "class")]))
y2 <- sat$class[tr]
t_ours <- replicate(3, system.time(kmaha::lfda(x2, y2, scale = FALSE))[["elapsed"]])
t_theirs <- replicate(3, system.time(lfda::lfda(x2, y2, r = ncol(x2)))[["elapsed"]])
big <- data.frame(n = 2000, D = ncol(x2), kmaha_s = stats::median(t_ours),
                  lfda_pkg_s = stats::median(t_theirs),
                  speedup = stats::median(t_theirs) / stats::median(t_ours))
print(big)
utils::write.csv(big, "bench/results/learners_new_lfda_2000.csv", row.names = FALSE)
