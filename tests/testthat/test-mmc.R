# MMC (Xing et al. 2003) against plain-R computations of its objective g
# (sum of dissimilar distances) and constraint f (sum of similar squared
# distances), the diagonal objective h(a) = f(a) - log g(a) and its gradient
# by finite differences, and optima found by stats::optim() on the
# scale-free ratio g / sqrt(f).  Also the pair checks shared with itml().

mmc_data <- function(n = 40, seed = 1) {
  set.seed(seed)
  y <- factor(rep(c("a", "b"), length.out = n))
  x <- cbind(rnorm(n) + 2 * as.integer(y), rnorm(n, sd = 3), rnorm(n) - as.integer(y))
  colnames(x) <- paste0("v", 1:3)
  list(x = x, y = y)
}

pair_diffs <- function(x, pairs, similar, s) {
  p <- pairs[similar == s, , drop = FALSE]
  x[p[, 1], , drop = FALSE] - x[p[, 2], , drop = FALSE]
}
g_of <- function(M, Dd) sum(sqrt(pmax(rowSums((Dd %*% M) * Dd), 0)))
f_of <- function(M, Ds) sum(rowSums((Ds %*% M) * Ds))

test_that("pairs drawn from labels: reproducible, half similar, similar iff same class", {
  y <- factor(rep(c("a", "b", "c"), c(10, 12, 8)))
  set.seed(3)
  a <- kmaha:::draw_pairs(y, 60)
  set.seed(3)
  b <- kmaha:::draw_pairs(y, 60)
  expect_identical(a, b)
  expect_identical(sum(a$similar == 1), 30L)
  expect_identical(sum(a$similar == -1), 30L)
  same <- y[a$pairs[, 1]] == y[a$pairs[, 2]]
  expect_identical(same, a$similar == 1)
  expect_true(all(a$pairs[, 1] != a$pairs[, 2]))
  key <- paste(pmin(a$pairs[, 1], a$pairs[, 2]), pmax(a$pairs[, 1], a$pairs[, 2]))
  expect_false(anyDuplicated(key) > 0)
  # fewer pairs exist than asked for: all of them, once
  y2 <- factor(c("a", "a", "a", "b", "b"))
  set.seed(1)
  p2 <- kmaha:::draw_pairs(y2, 100)
  expect_identical(sum(p2$similar == 1), 4L)   # 3 + 1 same-class pairs
  expect_identical(sum(p2$similar == -1), 6L)  # 3 x 2 cross pairs
  # uniform over the same-class pairs: a class's share follows its pair count
  set.seed(2)
  p3 <- kmaha:::draw_pairs(factor(rep(c("a", "b"), c(40, 10))), 1000)
  sim <- p3$pairs[p3$similar == 1, ]
  share_a <- mean(sim[, 1] <= 40)
  expect_equal(share_a, choose(40, 2) / (choose(40, 2) + choose(10, 2)), tolerance = 0.05)
  # the default count
  expect_identical(kmaha:::default_n_pairs(y), 360L)
})

