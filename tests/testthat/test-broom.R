# broom verbs: each part of a tidy result equals the object it is taken
# from, computed independently here.

iris_x <- scale(as.matrix(iris[, 1:4]))
small_kernels <- lapply(c(0.5, 1, 5), rbf_kernel)

# Mean accuracy of each kernel column of a one-dataset, one-learner
# reproduction, in the summary's order.
res_means <- function(res) {
  vapply(c("linear", "unweighted"), function(k) mean(res$accuracy[res$kernel == k]), 0)
}

test_that("tidy() of a model gives the map, the dimensions and the embedding in long form", {
  fit <- nca(Species ~ ., data = iris, dim = 2, max_iter = 30)
  L <- coef(fit)
  t <- tidy(fit, matrix = "map")
  expect_identical(names(t), c("dimension", "term", "value", "input_value"))
  expect_identical(nrow(t), length(L))
  back <- matrix(t$value, nrow(L), dimnames = list(levels(t$dimension), levels(t$term)))
  expect_identical(back, L)
  # The input weights are the map on the unscaled inputs.
  A <- matrix(t$input_value, nrow(L))
  expect_equal(A, unname(transform_matrix(fit)))
  expect_equal(A, unname(sweep(L, 2, apply(iris[, 1:4], 2, sd), "/")))

  d <- tidy(fit, matrix = "dimensions")
  z <- fit$embedding
  expect_equal(d$std.dev, unname(apply(z, 2, sd)))
  expect_equal(sum(d$percent), 1)
  expect_equal(d$percent, unname(apply(z, 2, var) / sum(apply(z, 2, var))))
  expect_equal(d$cumulative, cumsum(d$percent))
  expect_equal(d$norm, unname(sqrt(rowSums(L^2))))

  e <- tidy(fit, matrix = "embedding")
  expect_identical(matrix(e$value, nrow(z)), unname(z))
  expect_identical(as.character(e$dimension), rep(colnames(z), each = nrow(z)))
})

test_that("tidy() of kernel fits names the coordinates the map reads", {
  kfit <- kmaha(iris_x, iris$Species, learner = "dne", kernel = rbf_kernel(1), rank = 5)
  t <- tidy(kfit, matrix = "map")
  expect_identical(levels(t$term), paste0("PC", 1:5))
  expect_true(all(is.na(t$input_value)))
  expect_identical(matrix(t$value, nrow(coef(kfit))), unname(coef(kfit)))
  idx <- c(1:15, 51:65, 101:115)
  ktrick <- kdne(iris_x[idx, ], iris$Species[idx], kernel = rbf_kernel(1), dim = 2)
  tk <- tidy(ktrick, matrix = "map")
  expect_identical(nlevels(tk$term), length(idx))
  expect_true(all(is.na(tk$input_value)))
})

test_that("glance() of a model is one row with what it was fitted with", {
  # stopped early on purpose: glance() reports it
  fit <- suppressWarnings(lmnn(Species ~ ., data = iris, max_iter = 5))
  g <- glance(fit)
  expect_identical(nrow(g), 1L)
  expect_identical(g$n, 150L)
  expect_identical(g$classes, 3L)
  expect_identical(g$inputs, 4L)
  expect_identical(g$learner, "LMNN")
  expect_identical(g$feature_map, "identity")
  expect_true(is.na(g$kernel))
  expect_true(is.na(g$cv_accuracy))
  expect_identical(g$train_accuracy, fit$train_accuracy)
  expect_identical(g$objective, fit$convergence$objective)
  expect_false(g$converged)
  expect_identical(g$iterations, fit$convergence$iterations)
  expect_identical(g$dimension, nrow(coef(fit)))

  kfit <- kmaha(iris_x, iris$Species, learner = "dne", kernel = "cv",
                kernels = small_kernels, cv_folds = 3, seed = 5)
  gk <- glance(kfit)
  cv <- kfit$kernel_choice$cv
  expect_identical(gk$learner, "KDNE")
  expect_identical(gk$kernel_choice, "cv")
  expect_identical(gk$kernel, sprintf("RBF sigma = %s", format(cv$curve$sigma[cv$best])))
  expect_equal(gk$cv_accuracy, mean(cv$accuracy[cv$best, ]))
  expect_equal(gk$cv_sd, sd(cv$accuracy[cv$best, ]))
  expect_identical(gk$coordinates, ncol(coef(kfit)))
})

test_that("augment() appends leave-one-out or new predictions, vote fractions and coordinates", {
  fit <- dne(Species ~ ., data = iris, k = 3)
  a <- augment(fit, k = 5)
  expect_identical(nrow(a), 150L)
  expect_identical(a$Species, iris$Species)
  expect_identical(augment(fit)$.pred_class, fitted(fit))
  expect_identical(a$.pred_class, predict(fit, k = 5))
  prob <- predict(fit, type = "prob", k = 5)
  for (cl in levels(iris$Species)) expect_identical(a[[paste0(".pred_", cl)]], unname(prob[, cl]))
  expect_equal(a$.pred_setosa + a$.pred_versicolor + a$.pred_virginica, rep(1, 150))
  dim_cols <- paste0(".", colnames(fit$embedding))
  expect_identical(unname(as.matrix(a[dim_cols])), unname(fit$embedding))

  new <- iris[c(2, 60, 140), ]
  an <- augment(fit, newdata = new)
  expect_identical(an$.pred_class, predict(fit, new))
  expect_equal(unname(as.matrix(an[dim_cols])), unname(predict(fit, new, type = "transform")))
  # a tibble, as broom's methods give; the data's row names in .rownames
  expect_s3_class(an, "tbl_df")
  expect_identical(an$.rownames, rownames(new))
  expect_identical(names(an)[1:2], c(".rownames", "Sepal.Length"))
  # row names 1, ..., n are not kept
  expect_false(".rownames" %in% names(augment(fit)))
  for (verb in list(tidy, glance)) expect_s3_class(verb(fit), "tbl_df")

  # a matrix fit without data gives the training labels
  m <- dne(iris_x, iris$Species)
  am <- augment(m)
  expect_identical(am$.class, iris$Species)
  expect_identical(augment(m, data = iris)$Sepal.Length, iris$Sepal.Length)
  expect_error(augment(m, data = iris[1:10, ]),
               "`data` must be the training data of the fit (150 rows), not 10 rows; for other rows use `newdata`.",
               fixed = TRUE)
})

