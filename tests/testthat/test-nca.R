# NCA: objective against an independent plain-R computation of the paper's
# eq. (2), gradient against central finite differences, numerical safety,
# invariances, accuracy under the paper's protocol and input validation.

# Plain-R eq. (2) plus lambda ||A||_F^2, straight from the definition.
nca_objective_r <- function(A, x, y, lambda = 0) {
  z <- x %*% t(A)
  d2 <- as.matrix(stats::dist(z))^2
  e <- exp(-d2)
  diag(e) <- 0
  p <- e / rowSums(e)
  -sum(p[outer(y, y, "==")]) + lambda * sum(A^2)
}

nca_fg <- function(A, x, y, lambda = 0, threads = 2L, block = 0L, isa = "auto") {
  # min_parallel_flops = 0: use the threads even on these small problems.
  withr_isa(isa, cpp_nca_objective(x, as.integer(factor(y)), A, lambda, NULL,
                                   block, 0, test_ctx(threads)))
}

central_diff <- function(f, A, h = 1e-5) {
  g <- A
  for (k in seq_along(A)) {
    Ap <- A; Am <- A
    Ap[k] <- Ap[k] + h
    Am[k] <- Am[k] - h
    g[k] <- (f(Ap) - f(Am)) / (2 * h)
  }
  g
}

rel_err <- function(a, b) max(abs(a - b)) / max(abs(b), 1e-300)

test_that("the objective equals a plain-R computation of eq. (2)", {
  set.seed(11)
  x <- matrix(rnorm(40 * 5), 40, 5)
  y <- sample(c("a", "b", "c"), 40, replace = TRUE)
  for (isa in kernel_isas()) {
    for (d in c(2L, 5L)) {
      A <- matrix(rnorm(d * 5, sd = 0.5), d, 5)
      for (lambda in c(0, 0.3)) {
        res <- nca_fg(A, x, y, lambda, isa = isa)
        expect_identical(res$isa, isa)
        expect_equal(res$value, nca_objective_r(A, x, y, lambda), tolerance = 1e-12)
      }
    }
  }
})

test_that("the gradient matches central finite differences (d < D, d = D, lambda > 0)", {
  set.seed(12)
  x <- matrix(rnorm(50 * 6), 50, 6)
  y <- sample(1:3, 50, replace = TRUE)
  for (isa in kernel_isas()) {
    for (d in c(2L, 6L)) {
      for (lambda in c(0, 0.25)) {
        A <- matrix(rnorm(d * 6, sd = 0.4), d, 6)
        g <- nca_fg(A, x, y, lambda, isa = isa)$gradient
        g_fd <- central_diff(function(B) nca_objective_r(B, x, y, lambda), A)
        expect_lt(rel_err(g, g_fd), 1e-6)
      }
    }
  }
})

test_that("block size and thread count do not change the result", {
  set.seed(13)
  x <- matrix(rnorm(70 * 4), 70, 4)
  y <- sample(letters[1:4], 70, replace = TRUE)
  A <- matrix(rnorm(12), 3, 4)
  ref <- nca_fg(A, x, y, 0.1, threads = 1L, block = 70L, isa = "default")
  for (isa in kernel_isas()) {
    for (th in 1:2) {
      for (b in c(1L, 7L, 16L)) {
        res <- nca_fg(A, x, y, 0.1, threads = th, block = b, isa = isa)
        expect_equal(res$value, ref$value, tolerance = 1e-12)
        expect_equal(res$gradient, ref$gradient, tolerance = 1e-10)
      }
    }
  }
})

