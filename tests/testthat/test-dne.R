# Independent plain-R references for DNE: neighbour lists from dist(), the
# dense graph W, the matrix S = X'(D - W)X and the paper's pairwise objective.

ref_neighbors <- function(x, y, k) {
  d2 <- as.matrix(stats::dist(x))^2
  n <- nrow(x)
  same <- other <- matrix(NA_integer_, n, k)
  for (i in seq_len(n)) {
    cand_s <- which(y == y[i] & seq_len(n) != i)
    cand_o <- which(y != y[i])
    os <- cand_s[order(d2[i, cand_s], cand_s)]
    oo <- cand_o[order(d2[i, cand_o], cand_o)]
    same[i, seq_len(min(k, length(os)))] <- utils::head(os, k)
    other[i, seq_len(min(k, length(oo)))] <- utils::head(oo, k)
  }
  list(same = same, other = other)
}

ref_W <- function(nb, n) {
  W <- matrix(0, n, n)
  for (i in seq_len(n)) {
    for (j in nb$same[i, ]) if (!is.na(j)) W[i, j] <- W[j, i] <- 1
  }
  for (i in seq_len(n)) {
    for (j in nb$other[i, ]) if (!is.na(j)) W[i, j] <- W[j, i] <- -1
  }
  W
}

make_data <- function(n = 60, seed = 1) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- cbind(matrix(rnorm(n * 2), n) + 1.5 * as.integer(y),
             matrix(rnorm(n * 3), n))
  colnames(x) <- paste0("v", 1:5)
  list(x = x, y = y)
}

test_that("neighbour lists and the graph W match a plain-R construction", {
  d <- make_data()
  fit <- dne(d$x, d$y, k = 3)
  xs <- scale(d$x)
  nb <- ref_neighbors(xs, d$y, 3)
  expect_identical(fit$targets$same, nb$same)
  expect_identical(fit$targets$other, nb$other)
  # the graph the fit built is the plain-R W: its scatter is X'(D - W)X
  W <- ref_W(nb, nrow(d$x))
  expect_equal(unname(fit$scatter), unname(t(xs) %*% (diag(rowSums(W)) - W) %*% xs),
               tolerance = 1e-10)
  expect_true(isSymmetric(W))
  # the symmetric "or": some pair is a neighbour in one direction only
  asym <- sum(vapply(seq_len(nrow(xs)), function(i) {
    sum(!vapply(nb$same[i, ], function(j) i %in% nb$same[j, ], NA))
  }, 0))
  expect_gt(asym, 0)
  expect_equal(sum(W == 1), sum(vapply(seq_len(nrow(xs)), function(i)
    length(union(nb$same[i, ], which(apply(nb$same, 1, function(r) i %in% r)))), 0)))
})

test_that("ties are broken by the lower row index, as in target_neighbors()", {
  g <- as.matrix(expand.grid(a = 1:4, b = 1:4, c = 1:3))
  y <- factor(ifelse(g[, 1] * g[, 2] > 2 * g[, 3], "L", "R"))
  fit <- dne(g, y, k = 4, scale = FALSE)
  nb <- ref_neighbors(g, y, 4)
  expect_identical(fit$targets$same, nb$same)
  expect_identical(fit$targets$other, nb$other)
  expect_identical(fit$targets$same, target_neighbors(g, y, 4, "same"))
  expect_identical(fit$targets$other, target_neighbors(g, y, 4, "other"))
})

