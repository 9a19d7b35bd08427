# kernel = "auto" against kernel = "cv" (the fast CV over the 21 base
# kernels) per training split of the paper's protocol: seconds of one
# kmaha() fit with each (kernel choice included), one thread, both in the
# same process one after the other, and their test accuracies.  Target of
# issue 18: auto at most 1.5x the fast CV of the same learner.
# Usage: Rscript bench/auto-speed.R [splits (default 1)]
#   KMAHA_BENCH_DATASETS, KMAHA_BENCH_LEARNERS as in bench/cv_speed.R.
# Writes bench/results/auto_speed.csv.
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
suppressPackageStartupMessages(library(kmaha))
source(file.path(bench_dir, "common.R"))
options(kmaha.num_threads = 1L)
args <- commandArgs(trailingOnly = TRUE)
splits <- seq_len(if (length(args)) as.integer(args[1]) else 1L)
datasets <- env_list("KMAHA_BENCH_DATASETS", paper_datasets()$name)
learners <- env_list("KMAHA_BENCH_LEARNERS", c("nca", "dne", "lmnn"))
rows <- list()
for (ds in datasets) for (l in learners) for (s in splits) {
  sp <- paper_split(ds, s)
  if (is.null(sp)) next
  one <- function(kernel) {
    t <- system.time(f <- suppressWarnings(kmaha(sp$x, sp$y, learner = l, kernel = kernel,
                                                  seed = s)))[["elapsed"]]
    c(t, mean(predict(f, sp$xte) == sp$yte))
  }
  cv <- one("cv")
  au <- one("auto")
  rows[[length(rows) + 1L]] <- data.frame(dataset = ds, learner = l, split = s,
                                          cv_s = cv[1], auto_s = au[1],
                                          cv_acc = cv[2], auto_acc = au[2])
  cat(sprintf("%-14s %-5s split %d: cv %6.2f s, auto %6.2f s (%.2fx); accuracy %.3f / %.3f\n",
              ds, l, s, cv[1], au[1], au[1] / cv[1], cv[2], au[2]))
}
res <- do.call(rbind, rows)
cat(sprintf("kmaha %s; load %s\n", packageVersion("kmaha"), readLines("/proc/loadavg")))
agg <- aggregate(cbind(cv_s, auto_s, cv_acc, auto_acc) ~ learner, res, mean)
agg$ratio <- agg$auto_s / agg$cv_s
print(agg, digits = 3, row.names = FALSE)
out <- file.path(bench_dir, "results", "auto_speed.csv")
utils::write.csv(res, out, row.names = FALSE)
