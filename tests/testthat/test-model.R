# The one model object: every learner and feature map gives a "kmaha_model"
# with the lm-like methods, a size bounded by what predict() reads, and
# clear behaviour for the cases a demanding user tries.

idx_m <- c(1:25, 51:75, 101:125)
train_m <- iris[idx_m, ]
test_m <- iris[-idx_m, ]

model_fits <- function() {
  suppressWarnings(list(
    nca = nca(Species ~ ., data = train_m, max_iter = 30),
    lmnn = lmnn(Species ~ ., data = train_m, k = 2, max_iter = 50),
    dne = dne(Species ~ ., data = train_m, k = 2),
    knca = knca(Species ~ ., data = train_m, max_iter = 30),
    kdne = kdne(Species ~ ., data = train_m, k = 2, eps = 1e-6),
    kmaha_linear = kmaha(Species ~ ., data = train_m, learner = "nca", kernel = "linear",
                         learner_args = list(max_iter = 30)),
    kmaha_kpca = kmaha(Species ~ ., data = train_m, learner = "dne",
                       kernel = rbf_kernel(1)),
    kmaha_nystrom = kmaha(Species ~ ., data = train_m, learner = "dne",
                          kernel = rbf_kernel(1), landmarks = 30)
  ))
}
fits_m <- model_fits()

test_that("every learner and feature map gives one model class with one predict path", {
  types <- c(nca = "identity", lmnn = "identity", dne = "identity",
             knca = "kernel_rows", kdne = "kernel_rows", kmaha_linear = "identity",
             kmaha_kpca = "kpca", kmaha_nystrom = "nystrom")
  for (nm in names(fits_m)) {
    f <- fits_m[[nm]]
    expect_s3_class(f, "kmaha_model")
    expect_identical(f$feature_map$type, types[[nm]], label = nm)
    # transform = the stages applied by hand: scaling, feature map, map
    xs <- kmaha:::apply_scaling(as.matrix(test_m[, 1:4]), f$prep)
    fm <- f$feature_map
    coords <- switch(fm$type,
      identity = xs,
      kpca = predict(structure(c(fm, list(coords = matrix(0, 0, ncol(fm$projection)))),
                               class = "kmaha_kpca"), xs),
      nystrom = {
        kl <- kernel_matrix(fm$kernel, xs, fm$landmarks)
        sweep(kl, 2L, fm$col_means) %*% fm$projection
      },
      kernel_rows = kernel_matrix(fm$kernel, xs, fm$x))
    expect_equal(unname(predict(f, test_m, type = "transform")),
                 unname(coords %*% t(coef(f))), tolerance = 1e-8, label = nm)
    # class = 1-NN among the reference embedding (class::knn as the oracle)
    z <- predict(f, test_m, type = "transform")
    ref <- class::knn(f$embedding, z, f$y, k = 1)
    expect_identical(as.character(predict(f, test_m)), as.character(ref), label = nm)
  }
})

test_that("coef(), fitted(), nobs(), formula(), terms(), model.frame() work on every model", {
  for (nm in names(fits_m)) {
    f <- fits_m[[nm]]
    expect_identical(coef(f), f$L, label = nm)
    expect_identical(nrow(coef(f)), ncol(f$embedding), label = nm)
    expect_identical(nobs(f), nrow(train_m), label = nm)
    expect_identical(fitted(f), predict(f), label = nm)
    expect_identical(fitted(f, type = "transform"), f$embedding, label = nm)
    expect_identical(length(fitted(f)), nobs(f), label = nm)
    # expanded, as for lm()
    expect_equal(formula(f), Species ~ Sepal.Length + Sepal.Width + Petal.Length + Petal.Width,
                 ignore_attr = TRUE, label = nm)
    expect_s3_class(terms(f), "terms")
    mf <- model.frame(f)
    expect_identical(nrow(mf), nobs(f), label = nm)
    expect_identical(names(mf), names(train_m)[c(5, 1:4)], label = nm)
  }
  m <- nca(as.matrix(train_m[, 1:4]), train_m$Species, max_iter = 20)
  expect_error(formula(m),
               "This model was fitted from a matrix, not a formula: it has no formula.",
               fixed = TRUE)
  expect_error(model.frame(m),
               "This model was fitted from a matrix, not a formula: it has no model frame.",
               fixed = TRUE)
})

test_that("update() refits from the stored call, which names the generic", {
  f <- fits_m$nca
  expect_identical(f$call[[1]], quote(kmaha::nca))
  u <- update(f, dim = 2)
  expect_identical(dim(coef(u)), c(2L, 4L))
  expect_identical(u$call$dim, 2)
  # every generic, formula and matrix interface
  for (nm in names(fits_m)) {
    g <- sub("^kmaha_.*", "kmaha", nm)
    expect_identical(fits_m[[nm]]$call[[1]], call("::", quote(kmaha), as.name(g)),
                     label = nm)
  }
  ud <- update(fits_m$dne, k = 3)
  expect_identical(ncol(ud$targets$same), 3L)
  uk <- update(fits_m$kmaha_kpca, kernel = rbf_kernel(5))
  expect_identical(uk$feature_map$kernel$sigma, 5)
  xm <- as.matrix(train_m[, 1:4])
  ym <- train_m$Species
  mm <- lmnn(xm, ym, k = 2, max_iter = 500)
  expect_identical(mm$call[[1]], quote(kmaha::lmnn))
  um <- suppressWarnings(update(mm, k = 1))
  expect_identical(ncol(um$targets), 1L)
  # works without attaching the package: the call is kmaha::lmnn(...)
  expect_identical(eval(mm$call)$L, mm$L)
})