test_that("S equals X'(D - W)X computed densely in plain R", {
  d <- make_data(seed = 2)
  fit <- dne(d$x, d$y, k = 2)
  xs <- scale(d$x)
  W <- ref_W(ref_neighbors(xs, d$y, 2), nrow(xs))
  S <- t(xs) %*% (diag(rowSums(W)) - W) %*% xs
  expect_equal(unname(fit$scatter), unname(S), tolerance = 1e-10)
  expect_equal(fit$eigenvalues, sort(eigen(S, symmetric = TRUE)$values),
               tolerance = 1e-10)
  # unscaled inputs: S on the raw columns (no centring needed: (D - W)1 = 0)
  fit_raw <- dne(d$x + 100, d$y, k = 2, scale = FALSE)
  W2 <- ref_W(ref_neighbors(d$x, d$y, 2), nrow(d$x))
  S2 <- t(d$x + 100) %*% (diag(rowSums(W2)) - W2) %*% (d$x + 100)
  expect_equal(unname(fit_raw$scatter), unname(S2), tolerance = 1e-8)
})

test_that("objective = trace(A S A') = sum of chosen eigenvalues = half the pairwise sum", {
  d <- make_data(seed = 3)
  for (dd in list(NULL, 2L)) {
    fit <- dne(d$x, d$y, k = 3, dim = dd)
    A <- fit$L
    xs <- scale(d$x)
    W <- ref_W(ref_neighbors(xs, d$y, 3), nrow(xs))
    S <- t(xs) %*% (diag(rowSums(W)) - W) %*% xs
    ev <- sort(eigen(S, symmetric = TRUE)$values)
    dim_used <- nrow(A)
    expect_equal(fit$convergence$objective, sum(ev[seq_len(dim_used)]),
                 tolerance = 1e-10)
    expect_equal(sum(diag(A %*% S %*% t(A))), fit$convergence$objective,
                 tolerance = 1e-10)
    Z <- xs %*% t(A)
    pair <- sum(W * as.matrix(stats::dist(Z))^2)  # sum over ordered pairs
    expect_equal(pair / 2, fit$convergence$objective, tolerance = 1e-10)
    expect_equal(A %*% t(A), diag(dim_used), tolerance = 1e-12,
                 ignore_attr = TRUE)
    expect_true(fit$convergence$converged)
    expect_identical(fit$convergence$iterations, 1L)
  }
})

test_that("default dim is the number of negative eigenvalues", {
  d <- make_data(n = 90, seed = 4)
  fit <- dne(d$x, d$y, k = 3)
  S <- unname(fit$scatter)
  ev <- eigen(S, symmetric = TRUE)$values
  expect_identical(nrow(fit$L), sum(ev < 0))
  expect_identical(fit$n_negative, sum(ev < 0))
  expect_identical(fit$retention, 1)  # D < n - 1: affinely dependent points
  expect_lt(nrow(fit$L), ncol(d$x))  # the noise columns are dropped
  # the chosen rows span the eigenvectors of the negative eigenvalues
  V <- eigen(S, symmetric = TRUE)$vectors[, ev < 0, drop = FALSE]
  expect_equal(crossprod(fit$L), V %*% t(V), tolerance = 1e-8,
               ignore_attr = TRUE)
  # a graph with only same-class edges has no negative eigenvalue: dim 1
  tg <- fit$targets
  tg$other[] <- NA_integer_
  fit1 <- dne(d$x, d$y, targets = tg)
  expect_identical(fit1$n_negative, 0L)
  expect_identical(nrow(fit1$L), 1L)
})

test_that("lambda leaves the map unchanged and prices each dimension", {
  d <- make_data(n = 90, seed = 4)
  f0 <- dne(d$x, d$y, k = 3, dim = 2)
  f1 <- dne(d$x, d$y, k = 3, dim = 2, lambda = 3)
  expect_equal(crossprod(f0$L), crossprod(f1$L), tolerance = 1e-10)
  expect_equal(f1$eigenvalues, f0$eigenvalues + 3, tolerance = 1e-10)
  expect_equal(f1$convergence$objective, f0$convergence$objective + 2 * 3,
               tolerance = 1e-10)
  ev <- f0$eigenvalues
  lam <- mean(-ev[1:2])  # between the two most negative eigenvalues
  fa <- dne(d$x, d$y, k = 3, lambda = lam)
  expect_identical(nrow(fa$L), sum(ev < -lam))
})

