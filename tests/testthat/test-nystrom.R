# Nystrom KPCA: reduction to exact KPCA when every training point is a
# landmark, the projection property on the landmark span, predict(), the
# residual, kernel k-means++ against a plain-R implementation, input
# validation, and bounded memory at a size where an n x n matrix cannot fit.

x_nys <- scale(as.matrix(iris[, 1:4]))

test_that("with every training point as a landmark Nystrom equals exact KPCA", {
  for (k in list(rbf_kernel(0.5), poly_kernel(2, offset = 1), laplace_kernel(3))) {
    ex <- kpca(x_nys, k, tol = 1e-10)
    ny <- kpca(x_nys, k, tol = 1e-10, landmarks = x_nys, rank = nrow(x_nys))
    expect_identical(ny$method, "nystrom")
    # coordinates agree up to rotations within eigenspaces: compare Gram
    # matrices and distances of the coordinates
    g_ex <- tcrossprod(ex$coords)
    expect_lt(max(abs(tcrossprod(ny$coords) - g_ex)) / max(abs(g_ex)), 1e-6)
    d_ex <- as.matrix(stats::dist(ex$coords))
    expect_lt(max(abs(as.matrix(stats::dist(ny$coords)) - d_ex)) / max(d_ex), 1e-6)
    m <- min(length(ex$eigenvalues), length(ny$eigenvalues), 20)
    expect_equal(ny$eigenvalues[1:m], ex$eigenvalues[1:m], tolerance = 1e-6)
    expect_lt(ny$residual, 1e-6 * mean(diag(kernel_matrix(k, x_nys))))
  }
  # landmarks = n draws all rows: the same fit up to rotation
  set.seed(3)
  ny_n <- kpca(x_nys, rbf_kernel(0.5), tol = 1e-10, landmarks = nrow(x_nys), rank = nrow(x_nys))
  expect_setequal(ny_n$landmark_index, seq_len(nrow(x_nys)))
  g <- tcrossprod(kpca(x_nys, rbf_kernel(0.5), tol = 1e-10)$coords)
  expect_lt(max(abs(tcrossprod(ny_n$coords) - g)) / max(abs(g)), 1e-6)
})

test_that("Nystrom distances are those of the projection onto the landmark span", {
  k <- rbf_kernel(1)
  set.seed(7)
  ny <- kpca(x_nys, k, landmarks = 25, rank = 25, tol = 1e-12)
  idx <- ny$landmark_index
  K <- kernel_matrix(k, x_nys)
  # explicit projection: f(x) = W^{-1/2} c(x), independent of the C++ path
  W <- K[idx, idx]
  e <- eigen(W, symmetric = TRUE)
  keep <- e$values > 1e-12 * e$values[1]
  Tm <- e$vectors[, keep] %*% diag(1 / sqrt(e$values[keep]))
  Fx <- K[, idx] %*% Tm
  d_ref <- as.matrix(stats::dist(Fx))
  expect_lt(max(abs(as.matrix(stats::dist(ny$coords)) - d_ref)), 1e-6 * max(d_ref))
  # never longer than in feature space, and equal between landmarks
  fd <- sqrt(pmax(outer(diag(K), diag(K), "+") - 2 * K, 0))
  dn <- as.matrix(stats::dist(ny$coords))
  expect_true(all(dn <= fd + 1e-8))
  expect_lt(max(abs(dn[idx, idx] - fd[idx, idx])), 1e-6)
  # residual: mean squared distance of phi(x_i) to the span
  expect_equal(ny$residual, mean(diag(K) - rowSums(Fx^2)), tolerance = 1e-8)
  # the trace is the variance of the features
  expect_equal(ny$trace, sum(scale(Fx, scale = FALSE)^2), tolerance = 1e-8)
})

