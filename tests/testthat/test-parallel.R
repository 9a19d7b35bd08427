# The one parallel policy (kmaha/parallel.hpp): every threaded loop of the
# core runs its tasks in a fixed arrangement, so a computation repeated on
# the same number of threads gives the same bits.  NCA sums its blocks into
# one accumulator per thread (dealt_for()): its result may differ in the
# last bits between thread counts, never between runs.

test_that("NCA's objective and gradient are reproducible on two threads", {
  set.seed(3)
  n <- 700
  y <- factor(rep(1:4, length.out = n))
  x <- matrix(rnorm(n * 6), n) + as.integer(y)
  A <- matrix(rnorm(3 * 6), 3) * 0.5
  # block = 16 and min_parallel_flops = 0: many blocks, both threads busy
  f <- function(threads) {
    kmaha:::cpp_nca_objective(x, as.integer(y), A, 0.1, NULL, 16L, 0, test_ctx(threads))
  }
  two <- lapply(1:6, function(i) f(2L))
  for (r in two[-1]) expect_identical(r, two[[1]])
  one <- f(1L)
  expect_equal(two[[1]]$value, one$value, tolerance = 1e-12)
  expect_equal(two[[1]]$gradient, one$gradient, tolerance = 1e-10)
})

test_that("an NCA fit on two threads is reproducible", {
  set.seed(4)
  # 6 n^2 d flops per evaluation: above the core's threshold for threads
  n <- 1300
  y <- factor(rep(1:3, length.out = n))
  x <- matrix(rnorm(n * 8), n) + as.integer(y)
  fits <- lapply(1:3, function(i) {
    suppressWarnings(nca(x, y, dim = 3, max_iter = 25, num_threads = 2))$L
  })
  expect_identical(fits[[2]], fits[[1]])
  expect_identical(fits[[3]], fits[[1]])
})
