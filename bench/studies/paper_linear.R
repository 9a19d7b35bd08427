# The linear columns of the paper's Tables 1-3: NCA, LMNN and DNE without a
# kernel on all nine datasets, with the paper's protocol (random splits, 200
# training points, 100 for Glass and Iris, the rest for testing; features
# standardized by the training split; 1-NN), beside the paper's values.
#
# Environment:
#   KMAHA_DATA_DIR      directory of the paper's CSV files (yeast and musk2
#                       need it; the others load from R packages otherwise)
#   KMAHA_BENCH_SPLITS  number of splits (default 10; the paper used 40)
#   KMAHA_BENCH_OUT     CSV of per-split results
#                       (default bench/studies/results/paper_linear.csv)
# Usage: Rscript bench/studies/paper_linear.R   (with kmaha installed)
suppressPackageStartupMessages(library(kmaha))
options(width = 160)
splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "10"))
out <- Sys.getenv("KMAHA_BENCH_OUT", "bench/studies/results/paper_linear.csv")
path <- Sys.getenv("KMAHA_DATA_DIR")
datasets <- paper_datasets()$name
if (!nzchar(path)) datasets <- setdiff(datasets, c("yeast", "musk2"))
cat("BLAS:", extSoftVersion()[["BLAS"]], "\n")
t0 <- proc.time()[["elapsed"]]
res <- reproduce_paper(datasets = datasets, kernels = "linear", splits = splits,
                       path = if (nzchar(path)) path else NULL)
elapsed <- proc.time()[["elapsed"]] - t0
dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(as.data.frame(unclass(res)), out, row.names = FALSE)
s <- summary(res)
print(s)
d <- as.data.frame(unclass(s))
cat(sprintf("\n%d of %d cells within 0.03 of the paper; largest gap %.3f (%s, %s)\n",
            sum(abs(d$difference) <= 0.03, na.rm = TRUE), nrow(d),
            max(abs(d$difference), na.rm = TRUE),
            d$dataset[which.max(abs(d$difference))],
            d$learner[which.max(abs(d$difference))]))
cat(sprintf("total %.1f s for %d splits\n", elapsed, splits))
