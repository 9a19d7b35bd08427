# RCA against the closed form computed in plain R: the within-chunklet
# covariance from its definition (Bar-Hillel et al. 2005), C^(-1/2) by
# eigen(), the Fisher-like reduction by eigen(solve(C, St)).

ref_C <- function(x, chunks) {
  C <- matrix(0, ncol(x), ncol(x))
  N <- 0
  for (ch in unique(chunks[!is.na(chunks)])) {
    i <- which(chunks == ch)
    if (length(i) < 2L) next
    xc <- scale(x[i, , drop = FALSE], scale = FALSE)
    C <- C + crossprod(xc)
    N <- N + length(i)
  }
  C / N
}

inv_sqrt <- function(C, ridge = 0) {
  e <- eigen(C, symmetric = TRUE)
  e$vectors %*% diag(1 / sqrt(pmax(e$values, 0) + ridge)) %*% t(e$vectors)
}

rca_data <- function(n = 60, seed = 1) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- matrix(rnorm(n * 4), n) %*% matrix(c(2, 0.5, 0, 0, 0, 1, 0.3, 0, 0, 0, 1, 0.2, 0, 0, 0, 0.5), 4) +
    outer(as.integer(y), c(1, -1, 0.5, 0))
  colnames(x) <- paste0("v", 1:4)
  list(x = x, y = y)
}

test_that("the map is C^(-1/2) of the within-chunklet covariance", {
  d <- rca_data()
  # classes as chunklets
  fit <- rca(d$x, d$y, scale = FALSE)
  C <- ref_C(d$x, d$y)
  expect_equal(unname(fit$covariance), unname(C), tolerance = 1e-10)
  expect_equal(unname(fit$L), inv_sqrt(C), tolerance = 1e-8)
  expect_identical(fit$ridge, 0)
  expect_identical(fit$n_chunklets, 3L)
  # given chunklets, singletons and NA rows ignored
  ch <- rep(NA, 60)
  ch[1:12] <- rep(1:4, each = 3)
  ch[13] <- 99
  ch[c(20, 23, 26, 29)] <- "z"
  fit2 <- rca(d$x, d$y, chunks = ch, scale = FALSE)
  C2 <- ref_C(d$x, ch)
  expect_equal(unname(fit2$L), inv_sqrt(C2), tolerance = 1e-8)
  expect_identical(fit2$n_chunklets, 5L)
  expect_identical(fit2$n_chunklet_points, 16L)
  # whitening: the chunklet points' covariance in the learned space is I
  z <- predict(fit2, d$x, type = "transform")
  expect_equal(unname(ref_C(z, ch)), diag(4), tolerance = 1e-8)
  # scale = TRUE: the same on the standardized inputs
  fit3 <- rca(d$x, d$y)
  expect_equal(unname(fit3$L), inv_sqrt(ref_C(scale(d$x), d$y)), tolerance = 1e-8)
})

test_that("a singular covariance gets a ridge, with a warning saying so", {
  d <- rca_data(seed = 2)
  ch <- rep(NA, 60)
  ch[1:3] <- 1
  ch[4:5] <- 2  # 5 points in 2 chunklets: rank 3 of 4
  expect_warning(fit <- rca(d$x, chunks = ch, scale = FALSE),
                 "The within-chunklet covariance is singular (rank 3 of 4): RCA added a ridge of",
                 fixed = TRUE)
  C <- ref_C(d$x, ch)
  ev <- eigen(C, symmetric = TRUE)$values
  expect_equal(fit$ridge, 1e-6 * max(ev), tolerance = 1e-10)
  expect_equal(unname(fit$L), inv_sqrt(C, 1e-6 * max(ev)), tolerance = 1e-6)
  expect_identical(fit$rank, 3L)
  # a given ridge: no warning
  expect_no_warning(fit2 <- rca(d$x, chunks = ch, ridge = 0.1, scale = FALSE))
  expect_equal(unname(fit2$L), inv_sqrt(C, 0.1), tolerance = 1e-8)
  # no labels: the model only transforms
  expect_null(fit2$y)
  expect_error(predict(fit2, d$x[1:2, ]),
               "This model was fitted without class labels (from pairs or chunklets only), so it cannot classify: use type = \"transform\", or refit with `y`.",
               fixed = TRUE)
  expect_identical(dim(predict(fit2, d$x[1:2, ], type = "transform")), c(2L, 4L))
  expect_output(print(fit2), "no class labels (transform only)", fixed = TRUE)
})

