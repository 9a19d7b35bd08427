# Mini-batch NCA: the batch objective is NCA's objective scaled to n points,
# fits are reproducible under set.seed(), the objective falls, method = "auto"
# switches at 5 000 rows, and bad arguments give exact errors.

x_mb <- as.matrix(iris[, 1:4])
y_mb <- iris$Species

test_that("with one batch of all rows, the step objective is the full objective", {
  xs <- scale(x_mb)
  A0 <- diag(4)
  set.seed(1)
  fit <- nca(x_mb, y_mb, method = "minibatch", batch_size = 150, max_iter = 3,
             lambda = 0.1)
  full <- kmaha:::cpp_nca_objective(unname(xs), as.integer(y_mb), A0, 0.1, NULL,
                                    0L, -1, test_ctx())$value
  expect_equal(fit$convergence$trace[1], full, tolerance = 1e-10)
  # with half the rows per batch the objective is scaled by n / b = 2
  set.seed(2)
  fit2 <- nca(x_mb, y_mb, method = "minibatch", batch_size = 75, max_iter = 1)
  rows <- local({
    set.seed(2)
    sample.int(150)[1:75]
  })
  half <- kmaha:::cpp_nca_objective(unname(xs[rows, ]), as.integer(y_mb[rows]),
                                    A0, 0, NULL, 0L, -1, test_ctx())$value
  expect_equal(fit2$convergence$trace[1], 2 * half, tolerance = 1e-10)
})

test_that("mini-batch fits are reproducible and lower the full objective", {
  set.seed(5)
  f1 <- nca(x_mb, y_mb, method = "minibatch", batch_size = 40, max_iter = 150)
  set.seed(5)
  f2 <- nca(x_mb, y_mb, method = "minibatch", batch_size = 40, max_iter = 150)
  expect_identical(f1$L, f2$L)
  set.seed(6)
  f3 <- nca(x_mb, y_mb, method = "minibatch", batch_size = 40, max_iter = 150)
  expect_false(identical(f1$L, f3$L))
  expect_identical(f1$settings$method, "minibatch")
  expect_identical(f1$settings$batch_size, 40L)
  expect_identical(f1$convergence$iterations, 150L)
  expect_match(f1$convergence$message, "150 Adam steps on batches of 40 rows",
               fixed = TRUE)
  xs <- scale(x_mb)
  obj <- function(A) kmaha:::cpp_nca_objective(unname(xs), as.integer(y_mb), A,
                                               0, NULL, 0L, -1, test_ctx())$value
  expect_lt(obj(f1$L), obj(diag(4)) - 5)
  expect_gt(f1$train_accuracy, 0.93)
})

test_that("method = 'auto' uses L-BFGS up to 5000 rows and mini-batches above", {
  expect_identical(suppressWarnings(nca(x_mb, y_mb, max_iter = 5))$settings$method, "lbfgs")
  set.seed(1)
  n <- 5001
  yb <- factor(rep(1:2, length.out = n))
  xb <- matrix(rnorm(2 * n), n) + as.integer(yb)
  fit <- suppressWarnings(nca(xb, yb, max_iter = 3, batch_size = 100))
  expect_identical(fit$settings$method, "minibatch")
  expect_identical(suppressWarnings(nca(xb[1:5000, ], yb[1:5000], max_iter = 3))$settings$method,
                   "lbfgs")
})

test_that("bad mini-batch arguments give exact errors", {
  expect_error(nca(x_mb, y_mb, batch_size = 1),
               "`batch_size` must be a single whole number >= 2.", fixed = TRUE)
  expect_error(nca(x_mb, y_mb, method = "sgd"), "`method` must be \"auto\", \"lbfgs\" or \"minibatch\".",
               fixed = TRUE)
})
