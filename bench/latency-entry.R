# How soon a time limit stops kmaha's long entry points once it is due
# (issue 37): reproduce_paper() (sequential, and under a multisession
# plan), the kernel-trick learners, kmaha() with each kind of `kernel`,
# score_candidates() and align_kernels().  bench/latency.R measures the
# compiled loops of the learners (interrupts and elapsed limits); this
# script measures the R loops around them, where 0.5.2 lost limits.
#
# Each path runs in its own child R process (one thread), first without a
# limit (its CPU seconds `total`), then under CPU-time limits that fall due
# at a quarter, half and three quarters of `total`.
# Latency = the CPU seconds of the call when the error arrived minus the
# limit; CPU time, not elapsed, so that the machine's load does not count.
# Under a multisession plan the work runs in the workers and this process
# waits, so that path uses elapsed-time limits (at the same fractions of
# its elapsed time) and elapsed latency.  "finished": the call returned
# without the error (the limit was lost).
#
#   Rscript bench/latency-entry.R [out.csv] [paths]
#
# paths: comma list of the names below (all by default).  Results:
# bench/results/latency_entry.csv; prints a summary table.
args <- commandArgs(TRUE)
out <- if (length(args) >= 1) args[1] else "bench/results/latency_entry.csv"
paths <- c(
  repro_seq = 'reproduce_paper(datasets = "ionosphere", learners = "lmnn", kernels = c("cv", "unweighted"), splits = 4)',
  repro_multisession = 'reproduce_paper(datasets = "ionosphere", learners = "lmnn", kernels = c("cv", "unweighted"), splits = 4)',
  knca = 'knca(x[1:600, ], y[1:600], max_iter = 40, tol = 1e-300)',
  klmnn = 'klmnn(x[1:600, ], y[1:600], max_iter = 40, tol = 1e-300)',
  kdne = 'kdne(x[1:2000, ], y[1:2000])',
  kmaha_auto = 'kmaha(x[1:400, ], y[1:400], seed = 1)',
  kmaha_cv = 'kmaha(x[1:400, ], y[1:400], kernel = "cv", seed = 1)',
  kmaha_align = 'kmaha(x[1:1000, ], y[1:1000], kernel = "align")',
  kmaha_unweighted = 'kmaha(x[1:1000, ], y[1:1000], kernel = "unweighted")',
  kmaha_rbf = 'kmaha(x[1:1000, ], y[1:1000], kernel = rbf_kernel(1))',
  kmaha_linear = 'kmaha(x, y, kernel = "linear", learner_args = list(max_iter = 100, tol = 1e-300))',
  kmaha_precomputed = 'kmaha(K, y[1:1000], kernel = "precomputed")',
  kmaha_scores = 'kmaha(x[1:400, ], y[1:400], kernel = sc)',
  score_candidates = 'score_candidates(x[1:400, ], y[1:400], seed = 1)',
  align_kernels = 'align_kernels(x[1:2000, ], y[1:2000])')
if (length(args) >= 2) paths <- paths[strsplit(args[2], ",")[[1]]]
fractions <- c(0.25, 0.5, 0.75)

child <- function(name, expr) {
  multi <- name == "repro_multisession"
  code <- sprintf('
    suppressMessages(library(kmaha))
    options(kmaha.num_threads = 1)
    set.seed(1)
    x <- matrix(rnorm(5000 * 10), 5000)
    y <- factor(rep(1:2, 2500))
    invisible(suppressWarnings(reproduce_paper(datasets = "iris", learners = "dne",
                                               kernels = "linear", splits = 1)))
    sc <- if (%s) score_candidates(x[1:400, ], y[1:400], seed = 1)
    K <- kernel_matrix(rbf_kernel(1), scale(x[1:1000, ]))
    if (%s) future::plan(future::multisession, workers = 2)
    clock <- function() { t <- proc.time(); if (%s) t[["elapsed"]] else t[["user.self"]] + t[["sys.self"]] }
    run <- function() suppressWarnings(%s)
    t0 <- clock(); invisible(run()); total <- clock() - t0
    for (f in c(%s)) {
      lim <- f * total
      t0 <- clock()
      if (%s) setTimeLimit(elapsed = lim, transient = TRUE) else setTimeLimit(cpu = lim, transient = TRUE)
      r <- tryCatch({ run(); "finished" }, error = function(e) conditionMessage(e))
      used <- clock() - t0
      setTimeLimit()
      cat(sprintf("RESULT\\t%%.2f\\t%%.2f\\t%%.3f\\t%%.3f\\t%%s\\n", f, total, lim, used - lim,
                  if (grepl("time limit", r)) "limited" else
                  if (r == "finished") (if (used < lim) "finished before due" else "finished after due") else
                  paste("error:", gsub("[\\t\\n]", " ", r))))
    }', if (name == "kmaha_scores") "TRUE" else "FALSE", if (multi) "TRUE" else "FALSE",
    if (multi) "TRUE" else "FALSE", expr, paste(fractions, collapse = ", "),
    if (multi) "TRUE" else "FALSE")
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  res <- system2(file.path(R.home("bin"), "Rscript"), f, stdout = TRUE,
                 env = c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"))
  lines <- grep("^RESULT", res, value = TRUE)
  if (!length(lines)) stop(paste(res, collapse = "\n"))
  v <- do.call(rbind, strsplit(lines, "\t"))
  data.frame(path = name, clock = if (multi) "elapsed" else "cpu",
             fraction = as.numeric(v[, 2]), total_s = as.numeric(v[, 3]),
             limit_s = as.numeric(v[, 4]), latency_s = as.numeric(v[, 5]),
             outcome = v[, 6], version = as.character(packageVersion("kmaha")),
             stringsAsFactors = FALSE)
}
rows <- list()
for (nm in names(paths)) {
  r <- child(nm, paths[[nm]])
  print(r)
  rows[[nm]] <- r
  res <- do.call(rbind, rows)
  dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
  utils::write.csv(res, out, row.names = FALSE)
}
res <- do.call(rbind, rows)
cat(sprintf("\nkmaha %s, load %s\n", packageVersion("kmaha"), readLines("/proc/loadavg")))
# "finished after due": the call returned, past the limit, before its next
# poll (its latency is how late it returned); "finished before due": the
# run was faster than the first, unlimited one.
cat("| path | clock | total s | latency median | latency max | runs: stopped / returned late / done early |\n|---|---|---|---|---|---|\n")
for (nm in unique(res$path)) {
  r <- res[res$path == nm, ]
  late <- r$outcome %in% c("limited", "finished after due")
  cat(sprintf("| %s | %s | %.1f | %.2f | %.2f | %d / %d / %d |\n", nm, r$clock[1], r$total_s[1],
              if (any(late)) stats::median(r$latency_s[late]) else NA,
              if (any(late)) max(r$latency_s[late]) else NA, sum(r$outcome == "limited"),
              sum(r$outcome == "finished after due"), sum(r$outcome == "finished before due")))
}
