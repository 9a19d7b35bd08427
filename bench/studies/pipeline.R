# The pipeline issue's numbers, measured in one run against kmaha 0.3.0:
#   * kernel choice by 5-fold CV (the default fast strategy) per training
#     split of the paper's protocol, per learner, one core, the nine datasets;
#   * predict() of a KPCA-trick model (200 training points) on 5000 new
#     points (Satellite), median of 5;
#   * the bytes of a kmaha() fit on 600 points (Satellite, aligned kernel)
#     and the bytes predict() reads.
# Each version runs in child processes pinned to one core (run_one_core() in
# bench/common.R) with its own library:
#   KMAHA_BENCH_OLD_LIB   library holding kmaha 0.3.0 (default /work/lib-030;
#                         build it from the 0.3.0 commit with R CMD INSTALL)
#   KMAHA_BENCH_NEW_LIB   library holding the version under test (default:
#                         the first entry of .libPaths())
#   KMAHA_BENCH_DATASETS, KMAHA_BENCH_LEARNERS as in bench/cv_speed.R.
# Usage: Rscript bench/studies/pipeline.R  (writes bench/studies/results/pipeline.csv)
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
suppressPackageStartupMessages(library(kmaha))
source(file.path(bench_dir, "..", "common.R"))
info <- paper_datasets()
datasets <- env_list("KMAHA_BENCH_DATASETS", info$name)
learners <- env_list("KMAHA_BENCH_LEARNERS", c("nca", "dne", "lmnn"))
libs <- c(old = Sys.getenv("KMAHA_BENCH_OLD_LIB", "/work/lib-030"),
          new = Sys.getenv("KMAHA_BENCH_NEW_LIB", .libPaths()[1]))
rscript <- file.path(R.home("bin"), "Rscript")
tmp <- tempfile("pipeline-bench")
dir.create(tmp)

# One measurement in a child process of the given library: prints its
# numbers on the last line.
child <- function(lib, code) {
  f <- file.path(tmp, "child.R")
  writeLines(c(sprintf(".libPaths(c(%s, .libPaths()))", deparse(lib)),
               "suppressPackageStartupMessages(library(kmaha))",
               sprintf("source(%s)", deparse(file.path(bench_dir, "..", "common.R"))),
               code), f)
  line_numbers(run_one_core(rscript, f))
}

versions <- vapply(libs, function(l) {
  child(l, "cat(as.numeric(gsub('[^0-9]', '', format(packageVersion('kmaha')))), '\\n')")
}, 0)
cat("BLAS:", extSoftVersion()["BLAS"], " load:", readLines("/proc/loadavg"), "\n")
cat("versions:", paste(names(libs), libs, versions, collapse = "; "), "\n\n")

# KMAHA_BENCH_PARTS: which parts to run (default all: cv,predict,size).
parts <- env_list("KMAHA_BENCH_PARTS", c("cv", "predict", "size"))
rows <- list()
for (ds in if ("cv" %in% parts) datasets) {
  for (l in learners) {
    code <- c(sprintf("sp <- paper_split(%s, 1)", deparse(ds)),
              sprintf("t <- system.time(f <- suppressWarnings(kmaha(sp$x, sp$y, learner = %s, kernel = 'cv', seed = 1)))[['elapsed']]",
                      deparse(l)),
              "acc <- mean(predict(f, sp$xte) == sp$yte)",
              "cat(t, acc, '\\n')")
    r <- lapply(libs, child, code = code)
    rows[[length(rows) + 1L]] <- data.frame(
      what = "cv", dataset = ds, learner = l,
      old_s = r$old[1], new_s = r$new[1], old_acc = r$old[2], new_acc = r$new[2])
    cat(sprintf("%-14s %-5s CV  0.3.0 %6.2f s  now %6.2f s  (test accuracy %.3f / %.3f)\n",
                ds, l, r$old[1], r$new[1], r$old[2], r$new[2]))
  }
}

pred_code <- c(
  "d <- kmaha_data('satellite'); x <- as.matrix(d[, -ncol(d)]); y <- d$class",
  "set.seed(7); tr <- sample(nrow(x), 200); te <- setdiff(seq_len(nrow(x)), tr)[1:5000]",
  "f <- kmaha(x[tr, ], y[tr], learner = 'nca', kernel = rbf_kernel(1))",
  "ts <- replicate(5, system.time(predict(f, x[te, ]))[['elapsed']])",
  "p <- predict(f, x[te, ])",
  "cat(median(ts), mean(p == y[te]), '\\n')")
if ("predict" %in% parts) {
rp <- lapply(libs, child, code = pred_code)
rows[[length(rows) + 1L]] <- data.frame(what = "predict 5000", dataset = "satellite",
                                        learner = "nca", old_s = rp$old[1], new_s = rp$new[1],
                                        old_acc = rp$old[2], new_acc = rp$new[2])
cat(sprintf("\npredict() of 5000 points, KNCA on 200: 0.3.0 %.4f s, now %.4f s (%.1fx)\n",
            rp$old[1], rp$new[1], rp$old[1] / rp$new[1]))
}

size_code <- c(
  "d <- kmaha_data('satellite'); x <- as.matrix(d[, -ncol(d)]); y <- d$class",
  "set.seed(1); i <- sample(nrow(x), 600)",
  "f <- kmaha(x[i, ], y[i], learner = 'nca', kernel = 'align')",
  "cat(as.numeric(object.size(f)), '\\n')")
if ("size" %in% parts) {
rs <- lapply(libs, child, code = size_code)
rows[[length(rows) + 1L]] <- data.frame(what = "bytes of a 600-point fit", dataset = "satellite",
                                        learner = "nca", old_s = rs$old[1], new_s = rs$new[1],
                                        old_acc = NA, new_acc = NA)
cat(sprintf("bytes of a kmaha() fit on 600 points: 0.3.0 %.1f MB, now %.1f MB\n",
            rs$old[1] / 1e6, rs$new[1] / 1e6))
}

res <- do.call(rbind, rows)
cv <- res[res$what == "cv", ]
if (nrow(cv)) {
  cat("\nMean CV seconds per training split (one core):\n")
  print(aggregate(cbind(old_s, new_s) ~ learner, cv, mean), row.names = FALSE)
}
out <- file.path(bench_dir, "results",
                 if (identical(sort(parts), c("cv", "predict", "size"))) "pipeline.csv"
                 else sprintf("pipeline_%s.csv", paste(parts, collapse = "_")))
dir.create(dirname(out), showWarnings = FALSE)
utils::write.csv(res, out, row.names = FALSE)
