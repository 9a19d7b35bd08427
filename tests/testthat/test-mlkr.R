# MLKR: the objective against an independent plain-R computation of its
# formula, the gradient against central finite differences, the span of the
# centred rows against the full-dimension fit, the fit's effect on a toy
# problem, predictions against an independent k-NN regression, the model's
# methods, input errors and persistence.

# The formula, straight from the definition: leave-one-out Nadaraya-Watson
# with k_ij = exp(-||A x_i - A x_j||^2).
mlkr_r <- function(A, x, y, lambda = 0) {
  z <- x %*% t(A)
  d2 <- as.matrix(stats::dist(z))^2
  K <- exp(-d2)
  diag(K) <- 0
  yhat <- unname(drop(K %*% y) / rowSums(K))
  list(value = sum((y - yhat)^2) + lambda * sum(A^2), fitted = yhat)
}

mlkr_fg <- function(A, x, y, lambda = 0, threads = 2L, block = 0L, isa = "auto") {
  withr_isa(isa, kmaha:::cpp_mlkr_objective(x, y, A, lambda, block, 0, test_ctx(threads)))
}

mlkr_central_diff <- function(f, A, h = 1e-5) {
  g <- A
  for (i in seq_along(A)) {
    Ap <- A
    Am <- A
    Ap[i] <- Ap[i] + h
    Am[i] <- Am[i] - h
    g[i] <- (f(Ap) - f(Am)) / (2 * h)
  }
  g
}

mlkr_rel_err <- function(a, b) max(abs(a - b)) / max(abs(b), 1e-300)

# The toy problem: y depends on column 1 only, hidden among noise columns of
# the same scale.
mlkr_toy <- function(n, D, seed) {
  set.seed(seed)
  x <- matrix(rnorm(n * D), n, D)
  colnames(x) <- paste0("x", seq_len(D))
  list(x = x, y = sin(2 * x[, 1]) + 0.1 * rnorm(n))
}

# k-NN regression written out: neighbours by distance, ties to the lower
# row; weights uniform, 1 / distance (distance 0 takes all) or
# exp(-squared distance).
knn_regress_r <- function(ref, y, q, k, weights = "uniform", self = FALSE) {
  vapply(seq_len(nrow(q)), function(i) {
    d2 <- colSums((t(ref) - q[i, ])^2)
    cand <- seq_along(d2)
    if (self) cand <- cand[-i]
    nb <- cand[order(d2[cand], cand)][seq_len(k)]
    w <- switch(weights,
      uniform = rep(1, k),
      distance = if (any(d2[nb] == 0)) as.numeric(d2[nb] == 0) else 1 / sqrt(d2[nb]),
      kernel = exp(-(d2[nb] - min(d2[nb]))))
    sum(w * y[nb]) / sum(w)
  }, numeric(1))
}

test_that("the objective and the leave-one-out predictions equal the formula", {
  set.seed(1)
  x <- matrix(rnorm(40 * 5), 40, 5)
  y <- rnorm(40) + x[, 2]
  for (isa in kernel_isas()) {
    for (d in c(2L, 5L)) {
      A <- matrix(rnorm(d * 5, sd = 0.5), d, 5)
      for (lambda in c(0, 0.3)) {
        res <- mlkr_fg(A, x, y, lambda, isa = isa)
        ref <- mlkr_r(A, x, y, lambda)
        expect_identical(res$isa, isa)
        expect_equal(res$value, ref$value, tolerance = 1e-12)
        expect_equal(res$fitted, unname(ref$fitted), tolerance = 1e-12)
      }
    }
  }
})

