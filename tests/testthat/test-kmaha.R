# The KPCA trick: kmaha() with built-in and user-supplied learners.

rings_tr <- make_rings(100, 1)
rings_te <- make_rings(200, 2)
ring_acc <- function(fit) mean(predict(fit, rings_te$x) == rings_te$y)

# A learner written by a user, knowing nothing of kernels: whiten the
# within-class scatter (a small ridge keeps it invertible).
within_whitening <- function(x, y, ridge = 1e-6, ...) {
  xc <- x - apply(x, 2, function(col) ave(col, y))
  S <- crossprod(xc) / nrow(x)
  e <- eigen(S + ridge * mean(diag(S)) * diag(ncol(x)), symmetric = TRUE)
  t(e$vectors %*% diag(1 / sqrt(e$values), ncol(x)) %*% t(e$vectors))
}

test_that("rings: linear metrics fail, the KPCA trick with (x.y)^2 succeeds", {
  skip_if_not(exists("lmnn", envir = asNamespace("kmaha")), "lmnn() not merged yet")
  base <- mean(knn_classify(rings_tr$x, rings_tr$y, rings_te$x, k = 1)$class ==
                 rings_te$y)
  expect_lt(base, 0.9)
  for (l in c("nca", "lmnn", "dne")) {
    lin <- kmaha(rings_tr$x, rings_tr$y, learner = l, kernel = "linear")
    expect_lt(ring_acc(lin), 0.9)
  }
  for (l in c("nca", "lmnn")) {
    kf <- kmaha(rings_tr$x, rings_tr$y, learner = l, kernel = poly_kernel(2),
                scale = FALSE)
    expect_gte(ring_acc(kf), 0.95)
  }
})

test_that("rings: KDNE keeps every feature direction, i.e. the feature-space metric", {
  # DNE's map is orthonormal (A A' = I): it can select directions but not
  # rescale them. In the 3-d feature space of (x.y)^2 every eigenvalue of
  # X'(D - W)X is negative here, so DNE keeps all three directions and its
  # metric is the plain feature-space distance, which on these rings is better
  # than the input-space one but does not isolate the radius (see NOTE in
  # bench/results/kernel-choice.md).
  kf <- kmaha(rings_tr$x, rings_tr$y, learner = "dne", kernel = poly_kernel(2),
              scale = FALSE)
  expect_identical(dim(kf$L), c(3L, 3L))
  expect_equal(kf$L %*% t(kf$L), diag(3), tolerance = 1e-8, ignore_attr = TRUE)
  kp <- kpca(kf$feature_map$x, kf$feature_map$kernel)
  feat <- mean(knn_classify(kp$coords, rings_tr$y,
                            predict(kp, apply_scaling(rings_te$x, kf$prep)),
                            k = 1)$class == rings_te$y)
  expect_equal(ring_acc(kf), feat)
  lin <- kmaha(rings_tr$x, rings_tr$y, learner = "dne", kernel = "linear")
  expect_gt(ring_acc(kf), ring_acc(lin))
})

