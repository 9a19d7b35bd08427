# The mlr3 learner (issue 27): tuning k reuses the fits, ranges keep k and
# sigma numeric in $result, kmaha's defaults, sigma > 0 and the threads tag.

# Counts the fits made by kmaha.default() while `code` runs.
count_fits <- function(code) {
  n <- 0L
  env <- environment()
  suppressMessages(trace("kmaha.default", where = asNamespace("kmaha"),
                         tracer = bquote(assign("n", get("n", envir = .(env)) + 1L,
                                                envir = .(env))),
                         print = FALSE))
  on.exit(suppressMessages(untrace("kmaha.default", where = asNamespace("kmaha"))))
  force(code)
  n
}

# mlr3 and bbotk log their progress to the console.
quietly <- function(code) {
  utils::capture.output(value <- code)
  value
}

test_that("tuning k with a fixed kernel fits once per fold, with the scores of fresh fits", {
  skip_without("mlr3", "paradox", "mlr3tuning")
  task <- mlr3::tsk("iris")
  run <- function() {
    learner <- mlr3::lrn("classif.kmaha", learner = "dne", kernel = rbf_kernel(1),
                         k = paradox::to_tune(c(1, 3, 5, 7)))
    set.seed(1)
    inst <- quietly(mlr3tuning::tune(mlr3tuning::tnr("grid_search"), task, learner,
                                     mlr3::rsmp("cv", folds = 3), mlr3::msr("classif.acc")))
    a <- as.data.frame(inst$archive$data)
    a[order(as.numeric(a$k)), c("k", "classif.acc")]
  }
  n_reuse <- count_fits(reused <- run())
  expect_identical(n_reuse, 3L)                # 4 values of k x 3 folds
  op <- options(kmaha.mlr3_cache = 0)
  on.exit(options(op), add = TRUE)
  n_fresh <- count_fits(fresh <- run())
  expect_identical(n_fresh, 12L)
  expect_identical(reused, fresh)
})

test_that("a reused fit predicts as a direct kmaha() fit with the new k", {
  skip_without("mlr3", "paradox")
  task <- mlr3::TaskClassif$new("iris", backend = iris, target = "Species")
  tr <- seq(1, 150, by = 2)
  te <- seq(2, 150, by = 2)
  x <- iris[, task$feature_names]
  l <- mlr3::lrn("classif.kmaha", learner = "dne", kernel = rbf_kernel(1), k = 1)
  n <- count_fits({
    l$train(task, row_ids = tr)
    l$param_set$values$k <- 5
    l$train(task, row_ids = tr)
  })
  expect_identical(n, 1L)
  direct <- kmaha(x[tr, ], iris$Species[tr], learner = "dne", kernel = rbf_kernel(1), k = 5)
  expect_identical(l$model$k, 5L)
  expect_identical(l$model$train_accuracy, direct$train_accuracy)
  expect_identical(as.character(l$predict(task, row_ids = te)$response),
                   as.character(predict(direct, x[te, ])))
  # other rows, other parameters or another learner object: a new fit
  l2 <- l$clone(deep = TRUE)
  n <- count_fits({
    l$train(task, row_ids = te)
    l$param_set$values$kernel <- rbf_kernel(2)
    l$train(task, row_ids = te)
    mlr3::lrn("classif.kmaha", learner = "dne", kernel = rbf_kernel(1))$train(task, row_ids = tr)
  })
  expect_identical(n, 3L)
  # a clone shares the memory of its learner
  expect_identical(count_fits(l2$train(task, row_ids = tr)), 0L)
})

test_that("with a kernel chosen by cross-validation, k enters the fit: no reuse", {
  skip_without("mlr3", "paradox")
  task <- mlr3::TaskClassif$new("iris", backend = iris, target = "Species")
  l <- mlr3::lrn("classif.kmaha", learner = "dne", kernel = "cv",
                 kernels = lapply(c(0.5, 2), rbf_kernel), cv_folds = 3, seed = 1, k = 1)
  n <- count_fits({
    l$train(task)
    m1 <- l$model
    l$param_set$values$k <- 7
    l$train(task)
  })
  expect_identical(n, 2L)
  expect_identical(m1$kernel_choice$cv$k, 1L)
  expect_identical(l$model$kernel_choice$cv$k, 7L)
})

test_that("the memory keeps the most recent fits up to its size", {
  skip_without("mlr3", "paradox")
  task <- mlr3::TaskClassif$new("iris", backend = iris, target = "Species")
  l <- mlr3::lrn("classif.kmaha", learner = "dne", k = 1)
  op <- options(kmaha.mlr3_cache = 1e-9)           # room for the newest fit only
  on.exit(options(op), add = TRUE)
  n <- count_fits({
    l$param_set$values$sigma <- 1
    l$train(task)                                  # fit
    l$param_set$values$k <- 3
    l$train(task)                                  # reused
    l$param_set$values$sigma <- 2
    l$train(task)                                  # fit; forgets sigma = 1
    l$param_set$values$sigma <- 1
    l$train(task)                                  # fit again
  })
  expect_identical(n, 3L)
  options(kmaha.mlr3_cache = -1)
  expect_error(l$train(task),
               "The option `kmaha.mlr3_cache` must be a size in MB >= 0 (0: every training fits anew), not -1.",
               fixed = TRUE)
})

test_that("ranges keep k and sigma numeric in $result", {
  skip_without("mlr3", "paradox", "mlr3tuning")
  learner <- mlr3::lrn("classif.kmaha", learner = "dne", k = paradox::to_tune(1, 5),
                       sigma = paradox::to_tune(0.5, 2))
  set.seed(2)
  n <- count_fits(tuned <- quietly(mlr3tuning::tune(
    mlr3tuning::tnr("grid_search", resolution = 3), mlr3::tsk("iris"), learner,
    mlr3::rsmp("cv", folds = 3), mlr3::msr("classif.acc"))))
  expect_identical(n, 9L)                       # 3 sigmas x 3 folds, for 27 scores
  expect_true(is.numeric(tuned$result$k))
  expect_true(is.numeric(tuned$result$sigma))
  a <- tuned$archive$data
  expect_setequal(unique(a$k), c(1, 3, 5))
  expect_setequal(unique(a$sigma), c(0.5, 1.25, 2))
})

test_that("the parameters have kmaha()'s defaults, sigma must be positive, threads are tagged", {
  skip_without("mlr3", "paradox")
  l <- mlr3::lrn("classif.kmaha")
  d <- l$param_set$default
  expect_identical(d$kernel, "auto")
  expect_identical(d$kernels, paper_kernels())
  expect_null(d$k)
  expect_identical(d$learner, "auto")
  expect_error(l$param_set$set_values(sigma = 0), "sigma")
  expect_error(l$param_set$set_values(sigma = -1), "sigma")
  l$param_set$set_values(sigma = 1e-3)
  expect_identical(l$param_set$values$sigma, 1e-3)
  expect_identical(l$param_set$ids(tags = "threads"), "num_threads")
  mlr3::set_threads(l, 1L)
  expect_identical(l$param_set$values$num_threads, 1L)
  # the thread count reaches kmaha() (an invalid one is its error)
  task <- mlr3::TaskClassif$new("iris", backend = iris, target = "Species")
  l2 <- mlr3::lrn("classif.kmaha", learner = "dne", kernel = "linear")
  l2$param_set$values$num_threads <- 1L
  l2$train(task)
  expect_s3_class(l2$model, "kmaha_model")
})