test_that("the gradient matches central finite differences and the closed form (d < D, d = D)", {
  set.seed(2)
  n <- 45
  x <- matrix(rnorm(n * 6), n, 6)
  y <- sin(x[, 1]) + 0.3 * rnorm(n)
  # dL/dA = 4 A sum_i e_i sum_j p_ij (yhat_i - y_j) (x_i - x_j)(x_i - x_j)'
  closed_form <- function(A, lambda) {
    z <- x %*% t(A)
    K <- exp(-as.matrix(stats::dist(z))^2)
    diag(K) <- 0
    P <- K / rowSums(K)
    yhat <- drop(P %*% y)
    S <- matrix(0, 6, 6)
    for (i in seq_len(n)) {
      dx <- sweep(x, 2L, x[i, ])  # x_j - x_i (the sign cancels)
      w <- (yhat[i] - y[i]) * P[i, ] * (yhat[i] - y)
      S <- S + crossprod(dx * w, dx)
    }
    4 * A %*% S + 2 * lambda * A
  }
  for (isa in kernel_isas()) {
    for (d in c(2L, 6L)) {
      for (lambda in c(0, 0.25)) {
        A <- matrix(rnorm(d * 6, sd = 0.4), d, 6)
        g <- mlkr_fg(A, x, y, lambda, isa = isa)$gradient
        g_fd <- mlkr_central_diff(function(B) mlkr_r(B, x, y, lambda)$value, A)
        expect_lt(mlkr_rel_err(g, g_fd), 1e-6)
        expect_lt(mlkr_rel_err(g, closed_form(A, lambda)), 1e-10)
      }
    }
  }
})

test_that("block size and thread count do not change the objective", {
  set.seed(3)
  x <- matrix(rnorm(70 * 4), 70, 4)
  y <- rnorm(70)
  A <- matrix(rnorm(12), 3, 4)
  ref <- mlkr_fg(A, x, y, 0.1, threads = 1L, block = 70L, isa = "default")
  for (isa in kernel_isas()) {
    for (th in 1:2) {
      for (b in c(1L, 7L, 16L)) {
        res <- mlkr_fg(A, x, y, 0.1, threads = th, block = b, isa = isa)
        expect_equal(res$value, ref$value, tolerance = 1e-12)
        expect_equal(res$gradient, ref$gradient, tolerance = 1e-10)
      }
    }
  }
})

test_that("far-apart points and huge maps give finite values (the safe softmax)", {
  set.seed(4)
  x <- rbind(matrix(rnorm(10), 5, 2), matrix(rnorm(10), 5, 2) + 1e3)
  y <- c(rnorm(5), rnorm(5) + 10)
  res <- mlkr_fg(diag(2), x, y)
  expect_true(is.finite(res$value))
  expect_true(all(is.finite(res$gradient)))
  # the clusters do not see each other: each one's objective on its own
  expect_equal(res$value, mlkr_r(diag(2), x[1:5, ], y[1:5])$value +
                 mlkr_r(diag(2), x[6:10, ], y[6:10])$value, tolerance = 1e-9)
  # exp(-d) underflows for every pair at this scale: the nearest neighbour
  # alone predicts (1-NN regression), no 0/0
  big <- mlkr_fg(diag(1e4, 2), x[1:5, ], y[1:5])
  expect_true(is.finite(big$value))
  z <- x[1:5, ] * 1e4
  nn <- apply(as.matrix(dist(z)) + diag(Inf, 5), 1, which.min)
  expect_equal(big$fitted, y[1:5][nn])
})

