# How soon a long computation stops once R asks it to: the latency of a
# user interrupt (SIGINT) and of a time limit (setTimeLimit(elapsed = ),
# what R.utils::withTimeout() uses) on kmaha's long paths.  The test suite
# checks that both stop these calls with the right condition
# (tests/testthat/test-interrupt.R, test-time-limit.R); how fast is measured
# here, because it depends on the machine and its load.
#
# For each path, delay, number of threads and repetition:
# * interrupt: a background shell sleeps `delay` seconds, writes the time and
#   sends SIGINT to this process; latency = the time the call returned minus
#   the time the signal was sent;
# * time limit: setTimeLimit(elapsed = delay); latency = the time the call
#   returned minus the time the limit fell due.
# The core polls between chunks of work, so the latency is the time to the
# next poll: it depends on where the signal lands, hence two delays.  Every
# computation would run for several seconds at least (most for minutes); a
# call that returned without noticing the signal or the limit is reported
# as "finished".
#
# Run: Rscript bench/latency.R (kmaha installed; about 25 minutes on the
# loaded project machine).  Environment: KMAHA_LATENCY_REPS (default 3),
# KMAHA_LATENCY_DELAYS (seconds, default "1,3"), KMAHA_LATENCY_THREADS
# (default "1,2"), KMAHA_LATENCY_PATHS (default all), KMAHA_LATENCY_OUT
# (default bench/results/latency.csv).  Prints the summary quoted in
# bench/README.md.

library(kmaha)
source("bench/common.R")  # env_list()

reps <- as.integer(Sys.getenv("KMAHA_LATENCY_REPS", "3"))
threads <- as.integer(env_list("KMAHA_LATENCY_THREADS", c("1", "2")))
delays <- as.numeric(env_list("KMAHA_LATENCY_DELAYS", c("1", "3")))
out_csv <- Sys.getenv("KMAHA_LATENCY_OUT", file.path("bench", "results", "latency.csv"))

set.seed(1)
x <- matrix(rnorm(5000 * 10), 5000)
y <- factor(rep(1:2, 2500))
xx <- matrix(rnorm(3000 * 5), 3000)
yy <- factor(rep(1:2, 1500))
queries <- xx[rep(1:3000, 400), ]
xl <- matrix(rnorm(20000 * 10), 20000)
yl <- factor(rep(1:2, 10000))
x20 <- matrix(rnorm(3000 * 20), 3000)

# The long paths: one call each, stopped after a delay.
paths <- list(
  nca = function() nca(x, y, max_iter = 1e6, tol = 1e-300),
  knca = function() knca(x[1:800, ], y[1:800], max_iter = 1e6, tol = 1e-300),
  lmnn_L = function() lmnn(x[1:3000, ], y[1:3000], dim = 5, max_iter = 1e6, tol = 1e-300),
  lmnn_M = function() lmnn(x20, y[1:3000], solver = "M", max_iter = 1e6, tol = 1e-300),
  dne = function() dne(xl, yl),
  kpca_truncated = function() kpca(xx, rbf_kernel(1), rank = 1000, tol = 1e-300,
                                   method = "truncated"),
  kpca_full = function() kpca(xx, rbf_kernel(1), method = "full", tol = 1e-300),
  kpca_nystrom = function() kpca(xl, rbf_kernel(1), method = "nystrom", landmarks = 2000,
                                 rank = 500, tol = 1e-300),
  knn = function() knn_classify(xx, yy, queries, k = 3)
)
only <- env_list("KMAHA_LATENCY_PATHS", names(paths))
paths <- paths[only]

now <- function() as.numeric(Sys.time())

