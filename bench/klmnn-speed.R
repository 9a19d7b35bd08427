# KLMNN (the RKLMNN default of kmaha()) against KNCA on the same kernels:
# fit times, objectives and 1-NN test accuracy under the paper's protocol.
#
#   taskset -c 0 Rscript bench/klmnn-speed.R            # one core
#
# Per dataset (the nine of paper_datasets()), split (200 training rows, 100
# for Glass and Iris; inputs standardized on the training rows, columns
# constant there dropped: paper_split() of bench/common.R) and sigma of the
# scaled RBF kernel:
#   KNCA    kmaha(x, y, learner = "nca", kernel = rbf_kernel(sigma), k = 1)
#   KLMNN   kmaha(x, y, learner = "lmnn", kernel = rbf_kernel(sigma), k = 1)
#           (lambda = the total variance of the KPCA coordinates)
#   learner alone: nca() and lmnn() on that fit's KPCA coordinates (the
#           same targets, lambda and settings), without the shared KPCA
# and per split linear LMNN, kmaha(x, y, learner = "lmnn", kernel =
# "linear", k = 1).  Recorded: elapsed seconds (median of the repetitions),
# the objective reached, L-BFGS evaluations, and the 1-NN test accuracy.
# Everything runs on one thread (kmaha.num_threads = 1; the BLAS is
# single-threaded here); pin the process to one core with taskset.
#
# Environment:
#   KMAHA_DATA_DIR        the paper's CSV files (yeast and musk2 need them)
#   KMAHA_BENCH_DATASETS  comma-separated names (default all nine)
#   KMAHA_BENCH_SPLITS    number of splits (default 5)
#   KMAHA_BENCH_SIGMAS    comma-separated sigmas (default 1,5)
#   KMAHA_BENCH_REPS      repetitions of each timing, median (default 1)
#   KMAHA_BENCH_OUT       CSV of the cells (default
#                         bench/results/klmnn-speed.csv)
#   KMAHA_BENCH_REF       CSV of an earlier run (e.g. of kmaha 0.3.0): its
#                         objectives and accuracies are printed beside
#                         this run's as "before"
suppressPackageStartupMessages(library(kmaha))
options(width = 160, kmaha.num_threads = 1L)
Sys.setenv(OMP_NUM_THREADS = "1", OPENBLAS_NUM_THREADS = "1")
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(bench_dir, "common.R"))
info <- paper_datasets()
datasets <- env_list("KMAHA_BENCH_DATASETS", info$name)
splits <- seq_len(as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "5")))
sigmas <- as.numeric(env_list("KMAHA_BENCH_SIGMAS", c("1", "5")))
reps <- as.integer(Sys.getenv("KMAHA_BENCH_REPS", "1"))
out_file <- Sys.getenv("KMAHA_BENCH_OUT", file.path(bench_dir, "results", "klmnn-speed.csv"))
ref_file <- Sys.getenv("KMAHA_BENCH_REF")
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)

