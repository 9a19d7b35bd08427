# The README's main job: a quick reproduction of the paper on the data that
# R packages provide (plus Yeast and Musk2 when KMAHA_DATA_DIR points to
# their CSV files).
#
# Part 1: 1-NN with the Euclidean distance versus 1-NN on kernel PCA
#         coordinates (tools/demo-kpca.R).
# Part 2: the paper's Tables 1-3 with few splits: NCA, LMNN and DNE, each
#         linear, with the kernel chosen by cross-validation (CV), with the
#         aligned kernel and with the unweighted kernel over the paper's 21
#         scaled RBF base kernels, printed beside the paper's values with
#         the win/draw/lose rows. The CV column runs on fewer splits (it
#         costs 105 fits per cell); cells with one split show "n/a" for
#         their standard deviation.
#
# Usage: Rscript tools/demo.R [splits, default 2] [CV splits, default 1]
#        (kmaha installed)
suppressPackageStartupMessages(library(kmaha))
options(width = 150)
args <- commandArgs(trailingOnly = TRUE)
splits <- if (length(args) >= 1L) as.integer(args[1]) else 2L
cv_splits <- if (length(args) >= 2L) as.integer(args[2]) else 1L
t0 <- proc.time()[["elapsed"]]

cat("== Part 1: Euclidean 1-NN versus 1-NN on KPCA coordinates ==\n\n")
status <- system2(file.path(R.home("bin"), "Rscript"),
                  c("tools/demo-kpca.R", splits))
if (status != 0L) stop("tools/demo-kpca.R failed", call. = FALSE)

cat("\n== Part 2: the paper's Tables 1-3 (linear, CV, aligned and unweighted kernels) ==\n")
path <- Sys.getenv("KMAHA_DATA_DIR")
sets <- paper_datasets()$name
local_ok <- nzchar(path) && dir.exists(path)
if (!local_ok) sets <- setdiff(sets, c("yeast", "musk2"))
if (!requireNamespace("mlbench", quietly = TRUE) && !local_ok) {
  sets <- intersect(sets, c("iris", "balance"))
}
if (requireNamespace("future", quietly = TRUE)) {
  future::plan(future::multisession, workers = 2L)
}
t1 <- proc.time()[["elapsed"]]
res <- reproduce_paper(datasets = sets, kernels = c("linear", "aligned", "unweighted"),
                       splits = splits, path = if (local_ok) path else NULL)
t2 <- proc.time()[["elapsed"]]
if (cv_splits > 0L) {
  res <- rbind(res, reproduce_paper(datasets = sets, kernels = "cv",
                                    splits = max(splits, cv_splits),
                                    split_ids = seq_len(cv_splits),
                                    path = if (local_ok) path else NULL))
}
t3 <- proc.time()[["elapsed"]]
print(res)
d <- as.data.frame(unclass(summary(res)))
cat(sprintf("\n%d of %d cells within 0.03 of the paper's mean (%d splits per cell, %d for CV).\n",
            sum(abs(d$difference) <= 0.03, na.rm = TRUE), sum(!is.na(d$difference)),
            splits, cv_splits))
cat(sprintf("Part 2: %.1f s for the linear, aligned and unweighted columns, %.1f s for the CV column.\n",
            t2 - t1, t3 - t2))
cat(sprintf("Total elapsed: %.1f s\n", proc.time()[["elapsed"]] - t0))
