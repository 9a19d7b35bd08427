# A tidymodels tune_grid() of the kmaha engine at its defaults (kernel
# choice by kmaha()'s default, learner NCA): 5-fold CV x 3 values of
# `neighbors` on 500 rows, for the kmaha installed in each library given,
# one child process per library, measured in one run, one thread each.
# CPU seconds of the child (user + system, robust to other jobs on the
# machine) and elapsed seconds; also the best mean accuracy found.
#
#   Rscript bench/tune-grid.R LIB_NEW LIB_OLD [out.csv]
#
# e.g. Rscript bench/tune-grid.R /path/lib-main /path/lib-040
# The frameworks (parsnip, tune, workflows, rsample) must be on .libPaths()
# of this process (their library paths are passed on to the children).
args <- commandArgs(TRUE)
if (length(args) < 2) stop("usage: Rscript bench/tune-grid.R LIB_NEW LIB_OLD [out.csv]")
libs <- args[1:2]
out <- if (length(args) >= 3) args[3] else "bench/results/tune_grid.csv"

child <- function() {
  suppressPackageStartupMessages({
    library(kmaha); library(parsnip); library(workflows); library(tune)
  })
  options(kmaha.num_threads = 1)
  set.seed(42)
  d <- mlbench::mlbench.waveform(500)
  dat <- data.frame(d$x, class = d$classes)
  spec <- nearest_neighbor(neighbors = tune()) |>
    set_engine("kmaha", seed = 1) |>
    set_mode("classification")
  set.seed(1)
  folds <- rsample::vfold_cv(dat, v = 5, strata = class)
  t0 <- proc.time()
  res <- tune_grid(workflow(class ~ ., spec), resamples = folds,
                   grid = data.frame(neighbors = c(1, 3, 5)),
                   control = control_grid(allow_par = FALSE))
  t <- proc.time() - t0
  best <- show_best(res, metric = "accuracy", n = 1)
  notes <- collect_notes(res)
  data.frame(version = as.character(packageVersion("kmaha")),
             cpu_s = t[["user.self"]] + t[["sys.self"]], elapsed_s = t[["elapsed"]],
             best_neighbors = best$neighbors, best_accuracy = best$mean,
             notes = nrow(notes))
}

rows <- lapply(libs, function(lib) {
  callr::r(child, libpath = c(lib, .libPaths()), env = c(OMP_NUM_THREADS = "1"))
})
res <- do.call(rbind, rows)
res$lib <- libs
print(res, row.names = FALSE)
cat(sprintf("CPU ratio %s / %s: %.1fx\n", res$version[2], res$version[1],
            res$cpu_s[2] / res$cpu_s[1]))
utils::write.csv(res, out, row.names = FALSE)
