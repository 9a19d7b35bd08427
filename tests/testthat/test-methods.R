# Independent references for the summaries: plain-R eigenvalues of the
# centred Gram matrix, kernel alignment from its definition, and
# leave-one-out 1-NN on an embedding.
centred_gram_eigen <- function(K) {
  H <- diag(nrow(K)) - 1 / nrow(K)
  eigen(H %*% K %*% H, symmetric = TRUE, only.values = TRUE)$values
}
ideal_kernel <- function(y) {
  p <- nlevels(y)
  ifelse(outer(y, y, "=="), 1, -1 / (p - 1))
}
alignment_r <- function(K, Y) sum(K * Y) / sqrt(sum(K * K) * sum(Y * Y))
loo_1nn_r <- function(z, y) {
  d <- as.matrix(stats::dist(z))
  diag(d) <- Inf
  mean(y[apply(d, 1, which.min)] == y)
}

test_that("summaries report what the fits hold", {
  idx <- c(1:20, 51:70, 101:120)
  x <- as.matrix(iris[idx, 1:4])
  y <- iris$Species[idx]
  kp <- kpca(x, rbf_kernel(1))
  s <- summary(kp)
  ev <- centred_gram_eigen(kernel_matrix(rbf_kernel(1), x))
  rank_r <- sum(ev > 1e-8 * ev[1])
  expect_identical(s$rank, rank_r)
  expect_equal(s$eigenvalues, utils::head(ev[seq_len(rank_r)], 10), tolerance = 1e-8)
  # every non-null component kept: all of the feature-space variance
  expect_equal(s$variance_kept, 1, tolerance = 1e-8)
  expect_output(print(s), sprintf("Components kept: %d", rank_r))
  s_trunc <- summary(kpca(x, rbf_kernel(1), rank = 2))
  expect_equal(s_trunc$variance_kept, sum(ev[1:2]) / sum(ev), tolerance = 1e-8)

  al <- align_kernels(x, y)
  sa <- summary(al)
  Y <- ideal_kernel(y)
  # The alignment of each listed kernel, and of their weighted sum, from the
  # definition on the Gram matrices.
  base <- vapply(al$kernels[al$weights > 0],
                 function(k) alignment_r(kernel_matrix(k, x), Y), numeric(1))
  expect_equal(sa$kernels$alignment, unname(base), tolerance = 1e-10)
  expect_equal(sa$alignment, alignment_r(kernel_matrix(al$kernel, x), Y),
               tolerance = 1e-10)
  expect_output(print(sa), "Alignment of the combined kernel")

  kd <- kdne(x, y, dim = 2)
  sk <- summary(kd)
  expect_identical(sk$dim, c(2L, 60L))
  z <- kernel_matrix(kd$feature_map$kernel, kd$feature_map$x) %*% t(kd$L)
  expect_equal(sk$train_accuracy, loo_1nn_r(z, y))
  expect_output(print(sk), "learner coordinates: 60 kernel rows, map: 2 x", fixed = TRUE)
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(kd))
  expect_invisible(plot(dne(x, y, dim = 2)))
})

test_that("linear fits print their learner, map and accuracy", {
  fit <- dne(Species ~ ., data = iris, dim = 2)
  expect_output(print(fit), "<kmaha DNE> DNE: a linear Mahalanobis metric on the standardized inputs",
                fixed = TRUE)
  expect_output(print(summary(fit)), "learner coordinates: 4 input columns, map: 2", fixed = TRUE)
  # Distances under the Mahalanobis matrix, on the original inputs, equal
  # Euclidean distances between the embedded points.
  x <- as.matrix(iris[, 1:4])
  M <- mahalanobis_matrix(fit)
  z <- predict(fit, iris, type = "transform")
  pairs <- rbind(c(1, 2), c(1, 51), c(60, 120), c(150, 3))
  for (r in seq_len(nrow(pairs))) {
    dx <- x[pairs[r, 1], ] - x[pairs[r, 2], ]
    expect_equal(drop(dx %*% M %*% dx), sum((z[pairs[r, 1], ] - z[pairs[r, 2], ])^2),
                 tolerance = 1e-10)
  }
  # the accessor folds the input scaling into the map
  A <- transform_matrix(fit)
  z2 <- scale(x, center = fit$prep$center, scale = FALSE) %*% t(A)
  expect_equal(unname(z2), unname(z))
})