test_that("the span fit equals the full-dimension fit when p > n", {
  set.seed(5)
  n <- 14L
  D <- 30L
  x <- matrix(rnorm(n * D), n, D)
  y <- x[, 1] - x[, 2] + 0.2 * rnorm(n)
  xc <- sweep(x, 2L, colMeans(x))
  sv <- svd(xc)
  r <- sum(sv$d > 1e-8 * sv$d[1])
  expect_identical(r, n - 1L)
  P <- sv$v[, seq_len(r)] %*% t(sv$v[, seq_len(r)])  # projection onto the span
  ctx <- test_ctx(1L)
  A0 <- diag(0.2, D)
  fit2 <- function(span, lambda, max_iter, tol) {
    kmaha:::core_mlkr_fit(x, y, A0, lambda, max_iter, tol, FALSE, FALSE, ctx, span = span)
  }
  # lambda = 0: L-BFGS from A0 moves within the span only (the gradient's
  # rows lie in it), and its steps there are the same in both coordinates,
  # so the full fit is the span fit plus the start outside the span (up to
  # rounding, which the iterations amplify: a few iterations here)
  full <- fit2(FALSE, 0, 12L, 1e-10)
  red <- fit2(TRUE, 0, 12L, 1e-10)
  expect_identical(full$span_rank, 0L)
  expect_identical(red$span_rank, r)
  # at most one row per dimension of the span (the same metric)
  expect_identical(dim(red$map), c(r, D))
  expect_equal(red$value, full$value, tolerance = 1e-10)
  expect_equal(full$map %*% (diag(D) - P), A0 %*% (diag(D) - P), tolerance = 1e-10)
  expect_equal(crossprod(red$map), crossprod(full$map %*% P), tolerance = 1e-8)
  expect_equal(red$fitted, full$fitted, tolerance = 1e-10)
  # lambda > 0: the same minimum, where the full map has no component
  # outside the span either
  full <- fit2(FALSE, 0.05, 2000L, 1e-12)
  red <- fit2(TRUE, 0.05, 2000L, 1e-12)
  expect_true(full$converged && red$converged)
  expect_equal(red$value, full$value, tolerance = 1e-7)
  expect_equal(crossprod(red$map), crossprod(full$map), tolerance = 1e-4)
  # the identity start (a 0 x 0 matrix) gives a map with one row per
  # dimension of the span, and its objective is the formula's at that map
  id <- kmaha:::core_mlkr_fit(x, y, matrix(0, 0, 0), 0, 200L, 1e-10, FALSE, TRUE, ctx)
  expect_identical(dim(id$map), c(r, D))
  expect_equal(id$value, mlkr_r(id$map, x, (y - mean(y)) / sd(y))$value, tolerance = 1e-10)
  fit <- mlkr(x, y)
  expect_identical(dim(fit$L), c(r, D))
  expect_identical(fit$convergence$span_rank, r)
})

test_that("mlkr() finds the informative column among noise and beats Euclidean k-NN", {
  tr <- mlkr_toy(200, 8, 6)
  te <- mlkr_toy(300, 8, 7)
  fit <- mlkr(tr$x, tr$y, k = 5, weights = "uniform")
  expect_true(fit$convergence$converged)
  # the learned metric weighs column 1 most
  M <- mahalanobis_matrix(fit)
  expect_identical(which.max(diag(M)), c(x1 = 1L))
  expect_gt(diag(M)[1], 10 * max(diag(M)[-1]))
  # Euclidean k-NN regression on the standardized inputs, written out
  prep <- kmaha:::fit_scaling(tr$x)
  xs <- kmaha:::apply_scaling(tr$x, prep)
  euc_loo <- knn_regress_r(xs, tr$y, xs, 5, self = TRUE)
  euc_te <- knn_regress_r(xs, tr$y, kmaha:::apply_scaling(te$x, prep), 5)
  rmse <- function(a, b) sqrt(mean((a - b)^2))
  expect_lt(fit$loo_rmse, 0.5 * rmse(euc_loo, tr$y))
  expect_lt(rmse(predict(fit, te$x), te$y), 0.5 * rmse(euc_te, te$y))
  # and the objective went down from the (scaled) start
  expect_lt(fit$convergence$objective, 0.5 * fit$convergence$trace[1])
})

