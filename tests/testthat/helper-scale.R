# Shared by the thread and Nystrom tests: a synthetic problem large enough
# that the core's blocked loops cut it into several blocks (so two threads
# really share the work), and a way to run code under a thread setting.

scale_data <- function(n = 600, D = 5, seed = 11) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- matrix(stats::rnorm(n * D), n, D) + 1.5 * as.integer(y)
  x[, 2] <- x[, 2] * 2
  list(x = x, y = y)
}

# Evaluate expr with options(kmaha.num_threads = n), restoring the option.
with_threads <- function(n, expr) {
  old <- options(kmaha.num_threads = n)
  on.exit(options(old), add = TRUE)
  force(expr)
}

# Evaluate expr with the environment variable KMAHA_NUM_THREADS set to
# `value` (NA: unset), restoring it afterwards.
with_thread_env <- function(value, expr) {
  old <- Sys.getenv("KMAHA_NUM_THREADS", NA)
  on.exit(if (is.na(old)) Sys.unsetenv("KMAHA_NUM_THREADS") else
    Sys.setenv(KMAHA_NUM_THREADS = old), add = TRUE)
  if (is.na(value)) Sys.unsetenv("KMAHA_NUM_THREADS") else
    Sys.setenv(KMAHA_NUM_THREADS = value)
  force(expr)
}
