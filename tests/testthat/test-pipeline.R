# The one path from inputs to learned coordinates and votes
# (kmaha/pipeline.hpp, pipeline_apply()): predict(), fitted(), the scoring of
# cross-validation folds and the projection of kpca() fits all run it.  Its
# results are checked against computations written here in plain R from the
# paper's formulas (scaling, kernel rows, the KPCA centring, the map) and
# against class::knn(), an independent k-NN.

set.seed(11)
pl_y <- factor(rep(c("a", "b", "c"), length.out = 150))
pl_x <- matrix(rnorm(150 * 4), 150) * rep(c(1, 10, 0.1, 3), each = 150) +
  as.integer(pl_y)
colnames(pl_x) <- paste0("v", 1:4)
pl_new <- pl_x[sample(150, 80), ] + rnorm(80 * 4, sd = 0.3)

# The learned coordinates of raw rows xn, in plain R from the stored stages.
reference_transform <- function(fit, xn) {
  xs <- if (is.null(fit$prep)) xn else
    sweep(sweep(xn, 2, fit$prep$center), 2, fit$prep$scale, "/")
  fm <- fit$feature_map
  z <- switch(fm$type,
    identity = xs,
    kpca = {
      K <- kernel_matrix(fm$kernel, xs, fm$x)
      Kc <- K - rowMeans(K) - rep(fm$col_means, each = nrow(K)) + fm$grand_mean
      Kc %*% fm$projection
    },
    nystrom = {
      K <- kernel_matrix(fm$kernel, xs, fm$landmarks)
      (K - rep(fm$col_means, each = nrow(K))) %*% fm$projection
    },
    kernel_rows = kernel_matrix(fm$kernel, xs, fm$x))
  unname(z %*% t(fit$L))
}

expect_pipeline_matches <- function(fit, xn, label) {
  z <- predict(fit, xn, type = "transform")
  expect_equal(unname(z), reference_transform(fit, unname(xn)), tolerance = 1e-9,
               label = label)
  # the vote: class::knn() in the learned space (continuous data, no ties)
  ref <- class::knn(fit$embedding, unname(z), fit$y, k = 1)
  expect_identical(as.character(predict(fit, xn, type = "class", k = 1)), as.character(ref),
                   label = paste(label, "class"))
}

test_that("every feature map's coordinates and votes match the formulas", {
  skip_if_not_installed("class")
  fits <- suppressWarnings(list(
    nca = nca(pl_x, pl_y, dim = 2, max_iter = 40),
    lmnn = lmnn(pl_x, pl_y, dim = 3, max_iter = 50),
    dne = dne(pl_x, pl_y),
    nca_unscaled = nca(pl_x, pl_y, dim = 2, max_iter = 40, scale = FALSE),
    kpca = kmaha(pl_x, pl_y, learner = "nca", kernel = rbf_kernel(1),
                 learner_args = list(max_iter = 30)),
    kpca_sum = kmaha(pl_x, pl_y, learner = "dne",
                     kernel = kernel_sum(list(rbf_kernel(0.5), poly_kernel(2)), c(0.7, 0.3))),
    nystrom = kmaha(pl_x, pl_y, learner = "nca", kernel = rbf_kernel(1), landmarks = 40,
                    learner_args = list(max_iter = 30)),
    knca = knca(pl_x, pl_y, kernel = rbf_kernel(1), dim = 2, max_iter = 30),
    kdne = kdne(pl_x, pl_y, kernel = rbf_kernel(2))))
  for (nm in names(fits)) expect_pipeline_matches(fits[[nm]], pl_new, nm)
  expect_null(fits$nca_unscaled$prep)
})

test_that("kernels evaluated in R and precomputed Gram matrices hand their rows to the same path", {
  # the scaled RBF kernel as an R function of two matrices: the same kernel
  k_r <- custom_kernel(function(a, b) {
    d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
    exp(-pmax(d2, 0) / (2 * 4 * 1^2))
  }, matrix = TRUE, name = "R rbf")
  f_core <- kmaha(pl_x, pl_y, learner = "dne", kernel = rbf_kernel(1))
  f_r <- kmaha(pl_x, pl_y, learner = "dne", kernel = k_r)
  expect_equal(predict(f_r, pl_new, type = "transform"),
               predict(f_core, pl_new, type = "transform"), tolerance = 1e-8)
  expect_identical(predict(f_r, pl_new), predict(f_core, pl_new))
  expect_identical(fitted(f_r), fitted(f_core))
  # a precomputed Gram matrix and the kernel rows of the new points
  xs <- scale(pl_x)
  xn <- scale(pl_new, attr(xs, "scaled:center"), attr(xs, "scaled:scale"))
  K <- kernel_matrix(rbf_kernel(1), xs)
  f_pre <- kmaha(K, pl_y, learner = "dne", kernel = "precomputed")
  f_x <- kmaha(unname(xs), pl_y, learner = "dne", kernel = rbf_kernel(1), scale = FALSE)
  Kn <- kernel_matrix(rbf_kernel(1), xn, xs)
  expect_equal(unname(predict(f_pre, Kn, type = "transform")),
               unname(predict(f_x, unname(xn), type = "transform")), tolerance = 1e-8)
  expect_identical(predict(f_pre, Kn), predict(f_x, unname(xn)))
  # many new rows of an R kernel go through in blocks, the same as one block
  many <- pl_x[rep(1:150, 60), ] + rnorm(9000 * 4, sd = 0.1)
  expect_identical(predict(f_r, many), predict(f_core, many))
})