test_that("the AVX2 kernels agree with the baseline on a KPCA-sized problem", {
  skip_if_not("avx2" %in% kernel_isas(), "no AVX2+FMA kernels on this build or CPU")
  set.seed(19)
  # Shapes where the product kernels take their full tiles and edges.
  for (sz in list(c(161, 159, 159), c(300, 37, 13))) {
    x <- matrix(rnorm(sz[1] * sz[2]), sz[1], sz[2])
    y <- sample(1:4, sz[1], replace = TRUE)
    A <- matrix(rnorm(sz[3] * sz[2], sd = 0.3), sz[3], sz[2])
    a <- nca_fg(A, x, y, 0.05, isa = "default")
    b <- nca_fg(A, x, y, 0.05, isa = "avx2")
    expect_equal(b$value, a$value, tolerance = 1e-12)
    expect_equal(b$gradient, a$gradient, tolerance = 1e-10)
  }
  # A fit records the kernels it used, and the option selects them.
  old <- options(kmaha.isa = "default")
  on.exit(options(old), add = TRUE)
  f1 <- nca(iris[, 1:4], iris$Species, max_iter = 30)
  options(kmaha.isa = "avx2")
  f2 <- nca(iris[, 1:4], iris$Species, max_iter = 30)
  expect_identical(f1$convergence$isa, "default")
  expect_identical(f2$convergence$isa, "avx2")
  expect_equal(f2$L, f1$L, tolerance = 1e-6)
})

test_that("a bad kmaha.isa option is refused with a clear error", {
  old <- options(kmaha.isa = "sse9", kmaha.nca_isa = NULL)
  on.exit(options(old), add = TRUE)
  expect_error(nca(iris[, 1:4], iris$Species),
               "Option `kmaha.isa` must be \"auto\", \"avx2\" or \"default\".",
               fixed = TRUE)
  # The 0.2.0 name is still read when kmaha.isa is unset.
  options(kmaha.isa = NULL, kmaha.nca_isa = "default")
  expect_identical(suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5))$convergence$isa,
                   "default")
  options(kmaha.nca_isa = 1)
  expect_error(nca(iris[, 1:4], iris$Species),
               "Option `kmaha.nca_isa` must be \"auto\", \"avx2\" or \"default\".",
               fixed = TRUE)
  # With neither option set, the environment variable KMAHA_ISA is read.
  options(kmaha.nca_isa = NULL)
  old_env <- Sys.getenv("KMAHA_ISA", NA)
  on.exit(if (is.na(old_env)) Sys.unsetenv("KMAHA_ISA") else Sys.setenv(KMAHA_ISA = old_env),
          add = TRUE)
  Sys.setenv(KMAHA_ISA = "sse9")
  expect_error(nca(iris[, 1:4], iris$Species),
               "Environment variable `KMAHA_ISA` must be \"auto\", \"avx2\" or \"default\".",
               fixed = TRUE)
  Sys.setenv(KMAHA_ISA = "default")
  expect_identical(suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5))$convergence$isa,
                   "default")
})

test_that("far-apart points give no NaN or overflow", {
  set.seed(14)
  x <- rbind(matrix(rnorm(10), 5, 2), matrix(rnorm(10), 5, 2) + 1e6,
             c(-1e6, 3e5))
  y <- c(rep(1, 5), rep(2, 5), 1)
  res <- nca_fg(diag(2), x, y)
  expect_true(is.finite(res$value))
  expect_true(all(is.finite(res$gradient)))
  # The clusters do not see each other (their weights underflow to zero) and
  # the lone point's neighbours are all in the class-1 cluster (p_i = 1).
  expect_equal(res$value, nca_objective_r(diag(2), x[1:10, ], y[1:10]) - 1,
               tolerance = 1e-12)
  fit <- nca(x, y, scale = FALSE, max_iter = 20)
  expect_true(all(is.finite(fit$L)))
})

test_that("row order and class names do not change the learned metric", {
  set.seed(15)
  idx <- sample(150, 90)
  x <- as.matrix(iris[idx, 1:4])
  y <- iris$Species[idx]
  fit <- nca(x, y, lambda = 0.01)
  perm <- sample(90)
  fit_p <- nca(x[perm, ], y[perm], lambda = 0.01)
  renamed <- factor(c(setosa = "z", versicolor = "a", virginica = "m")[as.character(y)])
  fit_r <- nca(x, renamed, lambda = 0.01)
  d0 <- dist(predict(fit, x, type = "transform"))
  expect_equal(fit_p$convergence$objective, fit$convergence$objective,
               tolerance = 1e-4)
  expect_equal(fit_r$convergence$objective, fit$convergence$objective,
               tolerance = 1e-4)
  expect_equal(as.vector(dist(predict(fit_p, x, type = "transform"))),
               as.vector(d0), tolerance = 1e-3)
  expect_equal(as.vector(dist(predict(fit_r, x, type = "transform"))),
               as.vector(d0), tolerance = 1e-3)
})