test_that("bad pairs are errors with exact messages", {
  d <- mmc_data()
  x <- d$x
  ok <- rbind(c(1, 3), c(1, 2))
  s <- c(1, -1)
  expect_error(mmc(x), "mmc() needs class labels `y` or pairs (`pairs` and `similar`).", fixed = TRUE)
  expect_error(mmc(x, pairs = 1:4, similar = s),
               "`pairs` must be a two-column numeric matrix of row indices of `x`, one pair per row, not an integer vector of length 4.",
               fixed = TRUE)
  expect_error(mmc(x, pairs = matrix(1:6, 2), similar = s),
               "`pairs` must be a two-column numeric matrix of row indices of `x`, one pair per row, not an integer matrix with 3 columns.",
               fixed = TRUE)
  expect_error(mmc(x, pairs = matrix(c("1", "2"), 1), similar = 1),
               "`pairs` must be a two-column numeric matrix of row indices of `x`, one pair per row, not a character matrix with 2 columns.",
               fixed = TRUE)
  expect_error(mmc(x, pairs = rbind(c(1, 3), c(NA, 2)), similar = s),
               "`pairs` contains missing values (row 2): every pair needs two row indices of `x`.",
               fixed = TRUE)
  expect_error(mmc(x, pairs = rbind(c(1, 3), c(1, 2.5)), similar = s),
               "`pairs` must hold whole numbers (row indices of `x`); row 2 has 2.5.", fixed = TRUE)
  expect_error(mmc(x, pairs = rbind(c(1, 41), c(1, 2)), similar = s),
               "`pairs` row 1 refers to row 41 of `x`, which has 40 rows.", fixed = TRUE)
  expect_error(mmc(x, pairs = rbind(c(1, 3), c(0, 2)), similar = s),
               "`pairs` row 2 refers to row 0 of `x`, which has 40 rows.", fixed = TRUE)
  expect_error(mmc(x, pairs = rbind(c(1, 3), c(2, 2)), similar = s),
               "`pairs` row 2 pairs row 2 of `x` with itself; a pair needs two different rows.",
               fixed = TRUE)
  expect_error(mmc(x, pairs = ok),
               "`similar` is missing: give one value per row of `pairs`, 1 (similar) or -1 (dissimilar).",
               fixed = TRUE)
  expect_error(mmc(x, pairs = ok, similar = c(1, -1, 1)),
               "`similar` has length 3 but `pairs` has 2 rows; they must match.", fixed = TRUE)
  expect_error(mmc(x, pairs = ok, similar = c(1, 0)),
               "`similar` must hold 1 (similar) or -1 (dissimilar) only; element 2 is 0.", fixed = TRUE)
  expect_error(mmc(x, pairs = ok, similar = c(NA, 1)),
               "`similar` must hold 1 (similar) or -1 (dissimilar) only; element 1 is NA.", fixed = TRUE)
  expect_error(mmc(x, pairs = ok, similar = c("1", "-1")),
               "`similar` must be a numeric vector of 1 (similar) and -1 (dissimilar), not a character.",
               fixed = TRUE)
  expect_error(mmc(x, pairs = rbind(c(1, 3), c(1, 2), c(3, 1)), similar = c(1, -1, -1)),
               "The pair of rows 1 and 3 of `x` is marked both similar and dissimilar (`pairs` rows 1 and 3); remove one of them.",
               fixed = TRUE)
  expect_error(mmc(x, pairs = ok, similar = c(1, 1)),
               "All pairs are similar: mmc() needs dissimilar pairs too (`similar` = -1).", fixed = TRUE)
  expect_error(itml(x, pairs = ok, similar = c(-1, -1)),
               "All pairs are dissimilar: itml() needs similar pairs too (`similar` = 1).", fixed = TRUE)
  expect_error(mmc(x, similar = s),
               "`similar` is given without `pairs`: give both, or neither (pairs are then drawn from `y`).",
               fixed = TRUE)
  expect_error(mmc(x, pairs = matrix(numeric(), 0, 2), similar = numeric()),
               "`pairs` has no rows: mmc() needs similar and dissimilar pairs.", fixed = TRUE)
  expect_error(mmc(x, d$y, n_pairs = 1), "`n_pairs` must be a single whole number >= 2.", fixed = TRUE)
  expect_error(mmc(x, d$y, diagonal = NA), "`diagonal` must be TRUE or FALSE.", fixed = TRUE)
  # a data frame of pairs and whole numbers stored as doubles are fine
  fit <- mmc(x, pairs = data.frame(i = c(1, 1), j = c(3, 2)), similar = s, scale = FALSE)
  expect_identical(fit$pairs$pairs, matrix(c(1L, 1L, 3L, 2L), 2))
})

test_that("the diagonal objective and its gradient: plain R and finite differences", {
  d <- mmc_data(seed = 2)
  set.seed(4)
  pr <- kmaha:::draw_pairs(d$y, 40)
  ctx <- kmaha:::kmaha_context()
  Ds <- pair_diffs(d$x, pr$pairs, pr$similar, 1)
  Dd <- pair_diffs(d$x, pr$pairs, pr$similar, -1)
  h <- function(a) sum(Ds^2 %*% a) - log(sum(sqrt(Dd^2 %*% a)))
  for (a in list(c(1, 1, 1), c(0.3, 2, 0.01), c(5, 0.2, 1))) {
    out <- kmaha:::core_mmc_diag_objective(d$x, pr$pairs, pr$similar, a, ctx)
    expect_equal(out$value, h(a), tolerance = 1e-12)
    fd <- vapply(seq_along(a), function(k) {
      e <- replace(numeric(3), k, 1e-6 * a[k])
      (h(a + e) - h(a - e)) / (2e-6 * a[k])
    }, 0)
    expect_equal(out$gradient, fd, tolerance = 1e-6)
  }
})

test_that("the diagonal fit maximises g / sqrt(f) over diagonal metrics, with f = 1", {
  d <- mmc_data(seed = 3)
  set.seed(5)
  fit <- mmc(d$x, d$y, diagonal = TRUE, scale = FALSE, tol = 1e-10)
  pr <- fit$pairs
  Ds <- pair_diffs(d$x, pr$pairs, pr$similar, 1)
  Dd <- pair_diffs(d$x, pr$pairs, pr$similar, -1)
  M <- diag(fit$weights)
  expect_equal(f_of(M, Ds), 1, tolerance = 1e-10)
  expect_equal(fit$constraint, 1, tolerance = 1e-10)
  expect_equal(fit$convergence$objective, g_of(M, Dd), tolerance = 1e-10)
  expect_equal(unname(crossprod(fit$L)), M, tolerance = 1e-12)
  ratio <- function(w) -g_of(diag(w^2), Dd) / sqrt(f_of(diag(w^2), Ds))
  best <- min(vapply(1:4, function(s) {
    set.seed(s)
    stats::optim(runif(3, 0.5, 2), ratio, method = "BFGS",
                 control = list(reltol = 1e-12, maxit = 1000))$value
  }, 0))
  expect_equal(fit$convergence$objective, -best, tolerance = 1e-6)
  # the paper's h at its minimiser: f = 1/2 there, h = 1/2 - log(g / sqrt(2))
  expect_equal(fit$h, 0.5 - log(fit$convergence$objective / sqrt(2)), tolerance = 1e-7)
})

