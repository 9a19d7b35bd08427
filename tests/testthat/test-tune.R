# tidymodels end to end: workflows with the parsnip engine and step_kmaha()
# tuned by tune::tune_grid() over resamples agree with direct kmaha() fits on
# the same resamples.

tidy_pkgs <- c("parsnip", "recipes", "workflows", "tune", "rsample",
               "yardstick", "dials")

# Accuracy of a direct kmaha() fit on each resample's analysis set, on its
# assessment set, averaged over the resamples (as tune does).
direct_cv_accuracy <- function(folds, outcome, fit_predict) {
  acc <- vapply(folds$splits, function(split) {
    tr <- rsample::analysis(split)
    te <- rsample::assessment(split)
    mean(fit_predict(tr, te) == te[[outcome]])
  }, 0)
  mean(acc)
}

test_that("tune_grid() over neighbors on a UCI set agrees with direct fits", {
  skip_without(tidy_pkgs)
  d <- balance_sample()
  set.seed(2)
  folds <- rsample::vfold_cv(d, v = 3, strata = "class")
  spec <- parsnip::nearest_neighbor(neighbors = parsnip::tune())
  spec <- parsnip::set_engine(spec, "kmaha", learner = "nca", kernel = rbf_kernel(1),
                              learner_args = list(max_iter = 50))
  spec <- parsnip::set_mode(spec, "classification")
  wf <- workflows::add_model(workflows::add_formula(workflows::workflow(), class ~ .), spec)
  res <- tune::tune_grid(wf, resamples = folds,
                         grid = data.frame(neighbors = c(1, 3, 5, 7)),
                         metrics = yardstick::metric_set(yardstick::accuracy))
  m <- tune::collect_metrics(res)
  m <- m[order(m$neighbors), ]
  expect_identical(as.integer(m$neighbors), c(1L, 3L, 5L, 7L))
  expect_identical(unique(m$n), 3L)
  for (k in c(1, 3, 5, 7)) {
    manual <- direct_cv_accuracy(folds, "class", function(tr, te) {
      fit <- kmaha(tr[, 1:4], tr$class, learner = "nca", kernel = rbf_kernel(1), k = k,
                   learner_args = list(max_iter = 50))
      predict(fit, te[, 1:4])
    })
    expect_equal(m$mean[m$neighbors == k], manual, label = sprintf("accuracy at k = %d", k))
  }
  expect_gt(max(m$mean), 0.8)
  # the chosen model refits and predicts
  best <- tune::select_best(res, metric = "accuracy")
  final <- parsnip::fit(tune::finalize_workflow(wf, best), data = d)
  expect_s3_class(predict(final, d[1:5, ])$.pred_class, "factor")
})

test_that("tune_grid() tunes step_kmaha()'s learner and kernel on iris", {
  skip_without(tidy_pkgs)
  set.seed(4)
  folds <- rsample::vfold_cv(iris, v = 3, strata = "Species")
  rec <- recipes::recipe(Species ~ ., data = iris)
  rec <- step_kmaha(rec, recipes::all_numeric_predictors(),
                    learner = parsnip::tune(), sigma = parsnip::tune())
  # plain 1-NN in the learned coordinates: the identity map, no kernel
  knn_only <- function(x, y) diag(ncol(x))
  spec <- parsnip::nearest_neighbor(neighbors = 1)
  spec <- parsnip::set_engine(spec, "kmaha", learner = knn_only, kernel = "linear",
                              scale = FALSE)
  spec <- parsnip::set_mode(spec, "classification")
  wf <- workflows::add_model(workflows::add_recipe(workflows::workflow(), rec), spec)
  params <- tune::extract_parameter_set_dials(wf)
  expect_setequal(params$id, c("learner", "sigma"))
  grid <- expand.grid(learner = c("nca", "dne"), sigma = c(0.5, 2),
                      stringsAsFactors = FALSE)
  res <- tune::tune_grid(wf, resamples = folds, grid = grid,
                         metrics = yardstick::metric_set(yardstick::accuracy))
  m <- tune::collect_metrics(res)
  expect_identical(nrow(m), 4L)
  for (i in seq_len(nrow(grid))) {
    manual <- direct_cv_accuracy(folds, "Species", function(tr, te) {
      fit <- kmaha(tr[, 1:4], tr$Species, learner = grid$learner[i],
                   kernel = rbf_kernel(grid$sigma[i]), k = 1)
      predict(fit, te[, 1:4])
    })
    got <- m$mean[m$learner == grid$learner[i] & m$sigma == grid$sigma[i]]
    expect_equal(got, manual, label = sprintf("accuracy of %s, sigma = %g",
                                              grid$learner[i], grid$sigma[i]))
  }
  expect_gt(min(m$mean), 0.85)
})

test_that("tune_grid() fits every value of neighbors on every resample (no submodel)", {
  skip_without(tidy_pkgs)
  fits <- 0L
  # the identity map after KPCA, counting its calls
  counting <- function(x, y) {
    fits <<- fits + 1L
    diag(ncol(x))
  }
  spec <- parsnip::nearest_neighbor(neighbors = parsnip::tune())
  spec <- parsnip::set_engine(spec, "kmaha", learner = counting, kernel = rbf_kernel(1))
  spec <- parsnip::set_mode(spec, "classification")
  set.seed(5)
  folds <- rsample::vfold_cv(iris, v = 3, strata = "Species")
  res <- tune::tune_grid(workflows::add_model(
                           workflows::add_formula(workflows::workflow(), Species ~ .), spec),
                         resamples = folds, grid = data.frame(neighbors = c(1, 3, 5, 9)),
                         metrics = yardstick::metric_set(yardstick::accuracy))
  # neighbors is no submodel: each value is a model of its own, as the
  # default's metric depends on k (3 resamples x 4 values)
  expect_identical(fits, 12L)
  expect_identical(nrow(tune::collect_metrics(res)), 4L)
})
