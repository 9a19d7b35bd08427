# NCA in the span of the centred training points (more columns than rows,
# or collinear columns): checked against the full-dimension fit (the same
# core with the reduction switched off), the plain-R objective of
# test-nca.R on all D inputs, and predictions; the starts, the rows of the
# map, the mini-batch path, and Euclidean k-NN's map at p >> n.

span_data <- function(n = 20, p = 40, seed = 3) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  signal <- seq_len(p) %% 5 == 0
  shift <- outer(as.integer(y), as.numeric(signal))
  x <- matrix(rnorm(n * p), n) + 0.6 * shift
  xt <- matrix(rnorm(n * p), n) + 0.6 * outer(as.integer(y), as.numeric(signal))
  list(x = x, y = y, xt = xt)
}

# p < n with collinear columns: 8 columns of rank 5 (after centring and
# scaling too).
collinear_data <- function(n = 45, seed = 4) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  make <- function() {
    b <- matrix(rnorm(n * 5), n) + 0.8 * outer(as.integer(y), c(1, 0, 0, 1, 0))
    cbind(b, b[, 1] + b[, 2], b[, 3] - 2 * b[, 4], 0.5 * b[, 5] + b[, 1])
  }
  list(x = make(), y = y, xt = make())
}

# Plain-R NCA objective (as test-nca.R): eq. (2) plus lambda ||A||_F^2.
span_objective_r <- function(A, x, y, lambda = 0) {
  z <- x %*% t(A)
  d2 <- as.matrix(stats::dist(z))^2
  e <- exp(-d2)
  diag(e) <- 0
  p <- e / rowSums(e)
  -sum(p[outer(y, y, "==")]) + lambda * sum(A^2)
}

# An orthonormal basis of the span of the centred rows of x (D x r) and one
# direction orthogonal to it.
span_basis <- function(x) {
  xc <- sweep(x, 2, colMeans(x))
  s <- svd(xc)
  r <- sum(s$d > 1e-8 * s$d[1])
  list(B = s$v[, seq_len(r), drop = FALSE], r = r)
}

# The full-dimension fit of nca(): the core on the scaled inputs of `fit`,
# from the same start, without the reduction to the span.
nca_full_fit <- function(fit, x, y, lambda, init = NULL, max_iter = 5000, tol = 1e-12) {
  xs <- unname(kmaha:::apply_scaling(x, fit$prep))
  kmaha:::core_nca_fit(xs, as.integer(y), init, lambda, NULL, max_iter, tol, FALSE,
                       rescale_start = is.null(init), ctx = test_ctx(1L),
                       identity_rows = if (is.null(init)) ncol(xs) else 0L, span = FALSE)
}

compare_with_full <- function(d, lambda, info) {
  D <- ncol(d$x)
  # (a tight tolerance: near the optimum the objective is flat in some
  # directions of the map, which a looser one leaves at 1e-3 apart)
  fit <- nca(d$x, d$y, lambda = lambda, tol = 1e-12, max_iter = 5000)
  full <- nca_full_fit(fit, d$x, d$y, lambda)
  xs <- unname(kmaha:::apply_scaling(d$x, fit$prep))
  r <- span_basis(xs)$r
  expect_true(fit$convergence$converged, info = info)
  expect_identical(fit$convergence$span_rank, r, info = info)
  expect_identical(full$span_rank, 0L, info = info)
  # the map acts on the D inputs, with at most r rows; the full one has D
  expect_identical(dim(fit$L), c(r, D), info = info)
  expect_identical(fit$settings$dim, r, info = info)
  expect_identical(dim(full$map), c(D, D), info = info)
  # the same objective value, which is the plain-R objective on all D inputs
  expect_equal(fit$convergence$objective, full$value, tolerance = 1e-6, info = info)
  expect_equal(fit$convergence$objective, span_objective_r(unname(fit$L), xs, d$y, lambda),
               tolerance = 1e-9, info = info)
  # learned distances between training points
  expect_equal(as.vector(dist(xs %*% t(unname(fit$L)))), as.vector(dist(xs %*% t(full$map))),
               tolerance = 1e-3, info = info)
  # predictions for new points: 1-NN in the full fit's embedding
  xts <- unname(kmaha:::apply_scaling(d$xt, fit$prep))
  ref <- knn_classify(xs %*% t(full$map), d$y, xts %*% t(full$map), k = 1)$class
  expect_identical(as.character(predict(fit, d$xt)), as.character(ref), info = info)
  # the map has no component outside the span
  ortho <- qr.Q(qr(span_basis(xs)$B), complete = TRUE)[, r + 1]
  expect_lt(max(abs(fit$L %*% ortho)), 1e-10 * max(abs(fit$L)))
  invisible(fit)
}

test_that("p > n: the span fit has the full-dimension fit's objective, distances and predictions", {
  d <- span_data()
  for (lambda in c(0, 0.05)) compare_with_full(d, lambda, paste("p > n, lambda", lambda))
})