test_that("predict() and fitted() equal an independent k-NN regression on the embedding", {
  tr <- mlkr_toy(60, 4, 8)
  te <- mlkr_toy(25, 4, 9)
  fit <- mlkr(tr$x, tr$y, k = 4, lambda = 0.01)
  z_new <- predict(fit, te$x, type = "transform")
  expect_equal(z_new, kmaha:::apply_scaling(te$x, fit$prep) %*% t(fit$L),
               tolerance = 1e-12, ignore_attr = TRUE)
  emb <- fit$embedding
  for (w in c("uniform", "distance", "kernel")) {
    for (k in c(1L, 4L, 59L)) {
      p <- predict(fit, te$x, k = k, weights = w)
      expect_type(p, "double")
      expect_length(p, 25L)
      expect_equal(p, knn_regress_r(emb, tr$y, z_new, k, w), tolerance = 1e-10,
                   ignore_attr = TRUE)
      f <- fitted(fit, k = k, weights = w)
      expect_length(f, 60L)
      expect_equal(f, knn_regress_r(emb, tr$y, emb, k, w, self = TRUE), tolerance = 1e-10,
                   ignore_attr = TRUE)
    }
  }
  # the model's own k and weights are the defaults
  expect_identical(predict(fit, te$x), predict(fit, te$x, k = 4L, weights = "distance"))
  # the kernel weights over all the other points are MLKR's own leave-one-out
  # prediction: the objective is its squared error on the standardized response
  nw <- fitted(fit, k = 59L, weights = "kernel")
  ref <- mlkr_r(fit$L, kmaha:::apply_scaling(tr$x, fit$prep), tr$y)$fitted
  expect_equal(unname(nw), ref, tolerance = 1e-10)
  expect_equal(sum((tr$y - nw)^2) / var(tr$y) + 0.01 * sum(fit$L^2), fit$convergence$objective,
               tolerance = 1e-10)
  # a duplicated training point is at distance 0: "distance" weights give it all
  p0 <- predict(fit, tr$x[3, , drop = FALSE], weights = "distance")
  expect_equal(unname(p0), tr$y[3])
  # rows with missing values give NA, no rows give numeric(0)
  xna <- te$x[1:3, ]
  xna[2, 1] <- NA
  pna <- predict(fit, xna)
  expect_true(is.na(pna[2]))
  expect_equal(pna[-2], predict(fit, te$x[c(1, 3), ]))
  expect_identical(predict(fit, te$x[0, , drop = FALSE]), numeric(0))
  expect_identical(residuals(fit), tr$y - fitted(fit))
})

test_that("the model, its statistics and methods report the regression honestly", {
  fit <- mlkr(mpg ~ ., data = mtcars, k = 3, weights = "uniform")
  expect_s3_class(fit, c("kmaha_mlkr", "kmaha_regression", "kmaha_linear", "kmaha_model"),
                  exact = TRUE)
  expect_identical(fit$mode, "regression")
  expect_identical(fit$y, mtcars$mpg)
  expect_null(fit$train_accuracy)
  loo <- fitted(fit)
  expect_identical(names(loo), rownames(mtcars))
  expect_equal(fit$loo_rmse, sqrt(mean((mtcars$mpg - loo)^2)))
  expect_equal(fit$loo_r2, 1 - sum((mtcars$mpg - loo)^2) /
                 sum((mtcars$mpg - mean(mtcars$mpg))^2))
  out <- printed_flat(fit)
  expect_match(out, "<kmaha MLKR> MLKR: a linear Mahalanobis metric on the standardized inputs",
               fixed = TRUE)
  expect_match(out, sprintf("training fit: RMSE %.4g, R^2 %.3f (leave-one-out 3-NN regression, uniform weights; optimistic",
                            fit$loo_rmse, fit$loo_r2), fixed = TRUE)
  s <- paste(capture.output(summary(fit)), collapse = "\n")
  expect_match(s, "Response (quantiles):", fixed = TRUE)
  # (summary() wraps at getOption("width"): read it as one line)
  expect_match(summary_flat(fit), "not an estimate of the error on new data", fixed = TRUE)
  g <- glance(fit)
  expect_identical(nrow(g), 1L)
  expect_identical(g$learner, "MLKR")
  expect_equal(g$loo_rmse, fit$loo_rmse)
  expect_equal(g$loo_r2, fit$loo_r2)
  expect_identical(g$weights, "uniform")
  expect_identical(g$k, 3L)
  a <- augment(fit)
  expect_equal(a$.fitted, unname(loo))
  expect_equal(a$.resid, mtcars$mpg - unname(loo))
  expect_identical(a$mpg, mtcars$mpg)
  expect_equal(a$.dim1, unname(fit$embedding[, 1]))
  an <- augment(fit, newdata = mtcars[1:4, ])
  expect_equal(an$.fitted, unname(predict(fit, mtcars[1:4, ])))
  td <- tidy(fit)
  expect_identical(nrow(td), nrow(fit$L))
  expect_identical(coef(fit), fit$L)
  expect_identical(nobs(fit), 32L)
  # update() refits from the stored call
  fit2 <- update(fit, k = 5)
  expect_identical(fit2$k, 5L)
  # na.exclude pads the leave-one-out predictions
  d <- mtcars
  d$wt[4] <- NA
  fe <- mlkr(mpg ~ wt + hp + disp, data = d, na.action = na.exclude)
  fv <- fitted(fe)
  expect_length(fv, 32L)
  expect_true(is.na(fv[4]))
  expect_length(residuals(fe), 32L)
  # plot() colours the points by the response, in quantile bins
  pdf(NULL)
  on.exit(dev.off(), add = TRUE)
  expect_identical(plot(fit), fit)
})

