# Accuracy of the kernelized learners (KPCA trick) on the paper's datasets,
# beside the paper's Tables 1-3 (/work/shared/paper/paper_tables.csv or
# $KMAHA_PAPER_TABLES).
#
# Protocol (the paper's): random splits with 200 training points (100 for
# Glass and Iris), the rest for testing; inputs standardized by the training
# split (kmaha(scale = TRUE)); 1-NN. For each learner (NCA, LMNN, DNE):
#   linear      the original learner on the standardized inputs;
#   cv          kernel chosen among the 21 scaled RBF kernels by 5-fold CV;
#   aligned     the QP-aligned combination of the 21 kernels;
#   unweighted  the plain sum of the 21 kernels; for LMNN and DNE the target
#               neighbours come from the input space, as in the paper.
#
# Environment:
#   KMAHA_DATA_DIR        directory of the CSV files (required for yeast and
#                         musk2; the others also load through kmaha_data())
#   KMAHA_BENCH_SPLITS    number of random splits (default 3; the paper: 40)
#   KMAHA_BENCH_DATASETS  comma-separated names (default: all nine)
#   KMAHA_BENCH_LEARNERS  comma-separated subset of nca,lmnn,dne
#   KMAHA_BENCH_KERNELS   comma-separated subset of linear,cv,aligned,unweighted
#   KMAHA_BENCH_OUT       output CSV (default bench/studies/results/paper_kernel.csv);
#                         rows are appended as they finish, so a partial run
#                         keeps its results
# Usage: Rscript bench/studies/paper_kernel.R   (with kmaha installed)
suppressPackageStartupMessages(library(kmaha))
options(width = 160)
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(bench_dir, "..", "common.R"))

n_splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "3"))
datasets <- env_list("KMAHA_BENCH_DATASETS", paper_datasets()$name)
learners <- env_list("KMAHA_BENCH_LEARNERS", c("nca", "lmnn", "dne"))
kernels_run <- env_list("KMAHA_BENCH_KERNELS", c("linear", "cv", "aligned", "unweighted"))
out_file <- Sys.getenv("KMAHA_BENCH_OUT", file.path("bench", "results", "paper_kernel.csv"))
paper_file <- Sys.getenv("KMAHA_PAPER_TABLES", "/work/shared/paper/paper_tables.csv")
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)

cat("BLAS:", extSoftVersion()["BLAS"], "\n")
cat(sprintf("splits = %d; datasets: %s; learners: %s; kernels: %s\n", n_splits,
            paste(datasets, collapse = " "), paste(learners, collapse = " "),
            paste(kernels_run, collapse = " ")))

info <- paper_datasets()
rows <- list()
for (ds in datasets) {
  if (is.null(paper_split(ds, 1L, info))) {
    cat(sprintf("%-14s skipped (data not available)\n", ds))
    next
  }
  for (s in seq_len(n_splits)) {
    sp <- paper_split(ds, s, info)
    xtr <- sp$x
    ytr <- sp$y
    xte <- sp$xte
    yte <- sp$yte
    for (l in learners) for (kn in kernels_run) {
      kernel <- if (kn == "aligned") "align" else kn
      nb <- if (kn == "unweighted" && l != "nca") "input" else "feature"
      t0 <- proc.time()[["elapsed"]]
      res <- tryCatch({
        fit <- kmaha(xtr, ytr, learner = l, kernel = kernel, k = 1,
                     neighbors = nb, seed = s)
        acc <- mean(as.character(predict(fit, xte)) == as.character(yte))
        ch <- fit$kernel_choice
        detail <- switch(kn,
          cv = sprintf("sigma=%s", format(ch$cv$curve$sigma[ch$cv$best])),
          aligned = sprintf("alignment=%.3f; sigmas=%s", ch$alignment$alignment,
                            paste(format(ch$alignment$sigma[ch$alignment$gamma > 0]),
                                  collapse = "/")),
          "")
        list(acc = acc, detail = detail)
      }, error = function(e) list(acc = NA_real_, detail = paste("ERROR:", conditionMessage(e))))
      secs <- proc.time()[["elapsed"]] - t0
      row <- data.frame(dataset = info$label[info$name == ds], learner = toupper(l),
                        kernel = kn, split = s, accuracy = res$acc, seconds = secs,
                        detail = res$detail, stringsAsFactors = FALSE)
      rows[[length(rows) + 1L]] <- row
      utils::write.table(row, out_file, sep = ",", row.names = FALSE,
                         col.names = !file.exists(out_file), append = file.exists(out_file))
      cat(sprintf("%-14s split %d %-5s %-10s acc %.3f  (%.1f s) %s\n", ds, s, l, kn,
                  res$acc, secs, res$detail))
    }
  }
}

if (length(rows)) {
  res <- do.call(rbind, rows)
  agg <- stats::aggregate(accuracy ~ dataset + learner + kernel, res,
                          function(a) c(mean = mean(a), sd = if (length(a) > 1) stats::sd(a) else NA))
  agg <- data.frame(agg[1:3], mean = agg$accuracy[, "mean"], sd = agg$accuracy[, "sd"])
  if (file.exists(paper_file)) {
    paper <- utils::read.csv(paper_file, stringsAsFactors = FALSE)
    agg <- merge(agg, paper[, c("dataset", "learner", "kernel", "mean_accuracy", "sd_accuracy")],
                 by = c("dataset", "learner", "kernel"), all.x = TRUE)
    names(agg)[names(agg) == "mean_accuracy"] <- "paper_mean"
    names(agg)[names(agg) == "sd_accuracy"] <- "paper_sd"
  }
  agg <- agg[order(agg$learner, agg$dataset, match(agg$kernel, c("linear", "cv", "aligned", "unweighted"))), ]
  cat("\nMean (sd) test accuracy over splits, beside the paper:\n")
  print(agg, row.names = FALSE, digits = 3)
  summ_file <- sub("\\.csv$", "_summary.csv", out_file)
  utils::write.csv(agg, summ_file, row.names = FALSE)
  cat("Per-split results:", out_file, "\nSummary:", summ_file, "\n")
}
