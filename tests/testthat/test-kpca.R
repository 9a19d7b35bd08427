# Kernel PCA: the paper's Parseval property, agreement with independent
# plain-R computations (eigen() of the explicitly centred Gram matrix) and
# with kernlab, rank-deficient kernels, the truncated solver, projection of
# new points and the error messages.

# Plain-R reference: the centred Gram through explicit H, eigen(), the
# components above tol * largest.
ref_kpca <- function(K, tol = 1e-8, rank = NULL) {
  n <- nrow(K)
  H <- diag(n) - matrix(1 / n, n, n)
  e <- eigen(H %*% K %*% H, symmetric = TRUE)
  r <- sum(e$values > tol * e$values[1])
  if (!is.null(rank)) r <- min(r, rank)
  V <- e$vectors[, seq_len(r), drop = FALSE]
  lam <- e$values[seq_len(r)]
  list(values = lam, V = V,
       coords = V %*% diag(sqrt(lam), r),
       proj = V %*% diag(1 / sqrt(lam), r))
}

# Flip the columns of b to match the signs of a (columns compared by their
# inner product), for comparisons "up to sign".
align_signs <- function(a, b) {
  s <- sign(colSums(a * b))
  s[s == 0] <- 1
  sweep(b, 2L, s, "*")
}

feature_dist2 <- function(K) outer(diag(K), diag(K), "+") - 2 * K

x_iris <- scale(as.matrix(iris[, 1:4]))

test_that("training coordinates satisfy the paper's Parseval property", {
  kernels <- list(rbf_kernel(1), rbf_kernel(0.3), poly_kernel(3, offset = 1),
                  laplace_kernel(2), linear_kernel(),
                  kernel_sum(list(rbf_kernel(0.5), rbf_kernel(5)), c(1, 2)))
  for (k in kernels) {
    K <- kernel_matrix(k, x_iris)
    kp <- kpca(x_iris, k, tol = 1e-12)
    D2 <- as.matrix(stats::dist(kp$coords))^2
    expect_lt(max(abs(D2 - feature_dist2(K))) / max(feature_dist2(K)), 1e-8)
    # and the coordinates reproduce the centred Gram matrix itself
    n <- nrow(K)
    Kc <- K - outer(rowMeans(K), rep(1, n)) - outer(rep(1, n), colMeans(K)) + mean(K)
    expect_lt(max(abs(tcrossprod(kp$coords) - Kc)) / max(abs(Kc)), 1e-8)
  }
})

test_that("kpca agrees with eigen() of the explicitly centred Gram matrix", {
  K <- kernel_matrix(rbf_kernel(0.7), x_iris)
  ref <- ref_kpca(K)
  kp <- kpca(x_iris, rbf_kernel(0.7))
  expect_equal(kp$rank, length(ref$values))
  expect_equal(kp$eigenvalues, ref$values, tolerance = 1e-10)
  expect_equal(unname(kp$coords), align_signs(unname(kp$coords), ref$coords),
               tolerance = 1e-6)
  expect_equal(kp$col_means, colMeans(K), tolerance = 1e-12)
  expect_equal(kp$grand_mean, mean(K), tolerance = 1e-12)
  expect_equal(kp$trace, sum(diag(K)) - nrow(K) * mean(K), tolerance = 1e-10)
  expect_equal(colnames(kp$coords), paste0("PC", seq_len(kp$rank)))
  # signs: the largest-magnitude entry of each component is positive
  big <- apply(kp$projection, 2, function(v) v[which.max(abs(v))])
  expect_true(all(big > 0))
})

test_that("kpca agrees with kernlab::kpca up to sign and scaling", {
  skip_if_not_installed("kernlab")
  s <- 0.8
  kl <- kernlab::kpca(x_iris, kernel = "rbfdot",
                      kpar = list(sigma = 1 / (2 * ncol(x_iris) * s^2)),
                      features = 6)
  kp <- kpca(x_iris, rbf_kernel(s), rank = 6)
  n <- nrow(x_iris)
  # kernlab reports eigenvalues of Kc / n and coordinates scaled by sqrt(n)
  expect_equal(unname(kp$eigenvalues / n), unname(kernlab::eig(kl)),
               tolerance = 1e-8)
  rot <- kernlab::rotated(kl) / sqrt(n)
  expect_equal(unname(kp$coords), align_signs(unname(kp$coords), rot),
               tolerance = 1e-6)
})

test_that("predict() on the training rows returns the training coordinates", {
  for (k in list(rbf_kernel(1), poly_kernel(2, offset = 1), laplace_kernel(1))) {
    kp <- kpca(x_iris, k)
    z <- predict(kp, x_iris)
    expect_lt(max(abs(z - kp$coords)) / max(abs(kp$coords)), 1e-8)
    expect_identical(predict(kp), kp$coords)
  }
  # a data frame with the columns in another order is matched by name
  df <- as.data.frame(x_iris)
  kp <- kpca(df, rbf_kernel(1), rank = 4)
  expect_equal(predict(kp, df[1:5, 4:1]), kp$coords[1:5, ], tolerance = 1e-8,
               ignore_attr = TRUE)
})