test_that("collinear columns with p < n: the fit in their span equals the full-dimension fit", {
  d <- collinear_data()
  for (lambda in c(0, 0.05)) {
    fit <- compare_with_full(d, lambda, paste("collinear, lambda", lambda))
    expect_identical(dim(fit$L), c(5L, 8L))
  }
  # without collinear columns nothing changes: the fit is the full one
  x5 <- d$x[, 1:5]
  fit <- nca(x5, d$y, tol = 1e-12, max_iter = 5000)
  full <- nca_full_fit(fit, x5, d$y, 0)
  expect_identical(fit$convergence$span_rank, 0L)
  expect_identical(unname(fit$L), full$map)
})

test_that("the reduced objective and gradient are the full ones at A~ B'", {
  d <- span_data(n = 15, p = 30, seed = 5)
  xs <- scale(d$x)
  sb <- span_basis(xs)
  z <- xs %*% sb$B
  set.seed(6)
  for (lambda in c(0, 0.3)) {
    At <- matrix(rnorm(3 * sb$r, sd = 0.3), 3, sb$r)
    red <- kmaha:::cpp_nca_objective(z, as.integer(d$y), At, lambda, NULL, 0L, -1, test_ctx())
    full <- kmaha:::cpp_nca_objective(unname(xs), as.integer(d$y), At %*% t(sb$B), lambda, NULL,
                                      0L, -1, test_ctx())
    expect_equal(red$value, full$value, tolerance = 1e-12)
    expect_equal(red$value, span_objective_r(At %*% t(sb$B), unname(xs), d$y, lambda),
                 tolerance = 1e-12)
    # the full gradient lies in the span: it is the reduced one times B'
    expect_equal(full$gradient, red$gradient %*% t(sb$B), tolerance = 1e-10)
    # and the reduced gradient matches central differences
    h <- 1e-5
    fd <- At
    for (k in seq_along(At)) {
      Ap <- At; Am <- At
      Ap[k] <- Ap[k] + h
      Am[k] <- Am[k] - h
      fd[k] <- (span_objective_r(Ap %*% t(sb$B), unname(xs), d$y, lambda) -
                  span_objective_r(Am %*% t(sb$B), unname(xs), d$y, lambda)) / (2 * h)
    }
    expect_lt(max(abs(red$gradient - fd)) / max(abs(fd)), 1e-6)
  }
})

test_that("p > n: the starts are restricted to the span, and the map has at most r rows", {
  d <- span_data(n = 20, p = 50, seed = 7)
  D <- ncol(d$x)
  xs <- unname(kmaha:::apply_scaling(d$x, kmaha:::fit_scaling(d$x)))
  sb <- span_basis(xs)
  data_terms <- function(A) span_objective_r(A, xs, d$y, 0)
  # the identity: the r x r identity in the span, penalty lambda r
  fit <- suppressWarnings(nca(d$x, d$y, lambda = 0.1, max_iter = 1))
  expect_equal(fit$convergence$trace[1], data_terms(diag(D)) + 0.1 * sb$r, tolerance = 1e-10)
  # pca with dim above r: the directions in which the points vary (r rows)
  for (dim in c(3L, 30L)) {
    fit <- suppressWarnings(nca(d$x, d$y, dim = dim, max_iter = 50))
    expect_identical(dim(fit$L), c(min(dim, sb$r), D))
    expect_identical(fit$settings$dim, min(dim, sb$r))
  }
  P <- kmaha:::nca_init("pca", xs, 30L)$A
  expect_identical(dim(P), c(sb$r, D))
  expect_equal(P %*% t(P), diag(sb$r), tolerance = 1e-10)
  expect_lt(max(abs(P - P %*% sb$B %*% t(sb$B))), 1e-10)
  # a matrix start: the solver starts from init %*% B (the same data terms,
  # the penalty of its component in the span)
  set.seed(8)
  L0 <- matrix(rnorm(4 * D, sd = 0.2), 4, D)
  fit <- suppressWarnings(nca(d$x, d$y, dim = 4, init = L0, max_iter = 1, lambda = 0.1))
  expect_equal(fit$convergence$trace[1], data_terms(L0) + 0.1 * sum((L0 %*% sb$B)^2),
               tolerance = 1e-10)
  expect_identical(dim(fit$L), c(4L, D))
  # a random start is drawn in the span: reproducible, D columns, <= r rows
  set.seed(9)
  f1 <- suppressWarnings(nca(d$x, d$y, init = "random", max_iter = 30))
  set.seed(9)
  f2 <- suppressWarnings(nca(d$x, d$y, init = "random", max_iter = 30))
  expect_identical(f1$L, f2$L)
  expect_identical(dim(f1$L), c(sb$r, D))
  expect_identical(f1$convergence$span_rank, sb$r)
})

