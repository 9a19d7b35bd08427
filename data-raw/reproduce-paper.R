# The full reproduction of the paper's Tables 1-3: nine datasets x three
# learners (NCA, LMNN, DNE) x four kernel choices (linear, CV, aligned,
# unweighted) = 108 cells, each over 40 random splits, with reproduce_paper()
# and its default seed. Writes the per-split results, with the machine, BLAS,
# package version, date and total run time in the file's header, to
# inst/extdata/paper_reproduction.csv, which paper_reproduction() and
# vignette("reproduction") read.
#
# Usage (from the package root, with the package installed):
#   Rscript data-raw/reproduce-paper.R
#
# Environment:
#   KMAHA_DATA_DIR          directory of yeast.csv and musk2.csv (or they are
#                           downloaded from the UCI repository)
#   KMAHA_REPRO_WORKERS     future::plan(multisession) workers (default 2)
#   KMAHA_REPRO_SPLITS      splits per dataset (default 40, the paper's)
#   KMAHA_REPRO_BLOCK       splits per checkpoint block (default 10)
#   KMAHA_REPRO_DATASETS, KMAHA_REPRO_LEARNERS, KMAHA_REPRO_KERNELS
#                           comma-separated subsets (default: all), for trials
#   KMAHA_REPRO_OUT         output file (default
#                           inst/extdata/paper_reproduction.csv)
#
# Each block of splits is saved in data-raw/checkpoints/ when it finishes; a
# re-run with the same settings skips the blocks already there (the run time
# recorded is then the sum of the blocks' run times). Within a block, every
# finished cell is saved at once in data-raw/checkpoints/cells/
# (reproduce_paper(checkpoint = )), so a run killed mid-block loses no
# finished cell either. Blocks give the same results as one run: every cell
# has its own random state.
suppressPackageStartupMessages(library(kmaha))
options(width = 160)
env_list <- function(var, default) {
  v <- Sys.getenv(var)
  if (nzchar(v)) strsplit(v, ",", fixed = TRUE)[[1]] else default
}
workers <- as.integer(Sys.getenv("KMAHA_REPRO_WORKERS", "2"))
splits <- as.integer(Sys.getenv("KMAHA_REPRO_SPLITS", "40"))
block <- as.integer(Sys.getenv("KMAHA_REPRO_BLOCK", "10"))
datasets <- env_list("KMAHA_REPRO_DATASETS", paper_datasets()$name)
learners <- env_list("KMAHA_REPRO_LEARNERS", c("nca", "lmnn", "dne"))
kernels <- env_list("KMAHA_REPRO_KERNELS", c("linear", "cv", "aligned", "unweighted", "auto"))
out <- Sys.getenv("KMAHA_REPRO_OUT", file.path("inst", "extdata", "paper_reproduction.csv"))
path <- Sys.getenv("KMAHA_DATA_DIR")
path <- if (nzchar(path)) path else NULL
ckdir <- file.path("data-raw", "checkpoints")
dir.create(ckdir, showWarnings = FALSE, recursive = TRUE)

settings <- list(datasets = datasets, learners = learners, kernels = kernels,
                 splits = splits, kmaha = as.character(packageVersion("kmaha")))
cat(sprintf("kmaha %s, %s; BLAS %s\n", settings$kmaha, R.version.string,
            extSoftVersion()[["BLAS"]]))
cat(sprintf("%d datasets x %d learners x %d kernel choices x %d splits = %d fits, %d workers\n",
            length(datasets), length(learners), length(kernels), splits,
            length(datasets) * length(learners) * length(kernels) * splits, workers))

future::plan(future::multisession, workers = workers)
options(progressr.enable = TRUE)
progressr::handlers(global = TRUE)
progressr::handlers(progressr::handler_txtprogressbar(style = 3))
t_start <- proc.time()[["elapsed"]]
blocks <- split(seq_len(splits), ceiling(seq_len(splits) / block))
parts <- list()
for (b in blocks) {
  f <- file.path(ckdir, sprintf("splits-%02d-%02d.rds", min(b), max(b)))
  if (file.exists(f)) {
    saved <- readRDS(f)
    if (identical(saved$settings, settings)) {
      cat(sprintf("splits %d-%d: from %s\n", min(b), max(b), f))
      parts[[length(parts) + 1L]] <- saved$result
      next
    }
  }
  cat(sprintf("splits %d-%d ...\n", min(b), max(b)))
  res <- reproduce_paper(datasets = datasets, learners = learners,
                         kernels = kernels, splits = splits, split_ids = b,
                         path = path, download = is.null(path),
                         checkpoint = file.path(ckdir, "cells"))
  cat(sprintf("splits %d-%d: %.1f min\n", min(b), max(b),
              attr(res, "run_info")$elapsed_seconds / 60))
  saveRDS(list(settings = settings, result = res), f)
  parts[[length(parts) + 1L]] <- res
}
future::plan(future::sequential)

# One result: rbind() sums the blocks' run times.
res <- do.call(rbind, parts)
info <- attr(res, "run_info")
info$blocks <- paste(vapply(parts, function(p) attr(p, "run_info")$elapsed_seconds,
                            numeric(1)), collapse = " ")
info$wall_seconds_this_session <- round(proc.time()[["elapsed"]] - t_start, 1)
attr(res, "run_info") <- info
dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
kmaha:::write_reproduction(res, out)
cat(sprintf("\nWrote %s (%.0f KB): %d rows; total run time %.1f min\n", out,
            file.size(out) / 1024, nrow(res), info$elapsed_seconds / 60))

s <- summary(res)
print(s)
cat("\nWin/draw/lose against the linear learner:\n")
print(win_draw_lose(s), row.names = FALSE)
cat("\nCells more than 0.05 from the paper:\n")
print(paper_differences(s)[, c("dataset", "learner", "kernel", "mean", "sd",
                               "paper_mean", "paper_sd", "difference")],
      row.names = FALSE, digits = 3)
if (any(!is.na(res$error))) {
  cat("\nFailed cells:\n")
  print(as.data.frame(unclass(res))[!is.na(res$error), c("dataset", "split", "learner", "kernel", "error")])
}
