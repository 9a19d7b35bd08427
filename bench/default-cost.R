# The cost of the default: kmaha(x, y) at its defaults against one linear fit
# of the same learner (nca(), lmnn(), dne()) on the same training split, on
# the hold-out sets of bench/holdout-data.R (120-400 training rows), one
# thread, the two timed alternately in one process (linear, default, linear,
# default, linear): the ratio is median(default) / median(linear), in CPU
# seconds of the process (robust to other jobs on the machine; the elapsed
# ratio is recorded too).  The package's R code is compiled by a first,
# untimed call of both.  Also records the default's test accuracy and choice.
#
#   Rscript bench/default-cost.R [learner] [out.csv] [reps] [sets]
#
# learner: nca (default), lmnn or dne; reps: timings of the default (2);
# sets: comma list (all available hold-out sets with 120-400 training rows);
# when given and `out` exists, the rows of those sets are replaced in it.
# Runs on any kmaha version with kmaha(), nca(), lmnn(), dne() (0.4.0 too),
# so that the installed version is what is measured: point R_LIBS at the
# library that holds the version to measure.
suppressMessages(library(kmaha))
source("bench/holdout-data.R")
args <- commandArgs(TRUE)
learner <- if (length(args) >= 1) args[1] else "nca"
out <- if (length(args) >= 2) args[2] else sprintf("bench/results/default_cost_%s.csv", learner)
reps <- if (length(args) >= 3) as.integer(args[3]) else 2L
sets <- if (length(args) >= 4) strsplit(args[4], ",")[[1]] else HOLDOUT_SETS
options(kmaha.num_threads = 1)
Sys.setenv(OMP_NUM_THREADS = "1")
linear_fit <- switch(learner, nca = nca, lmnn = lmnn, dne = dne)
# CPU seconds of this process (user + system: the work done, whatever else
# the machine runs) and elapsed seconds
elapsed <- function(expr) {
  t0 <- proc.time()
  v <- suppressWarnings(expr)
  t <- proc.time() - t0
  list(value = v, seconds = t[["user.self"]] + t[["sys.self"]], wall = t[["elapsed"]])
}
cat(sprintf("kmaha %s, learner %s, BLAS %s\n", packageVersion("kmaha"), learner,
            extSoftVersion()[["BLAS"]]))
rows <- list()
for (s in sets) {
  d <- tryCatch(holdout_load(s), error = function(e) NULL)
  if (is.null(d) || d$n_train < 120 || d$n_train > 400) next
  if (s == sets[1] || !exists("warmed")) {
    # the first calls of a session compile the package's R code: not timed
    invisible(suppressWarnings(kmaha(d$x[1:60, ], d$y[1:60], learner = learner, seed = 1)))
    invisible(suppressWarnings(linear_fit(d$x[1:60, ], d$y[1:60])))
    warmed <- TRUE
  }
  sp <- holdout_split_data(d, seed = 100 + match(s, HOLDOUT_SETS))
  lin <- numeric()
  def <- numeric()
  lin_w <- def_w <- numeric()
  fit <- NULL
  for (r in seq_len(reps + 1L)) {
    e <- elapsed(linear_fit(sp$xtr, sp$ytr))
    lin <- c(lin, e$seconds)
    lin_w <- c(lin_w, e$wall)
    if (r <= reps) {
      e <- elapsed(kmaha(sp$xtr, sp$ytr, learner = learner, seed = 1))
      def <- c(def, e$seconds)
      def_w <- c(def_w, e$wall)
      fit <- e$value
    }
  }
  acc <- mean(as.character(predict(fit, sp$xte)) == as.character(sp$yte))
  ch <- fit$kernel_choice$cv
  row <- data.frame(set = s, n_train = nrow(sp$xtr), p = ncol(sp$xtr),
                    classes = nlevels(sp$ytr), learner = learner,
                    linear_s = median(lin), default_s = median(def),
                    ratio = median(def) / median(lin),
                    wall_ratio = median(def_w) / median(lin_w), accuracy = acc,
                    chosen = ch$curve$label[ch$best],
                    version = as.character(packageVersion("kmaha")))
  print(row, row.names = FALSE)
  rows[[length(rows) + 1L]] <- row
}
res <- do.call(rbind, rows)
# sets named on the command line replace their rows in an existing file
if (length(args) >= 4 && file.exists(out)) {
  old <- utils::read.csv(out, stringsAsFactors = FALSE)
  old <- old[!(old$set %in% res$set) | old$version != res$version[1], , drop = FALSE]
  res <- rbind(old[, names(res)], res)
  res <- res[order(match(res$set, HOLDOUT_SETS)), , drop = FALSE]
}
cat(sprintf("\nmedian ratio over %d sets: %.1f (range %.1f-%.1f)\n", nrow(res),
            median(res$ratio), min(res$ratio), max(res$ratio)))
utils::write.csv(res, out, row.names = FALSE)