test_that("fitted() is the leave-one-out vote of the training points", {
  f <- suppressWarnings(kmaha(pl_x, pl_y, learner = "dne", kernel = rbf_kernel(1)))
  emb <- f$embedding
  d <- as.matrix(stats::dist(emb))
  diag(d) <- Inf
  nearest <- apply(d, 1, which.min)
  expect_identical(as.character(fitted(f)), as.character(f$y[nearest]))
  expect_equal(f$train_accuracy, mean(fitted(f) == f$y))
  expect_error(predict(f, k = 150), "must not exceed the number of training rows minus one",
               fixed = TRUE)
})

test_that("kpca() projects new points by the same path", {
  x <- scale(pl_x)
  kp <- kpca(x[1:100, ], rbf_kernel(1))
  K <- kernel_matrix(rbf_kernel(1), x[101:150, ], x[1:100, ])
  Kc <- K - rowMeans(K) - rep(kp$col_means, each = 50) + kp$grand_mean
  expect_equal(unname(predict(kp, x[101:150, ])), unname(Kc %*% kp$projection),
               tolerance = 1e-10)
  expect_equal(unname(predict(kp, x[1:100, ])), unname(kp$coords), tolerance = 1e-9)
  kg <- kpca(kernel_matrix(rbf_kernel(1), x[1:100, ]), "precomputed")
  expect_equal(unname(predict(kg, K)), unname(Kc %*% kp$projection), tolerance = 1e-8)
})

test_that("the pipeline's tie rule is knn_classify()'s", {
  # two reference points per class at equal distances: ties everywhere
  emb <- rbind(c(0, 0), c(2, 0), c(0, 2), c(2, 2))
  y <- factor(c("p", "q", "q", "p"))
  m <- list(feature_map = list(type = "identity"), L = diag(2), embedding = emb, y = y)
  q <- rbind(c(1, 1), c(0.5, 1), c(1, 0.2), c(3, 3))
  for (k in 1:4) {
    ref <- knn_classify(emb, y, q, k = k)
    expect_identical(kmaha:::pipeline_apply(m, q, "class", k, test_ctx(1L)), ref$class,
                     label = paste("k", k))
    expect_equal(unname(kmaha:::pipeline_apply(m, q, "prob", k, test_ctx(1L))),
                 unname(ref$prob), label = paste("k", k))
  }
})

test_that("malformed models are internal errors", {
  f <- suppressWarnings(nca(pl_x, pl_y, dim = 2, max_iter = 5))
  m <- kmaha:::pipeline_of(f)
  pipe <- function(model, x, type, k = 1L) {
    kmaha:::core_pipeline_apply(model, unname(x), NULL, type, k, test_ctx(1L))
  }
  expect_error(pipe(m, pl_new[, 1:3], "transform"),
               "pipeline: center and scale must have one entry per input column",
               fixed = TRUE, class = "kmaha_invalid_error")
  expect_error(pipe(m, pl_new, "class", k = 151L),
               "pipeline: k must lie between 1 and the number of reference points",
               fixed = TRUE, class = "kmaha_invalid_error")
  expect_error(pipe(m, pl_new, "bogus"), "pipeline: type must be", fixed = TRUE,
               class = "kmaha_invalid_error")
  m$feature_map <- list(type = "spline")
  expect_error(pipe(m, pl_new, "class"), "pipeline: unknown feature map 'spline'",
               fixed = TRUE, class = "kmaha_invalid_error")
})

test_that("blocks of new points on two threads give the one-thread result", {
  f <- suppressWarnings(kmaha(pl_x, pl_y, learner = "nca", kernel = rbf_kernel(1),
                              learner_args = list(max_iter = 20)))
  xn <- pl_x[rep(1:150, 7), ] + rnorm(1050 * 4, sd = 0.2)
  one <- kmaha:::pipeline_apply(f, xn, "prob", 3L, test_ctx(1L))
  two <- kmaha:::pipeline_apply(f, xn, "prob", 3L, test_ctx(2L))
  expect_identical(two, one)
  expect_identical(kmaha:::pipeline_apply(f, xn, "class", 3L, test_ctx(1L)),
                   predict(f, xn, k = 3))
})
