# KDNE (kernel trick) against plain-R references, and the paper's comparison
# with the KPCA trick.

kd_ref_neighbors <- function(d2, y, k) {
  n <- nrow(d2)
  same <- other <- matrix(NA_integer_, n, k)
  for (i in seq_len(n)) {
    cs <- which(y == y[i] & seq_len(n) != i)
    co <- which(y != y[i])
    os <- cs[order(d2[i, cs], cs)]
    oo <- co[order(d2[i, co], co)]
    same[i, seq_len(min(k, length(os)))] <- utils::head(os, k)
    other[i, seq_len(min(k, length(oo)))] <- utils::head(oo, k)
  }
  list(same = same, other = other)
}

kd_ref_W <- function(nb, n) {
  W <- matrix(0, n, n)
  for (i in seq_len(n)) for (j in nb$same[i, ]) if (!is.na(j)) W[i, j] <- W[j, i] <- 1
  for (i in seq_len(n)) for (j in nb$other[i, ]) if (!is.na(j)) W[i, j] <- W[j, i] <- -1
  W
}

# KPCA coordinates V Lambda^{1/2} of the centred Gram matrix (base eigen()).
kd_kpca_coords <- function(K, tol = 1e-10) {
  n <- nrow(K)
  H <- diag(n) - 1 / n
  e <- eigen(H %*% K %*% H, symmetric = TRUE)
  r <- sum(e$values > tol * e$values[1])
  e$vectors[, seq_len(r), drop = FALSE] %*% diag(sqrt(e$values[seq_len(r)]), r)
}

kd_data <- function(n = 45, seed = 11) {
  set.seed(seed)
  y <- factor(rep(c("p", "q", "r"), length.out = n))
  x <- cbind(sin(as.integer(y) + rnorm(n, sd = 0.4)), rnorm(n), rnorm(n))
  list(x = x, y = y)
}

