# ITML (Davis et al. 2007): each Bregman projection lands on its constraint,
# the solution satisfies every constraint within its slack, the thresholds
# are R's percentiles, the LogDet problem is invariant under a change of
# coordinates that carries the prior along, and the span path at p > n.

itml_data <- function(n = 40, seed = 1) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- cbind(rnorm(n) + 1.5 * as.integer(y), rnorm(n, sd = 2), rnorm(n) - as.integer(y),
             rnorm(n))
  colnames(x) <- paste0("v", 1:4)
  list(x = x, y = y)
}

pair_d2 <- function(x, M, pairs) {
  dd <- x[pairs[, 1], , drop = FALSE] - x[pairs[, 2], , drop = FALSE]
  rowSums((dd %*% M) * dd)
}

test_that("one Bregman projection lands exactly on the pair's (moved) target", {
  ctx <- kmaha:::kmaha_context()
  set.seed(1)
  B <- matrix(rnorm(16), 4)
  A <- crossprod(B) + diag(4)
  v <- rnorm(4)
  p <- drop(t(v) %*% A %*% v)
  for (gamma in c(0.5, 1, 10, Inf)) {
    for (delta in c(1, -1)) {
      xi <- if (delta == 1) p / 3 else 3 * p  # violated either way
      out <- kmaha:::core_itml_project(A, v, delta, 1e6, xi, gamma, ctx)
      p_new <- drop(t(v) %*% out$A %*% v)
      expect_equal(p_new, out$xi, tolerance = 1e-10)
      # the moved target: 1/xi' = 1/xi + delta alpha / gamma; hard: unmoved
      if (is.infinite(gamma)) expect_identical(out$xi, xi)
      else expect_equal(1 / out$xi, 1 / xi + delta * out$alpha / gamma, tolerance = 1e-12)
      # the update is rank one along A v and keeps A positive definite
      expect_gt(min(eigen(out$A, symmetric = TRUE)$values), 0)
      dA <- out$A - A
      expect_equal(qr(dA, tol = 1e-8)$rank, 1L)
      expect_equal(out$lambda, 1e6 - out$alpha)
      # violated: alpha < 0 (dual variable grows)
      expect_lt(out$alpha, 0)
    }
  }
  # satisfied with a zero dual: no step
  out <- kmaha:::core_itml_project(A, v, 1, 0, 2 * p, 1, ctx)
  expect_identical(out$alpha, 0)
  expect_identical(out$A, A)
})

test_that("thresholds are the 5th and 95th percentiles of squared distances", {
  d <- itml_data()
  set.seed(2)
  fit <- itml(d$x, d$y, n_pairs = 60, scale = FALSE)
  rows <- sort(unique(as.vector(fit$pairs$pairs)))
  q <- stats::quantile(stats::dist(d$x[rows, ])^2, c(0.05, 0.95), names = FALSE)
  expect_equal(unname(fit$bounds), q, tolerance = 1e-10)
  # given bounds are used as they are
  set.seed(2)
  fit2 <- itml(d$x, d$y, n_pairs = 60, bounds = c(2, 30), scale = FALSE)
  expect_equal(unname(fit2$bounds), c(2, 30))
})

test_that("the solution satisfies every constraint within its slack", {
  d <- itml_data(seed = 3)
  set.seed(3)
  fit <- itml(d$x, d$y, n_pairs = 80, scale = FALSE, tol = 1e-10, max_iter = 20000)
  expect_true(fit$convergence$converged)
  M <- fit$metric
  pr <- fit$pairs
  d2 <- pair_d2(d$x, M, pr$pairs)
  xi <- fit$slack_targets
  sim <- pr$similar == 1
  expect_true(all(d2[sim] <= xi[sim] * (1 + 1e-6)))
  expect_true(all(d2[!sim] >= xi[!sim] * (1 - 1e-6)))
  # complementary slackness: a positive dual variable means an active constraint
  act <- fit$duals > 1e-8
  expect_equal(d2[act], xi[act], tolerance = 1e-6)
  expect_true(all(fit$duals >= 0))
  # the slack moved the targets only in the helpful direction
  u <- fit$bounds[["u"]]
  l <- fit$bounds[["l"]]
  expect_true(all(xi[sim] >= u * (1 - 1e-12)))
  expect_true(all(xi[!sim] <= l * (1 + 1e-12)))
  expect_equal(unname(crossprod(fit$L)), unname(M), tolerance = 1e-10)
  # hard constraints (gamma = Inf) on a feasible set (few pairs): d <= u,
  # d >= l exactly
  set.seed(3)
  hard <- itml(d$x, d$y, n_pairs = 6, gamma = Inf, scale = FALSE, tol = 1e-10,
               max_iter = 20000)
  expect_true(hard$convergence$converged)
  d2h <- pair_d2(d$x, hard$metric, hard$pairs$pairs)
  simh <- hard$pairs$similar == 1
  expect_true(all(d2h[simh] <= hard$bounds[["u"]] * (1 + 1e-6)))
  expect_true(all(d2h[!simh] >= hard$bounds[["l"]] * (1 - 1e-6)))
})