test_that("diagonal: a column no similar pair varies in gets weight 0, the rest is the fit without it", {
  d <- mmc_data(seed = 6)
  set.seed(7)
  pr <- kmaha:::draw_pairs(d$y, 60)
  # a rare indicator: 1 on two rows that are in dissimilar pairs only, so no
  # similar pair differs in it and some dissimilar pair does
  flag <- numeric(nrow(d$x))
  in_sim <- unique(c(pr$pairs[pr$similar == 1, ]))
  only_dis <- setdiff(unique(c(pr$pairs[pr$similar == -1, ])), in_sim)
  flag[only_dis[1:2]] <- 1
  x <- cbind(d$x, flag = flag)
  expect_warning(
    fit <- mmc(x, d$y, pairs = pr$pairs, similar = pr$similar, diagonal = TRUE, scale = FALSE),
    "mmc(): no similar pair differs in column 'flag', where dissimilar pairs do: the diagonal objective has no minimum along it (it would weigh it without bound and the other columns not at all), so it gets weight 0 and the metric is fitted on the other columns. Give similar pairs that differ in it, or leave it out.",
    fixed = TRUE)  # (was: weight 1e17 or so on `flag`, the others about 0, no word)
  expect_identical(fit$unbounded, 4L)
  expect_identical(fit$weights[4], 0)
  ref <- mmc(d$x, d$y, pairs = pr$pairs, similar = pr$similar, diagonal = TRUE, scale = FALSE)
  expect_identical(ref$unbounded, integer())
  expect_equal(fit$weights[1:3], ref$weights, tolerance = 1e-12)
  expect_equal(fit$h, ref$h, tolerance = 1e-12)
  # the objective does fall without bound along the column
  ctx <- kmaha:::kmaha_context()
  h_at <- function(t) kmaha:::core_mmc_diag_objective(x, pr$pairs, pr$similar,
                                                       c(ref$weights, t), ctx)$value
  expect_lt(h_at(1e6), h_at(1e3))
  expect_lt(h_at(1e3), h_at(0))
  # without names, the column's number
  expect_warning(mmc(unname(x), d$y, pairs = pr$pairs, similar = pr$similar, diagonal = TRUE,
                     scale = FALSE),
                 "no similar pair differs in column 4, where", fixed = TRUE)
  # kernelized by the KPCA trick's linear case, the warning names it too
  expect_warning(kmaha(x, d$y, learner = "mmc", kernel = "linear", scale = FALSE,
                       learner_args = list(diagonal = TRUE, pairs = pr$pairs, similar = pr$similar)),
                 "no similar pair differs in column", fixed = TRUE)
  # when the dissimilar pairs differ only in such columns there is no metric
  x2 <- cbind(a = rep(c(0, 1), each = 3), b = c(0, 0, 1, 0, 0, 1))
  expect_error(mmc(x2, pairs = rbind(c(1, 4), c(2, 5), c(1, 3)), similar = c(1, 1, -1),
                   diagonal = TRUE, scale = FALSE),
               "mmc: the dissimilar pairs differ only in columns in which no similar pair differs, so the diagonal objective has no minimum: give similar pairs that differ in those columns",
               fixed = TRUE)
})