cat("kmaha", format(packageVersion("kmaha")), " BLAS:", extSoftVersion()["BLAS"],
    " load average:", tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")

# Median elapsed and CPU (user + system) seconds of `reps` runs of f(), and
# f()'s last value.  On a shared machine the CPU time is the steadier figure.
timed <- function(f) {
  r <- NULL
  tt <- vapply(seq_len(reps), function(i) {
    st <- system.time(r <<- suppressWarnings(f()))
    c(st[["elapsed"]], st[["user.self"]] + st[["sys.self"]])
  }, numeric(2))
  list(t = stats::median(tt[1, ]), cpu = stats::median(tt[2, ]), r = r)
}
accuracy <- function(fit, sp) mean(as.character(predict(fit, sp$xte)) == as.character(sp$yte))

# warm-up (loads the code paths)
sp <- paper_split("iris", 1)
invisible(suppressWarnings(kmaha(sp$x, sp$y, learner = "lmnn", kernel = rbf_kernel(1), k = 1)))

rows <- list()
for (ds in datasets) {
  for (s in splits) {
    sp <- paper_split(ds, s)
    if (is.null(sp)) {
      cat(ds, ": data not available\n")
      break
    }
    for (sg in sigmas) {
      kn <- timed(function() kmaha(sp$x, sp$y, learner = "nca", kernel = rbf_kernel(sg), k = 1))
      kl <- timed(function() kmaha(sp$x, sp$y, learner = "lmnn", kernel = rbf_kernel(sg), k = 1))
      z <- kl$r$kpca$coords
      lam <- kl$r$learner_fit$settings$lambda
      ln <- timed(function() nca(z, sp$y, scale = FALSE))
      ll <- timed(function() lmnn(z, sp$y, targets = kl$r$targets, lambda = lam, scale = FALSE))
      rows[[length(rows) + 1L]] <- data.frame(
        dataset = ds, split = s, sigma = sg, n = nrow(sp$x), D = ncol(z),
        knca_s = kn$t, klmnn_s = kl$t, nca_s = ln$t, lmnn_s = ll$t,
        knca_cpu = kn$cpu, klmnn_cpu = kl$cpu, nca_cpu = ln$cpu, lmnn_cpu = ll$cpu,
        objective = kl$r$convergence$objective,
        evaluations = kl$r$convergence$iterations,
        converged = kl$r$convergence$converged,
        acc_knca = accuracy(kn$r, sp), acc_klmnn = accuracy(kl$r, sp))
    }
    lin <- timed(function() kmaha(sp$x, sp$y, learner = "lmnn", kernel = "linear", k = 1))
    rows[[length(rows) + 1L]] <- data.frame(
      dataset = ds, split = s, sigma = NA_real_, n = nrow(sp$x), D = ncol(sp$x),
      knca_s = NA_real_, klmnn_s = lin$t, nca_s = NA_real_, lmnn_s = NA_real_,
      knca_cpu = NA_real_, klmnn_cpu = lin$cpu, nca_cpu = NA_real_, lmnn_cpu = NA_real_,
      objective = lin$r$convergence$objective,
      evaluations = lin$r$convergence$iterations,
      converged = lin$r$convergence$converged,
      acc_knca = NA_real_, acc_klmnn = accuracy(lin$r, sp))
    cat(".")
  }
  cat(" ", ds, "\n")
}
res <- do.call(rbind, rows)
# objectives with every digit, so that a later run compares exactly
out <- res
out$objective <- sprintf("%.17g", res$objective)
utils::write.csv(out, out_file, row.names = FALSE)
cat("cells written to", out_file, "\n\n")

kern <- res[!is.na(res$sigma), ]
lin <- res[is.na(res$sigma), ]
ref <- if (nzchar(ref_file) && file.exists(ref_file)) utils::read.csv(ref_file) else NULL
key <- function(d) paste(d$dataset, d$split, d$sigma)
if (!is.null(ref)) {
  m <- match(key(kern), key(ref))
  kern$objective_before <- ref$objective[m]
  kern$acc_before <- ref$acc_klmnn[m]
  kern$klmnn_cpu_before <- ref$klmnn_cpu[m]
  kern$lmnn_cpu_before <- ref$lmnn_cpu[m]
  m <- match(key(lin), key(ref))
  lin$objective_before <- ref$objective[m]
  lin$acc_before <- ref$acc_klmnn[m]
  lin$klmnn_cpu_before <- ref$klmnn_cpu[m]
}

# Per dataset, means over splits and sigmas.  Times: kmaha() fits (KPCA,
# targets and the learner), then the learner alone; ratio = KLMNN / KNCA of
# the means.  Objective: mean and worst relative difference to the reference
# run (negative: lower now).
rel <- function(a, b) (a - b) / b
by_ds <- split(kern, factor(kern$dataset, levels = datasets))
f4 <- function(d) { num <- vapply(d, is.numeric, NA); d[num] <- lapply(d[num], signif, 4); d }
speed <- do.call(rbind, lapply(names(by_ds), function(ds) {
  d <- by_ds[[ds]]
  out <- data.frame(dataset = ds, D = round(mean(d$D)),
                    `KNCA fit s` = mean(d$knca_s), `KLMNN fit s` = mean(d$klmnn_s),
                    ratio = mean(d$klmnn_s) / mean(d$knca_s),
                    `KNCA cpu s` = mean(d$knca_cpu), `KLMNN cpu s` = mean(d$klmnn_cpu),
                    `ratio cpu` = mean(d$klmnn_cpu) / mean(d$knca_cpu),
                    `NCA alone cpu` = mean(d$nca_cpu), `LMNN alone cpu` = mean(d$lmnn_cpu),
                    `ratio alone` = mean(d$lmnn_cpu) / mean(d$nca_cpu),
                    evaluations = mean(d$evaluations), check.names = FALSE)
  if (!is.null(ref)) {
    out$`KLMNN cpu before` <- mean(d$klmnn_cpu_before)
    out$`LMNN alone cpu before` <- mean(d$lmnn_cpu_before)
  }
  out
}))
quality <- do.call(rbind, lapply(names(by_ds), function(ds) {
  d <- by_ds[[ds]]
  out <- data.frame(dataset = ds, objective = mean(d$objective), check.names = FALSE)
  if (!is.null(ref)) {
    out$`objective before` <- mean(d$objective_before)
    out$`mean rel. diff` <- mean(rel(d$objective, d$objective_before))
    out$`worst rel. diff` <- max(rel(d$objective, d$objective_before))
    out$`acc KLMNN before` <- mean(d$acc_before)
  }
  out$`acc KLMNN` <- mean(d$acc_klmnn)
  out$`acc KNCA` <- mean(d$acc_knca)
  out
}))
cat(sprintf("KLMNN (RKLMNN default) and KNCA, sigma in {%s}, %d splits, one thread; means per dataset\n\n",
            paste(sigmas, collapse = ", "), length(splits)))
print(f4(speed), row.names = FALSE)
cat("\n")
print(f4(quality), row.names = FALSE)
cat(sprintf("\nmean over datasets: KNCA %.3f s, KLMNN %.3f s (ratio of means %.2f; per dataset %.2f-%.2f); cpu: KNCA %.3f s, KLMNN %.3f s (ratio %.2f; per dataset %.2f-%.2f)\n",
            mean(speed$`KNCA fit s`), mean(speed$`KLMNN fit s`),
            mean(speed$`KLMNN fit s`) / mean(speed$`KNCA fit s`), min(speed$ratio), max(speed$ratio),
            mean(speed$`KNCA cpu s`), mean(speed$`KLMNN cpu s`),
            mean(speed$`KLMNN cpu s`) / mean(speed$`KNCA cpu s`), min(speed$`ratio cpu`),
            max(speed$`ratio cpu`)))
if (!is.null(ref)) {
  cat(sprintf("KLMNN cpu before %.3f s, now %.3f s (%.2fx); learner alone before %.3f s, now %.3f s (%.2fx)\n",
              mean(kern$klmnn_cpu_before), mean(kern$klmnn_cpu),
              mean(kern$klmnn_cpu_before) / mean(kern$klmnn_cpu),
              mean(kern$lmnn_cpu_before), mean(kern$lmnn_cpu),
              mean(kern$lmnn_cpu_before) / mean(kern$lmnn_cpu)))
}
cat(sprintf("KLMNN mean test accuracy over %d cells: %.4f", nrow(kern), mean(kern$acc_klmnn)))
if (!is.null(ref)) {
  d <- rel(kern$objective, kern$objective_before)
  cat(sprintf(" (before %.4f); objective: mean rel. diff %+.2e, worst %+.2e, cells lower or equal %d of %d",
              mean(kern$acc_before), mean(d), max(d), sum(d <= 0), nrow(kern)))
}
cat("\n")
for (sg in sigmas) {
  d <- kern[kern$sigma == sg, ]
  cat(sprintf("  sigma %g: accuracy %.4f%s\n", sg, mean(d$acc_klmnn),
              if (!is.null(ref)) sprintf(" (before %.4f)", mean(d$acc_before)) else ""))
}
cat(sprintf("linear LMNN mean test accuracy over %d cells: %.4f%s, mean fit cpu %.3f s\n",
            nrow(lin), mean(lin$acc_klmnn),
            if (!is.null(ref)) sprintf(" (before %.4f; objective mean rel. diff %+.2e, cells identical %d of %d)",
                                       mean(lin$acc_before),
                                       mean(rel(lin$objective, lin$objective_before)),
                                       sum(lin$objective == lin$objective_before), nrow(lin))
            else "", mean(lin$klmnn_cpu)))
