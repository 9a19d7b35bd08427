# The mlr3 learner "classif.kmaha".

test_that("the learner is in mlr3's dictionary with its parameters", {
  skip_without("mlr3", "paradox")
  expect_true("classif.kmaha" %in% mlr3::mlr_learners$keys())
  l <- mlr3::lrn("classif.kmaha")
  expect_s3_class(l, "LearnerClassif")
  expect_setequal(l$predict_types, c("response", "prob"))
  expect_true(all(c("k", "learner", "kernel", "sigma", "learner_args", "kernels",
                    "cv_folds", "rank", "seed", "landmarks") %in% l$param_set$ids()))
  expect_error(l$param_set$values$learner <- "svm", "must be \"auto\", \"nca\", \"lmnn\", \"dne\"")
  l$param_set$values$learner <- "auto"
  expect_error(l$param_set$values$k <- 0, "k")
})

test_that("train and predict agree exactly with a direct kmaha() fit", {
  skip_without("mlr3", "paradox")
  task <- mlr3::TaskClassif$new("iris", backend = iris, target = "Species")
  tr <- seq(1, 150, by = 2)
  te <- seq(2, 150, by = 2)
  l <- mlr3::lrn("classif.kmaha", learner = "dne", kernel = rbf_kernel(1), k = 3,
                 predict_type = "prob")
  l$train(task, row_ids = tr)
  p <- l$predict(task, row_ids = te)
  x <- iris[, task$feature_names]
  direct <- kmaha(x[tr, ], iris$Species[tr], learner = "dne", kernel = rbf_kernel(1), k = 3)
  expect_identical(as.character(p$response), as.character(predict(direct, x[te, ])))
  expect_equal(unname(p$prob[, levels(iris$Species)]),
               unname(predict(direct, x[te, ], type = "prob")))
  expect_identical(class(l$model), class(direct))
  # k is a predict-time parameter: changing it needs no refit
  l$param_set$values$k <- 5
  p5 <- l$predict(task, row_ids = te)
  expect_identical(as.character(p5$response), as.character(predict(direct, x[te, ], k = 5)))
  # sigma replaces the kernel by rbf_kernel(sigma)
  l2 <- mlr3::lrn("classif.kmaha", learner = "dne", sigma = 1, k = 3)
  l2$train(task, row_ids = tr)
  expect_identical(as.character(l2$predict(task, row_ids = te)$response),
                   as.character(predict(direct, x[te, ])))
})

test_that("resample() on a UCI set agrees with direct fits on the same folds", {
  skip_without("mlr3", "paradox")
  b <- balance_sample()
  task <- mlr3::TaskClassif$new("balance", backend = b, target = "class")
  l <- mlr3::lrn("classif.kmaha", learner = "nca", kernel = rbf_kernel(2.5), k = 3,
                 learner_args = list(max_iter = 50))
  set.seed(7)
  cv <- mlr3::rsmp("cv", folds = 3)
  cv$instantiate(task)
  # (capture.output: mlr3 logs its progress to the console)
  utils::capture.output(rr <- mlr3::resample(task, l, cv))
  ce <- rr$score(mlr3::msr("classif.ce"))$classif.ce
  feats <- task$feature_names
  for (i in 1:3) {
    tr <- cv$train_set(i)
    te <- cv$test_set(i)
    direct <- kmaha(b[tr, feats], b$class[tr], learner = "nca", kernel = rbf_kernel(2.5),
                    k = 3, learner_args = list(max_iter = 50))
    expect_equal(ce[i], mean(predict(direct, b[te, feats]) != b$class[te]),
                 label = sprintf("error on fold %d", i))
  }
  expect_lt(rr$aggregate(mlr3::msr("classif.ce")), 0.2)
})

test_that("mlr3tuning tunes k and sigma; the archive agrees with direct fits", {
  skip_without("mlr3", "paradox", "mlr3tuning", "bbotk")
  task <- mlr3::TaskClassif$new("iris", backend = iris, target = "Species")
  l <- mlr3::lrn("classif.kmaha", learner = "dne",
                 k = paradox::to_tune(c(1L, 5L)),
                 sigma = paradox::to_tune(c(0.5, 2)))
  set.seed(8)
  holdout <- mlr3::rsmp("holdout", ratio = 0.6)
  holdout$instantiate(task)
  utils::capture.output(
    inst <- mlr3tuning::tune(tuner = mlr3tuning::tnr("grid_search"), task = task,
                             learner = l, resampling = holdout,
                             measures = mlr3::msr("classif.ce")))
  arch <- as.data.frame(inst$archive$data)
  expect_identical(nrow(arch), 4L)
  tr <- holdout$train_set(1)
  te <- holdout$test_set(1)
  x <- iris[, task$feature_names]
  for (i in seq_len(nrow(arch))) {
    k <- as.integer(as.character(arch$k[i]))
    sigma <- as.numeric(as.character(arch$sigma[i]))
    direct <- kmaha(x[tr, ], iris$Species[tr], learner = "dne",
                    kernel = rbf_kernel(sigma), k = k)
    expect_equal(arch$classif.ce[i], mean(predict(direct, x[te, ]) != iris$Species[te]),
                 label = sprintf("error at k = %d, sigma = %g", k, sigma))
  }
  expect_equal(inst$result$classif.ce, min(arch$classif.ce))
})

test_that("the learner is registered whichever package loads first, and removed on unload", {
  skip_without("mlr3", "callr")
  for (order in list(c("kmaha", "mlr3"), c("mlr3", "kmaha"))) {
    keys <- callr::r(function(order) {
      for (p in order) loadNamespace(p)
      before <- "classif.kmaha" %in% mlr3::mlr_learners$keys()
      unloadNamespace("kmaha")
      c(before, "classif.kmaha" %in% mlr3::mlr_learners$keys())
    }, args = list(order = order))
    expect_identical(keys, c(TRUE, FALSE), label = paste(order, collapse = " then "))
  }
})
