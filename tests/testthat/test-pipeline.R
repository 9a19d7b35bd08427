# One call from new data to classes (kmaha/pipeline.hpp): input scaling ->
# feature map -> linear map -> kNN vote, what predict() runs.  For every
# feature map its result equals what the separate steps of the R layer
# compute (apply_scaling(), the feature map's projection, apply_map(),
# knn_predict(); the path predict() takes for kernels evaluated in R): bit
# for bit without a kernel (the same core functions in the same order), up
# to rounding with one (the pipeline folds the map into the KPCA
# projection), with the same classes and votes.

pipeline_model <- function(prep, feature_map, L, embedding, y) {
  list(center = prep$center, scale = prep$scale, feature_map = feature_map,
       L = unname(L), embedding = unname(embedding), y = as.integer(y),
       nlevels = nlevels(y))
}

# The model of a kmaha() fit (KPCA trick: exact or Nystrom KPCA, or none),
# built from its stored stages.
model_of_kmaha <- function(fit) {
  kp <- fit$feature_map
  fm <- switch(kp$type,
    identity = list(type = "identity"),
    nystrom = list(type = "nystrom", kernel = kp$kernel, landmarks = kp$landmarks,
                   projection = kp$projection, col_means = kp$col_means),
    kpca = list(type = "kpca", kernel = kp$kernel, x = kp$x, projection = kp$projection,
                col_means = kp$col_means, grand_mean = kp$grand_mean))
  pipeline_model(fit$prep, fm, fit$L, fit$embedding, fit$y)
}

pipe <- function(model, x, type, k = 1L, Kx = NULL) {
  kmaha:::core_pipeline_predict(model, unname(as.matrix(x)), Kx, type, k, test_ctx(2L))
}

# The separate steps of the R layer for the same fit.
steps <- function(fit, xn, k) {
  ctx <- test_ctx(1L)
  z <- kmaha:::model_transform(fit, as.matrix(xn), ctx)
  res <- kmaha:::knn_predict(fit$embedding, fit$y, z, k, ctx)
  list(z = z, class = res$class, prob = res$prob)
}

expect_same_predictions <- function(fit, model, xn, k, label, Kx = NULL) {
  ref <- steps(fit, xn, k)
  if (identical(model$feature_map$type, "identity")) {
    expect_identical(pipe(model, xn, "transform", Kx = Kx), unname(ref$z), label = label)
  } else {
    expect_equal(pipe(model, xn, "transform", Kx = Kx), unname(ref$z), tolerance = 1e-10,
                 label = label)
  }
  for (type in c("class", "prob")) {
    got <- pipe(model, xn, type, k, Kx = Kx)
    expect_identical(got$class, as.integer(ref$class), label = paste(label, type))
    expect_identical(got$prob, unname(ref$prob), label = paste(label, type))
  }
  # predict() gives the same
  expect_identical(predict(fit, xn, type = "class", k = k), ref$class,
                   label = paste(label, "predict"))
  expect_equal(unname(predict(fit, xn, type = "prob", k = k)), unname(ref$prob),
               label = paste(label, "predict prob"))
}

set.seed(11)
pl_y <- factor(rep(c("a", "b", "c"), length.out = 150))
pl_x <- matrix(rnorm(150 * 4), 150) * rep(c(1, 10, 0.1, 3), each = 150) +
  as.integer(pl_y)
colnames(pl_x) <- paste0("v", 1:4)
pl_new <- pl_x[sample(150, 80), ] + rnorm(80 * 4, sd = 0.3)

test_that("identity feature map: linear learners", {
  fits <- suppressWarnings(list(
    nca = nca(pl_x, pl_y, dim = 2, max_iter = 40),
    lmnn = lmnn(pl_x, pl_y, dim = 3, max_iter = 50),
    dne = dne(pl_x, pl_y),
    nca_unscaled = nca(pl_x, pl_y, dim = 2, max_iter = 40, scale = FALSE)))
  for (nm in names(fits)) {
    f <- fits[[nm]]
    m <- pipeline_model(f$prep, list(type = "identity"), f$L, f$embedding, f$y)
    expect_same_predictions(f, m, pl_new, 3L, nm)
  }
  expect_null(fits$nca_unscaled$prep)
})

