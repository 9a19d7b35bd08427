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
  # (reg = 0; to 1e-6: the fit whitens S_lw + 1e-8 trace(S_lw) I)
  d <- lfda_data(seed = 2)
  ref <- ref_lfda(d$x, d$y, 7)
  w <- lfda(d$x, d$y, scale = FALSE, reg = 0)
  expect_equal(w$eigenvalues, ref$values, tolerance = 1e-6)
  # weighted: L'L = V diag(lambda) V' over all five directions
  M_ref <- ref$vectors %*% diag(ref$values) %*% t(ref$vectors)
  expect_equal(unname(crossprod(w$L)), M_ref, tolerance = 1e-6)
  for (dd in 1:3) {
    p <- lfda(d$x, d$y, dim = dd, metric = "plain", scale = FALSE, reg = 0)
    o <- lfda(d$x, d$y, dim = dd, metric = "orthonormalized", scale = FALSE, reg = 0)
    wd <- lfda(d$x, d$y, dim = dd, scale = FALSE, reg = 0)
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
  ours <- lfda(d$x, d$y, dim = 2, k = 5, metric = "orthonormalized", scale = FALSE,
               reg = 0)
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

# --------------------------------------------------------------------------
# The total-scatter ridge `reg` (klfda's regularizer).

# Kernel LFDA by the kernel trick, in plain R on the n x n centred kernel
# matrix Kc (independent of the KPCA coordinates): a direction
# w = sum_i alpha_i phi_c(x_i) has w' S w = alpha' Kc L Kc alpha for a
# Laplacian form S = Phi_c' L Phi_c, |w|^2 = alpha' Kc alpha, and the ridge
# reg s^2 |alpha|^2 (s = trace(Kc) / n); the weighted embedding of the
# training points is Kc alpha sqrt(lambda), alpha normalized by the
# denominator.
ref_kernel_lfda <- function(K, y, k, reg, rho, dim) {
  n <- nrow(K)
  H <- diag(n) - 1 / n
  Kc <- H %*% K %*% H
  d2 <- outer(diag(K), diag(K), "+") - 2 * K
  sigma <- numeric(n)
  for (cl in unique(y)) {
    i <- which(y == cl)
    kk <- min(k, length(i) - 1L)
    sigma[i] <- sqrt(apply(d2[i, i, drop = FALSE], 1, function(r) sort(r)[kk + 1L]))
  }
  A <- exp(-d2 / outer(sigma, sigma))
  nc <- table(y)[as.character(y)]
  same <- outer(as.character(y), as.character(y), "==")
  Wlw <- ifelse(same, A / outer(nc, rep(1, n)), 0)
  Wlb <- ifelse(same, A * (1 / n - 1 / outer(nc, rep(1, n))), 1 / n)
  lap <- function(W) diag(rowSums(W)) - W
  s <- sum(diag(Kc)) / n
  num <- Kc %*% lap(Wlb) %*% Kc
  den <- Kc %*% lap(Wlw) %*% Kc + rho * Kc + reg * s^2 * diag(n)
  Ri <- backsolve(chol((den + t(den)) / 2), diag(n))
  e <- eigen(crossprod(Ri, num %*% Ri), symmetric = TRUE)
  alpha <- Ri %*% e$vectors[, seq_len(dim), drop = FALSE]
  list(values = e$values, embedding = sweep(Kc %*% alpha, 2, sqrt(e$values[seq_len(dim)]), "*"))
}

# columns of a to the signs of b's
align <- function(a, b) sweep(a, 2, sign(colSums(a * b)), "*")

test_that("on KPCA coordinates, reg is klfda's ridge: the kernel trick in plain R agrees", {
  d <- lfda_data(n = 45, seed = 11)
  xs <- scale(d$x)
  attributes(xs)[c("scaled:center", "scaled:scale")] <- NULL
  for (sg in c(0.5, 2)) {
    kern <- rbf_kernel(sg)
    K <- kernel_matrix(kern, xs)
    fit <- kmaha(xs, d$y, learner = "lfda", kernel = kern, scale = FALSE,
                 learner_args = list(dim = 4, reg = 1e-3))
    expect_identical(fit$reg, 1e-3)
    ref <- ref_kernel_lfda(K, d$y, 7L, 1e-3, fit$ridge, 4L)
    expect_equal(fit$eigenvalues[1:4], ref$values[1:4], tolerance = 1e-7)
    expect_equal(unname(align(fit$embedding, ref$embedding)), ref$embedding, tolerance = 1e-6)
    # reg = 0 is a different map (the ridge matters here)
    fit0 <- kmaha(xs, d$y, learner = "lfda", kernel = kern, scale = FALSE,
                  learner_args = list(dim = 4, reg = 0))
    expect_gt(max(abs(fit0$eigenvalues[1:4] - ref$values[1:4]) / ref$values[1:4]), 0.1)
  }
})

test_that("reg = 0 reproduces the maps of 0.6.0 (no ridge) exactly", {
  # values from kmaha 0.6.0, before `reg` existed
  d <- lfda_data(n = 30, seed = 7)
  f <- lfda(d$x, d$y, dim = 2, scale = FALSE, reg = 0)
  expect_equal(unname(f$L), matrix(c(
    0.083552995620934281, 0.20081049447361421, 0.17361440248920001,
    -0.1740497965394161, 0.017351408924474874, -0.028927594783839005,
    -0.036888354965569622, 0.0008444722254781588, -0.0030037175397393339,
    -0.076880024826616836), 2), tolerance = 1e-10)
  expect_equal(f$eigenvalues, c(2.1933521862494167, 1.1395763226373754, 0.98076200557737514,
                                0.73021101497583962, 0.59703312295877664), tolerance = 1e-10)
  expect_identical(f$reg_weight, 0)
  # the span path (p > n), with a given ridge rho
  set.seed(8)
  n <- 12L
  y <- factor(rep(c("a", "b"), each = n / 2))
  x <- matrix(rnorm(n * 15), n) + 0.8 * outer(as.integer(y), rnorm(15))
  ctx <- kmaha:::kmaha_context()
  s <- kmaha:::core_lfda_fit(x, as.integer(y), 2L, 7L, "weighted", ctx, ridge = 1e-3, reg = 0)
  expect_identical(s$span_rank, n - 1L)
  expect_equal(s$L, matrix(c(
    -2140.29176172607, -0.12118489656878541, 796.6007109051227,
    0.0083198366996332131, 127.6060434254661, -0.013897759452479725,
    -1950.8103239950185, -0.17891574561869597, 1832.1930480606904,
    -0.021368487069695512, 49.791762172449857, -0.10137724727825632,
    1224.5846211567716, -0.013297667046855553, 302.22086405882737,
    -0.098893053968091282, 2203.9241467251541, 0.28939018419343643,
    -588.79219636183211, 0.0039641837497298021, 827.79779409234413,
    -0.014463593899788723, 30.1869165780553, 0.022865121734653656,
    -1470.7958419118345, -0.044193941665995579, -1484.4424028507376,
    -0.067566143391795813, 1192.7077425360569, -0.018706509422202779), 2),
    tolerance = 1e-7)
  expect_equal(s$eigenvalues[1:3], c(25675.809782648874, 0.72955887452420676, 0.65161939519300671),
               tolerance = 1e-7)
})

test_that("the ridge is reg s^2 S_t^+, the same in the span as on all columns", {
  d <- lfda_data(n = 40, seed = 12)
  x <- d$x
  ctx <- kmaha:::kmaha_context()
  f <- kmaha:::core_lfda_fit(x, as.integer(d$y), 0L, 7L, "plain", ctx, reg = 0.05)
  xc <- sweep(x, 2, colMeans(x))
  St <- crossprod(xc)
  s <- sum(diag(St)) / nrow(x)
  expect_equal(f$reg_weight, 0.05 * s^2, tolerance = 1e-12)
  # plain: V' (S_lw + rho I + reg s^2 St^-1) V = I and S_lb V = S_w V diag(lambda)
  Sw <- f$Slw + f$ridge * diag(5) + 0.05 * s^2 * solve(St)
  V <- t(f$L)
  expect_equal(crossprod(V, Sw %*% V), diag(5), tolerance = 1e-8)
  expect_equal(unname(f$Slb %*% V), unname(Sw %*% V %*% diag(f$eigenvalues)), tolerance = 1e-8)
  # p > n: span and full paths agree with the ridge (S_t^+ a pseudo-inverse)
  set.seed(4)
  n <- 24L
  y <- factor(rep(c("a", "b"), each = n / 2))
  x <- matrix(rnorm(n * 40), n) + 0.8 * outer(as.integer(y), rnorm(40))
  sp <- kmaha:::core_lfda_fit(x, as.integer(y), 4L, 7L, "weighted", ctx, span = TRUE, reg = 1e-3)
  fu <- kmaha:::core_lfda_fit(x, as.integer(y), 4L, 7L, "weighted", ctx, span = FALSE, reg = 1e-3)
  expect_equal(sp$reg_weight, fu$reg_weight, tolerance = 1e-10)
  expect_equal(sp$eigenvalues[1:4], fu$eigenvalues[1:4], tolerance = 1e-7)
  expect_equal(sp$L, fu$L, tolerance = 1e-6)
  # the ridge bounds the eigenvalue of the null direction of S_lw
  s0 <- kmaha:::core_lfda_fit(x, as.integer(y), 4L, 7L, "weighted", ctx, reg = 0)
  expect_gt(s0$eigenvalues[1], 1e3 * sp$eigenvalues[1])
})

test_that("reg is scale-free: the map of c x is the map of x divided by c", {
  for (case in c("p < n", "p > n")) {
    if (case == "p < n") {
      d <- lfda_data(n = 40, seed = 13)
      x <- d$x
      y <- d$y
    } else {
      set.seed(14)
      y <- factor(rep(c("a", "b", "c"), each = 8))
      x <- matrix(rnorm(24 * 30), 24) + outer(as.integer(y), rnorm(30))
    }
    a <- lfda(x, y, scale = FALSE, reg = 0.01)
    for (cc in c(1e-3, 50)) {
      b <- lfda(cc * x, y, scale = FALSE, reg = 0.01)
      expect_equal(b$eigenvalues, a$eigenvalues, tolerance = 1e-7)
      expect_equal(b$L, a$L / cc, tolerance = 1e-6)
      expect_equal(b$embedding, a$embedding, tolerance = 1e-6)
    }
    # the ridge changes the map here (so the property is not vacuous)
    z <- lfda(x, y, scale = FALSE, reg = 0)
    expect_gt(max(abs(z$eigenvalues - a$eigenvalues) / a$eigenvalues[1]), 1e-3)
  }
})

test_that("reg: bad values are errors naming the argument; the fit records it", {
  d <- lfda_data()
  expect_error(lfda(d$x, d$y, reg = -1), "`reg` must be non-negative, not -1.", fixed = TRUE)
  for (bad in list(NA, Inf, "a", c(1e-3, 1e-2), NULL)) {
    expect_error(lfda(d$x, d$y, reg = bad), "`reg` must be a single finite number.", fixed = TRUE)
  }
  expect_error(kmaha(d$x, d$y, learner = "lfda", learner_args = list(reg = -0.5)),
               "`learner_args$reg` must be non-negative, not -0.5.", fixed = TRUE)
  fit <- lfda(d$x, d$y, dim = 2)
  expect_identical(fit$settings$reg, 1e-3)
  expect_identical(fit$reg, 1e-3)
  expect_true(any(grepl("metric = weighted, reg = 0.001, scale = TRUE",
                        capture.output(print(summary(fit))), fixed = TRUE)))
  # through kmaha(): the fit records it, and it reaches the core
  f2 <- kmaha(d$x, d$y, learner = "lfda", kernel = "linear", learner_args = list(reg = 0.1, dim = 2))
  expect_identical(f2$reg, 0.1)
  expect_match(f2$convergence$message, "S_t^+", fixed = TRUE)
  f3 <- kmaha(d$x, d$y, learner = "lfda", kernel = "linear", learner_args = list(reg = 0, dim = 2))
  expect_false(isTRUE(all.equal(f2$L, f3$L)))
})