test_that("a start of the wrong shape still errors with the existing message", {
  d <- span_data()
  expect_error(nca(d$x, d$y, dim = 3, init = matrix(1, 2, 40)),
               "`init` must be a 3 x 40 matrix (dim x number of input columns), not 2 x 40.",
               fixed = TRUE)
  expect_error(nca(d$x, d$y, init = matrix(1, 40, 39)),
               "`init` must be a 40 x 40 matrix (dim x number of input columns), not 40 x 39.",
               fixed = TRUE)
})

test_that("p > n: mini-batch NCA works in the span and returns a map on the inputs", {
  d <- span_data(n = 24, p = 60, seed = 10)
  D <- ncol(d$x)
  xs <- unname(kmaha:::apply_scaling(d$x, kmaha:::fit_scaling(d$x)))
  sb <- span_basis(xs)
  set.seed(11)
  fit <- nca(d$x, d$y, method = "minibatch", batch_size = 24, max_iter = 60, lambda = 0.01)
  expect_identical(dim(fit$L), c(sb$r, D))
  expect_identical(fit$convergence$span_rank, sb$r)
  expect_true(all(is.finite(fit$L)))
  # one batch of all rows: the first step's objective is the objective at
  # the identity's restriction to the span (penalty lambda r)
  expect_equal(fit$convergence$trace[1],
               span_objective_r(diag(D), xs, d$y, 0) + 0.01 * sb$r, tolerance = 1e-10)
  # the steps lower the objective and move nothing outside the span
  expect_lt(span_objective_r(unname(fit$L), xs, d$y, 0.01), fit$convergence$trace[1] - 1)
  ortho <- qr.Q(qr(sb$B), complete = TRUE)[, sb$r + 1]
  expect_lt(max(abs(fit$L %*% ortho)), 1e-10 * max(abs(fit$L)))
  # the full-dimension iteration from the same batches starts at the same
  # objective value except for the penalty outside the span
  idx <- matrix(seq_len(24), 24, 1)
  full <- kmaha:::core_nca_minibatch(xs, as.integer(d$y), NULL, 0.01, idx, 0.02, test_ctx(),
                                     identity_rows = D, span = FALSE)
  expect_identical(full$span_rank, 0L)
  expect_identical(dim(full$map), c(D, D))
  expect_equal(full$trace[1], fit$convergence$trace[1] + 0.01 * (D - sb$r), tolerance = 1e-10)
})

test_that("p > n: Euclidean k-NN's map is the projection onto the span, with the same neighbours", {
  d <- span_data(n = 20, p = 60, seed = 12)
  xs <- scale(d$x)
  xts <- scale(d$xt, attr(xs, "scaled:center"), attr(xs, "scaled:scale"))
  L <- kmaha:::euclidean_map(unname(xs))
  expect_identical(dim(L), c(nrow(xs) - 1L, ncol(xs)))
  for (k in c(1L, 3L)) {
    ref <- knn_classify(xs, d$y, xts, k = k)$class
    got <- knn_classify(xs %*% t(L), d$y, xts %*% t(L), k = k)$class
    expect_identical(as.character(got), as.character(ref))
  }
  # the squared distances differ by the same amount for every training point
  d_full <- as.matrix(dist(rbind(xts, xs)))[seq_len(nrow(xts)), -seq_len(nrow(xts))]^2
  z <- rbind(xts, xs) %*% t(L)
  d_span <- as.matrix(dist(z))[seq_len(nrow(xts)), -seq_len(nrow(xts))]^2
  gap <- d_full - d_span
  expect_lt(max(apply(gap, 1, function(g) diff(range(g)))), 1e-8 * max(d_full))
  # fewer columns than rows: the identity
  expect_identical(kmaha:::euclidean_map(unname(xs[, 1:10])), diag(10))
})

test_that("p > n: kmaha()'s default choice scores the linear NCA and Euclidean candidates", {
  d <- span_data(n = 30, p = 80, seed = 13)
  fit <- suppressWarnings(kmaha(d$x, d$y, learner = "nca", kernels = list(rbf_kernel(1)),
                                cv_folds = 3, seed = 1))
  curve <- fit$kernel_choice$cv$curve
  expect_true(all(c("linear", "euclidean") %in% curve$kind))
  expect_true(all(is.finite(curve$mean[curve$kind %in% c("linear", "euclidean")])))
  expect_lte(nrow(fit$L), nrow(d$x) - 1L)
  expect_length(predict(fit, d$xt), nrow(d$xt))
  # the two baselines fitted on all rows: maps of at most n - 1 rows on the
  # 80 inputs
  xs <- scale(d$x)
  for (cand in list(kmaha:::cand_linear(), kmaha:::cand_euclidean())) {
    spec <- kmaha:::candidate_spec(kmaha:::learner_spec("nca"), cand, chosen = TRUE, p = 80L)
    pl <- kmaha:::fit_pipeline(xs, d$y, kmaha:::feature_identity(), spec, test_ctx())
    expect_identical(dim(pl$map), c(nrow(xs) - 1L, 80L), label = cand$kind)
  }
})
