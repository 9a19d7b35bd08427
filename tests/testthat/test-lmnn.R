# LMNN: objective and gradient against an independent plain-R computation,
# solver properties, invariances, small classes and input validation.

test_that("the exact objective and M-gradient equal a plain-R computation", {
  d <- toy_data()
  tg <- target_neighbors(d$x, d$y, k = 2)
  set.seed(2)
  A <- matrix(rnorm(9), 3, 3) / 2
  M <- crossprod(A)
  for (lambda in c(0, 0.3)) {
    ref <- lmnn_plain(d$x, d$y, tg, M, mu = 0.4, lambda = lambda)
    got <- kmaha:::cpp_lmnn_objective(d$x, as.integer(d$y), tg, M, 0.4, lambda, "M", 0, NULL, test_ctx())
    expect_gt(ref$push, 0)
    expect_equal(got$value, ref$value, tolerance = 1e-10)
    expect_equal(got$pull, ref$pull, tolerance = 1e-10)
    expect_equal(got$push, ref$push, tolerance = 1e-10)
    expect_equal(got$gradient, ref$gradient, tolerance = 1e-10)
  }
})

test_that("the L-form objective equals the plain-R one and its gradient matches finite differences", {
  d <- toy_data(seed = 3)
  tg <- target_neighbors(d$x, d$y, k = 3)
  set.seed(4)
  L <- matrix(rnorm(6), 2, 3) / 2
  ref <- lmnn_plain(d$x, d$y, tg, crossprod(L), mu = 0.6, lambda = 0.2)
  expect_gt(min(abs(ref$hinge_args)), 1e-4)  # no hinge at its kink
  obj <- function(Lv) {
    kmaha:::cpp_lmnn_objective(d$x, as.integer(d$y), tg, matrix(Lv, 2, 3), 0.6, 0.2, "L", 0, NULL, test_ctx())
  }
  got <- obj(L)
  expect_equal(got$value, ref$value, tolerance = 1e-10)
  # gradient w.r.t. L is 2 L G_M
  expect_equal(got$gradient, 2 * L %*% ref$gradient, tolerance = 1e-10)
  h <- 1e-6
  fd <- vapply(seq_along(L), function(q) {
    e <- replace(numeric(length(L)), q, h)
    (obj(L + e)$value - obj(L - e)$value) / (2 * h)
  }, numeric(1))
  expect_lt(sqrt(sum((fd - c(got$gradient))^2)) / sqrt(sum(fd^2)), 1e-6)
})

test_that("both solvers give a PSD metric, report the exact objective and decrease it", {
  d <- toy_data(n = 45, D = 4, seed = 5)
  for (s in c("M", "L")) {
    fit <- lmnn(d$x, d$y, k = 3, solver = s)
    cv <- fit$convergence
    expect_true(cv$converged)
    expect_s3_class(fit, "kmaha_lmnn")
    ev <- eigen(fit$M, symmetric = TRUE, only.values = TRUE)$values
    expect_gt(min(ev), -1e-10 * max(ev))
    expect_equal(fit$M, crossprod(fit$L), tolerance = 1e-8,
                 ignore_attr = TRUE)
    xs <- kmaha:::apply_scaling(d$x, fit$prep)
    ref <- lmnn_plain(xs, d$y, fit$targets, unname(fit$M), mu = 0.5)
    expect_equal(cv$objective, ref$value, tolerance = 1e-8)
    expect_lte(cv$objective, cv$trace[1])
  }
  # the convex solver and the full-rank factored solver agree on the optimum
  fm <- lmnn(d$x, d$y, solver = "M")
  fl <- lmnn(d$x, d$y, solver = "L")
  expect_equal(fm$convergence$objective, fl$convergence$objective,
               tolerance = 0.02)
})

test_that("the hinge term reaches zero on separable data", {
  set.seed(6)
  y <- factor(rep(c("a", "b"), each = 15))
  # separable along the first coordinate, three noise coordinates
  x <- cbind(rnorm(30, sd = 0.1) + 3 * (y == "b"), matrix(rnorm(90), 30, 3))
  for (s in c("M", "L")) {
    fit <- lmnn(x, y, k = 3, solver = s)
    xs <- kmaha:::apply_scaling(x, fit$prep)
    at_start <- kmaha:::cpp_lmnn_objective(xs, as.integer(y), fit$targets, diag(4), 0.5, 0, "M", 0, NULL, test_ctx())
    at_end <- kmaha:::cpp_lmnn_objective(xs, as.integer(y), fit$targets, unname(fit$M), 0.5, 0, "M", 0, NULL, test_ctx())
    expect_true(fit$convergence$converged)
    expect_gt(at_start$push, 0)
    expect_equal(at_end$push, 0)
    expect_equal(at_end$value, fit$convergence$objective)
    expect_lt(at_end$value, at_start$value)
  }
})