test_that("a user-supplied learner function is kernelized with no new code", {
  lin <- kmaha(rings_tr$x, rings_tr$y, learner = within_whitening, kernel = "linear")
  kf <- kmaha(rings_tr$x, rings_tr$y, learner = within_whitening,
              kernel = poly_kernel(2), scale = FALSE)
  expect_lt(ring_acc(lin), 0.9)
  expect_gte(ring_acc(kf), 0.95)
  expect_identical(kf$learner, "custom")
  # the map is the user's function applied to the KPCA coordinates
  expect_equal(kf$L, within_whitening(fit_coords(kf), rings_tr$y),
               tolerance = 1e-10, ignore_attr = TRUE)
  # objects with an element L, or with a transform_matrix() method, work too
  as_list <- function(x, y, ...) list(L = within_whitening(x, y))
  kf2 <- kmaha(rings_tr$x, rings_tr$y, learner = as_list,
               kernel = poly_kernel(2), scale = FALSE)
  expect_equal(kf2$L, kf$L, ignore_attr = TRUE)
  registerS3method("transform_matrix", "test_map",
                   function(object) object$map, envir = asNamespace("kmaha"))
  as_obj <- function(x, y, ...) structure(list(map = within_whitening(x, y)),
                                          class = "test_map")
  kf3 <- kmaha(rings_tr$x, rings_tr$y, learner = as_obj,
               kernel = poly_kernel(2), scale = FALSE)
  expect_equal(kf3$L, kf$L, ignore_attr = TRUE)
  # learner_args reach the function (here lambda, as for RKNCA/RKLMNN)
  seen <- NULL
  spy <- function(x, y, lambda = 0, ...) {
    seen <<- lambda
    diag(ncol(x))
  }
  kmaha(rings_tr$x, rings_tr$y, learner = spy, kernel = poly_kernel(2),
        learner_args = list(lambda = 0.25))
  expect_identical(seen, 0.25)
})

test_that("lambda passes through to the built-in learners", {
  f0 <- kmaha(iris[, 1:4], iris$Species, learner = "nca", kernel = rbf_kernel(1),
              learner_args = list(lambda = 0, max_iter = 30))
  f1 <- kmaha(iris[, 1:4], iris$Species, learner = "nca", kernel = rbf_kernel(1),
              learner_args = list(lambda = 10, max_iter = 30))
  # a heavy Frobenius penalty shrinks the learned map
  expect_lt(sum(f1$L^2), sum(f0$L^2))
})

test_that("formula and matrix methods agree", {
  f1 <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = rbf_kernel(1))
  f2 <- kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = rbf_kernel(1))
  expect_equal(f1$embedding, f2$embedding, ignore_attr = TRUE)
  new <- iris[c(3, 77, 140), ]
  expect_identical(predict(f1, new), predict(f2, new[, 1:4]))
  expect_equal(predict(f1, new, type = "transform"),
               predict(f2, as.matrix(new[, 1:4]), type = "transform"),
               ignore_attr = TRUE)
  # the response keeps its levels (the level without rows is named, and
  # predictions keep it)
  expect_warning(
    sub <- kmaha(Species ~ Sepal.Length + Petal.Width, data = iris,
                 subset = 1:100, learner = "dne", kernel = rbf_kernel(1)),
    "`y` has level(s) 'virginica' with no rows", fixed = TRUE)
  expect_identical(levels(sub$y), levels(iris$Species))
  expect_identical(levels(predict(sub, iris[1:2, ])), levels(iris$Species))
  expect_identical(sub$n_features, 2L)
})

test_that("predict: training rows, probabilities, leave-one-out", {
  fit <- kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = rbf_kernel(1),
               k = 3)
  z <- predict(fit, iris[, 1:4], type = "transform")
  expect_equal(z, fit$embedding, tolerance = 1e-6, ignore_attr = TRUE)
  pr <- predict(fit, iris[1:20, 1:4], type = "prob")
  expect_equal(unname(rowSums(pr)), rep(1, 20))
  expect_identical(colnames(pr), levels(iris$Species))
  pr1 <- predict(fit, iris[1:20, 1:4], type = "prob", k = 1)
  expect_true(all(pr1 %in% c(0, 1)))
  loo <- predict(fit)
  expect_equal(mean(loo == iris$Species), fit$train_accuracy)
  expect_identical(predict(fit, type = "transform"), fit$embedding)
  tm <- transform_matrix(fit)
  expect_identical(dim(tm), c(ncol(fit$embedding), ncol(fit_coords(fit))))
})