# The paper's protocol: random split, standardised inputs (scaling learned on
# the training part), 1-NN on the test part, averaged over splits.
protocol_accuracy <- function(x, y, n_train, splits, seed) {
  set.seed(seed)
  acc <- replicate(splits, {
    tr <- sample(nrow(x), n_train)
    fit <- nca(x[tr, ], y[tr], max_iter = 200)
    prep <- fit_scaling(x[tr, ])
    euc <- knn_classify(apply_scaling(x[tr, ], prep), y[tr],
                        apply_scaling(x[-tr, ], prep), k = 1)$class
    c(nca = mean(predict(fit, x[-tr, ]) == y[-tr]), euclid = mean(euc == y[-tr]))
  })
  rowMeans(acc)
}

test_that("NCA beats or equals Euclidean 1-NN on iris (paper's protocol)", {
  acc <- protocol_accuracy(as.matrix(iris[, 1:4]), iris$Species, 100, 5, 1)
  expect_gte(acc[["nca"]], acc[["euclid"]])
  expect_gt(acc[["nca"]], 0.9)
})

test_that("NCA beats or equals Euclidean 1-NN on mlbench's Vehicle (paper's protocol)", {
  skip_if_not_installed("mlbench")
  data("Vehicle", package = "mlbench", envir = environment())
  acc <- protocol_accuracy(as.matrix(Vehicle[, -19]), Vehicle$Class, 200, 3, 2)
  expect_gte(acc[["nca"]], acc[["euclid"]])
})

test_that("tiny classes (1-3 members) are handled; singletons add nothing", {
  set.seed(16)
  x <- rbind(matrix(rnorm(40), 20, 2), c(5, 5), c(-4, 4), c(-4.2, 4.1),
             c(3, -3), c(3.1, -3.2), c(2.9, -3.1))
  y <- c(rep("big", 20), "single", "pair", "pair", "trio", "trio", "trio")
  # the singleton class is named in one warning (the small-class rule of
  # every learner, with one neighbour)
  expect_warning(fit <- nca(x, y, max_iter = 100),
                 "`y`: class 'single' (1 member) has fewer than 2 members",
                 fixed = TRUE)
  expect_s3_class(fit, "kmaha_nca")
  expect_true(all(is.finite(fit$L)))
  # A singleton's p_i is zero: the objective matches the plain-R sum.
  A <- matrix(c(0.7, 0.2, -0.1, 0.9), 2, 2)
  expect_equal(nca_fg(A, x, y)$value, nca_objective_r(A, x, y), tolerance = 1e-12)
  # Removing the singleton only changes the other rows' denominators; the
  # gradient still matches finite differences.
  g_fd <- central_diff(function(B) nca_objective_r(B, x, y), A)
  expect_lt(rel_err(nca_fg(A, x, y)$gradient, g_fd), 1e-6)
})

test_that("init = 'random' is reproducible with set.seed()", {
  x <- as.matrix(iris[, 1:4])
  set.seed(42)
  f1 <- nca(x, iris$Species, dim = 2, init = "random", max_iter = 30)
  set.seed(42)
  f2 <- nca(x, iris$Species, dim = 2, init = "random", max_iter = 30)
  expect_identical(f1$L, f2$L)
  set.seed(43)
  f3 <- nca(x, iris$Species, dim = 2, init = "random", max_iter = 30)
  expect_false(isTRUE(all.equal(f1$L, f3$L)))
})

test_that("init choices give the documented starting maps", {
  x <- scale(as.matrix(iris[, 1:4]))
  # the identity's rows are left to the core (never formed in R)
  st <- nca_init("auto", x, 4)
  expect_null(st$A)
  expect_identical(c(st$label, st$rows), c("identity", "4"))
  expect_equal(nca_init("auto", x, 2)$label, "pca")
  P <- nca_init("pca", x, 2)$A
  expect_equal(P %*% t(P), diag(2), tolerance = 1e-10)
  ev <- eigen(cov(x))$vectors[, 1:2]
  expect_equal(abs(P %*% ev), diag(2), tolerance = 1e-8)
  M <- matrix(0.1, 2, 4)
  expect_equal(nca_init(M, x, 2)$A, M)
})