test_that("no impostors and no pull converges at once", {
  # every point's targets are exact copies; the classes are far apart
  x <- rbind(matrix(c(0, 0), 4, 2, byrow = TRUE),
             matrix(c(5, 5), 4, 2, byrow = TRUE),
             matrix(c(0, 9), 4, 2, byrow = TRUE))
  y <- factor(rep(c("a", "b", "c"), each = 4))
  for (s in c("M", "L")) {
    fit <- lmnn(x, y, k = 3, solver = s)
    expect_true(fit$convergence$converged)
    expect_lte(fit$convergence$iterations, 1L)
    expect_equal(fit$convergence$objective, 0)
    expect_equal(unname(fit$M), diag(2))
    expect_equal(fit$active_triples, 0)
  }
})

test_that("permuting rows and renaming classes leaves the metric unchanged", {
  d <- toy_data(n = 60, D = 4, seed = 7)
  fit <- lmnn(d$x, d$y, k = 3)
  set.seed(8)
  perm <- sample(nrow(d$x))
  y2 <- factor(c(a = "zeta", b = "alpha", c = "mid")[as.character(d$y[perm])])
  fit2 <- lmnn(d$x[perm, ], y2, k = 3)
  expect_equal(fit2$M, fit$M, tolerance = 1e-3)
  expect_equal(fit2$convergence$objective, fit$convergence$objective,
               tolerance = 1e-5)
})

test_that("precomputed targets equal to the default ones give the same fit", {
  d <- toy_data(n = 40, D = 3, seed = 9)
  fit <- lmnn(d$x, d$y, k = 2)
  tg <- target_neighbors(scale(d$x), d$y, k = 2)
  expect_identical(tg, fit$targets)
  fit2 <- lmnn(d$x, d$y, targets = tg)
  expect_equal(fit2$settings$k, 2L)
  expect_equal(fit2$L, fit$L)
  expect_equal(fit2$convergence$objective, fit$convergence$objective)
  # NA entries are allowed
  tg[1:5, 2] <- NA
  fit3 <- lmnn(d$x, d$y, targets = tg)
  expect_identical(fit3$targets[1:5, 2], rep(NA_integer_, 5))
  expect_true(fit3$convergence$converged)
})

test_that("small classes warn once, and a singleton class works", {
  d <- toy_data(n = 30, D = 2, seed = 10)
  y <- factor(as.character(d$y), levels = c(levels(d$y), "tiny"))
  y[1:2] <- "tiny"
  expect_warning(
    fit <- lmnn(d$x, y, k = 3),
    "`y`: class 'tiny' (2 members) has fewer than k + 1 = 4 members; its points use as many same-class neighbours as the class allows (none for a singleton).",
    fixed = TRUE)
  expect_equal(sum(!is.na(fit$targets[1, ])), 1L)
  y[2] <- "a"
  expect_warning(fit1 <- lmnn(d$x, y, k = 3), "'tiny'", fixed = TRUE)
  expect_true(all(is.na(fit1$targets[1, ])))
  expect_true(fit1$convergence$converged)
  expect_true(all(is.finite(fit1$L)))
  expect_length(predict(fit1, d$x[1:3, ]), 3L)
})

test_that("dim < D gives a low-rank map with both solvers", {
  d <- toy_data(n = 45, D = 4, seed = 11)
  fl <- lmnn(d$x, d$y, dim = 2)
  expect_equal(fl$settings$solver, "L")
  expect_equal(dim(fl$L), c(2L, 4L))
  fm <- lmnn(d$x, d$y, dim = 2, solver = "M")
  expect_equal(dim(fm$L), c(2L, 4L))
  expect_equal(dim(predict(fm, d$x, type = "transform")), c(45L, 2L))
  set.seed(1)
  fr <- lmnn(d$x, d$y, init = "random", solver = "L")
  expect_true(fr$convergence$converged)
  fi <- lmnn(d$x, d$y, init = diag(4)[1:3, ], solver = "L")
  expect_equal(nrow(fi$L), 3L)
})

test_that("the formula method matches the default method", {
  f1 <- lmnn(Species ~ ., data = iris, max_iter = 300)
  f2 <- lmnn(iris[, 1:4], iris$Species, max_iter = 300)
  expect_equal(f1$L, f2$L)
  expect_equal(predict(f1, iris[c(1, 51, 101), ]),
               iris$Species[c(1, 51, 101)])
})

paper_protocol <- function(x, y, n_train, splits, seed) {
  set.seed(seed)
  res <- vapply(seq_len(splits), function(s) {
    tr <- sample(nrow(x), n_train)
    prep <- kmaha:::fit_scaling(x[tr, ])
    xtr <- kmaha:::apply_scaling(x[tr, ], prep)
    xte <- kmaha:::apply_scaling(x[-tr, ], prep)
    euclid <- mean(knn_classify(xtr, y[tr], xte, k = 1)$class == y[-tr])
    fit <- suppressWarnings(lmnn(x[tr, ], y[tr], k = 3))
    c(euclid = euclid, lmnn = mean(predict(fit, x[-tr, ]) == y[-tr]))
  }, numeric(2))
  rowMeans(res)
}