test_that("permuting rows and renaming classes leave the subspace unchanged", {
  d <- make_data(n = 75, seed = 5)
  fit <- dne(d$x, d$y, k = 3, dim = 2)
  P <- crossprod(fit$L)
  set.seed(9)
  perm <- sample(nrow(d$x))
  fit_p <- dne(d$x[perm, ], d$y[perm], k = 3, dim = 2)
  expect_equal(crossprod(fit_p$L), P, tolerance = 1e-10)
  expect_equal(fit_p$convergence$objective, fit$convergence$objective,
               tolerance = 1e-10)
  y2 <- factor(c(a = "zeta", b = "alpha", c = "mid")[as.character(d$y)])
  fit_r <- dne(d$x, y2, k = 3, dim = 2)
  expect_equal(crossprod(fit_r$L), P, tolerance = 1e-12)
})

test_that("precomputed targets reproduce the default fit", {
  d <- make_data(seed = 6)
  fit <- dne(d$x, d$y, k = 3)
  fit_t <- dne(d$x, d$y, targets = fit$targets)
  expect_equal(fit_t$L, fit$L)
  xs <- scale(d$x)
  tg <- list(same = target_neighbors(xs, d$y, 3, "same"),
             other = target_neighbors(xs, d$y, 3, "other"))
  fit_u <- dne(d$x, d$y, targets = tg)
  expect_equal(fit_u$L, fit$L)
  expect_identical(fit_u$settings$targets, "supplied")
  # targets as a double matrix and with different widths are accepted
  tg2 <- list(same = tg$same[, 1:2] + 0, other = tg$other)
  expect_silent(fit_2 <- dne(d$x, d$y, targets = tg2))
  expect_equal(fit_2$L, dne(d$x, d$y, targets = list(same = tg$same[, 1:2],
                                                     other = tg$other))$L)
})

test_that("formula method and predict work", {
  fit <- dne(Species ~ ., data = iris, dim = 2)
  expect_s3_class(fit, c("kmaha_dne", "kmaha_linear"))
  z <- predict(fit, iris[1:5, ], type = "transform")
  expect_equal(z, scale(iris[, 1:4], fit$prep$center, fit$prep$scale)[1:5, ] %*%
                 t(fit$L), ignore_attr = TRUE)
  expect_equal(as.character(predict(fit, iris[c(1, 51, 101), ])),
               c("setosa", "versicolor", "virginica"))
  expect_output(print(fit), "DNE")
})

test_that("tiny classes: one warning naming them; a singleton class works", {
  set.seed(7)
  x <- matrix(rnorm(30 * 3), 30)
  y <- factor(c(rep("big", 27), "pair", "pair", "one"))
  expect_warning(
    fit <- dne(x, y, k = 3),
    "`y`: classes 'one' (1 member), 'pair' (2 members) have fewer than k + 1 = 4 members; their points use as many same-class neighbours as each class allows (none for a singleton).",
    fixed = TRUE)
  expect_true(all(is.na(fit$targets$same[30, ])))
  expect_identical(sum(!is.na(fit$targets$same[28, ])), 1L)
  expect_true(all(is.finite(fit$L)))
  y1 <- factor(c(rep("big", 29), "one"))
  expect_warning(dne(x, y1, k = 2),
                 "`y`: class 'one' (1 member) has fewer than k + 1 = 3 members; its points use as many same-class neighbours as the class allows (none for a singleton).",
                 fixed = TRUE)
  expect_silent(dne(x, rep(1:2, 15), k = 3))
})

