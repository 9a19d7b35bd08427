# The benchmark suite's runner: every benchmark of bench/ (the list below;
# bench/README.md says what each measures and where its result is), each
# run in a fresh Rscript from the package's top directory against the
# installed kmaha.
#
#   Rscript bench/run.R              # lists the benchmarks
#   Rscript bench/run.R quick        # the quick ones (minutes each; make bench)
#   Rscript bench/run.R all          # every one (hours; some need more, see `needs`)
#   Rscript bench/run.R NAME ...     # these, e.g. Rscript bench/run.R kpca tune-grid
#
# A benchmark whose `needs` are missing (an R package, python3 with
# scikit-learn, a Slurm cluster) is skipped, saying why.  Prints each
# benchmark's time and exit status, and exits with status 1 when one
# failed.  The studies behind the defaults are not benchmarks: they are in
# bench/studies/ (its README lists them and how to run each).

benchmarks <- list(
  list(name = "kpca", script = "kpca.R", quick = TRUE, needs = "kernlab",
       what = "Gram matrix and KPCA against kernlab::kpca()"),
  list(name = "symeig", script = "symeig.R", quick = TRUE, needs = character(),
       what = "the core's symmetric eigensolver against Armadillo's and R's"),
  list(name = "learners", script = "learners.R", quick = FALSE, needs = "python3:sklearn",
       what = "NCA, LMNN and DNE time and memory against scikit-learn and references"),
  list(name = "nca-gemm", script = "nca-gemm.R", quick = TRUE,
       needs = c("Rcpp", "RcppArmadillo", "RcppEigen"),
       what = "NCA's product kernel against the system BLAS"),
  list(name = "lmnn-span", script = "lmnn-span.R", quick = FALSE, needs = character(),
       what = "LMNN at p >> n, KLMNN, time limits of the kernel-trick learners"),
  list(name = "klmnn-speed", script = "klmnn-speed.R", quick = TRUE, needs = character(),
       what = "one KLMNN fit with and without regularization"),
  list(name = "kernel-choice", script = "kernel_choice_speed.R", quick = TRUE, needs = character(),
       what = "CV, alignment and unweighted-kernel overheads at n = 200"),
  list(name = "kernel-sources", script = "kernel-sources.R", quick = TRUE, needs = "kernlab",
       what = "R-function, kernlab and built-in kernels"),
  list(name = "cv-speed", script = "cv_speed.R", quick = FALSE, needs = "python3:sklearn",
       what = "kernel choice by CV (KNCA) against scikit-learn's pipeline"),
  list(name = "auto-speed", script = "auto-speed.R", quick = TRUE, needs = character(),
       what = "kernel = \"auto\" against the fast CV"),
  list(name = "default-cost", script = "default-cost.R", quick = FALSE, needs = "mlbench",
       what = "CPU of the default kmaha(x, y) over a linear fit, 17 hold-out sets"),
  list(name = "default-accept", script = "default-accept.R", quick = FALSE,
       needs = c("mlbench", "modeldata", "ranger", "kernlab", "glmnet"),
       what = "the default's accuracy and CPU on 31 sets against ranger, ksvm, glmnet (run with 0.5.2's library too: the script's `old` mode)"),
  list(name = "default-cost-n", script = "default-cost-n.R", quick = FALSE, needs = "mlbench",
       what = "the default's CPU, memory and accuracy in n (500-16 000 rows)"),
  list(name = "latency-entry", script = "latency-entry.R", quick = FALSE, needs = character(),
       what = "how soon a CPU-time limit stops each long entry point"),
  list(name = "nca-span", script = "nca-span.R", quick = FALSE, needs = character(),
       what = "nca() and the NCA default at p >> n: CPU and peak memory"),
  list(name = "mlkr", script = "mlkr.R", quick = TRUE, needs = "mlbench",
       what = "mlkr() time and objective against plain R + optim(L-BFGS-B)"),
  list(name = "regression-accept", script = "regression-accept.R", quick = FALSE,
       needs = c("mlbench", "modeldata", "ranger", "kknn"),
       what = "the regression default's test RMSE and CPU on 12 sets against Euclidean k-NN, kknn, ranger, mlkr()"),
  list(name = "learners-new", script = "learners-new.R", quick = FALSE, needs = c("lfda", "dml", "mlbench"),
       what = "LFDA, RCA, MMC, ITML against lfda, dml and Euclidean 1-NN"),
  list(name = "lfda-klfda", script = "lfda-klfda.R", quick = FALSE, needs = "lfda",
       what = "kernel LFDA by the KPCA trick against lfda::klfda (kernel trick), same RBF kernels, the paper's nine sets"),
  list(name = "auto-large", script = "auto-large.R", quick = TRUE, needs = "mlbench",
       what = "the default on Letter (16 000 rows)"),
  list(name = "scale", script = "scale.R", quick = FALSE, needs = c("mlbench", "python3:sklearn"),
       what = "NCA, LMNN, DNE, KNCA with Nystrom KPCA at n = 1000-16000"),
  list(name = "call-overhead", script = "call-overhead.R", quick = TRUE, needs = character(),
       what = "time of one small call"),
  list(name = "latency", script = "latency.R", quick = FALSE, needs = character(),
       what = "how soon an interrupt or a time limit stops the long paths"),
  list(name = "cluster", script = "cluster.R", quick = TRUE, needs = "parallelly",
       what = "one split's fast CV on 1 and 2 local cluster workers"),
  list(name = "slurm", script = "slurm.R", quick = FALSE, needs = c("future.batchtools", "slurm"),
       what = "kernel choice and a reproduction as Slurm jobs"),
  list(name = "tune-grid", script = "tune-grid.R", quick = FALSE,
       needs = c("parsnip", "tune", "workflows", "rsample", "yardstick", "kknn", "ranger", "mlbench"),
       what = "tune_grid() of the kmaha engine at its defaults against kknn and ranger")
)