test_that("feature-space neighbours and the generalized eigenproblem match plain R", {
  d <- kd_data()
  kern <- rbf_kernel(0.5)
  eps <- 1e-6
  fit <- kdne(d$x, d$y, kernel = kern, k = 3, eps = eps, scale = FALSE)
  K <- kernel_matrix(kern, d$x)
  d2 <- outer(diag(K), diag(K), "+") - 2 * K
  nb <- kd_ref_neighbors(d2, d$y, 3)
  expect_identical(fit$targets$same, nb$same)
  expect_identical(fit$targets$other, nb$other)
  n <- nrow(K)
  W <- kd_ref_W(nb, n)
  M <- K %*% (diag(rowSums(W)) - W) %*% K
  B <- K + eps * diag(n)
  mu <- sort(Re(eigen(solve(B, M), only.values = TRUE)$values))
  expect_equal(fit$eigenvalues, mu, tolerance = 1e-6)
  U <- fit$L
  dd <- nrow(U)
  # one generalized eigenvalue is exactly 0 (u = K^{-1} 1, as (D - W) 1 = 0);
  # rounding may put it on either side of zero
  expect_identical(fit$n_negative, sum(mu < -1e-8 * max(abs(mu))))
  expect_lt(min(abs(mu)), 1e-8 * max(abs(mu)))
  # the mapped points are affinely independent (full-rank kernel): the
  # retention of their KPCA coordinates sets the automatic dimension
  Z <- kd_kpca_coords(K, tol = 1e-8)
  expect_identical(ncol(Z), n - 1L)
  expect_equal(fit$retention, ref_retention(Z), tolerance = 1e-6)
  expect_identical(dd, max(1L, sum(mu < -(1 - fit$retention) * max(mu))))
  expect_equal(U %*% B %*% t(U), diag(dd), tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(sum(diag(U %*% M %*% t(U))), fit$convergence$objective,
               tolerance = 1e-8)
  expect_equal(fit$convergence$objective, sum(mu[seq_len(dd)]), tolerance = 1e-6)
  # each row of U solves M u = mu B u
  expect_equal(M %*% t(U), B %*% t(U) %*% diag(fit$eigenvalues[seq_len(dd)]),
               tolerance = 1e-6, ignore_attr = TRUE)
})

test_that("kernel-trick and KPCA-trick objectives agree on a full-rank kernel", {
  d <- kd_data(n = 40, seed = 12)
  kern <- rbf_kernel(0.3)
  K <- kernel_matrix(kern, d$x)
  ev <- eigen(K, symmetric = TRUE, only.values = TRUE)$values
  expect_gt(min(ev), 1e-6 * max(ev))  # full rank, reasonably conditioned
  fk <- kdne(d$x, d$y, kernel = kern, k = 3, eps = 1e-12, scale = FALSE)
  # a full-rank kernel needs no ridge at all
  fk0 <- kdne(d$x, d$y, kernel = kern, k = 3, eps = 0, scale = FALSE)
  expect_equal(fk0$eigenvalues, fk$eigenvalues, tolerance = 1e-8)
  Z <- kd_kpca_coords(K)
  expect_identical(ncol(Z), nrow(K) - 1L)
  # the same W: feature-space distances equal KPCA-coordinate distances
  fd <- dne(Z, d$y, k = 3, scale = FALSE)
  expect_identical(fd$targets, fk$targets)
  expect_identical(fd$n_negative, fk$n_negative)
  expect_gt(fk$n_negative, 2L)
  # the points are affinely independent in feature space: the same retention
  # (below 1) and so the same automatic dimension
  expect_lt(fk$retention, 1)
  expect_equal(fd$retention, fk$retention, tolerance = 1e-6)
  expect_identical(nrow(fd$L), nrow(fk$L))
  # sum of the d smallest generalized eigenvalues = DNE objective, any
  # d <= number of negative eigenvalues
  for (dd in c(1L, 3L, fk$n_negative)) {
    expect_equal(sum(fk$eigenvalues[seq_len(dd)]),
                 dne(Z, d$y, dim = dd, targets = fk$targets,
                     scale = FALSE)$convergence$objective,
                 tolerance = 1e-8)
  }
  # the embeddings are the same up to a rotation: equal Gram matrices
  fk2 <- kdne(d$x, d$y, kernel = kern, dim = 3, eps = 1e-12, scale = FALSE)
  fd2 <- dne(Z, d$y, dim = 3, targets = fk$targets, scale = FALSE)
  zk <- scale(fk2$embedding, scale = FALSE)
  zd <- scale(fd2$embedding, scale = FALSE)
  expect_equal(tcrossprod(zk), tcrossprod(zd), tolerance = 1e-6,
               ignore_attr = TRUE)
})

test_that("a rank-deficient kernel breaks KDNE with eps = 0 but not the KPCA trick", {
  set.seed(13)
  n <- 50
  x <- matrix(rnorm(n * 3), n)
  y <- factor(rep(c("a", "b"), n / 2))
  expect_error(
    kdne(x, y, kernel = linear_kernel(), eps = 0),
    "`K + eps * I` is not positive definite: the Gram matrix is singular or nearly so (the points are linearly dependent in feature space). Increase `eps` (now 0)",
    fixed = TRUE)
  # a duplicated point makes any kernel singular
  xd <- rbind(x[1:10, ], x[1, ])
  expect_error(kdne(xd, c(y[1:10], y[1]), kernel = rbf_kernel(1), eps = 0),
               "Increase `eps` (now 0)", fixed = TRUE)
  # KPCA trick: linear-kernel KPCA coordinates (rank 3) then plain DNE
  xs <- scale(x)
  Z <- kd_kpca_coords(kernel_matrix(linear_kernel(), xs))
  expect_identical(ncol(Z), 3L)
  fz <- dne(Z, y, k = 3, scale = FALSE)
  expect_true(all(is.finite(fz$L)))
  # linear KPCA coordinates are a rotation of the centred inputs
  fx <- dne(xs, y, k = 3, scale = FALSE)
  expect_equal(fz$eigenvalues, fx$eigenvalues, tolerance = 1e-8)
  # with a ridge KDNE runs
  expect_s3_class(kdne(x, y, kernel = linear_kernel(), eps = 1e-3),
                  "kmaha_kdne")
})

test_that("predict embeds new points as U k(x) and classifies", {
  idx <- c(1:30, 51:80, 101:130)
  fit <- kdne(iris[idx, 1:4], iris$Species[idx], kernel = rbf_kernel(1), dim = 3)
  expect_s3_class(fit, c("kmaha_kdne", "kmaha_kernel_trick"))
  new <- iris[-idx, 1:4]
  z <- predict(fit, new, type = "transform")
  xs_tr <- scale(iris[idx, 1:4])
  xs_new <- scale(new, attr(xs_tr, "scaled:center"), attr(xs_tr, "scaled:scale"))
  kx <- kernel_matrix(rbf_kernel(1), xs_new, xs_tr)
  expect_equal(z, kx %*% t(fit$L), ignore_attr = TRUE)
  expect_equal(predict(fit, iris[idx, 1:4], type = "transform"), fit$embedding,
               ignore_attr = TRUE, tolerance = 1e-10)
  expect_identical(predict(fit, type = "transform"), fit$embedding)
  acc <- mean(predict(fit, new) == iris$Species[-idx])
  expect_gt(acc, 0.9)
  pr <- predict(fit, new, type = "prob", k = 3)
  expect_equal(unname(rowSums(pr)), rep(1, nrow(new)))
  expect_identical(levels(predict(fit)), levels(iris$Species))
  ff <- kdne(Species ~ ., data = iris[idx, ], dim = 3)
  expect_equal(predict(ff, iris[-idx, ], type = "transform"), z,
               ignore_attr = TRUE)
  expect_output(print(fit), "KDNE")
})

test_that("KDNE is invariant to row order and supplied targets reproduce it", {
  d <- kd_data(seed = 14)
  f <- kdne(d$x, d$y, kernel = rbf_kernel(0.5), eps = 1e-6)
  set.seed(3)
  p <- sample(nrow(d$x))
  fp <- kdne(d$x[p, ], d$y[p], kernel = rbf_kernel(0.5), eps = 1e-6)
  expect_equal(fp$eigenvalues, f$eigenvalues, tolerance = 1e-8)
  ft <- kdne(d$x, d$y, kernel = rbf_kernel(0.5), eps = 1e-6, targets = f$targets)
  expect_equal(ft$L, f$L)
  expect_identical(ft$settings$targets, "supplied")
})

test_that("KDNE warns once about tiny classes and rejects bad input", {
  set.seed(15)
  x <- matrix(rnorm(20 * 2), 20)
  y <- factor(c(rep("a", 19), "b"))
  expect_warning(fit <- kdne(x, y, k = 2),
                 "`y`: class 'b' (1 member) has fewer than k + 1 = 3 members",
                 fixed = TRUE)
  expect_true(all(is.na(fit$targets$same[20, ])))
  y2 <- rep(1:2, 10)
  expect_error(kdne(x, y2, eps = -1), "`eps` must be non-negative", fixed = TRUE)
  expect_error(kdne(x, y2, dim = 21),
               "`dim` (21) must not exceed the number of training points (20).",
               fixed = TRUE)
  expect_error(kdne(x, y2, kernel = "rbf"),
               "`kernel` must be a kernel object such as rbf_kernel(1)",
               fixed = TRUE)
  expect_error(kdne(x, y2, k = 1.5), "`k` must be a single whole number >= 1.",
               fixed = TRUE)
  expect_error(kdne(x, y2, targets = list(same = matrix(1L, 20, 1))),
               "`targets` must be a list with components `same` and `other`",
               fixed = TRUE)
  expect_error(kdne(x, y2, sigma = 1), "Unknown argument(s) to kdne(): 'sigma'.", fixed = TRUE)
  fit2 <- kdne(x, y2, dim = 2)
  expect_error(predict(fit2, x[, 1, drop = FALSE]),
               "`newdata` has 1 columns but the model was trained on 2.",
               fixed = TRUE)
})