test_that("DNE beats or equals Euclidean 1-NN under the paper protocol", {
  protocol <- function(x, y, n_train, splits = 5) {
    x <- as.matrix(x)
    y <- droplevels(as.factor(y))
    r <- vapply(seq_len(splits), function(s) {
      set.seed(100 + s)
      tr <- sample(nrow(x), n_train)
      fit <- dne(x[tr, ], y[tr], k = 3)
      pr <- fit_scaling(x[tr, ])
      eu <- knn_classify(apply_scaling(x[tr, ], pr), y[tr],
                         apply_scaling(x[-tr, ], pr), k = 1)$class
      c(mean(predict(fit, x[-tr, ]) == y[-tr]), mean(eu == y[-tr]))
    }, numeric(2))
    rowMeans(r)
  }
  a <- protocol(iris[, 1:4], iris$Species, 100)
  expect_gte(a[1], a[2])
  expect_gt(a[1], 0.9)
  skip_if_not_installed("mlbench")
  e <- new.env()
  utils::data("Vehicle", package = "mlbench", envir = e)
  v <- protocol(e$Vehicle[, 1:18], e$Vehicle$Class, 200)
  expect_gt(v[1], v[2])
})

test_that("bad input gives clear errors", {
  d <- make_data()
  expect_error(dne(d$x, d$y, k = 0), "`k` must be a single whole number >= 1.",
               fixed = TRUE)
  expect_error(dne(d$x, d$y, dim = 6),
               "`dim` (6) must not exceed the number of input columns of `x` (5).",
               fixed = TRUE)
  expect_error(dne(d$x, d$y, lambda = -1), "`lambda` must be non-negative",
               fixed = TRUE)
  expect_error(dne(d$x, d$y, scale = NA), "`scale` must be TRUE or FALSE.",
               fixed = TRUE)
  expect_error(dne(d$x, d$y[-1]), "`y` has length 59 but `x` has 60 rows",
               fixed = TRUE)
  expect_error(dne(d$x, rep("a", 60)), "`y` has only 1 class", fixed = TRUE)
  expect_error(dne(d$x, d$y, kk = 3), "Unknown argument(s) to dne(): 'kk'.", fixed = TRUE)
  tg <- dne(d$x, d$y)$targets
  expect_error(dne(d$x, d$y, targets = tg$same),
               "`targets` must be a list with components `same` and `other`",
               fixed = TRUE)
  bad <- tg
  bad$same <- bad$same[-1, ]
  expect_error(dne(d$x, d$y, targets = bad),
               "`targets$same` has 59 rows but there are 60 observations",
               fixed = TRUE)
  bad <- tg
  bad$other[1, 1] <- 61L
  expect_error(dne(d$x, d$y, targets = bad),
               "`targets$other` must hold row numbers between 1 and 60 (or NA).",
               fixed = TRUE)
  bad <- tg
  bad$same[2, 1] <- 2L
  expect_error(dne(d$x, d$y, targets = bad),
               "`targets$same` lists row 2 as its own neighbour; neighbours must be other rows.",
               fixed = TRUE)
  bad <- tg
  bad$same[3, 1] <- tg$other[3, 1]
  expect_error(dne(d$x, d$y, targets = bad),
               "`targets$same` row 3 lists a point of another class",
               fixed = TRUE)
  bad <- tg
  bad$other[4, 2] <- tg$same[4, 1]
  expect_error(dne(d$x, d$y, targets = bad),
               "`targets$other` row 4 lists a point of the same class",
               fixed = TRUE)
  bad <- tg
  bad$same <- matrix("1", 60, 1)
  expect_error(dne(d$x, d$y, targets = bad),
               "`targets$same` must be an integer matrix", fixed = TRUE)
  expect_error(dne(Species ~ ., data = iris, dim = 0),
               "`dim` must be a single whole number >= 1.", fixed = TRUE)
})

test_that("targets without a single neighbour are an error, as for lmnn()", {
  d <- make_data(n = 30)
  none <- list(same = matrix(NA_integer_, 30, 2), other = matrix(NA_integer_, 30, 2))
  msg <- "`targets` lists no neighbour at all (`targets$same` and `targets$other` are all NA): the graph has no edge, so there is nothing to learn."
  expect_error(dne(d$x, d$y, targets = none), msg, fixed = TRUE)
  expect_error(kdne(d$x, d$y, targets = none), msg, fixed = TRUE)
  expect_error(lmnn(d$x, d$y, targets = none$same),
               "`targets` lists no neighbour at all (all NA).", fixed = TRUE)
  # one kind of neighbour is enough
  only_other <- none
  only_other$other[1, 1] <- which(d$y != d$y[1])[1]
  expect_silent(dne(d$x, d$y, targets = only_other))
})

