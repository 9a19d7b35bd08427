test_that("summaries report what the fits hold", {
  idx <- c(1:20, 51:70, 101:120)
  x <- as.matrix(iris[idx, 1:4])
  y <- iris$Species[idx]
  kp <- kpca(x, rbf_kernel(1))
  s <- summary(kp)
  expect_identical(s$rank, ncol(kp$coords))
  # every non-null component kept: all of the feature-space variance
  expect_equal(s$variance_kept, 1, tolerance = 1e-8)
  expect_output(print(s), "Components kept: 59")
  s_trunc <- summary(kpca(x, rbf_kernel(1), rank = 2))
  expect_lt(s_trunc$variance_kept, 1)

  al <- align_kernels(x, y)
  sa <- summary(al)
  expect_equal(sum(sa$kernels$weight), sum(al$weights))
  expect_true(all(sa$kernels$alignment <= 1))
  expect_output(print(sa), "Alignment of the combined kernel")

  kd <- kdne(x, y, dim = 2)
  sk <- summary(kd)
  expect_identical(sk$dim, dim(kd$U))
  expect_equal(sk$train_accuracy, kd$train_accuracy)
  expect_output(print(sk), "KDNE metric: map 2 x 60")
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(kd))
  expect_invisible(plot(dne(x, y, dim = 2)))
})

test_that("linear fits print their learner, map and accuracy", {
  fit <- dne(Species ~ ., data = iris, dim = 2)
  expect_output(print(fit), "<kmaha DNE> linear Mahalanobis metric")
  expect_output(print(summary(fit)), "DNE metric: map 2 x 4 (low rank)", fixed = TRUE)
  A <- transform_matrix(fit)
  M <- mahalanobis_matrix(fit)
  expect_equal(M, crossprod(A))
  # the accessor folds the input scaling into the map
  z <- scale(as.matrix(iris[, 1:4]), center = fit$prep$center, scale = FALSE) %*% t(A)
  expect_equal(unname(z), unname(predict(fit, iris, type = "transform")))
})
