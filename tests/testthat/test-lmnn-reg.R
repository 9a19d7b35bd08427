# The general regulariser lambda tr(M R) of the LMNN core (argument `reg` of
# the glue): gradients against finite differences, values against the
# plain-R objective, R = I against no R, and the kernel trick (kernel rows as
# inputs, R = K) against the KPCA trick.

# A small 3-class problem, its RBF Gram matrix and target neighbours found
# in feature space (distances between kernel rows differ; the targets are an
# input of the objective, any valid choice will do).
reg_problem <- function(n = 30, seed = 21) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- scale(matrix(rnorm(n * 3), n, 3) + 0.8 * as.integer(y))
  K <- kmaha:::cpp_kernel_matrix(rbf_kernel(1), x, x, test_ctx())
  tg <- kmaha:::cpp_class_neighbors(K, as.integer(y), 3L, TRUE, test_ctx())
  list(x = x, y = y, K = K, tg = tg)
}

# A random positive semi-definite matrix of rank r.
random_psd <- function(D, r, seed) {
  set.seed(seed)
  A <- matrix(rnorm(D * r), D, r)
  tcrossprod(A) / r
}

test_that("the objective with R equals the plain-R computation", {
  d <- toy_data(n = 24, D = 3, seed = 3)
  x <- scale(d$x)
  tg <- kmaha:::cpp_class_neighbors(unname(x), as.integer(d$y), 3L, TRUE, test_ctx())
  R <- random_psd(3, 2, 5)
  set.seed(6)
  L <- diag(3) + matrix(rnorm(9, sd = 0.3), 3)
  M <- crossprod(L)
  ref <- lmnn_plain(unname(x), d$y, tg, M, mu = 0.4, lambda = 0.7, R = R)
  for (form in c("L", "Lpairs", "Lgram")) {
    got <- kmaha:::cpp_lmnn_objective(unname(x), as.integer(d$y), tg, L, 0.4, 0.7, form, 0, R, test_ctx())
    expect_equal(got$value, ref$value, tolerance = 1e-12, info = form)
    expect_equal(got$reg, sum(M * R), tolerance = 1e-12, info = form)
  }
  got <- kmaha:::cpp_lmnn_objective(unname(x), as.integer(d$y), tg, M, 0.4, 0.7, "M", 0, R, test_ctx())
  expect_equal(got$value, ref$value, tolerance = 1e-12)
  expect_equal(got$gradient, ref$gradient, tolerance = 1e-10)
  # without the regulariser's weight R plays no part
  zero <- kmaha:::cpp_lmnn_objective(unname(x), as.integer(d$y), tg, L, 0.4, 0, "L", 0, R, test_ctx())
  expect_equal(zero$value, lmnn_plain(unname(x), d$y, tg, M, 0.4)$value,
               tolerance = 1e-12)
})

test_that("the gradient with R matches finite differences", {
  p <- reg_problem()
  n <- nrow(p$K)
  set.seed(13)
  L <- 0.5 * diag(n) + matrix(rnorm(n * n, sd = 0.05), n)
  for (form in c("L", "Lpairs", "Lgram")) {
    eps <- if (form == "L") 0 else 0.5
    f <- function(Lm) {
      kmaha:::cpp_lmnn_objective(p$K, as.integer(p$y), p$tg, Lm, 0.5, 0.3, form, eps, p$K, test_ctx())
    }
    got <- f(L)
    expect_gt(got$triples, 0)
    set.seed(14)
    q <- sample(length(L), 25)
    h <- 1e-6
    fd <- vapply(q, function(j) {
      e <- replace(numeric(length(L)), j, h)
      (f(L + e)$value - f(L - e)$value) / (2 * h)
    }, numeric(1))
    expect_lt(max(abs(fd - got$gradient[q])) / max(abs(fd)), 1e-6,
              label = paste("finite differences,", form))
  }
  # with respect to M (symmetric perturbations of a positive definite M)
  M <- crossprod(L)
  fM <- function(Mm) {
    kmaha:::cpp_lmnn_objective(p$K, as.integer(p$y), p$tg, Mm, 0.5, 0.3, "M", 0, p$K, test_ctx())$value
  }
  G <- kmaha:::cpp_lmnn_objective(p$K, as.integer(p$y), p$tg, M, 0.5, 0.3, "M", 0, p$K, test_ctx())$gradient
  h <- 1e-6
  for (ij in list(c(1, 1), c(2, 5), c(7, 3), c(n, n - 1))) {
    E <- matrix(0, n, n)
    E[ij[1], ij[2]] <- E[ij[2], ij[1]] <- h
    fd <- (fM(M + E) - fM(M - E)) / (2 * h)
    an <- if (ij[1] == ij[2]) G[ij[1], ij[1]] else G[ij[1], ij[2]] + G[ij[2], ij[1]]
    expect_equal(fd, an, tolerance = 1e-6)
  }
})