test_that("LMNN beats or equals Euclidean 1-NN (paper protocol)", {
  acc <- paper_protocol(as.matrix(iris[, 1:4]), iris$Species, 100, 4, 1)
  expect_gte(acc[["lmnn"]], acc[["euclid"]])
  skip_if_not_installed("mlbench")
  data("Vehicle", package = "mlbench", envir = environment())
  acc <- paper_protocol(as.matrix(Vehicle[, 1:18]), Vehicle$Class, 200, 3, 2)
  expect_gt(acc[["lmnn"]], acc[["euclid"]] + 0.01)
})

test_that("LMNN matches the paper on Balance (KMAHA_DATA_DIR)", {
  dd <- Sys.getenv("KMAHA_DATA_DIR")
  f <- file.path(dd, "balance_scale.csv")
  skip_if_not(nzchar(dd) && file.exists(f), "KMAHA_DATA_DIR not set")
  bal <- utils::read.csv(f)
  x <- as.matrix(bal[, names(bal) != "class"])
  acc <- paper_protocol(x, factor(bal$class), 200, 5, 3)
  # paper, Table 2: LMNN 0.84 +- 0.04 on Balance
  expect_gt(acc[["lmnn"]], 0.80)
  expect_gt(acc[["lmnn"]], acc[["euclid"]] + 0.01)
})

test_that("bad input gives clear errors", {
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species
  expect_error(lmnn(x, y, k = 2.5), "`k` must be a single whole number >= 1.",
               fixed = TRUE)
  expect_error(lmnn(x, y, mu = 1), "`mu` must lie strictly between 0 and 1, not 1.",
               fixed = TRUE)
  expect_error(lmnn(x, y, mu = 0), "`mu` must lie strictly between 0 and 1, not 0.",
               fixed = TRUE)
  expect_error(lmnn(x, y, mu = NA), "`mu` must be a single finite number.",
               fixed = TRUE)
  expect_error(lmnn(x, y, lambda = -1), "`lambda` must be non-negative, not -1.",
               fixed = TRUE)
  expect_error(lmnn(x, y, k = 50),
               "`k` (50) is too large: no class has more than 50 members, so no point can have 50 same-class neighbours. Use k <= 49.",
               fixed = TRUE)
  tg <- target_neighbors(x, y, k = 3)
  expect_error(lmnn(x, y, targets = tg[1:10, ]),
               "`targets` has 10 rows but there are 150 observations; they must match.",
               fixed = TRUE)
  expect_error(lmnn(x, y, targets = tg, k = 2),
               "`targets` has 3 columns but `k` is 2; they must match.",
               fixed = TRUE)
  bad <- tg
  bad[3, 1] <- 151L
  expect_error(lmnn(x, y, targets = bad),
               "`targets` must hold row numbers between 1 and 150 (or NA).",
               fixed = TRUE)
  bad <- tg
  bad[4, 2] <- 4L
  expect_error(lmnn(x, y, targets = bad),
               "`targets` lists row 4 as its own neighbour; neighbours must be other rows.",
               fixed = TRUE)
  bad <- tg
  bad[5, 1] <- 120L
  expect_error(lmnn(x, y, targets = bad),
               "`targets` row 5 lists a point of another class; it must list neighbours of the row's own class.",
               fixed = TRUE)
  bad <- tg
  bad[6, 2] <- bad[6, 1]
  expect_error(lmnn(x, y, targets = bad),
               "`targets` row 6 repeats a neighbour.", fixed = TRUE)
  expect_error(lmnn(x, y, targets = "a"),
               "`targets` must be an integer matrix", fixed = TRUE)
  expect_error(lmnn(x, y, dim = 5),
               "`dim` (5) must not exceed the number of input columns of `x` (4).",
               fixed = TRUE)
  expect_error(lmnn(x, y, init = matrix(1, 2, 3)),
               "`init` must have 4 columns (one per feature), not 3.",
               fixed = TRUE)
  # more rows than input columns: refused (it would be a square map)
  expect_error(lmnn(as.matrix(iris[, 1:4]), iris$Species, init = matrix(runif(20), 5, 4)),
               "`init` has 5 rows but `x` has 4 columns: a map has at most one row per column of its input, so give `init` at most 4 rows.",
               fixed = TRUE)
  expect_error(lmnn(x, y, init = "lda"), "`init` must be \"auto\"",
               fixed = TRUE)
  expect_error(lmnn(x, y, solver = "X"), "`solver` must be \"auto\", \"M\" or \"L\".", fixed = TRUE)
  expect_error(lmnn(x, y, foo = 1), "Unknown argument(s) to lmnn(): 'foo'.",
               fixed = TRUE)
  expect_error(lmnn(x, rep("a", 150)), "at least 2 classes", fixed = TRUE)
})