test_that("kernel choices: unweighted, aligned, cv and linear", {
  x <- iris[, 1:4]
  y <- iris$Species
  kk <- lapply(c(0.25, 1, 5), rbf_kernel)
  fu <- kmaha(x, y, learner = "dne", kernel = "unweighted", kernels = kk)
  expect_identical(fu$feature_map$kernel, kernel_sum(kk))
  fa <- kmaha(x, y, learner = "dne", kernel = "aligned", kernels = kk)
  ref <- align_kernels(scale(as.matrix(x)), y, kk)
  expect_equal(fa$kernel_choice$alignment$weights, ref$weights)
  expect_identical(fa$kernel_choice$type, "align")
  # the LP alignment is the paper's bound, not a kernel choice
  expect_error(kmaha(x, y, learner = "dne", kernel = "align_lp", kernels = kk),
               "`kernel = \"align_lp\"` is no longer a kernel choice", fixed = TRUE)
  fc1 <- kmaha(x, y, learner = "dne", kernel = "cv", kernels = kk, cv_folds = 3,
               seed = 4, k = 1)
  fc2 <- kmaha(x, y, learner = "dne", kernel = "cv", kernels = kk, cv_folds = 3,
               seed = 4, k = 1)
  expect_identical(fc1$kernel_choice$cv$accuracy, fc2$kernel_choice$cv$accuracy)
  expect_identical(fc1$feature_map$kernel, kk[[fc1$kernel_choice$cv$best]])
  direct <- cv_kernel(scale(as.matrix(x)), y, "dne", kk, folds = 3, seed = 4)
  expect_identical(fc1$kernel_choice$cv$accuracy, direct$accuracy)
  # the built-in learner runs on the KPCA coordinates as given (scale = FALSE)
  tr <- direct$folds != 1
  kp <- kpca(scale(as.matrix(x))[tr, ], kk[[1]])
  d1 <- dne(kp$coords, y[tr], scale = FALSE)
  zte <- predict(kp, scale(as.matrix(x))[!tr, ]) %*% t(transform_matrix(d1))
  acc1 <- mean(knn_classify(d1$embedding, y[tr], zte, k = 1)$class == y[!tr])
  expect_equal(unname(direct$accuracy[1, 1]), acc1)
  expect_identical(nrow(fc1$kernel_choice$cv$curve), 3L)
  # "linear" is the original learner on the standardized inputs
  lin <- kmaha(x, y, learner = "dne", kernel = "linear")
  orig <- dne(x, y)
  expect_identical(lin$feature_map$type, "identity")
  expect_equal(lin$embedding, orig$embedding, tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(transform_matrix(lin), transform_matrix(orig), tolerance = 1e-8,
               ignore_attr = TRUE)
})

test_that("neighbors = 'input' and 'feature' give the expected target neighbours", {
  skip_if_not(exists("lmnn", envir = asNamespace("kmaha")), "lmnn() not merged yet")
  x <- iris[, 1:4]
  y <- iris$Species
  for (l in c("lmnn", "dne")) {
    ff <- kmaha(x, y, learner = l, kernel = rbf_kernel(0.5), neighbors = "feature",
                learner_args = list(k = 2))
    fi <- kmaha(x, y, learner = l, kernel = rbf_kernel(0.5), neighbors = "input",
                learner_args = list(k = 2))
    same_f <- target_neighbors(fit_coords(ff), y, 2)
    same_i <- target_neighbors(scale(as.matrix(x)), y, 2)
    got_f <- if (l == "dne") ff$targets$same else ff$targets
    got_i <- if (l == "dne") fi$targets$same else fi$targets
    expect_identical(got_f, same_f)
    expect_identical(got_i, same_i)
    if (l == "dne") {
      expect_identical(fi$targets$other,
                       target_neighbors(scale(as.matrix(x)), y, 2, "other"))
    }
    expect_false(identical(same_f, same_i))
  }
})

test_that("print, summary and plot", {
  fa <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = "align")
  expect_output(print(fa), "KDNE by the KPCA trick")
  expect_output(print(summary(fa)), "Kernel: aligned \\(QP\\)")
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(fa))
  expect_invisible(plot(fa, which = "kernel"))
  fc <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = "cv",
              kernels = lapply(c(0.5, 5), rbf_kernel), cv_folds = 2, seed = 1)
  expect_output(print(summary(fc)), "Candidates (cross-validated accuracy):", fixed = TRUE)
  expect_output(print(summary(fc)), "RBF sigma = 0.5", fixed = TRUE)
  expect_invisible(plot(fc, which = "kernel"))
  fk <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = rbf_kernel(1))
  expect_error(plot(fk, which = "kernel"),
               "`which = \"kernel\"` needs a kmaha() fit whose kernel was chosen", fixed = TRUE)
})