test_that("predict() reproduces the training coordinates and projects new points", {
  set.seed(2)
  tr <- sample(150, 100)
  ny <- kpca(x_nys[tr, ], rbf_kernel(1), landmarks = 30, rank = 10)
  expect_equal(dim(ny$coords), c(100L, 10L))
  expect_equal(predict(ny, x_nys[tr, ]), ny$coords, tolerance = 1e-10)
  expect_identical(predict(ny), ny$coords)
  z <- predict(ny, x_nys[-tr, ])
  expect_equal(dim(z), c(50L, 10L))
  expect_equal(colnames(z), paste0("PC", 1:10))
  # a data frame of landmark points is accepted and used as given
  lm <- as.data.frame(x_nys[c(1, 60, 120, 140), ])
  ny2 <- kpca(x_nys, rbf_kernel(1), landmarks = lm)
  expect_null(ny2$landmark_index)
  expect_identical(ny2$landmark_method, "given")
  expect_equal(unname(ny2$landmarks), unname(as.matrix(lm)))
  expect_lte(ny2$rank, 4L)
  expect_equal(predict(ny2, x_nys), ny2$coords, tolerance = 1e-10)
  # saveRDS/readRDS round trip
  f <- tempfile(fileext = ".rds")
  saveRDS(ny, f)
  expect_equal(predict(readRDS(f), x_nys[-tr, ]), z)
  expect_output(print(ny), "landmarks: 30 \\(random\\)")
})

test_that("kernel k-means++ landmarks match a plain-R D^2 sampler", {
  k <- rbf_kernel(0.7)
  m <- 12
  set.seed(42)
  ny <- kpca(x_nys, k, landmarks = m, landmark_method = "kmeans++")
  set.seed(42)
  again <- kpca(x_nys, k, landmarks = m, landmark_method = "kmeans++")
  expect_identical(again$landmark_index, ny$landmark_index)
  # the same draws in plain R
  set.seed(42)
  u <- stats::runif(m)
  K <- kernel_matrix(k, x_nys)
  n <- nrow(K)
  idx <- integer(m)
  idx[1] <- as.integer(floor(u[1] * n)) + 1L
  dmin <- pmax(diag(K) + K[idx[1], idx[1]] - 2 * K[, idx[1]], 0)
  dmin[idx[1]] <- 0
  for (t in 2:m) {
    cum <- cumsum(dmin)
    idx[t] <- which(cum > u[t] * sum(dmin))[1]
    dmin <- pmin(dmin, pmax(diag(K) + K[idx[t], idx[t]] - 2 * K[, idx[t]], 0))
    dmin[idx[t]] <- 0
  }
  expect_identical(ny$landmark_index, idx)
  expect_identical(anyDuplicated(idx), 0L)
  expect_identical(ny$landmark_method, "kmeans++")
})

test_that("bad Nystrom arguments give exact errors", {
  expect_error(kpca(x_nys, method = "nystrom"),
               "`method = \"nystrom\"` needs `landmarks`: a number of landmark points (e.g. 500) or a matrix of landmark points.",
               fixed = TRUE)
  expect_error(kpca(x_nys, method = "full", landmarks = 10),
               "`landmarks` is used only by the Nystrom method: use method = \"nystrom\" or \"auto\", not \"full\".",
               fixed = TRUE)
  msg <- "`landmarks` must be a number of landmark points between 2 and the number of rows of `x` (150), or a numeric matrix of landmark points."
  expect_error(kpca(x_nys, landmarks = 1), msg, fixed = TRUE)
  expect_error(kpca(x_nys, landmarks = 151), msg, fixed = TRUE)
  expect_error(kpca(x_nys, landmarks = 2.5), msg, fixed = TRUE)
  expect_error(kpca(x_nys, landmarks = "ten"), msg, fixed = TRUE)
  expect_error(kpca(x_nys, landmarks = x_nys[, 1:3]),
               "`landmarks` has 3 columns but `x` has 4; landmark points need the columns of `x`.",
               fixed = TRUE)
  expect_error(kpca(x_nys, landmarks = x_nys[1, , drop = FALSE]),
               "`landmarks` must hold at least 2 landmark points (rows).", fixed = TRUE)
  expect_error(kpca(x_nys, landmarks = x_nys[1:5, 4:1]),
               "`landmarks` must have the columns of `x` in the same order.", fixed = TRUE)
  bad <- x_nys[1:5, ]
  bad[2, 2] <- NA
  expect_error(kpca(x_nys, landmarks = bad), "`landmarks` contains missing values",
               fixed = TRUE)
  expect_error(kpca(x_nys, landmarks = 10, landmark_method = "greedy"),
               "`landmark_method` must be one of \"random\", \"kmeans++\".", fixed = TRUE)
})

