# src/optim.h: how a run of R's L-BFGS-B (as NCA, KNCA and LMNN drive it)
# stops, is classified, and survives errors and non-finite values raised
# inside the C optimizer.  The objectives are written in R and called through
# the internal test hook cpp_lbfgs_test().

rosen <- function(x) sum((x - 1)^2) + sum((x[-1] - x[-length(x)]^2)^2)
rosen_grad <- function(x) {
  n <- length(x)
  g <- 2 * (x - 1)
  d <- x[-1] - x[-n]^2
  g[-1] <- g[-1] + 2 * d
  g[-n] <- g[-n] - 4 * x[-n] * d
  g
}
x0 <- c(5, -3, 2, 0.5)

test_that("smooth problems stop by the tolerance or a vanishing gradient", {
  r <- cpp_lbfgs_test(rosen, rosen_grad, x0, 1000, 1e-9, test_ctx())
  expect_identical(r$stop, "tolerance")
  expect_true(r$converged)
  expect_equal(r$par, rep(1, 4), tolerance = 1e-5)
  expect_equal(r$gradient_norm, sqrt(sum(rosen_grad(r$par)^2)))
  r <- cpp_lbfgs_test(function(x) sum((x - 1)^2), function(x) 2 * (x - 1),
                      c(5, -3), 100, 1e-9, test_ctx())
  expect_identical(r$stop, "gradient")
  expect_identical(r$par, c(1, 1))
  r <- cpp_lbfgs_test(rosen, rosen_grad, x0, 3, 1e-9, test_ctx())
  expect_identical(r$stop, "iteration limit")
  expect_false(r$converged)
})

test_that("a line search that fails at the optimum is told from a real failure", {
  # Noise of amplitude 1e-6 in the objective: near the minimum no step
  # decreases it, but the last improvements were below the tolerance.
  noisy <- function(x) rosen(x) + 1e-6 * sum(sin(1e7 * x))
  r <- cpp_lbfgs_test(noisy, rosen_grad, x0, 1000, 1e-6, test_ctx())
  expect_identical(r$message, "ERROR: ABNORMAL_TERMINATION_IN_LNSRCH")
  expect_identical(r$stop, "line search at optimum")
  expect_true(r$converged)
  expect_equal(r$par, rep(1, 4), tolerance = 1e-3)
  # A gradient of the wrong sign: no step along -gradient decreases f, far
  # from the minimum.
  r <- cpp_lbfgs_test(function(x) sum(x^2), function(x) -2 * x, c(5, -3), 100, 1e-8, test_ctx())
  expect_identical(r$message, "ERROR: ABNORMAL_TERMINATION_IN_LNSRCH")
  expect_identical(r$stop, "line search failed")
  expect_false(r$converged)
  expect_identical(r$par, c(5, -3))
})

test_that("non-finite trial values shorten the step instead of stopping R", {
  # R's lbfgsb() calls error() on a non-finite value; the glue rejects such
  # trial points so that the line search backs off.
  barrier <- function(x) if (any(x > 2)) Inf else sum((x - 3)^2)
  r <- cpp_lbfgs_test(barrier, function(x) 2 * (x - 3), c(0, 0), 100, 1e-8, test_ctx())
  expect_true(all(r$par <= 2))
  expect_lt(r$value, barrier(c(0, 0)))
  nan_far <- function(x) if (sum(x^2) > 100) NaN else sum((x - 1)^2)
  r <- cpp_lbfgs_test(nan_far, function(x) 2 * (x - 1), c(0, 0), 100, 1e-8, test_ctx())
  expect_equal(r$par, c(1, 1), tolerance = 1e-6)
  # At the starting point there is nothing to back off to: a clear error.
  expect_error(cpp_lbfgs_test(function(x) Inf, function(x) x, c(1, 2), 10, 1e-8, test_ctx()),
               "the objective or its gradient is not finite at the starting parameters",
               fixed = TRUE)
})

test_that("errors raised inside the optimizer reach R as errors, and R stays usable", {
  expect_error(cpp_lbfgs_test(function(x) stop("boom"), function(x) x, c(1, 2), 10, 1e-8, test_ctx()),
               "boom", fixed = TRUE)
  later <- function(x) if (x[1] < 4) stop("boom later") else sum(x^2)
  expect_error(cpp_lbfgs_test(later, function(x) 2 * x, c(5, 2), 10, 1e-8, test_ctx()),
               "boom later", fixed = TRUE)
  r <- cpp_lbfgs_test(rosen, rosen_grad, x0, 1000, 1e-9, test_ctx())
  expect_true(r$converged)
})