# One interrupted call: list(outcome, latency).
interrupt_after <- function(f, delay) {
  stamp <- tempfile()
  on.exit(unlink(stamp))
  out <- tryCatch({
    system(sprintf("(sleep %g; date +%%s.%%N > %s; kill -INT %d) >/dev/null 2>&1 &",
                   delay, stamp, Sys.getpid()))
    suppressWarnings(f())
    "finished"
  }, interrupt = function(e) "interrupted")
  back <- now()
  if (out == "finished") {
    # let the pending signal arrive here, not in the next call
    tryCatch(Sys.sleep(delay + 1), interrupt = function(e) NULL)
    return(list(outcome = out, latency = NA_real_))
  }
  for (i in 1:50) if (!file.exists(stamp) || !length(readLines(stamp, warn = FALSE))) Sys.sleep(0.01)
  list(outcome = out, latency = back - as.numeric(readLines(stamp, warn = FALSE)))
}

# One call under an elapsed-time limit: list(outcome, latency).
limit_after <- function(f, delay) {
  due <- now() + delay
  setTimeLimit(elapsed = delay, transient = TRUE)
  out <- tryCatch({
    suppressWarnings(f())
    "finished"
  }, error = function(e) if (grepl("time limit", conditionMessage(e))) "limited" else
    paste("error:", conditionMessage(e)))
  back <- now()
  setTimeLimit()
  list(outcome = out, latency = if (out == "limited") back - due else NA_real_)
}

load_now <- function() {
  if (file.exists("/proc/loadavg")) strsplit(readLines("/proc/loadavg"), " ")[[1]][1] else NA
}

# small fits first: they load what the long calls need
small <- as.matrix(iris[, 1:4])
invisible(suppressWarnings(list(nca(small, iris$Species, max_iter = 5),
                                lmnn(small, iris$Species, max_iter = 5),
                                kpca(small, rbf_kernel(1), rank = 2))))

load_start <- load_now()
t_start <- now()
rows <- list()
for (delay in delays) for (th in threads) {
  old <- kmaha_threads(th)
  for (nm in names(paths)) {
    for (r in seq_len(reps)) {
      for (kind in c("interrupt", "time limit")) {
        m <- if (kind == "interrupt") interrupt_after(paths[[nm]], delay) else
          limit_after(paths[[nm]], delay)
        rows[[length(rows) + 1L]] <- data.frame(path = nm, kind = kind, delay = delay,
                                                threads = th, rep = r, outcome = m$outcome,
                                                latency = round(m$latency, 4))
        cat(sprintf("%-15s %-10s delay %g threads %d rep %d: %-11s %s\n", nm, kind, delay,
                    th, r, m$outcome,
                    if (is.na(m$latency)) "" else sprintf("%.3f s", m$latency)))
      }
    }
  }
  kmaha_threads(old)
}
res <- do.call(rbind, rows)
dir.create(dirname(out_csv), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(res, out_csv, row.names = FALSE)

cat(sprintf("\n%s; R %s, kmaha %s, %d cores, load average %s at the start and %s at the end (%.0f s)\n",
            format(Sys.Date()), getRversion(), utils::packageVersion("kmaha"),
            parallel::detectCores(), load_start, load_now(), now() - t_start))
cat("BLAS:", extSoftVersion()[["BLAS"]], " LAPACK:", La_library(), "\n\n")
cat("latency in seconds, median and maximum over the", reps * length(delays),
    "runs (delays", paste(delays, collapse = " and "), "s); \"finished\": runs that returned",
    "without noticing\n\n")
cat("| path | threads | interrupt median | interrupt max | time limit median | time limit max | finished |\n")
cat("|---|---|---|---|---|---|---|\n")
stat <- function(v, f) {
  v <- v[!is.na(v)]
  if (length(v)) sprintf("%.2f", f(v)) else "finished first"
}
for (nm in names(paths)) for (th in threads) {
  here <- res$path == nm & res$threads == th
  a <- res$latency[here & res$kind == "interrupt"]
  b <- res$latency[here & res$kind == "time limit"]
  cat(sprintf("| %s | %d | %s | %s | %s | %s | %d of %d |\n", nm, th,
              stat(a, stats::median), stat(a, max), stat(b, stats::median), stat(b, max),
              sum(res$outcome[here] == "finished"), sum(here)))
}