test_that("augment() of an na.exclude fit lines up with its model frame and with the full data", {
  d <- iris
  d$Sepal.Length[c(3, 77)] <- NA
  f <- dne(Species ~ ., data = d, k = 2, na.action = na.exclude)
  a <- augment(f)
  expect_identical(nrow(a), 148L)
  expect_identical(a$.pred_class, fitted(f)[-c(3, 77)])
  full <- augment(f, data = d)
  expect_identical(nrow(full), 150L)
  expect_true(all(is.na(full$.pred_class[c(3, 77)])))
})

test_that("tidy() and glance() of a cross-validation", {
  cv <- cv_kernel(iris_x, iris$Species, "dne", small_kernels, folds = 3, seed = 1,
                  strategy = "exhaustive")
  t <- tidy(cv)
  expect_identical(nrow(t), 3L)
  expect_equal(t$mean, unname(rowMeans(cv$accuracy)))
  expect_equal(t$sd, unname(apply(cv$accuracy, 1, sd)))
  expect_equal(t$std.error, t$sd / sqrt(3))
  expect_identical(t$folds, c(3L, 3L, 3L))
  expect_identical(which(t$chosen), cv$best)
  expect_identical(t$sigma, c(0.5, 1, 5))
  g <- glance(cv)
  expect_identical(g$fits, 9L)
  expect_identical(g$failed_fits, 0L)
  expect_identical(g$chosen, t$candidate[t$chosen])
  expect_identical(g$accuracy, t$mean[t$chosen])
  expect_identical(g$strategy, "exhaustive")
})

test_that("tidy() and glance() of a kernel alignment", {
  al <- align_kernels(iris_x, iris$Species, small_kernels)
  t <- tidy(al)
  expect_identical(t$weight, al$weights)
  expect_equal(sum(t$share), 1)
  expect_equal(t$share, al$gamma / sum(al$gamma))
  expect_identical(t$alignment, al$base_alignment)
  g <- glance(al)
  expect_identical(g$alignment, al$alignment)
  expect_identical(g$nonzero, sum(al$weights > 0))
  expect_identical(g$kernels, 3L)
})

test_that("tidy(), glance() and augment() of a kernel PCA", {
  kp <- kpca(iris_x[1:100, ], rbf_kernel(1), rank = 4)
  t <- tidy(kp)
  expect_identical(t$eigenvalue, kp$eigenvalues)
  expect_equal(t$percent, kp$eigenvalues / kp$trace)
  tc <- tidy(kp, matrix = "coords")
  expect_identical(matrix(tc$value, 100), unname(kp$coords))
  expect_equal(glance(kp)$variance_kept, sum(kp$eigenvalues) / kp$trace)
  a <- augment(kp, newdata = iris_x[101:103, ])
  expect_equal(unname(as.matrix(a[paste0(".PC", 1:4)])), unname(predict(kp, iris_x[101:103, ])))
  expect_identical(augment(kp, data = iris[1:100, ])$Species, iris$Species[1:100])
})

test_that("tidy() and glance() of a reproduction agree with its summary", {
  res <- reproduce_paper(datasets = "iris", learners = "dne",
                         kernels = c("linear", "unweighted"), splits = 3)
  t <- tidy(res)
  s <- summary(res)
  expect_identical(t$mean, s$mean)
  expect_identical(t$paper_mean, s$paper_mean)
  expect_identical(t$versus_linear, s$versus_linear)
  g <- glance(res)
  expect_identical(g$cells, 6L)
  expect_identical(g$splits, 3L)
  expect_equal(g$mean_abs_difference, mean(abs(res_means(res) - s$paper_mean)))
  expect_identical(g$win + g$draw + g$lose, sum(!is.na(s$versus_linear)))
})

test_that("broom's generics dispatch to the same methods", {
  skip_if_not_installed("broom")
  fit <- dne(iris_x, iris$Species)
  expect_identical(broom::tidy(fit), tidy(fit))
  expect_identical(broom::glance(fit), glance(fit))
})

test_that("bad arguments to the broom verbs are errors that name them", {
  fit <- dne(iris_x, iris$Species)
  expect_error(tidy(fit, matrix = "loadings"),
               "`matrix` must be one of \"dimensions\", \"map\", \"embedding\".", fixed = TRUE)
  expect_error(tidy(fit, what = 1), "Unknown argument(s) to tidy(): 'what'.", fixed = TRUE)
  expect_error(glance(fit, 2), "Unknown argument(s) to glance(): <unnamed>.", fixed = TRUE)
  expect_error(augment(fit, k = 0), "`k` must be", fixed = TRUE)
  expect_error(augment(fit, data = 1:3), "`data` must be a data frame or a matrix.", fixed = TRUE)
})
