# Validation of the fast kernel-choice strategy against the exhaustive one.
#
# For every learner, dataset and random split of the paper's protocol (200
# training points, 100 for Glass and Iris, the rest for testing; inputs
# standardized on the training split; 1-NN; the 21 scaled RBF kernels of
# paper_kernels(); 5-fold CV), fits
#   kmaha(x, y, learner, kernel = "cv", cv_strategy = "exhaustive")  and
#   kmaha(x, y, learner, kernel = "cv", cv_strategy = "fast")
# with the same CV seed (same folds), and records the test accuracy of each
# chosen model, the sigma chosen, the number of kernel-fold fits and the
# wall time of each call (CV plus the final fit, one core). The two calls
# alternate in order from split to split. The check: the mean test accuracy
# over all cells (9 datasets x 10 splits = 90) of the fast choice is within
# 0.005 of the exhaustive one, per learner.
#
# Environment:
#   KMAHA_DATA_DIR        directory of the CSV files (yeast and musk2 need it)
#   KMAHA_BENCH_LEARNERS  comma-separated subset of nca,dne,lmnn (default all)
#   KMAHA_BENCH_SPLITS    splits per dataset (default 10)
#   KMAHA_BENCH_DATASETS  comma-separated dataset names (default all nine)
#   KMAHA_BENCH_OUT       per-cell CSV (default bench/studies/results/cv_validate.csv);
#                         cells already in it are not run again, so a long
#                         run can be resumed
# Usage: Rscript bench/studies/cv_validate.R   (kmaha installed; run it on one core,
# e.g. `taskset -c 0`, and nothing else running)
suppressPackageStartupMessages(library(kmaha))
options(width = 150)
options(kmaha.num_threads = 1L)   # one thread per fit, as in cv_kernel()
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(bench_dir, "..", "common.R"))

learners <- env_list("KMAHA_BENCH_LEARNERS", c("nca", "dne", "lmnn"))
n_splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "10"))
info <- paper_datasets()
datasets <- env_list("KMAHA_BENCH_DATASETS", info$name)
out_file <- Sys.getenv("KMAHA_BENCH_OUT", file.path("bench", "studies", "results", "cv_validate.csv"))
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)

cat("BLAS:", extSoftVersion()["BLAS"], "\n")
cat("kmaha", format(packageVersion("kmaha")), "  cores:", parallel::detectCores(),
    "  load average:", tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")
cat(sprintf("learners: %s; splits: %d; datasets: %s\n\n", paste(learners, collapse = " "),
            n_splits, paste(datasets, collapse = " ")))

done <- if (file.exists(out_file)) utils::read.csv(out_file, stringsAsFactors = FALSE) else NULL
cell_done <- function(l, ds, s, st) {
  !is.null(done) && any(done$learner == l & done$dataset == ds & done$split == s &
                          done$strategy == st)
}

run_cell <- function(l, xtr, ytr, xte, yte, s, strategy) {
  t0 <- proc.time()[["elapsed"]]
  fit <- suppressWarnings(kmaha(xtr, ytr, learner = l, kernel = "cv", k = 1,
                                seed = s, cv_strategy = strategy))
  secs <- proc.time()[["elapsed"]] - t0
  cv <- fit$kernel_choice$cv
  data.frame(strategy = strategy, seconds = secs,
             accuracy = mean(as.character(predict(fit, xte)) == as.character(yte)),
             sigma = cv$curve$sigma[cv$best], cv_accuracy = cv$curve$mean[cv$best],
             fits = cv$n_fits, dropped = sum(cv$curve$dropped))
}

for (l in learners) for (ds in datasets) {
  if (is.null(paper_split(ds, 1L, info))) {
    cat(sprintf("%-14s skipped (data not available)\n", ds))
    next
  }
  for (s in seq_len(n_splits)) {
    sp <- paper_split(ds, s, info)   # the split of bench/studies/paper_kernel.R
    order_st <- if (s %% 2L) c("exhaustive", "fast") else c("fast", "exhaustive")
    for (st in order_st) {
      if (cell_done(l, ds, s, st)) next
      row <- cbind(data.frame(learner = l, dataset = ds, split = s), 
                   run_cell(l, sp$x, sp$y, sp$xte, sp$yte, s, st))
      utils::write.table(row, out_file, sep = ",", row.names = FALSE,
                         col.names = !file.exists(out_file), append = file.exists(out_file))
      cat(sprintf("%-5s %-14s split %2d %-10s acc %.3f sigma %-6g fits %3d  %6.2f s\n",
                  l, ds, s, st, row$accuracy, row$sigma, row$fits, row$seconds))
    }
  }
}

# The comparison, from everything in the CSV for the requested learners,
# datasets and splits.
res <- utils::read.csv(out_file, stringsAsFactors = FALSE)
res <- res[res$learner %in% learners & res$dataset %in% datasets &
             res$split <= n_splits, ]
ex <- res[res$strategy == "exhaustive", ]
fa <- res[res$strategy == "fast", ]
m <- merge(ex, fa, by = c("learner", "dataset", "split"), suffixes = c("_ex", "_fast"))
if (!nrow(m)) stop("no cell has both strategies yet")
cat("\nPer dataset (mean over splits): test accuracy of the chosen model, CV wall time\n",
    "(kmaha(kernel = \"cv\") including the final fit, one core) and kernel-fold fits\n", sep = "")
per <- do.call(rbind, lapply(split(m, list(m$learner, m$dataset), drop = TRUE), function(g) {
  data.frame(learner = g$learner[1], dataset = g$dataset[1], splits = nrow(g),
             acc_exhaustive = mean(g$accuracy_ex), acc_fast = mean(g$accuracy_fast),
             diff = mean(g$accuracy_fast - g$accuracy_ex),
             same_sigma = mean(g$sigma_ex == g$sigma_fast),
             sec_exhaustive = mean(g$seconds_ex), sec_fast = mean(g$seconds_fast),
             speedup = mean(g$seconds_ex) / mean(g$seconds_fast),
             fits_fast = mean(g$fits_fast))
}))
per <- per[order(per$learner, per$dataset), ]
print(per, row.names = FALSE, digits = 3)
cat("\nPer learner, over all cells: the fast choice must be within 0.005 of the exhaustive one\n")
tot <- do.call(rbind, lapply(split(m, m$learner), function(g) {
  d <- mean(g$accuracy_fast) - mean(g$accuracy_ex)
  data.frame(learner = g$learner[1], cells = nrow(g),
             acc_exhaustive = mean(g$accuracy_ex), acc_fast = mean(g$accuracy_fast),
             diff = d, within_0.005 = abs(d) <= 0.005,
             same_sigma = mean(g$sigma_ex == g$sigma_fast),
             # CV time per split averaged over the datasets
             sec_exhaustive = mean(tapply(g$seconds_ex, g$dataset, mean)),
             sec_fast = mean(tapply(g$seconds_fast, g$dataset, mean)),
             fits_fast = mean(g$fits_fast))
}))
print(tot, row.names = FALSE, digits = 4)
cat("Per-cell results:", out_file, "\n")