test_that("a prior M0 = G'G equals the identity prior on the inputs mapped by G", {
  d <- itml_data(seed = 4)
  set.seed(5)
  G <- matrix(rnorm(16), 4) + diag(2, 4)
  set.seed(4)
  a <- itml(d$x, d$y, prior = crossprod(G), bounds = c(3, 40), scale = FALSE, tol = 1e-6,
            max_iter = 20000)
  set.seed(4)
  b <- itml(d$x %*% t(G), d$y, bounds = c(3, 40), scale = FALSE, tol = 1e-6,
            max_iter = 20000)
  expect_identical(a$convergence$iterations, b$convergence$iterations)
  expect_identical(a$pairs, b$pairs)
  expect_equal(unname(a$metric), unname(t(G) %*% b$metric %*% G), tolerance = 1e-7)
  expect_equal(a$duals, b$duals, tolerance = 1e-7)
})

test_that("p > n: the span path gives the full path's metric on the span", {
  set.seed(6)
  n <- 18L
  y <- factor(rep(c("a", "b"), each = n / 2))
  x <- matrix(rnorm(n * 30), n) + outer(as.integer(y), rnorm(30))
  set.seed(1)
  pr <- kmaha:::draw_pairs(y, 40)
  ctx <- kmaha:::kmaha_context()
  s <- kmaha:::core_itml_fit(x, pr$pairs, pr$similar, NULL, 1, NA, NA, 1000L, 1e-6, ctx,
                             span = TRUE)
  f <- kmaha:::core_itml_fit(x, pr$pairs, pr$similar, NULL, 1, NA, NA, 1000L, 1e-6, ctx,
                             span = FALSE)
  expect_identical(s$span_rank, n - 1L)
  expect_equal(c(s$u, s$l), c(f$u, f$l), tolerance = 1e-10)
  expect_identical(s$iterations, f$iterations)
  expect_equal(s$lambda, f$lambda, tolerance = 1e-8)
  expect_equal(as.matrix(stats::dist(x %*% t(s$L))), as.matrix(stats::dist(x %*% t(f$L))),
               tolerance = 1e-8)
  # new points: the identity off the span adds the same to every distance
  q <- matrix(rnorm(2 * 30), 2)
  d2 <- function(L) {
    zq <- q %*% t(L)
    zx <- x %*% t(L)
    outer(rowSums(zq^2), rowSums(zx^2), "+") - 2 * zq %*% t(zx)
  }
  gap <- d2(f$L) - d2(s$L)
  expect_equal(gap - gap[, 1], matrix(0, 2, n), tolerance = 1e-8 * max(abs(gap)))
})

test_that("bad options are errors naming the argument", {
  d <- itml_data()
  expect_error(itml(d$x, d$y, gamma = 0), "`gamma` must be a positive number or Inf.", fixed = TRUE)
  expect_error(itml(d$x, d$y, bounds = c(1, -1)),
               "`bounds` must be NULL or c(u, l), two positive numbers (squared distances).",
               fixed = TRUE)
  expect_error(itml(d$x, d$y, bounds = c(10, 1)),
               "`bounds` = c(u, l) needs u < l (similar pairs are kept within u, dissimilar ones pushed beyond l), but it is c(10, 1); did you mean c(1, 10)?",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, learner = "itml", learner_args = list(bounds = c(3, 3))),
               "`learner_args$bounds` = c(u, l) needs u < l", fixed = TRUE)
  expect_error(itml(d$x, d$y, prior = "cov"),
               "`prior` must be \"identity\" or a symmetric positive definite matrix.", fixed = TRUE)
  expect_error(itml(d$x, d$y, prior = matrix(1, 4, 4)),
               "`prior` must be positive definite (its Cholesky factorization failed).", fixed = TRUE)
  expect_error(itml(d$x, d$y, prior = diag(3)),
               "`prior` is 3 x 3 but the learner receives 4 coordinates; they must match.",
               fixed = TRUE)
  expect_error(itml(d$x, pairs = rbind(c(1, 2), c(2, 1)), similar = c(1, -1)),
               "The pair of rows 1 and 2 of `x` is marked both similar and dissimilar (`pairs` rows 1 and 2); remove one of them.",
               fixed = TRUE)
  expect_error(itml(d$x, d$y, tol = 0), "`tol` must be positive, not 0.", fixed = TRUE)
})

test_that("models: formula, prints, persists, works in the shared pipeline", {
  set.seed(1)
  fit <- itml(Species ~ ., data = iris)
  expect_s3_class(fit, c("kmaha_itml", "kmaha_linear", "kmaha_model"))
  expect_gt(fit$train_accuracy, 0.9)
  expect_output(print(fit), "ITML", fixed = TRUE)
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  expect_identical(predict(readRDS(f), iris[1:5, ]), predict(fit, iris[1:5, ]))
  ctx <- kmaha:::kmaha_context()
  spec <- kmaha:::builtin_spec("itml", list())
  set.seed(2)
  p <- kmaha:::fit_pipeline(scale(as.matrix(iris[, 1:4])), iris$Species,
                            kmaha:::feature_kpca(rbf_kernel(0.5)), spec, ctx)
  expect_identical(ncol(p$map), ncol(p$coords))
})
