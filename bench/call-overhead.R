# What one call costs beyond its computation: predict() of 3 rows and nca()
# on iris, in a session that set no thread count (the default thread rule
# reads the machine's CPUs on every call; 0.5.2 runs the `nproc` program
# once per session instead of once per call).  Elapsed and CPU seconds per
# call (median of 5 rounds of `reps` calls).
#
#   Rscript bench/call-overhead.R [out.csv] [reps]
#
# Point R_LIBS at the library of the version to measure; rows are appended
# to `out` (default bench/results/call_overhead.csv).
suppressMessages(library(kmaha))
args <- commandArgs(TRUE)
out <- if (length(args) >= 1) args[1] else "bench/results/call_overhead.csv"
reps <- if (length(args) >= 2) as.integer(args[2]) else 200L
x <- as.matrix(iris[, 1:4])
y <- iris$Species
fit <- nca(x, y)
new <- x[c(1, 51, 101), ]
per_call <- function(f) {
  r <- replicate(5, {
    t0 <- proc.time()
    for (i in seq_len(reps)) f()
    t <- proc.time() - t0
    c(elapsed = t[["elapsed"]], cpu = t[["user.self"]] + t[["sys.self"]]) / reps
  })
  apply(r, 1L, stats::median)
}
p <- per_call(function() predict(fit, new))
n <- per_call(function() nca(x, y))
res <- data.frame(version = as.character(packageVersion("kmaha")),
                  call = c("predict(fit, 3 rows)", "nca(iris)"),
                  elapsed_ms = 1000 * c(p[["elapsed"]], n[["elapsed"]]),
                  cpu_ms = 1000 * c(p[["cpu"]], n[["cpu"]]),
                  threads = kmaha_threads())
print(res, row.names = FALSE)
utils::write.table(res, out, sep = ",", row.names = FALSE, append = file.exists(out),
                   col.names = !file.exists(out))