test_that("new points are projected like an independent plain-R computation", {
  set.seed(11)
  idx <- sample(150, 90)
  xtr <- x_iris[idx, ]
  xte <- x_iris[-idx, ]
  k <- rbf_kernel(0.6)
  kp <- kpca(xtr, k)
  K <- kernel_matrix(k, xtr)
  Kt <- kernel_matrix(k, xte, xtr)
  ref <- ref_kpca(K)
  n <- nrow(K)
  Ktc <- Kt - matrix(colMeans(K), nrow(Kt), n, byrow = TRUE) -
    matrix(rowMeans(Kt), nrow(Kt), n) + mean(K)
  signs <- sign(colSums(kp$coords * ref$coords))
  zref <- sweep(Ktc %*% ref$proj, 2L, signs, "*")
  z <- predict(kp, xte)
  expect_equal(dim(z), c(nrow(xte), kp$rank))
  expect_lt(max(abs(z - zref)), 1e-6 * max(abs(zref)))
  # the precomputed Gram matrix gives the same numbers
  fit <- kpca(K, "precomputed")
  expect_equal(fit$coords, kp$coords, tolerance = 1e-10, ignore_attr = TRUE)
  expect_equal(predict(fit, Kt), z, tolerance = 1e-10, ignore_attr = TRUE)
})

test_that("rank-deficient kernels drop exactly their null directions", {
  # linear kernel with n > D: rank D, Parseval still exact
  kp <- kpca(x_iris, linear_kernel())
  expect_equal(kp$rank, 4L)
  expect_equal(kp$eigenvalues, (nrow(x_iris) - 1) *
                 eigen(stats::cov(x_iris), symmetric = TRUE)$values,
               tolerance = 1e-10)
  K <- kernel_matrix(linear_kernel(), x_iris)
  expect_lt(max(abs(as.matrix(stats::dist(kp$coords))^2 - feature_dist2(K))),
            1e-8 * max(feature_dist2(K)))
  # duplicated rows: at most (number of distinct rows - 1) components, and the
  # duplicates get identical coordinates
  x <- x_iris[c(1:30, 1:30, 51:60), ]
  kp <- kpca(x, rbf_kernel(0.5))
  expect_lte(kp$rank, nrow(unique(x)) - 1L)
  expect_equal(kp$coords[1:30, ], kp$coords[31:60, ], tolerance = 1e-8,
               ignore_attr = TRUE)
  expect_true(all(is.finite(predict(kp, x_iris[100:110, ]))))
  # a rank request above the numerical rank is capped, for both solvers
  xl <- x_iris[rep(1:150, 2), ]
  expect_equal(kpca(xl, linear_kernel(), rank = 10, method = "full")$rank, 4L)
  kt <- kpca(xl, linear_kernel(), rank = 10, method = "truncated")
  expect_equal(kt$rank, 4L)
  expect_equal(kt$coords, kpca(xl, linear_kernel())$coords, tolerance = 1e-7)
})

test_that("the truncated solver equals the full one on the top components", {
  set.seed(3)
  x <- rbind(x_iris, x_iris + matrix(rnorm(600, sd = 0.3), 150))
  kf <- kpca(x, rbf_kernel(0.8), method = "full")
  kt <- kpca(x, rbf_kernel(0.8), rank = 8, method = "truncated")
  expect_identical(kt$method, "truncated")
  expect_identical(kf$method, "full")
  expect_equal(kt$eigenvalues, kf$eigenvalues[1:8], tolerance = 1e-10)
  # same sign convention, so no sign alignment is needed
  expect_equal(kt$coords, kf$coords[, 1:8], tolerance = 1e-7)
  xn <- x_iris[1:20, ] + 0.1
  expect_equal(predict(kt, xn), predict(kf, xn)[, 1:8], tolerance = 1e-7)
  # full with a rank computes only the top eigenpairs: same numbers
  kr <- kpca(x, rbf_kernel(0.8), rank = 8, method = "full")
  expect_equal(kr$coords, kf$coords[, 1:8], tolerance = 1e-7)
  # ... by the subset solver below n / 8 components, from all eigenpairs of
  # the tridiagonal factor above: both give the full solve's numbers
  kr40 <- kpca(x, rbf_kernel(0.8), rank = 40, method = "full")
  expect_equal(kr40$eigenvalues, kf$eigenvalues[1:40], tolerance = 1e-10)
  expect_equal(kr40$coords, kf$coords[, 1:40], tolerance = 1e-7)
  # "auto" picks the truncated solver only for rank < n / 10 with n >= 200
  # (or rank < n / 5 with n >= 500)
  expect_identical(kpca(x, rbf_kernel(0.8), rank = 8)$method, "truncated")
  expect_identical(kpca(x, rbf_kernel(0.8), rank = 40)$method, "full")
  expect_identical(kpca(x, rbf_kernel(0.8))$method, "full")
  expect_identical(kpca(x_iris, rbf_kernel(0.8), rank = 5)$method, "full")
  x6 <- rbind(x, x + 0.05)
  expect_identical(kpca(x6, rbf_kernel(0.8), rank = 100, method = "auto")$method,
                   "truncated")
  expect_identical(kpca(x6, rbf_kernel(0.8), rank = 120, method = "auto")$method,
                   "full")
})

