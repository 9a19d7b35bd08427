# Runs the testthat suite against the installed kmaha and prints the totals
# as the last line: "N passed, N failed, N skipped".  KMAHA_TEST_FILTER (a
# regular expression on the test file names, as testthat's `filter`) runs a
# subset.
library(testthat)
# Some suggested packages query the time zone on load; fix it for quiet runs.
if (!nzchar(Sys.getenv("TZ"))) Sys.setenv(TZ = "UTC")
# Run the whole suite, including the tests that CRAN would skip.
if (!nzchar(Sys.getenv("NOT_CRAN"))) Sys.setenv(NOT_CRAN = "true")
filter <- Sys.getenv("KMAHA_TEST_FILTER", "")
res <- testthat::test_dir("tests/testthat", package = "kmaha",
                          filter = if (nzchar(filter)) filter else NULL,
                          load_package = "installed",
                          reporter = testthat::ProgressReporter$new(show_praise = FALSE),
                          stop_on_failure = FALSE)
df <- as.data.frame(res)
passed <- sum(df$passed)
failed <- sum(df$failed) + sum(df$error)
skipped <- sum(df$skipped)
# The tests that failed, named again just above the totals: the progress
# reporter prints them where they happened, which a log's tail may not show.
bad <- df[df$failed > 0 | df$error, , drop = FALSE]
if (nrow(bad)) {
  cat("\nFailed or stopped with an error:\n")
  cat(sprintf("  %s: %s\n", bad$file, bad$test), sep = "")
}
cat(sprintf("\n%d passed, %d failed, %d skipped\n", passed, failed, skipped))
quit(status = if (failed > 0) 1 else 0)