test_that("the Fisher-like reduction matches eigen(solve(C, St))", {
  d <- rca_data(seed = 3)
  fit <- rca(d$x, d$y, dim = 2, scale = FALSE)
  C <- ref_C(d$x, d$y)
  St <- crossprod(scale(d$x, scale = FALSE)) / nrow(d$x)
  e <- eigen(solve(C, St))
  V <- Re(e$vectors[, 1:2])
  V <- sweep(V, 2L, sqrt(colSums(V * (C %*% V))), "/")  # V'CV = I
  expect_equal(fit$fisher_eigenvalues, Re(e$values), tolerance = 1e-8)
  # RCA in the reduced space whitens V'CV = I: the map is V' (up to signs)
  expect_equal(unname(crossprod(fit$L)), V %*% t(V), tolerance = 1e-7)
  expect_identical(dim(fit$L), c(2L, 4L))
})

test_that("the metric is invariant to a rotation of x (scale = FALSE)", {
  d <- rca_data(seed = 4)
  set.seed(8)
  R <- qr.Q(qr(matrix(rnorm(16), 4)))
  a <- rca(d$x, d$y, scale = FALSE)
  b <- rca(d$x %*% R, d$y, scale = FALSE)
  expect_equal(unname(b$L), unname(t(R) %*% a$L %*% R), tolerance = 1e-8)
  expect_equal(as.matrix(stats::dist(a$embedding)), as.matrix(stats::dist(b$embedding)),
               tolerance = 1e-8)
  a2 <- rca(d$x, d$y, dim = 2, scale = FALSE)
  b2 <- rca(d$x %*% R, d$y, dim = 2, scale = FALSE)
  expect_equal(as.matrix(stats::dist(a2$embedding)), as.matrix(stats::dist(b2$embedding)),
               tolerance = 1e-7)
})

test_that("p > n: the span path gives the full path's distances and neighbours", {
  set.seed(5)
  n <- 20L
  y <- factor(rep(c("a", "b"), each = n / 2))
  x <- matrix(rnorm(n * 35), n) + outer(as.integer(y), rnorm(35))
  ch <- as.integer(y)
  ctx <- kmaha:::kmaha_context()
  s <- kmaha:::core_rca_fit(x, ch, 0L, ctx, ridge = 0.05, span = TRUE)
  f <- kmaha:::core_rca_fit(x, ch, 0L, ctx, ridge = 0.05, span = FALSE)
  expect_identical(s$span_rank, n - 1L)
  expect_identical(dim(s$L), c(n - 1L, 35L))
  ds <- as.matrix(stats::dist(x %*% t(s$L)))
  df <- as.matrix(stats::dist(x %*% t(f$L)))
  expect_equal(ds, df, tolerance = 1e-8)
  # new points: the full metric adds the same amount to every distance to
  # the training points
  q <- matrix(rnorm(3 * 35), 3)
  d2 <- function(L) {
    zq <- q %*% t(L)
    zx <- x %*% t(L)
    outer(rowSums(zq^2), rowSums(zx^2), "+") - 2 * zq %*% t(zx)
  }
  gap <- d2(f$L) - d2(s$L)
  expect_equal(gap - gap[, 1], matrix(0, 3, n), tolerance = 1e-6 * max(abs(gap)))
})

test_that("bad chunklets and options are errors naming the argument", {
  d <- rca_data()
  expect_error(rca(d$x), "rca() needs chunklets: give `chunks` (one id per row of `x`) or class labels `y`.",
               fixed = TRUE)
  expect_error(rca(d$x, chunks = 1:3), "`chunks` has length 3 but `x` has 60 rows; they must match.",
               fixed = TRUE)
  expect_error(rca(d$x, chunks = 1:60),
               "`chunks` has no chunklet with 2 or more rows: a chunklet says which points belong together, so it needs at least two.",
               fixed = TRUE)
  expect_error(rca(d$x, d$y, ridge = -1), "`ridge` must be non-negative, not -1.", fixed = TRUE)
  expect_error(rca(d$x, d$y, dim = 5),
               "`dim` (5) must not exceed the number of input columns of `x` (4).", fixed = TRUE)
})

test_that("the model works through the formula, prints, and persists", {
  fit <- rca(Species ~ ., data = iris)
  expect_s3_class(fit, c("kmaha_rca", "kmaha_linear", "kmaha_model"))
  expect_gt(fit$train_accuracy, 0.9)
  expect_output(print(fit), "RCA", fixed = TRUE)
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  expect_identical(predict(readRDS(f), iris[1:5, ]), predict(fit, iris[1:5, ]))
  # through the pipeline every learner shares (the KPCA trick)
  ctx <- kmaha:::kmaha_context()
  spec <- kmaha:::builtin_spec("rca", list(ridge = 1e-3))
  p <- kmaha:::fit_pipeline(scale(as.matrix(iris[, 1:4])), iris$Species,
                            kmaha:::feature_kpca(rbf_kernel(0.5)), spec, ctx)
  expect_identical(ncol(p$map), ncol(p$coords))
})
