# Figure 2 of the paper: accuracy of unweighted KDNE against the number of
# base kernels, the scaled RBF kernels added in the paper's order
# (sigma = 0.01, 0.025, ..., 1000). For m = 1, ..., 21 it runs
# reproduce_paper(learners = "dne", kernels = "unweighted") with the first m
# base kernels on the same splits as the main reproduction (same seed), so
# the value at m = 21 is the unweighted KDNE column of Table 3. Writes the
# mean and standard deviation over the splits per dataset and m to
# inst/extdata/paper_figure2.csv, read by vignette("reproduction").
#
# Usage (from the package root, with the package installed):
#   Rscript data-raw/figure2-base-kernels.R
# Environment: KMAHA_DATA_DIR (yeast, musk2), KMAHA_REPRO_WORKERS (default 2),
#   KMAHA_REPRO_SPLITS (default 40), KMAHA_REPRO_DATASETS (default all nine),
#   KMAHA_FIG2_OUT (default inst/extdata/paper_figure2.csv).
suppressPackageStartupMessages(library(kmaha))
workers <- as.integer(Sys.getenv("KMAHA_REPRO_WORKERS", "2"))
splits <- as.integer(Sys.getenv("KMAHA_REPRO_SPLITS", "40"))
ds_env <- Sys.getenv("KMAHA_REPRO_DATASETS")
datasets <- if (nzchar(ds_env)) strsplit(ds_env, ",", fixed = TRUE)[[1]] else paper_datasets()$name
out <- Sys.getenv("KMAHA_FIG2_OUT", file.path("inst", "extdata", "paper_figure2.csv"))
path <- Sys.getenv("KMAHA_DATA_DIR")
path <- if (nzchar(path)) path else NULL

future::plan(future::multisession, workers = workers)
t0 <- proc.time()[["elapsed"]]
sig <- paper_sigmas()
rows <- list()
for (m in seq_along(sig)) {
  res <- reproduce_paper(datasets = datasets, learners = "dne", kernels = "unweighted",
                         splits = splits, base_kernels = paper_kernels()[seq_len(m)],
                         path = path, download = is.null(path))
  d <- as.data.frame(unclass(res))
  for (ds in datasets) {
    a <- d$accuracy[d$dataset == ds]
    rows[[length(rows) + 1L]] <- data.frame(
      dataset = ds, kernels = m, largest_sigma = sig[m], splits = sum(!is.na(a)),
      mean = mean(a, na.rm = TRUE), sd = stats::sd(a, na.rm = TRUE))
  }
  cat(sprintf("m = %2d (sigma up to %g): %s  [%.0f s]\n", m, sig[m],
              paste(sprintf("%.3f", vapply(rows[seq(length(rows) - length(datasets) + 1L, length(rows))],
                                           `[[`, numeric(1), "mean")), collapse = " "),
              proc.time()[["elapsed"]] - t0))
}
future::plan(future::sequential)
fig <- do.call(rbind, rows)
elapsed <- proc.time()[["elapsed"]] - t0
dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
fig$mean <- signif(fig$mean, 6)
fig$sd <- signif(fig$sd, 6)
kmaha:::write_csv_header(fig, out, kmaha:::run_header(workers = workers, seed = 1L,
                                                      splits = splits,
                                                      elapsed_seconds = round(elapsed, 1)),
                         quote = "dataset")
cat(sprintf("Wrote %s (%d rows) in %.1f min\n", out, nrow(fig), elapsed / 60))