test_that("bad input gives clear errors", {
  x <- iris[, 1:4]
  y <- iris$Species
  expect_error(kmaha(x, y, kernel = "rbf"),
               "`kernel` must be a kernel object such as rbf_kernel(1), one of",
               fixed = TRUE)
  expect_error(kmaha(x, y, learner = "svm"),
               "`learner` must be \"auto\", \"nca\", \"lmnn\", \"dne\", \"lfda\", \"rca\", \"mmc\", \"itml\" or a function", fixed = TRUE)
  expect_error(kmaha(x, y, k = 150), "`k` (150) must be smaller than the number of training rows (150).",
               fixed = TRUE)
  expect_error(kmaha(x, y, kernel = rbf_kernel(1), foo = 1),
               "Unknown argument(s) to kmaha(): 'foo'. Pass learner options in `learner_args`.",
               fixed = TRUE)
  expect_error(kmaha(x, y[-1]), "`y` has length 149 but `x` has 150 rows", fixed = TRUE)
  expect_error(kmaha(x, y, kernel = "cv", cv_folds = 1),
               "`cv_folds` must be a single whole number >= 2.", fixed = TRUE)
  expect_error(kmaha(x, y, kernel = rbf_kernel(1), learner = function(x, y) diag(3)),
               "The learner returned a map with 3 columns", fixed = TRUE)
  fit <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(1))
  expect_error(predict(fit, matrix(1, 3, 3)),
               "`newdata` has no column names, but the model was trained on named columns ('Sepal.Length', 'Sepal.Width', 'Petal.Length', 'Petal.Width').",
               fixed = TRUE)
  expect_error(predict(kmaha(unname(as.matrix(x)), y, learner = "dne",
                             kernel = rbf_kernel(1)), matrix(1, 3, 3)),
               "`newdata` has 3 columns but the model was trained on 4.", fixed = TRUE)
  expect_error(predict(fit, iris[1:3, 1:3]),
               "`newdata` lacks column(s) used in training: 'Petal.Width'.", fixed = TRUE)
})

test_that("a learner that does not converge in kmaha() names its options as kmaha() takes them", {
  x <- iris[, 1:4]
  w <- character()
  fit <- withCallingHandlers(
    kmaha(x, iris$Species, learner = "nca", kernel = "linear",
          learner_args = list(max_iter = 2)),
    warning = function(e) {
      w <<- c(w, conditionMessage(e))
      invokeRestart("muffleWarning")
    })
  expect_length(w, 1L)
  expect_match(w, "^nca\\(\\) did not converge within `learner_args\\$max_iter` = 2 iterations \\(")
  expect_match(w, "; raise `learner_args$max_iter` or loosen `learner_args$tol`.", fixed = TRUE)
  # the linear learner alone, as before
  expect_warning(nca(x, iris$Species, max_iter = 2), "; raise `max_iter` or loosen `tol`.$")
  expect_warning(kmaha(x, iris$Species, learner = "lmnn", kernel = "linear",
                       learner_args = list(max_iter = 1)),
                 "; raise `learner_args$max_iter` or loosen `learner_args$tol`.", fixed = TRUE)
  # a regression's MLKR
  set.seed(3)
  xr <- matrix(rnorm(60 * 3), 60, 3)
  yr <- xr[, 1] + 0.1 * rnorm(60)
  expect_warning(kmaha(xr, yr, kernel = "linear", learner_args = list(max_iter = 1)),
                 "mlkr() did not converge within `learner_args$max_iter` = 1 iterations", fixed = TRUE)
})
