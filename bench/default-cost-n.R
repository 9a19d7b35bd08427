# The cost of the default in n (issue 37): kmaha(x, y, seed = 1) at its
# defaults, one thread, each configuration in a fresh child process: CPU
# seconds (user + system of the child), elapsed seconds, peak resident
# memory of the child (VmHWM, MB; `base_mb` is the peak before the fit: R,
# the package and the data), the choice, and the test accuracy on held-out
# rows of the same pool.  Neighbouring sizes (1999, 2000, 2001) show any
# step in the cost.
#
#   Rscript bench/default-cost-n.R [out.csv] [sizes] [inputs] [set] [variant]
#
# sizes: comma list (500,1000,1999,2000,2001,4000,16000); inputs: comma
# list (20,500), the inputs of threenorm; set: "threenorm"
# (mlbench.threenorm(n + 2000, d = inputs): two classes, test on the 2000
# further rows), "waveform" (mlbench.waveform(n + 2000): 21 inputs, three
# classes) or "letter" (mlbench's LetterRecognition: 16 inputs, 26 classes;
# training rows from the first 16 000, test on the last 4 000); variant:
# "current" (the installed package as it is) or "0.5.2" (0.5.2's large-n
# settings, set in the child's copy of the namespace: all rows, exact KPCA
# of every component up to 2000 rows; above, the choice on a subsample of
# 1000 rows with KPCA of rank 100, the fit with Nystrom KPCA of 1000
# landmarks and rank 100) or "scorecap" (above 2000 rows the subsample's
# KPCA keeps at most as many components as the final Nystrom fit will).  Rows of configurations already in `out` are kept (delete
# them to re-run).
args <- commandArgs(TRUE)
out <- if (length(args) >= 1) args[1] else "bench/results/default_cost_n.csv"
sizes <- if (length(args) >= 2) as.integer(strsplit(args[2], ",")[[1]]) else
  c(500L, 1000L, 1999L, 2000L, 2001L, 4000L, 16000L)
inputs <- if (length(args) >= 3) as.integer(strsplit(args[3], ",")[[1]]) else c(20L, 500L)
set <- if (length(args) >= 4) args[4] else "threenorm"
variant <- if (length(args) >= 5) args[5] else "current"
if (set != "threenorm") inputs <- NA_integer_
child <- function(n, p) {
  data <- switch(set,
    threenorm = sprintf("d <- mlbench.threenorm(%d + 2000, d = %d); x <- d$x; y <- d$classes; tr <- seq_len(%d)", n, p, n),
    waveform = sprintf("d <- mlbench.waveform(%d + 2000); x <- d$x; y <- d$classes; tr <- seq_len(%d)", n, n),
    letter = sprintf("data(LetterRecognition, package = \"mlbench\"); x <- as.matrix(LetterRecognition[, -1]); y <- LetterRecognition$lettr; keep <- c(seq_len(%d), 16001:20000); x <- x[keep, ]; y <- y[keep]; tr <- seq_len(%d)", n, n))
  old <- if (variant == "0.5.2") '
    ns <- asNamespace("kmaha")
    put <- function(nm, v) { unlockBinding(nm, ns); assign(nm, v, envir = ns); lockBinding(nm, ns) }
    put("auto_large", list(n = 2000L, n_choose = 1000L, landmarks = 1000L, rank = 100L))
    if (exists("large_settings", ns)) put("large_settings", function(n)
      list(n = 2000L, n_choose = 1000L, rank = 100L, landmarks = 1000L, fit_rank = 100L))' else
  if (variant == "scorecap") '
    ns <- asNamespace("kmaha")
    put <- function(nm, v) { unlockBinding(nm, ns); assign(nm, v, envir = ns); lockBinding(nm, ns) }
    put("large_settings", local({ f <- get("large_settings", ns); function(n) {
      s <- f(n); if (!is.null(s$fit_rank)) s$rank <- s$fit_rank; s } }))' else ""
  code <- sprintf('
    suppressMessages({library(kmaha); library(mlbench)})
    options(kmaha.num_threads = 1)
    %s
    hwm <- function() as.numeric(sub("[^0-9]*([0-9]+).*", "\\\\1",
      grep("^VmHWM", readLines("/proc/self/status"), value = TRUE))) / 1024
    set.seed(37)
    %s
    invisible(kmaha(x[1:60, ], droplevels(y[1:60]), learner = "dne", kernel = "linear"))
    base <- hwm()
    t0 <- proc.time()
    fit <- suppressWarnings(kmaha(x[tr, ], y[tr], seed = 1))
    t <- proc.time() - t0
    acc <- mean(predict(fit, x[-tr, ]) == y[-tr])
    cv <- fit$kernel_choice$cv
    cat(sprintf("RESULT\\t%%.2f\\t%%.2f\\t%%.0f\\t%%.0f\\t%%.4f\\t%%s\\t%%s\\t%%s\\n",
                t[["user.self"]] + t[["sys.self"]], t[["elapsed"]], hwm(), base, acc,
                cv$curve$label[cv$best], fit$learner, fit$feature_map$type))',
    old, data)
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  res <- system2(file.path(R.home("bin"), "Rscript"), f, stdout = TRUE,
                 env = c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"))
  line <- grep("^RESULT", res, value = TRUE)
  if (!length(line)) stop(paste(res, collapse = "\n"))
  v <- strsplit(line, "\t")[[1]]
  data.frame(set = set, n = n, p = if (is.na(p)) switch(set, waveform = 21L, letter = 16L) else p,
             variant = variant, cpu_s = as.numeric(v[2]), elapsed_s = as.numeric(v[3]),
             peak_mb = as.numeric(v[4]), base_mb = as.numeric(v[5]),
             accuracy = as.numeric(v[6]), chosen = v[7], learner = v[8], feature_map = v[9],
             version = as.character(packageVersion("kmaha")),
             load = readLines("/proc/loadavg"), stringsAsFactors = FALSE)
}
old <- if (file.exists(out)) utils::read.csv(out, stringsAsFactors = FALSE)
rows <- list(old)
for (p in inputs) for (n in sizes) {
  pp <- if (is.na(p)) switch(set, waveform = 21L, letter = 16L) else p
  if (!is.null(old) && any(old$set == set & old$n == n & old$p == pp & old$variant == variant)) next
  r <- child(n, p)
  print(r)
  rows[[length(rows) + 1L]] <- r
  utils::write.csv(do.call(rbind, rows), out, row.names = FALSE)
}