test_that("the fold path fits, then predicts the held-out rows as predict() does", {
  tr <- mlkr_toy(50, 3, 10)
  te <- mlkr_toy(20, 3, 11)
  ctx <- test_ctx(1L)
  prep <- kmaha:::fit_scaling(tr$x)
  xs <- kmaha:::apply_scaling(tr$x, prep)
  xt <- kmaha:::apply_scaling(te$x, prep)
  spec <- kmaha:::builtin_spec("mlkr", list())
  ks <- c(1L, 3L, 7L)
  # one column per k, from the fitting call (identity, exact KPCA) or from
  # pipeline_apply() (kernel rows are not projected in the fit)
  for (fspec in list(kmaha:::feature_identity(), kmaha:::feature_kpca(rbf_kernel(1)))) {
    p <- kmaha:::fit_pipeline(xs, tr$y, fspec, spec, ctx, heldout = xt, k = ks,
                              weights = "distance")
    expect_identical(dim(p$heldout), c(20L, 3L))
    model <- kmaha:::new_model(p, tr$y, 3L, NULL, spec, ctx, weights = "distance",
                               n_features = ncol(xs))
    expect_s3_class(model, "kmaha_regression")
    for (j in seq_along(ks)) {
      expect_equal(p$heldout[, j], unname(predict(model, xt, k = ks[j])), tolerance = 1e-10)
    }
  }
  # the Euclidean candidate of a regression
  eu <- kmaha:::fit_pipeline(xs, tr$y, kmaha:::feature_identity(), kmaha:::euclidean_spec(),
                             ctx, heldout = xt, k = ks, weights = "uniform")
  for (j in seq_along(ks)) expect_equal(eu$heldout[, j], knn_regress_r(xs, tr$y, xt, ks[j]))
})

test_that("bad input is refused with errors that name the argument", {
  x <- as.matrix(mtcars[, -1])
  y <- mtcars$mpg
  cases <- list(
    list(quote(mlkr(x, factor(y > 20))),
         "`y` is a factor, but MLKR is for numeric responses (regression); for class labels use nca() or lmnn()."),
    list(quote(mlkr(x, as.character(y))),
         "`y` is character, but MLKR is for numeric responses (regression); for class labels use nca() or lmnn()."),
    list(quote(mlkr(x, replace(y, 3, NA))),
         "`y` contains missing values (NA/NaN). Remove those rows first."),
    list(quote(mlkr(x, replace(y, 3, Inf))),
         "`y` contains infinite values. Remove those rows first."),
    list(quote(mlkr(x, rep(2, 32))),
         "`y` is constant: there is no variation to regress on."),
    list(quote(mlkr(x[1:2, ], y[1:2])),
         "MLKR needs at least 3 rows (each point is predicted from the others), not 2."),
    list(quote(mlkr(x, y[-1])),
         "`y` has length 31 but `x` has 32 rows; they must match."),
    list(quote(mlkr(x)), "`y` is missing: supply the numeric response."),
    list(quote(mlkr(replace(x, 5, NA), y)),
         "`x` contains missing values (NA/NaN). Remove or impute them first (the formula interface drops them with na.action = na.omit)."),
    list(quote(mlkr(x, y, k = 32)),
         "`k` (32) must be below the number of rows (32): the fitted values leave each point out of its own neighbours."),
    list(quote(mlkr(x, y, weights = "gaussian")),
         "`weights` must be \"distance\", \"uniform\" or \"kernel\"."),
    list(quote(mlkr(x, y, dim = 11)),
         "`dim` (11) must not exceed the number of input columns of `x` (10)."),
    list(quote(mlkr(x, y, lambda = -1)), "`lambda` must be non-negative, not -1."),
    list(quote(mlkr(x, y, init = diag(3))),
         "`init` must be a 10 x 10 matrix (dim x number of input columns), not 3 x 3."),
    list(quote(mlkr(x, y, bogus = 1)), "Unknown argument(s) to mlkr(): 'bogus'.")
  )
  for (case in cases) expect_error(eval(case[[1]]), case[[2]], fixed = TRUE)
  fit <- mlkr(x, y, lambda = 0.1)
  # the defaults: 10 neighbours, distance weights; fewer for fewer rows
  expect_identical(fit$k, 10L)
  expect_identical(fit$weights, "distance")
  expect_identical(mlkr(x[1:6, ], y[1:6], lambda = 0.1)$k, 5L)
  expect_error(predict(fit, x, type = "class"),
               "`type` must be \"response\" or \"transform\" for a regression model, not \"class\".",
               fixed = TRUE)
  expect_error(predict(fit, x, k = 33), "`k` (33) must not exceed the number of training rows (32).",
               fixed = TRUE)
})