# p > n: plain-R references (dense D x D scatter, explicit leave-one-out
# projections) for the span solution and the dimension rule.
pn_data <- function(n, p, seed, signal = 1) {
  set.seed(seed)
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- matrix(rnorm(n * p), n)
  x[, 1:5] <- x[, 1:5] + signal * as.integer(y)
  list(x = x, y = y)
}

test_that("p > n: the span solution equals the full eigenproblem", {
  d <- pn_data(12, 30, seed = 21)
  xs <- scale(d$x)
  for (lam in c(0, 0.7)) {
    fit <- dne(d$x, d$y, k = 2, lambda = lam)
    W <- ref_W(ref_neighbors(xs, d$y, 2), nrow(xs))
    S <- t(xs) %*% (diag(rowSums(W)) - W) %*% xs
    e <- eigen(S, symmetric = TRUE)
    ev <- rev(e$values)
    expect_null(fit$scatter)
    expect_match(fit$convergence$message, "in the 11-dimensional span of the centred training points",
                 fixed = TRUE)
    # all D eigenvalues, the D - 11 outside the span exactly lambda
    expect_equal(fit$eigenvalues, ev + lam, tolerance = 1e-9)
    expect_identical(sum(fit$eigenvalues == lam), 30L - 11L)
    for (dd in c(1L, 3L, 6L, 11L, 19L, 25L, 30L)) {
      f <- dne(d$x, d$y, k = 2, dim = dd, lambda = lam)
      A <- f$L
      expect_equal(A %*% t(A), diag(dd), tolerance = 1e-10, ignore_attr = TRUE)
      # the same objective: the sum of the dd smallest eigenvalues of S
      expect_equal(sum(diag(A %*% S %*% t(A))), sum(ev[seq_len(dd)]), tolerance = 1e-9)
      expect_equal(f$convergence$objective, sum(ev[seq_len(dd)]) + lam * dd, tolerance = 1e-9)
      # and the same subspace where the eigenvalues are separated
      if (dd < 30 && ev[dd + 1] - ev[dd] > 1e-6 * max(abs(ev))) {
        V <- e$vectors[, 30:1][, seq_len(dd), drop = FALSE]
        expect_equal(crossprod(A), V %*% t(V), tolerance = 1e-8, ignore_attr = TRUE)
      }
    }
  }
  # D = n - 1 takes the same path and agrees with the reference too
  d2 <- pn_data(12, 11, seed = 22)
  f2 <- dne(d2$x, d2$y, k = 2, dim = 4)
  xs2 <- scale(d2$x)
  W2 <- ref_W(ref_neighbors(xs2, d2$y, 2), 12)
  S2 <- t(xs2) %*% (diag(rowSums(W2)) - W2) %*% xs2
  expect_equal(f2$eigenvalues, sort(eigen(S2, symmetric = TRUE)$values), tolerance = 1e-9)
  expect_equal(f2$convergence$objective, sum(sort(eigen(S2, symmetric = TRUE)$values)[1:4]),
               tolerance = 1e-9)
})