test_that("kmaha() with every training point as a landmark predicts as exact kmaha()", {
  set.seed(4)
  idx <- c(sample(50, 20), 50 + sample(50, 20), 100 + sample(50, 20))
  x <- as.matrix(iris[idx, 1:4])
  y <- iris$Species[idx]
  ex <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(1), tol = 1e-10)
  ny <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(1), tol = 1e-10,
              landmarks = x, rank = nrow(x))
  expect_identical(ny$feature_map$type, "nystrom")
  expect_identical(ny$targets, ex$targets)
  newx <- as.matrix(iris[-idx, 1:4])
  expect_identical(predict(ny, newx), predict(ex, newx))
  # DNE's embedding is the same up to the signs of its axes
  e1 <- predict(ex, newx, type = "transform")
  e2 <- predict(ny, newx, type = "transform")
  expect_equal(abs(e2), abs(e1), tolerance = 1e-5, ignore_attr = TRUE)
  # a number of landmarks, kmeans++: reproducible, predicts new data
  set.seed(9)
  f1 <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(1), landmarks = 15,
              landmark_method = "kmeans++")
  set.seed(9)
  f2 <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(1), landmarks = 15,
              landmark_method = "kmeans++")
  expect_identical(f1$feature_map$landmark_index, f2$feature_map$landmark_index)
  expect_identical(f1$settings$landmarks, 15L)
  expect_gt(mean(predict(f1, newx) == iris$Species[-idx]), 0.8)
  expect_error(kmaha(x, y, kernel = rbf_kernel(1), landmarks = x[, 1:2]),
               "`landmarks` has 2 columns but `x` has 4; landmark points need the columns of `x`.",
               fixed = TRUE)
})

test_that("align_kernels(landmarks = m) aligns on m rows drawn within classes", {
  x <- scale(as.matrix(iris[, 1:4]))
  y <- iris$Species
  kern <- lapply(c(0.3, 1, 3), rbf_kernel)
  set.seed(12)
  al <- align_kernels(x, y, kern, landmarks = 31)
  expect_length(al$rows, 31L)
  expect_identical(anyDuplicated(al$rows), 0L)
  # 31 rows in proportion to three classes of 50: 10, 10, 11 (largest remainder)
  expect_setequal(as.vector(table(y[al$rows])), c(10L, 10L, 11L))
  ref <- align_kernels(x[al$rows, ], y[al$rows], kern)
  expect_equal(al$weights, ref$weights)
  expect_equal(al$alignment, ref$alignment)
  expect_null(align_kernels(x, y, kern)$rows)
  expect_null(align_kernels(x, y, kern, landmarks = 500)$rows)
  expect_error(align_kernels(x, y, kern, landmarks = 1),
               "`landmarks` must be NULL or a number of rows (a whole number >= 2) on which to compute the alignment.",
               fixed = TRUE)
})

test_that("cv_kernel() with landmarks runs Nystrom KPCA in every fold", {
  x <- scale(as.matrix(iris[, 1:4]))
  y <- iris$Species
  cv <- cv_kernel(x, y, "dne", lapply(c(0.5, 2), rbf_kernel), folds = 3,
                  seed = 3, landmarks = 25)
  expect_identical(nrow(cv$errors), 0L)
  expect_true(all(cv$accuracy > 0.8))
  # more landmarks than a fold's training rows: every fit fails, clearly
  expect_error(cv_kernel(x, y, "dne", list(rbf_kernel(1)), folds = 3, seed = 3,
                         landmarks = 120),
               "`landmarks` must be a number of landmark points between 2 and the number of rows of `x` (100)",
               fixed = TRUE)
})

