# LMNN with more features than points: the core solves in the span of the
# centred training points (r <= n - 1 coordinates) and maps the result back
# to a map on the original p inputs.  Checked against the full-dimension
# fit (the same core with the reduction switched off), an independent
# plain-R objective, and predictions; the kernel trick (kernel rows solved
# on their KPCA coordinates) against its full n-dimensional fit.

span_problem <- function(n = 30, p = 120, seed = 3) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  signal <- runif(p) < 0.2
  x <- matrix(rnorm(n * p), n) + 0.4 * outer(as.integer(y), as.numeric(signal))
  xt <- matrix(rnorm(n * p), n) + 0.4 * outer(as.integer(y), as.numeric(signal))
  list(x = x, y = y, xt = xt)
}

# The full-dimension fit of the same problem: the core on the scaled inputs
# of `fit`, with its targets, without the reduction to the span.
full_fit <- function(fit, x, y, lambda, solver = "L", init = matrix(0, 0, 0),
                     reg = NULL, tol = 1e-9) {
  xs <- if (is.null(reg)) unname(kmaha:::apply_scaling(x, fit$prep)) else unname(x)
  kmaha:::core_lmnn_fit(xs, as.integer(y), fit$targets, init, 0.5, lambda, 5000, tol,
                        solver, 10L, 0.2, FALSE, test_ctx(1L), reg = reg, span = FALSE)
}

test_that("p > n: the span fit has the full-dimension fit's objective, distances and predictions", {
  d <- span_problem()
  p <- ncol(d$x)
  for (lambda in c(0.05, 1)) {
    info <- paste("lambda", lambda)
    fit <- lmnn(d$x, d$y, lambda = lambda, tol = 1e-9, max_iter = 5000)
    full <- full_fit(fit, d$x, d$y, lambda)
    expect_true(fit$convergence$converged, info = info)
    # the map acts on the p original inputs, with at most n - 1 rows
    expect_identical(ncol(fit$L), p, info = info)
    expect_lte(nrow(fit$L), nrow(d$x) - 1L)
    expect_identical(ncol(full$L), p, info = info)
    # Two optimisations of the same convex objective (over r span
    # coordinates and over all p), each stopped by the same rule on its own
    # path: they agree to about 1e-5 relative, and a build that rounds
    # otherwise (make sanitize: -O1, no FMA contraction) moves each path's
    # stopping point by as much (0.091370 against 0.091371): 1e-4 leaves a
    # margin of 10.  The learned distances and the predictions below check
    # the span's map itself.
    expect_equal(fit$convergence$objective, full$objective, tolerance = 1e-4, info = info)
    # the objective reported is the exact one in all p dimensions
    xs <- unname(kmaha:::apply_scaling(d$x, fit$prep))
    ref <- lmnn_plain(xs, d$y, fit$targets, crossprod(unname(fit$L)), mu = 0.5, lambda = lambda)
    expect_equal(fit$convergence$objective, ref$value, tolerance = 1e-8, info = info)
    # learned distances between training points
    span_d <- as.vector(dist(xs %*% t(unname(fit$L))))
    full_d <- as.vector(dist(xs %*% t(full$L)))
    expect_equal(span_d, full_d, tolerance = 1e-3, info = info)
    # predictions on new points: 1-NN in the full fit's embedding
    xts <- unname(kmaha:::apply_scaling(d$xt, fit$prep))
    ref_class <- knn_classify(xs %*% t(full$L), d$y, xts %*% t(full$L), k = 1)$class
    expect_identical(as.character(predict(fit, d$xt)), as.character(ref_class), info = info)
  }
})

test_that("p > n: the convex M solver in the span agrees with the full-dimension one", {
  d <- span_problem(n = 24, p = 60, seed = 4)
  fit <- lmnn(d$x, d$y, lambda = 1, solver = "M", tol = 1e-9, max_iter = 5000)
  full <- full_fit(fit, d$x, d$y, 1, solver = "M")
  expect_identical(ncol(fit$L), ncol(d$x))
  expect_equal(fit$convergence$objective, full$objective, tolerance = 1e-3)
  xs <- unname(kmaha:::apply_scaling(d$x, fit$prep))
  ref <- lmnn_plain(xs, d$y, fit$targets, crossprod(unname(fit$L)), mu = 0.5, lambda = 1)
  expect_equal(fit$convergence$objective, ref$value, tolerance = 1e-8)
})