test_that("a fitted model survives saveRDS/readRDS, also in a fresh session", {
  fit <- mlkr(mpg ~ ., data = mtcars, lambda = 0.1)
  fit_m <- mlkr(as.matrix(mtcars[, -1]), mtcars$mpg, lambda = 0.1, weights = "distance")
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(list(fit = fit, fit_m = fit_m), path)
  back <- readRDS(path)
  nd <- mtcars[c(2, 9, 30), ]
  expect_identical(predict(back$fit, nd), predict(fit, nd))
  expect_identical(fitted(back$fit_m), fitted(fit_m))
  skip_if_not_installed("callr")
  skip_on_cran()
  there <- callr::r(function(path, nd) {
    library(kmaha)
    obj <- readRDS(path)
    list(p = predict(obj$fit, nd), t = predict(obj$fit, nd, type = "transform"),
         m = predict(obj$fit_m, as.matrix(nd[, -1])))
  }, args = list(path = path, nd = nd))
  expect_identical(there$p, predict(fit, nd))
  expect_identical(there$t, predict(fit, nd, type = "transform"))
  expect_identical(there$m, predict(fit_m, as.matrix(nd[, -1])))
})

test_that("a long fit stops on SIGINT inside the compiled code and R stays usable", {
  skip_on_os("windows")
  skip_on_cran()
  res <- run_in_child(function(sigint_after_cpu, stack_functions) {
    library(kmaha)
    set.seed(1)
    x <- matrix(rnorm(5000 * 10), 5000)
    y <- sin(x[, 1]) + rnorm(5000)
    invisible(mlkr(x[1:50, ], y[1:50], lambda = 1))  # loads what the long call needs
    where <- NULL
    cpu_trigger <- NA
    out <- tryCatch(withCallingHandlers({
      cpu_trigger <- sigint_after_cpu(2)
      mlkr(x, y, max_iter = 1e6, tol = 1e-300)
      "finished"
    }, interrupt = function(e) where <<- stack_functions()),
    interrupt = function(e) "interrupted")
    list(outcome = out, cpu_trigger = cpu_trigger,
         in_core = any(startsWith(where, "cpp_")),
         after = mlkr(mtcars[, -1], mtcars$mpg, lambda = 0.1)$L)
  }, args = list(sigint_after_cpu = sigint_after_cpu, stack_functions = stack_functions))
  expect_identical(res$outcome, "interrupted")
  if (isTRUE(res$cpu_trigger)) expect_true(res$in_core)
  expect_equal(res$after, mlkr(mtcars[, -1], mtcars$mpg, lambda = 0.1)$L)
})