test_that("a fit converges, records its trace and predicts", {
  fit <- nca(Species ~ ., data = iris, dim = 2, lambda = 0.01)
  cv <- fit$convergence
  expect_true(cv$converged)
  expect_equal(cv$objective, min(cv$trace), tolerance = 1e-12)
  expect_equal(dim(fit$L), c(2L, 4L))
  pr <- predict(fit, iris[c(1, 51, 101), ])
  expect_identical(as.character(pr), c("setosa", "versicolor", "virginica"))
  # The reported objective is eq. (2) + penalty at the returned map.
  xs <- apply_scaling(as.matrix(iris[, 1:4]), fit$prep)
  expect_equal(cv$objective, nca_objective_r(fit$L, xs, iris$Species, 0.01),
               tolerance = 1e-10)
  # NCA improves on its starting point.
  expect_lt(cv$objective, cv$trace[1])
})

test_that("hitting the iteration cap is reported as not converged", {
  expect_warning(fit <- nca(iris[, 1:4], iris$Species, max_iter = 2),
                 "nca() did not converge within `max_iter` = 2 iterations (",
                 fixed = TRUE)
  expect_false(fit$convergence$converged)
  expect_identical(fit$convergence$stop, "iteration limit")
  fit <- nca(iris[, 1:4], iris$Species)
  expect_true(fit$convergence$converged)
  expect_identical(fit$convergence$stop, "tolerance")
})

test_that("a plateau with a vanishing gradient ends the fit as converged, silently", {
  skip_if_not_installed("mlbench")
  # 200 points of Vowel (11 classes) on RBF KPCA coordinates: NCA drives the
  # objective to a plateau where the gradient underflows (~1e-30).  R's
  # L-BFGS-B used to end there with ABNORMAL_TERMINATION_IN_LNSRCH and a
  # warning; the glue now reports such a gradient as zero (no step as long
  # as the map could change the objective beyond rounding).  How other line
  # search failures are classified is tested in test-optim.R.
  e <- new.env()
  utils::data("Vowel", package = "mlbench", envir = e)
  x <- data.matrix(e$Vowel[, 2:10])
  set.seed(7)
  idx <- sample(nrow(x), 200)
  kp <- kpca(scale(x[idx, ]), rbf_kernel(25))
  expect_silent(fit <- nca(kp$coords, e$Vowel$Class[idx], scale = FALSE))
  cv <- fit$convergence
  expect_identical(cv$message, "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL")
  expect_identical(cv$stop, "gradient")
  expect_true(cv$converged)
  # Checked independently: the gradient at the result is negligible.
  g <- nca_fg(fit$L, kp$coords, e$Vowel$Class[idx])$gradient
  expect_lt(sqrt(sum(g^2)) * sqrt(sum(fit$L^2)), 1e-15 * abs(cv$objective))
  expect_equal(cv$gradient_norm, sqrt(sum(g^2)), tolerance = 1e-6)
})

test_that("verbose prints optimizer progress", {
  expect_output(nca(iris[, 1:4], iris$Species, verbose = TRUE), "evaluation 1:")
})

test_that("bad input gives clear errors", {
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species
  expect_error(nca(x, y, dim = 5),
               "`dim` (5) must not exceed the number of input columns of `x` (4).",
               fixed = TRUE)
  expect_error(nca(x, y, dim = 0), "`dim` must be a single whole number >= 1.",
               fixed = TRUE)
  expect_error(nca(x, y, dim = 2, init = matrix(1, 3, 4)),
               "`init` must be a 2 x 4 matrix (dim x number of input columns), not 3 x 4.",
               fixed = TRUE)
  expect_error(nca(x, y, init = matrix(NA_real_, 4, 4)),
               "`init` must contain finite numbers only.", fixed = TRUE)
  expect_error(nca(x, y, init = "lda"),
               "`init` must be \"auto\", \"identity\", \"pca\", \"random\" or a numeric matrix.",
               fixed = TRUE)
  expect_error(nca(x, y, lambda = -1), "`lambda` must be non-negative, not -1.",
               fixed = TRUE)
  expect_error(nca(x, y, tol = 0), "`tol` must be positive, not 0.", fixed = TRUE)
  expect_error(nca(x, y, max_iter = 0), "`max_iter` must be a single whole number >= 1.",
               fixed = TRUE)
  expect_error(nca(x, y[-1]), "`y` has length 149 but `x` has 150 rows",
               fixed = TRUE)
  expect_error(nca(x, y, foo = 1), "Unknown argument(s) to nca(): 'foo'.",
               fixed = TRUE)
})

