# LFDA against an independent plain-R computation: the affinities from
# dist(), the scatters from their pairwise definitions (Sugiyama 2007, eqs.
# for S^(lw) and S^(lb)), the generalized eigenproblem by eigen(solve(Slw,
# Slb)).

ref_lfda <- function(x, y, k) {
  n <- nrow(x)
  d2 <- as.matrix(stats::dist(x))^2
  sigma <- numeric(n)
  for (cl in unique(y)) {
    i <- which(y == cl)
    if (length(i) < 2L) next
    kk <- min(k, length(i) - 1L)
    sigma[i] <- sqrt(apply(d2[i, i, drop = FALSE], 1, function(r) sort(r)[kk + 1L]))
  }
  A <- exp(-d2 / outer(sigma, sigma))
  A[outer(sigma, sigma) == 0] <- 0
  nc <- table(y)[as.character(y)]
  same <- outer(as.character(y), as.character(y), "==")
  Wlw <- ifelse(same, A / outer(nc, rep(1, n)), 0)
  Wlb <- ifelse(same, A * (1 / n - 1 / outer(nc, rep(1, n))), 1 / n)
  D <- ncol(x)
  Slw <- Slb <- matrix(0, D, D)
  for (i in seq_len(n)) for (j in seq_len(n)) {
    dd <- x[i, ] - x[j, ]
    Slw <- Slw + 0.5 * Wlw[i, j] * tcrossprod(dd)
    Slb <- Slb + 0.5 * Wlb[i, j] * tcrossprod(dd)
  }
  e <- eigen(solve(Slw, Slb))
  V <- Re(e$vectors)
  lam <- Re(e$values)
  # S_lw-normalized eigenvectors
  V <- sweep(V, 2L, sqrt(colSums(V * (Slw %*% V))), "/")
  list(sigma = sigma, Slw = Slw, Slb = Slb, values = lam, vectors = V)
}

lfda_data <- function(n = 60, seed = 1) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  # class "a" bimodal: the case LFDA is for
  mode <- rep(c(-3, 3), length.out = n)
  x <- cbind(matrix(rnorm(n * 2), n) + 1.5 * as.integer(y) +
               ifelse(y == "a", mode, 0), matrix(rnorm(n * 3), n))
  colnames(x) <- paste0("v", 1:5)
  list(x = x, y = y)
}

proj <- function(V) V %*% solve(crossprod(V), t(V))

test_that("local scales and both scatters match their pairwise definitions", {
  d <- lfda_data()
  for (k in c(1, 7, 25)) {
    fit <- lfda(d$x, d$y, k = k, scale = FALSE)
    ref <- ref_lfda(d$x, d$y, k)
    expect_equal(unname(fit$local_scale), ref$sigma, tolerance = 1e-10)
    expect_equal(unname(fit$scatter$within), ref$Slw, tolerance = 1e-10)
    expect_equal(unname(fit$scatter$between), ref$Slb, tolerance = 1e-10)
  }
  # scale = TRUE: the same on the standardized inputs
  fit <- lfda(d$x, d$y)
  ref <- ref_lfda(scale(d$x), d$y, 7)
  expect_equal(unname(fit$scatter$within), ref$Slw, tolerance = 1e-10)
})

test_that("eigenvalues and the three metrics agree with eigen(solve(Slw, Slb))", {
  # (to 1e-6: the fit whitens S_lw + 1e-8 trace(S_lw) I)
  d <- lfda_data(seed = 2)
  ref <- ref_lfda(d$x, d$y, 7)
  w <- lfda(d$x, d$y, scale = FALSE)
  expect_equal(w$eigenvalues, ref$values, tolerance = 1e-6)
  # weighted: L'L = V diag(lambda) V' over all five directions
  M_ref <- ref$vectors %*% diag(ref$values) %*% t(ref$vectors)
  expect_equal(unname(crossprod(w$L)), M_ref, tolerance = 1e-6)
  for (dd in 1:3) {
    p <- lfda(d$x, d$y, dim = dd, metric = "plain", scale = FALSE)
    o <- lfda(d$x, d$y, dim = dd, metric = "orthonormalized", scale = FALSE)
    wd <- lfda(d$x, d$y, dim = dd, scale = FALSE)
    Vd <- ref$vectors[, seq_len(dd), drop = FALSE]
    # plain: the S_lw-normalized eigenvectors themselves (up to sign)
    expect_equal(unname(abs(t(p$L))), abs(Vd), tolerance = 1e-6)
    expect_equal(unname(p$L %*% ref$Slw %*% t(p$L)), diag(dd), tolerance = 1e-6)
    # orthonormalized: orthonormal rows spanning the same subspace
    expect_equal(unname(tcrossprod(o$L)), diag(dd), tolerance = 1e-10)
    expect_equal(unname(proj(t(o$L))), proj(Vd), tolerance = 1e-6)
    # weighted: the plain rows times sqrt(eigenvalue)
    expect_equal(unname(abs(wd$L)), unname(abs(p$L)) * sqrt(ref$values[seq_len(dd)]),
                 tolerance = 1e-6)
    expect_equal(wd$convergence$objective, sum(ref$values[seq_len(dd)]), tolerance = 1e-6)
  }
})