test_that("the full fit: constraint active, g from plain R, optimal, at least the diagonal's", {
  d <- mmc_data(seed = 4)
  set.seed(6)
  fit <- mmc(d$x, d$y, scale = FALSE, tol = 1e-9, max_iter = 2000)
  expect_true(fit$convergence$converged)
  pr <- fit$pairs
  Ds <- pair_diffs(d$x, pr$pairs, pr$similar, 1)
  Dd <- pair_diffs(d$x, pr$pairs, pr$similar, -1)
  M <- fit$metric
  expect_equal(f_of(M, Ds), 1, tolerance = 1e-8)
  expect_equal(fit$convergence$objective, g_of(M, Dd), tolerance = 1e-10)
  expect_gte(min(eigen(M, symmetric = TRUE)$values), -1e-12)
  expect_equal(unname(crossprod(fit$L)), unname(M), tolerance = 1e-10)
  # an independent optimum: optim() over M = B'B of the scale-free ratio
  ratio <- function(b) {
    B <- matrix(b, 3)
    -g_of(crossprod(B), Dd) / sqrt(f_of(crossprod(B), Ds))
  }
  best <- min(vapply(1:4, function(s) {
    set.seed(s)
    stats::optim(rnorm(9), ratio, method = "BFGS",
                 control = list(reltol = 1e-14, maxit = 5000))$value
  }, 0))
  # (the optimum is of rank 1 here, where g is not smooth: projected gradient
  # ascent gets within a few tenths of a percent, not to the last digit)
  expect_lte(fit$convergence$objective, -best * (1 + 1e-8))
  expect_gte(fit$convergence$objective, -best * (1 - 5e-3))
  # the diagonal metrics are a subset: the full optimum is at least theirs
  set.seed(6)
  fd <- mmc(d$x, d$y, diagonal = TRUE, scale = FALSE)
  expect_identical(fd$pairs, fit$pairs)
  expect_gte(fit$convergence$objective, fd$convergence$objective * (1 - 1e-8))
  # the start I / f(I) is feasible and worse
  expect_gt(fit$convergence$objective, g_of(diag(3) / f_of(diag(3), Ds), Dd))
})

test_that("the full metric is invariant to a rotation of x (scale = FALSE)", {
  d <- mmc_data(seed = 5)
  set.seed(7)
  R <- qr.Q(qr(matrix(rnorm(9), 3)))
  set.seed(1)
  a <- mmc(d$x, d$y, scale = FALSE, tol = 1e-9)
  set.seed(1)
  b <- mmc(d$x %*% R, d$y, scale = FALSE, tol = 1e-9)
  expect_equal(b$convergence$objective, a$convergence$objective, tolerance = 1e-7)
  expect_equal(unname(b$metric), unname(t(R) %*% a$metric %*% R), tolerance = 1e-5)
})

test_that("p > n: the span path gives the full path's metric on the span", {
  set.seed(8)
  n <- 16L
  y <- factor(rep(c("a", "b"), each = n / 2))
  x <- matrix(rnorm(n * 25), n) + outer(as.integer(y), rnorm(25))
  set.seed(2)
  pr <- kmaha:::draw_pairs(y, 40)
  ctx <- kmaha:::kmaha_context()
  s <- kmaha:::core_mmc_fit(x, pr$pairs, pr$similar, FALSE, 300L, 1e-8, ctx, span = TRUE)
  f <- kmaha:::core_mmc_fit(x, pr$pairs, pr$similar, FALSE, 300L, 1e-8, ctx, span = FALSE)
  expect_identical(s$span_rank, n - 1L)
  expect_identical(s$iterations, f$iterations)
  expect_equal(s$objective, f$objective, tolerance = 1e-8)
  expect_equal(s$trace, f$trace, tolerance = 1e-8)
  # distances between training points agree
  expect_equal(as.matrix(stats::dist(x %*% t(s$L))), as.matrix(stats::dist(x %*% t(f$L))),
               tolerance = 1e-6)
  fit <- mmc(x, y, pairs = pr$pairs, similar = pr$similar, scale = FALSE, max_iter = 300,
             tol = 1e-8)
  expect_null(fit$metric)
  expect_lte(nrow(fit$L), n - 1L)
})

test_that("models: formula, labels for classification, pairs only, persistence", {
  set.seed(1)
  fit <- mmc(Species ~ ., data = iris)
  expect_s3_class(fit, c("kmaha_mmc", "kmaha_linear", "kmaha_model"))
  expect_gt(fit$train_accuracy, 0.85)
  expect_output(print(fit), "MMC", fixed = TRUE)
  expect_identical(fit$settings$n_pairs, 360L)
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  expect_identical(predict(readRDS(f), iris[1:5, ]), predict(fit, iris[1:5, ]))
  # pairs only: a transform
  pr <- rbind(c(1, 2), c(51, 52), c(101, 102), c(1, 51), c(2, 101), c(52, 102))
  fp <- mmc(iris[, 1:4], pairs = pr, similar = c(1, 1, 1, -1, -1, -1))
  expect_null(fp$y)
  expect_identical(ncol(predict(fp, iris[1:3, 1:4], type = "transform")), nrow(fp$L))
  # through the pipeline every learner shares (the KPCA trick)
  ctx <- kmaha:::kmaha_context()
  spec <- kmaha:::builtin_spec("mmc", list(diagonal = TRUE))
  set.seed(2)
  p <- kmaha:::fit_pipeline(scale(as.matrix(iris[, 1:4])), iris$Species,
                            kmaha:::feature_kpca(rbf_kernel(0.5)), spec, ctx)
  expect_identical(ncol(p$map), ncol(p$coords))
})
