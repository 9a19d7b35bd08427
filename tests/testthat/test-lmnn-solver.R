# The L-form LMNN solver: its own evaluation (pull folded into the
# Laplacian, impostors by pair search or through the Gram matrix) against the
# reference evaluation and finite differences in the D about n regime, its
# optimum against the convex M-form solver, the reduction to the span of the
# data, the bound on the work and the memory at large n.

# Kernel PCA coordinates of a small 3-class problem: D = n - 1, as in the
# KPCA trick.
kpca_problem <- function(n = 36, sigma = 1, seed = 3) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- matrix(rnorm(n * 3), n, 3) + 0.8 * as.integer(y)
  z <- unname(kpca(scale(x), kernel = rbf_kernel(sigma))$coords)
  tg <- kmaha:::cpp_class_neighbors(z, as.integer(y), 3L, TRUE, test_ctx())
  list(z = z, y = y, tg = tg)
}

test_that("the solver's evaluation equals the reference one when D is about n", {
  p <- kpca_problem()
  D <- ncol(p$z)
  expect_gte(D, nrow(p$z) - 2L)
  set.seed(11)
  L <- diag(D) + matrix(rnorm(D * D, sd = 0.3), D)
  for (lambda in c(0, 0.3)) {
    ref <- kmaha:::cpp_lmnn_objective(p$z, as.integer(p$y), p$tg, L, 0.4, lambda, "L", 0, NULL, test_ctx())
    for (form in c("Lpairs", "Lgram")) {
      got <- kmaha:::cpp_lmnn_objective(p$z, as.integer(p$y), p$tg, L, 0.4, lambda, form, 0, NULL, test_ctx())
      info <- paste(form, "lambda", lambda)
      expect_equal(got$value, ref$value, tolerance = 1e-10, info = info)
      expect_equal(got$pull, ref$pull, tolerance = 1e-10, info = info)
      expect_equal(got$push, ref$push, tolerance = 1e-10, info = info)
      expect_equal(got$gradient, ref$gradient, tolerance = 1e-9, info = info)
    }
  }
})

test_that("the smoothed objective's gradient matches finite differences when D is about n", {
  p <- kpca_problem(n = 30, sigma = 0.5, seed = 4)
  D <- ncol(p$z)
  set.seed(12)
  L <- 0.7 * diag(D) + matrix(rnorm(D * D, sd = 0.2), D)
  for (form in c("Lpairs", "Lgram")) {
    f <- function(Lm) {
      kmaha:::cpp_lmnn_objective(p$z, as.integer(p$y), p$tg, Lm, 0.5, 0.2, form, 0.5, NULL, test_ctx())
    }
    got <- f(L)
    expect_gt(got$triples, 0)
    expect_lt(got$value, got$exact)  # the smoothed hinge lies below the hinge
    q <- sample(length(L), 25)
    h <- 1e-6
    fd <- vapply(q, function(j) {
      e <- replace(numeric(length(L)), j, h)
      (f(L + e)$value - f(L - e)$value) / (2 * h)
    }, numeric(1))
    expect_lt(max(abs(fd - got$gradient[q])) / max(abs(fd)), 1e-6,
              label = paste("finite differences,", form))
  }
})

test_that("the L-form solver reaches the convex solver's optimum", {
  # a linear problem and a kernel PCA problem (regularised so that the
  # optimum is unique), both from the identity
  cases <- list(
    linear = { d <- toy_data(n = 45, D = 4, seed = 5); list(x = scale(d$x), y = d$y, lambda = 0) },
    kpca = { p <- kpca_problem(n = 36, sigma = 1); list(x = p$z, y = p$y, lambda = 0.05) })
  for (nm in names(cases)) {
    cs <- cases[[nm]]
    fm <- lmnn(cs$x, cs$y, solver = "M", lambda = cs$lambda, scale = FALSE,
               max_iter = 5000, tol = 1e-9)
    fl <- lmnn(cs$x, cs$y, solver = "L", lambda = cs$lambda, scale = FALSE)
    expect_true(fl$convergence$converged, info = nm)
    expect_lte(fl$convergence$objective, 1.01 * fm$convergence$objective)
    # the reported objective is the exact one at the returned map
    tg <- fl$targets
    ex <- kmaha:::cpp_lmnn_objective(unname(cs$x), as.integer(cs$y), tg, unname(fl$L), 0.5, cs$lambda, "L", 0, NULL, test_ctx())
    expect_equal(fl$convergence$objective, ex$value, tolerance = 1e-8, info = nm)
  }
})