test_that("the learned metric is invariant to a rotation of x (scale = FALSE)", {
  d <- lfda_data(seed = 3)
  set.seed(9)
  R <- qr.Q(qr(matrix(rnorm(25), 5)))
  xr <- d$x %*% R
  for (m in c("weighted", "orthonormalized", "plain")) {
    a <- lfda(d$x, d$y, dim = 2, metric = m, scale = FALSE)
    b <- lfda(xr, d$y, dim = 2, metric = m, scale = FALSE)
    expect_equal(a$eigenvalues, b$eigenvalues, tolerance = 1e-8)
    # L_b = L_a R (rows up to sign): the same distances between points
    expect_equal(unname(abs(b$L %*% t(R))), unname(abs(a$L)), tolerance = 1e-7)
    expect_equal(as.matrix(stats::dist(a$embedding)), as.matrix(stats::dist(b$embedding)),
                 tolerance = 1e-7)
  }
})

test_that("p > n: the span path equals the full path", {
  set.seed(4)
  n <- 24L
  y <- factor(rep(c("a", "b"), each = n / 2))
  x <- matrix(rnorm(n * 40), n) + 0.8 * outer(as.integer(y), rnorm(40))
  ctx <- kmaha:::kmaha_context()
  # S_lw is singular in the span (rank n - 2 of n - 1): the eigenvectors
  # after the first are as accurate as the ridge lets the whitening be, so
  # compare with a moderate ridge tightly and with the default one loosely
  for (m in c("weighted", "orthonormalized", "plain")) {
    for (rd in c(1e-3, -1)) {
      s <- kmaha:::core_lfda_fit(x, as.integer(y), 4L, 7L, m, ctx, span = TRUE, ridge = rd)
      f <- kmaha:::core_lfda_fit(x, as.integer(y), 4L, 7L, m, ctx, span = FALSE, ridge = rd)
      expect_identical(s$span_rank, n - 1L)
      expect_identical(f$span_rank, 0L)
      expect_equal(s$ridge, f$ridge, tolerance = 1e-12)
      expect_equal(s$eigenvalues[1:4], f$eigenvalues[1:4], tolerance = 1e-7)
      # the complement of the span carries the eigenvalue 0 only
      expect_true(all(abs(f$eigenvalues[n:40]) <= 1e-8 * f$eigenvalues[1]))
      # row by row (the first, of the null direction of S_lw, is the largest)
      for (r in 1:4) {
        expect_equal(s$L[r, ], f$L[r, ], tolerance = if (rd > 0) 1e-7 else 1e-4)
      }
    }
  }
  # the public fit: dim beyond the rank is cut to it
  fit <- lfda(x, y, scale = FALSE)
  expect_identical(nrow(fit$L), n - 1L)
  expect_null(fit$scatter)
})

test_that("the subspace of the CRAN package lfda (orthonormalized, knn = 5)", {
  skip_without("lfda")
  d <- lfda_data(seed = 5)
  ours <- lfda(d$x, d$y, dim = 2, k = 5, metric = "orthonormalized", scale = FALSE)
  theirs <- lfda::lfda(d$x, as.character(d$y), r = 2, metric = "orthonormalized", knn = 5)
  expect_equal(unname(proj(t(ours$L))), unname(proj(theirs$T)), tolerance = 1e-6)
})

test_that("the KPCA trick's principal coordinates take the same path", {
  d <- lfda_data(seed = 6)
  xs <- scale(d$x)
  ctx <- kmaha:::kmaha_context()
  fm <- kmaha:::fit_feature_map(kmaha:::feature_kpca(rbf_kernel(0.5)), xs, ctx)
  z <- fm$coords
  a <- kmaha:::core_lfda_fit(z, as.integer(d$y), 3L, 7L, "weighted", ctx, principal = TRUE)
  b <- kmaha:::core_lfda_fit(z, as.integer(d$y), 3L, 7L, "weighted", ctx, principal = FALSE)
  expect_equal(a$L, b$L, tolerance = 1e-8)
  # through the pipeline every learner shares
  spec <- kmaha:::builtin_spec("lfda", list(dim = 2))
  p <- kmaha:::fit_pipeline(xs, d$y, kmaha:::feature_kpca(rbf_kernel(0.5)), spec, ctx)
  expect_identical(dim(p$map), c(2L, ncol(p$coords)))
})

test_that("bad options are errors naming the argument", {
  d <- lfda_data()
  expect_error(lfda(d$x, d$y, metric = "euclid"),
               "`metric` must be \"weighted\", \"orthonormalized\" or \"plain\".", fixed = TRUE)
  expect_error(lfda(d$x, d$y, k = 0), "`k` must be a single whole number >= 1.", fixed = TRUE)
  expect_error(lfda(d$x, d$y, dim = 6),
               "`dim` (6) must not exceed the number of input columns of `x` (5).", fixed = TRUE)
  expect_error(lfda(d$x, d$y, kk = 2), "kk", fixed = TRUE)
  expect_error(lfda(d$x[1:3, ], factor(c("a", "b", "c"))),
               "`y` has no class with 2 or more members: LFDA's local within-class scatter is zero. Each class needs at least 2 rows to take part.",
               fixed = TRUE)
})

test_that("the model predicts, prints and survives saveRDS()", {
  fit <- lfda(Species ~ ., data = iris, dim = 2)
  expect_s3_class(fit, c("kmaha_lfda", "kmaha_linear", "kmaha_model"))
  expect_gt(fit$train_accuracy, 0.9)
  out <- capture.output(print(fit))
  expect_match(out[1], "LFDA", fixed = TRUE)
  expect_true(any(grepl("eigen-decomposition", out, fixed = TRUE)))
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  expect_identical(predict(back, iris[c(1, 51, 101), ]), predict(fit, iris[c(1, 51, 101), ]))
  expect_identical(fit$settings$metric, "weighted")
})