test_that("exact and Nystrom KPCA feature maps: the KPCA trick", {
  fits <- suppressWarnings(list(
    kpca = kmaha(pl_x, pl_y, learner = "nca", kernel = rbf_kernel(1),
                 learner_args = list(max_iter = 30)),
    kpca_sum = kmaha(pl_x, pl_y, learner = "dne",
                     kernel = kernel_sum(list(rbf_kernel(0.5), poly_kernel(2)), c(0.7, 0.3))),
    nystrom = kmaha(pl_x, pl_y, learner = "nca", kernel = rbf_kernel(1), landmarks = 40,
                    learner_args = list(max_iter = 30)),
    linear = kmaha(pl_x, pl_y, learner = "dne", kernel = "linear")))
  for (nm in names(fits)) {
    f <- fits[[nm]]
    expect_same_predictions(f, model_of_kmaha(f), pl_new, 5L, nm)
  }
  # kernel rows computed outside replace the kernel's evaluation
  kp <- fits$kpca$feature_map
  xs <- kmaha:::apply_scaling(pl_new, fits$kpca$prep)
  Kx <- kernel_matrix(kp$kernel, unname(xs), unname(kp$x))
  expect_same_predictions(fits$kpca, model_of_kmaha(fits$kpca), pl_new, 5L, "kpca Kx",
                          Kx = Kx)
  kn <- fits$nystrom$feature_map
  Kn <- kernel_matrix(kn$kernel, unname(xs), unname(kn$landmarks))
  expect_same_predictions(fits$nystrom, model_of_kmaha(fits$nystrom), pl_new, 5L,
                          "nystrom Kx", Kx = Kn)
})

test_that("kernel-rows feature map: the kernel trick", {
  fits <- suppressWarnings(list(
    knca = knca(pl_x, pl_y, kernel = rbf_kernel(1), dim = 2, max_iter = 30),
    kdne = kdne(pl_x, pl_y, kernel = rbf_kernel(2))))
  for (nm in names(fits)) {
    f <- fits[[nm]]
    fm <- f$feature_map
    m <- pipeline_model(f$prep, list(type = "kernel_rows", kernel = fm$kernel, x = fm$x),
                        f$L, f$embedding, f$y)
    expect_same_predictions(f, m, pl_new, 3L, nm)
    xs <- kmaha:::apply_scaling(pl_new, f$prep)
    Kx <- kernel_matrix(fm$kernel, unname(xs), unname(fm$x))
    expect_same_predictions(f, m, pl_new, 3L, paste(nm, "Kx"), Kx = Kx)
  }
})

test_that("the pipeline's tie rule is knn_classify()'s", {
  # two reference points per class at equal distances: ties everywhere
  emb <- rbind(c(0, 0), c(2, 0), c(0, 2), c(2, 2))
  y <- factor(c("p", "q", "q", "p"))
  m <- pipeline_model(NULL, list(type = "identity"), diag(2), emb, y)
  q <- rbind(c(1, 1), c(0.5, 1), c(1, 0.2), c(3, 3))
  for (k in 1:4) {
    ref <- knn_classify(emb, y, q, k = k)
    got <- pipe(m, q, "class", k)
    expect_identical(got$class, as.integer(ref$class), label = paste("k", k))
    expect_identical(got$prob, unname(ref$prob), label = paste("k", k))
  }
})

test_that("malformed models are internal errors", {
  f <- suppressWarnings(nca(pl_x, pl_y, dim = 2, max_iter = 5))
  m <- pipeline_model(f$prep, list(type = "identity"), f$L, f$embedding, f$y)
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
  m <- model_of_kmaha(f)
  xn <- pl_x[rep(1:150, 7), ] + rnorm(1050 * 4, sd = 0.2)
  one <- kmaha:::core_pipeline_predict(m, unname(xn), NULL, "prob", 3L, test_ctx(1L))
  two <- kmaha:::core_pipeline_predict(m, unname(xn), NULL, "prob", 3L, test_ctx(2L))
  expect_identical(two, one)
  expect_identical(one$class, as.integer(predict(f, xn, k = 3)))
})