test_that("exact KPCA coordinates: the span read off the axes equals the general span", {
  # kmaha(learner = "dne") on exact KPCA coordinates with rank n - 1 skips
  # the eigen-decomposition of the span (principal = TRUE); the eigenvalues,
  # the automatic dimension, the retention and the learned distances must
  # be those of the general path.
  d <- pn_data(40, 5, seed = 23)
  kp <- kpca(d$x, kernel = rbf_kernel(sigma = 0.5))
  z <- kp$coords
  expect_gte(ncol(z), nrow(z) - 1L)
  ctx <- test_ctx()
  tg <- kmaha:::core_dne_neighbors(z, as.integer(d$y), 3L, FALSE, ctx)
  for (dd in c(0L, 4L)) {
    a <- kmaha:::core_dne_fit(z, tg$same, tg$other, dd, 0.3, ctx, principal = FALSE)
    b <- kmaha:::core_dne_fit(z, tg$same, tg$other, dd, 0.3, ctx, principal = TRUE)
    expect_identical(b$dim, a$dim)
    expect_identical(b$span_rank, a$span_rank)
    expect_equal(b$eigenvalues, a$eigenvalues, tolerance = 1e-9)
    expect_equal(b$retention, a$retention, tolerance = 1e-9)
    expect_equal(as.matrix(dist(z %*% t(b$A))), as.matrix(dist(z %*% t(a$A))),
                 tolerance = 1e-8)
  }
  # a fit through kmaha() on such coordinates solves in the span too
  m <- kmaha(d$x, d$y, kernel = rbf_kernel(sigma = 0.5), learner = "dne")
  expect_match(m$convergence$message, "span of the centred training points", fixed = TRUE)
})

test_that("the automatic dimension counts the negative eigenvalues beyond (1 - retention) x the largest", {
  # ordinary data (affinely dependent points): retention 1, every negative
  d <- make_data(n = 90, seed = 4)
  fit <- dne(d$x, d$y, k = 3)
  expect_identical(fit$retention, 1)
  expect_identical(nrow(fit$L), fit$n_negative)
  # p > n: the retention of plain R's leave-one-out projections
  for (s in 1:3) {
    d <- pn_data(15, 60, seed = 30 + s, signal = 0.5)
    fit <- dne(d$x, d$y, k = 2)
    rho <- ref_retention(scale(d$x))
    expect_equal(fit$retention, rho, tolerance = 1e-8)
    expect_gt(rho, 0)
    expect_lt(rho, 1)
    ev <- fit$eigenvalues
    want <- max(1L, sum(ev < -(1 - rho) * max(ev)))
    expect_identical(nrow(fit$L), want)
    expect_lt(nrow(fit$L), fit$n_negative)
    expect_identical(fit$n_negative, sum(ev < -1e-9 * max(abs(ev))))
    expect_identical(fit$settings$dim_rule, "negative eigenvalues below -(1 - retention) x the largest")
  }
})

test_that("p >> n: DNE and KDNE are not collapsed (1-NN near Euclidean or better)", {
  gen <- function(n, seed) {
    set.seed(seed)
    y <- factor(rep(c("a", "b"), length.out = n))
    x <- matrix(rnorm(n * 3000), n)
    x[, 1:20] <- x[, 1:20] + 0.8 * (2 * as.integer(y) - 3)
    list(x = x, y = y)
  }
  tr <- gen(40, 1)
  te <- gen(300, 2)
  xs <- scale(tr$x)
  xt <- scale(te$x, attr(xs, "scaled:center"), attr(xs, "scaled:scale"))
  euclid <- mean(knn_classify(xs, tr$y, xt)$class == te$y)
  fd <- dne(tr$x, tr$y)
  pd <- predict(fd, te$x)
  fk <- kdne(tr$x, tr$y)
  pk <- predict(fk, te$x)
  expect_gte(mean(pd == te$y), euclid - 0.05)
  expect_gte(mean(pk == te$y), euclid - 0.05)
  # both classes are predicted, in fair shares
  expect_gt(min(table(pd)) / length(pd), 0.25)
  expect_gt(min(table(pk)) / length(pk), 0.25)
  # the retention shows the p >> n regime; the negative eigenvalues that
  # the graph alone produces are not all kept
  expect_lt(fd$retention, 0.1)
  expect_lt(fk$retention, 0.1)
  expect_lt(nrow(fd$L), fd$n_negative)
  expect_lt(nrow(fk$L), fk$n_negative)
})