test_that("a kmaha() fit stores at most twice what predict() reads", {
  set.seed(3)
  n <- 300
  x <- matrix(rnorm(n * 6), n, 6)
  y <- factor(ifelse(rowSums(x[, 1:2]^2) > 1.5, "out", "in"))
  fit <- kmaha(x, y, learner = "nca", kernel = rbf_kernel(1),
               learner_args = list(max_iter = 20))
  fm <- fit$feature_map
  read <- list(fit$prep, fm$kernel, fm$x, fm$projection, fm$col_means,
               fm$grand_mean, fit$L, fit$embedding, fit$y, fit$k)
  bytes_read <- sum(vapply(read, function(e) as.numeric(utils::object.size(e)), 0))
  expect_lte(as.numeric(utils::object.size(fit)), 2 * bytes_read)
  # the KPCA coordinates of the training points are not kept
  expect_null(fm$coords)
})

test_that("na.action = na.exclude pads fitted values and leave-one-out predictions", {
  d <- train_m
  d$Sepal.Length[c(3, 40)] <- NA
  f <- dne(Species ~ ., data = d, k = 2, na.action = na.exclude)
  expect_identical(nobs(f), nrow(d) - 2L)
  p <- predict(f)
  expect_length(p, nrow(d))
  expect_true(all(is.na(p[c(3, 40)])))
  expect_false(anyNA(p[-c(3, 40)]))
  expect_identical(nrow(fitted(f, type = "prob")), nrow(d))
  expect_identical(nrow(predict(f, type = "transform")), nrow(d))
  # na.omit (the default) drops them, as lm() does
  f2 <- dne(Species ~ ., data = d, k = 2)
  expect_length(predict(f2), nrow(d) - 2L)
})

test_that("predict() says when a column has the wrong type and rejects unknown arguments", {
  f <- fits_m$kmaha_kpca
  nd <- test_m[1:3, ]
  nd$Sepal.Length <- as.character(nd$Sepal.Length)
  expect_error(predict(f, nd),
               "`newdata` column 'Sepal.Length' is character, but the model was trained on numbers there; convert it (e.g. as.numeric(newdata$Sepal.Length)) before predicting.",
               fixed = TRUE)
  expect_error(predict(f, test_m[1:3, ], tpye = "prob"),
               "Unknown argument(s) to predict(): 'tpye'. predict() takes `newdata`, `type` (\"class\", \"prob\" or \"transform\"), `k` and `num_threads`.",
               fixed = TRUE)
  expect_error(predict(f, test_m[1:3, ], type = "probs"),
               "`type` must be one of \"class\", \"prob\" or \"transform\", not \"probs\".",
               fixed = TRUE)
  expect_error(fitted(f, k = 3), "Unknown argument(s) to fitted(): 'k'.", fixed = TRUE)
})

test_that("a penalty that collapses the map is reported", {
  expect_warning(
    f <- nca(iris[, 1:4], iris$Species, lambda = 1e6),
    "The learned map is numerically zero: the optimizer shrank its start", fixed = TRUE)
  expect_lt(max(abs(f$L)), 1e-6)
  expect_warning(nca(iris[, 1:4], iris$Species, lambda = 1e6),
                 "`lambda` (1e+06) outweighs the learner's objective on these data: use a smaller one.",
                 fixed = TRUE)
  expect_no_warning(nca(iris[, 1:4], iris$Species, lambda = 0.01))
})

test_that("transform_matrix() of a kernel-trick fit says there is no finite map", {
  expect_error(transform_matrix(fits_m$knca),
               "A kernel-trick fit (KNCA) has no finite map on the inputs", fixed = TRUE)
  expect_error(transform_matrix(list()),
               "transform_matrix() needs a model fitted by kmaha's learners", fixed = TRUE)
})

test_that("cv_folds larger than the data names cv_folds", {
  expect_error(kmaha(train_m[, 1:4], train_m$Species, kernel = "cv", cv_folds = 200,
                     kernels = list(rbf_kernel(1), rbf_kernel(2))),
               "`cv_folds` (200) must not exceed the number of training rows (75).",
               fixed = TRUE)
  # on four rows the default's 5 folds are what the user meets: the message
  # says what cross-validates and how to do without (was the bare limit)
  four <- c(1, 2, 51, 52)
  x4 <- as.matrix(iris[four, 1:4])
  y4 <- droplevels(iris$Species[four])
  expect_error(kmaha(x4, y4),
               "`cv_folds` (5) must not exceed the number of training rows (4). kmaha() chooses its kernel, learner and k by 5-fold cross-validation: set `cv_folds` to at most 4, or give the kernel, the learner and k (e.g. kernel = \"linear\", learner = \"nca\", k = 1), which need none.",
               fixed = TRUE)
  # and the way out it names works
  expect_s3_class(kmaha(x4, y4, kernel = "linear", learner = "nca", k = 1), "kmaha_model")
})

test_that("summary(cv_kernel()) lists the candidates and the choice", {
  cv <- cv_kernel(scale(train_m[, 1:4]), train_m$Species, "dne",
                  kernels = lapply(c(0.5, 5), rbf_kernel), folds = 3, seed = 1)
  s <- summary(cv)
  expect_s3_class(s, "summary.kmaha_scores")
  expect_identical(s$table$candidate, c("RBF sigma = 0.5", "RBF sigma = 5"))
  expect_identical(which(s$table$chosen), cv$best)
  expect_output(print(s), "3-fold cross-validation of DNE", fixed = TRUE)
  expect_output(print(s), "Chosen because: RBF sigma = 0.5 has the highest mean CV accuracy",
                fixed = TRUE)
})