test_that("p > n without a regulariser: every fit reaches the objective's minimum, zero", {
  d <- span_problem(n = 24, p = 80, seed = 5)
  fit <- lmnn(d$x, d$y)
  full <- full_fit(fit, d$x, d$y, 0, tol = 1e-5)
  expect_identical(ncol(fit$L), ncol(d$x))
  expect_lt(fit$convergence$objective, 1e-10)
  expect_lt(full$objective, 1e-10)
  # the metric ignores directions orthogonal to the centred training points
  xs <- kmaha:::apply_scaling(d$x, fit$prep)
  ortho <- qr.Q(qr(t(sweep(xs, 2, colMeans(xs)))), complete = TRUE)[, nrow(xs) + 3]
  expect_lt(max(abs(fit$L %*% ortho)), 1e-8 * max(abs(fit$L)))
})

test_that("p > n: starts and dim are those of the full-dimension problem", {
  d <- span_problem(n = 20, p = 50, seed = 6)
  # the pca start when dim < p, even with dim above the number of points
  for (dim in c(2L, 30L)) {
    fit <- lmnn(d$x, d$y, dim = dim, max_iter = 50)
    expect_identical(ncol(fit$L), ncol(d$x))
    expect_lte(nrow(fit$L), dim)
    expect_identical(fit$settings$dim, dim)
  }
  # a start given as a matrix: the solver starts from its restriction to the
  # span (the same distances between training points, the regulariser of
  # its component in the span), so the first objective value it records is
  # the data terms at L0 plus lambda ||L0 B||^2 (B: a basis of the span)
  set.seed(7)
  L0 <- matrix(rnorm(5 * 50), 5, 50)
  fit <- suppressWarnings(lmnn(d$x, d$y, init = L0, max_iter = 1, lambda = 0.1))
  xs <- unname(kmaha:::apply_scaling(d$x, fit$prep))
  B <- qr.Q(qr(t(sweep(xs, 2, colMeans(xs)))))[, seq_len(nrow(xs) - 1L)]
  data_terms <- lmnn_plain(xs, d$y, fit$targets, crossprod(L0), mu = 0.5, lambda = 0)$value
  expect_equal(fit$convergence$trace[1], data_terms + 0.1 * sum((L0 %*% B)^2),
               tolerance = 1e-8)
})

test_that("kernel trick: the fit on KPCA coordinates has the full n-dimensional fit's objective", {
  d <- span_problem(n = 36, p = 4, seed = 8)
  K <- kernel_matrix(rbf_kernel(1), scale(d$x))
  K <- (K + t(K)) / 2
  Kt <- kernel_matrix(rbf_kernel(1), scale(d$xt, attr(scale(d$x), "scaled:center"),
                                          attr(scale(d$x), "scaled:scale")), scale(d$x))
  for (lambda in list(NULL, 0.3)) {
    info <- paste("lambda", format(lambda %||% "default"))
    fit <- klmnn(K, d$y, kernel = "precomputed", lambda = lambda, tol = 1e-9, max_iter = 5000)
    full <- full_fit(fit, K, d$y, fit$lambda, reg = K)
    expect_identical(dim(fit$L)[2], nrow(K), info = info)
    # Two optimisations of the same convex objective (over r span
    # coordinates and over all p), each stopped by the same rule on its own
    # path: they agree to about 1e-5 relative, and a build that rounds
    # otherwise (make sanitize: -O1, no FMA contraction) moves each path's
    # stopping point by as much (0.091370 against 0.091371): 1e-4 leaves a
    # margin of 10.  The learned distances and the predictions below check
    # the span's map itself.
    expect_equal(fit$convergence$objective, full$objective, tolerance = 1e-4, info = info)
    # the objective reported is the kernel trick's, at U
    ex <- kmaha:::cpp_lmnn_objective(K, as.integer(d$y), fit$targets, unname(fit$L), 0.5,
                                     fit$lambda, "L", 0, K, test_ctx())
    expect_equal(fit$convergence$objective, ex$value, tolerance = 1e-7, info = info)
    expect_equal(as.vector(dist(K %*% t(unname(fit$L)))), as.vector(dist(K %*% t(full$L))),
                 tolerance = 1e-3, info = info)
    ref_class <- knn_classify(K %*% t(full$L), d$y, Kt %*% t(full$L), k = 1)$class
    expect_identical(as.character(predict(fit, Kt)), as.character(ref_class), info = info)
  }
})
