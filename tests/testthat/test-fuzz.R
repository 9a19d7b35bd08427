# Property-based fuzzing (the generator and the property are in
# helper-fuzz.R): every generated call returns NaN-free outputs or fails with
# a clear R error naming an argument.  The cases run in a child R process, so
# a crash fails this test instead of ending the test run.  The seed is fixed
# (KMAHA_FUZZ_SEED changes it); KMAHA_SLOW_TESTS runs ten times more cases.

test_that("random small problems give NaN-free results or clear errors", {
  skip_on_cran()
  seed <- as.integer(Sys.getenv("KMAHA_FUZZ_SEED", "20260301"))
  n_cases <- if (nzchar(Sys.getenv("KMAHA_SLOW_TESTS"))) 1500L else 150L
  res <- run_in_child(fuzz_run, list(seed = seed, n_cases = n_cases))
  expect_identical(nrow(res), n_cases)
  bad <- res[!grepl("^(ok|clear error)", res$outcome), ]
  expect(nrow(bad) == 0L,
         sprintf("%d of %d fuzz cases (seed %d) failed:\n%s", nrow(bad), n_cases, seed,
                 paste(utils::capture.output(print(bad, right = FALSE)), collapse = "\n")))
  # The generator reaches the learners: most cases fit.
  expect_gt(mean(res$outcome == "ok"), 0.4)
})