test_that("every way of visiting impostors reaches the same optimum", {
  d <- toy_data(n = 60, D = 3, seed = 7)
  x <- scale(d$x)
  tg <- kmaha:::cpp_class_neighbors(unname(x), as.integer(d$y), 3L, TRUE, test_ctx())
  fit <- function(dense_max, max_pairs) {
    kmaha:::cpp_lmnn_fit(unname(x), as.integer(d$y), tg, 0L, diag(3), 0.5, 0, 1000, 1e-9, "L", 10L, 0.2, FALSE, dense_max, max_pairs, TRUE, TRUE, NULL, NULL, test_ctx())
  }
  gram <- fit(1e6, 0)       # all pairs through the Gram matrix
  active <- fit(0, 0)       # active set of pairs
  search <- fit(0, 1)       # cap of one pair: all pairs by the blocked search
  for (r in list(gram, active, search)) expect_true(r$converged)
  expect_equal(active$objective, gram$objective, tolerance = 1e-4)
  expect_equal(search$objective, gram$objective, tolerance = 1e-4)
  ex <- kmaha:::cpp_lmnn_objective(unname(x), as.integer(d$y), tg, search$L, 0.5, 0, "L", 0, NULL, test_ctx())
  expect_equal(search$objective, ex$value, tolerance = 1e-10)
})

test_that("more features than points: the solver works in the span of the data", {
  set.seed(8)
  n <- 24
  y <- factor(rep(1:2, n / 2))
  x <- matrix(rnorm(n * 300), n) + 0.5 * as.integer(y)
  fit <- lmnn(x, y, k = 2, lambda = 0.01)
  expect_true(fit$convergence$converged)
  # at most n - 1 rows; the map ignores directions orthogonal to the data
  expect_lte(nrow(fit$L), n - 1L)
  xs <- kmaha:::apply_scaling(x, fit$prep)
  ortho <- qr.Q(qr(t(sweep(xs, 2, colMeans(xs)))), complete = TRUE)[, n + 5]
  expect_lt(max(abs(fit$L %*% ortho)), 1e-8)
  # the objective reported is the exact one in all 300 dimensions
  ref <- lmnn_plain(xs, y, fit$targets, unname(fit$M), mu = 0.5, lambda = 0.01)
  expect_equal(fit$convergence$objective, ref$value, tolerance = 1e-8)
  # and the convex solver in the same span agrees
  fm <- lmnn(x, y, k = 2, lambda = 0.01, solver = "M", max_iter = 5000, tol = 1e-9)
  expect_lte(fit$convergence$objective, 1.01 * fm$convergence$objective)
})

test_that("max_iter bounds the work and non-convergence warns", {
  set.seed(1)
  x <- matrix(rnorm(50 * 2000), 50)
  y <- factor(rep(1:2, 25))
  expect_warning(fit <- lmnn(x, y, k = 3, max_iter = 3),
                 "lmnn() did not converge (iteration limit reached after", fixed = TRUE)
  expect_false(fit$convergence$converged)
  # evaluations: the budget plus at most one L-BFGS line search
  expect_lte(fit$convergence$iterations, 3L + 20L)
  expect_true(all(is.finite(fit$L)))
  expect_lte(fit$convergence$objective, fit$convergence$trace[1])
})

test_that("RKLMNN's lambda shrinks the metric and keeps the objective exact", {
  p <- kpca_problem(n = 30, sigma = 2)
  fits <- lapply(c(0.01, 1), function(l) lmnn(p$z, p$y, lambda = l, scale = FALSE))
  tr <- vapply(fits, function(f) sum(diag(f$M)), numeric(1))
  expect_gt(tr[1], tr[2])
  for (i in 1:2) {
    ex <- kmaha:::cpp_lmnn_objective(p$z, as.integer(p$y), fits[[i]]$targets, unname(fits[[i]]$L), 0.5, c(0.01, 1)[i], "L", 0, NULL, test_ctx())
    expect_equal(fits[[i]]$convergence$objective, ex$value, tolerance = 1e-8)
  }
})

test_that("no n x n matrix at large n (address space capped in a child process)", {
  skip_on_os("windows")
  skip_on_cran()
  skip_if_sanitized()
  # 20 000 points: an n x n matrix of doubles would need 3.2 GB; the child
  # gets 1.5 GB of address space (ulimit -v) and must still fit.
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script), add = TRUE)
  writeLines(c(
    "suppressPackageStartupMessages(library(kmaha))",
    "set.seed(2)",
    "n <- 20000L",
    "y <- factor(sample(1:4, n, TRUE))",
    "x <- matrix(rnorm(n * 2, sd = 0.3), n) + cbind(3 * as.integer(y), 0)",
    "fit <- lmnn(x, y, k = 3, scale = FALSE, max_iter = 200)",
    "cat('converged', fit$convergence$converged, '\\n')"), script)
  cmd <- sprintf("ulimit -v 1500000; R_LIBS=%s '%s' --no-save --no-restore '%s' 2>&1",
                 shQuote(paste(.libPaths(), collapse = ":")),
                 file.path(R.home("bin"), "Rscript"), script)
  out <- suppressWarnings(system2("sh", c("-c", shQuote(cmd)), stdout = TRUE))
  expect_true(any(grepl("converged TRUE", out, fixed = TRUE)),
              label = paste(out, collapse = "\n"))
})