test_that("kpca validates its arguments with clear messages", {
  expect_error(kpca(x_iris, "rbf"), "`kernel` must be a kernel object",
               fixed = TRUE)
  expect_error(kpca(x_iris, rbf_kernel(1), rank = 2.5),
               "`rank` must be NULL or a single whole number >= 1.", fixed = TRUE)
  expect_error(kpca(x_iris, rbf_kernel(1), rank = 0),
               "`rank` must be NULL or a single whole number >= 1.", fixed = TRUE)
  expect_error(kpca(x_iris, rbf_kernel(1), rank = NA),
               "`rank` must be NULL or a single whole number >= 1.", fixed = TRUE)
  expect_error(kpca(x_iris, rbf_kernel(1), rank = 151),
               "`rank` (151) must not exceed the number of training points (150).",
               fixed = TRUE)
  for (bad in list(0, 1, -1, NA_real_, c(0.1, 0.2), "a")) {
    expect_error(kpca(x_iris, rbf_kernel(1), tol = bad),
                 "`tol` must be a single number strictly between 0 and 1.",
                 fixed = TRUE)
  }
  expect_error(kpca(x_iris, rbf_kernel(1), method = "truncated"),
               "supply `rank`", fixed = TRUE)
  expect_error(kpca(x_iris, rbf_kernel(1), method = "lanczos"),
               "`method` must be one of \"auto\", \"full\", \"truncated\", \"nystrom\".",
               fixed = TRUE)
  expect_error(kpca(matrix(0, 6, 3), linear_kernel()),
               "the kernel matrix is zero", fixed = TRUE)
  expect_error(kpca(matrix(0, 6, 3), poly_kernel(2)),
               "the kernel matrix is zero", fixed = TRUE)
  expect_error(kpca(matrix(2, 6, 3), rbf_kernel(1)),
               "the centred kernel matrix is zero", fixed = TRUE)
  bad_x <- x_iris
  bad_x[3, 2] <- NA
  expect_error(kpca(bad_x), "`x` contains missing values", fixed = TRUE)
  expect_error(kpca(iris), "`x` must have numeric columns only", fixed = TRUE)
  kp <- kpca(x_iris, rbf_kernel(1), rank = 3)
  expect_error(predict(kp, x_iris[, 1:3]), "`newdata` lacks column(s)",
               fixed = TRUE)
  expect_error(predict(kp, unname(x_iris[, 1:3])),
               "`newdata` has no column names, but the model was trained on named columns",
               fixed = TRUE)
})

test_that("kpca() validates a precomputed Gram matrix", {
  K <- kernel_matrix(rbf_kernel(1), x_iris[1:10, ])
  expect_error(kpca(K[, 1:9], "precomputed"),
               "With kernel = \"precomputed\", `x` must be the n x n Gram matrix of the training points; it is 10 x 9, not square.",
               fixed = TRUE)
  Ka <- K
  Ka[1, 2] <- Ka[1, 2] + 0.1
  expect_error(kpca(Ka, "precomputed"), "The Gram matrix `x` must be symmetric",
               fixed = TRUE)
  Kn <- K
  Kn[2, 2] <- Inf
  expect_error(kpca(Kn, "precomputed"), "The Gram matrix `x` contains infinite values.",
               fixed = TRUE)
  expect_error(kpca(matrix(0, 4, 4), "precomputed"), "the kernel matrix is zero",
               fixed = TRUE)
  expect_error(kpca("K", "precomputed"),
               "`x` must be the n x n Gram matrix of the training points (a numeric matrix), not character.",
               fixed = TRUE)
  fit <- kpca(K, "precomputed", rank = 3)
  expect_error(predict(fit, K[, 1:9]),
               "`newdata` must have one column per training point (10), holding the kernel values of the new points against them; it has 9.",
               fixed = TRUE)
  expect_error(predict(fit, rbind(c(NA, K[1, -1]))), "contains missing values",
               fixed = TRUE)
})

test_that("print and plot methods describe the fit", {
  kp <- kpca(x_iris, rbf_kernel(1), rank = 5)
  expect_output(print(kp), "components kept: 5 (full solver)", fixed = TRUE)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(kp, y = iris$Species), kp)
  expect_identical(plot(kp, type = "spectrum"), kp)
  expect_identical(plot(kp), kp)
  expect_error(plot(kp, dims = c(1, 9)), "`dims` must be two coordinates",
               fixed = TRUE)
  expect_error(plot(kp, y = iris$Species[1:10]), "`y` has length 10",
               fixed = TRUE)
})