test_that("Nystrom's default rank keeps every component above tol", {
  set.seed(31)
  x <- matrix(rnorm(400 * 5), 400)
  k <- rbf_kernel(2)
  set.seed(5)
  lm_pts <- x[sample(400, 60), ]
  def <- kpca(x, k, landmarks = lm_pts)
  ref <- kpca(x, k, landmarks = lm_pts, rank = 60)
  expect_identical(ref$rank_rule, "given")
  expect_identical(def$rank_rule, "every component above tol")
  expect_output(print(def), "components: every component above tol", fixed = TRUE)
  expect_identical(def$rank, ref$rank)
  expect_equal(def$eigenvalues, ref$eigenvalues, tolerance = 1e-10)
  expect_equal(abs(unname(def$coords)), abs(unname(ref$coords)), tolerance = 1e-8)
  # every eigenvalue kept is above tol times the largest, and only those are
  # dropped: a smaller tol keeps at least as many
  expect_true(all(def$eigenvalues > 1e-8 * def$eigenvalues[1]))
  expect_gte(kpca(x, k, landmarks = lm_pts, tol = 1e-12)$rank, def$rank)
  # with a spread-out kernel, more than 0.4.0's cap of 200 components
  rough <- kpca(x, rbf_kernel(0.05), landmarks = 300)
  expect_gt(rough$rank, 200L)
  expect_identical(rough$rank, kpca(x, rbf_kernel(0.05), landmarks = rough$landmarks,
                                    rank = 300)$rank)
  # kmaha() with landmarks uses the same rule
  y <- factor(ifelse(x[, 1] > 0, "p", "q"))
  f <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(2), landmarks = lm_pts, scale = FALSE)
  expect_identical(ncol(f$L), def$rank)
  # more landmark points than rows: at most as many components as rows
  few <- kpca(x[1:30, ], k, landmarks = x[1:80, ])
  expect_lte(few$rank, 30L)
})

test_that("the default rank keeps the low-variance direction that separates two thin rings", {
  # Two concentric rings, radii 1 and 1.15: with a wide kernel the radius
  # lies in components of little variance, which 0.4.0's default (95% of
  # the landmark-span variance) dropped.
  set.seed(8)
  ring <- function(n) {
    t <- runif(n, 0, 2 * pi)
    cls <- rep(1:2, length.out = n)
    r <- c(1, 1.15)[cls]
    list(x = cbind(r * cos(t), r * sin(t)) + matrix(rnorm(2 * n, sd = 0.02), n, 2),
         y = factor(c("inner", "outer")[cls]))
  }
  tr <- ring(400)
  te <- ring(1000)
  lm_pts <- tr$x[sample(400, 100), ]
  fit <- function(rank) {
    kmaha(tr$x, tr$y, learner = "dne", kernel = rbf_kernel(1), landmarks = lm_pts,
          rank = rank)
  }
  acc <- function(f) mean(predict(f, te$x) == te$y)
  def <- fit(NULL)
  all <- fit(100)
  expect_identical(ncol(def$L), ncol(all$L))
  expect_identical(acc(def), acc(all))
  # the 95% rule keeps a few components and loses the rings
  kp <- kpca(scale(tr$x), rbf_kernel(1),
             landmarks = scale(lm_pts, attr(scale(tr$x), "scaled:center"),
                               attr(scale(tr$x), "scaled:scale")), rank = 100)
  r95 <- which(cumsum(kp$eigenvalues) / kp$trace >= 0.95)[1]
  expect_lt(r95, ncol(all$L))
  expect_lt(acc(fit(r95)), acc(all) - 0.01)
})