test_that("R = I gives exactly the results without R", {
  d <- toy_data(n = 45, D = 4, seed = 5)
  x <- unname(scale(d$x))
  y <- as.integer(d$y)
  tg <- kmaha:::cpp_class_neighbors(x, y, 3L, TRUE, test_ctx())
  for (solver in c("L", "M")) {
    fit <- function(reg) {
      kmaha:::cpp_lmnn_fit(x, y, tg, 0L, diag(4), 0.5, 0.2, 300, 1e-7, solver, 10L, 0.2, FALSE, 2048, 0, TRUE, TRUE, reg, NULL, test_ctx(1L))
    }
    expect_identical(fit(diag(4)), fit(NULL), info = solver)
  }
  obj <- function(reg) {
    kmaha:::cpp_lmnn_objective(x, y, tg, diag(4), 0.5, 0.2, "Lgram", 0, reg, test_ctx())
  }
  expect_identical(obj(diag(4)), obj(NULL))
})

test_that("kernel rows with R = K reach the KPCA trick's optimum", {
  p <- reg_problem(n = 36, seed = 22)
  y <- as.integer(p$y)
  lambda <- 0.5
  trick <- kmaha:::cpp_lmnn_fit(p$K, y, p$tg, 0L, diag(nrow(p$K)), 0.5, lambda, 2000, 1e-10, "L", 10L, 0.2, FALSE, 2048, 0, TRUE, TRUE, p$K, NULL, test_ctx(1L))
  expect_true(trick$converged)
  # the objective reported is the exact one at the returned map
  ex <- kmaha:::cpp_lmnn_objective(p$K, y, p$tg, trick$L, 0.5, lambda, "L", 0, p$K, test_ctx())
  expect_equal(trick$objective, ex$value, tolerance = 1e-9)
  # KPCA coordinates with every component: the same distances (Parseval),
  # so the same targets, and lambda tr(M) on them is lambda ||A||_F^2 too
  z <- unname(kpca(p$x, kernel = rbf_kernel(1), tol = 1e-14)$coords)
  kp <- kmaha:::cpp_lmnn_fit(z, y, p$tg, 0L, diag(ncol(z)), 0.5, lambda, 2000, 1e-10, "L", 10L, 0.2, FALSE, 2048, 0, TRUE, TRUE, NULL, NULL, test_ctx(1L))
  expect_true(kp$converged)
  expect_equal(trick$objective, kp$objective, tolerance = 1e-5)
  # the convex solver on the kernel rows agrees
  fm <- kmaha:::cpp_lmnn_fit(p$K, y, p$tg, 0L, diag(nrow(p$K)), 0.5, lambda, 5000, 1e-10, "M", 10L, 0.2, FALSE, 2048, 0, TRUE, TRUE, p$K, NULL, test_ctx(1L))
  expect_lte(trick$objective, 1.01 * fm$objective)
  exm <- kmaha:::cpp_lmnn_objective(p$K, y, p$tg, fm$M, 0.5, lambda, "M", 0, p$K, test_ctx())
  expect_equal(fm$objective, exm$value, tolerance = 1e-8)
})

test_that("a singular R: the objective stays exact and the map finite", {
  d <- toy_data(n = 40, D = 5, seed = 8)
  x <- unname(scale(d$x))
  y <- as.integer(d$y)
  tg <- kmaha:::cpp_class_neighbors(x, y, 3L, TRUE, test_ctx())
  R <- random_psd(5, 2, 9)
  for (solver in c("L", "M")) {
    f <- kmaha:::cpp_lmnn_fit(x, y, tg, 0L, diag(5), 0.5, 0.4, 3000, 1e-9, solver, 10L, 0.2, FALSE, 2048, 0, TRUE, TRUE, R, NULL, test_ctx(1L))
    expect_true(all(is.finite(f$L)), info = solver)
    ref <- lmnn_plain(x, d$y, tg, f$M, 0.5, 0.4, R = R)
    expect_equal(f$objective, ref$value, tolerance = 1e-8, info = solver)
  }
})

test_that("a bad regulariser matrix is an error that says what is wrong", {
  d <- toy_data(n = 12, D = 3, seed = 1)
  x <- unname(d$x)
  y <- as.integer(d$y)
  tg <- kmaha:::cpp_class_neighbors(x, y, 2L, TRUE, test_ctx())
  obj <- function(reg) kmaha:::cpp_lmnn_objective(x, y, tg, diag(3), 0.5, 1, "L", 0, reg, test_ctx())
  expect_error(obj(diag(4)),
               "lmnn: the regulariser R must be a D x D matrix (D = columns of x)",
               fixed = TRUE)
  expect_error(obj(matrix(c(1, 0, 0, 1, 1, 0, 0, 0, 1), 3)),
               "lmnn: the regulariser R must be symmetric", fixed = TRUE)
  expect_error(obj(diag(c(1, -1, 1))),
               "lmnn: the regulariser R must be positive semi-definite", fixed = TRUE)
  expect_error(obj(diag(c(1, NA, 1))),
               "lmnn: the regulariser R has non-finite entries", fixed = TRUE)
  expect_error(kmaha:::cpp_lmnn_fit(x, y, tg, 0L, diag(3), 0.5, 1, 10, 1e-5, "L", 10L, 0.2, FALSE, 2048, 0, TRUE, TRUE, diag(2), NULL, test_ctx(1L)),
               "lmnn: the regulariser R must be a D x D matrix (D = columns of x)",
               fixed = TRUE)
})