# Why a benchmark cannot run here (its first missing need), or NULL.
missing_need <- function(needs) {
  for (n in needs) {
    ok <- if (n == "slurm") {
      nzchar(Sys.which("sbatch"))
    } else if (startsWith(n, "python3:")) {
      mod <- sub("^python3:", "", n)
      nzchar(Sys.which("python3")) &&
        system2("python3", c("-c", shQuote(sprintf("import %s", mod))),
                stdout = FALSE, stderr = FALSE) == 0L
    } else {
      requireNamespace(n, quietly = TRUE)
    }
    if (!ok) return(n)
  }
  NULL
}

# The package's top directory: the parent of this script's directory.
me <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1])
top <- normalizePath(file.path(dirname(if (is.na(me)) "bench/run.R" else me), ".."))
setwd(top)

args <- commandArgs(TRUE)
names_all <- vapply(benchmarks, `[[`, "", "name")
if (!length(args)) {
  cat("Benchmarks (Rscript bench/run.R quick | all | NAME ...):\n")
  for (b in benchmarks) {
    cat(sprintf("  %-15s %-5s %s (bench/%s)\n", b$name, if (b$quick) "quick" else "",
                b$what, b$script))
  }
  quit(status = 0)
}
chosen <- if (identical(args, "all")) {
  benchmarks
} else if (identical(args, "quick")) {
  Filter(function(b) b$quick, benchmarks)
} else {
  unknown <- setdiff(args, names_all)
  if (length(unknown)) {
    stop(sprintf("unknown benchmark(s): %s; run Rscript bench/run.R for the list",
                 paste(unknown, collapse = ", ")), call. = FALSE)
  }
  benchmarks[match(args, names_all)]
}

rscript <- file.path(R.home("bin"), "Rscript")
status <- character()
for (b in chosen) {
  need <- missing_need(b$needs)
  if (!is.null(need)) {
    cat(sprintf("== %s: skipped (needs %s)\n", b$name, need))
    status[b$name] <- "skipped"
    next
  }
  cat(sprintf("== %s: Rscript bench/%s\n", b$name, b$script))
  t0 <- proc.time()[["elapsed"]]
  rc <- system2(rscript, file.path("bench", b$script))
  cat(sprintf("== %s: exit status %d after %.0f s\n", b$name, rc, proc.time()[["elapsed"]] - t0))
  status[b$name] <- if (rc == 0L) "ok" else "failed"
}
cat("\n")
print(table(factor(status, c("ok", "failed", "skipped"))))
quit(status = if (any(status == "failed")) 1L else 0L)