test_that("the impostor search gives the same fit on one and two threads", {
  d <- toy_data(n = 700, D = 3, p = 4, seed = 9)
  x <- scale(d$x)
  tg <- kmaha:::cpp_class_neighbors(unname(x), as.integer(d$y), 3L, TRUE, test_ctx())
  fit <- function(threads) {
    kmaha:::cpp_lmnn_fit(unname(x), as.integer(d$y), tg, 0L, diag(3), 0.5, 0, 300, 1e-5, "L", 10L, 0.2, FALSE, 0, 0, TRUE, TRUE, NULL, NULL, test_ctx(threads))
  }
  one <- fit(1L)
  two <- fit(2L)
  expect_identical(two$L, one$L)
  expect_identical(two$objective, one$objective)
  expect_identical(two$active_pairs, one$active_pairs)
})

test_that("the low-rank mode reaches the full-rank solver's optimum and is optimal over all M", {
  p <- kpca_problem(n = 60, sigma = 1, seed = 5)
  z <- p$z
  y <- as.integer(p$y)
  D <- ncol(z)
  expect_gte(D, 16L)
  lambda <- sum(apply(z, 2, var)) * (nrow(z) - 1) / nrow(z)  # the RKLMNN default
  fit <- function(solver, tol = 1e-5, max_iter = 1000) {
    kmaha:::cpp_lmnn_fit(z, y, p$tg, 0L, diag(D), 0.5, lambda, max_iter, tol, solver, 10L, 0.2, FALSE, 2048, 0, TRUE, TRUE, NULL, NULL, test_ctx(1L))
  }
  low <- fit("L")
  full <- fit("Lfull")
  best <- fit("Lfull", tol = 1e-10, max_iter = 20000)
  expect_true(low$converged)
  expect_lte(low$objective, full$objective * (1 + 1e-4))
  expect_lte(low$objective, best$objective * (1 + 1e-3))
  # the map has the rows asked for; those beyond the rank are exactly zero
  expect_identical(dim(low$L), c(D, D))
  nz <- rowSums(low$L != 0) > 0
  r <- sum(nz)
  expect_lt(r, D / 2)
  expect_true(all(nz[seq_len(r)]) && !any(nz[-seq_len(r)]))
  # the reported objective is the exact one at the returned map
  ex <- kmaha:::cpp_lmnn_objective(z, y, p$tg, low$L, 0.5, lambda, "L", 0, NULL, test_ctx())
  expect_equal(low$objective, ex$value, tolerance = 1e-9)
  # no direction outside the map's range lowers the objective: along the
  # most negative eigenvector v of the gradient with respect to M, M + t v v'
  # is no better than M
  G <- kmaha:::cpp_lmnn_objective(z, y, p$tg, low$M, 0.5, lambda, "M", 0, NULL, test_ctx())$gradient
  v <- eigen(G, symmetric = TRUE)$vectors[, D]
  for (t in 10^seq(-4, 0)) {
    ft <- kmaha:::cpp_lmnn_objective(z, y, p$tg, low$M + t * tcrossprod(v), 0.5, lambda, "M", 0, NULL, test_ctx())$value
    expect_gte(ft, low$objective * (1 - 1e-4))
  }
})

test_that("the low-rank mode applies only from the identity, with lambda > 0 and D >= 16", {
  p <- kpca_problem(n = 40, sigma = 1, seed = 6)
  z <- p$z
  y <- as.integer(p$y)
  D <- ncol(z)
  fit <- function(solver, lambda = 0.5, init = diag(D), x = z) {
    kmaha:::cpp_lmnn_fit(x, y, p$tg, 0L, init, 0.5, lambda, 300, 1e-5, solver, 10L, 0.2, FALSE, 2048, 0, TRUE, TRUE, NULL, NULL, test_ctx(1L))
  }
  expect_false(identical(fit("L")$L, fit("Lfull")$L))
  # no regulariser, another start, or few dimensions: the full-rank solver
  expect_identical(fit("L", lambda = 0), fit("Lfull", lambda = 0))
  start <- diag(D) + 1e-3
  expect_identical(fit("L", init = start), fit("Lfull", init = start))
  expect_identical(fit("L", init = diag(8), x = z[, 1:8]),
                   fit("Lfull", init = diag(8), x = z[, 1:8]))
})
