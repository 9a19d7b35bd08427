# Time limits (setTimeLimit(), hence R.utils::withTimeout()) and user
# interrupts inside the kernel-trick learners: their long C++ stretches
# (eigen-decompositions, n x n products and triangular solves, the solvers'
# evaluations) poll for interrupts, so a limit arrives as R's own error, an
# interrupt as an interrupt, and R is usable afterwards.  Each call below
# would run for many seconds.  How soon the limit arrives is measured in
# bench/lmnn-span.R, not here (no test depends on the clock).

kernel_trick_child <- function(mode) {
  run_in_child(function(mode) {
    library(kmaha)
    set.seed(1)
    n <- 1000
    y <- factor(rep(1:3, length.out = n))
    x <- matrix(rnorm(n * 10), n) + 0.7 * as.integer(y)
    calls <- list(
      klmnn = quote(klmnn(x, y, kernel = rbf_kernel(1), max_iter = 1e5, tol = 1e-12)),
      knca = quote(knca(x, y, kernel = rbf_kernel(1), max_iter = 1e5, tol = 1e-300)),
      kdne = quote(kdne(rbind(x, x[1:400, ] + 0.01), c(y, y[1:400]),
                        kernel = rbf_kernel(1)))
    )
    stopped <- function(expr) {
      if (mode == "limit") {
        setTimeLimit(elapsed = 1, transient = TRUE)
      } else {
        system(sprintf("(sleep 1; kill -INT %d) >/dev/null 2>&1 &", Sys.getpid()))
      }
      out <- tryCatch({
        eval(expr)
        "finished"
      }, error = function(e) e, interrupt = function(e) "interrupt")
      setTimeLimit()
      list(out = out, printed = utils::capture.output(print(out)))
    }
    runs <- lapply(calls, stopped)
    # R goes on: a small fit of each afterwards
    idx <- c(1:10, 51:60, 101:110)
    after <- list(
      klmnn = klmnn(iris[idx, 1:4], iris$Species[idx], max_iter = 30)$L,
      knca = knca(iris[idx, 1:4], iris$Species[idx], dim = 2, max_iter = 30)$L,
      kdne = kdne(iris[idx, 1:4], iris$Species[idx], dim = 2)$L)
    list(runs = runs, after = after)
  }, args = list(mode = mode))
}

same_small_fits <- function(after) {
  idx <- c(1:10, 51:60, 101:110)
  expect_equal(after$klmnn, suppressWarnings(
    klmnn(iris[idx, 1:4], iris$Species[idx], max_iter = 30))$L)
  expect_equal(after$knca, suppressWarnings(
    knca(iris[idx, 1:4], iris$Species[idx], dim = 2, max_iter = 30))$L)
  expect_equal(after$kdne, kdne(iris[idx, 1:4], iris$Species[idx], dim = 2)$L)
}

test_that("a time limit stops klmnn(), knca() and kdne() with R's own error", {
  skip_on_os("windows")
  skip_on_cran()
  res <- suppressWarnings(kernel_trick_child("limit"))
  for (nm in names(res$runs)) {
    out <- res$runs[[nm]]$out
    expect_true(inherits(out, "error"), label = paste(nm, "gave", format(out)))
    if (!inherits(out, "error")) next
    expect_identical(conditionMessage(out), "reached elapsed time limit", label = nm)
    expect_null(conditionCall(out))
    expect_false(any(grepl(".Call|_kmaha_|cpp_", res$runs[[nm]]$printed)), label = nm)
  }
  same_small_fits(res$after)
})

test_that("a user interrupt stops klmnn(), knca() and kdne() as an interrupt", {
  skip_on_os("windows")
  skip_on_cran()
  res <- suppressWarnings(kernel_trick_child("interrupt"))
  for (nm in names(res$runs)) {
    expect_identical(res$runs[[nm]]$out, "interrupt", label = nm)
  }
  same_small_fits(res$after)
})
