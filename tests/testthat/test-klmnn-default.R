# kmaha()'s default for kernelized LMNN: RKLMNN with a scale-free weight.

small_iris <- function() {
  idx <- c(1:20, 51:70, 101:120)
  list(x = as.matrix(iris[idx, 1:4]), y = iris$Species[idx],
       xt = as.matrix(iris[-idx, 1:4]), yt = iris$Species[-idx])
}

# Share of the training embedding's spread that lies within the classes.
within_share <- function(emb, y) {
  cen <- apply(emb, 2L, function(v) ave(v, y))
  sum((emb - cen)^2) / sum(sweep(emb, 2L, colMeans(emb))^2)
}

total_variance <- function(z) sum(colMeans(sweep(z, 2L, colMeans(z))^2))

test_that("plain KLMNN collapses the classes, the default does not", {
  d <- small_iris()
  plain <- kmaha(d$x, d$y, learner = "lmnn", kernel = rbf_kernel(0.5),
                 learner_args = list(lambda = 0))
  expect_identical(ncol(plain$L), nrow(d$x) - 1L)
  # every class on one point: zero objective, no spread within the classes
  expect_lt(plain$convergence$objective, 1e-6)
  expect_lt(within_share(plain$embedding, d$y), 1e-3)
  reg <- kmaha(d$x, d$y, learner = "lmnn", kernel = rbf_kernel(0.5))
  expect_gt(within_share(reg$embedding, d$y), 0.01)
  expect_gt(reg$convergence$objective, 1)
})

test_that("the default weight is lambda0 times the coordinates' total variance", {
  d <- small_iris()
  fit <- kmaha(d$x, d$y, learner = "lmnn", kernel = rbf_kernel(1))
  expect_equal(fit$lambda, total_variance(fit_coords(fit)))
  # the user's learner_args are kept as given
  expect_null(fit$settings$learner_args$lambda)
  # an explicit lambda wins; linear LMNN is not regularized
  expect_identical(kmaha(d$x, d$y, learner = "lmnn", kernel = rbf_kernel(1),
                         learner_args = list(lambda = 0.5))$lambda, 0.5)
  expect_identical(kmaha(d$x, d$y, learner = "lmnn",
                         kernel = "linear")$lambda, 0)
  # a weight given as a function of the coordinates
  f <- kmaha(d$x, d$y, learner = "lmnn", kernel = rbf_kernel(1),
             learner_args = list(lambda = function(z) 2 * ncol(z)))
  expect_identical(f$lambda, 2 * ncol(f$L))
})

test_that("the default is scale-free", {
  d <- small_iris()
  k1 <- rbf_kernel(0.5)
  k10 <- kernel_sum(list(rbf_kernel(0.5)), weights = 10)
  a <- kmaha(d$x, d$y, learner = "lmnn", kernel = k1)
  b <- kmaha(d$x, d$y, learner = "lmnn", kernel = k10)
  expect_equal(b$lambda, 10 * a$lambda)
  # the same problem in other units (M scales by 1/10): the same optimal
  # objective. (The optimal map need not be unique, so the fits may differ.)
  expect_equal(b$convergence$objective, a$convergence$objective, tolerance = 1e-3)
  expect_gt(mean(predict(a, d$xt) == predict(b, d$xt)), 0.95)
  # plain KLMNN at the same scale would not be the same problem: lambda = 0.1
  # fixed gives a different optimum after scaling the kernel
  f1 <- kmaha(d$x, d$y, learner = "lmnn", kernel = k1, learner_args = list(lambda = 0.1))
  f10 <- kmaha(d$x, d$y, learner = "lmnn", kernel = k10, learner_args = list(lambda = 0.1))
  expect_gt(abs(f10$convergence$objective / f1$convergence$objective - 1), 0.05)
})

test_that("cross-validation scores the default's pipeline", {
  d <- small_iris()
  ks <- list(rbf_kernel(0.5), rbf_kernel(2))
  by_default <- cv_kernel(scale(d$x), d$y, "lmnn", kernels = ks, folds = 2,
                          learner_args = list(lambda = kmaha:::klmnn_lambda),
                          seed = 3)
  explicit <- function(x, y, targets, ...) {
    lmnn(x, y, targets = targets, lambda = total_variance(x), scale = FALSE, ...)
  }
  by_hand <- cv_kernel(scale(d$x), d$y, explicit, kernels = ks, folds = 2, seed = 3)
  expect_identical(by_default$accuracy, by_hand$accuracy)
  # and kmaha(kernel = "cv") passes the default to the folds
  fit <- kmaha(d$x, d$y, learner = "lmnn", kernel = "cv", kernels = ks,
               cv_folds = 2, seed = 3, k = 1)
  expect_identical(fit$kernel_choice$cv$accuracy, by_default$accuracy)
})
