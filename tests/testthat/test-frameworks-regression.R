# The frameworks in regression mode: each fit equals the direct kmaha() (or
# mlkr()) fit with the same arguments on the same rows.

reg_frame <- function(n = 60, seed = 11) {
  set.seed(seed)
  d <- data.frame(a = runif(n, -2, 2), b = runif(n, -2, 2), c = runif(n, -2, 2))
  d$y <- sin(2 * d$a) + 0.3 * d$b + 0.1 * rnorm(n)
  d
}
reg_kernels <- function() paper_kernels()[c(7, 9, 11)]

test_that("the parsnip engine in regression mode is kmaha() with a numeric outcome", {
  skip_without("parsnip")
  d <- reg_frame()
  tr <- 1:45
  spec <- parsnip::nearest_neighbor(neighbors = 5)
  spec <- parsnip::set_engine(spec, "kmaha", kernels = reg_kernels(), cv_folds = 3, seed = 1)
  spec <- parsnip::set_mode(spec, "regression")
  fit <- parsnip::fit(spec, y ~ ., data = d[tr, ])
  direct <- kmaha(y ~ ., data = d[tr, ], k = 5, kernels = reg_kernels(), cv_folds = 3, seed = 1)
  expect_s3_class(parsnip::extract_fit_engine(fit), "kmaha_regression")
  p <- predict(fit, d[-tr, ])
  expect_identical(names(p), ".pred")
  expect_equal(p$.pred, unname(predict(direct, d[-tr, ])))
  # the neighbours' weights are 1 / distance: "inv" is accepted, others refused
  inv <- parsnip::set_mode(parsnip::set_engine(
    parsnip::nearest_neighbor(neighbors = 5, weight_func = "inv"), "kmaha",
    kernel = "linear"), "regression")
  expect_equal(predict(parsnip::fit(inv, y ~ ., data = d[tr, ]), d[-tr, ])$.pred,
               unname(predict(kmaha(y ~ ., data = d[tr, ], k = 5, kernel = "linear"), d[-tr, ])))
  rect <- parsnip::set_mode(parsnip::set_engine(
    parsnip::nearest_neighbor(neighbors = 5, weight_func = "rectangular"), "kmaha"),
    "regression")
  expect_error(parsnip::fit(rect, y ~ ., data = d[tr, ]),
               "The kmaha engine's regression weights the k neighbours by 1 / distance (weight_func = \"inv\"); weight_func = \"rectangular\" is not available.",
               fixed = TRUE)
})

test_that("step_kmaha() with a numeric outcome embeds by MLKR, as kmaha() does", {
  skip_without("recipes")
  d <- reg_frame()
  rec <- recipes::recipe(y ~ ., data = d)
  rec <- step_kmaha(rec, recipes::all_numeric_predictors(), kernel = "linear", seed = 3)
  prepped <- recipes::prep(rec, training = d)
  baked <- recipes::bake(prepped, new_data = d[1:5, ])
  direct <- kmaha(d[, c("a", "b", "c")], d$y, learner = "mlkr", kernel = "linear", seed = 3)
  expect_equal(unname(as.matrix(baked[, grep("^kmaha_", names(baked))])),
               unname(predict(direct, d[1:5, c("a", "b", "c")], type = "transform")))
  expect_identical(recipes::tidy(prepped, number = 1)$learner[1], "mlkr")
  # a classifier's name with a numeric outcome: the error names `learner`
  bad <- step_kmaha(recipes::recipe(y ~ ., data = d), recipes::all_numeric_predictors(),
                    learner = "nca", kernel = "linear")
  expect_error(recipes::prep(bad, training = d),
               "`y` is numeric, so kmaha() fits a regression, which `learner = \"nca\"` cannot",
               fixed = TRUE)
})

test_that("mlr3's regr.kmaha is kmaha() on the task's rows", {
  skip_without("mlr3")
  d <- reg_frame()
  task <- mlr3::as_task_regr(d, target = "y", id = "toy")
  lrn <- mlr3::lrn("regr.kmaha", kernels = reg_kernels(), cv_folds = 3, seed = 1)
  expect_s3_class(lrn, "LearnerRegr")
  tr <- 1:45
  lrn$train(task, row_ids = tr)
  p <- lrn$predict(task, row_ids = 46:60)
  direct <- kmaha(d[tr, c("a", "b", "c")], d$y[tr], kernels = reg_kernels(), cv_folds = 3,
                  seed = 1)
  expect_equal(p$response, unname(predict(direct, d[46:60, c("a", "b", "c")])))
  expect_equal(p$truth, d$y[46:60])
  # a fixed kernel: another k reuses the fit, with its leave-one-out RMSE
  lin <- mlr3::lrn("regr.kmaha", kernel = "linear", k = 3)
  lin$train(task, row_ids = tr)
  lin$param_set$values$k <- 7L
  lin$train(task, row_ids = tr)
  direct7 <- kmaha(d[tr, c("a", "b", "c")], d$y[tr], kernel = "linear", learner = "mlkr", k = 7)
  expect_equal(lin$model$loo_rmse, direct7$loo_rmse)
  expect_equal(lin$predict(task, row_ids = 46:60)$response,
               unname(predict(direct7, d[46:60, c("a", "b", "c")])))
})

test_that("caret's mlkr and kmlkr models are regression models equal to direct fits", {
  d <- reg_frame()
  x <- as.matrix(d[, c("a", "b", "c")])
  tr <- 1:45
  m <- kmaha_caret("mlkr")
  expect_identical(m$type, "Regression")
  expect_null(m$prob)
  fit <- m$fit(x[tr, ], d$y[tr], param = data.frame(k = 3))
  expect_equal(m$predict(fit, x[-tr, ]), unname(predict(mlkr(x[tr, ], d$y[tr], k = 3), x[-tr, ])))
  # submodels: other k from the same fit
  sub <- m$predict(fit, x[-tr, ], submodels = data.frame(k = c(5, 7)))
  expect_equal(sub[[3]], unname(predict(mlkr(x[tr, ], d$y[tr], k = 7), x[-tr, ])))
  km <- kmaha_caret("kmlkr", max_iter = 50)
  g <- km$grid(x, d$y, len = 2)
  expect_identical(names(g), c("sigma", "k"))
  kfit <- suppressWarnings(km$fit(x[tr, ], d$y[tr], param = g[1, ]))
  direct <- suppressWarnings(kmaha(x[tr, ], d$y[tr], learner = "mlkr", kernel = rbf_kernel(g$sigma[1]),
                                   k = g$k[1], learner_args = list(max_iter = 50)))
  expect_equal(km$predict(kfit, x[-tr, ]), unname(predict(direct, x[-tr, ])))
  expect_error(kmaha_caret("mlkr", weights = "uniform"),
               "kmaha_caret(\"mlkr\"): the regression's neighbour weights are 1 / distance (kmaha()'s); `weights` cannot be set.",
               fixed = TRUE)
})
