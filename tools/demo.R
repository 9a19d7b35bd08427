# The README's main job: a quick reproduction of the paper on the data that
# R packages provide (plus Yeast and Musk2 when KMAHA_DATA_DIR points to
# their CSV files).
#
# Part 1: 1-NN with the Euclidean distance versus 1-NN on kernel PCA
#         coordinates (tools/demo-kpca.R).
# Part 2: the paper's Tables 1-3 with few splits: NCA, LMNN and DNE, each
#         linear, with the aligned kernel and with the unweighted kernel over
#         the paper's 21 scaled RBF base kernels (cross-validated kernels are
#         left to bench/paper_kernel.R: they take far longer), printed beside
#         the paper's values.
#
# Usage: Rscript tools/demo.R [splits, default 2]   (kmaha installed)
suppressPackageStartupMessages(library(kmaha))
options(width = 150)
args <- commandArgs(trailingOnly = TRUE)
splits <- if (length(args)) as.integer(args[1]) else 2L
t0 <- proc.time()[["elapsed"]]

cat("== Part 1: Euclidean 1-NN versus 1-NN on KPCA coordinates ==\n\n")
status <- system2(file.path(R.home("bin"), "Rscript"),
                  c("tools/demo-kpca.R", splits))
if (status != 0L) stop("tools/demo-kpca.R failed", call. = FALSE)

cat("\n== Part 2: the paper's Tables 1-3 (linear, aligned and unweighted kernels) ==\n")
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
res <- reproduce_paper(datasets = sets, kernels = c("linear", "aligned", "unweighted"),
                       splits = splits, path = if (local_ok) path else NULL)
print(res)
d <- as.data.frame(unclass(summary(res)))
cat(sprintf("\n%d of %d cells within 0.03 of the paper's mean (with %d splits per cell).\n",
            sum(abs(d$difference) <= 0.03, na.rm = TRUE), sum(!is.na(d$difference)),
            splits))
cat(sprintf("Total elapsed: %.1f s\n", proc.time()[["elapsed"]] - t0))