test_that("p >> n stays finite: a vanishing gradient ends the fit cleanly", {
  # 50 points in 2000 dimensions: after one step every point's neighbour
  # probabilities are 0 or 1 and the gradient is ~1e-175; L-BFGS-B used to
  # compute NaN parameters from it ("the map has non-finite entries").
  set.seed(1)
  x <- matrix(rnorm(50 * 2000), 50)
  y <- factor(rep(1:2, 25))
  expect_silent(fit <- nca(x, y))
  expect_true(all(is.finite(fit$L)))
  expect_true(fit$convergence$converged)
  expect_identical(fit$convergence$stop, "gradient")
  expect_equal(fit$convergence$objective, -25, tolerance = 1e-12)
})

test_that("inputs at extreme scales without scaling: the flat start is rescaled", {
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species
  # Median squared distance from each point to its nearest other point
  # (duplicated rows excluded; the upper median of an even count), from the
  # definition.
  d2 <- as.matrix(stats::dist(x))^2
  diag(d2) <- Inf
  nn <- apply(d2, 1, min)
  nn <- sort(nn[nn > 0])
  med <- nn[length(nn) %/% 2 + 1]
  for (sc in c(1e-300, 1e-150, 1e150, 1e300)) {
    expect_silent(fit <- nca(x * sc, y, scale = FALSE))
    cv <- fit$convergence
    expect_true(all(is.finite(fit$L)))
    expect_true(cv$converged)
    expect_identical(cv$stop, "tolerance")
    # The start map was I times a power of two s that puts the median
    # nearest-neighbour squared distance at about 1 (the nearest power of
    # two: within a factor sqrt(2)).
    expect_identical(log2(cv$start_scale), round(log2(cv$start_scale)))
    expect_lte(abs(log2(cv$start_scale) - (-log2(sc) - 0.5 * log2(med))), 0.5 + 1e-6)
    # The fit is a real NCA fit of the data: objective and leave-one-out
    # 1-NN accuracy as good as on unscaled inputs.
    ref <- nca(x, y, scale = FALSE)
    expect_lt(cv$objective, ref$convergence$objective + 0.5)
    expect_gte(mean(predict(fit) == y), mean(predict(ref) == y))
    # The objective reported is eq. (2) at the returned map, evaluated on
    # the scaled inputs (the core rescales internally, so no overflow).
    expect_equal(cv$objective, nca_fg(fit$L, x * sc, y)$value, tolerance = 1e-10)
  }
  # A start given as a matrix is kept as given: with it the objective is flat,
  # and the fit says so.
  expect_warning(fit <- nca(x * 1e150, y, scale = FALSE, init = diag(4)),
                 "nca() could not move from its start: the objective is flat there (the mapped points are so far apart that every neighbour probability is 0 or 1, or so close that all are equal), so the gradient vanishes; scale `init` to the data (or use a built-in `init`, which is rescaled automatically).",
                 fixed = TRUE)
  expect_identical(unname(fit$L), diag(4))
})

test_that("the objective is finite for any finite map and inputs", {
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species
  A <- matrix(c(1, 0.5, -0.2, 0.1, 0, 1, 0.3, -0.4), 2, 4)
  ref <- nca_fg(A, x, y)
  # Scaling the inputs up and the map down by the same power of two gives
  # the same objective exactly; the gradient scales with the map.
  for (k in c(-1000, -600, 500, 1000)) {
    res <- nca_fg(A * 2^-k, x * 2^k, y)
    expect_equal(res$value, ref$value, tolerance = 1e-12)
    expect_equal(res$gradient * 2^-k, ref$gradient, tolerance = 1e-10)
  }
  # Only when x A' itself overflows is the objective infinite.
  expect_identical(nca_fg(A * 1e200, x * 1e200, y)$value, Inf)
})
