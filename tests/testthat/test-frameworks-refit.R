# Every framework's fold results are those of a model a user can fit
# directly: kmaha() on the fold's training rows with the same arguments
# gives the same predictions, for every value of k tuned over.  At the
# default kernel = "auto" the kernel is chosen by k-NN votes with k, so a
# model fitted at one k cannot stand in for another (tune's submodels, the
# mlr3 learner's memory of fits); with a given kernel it can.

refit_kernels <- function() paper_kernels()[c(5, 9, 13, 17)]

# kmaha() at the default kernel choice on a fold's training rows.
auto_fit <- function(x, y, k) {
  kmaha(x, y, k = k, kernels = refit_kernels(), cv_folds = 3, seed = 1)
}

test_that("tune_grid()'s fold predictions are those of kmaha() fitted on the folds", {
  skip_without("parsnip", "workflows", "tune", "rsample", "yardstick")
  d <- balance_sample()
  feats <- setdiff(names(d), "class")
  set.seed(2)
  folds <- rsample::vfold_cv(d, v = 3, strata = "class")
  spec <- parsnip::nearest_neighbor(neighbors = parsnip::tune())
  spec <- parsnip::set_engine(spec, "kmaha", kernels = refit_kernels(), cv_folds = 3, seed = 1)
  spec <- parsnip::set_mode(spec, "classification")
  wf <- workflows::add_model(workflows::add_formula(workflows::workflow(), class ~ .), spec)
  ks <- c(1, 5, 10)
  res <- tune::tune_grid(wf, resamples = folds, grid = data.frame(neighbors = ks),
                         metrics = yardstick::metric_set(yardstick::accuracy),
                         control = tune::control_grid(save_pred = TRUE))
  preds <- tune::collect_predictions(res)
  expect_identical(nrow(preds), length(ks) * nrow(d))
  chosen <- list()
  for (i in seq_along(folds$splits)) {
    split <- folds$splits[[i]]
    tr <- rsample::analysis(split)
    te_rows <- rsample::complement(split)
    for (k in ks) {
      direct <- auto_fit(tr[, feats], tr$class, k)
      chosen[[sprintf("%d-%d", i, k)]] <- direct$kernel_choice$index
      p <- preds[preds$id == folds$id[i] & preds$neighbors == k, ]
      p <- p[order(p$.row), ]
      expect_identical(p$.row, sort(te_rows))
      expect_identical(as.character(p$.pred_class),
                       as.character(predict(direct, d[p$.row, feats])),
                       label = sprintf("fold %d, neighbors = %d", i, k))
    }
  }
  # the test has teeth: on some fold the kernel choice differs between the
  # values of k (a fit at one k predicting another would not be a real fit)
  by_fold <- split(unlist(chosen), sub("-.*", "", names(chosen)))
  expect_true(any(vapply(by_fold, function(v) length(unique(v)) > 1L, NA)))
})

test_that("the parsnip engine declares no submodel; multi_predict() refuses a k-dependent fit", {
  skip_without("parsnip")
  args <- parsnip::get_from_env("nearest_neighbor_args")
  args <- args[args$engine == "kmaha", ]
  expect_false(any(args$has_submodel))
  spec <- parsnip::set_mode(parsnip::set_engine(
    parsnip::nearest_neighbor(neighbors = 3), "kmaha", learner = "dne",
    kernels = paper_kernels()[c(9, 13)], cv_folds = 3, seed = 1), "classification")
  fit <- parsnip::fit(spec, Species ~ ., data = iris)
  expect_error(parsnip::multi_predict(fit, iris[1:3, ], neighbors = c(1, 3)),
               "multi_predict(): this kmaha fit chose its kernel by cross-validated votes of k = 3 neighbours",
               fixed = TRUE)
  # its own k is fine
  one <- parsnip::multi_predict(fit, iris[1:3, ])
  expect_identical(unique(do.call(rbind, one$.pred)$neighbors), 3L)
})

test_that("mlr3's resampled predictions are those of kmaha() fitted on the folds", {
  skip_without("mlr3", "paradox")
  d <- balance_sample()
  task <- mlr3::TaskClassif$new("balance", backend = d, target = "class")
  feats <- task$feature_names
  set.seed(2)
  cv <- mlr3::rsmp("cv", folds = 3)
  cv$instantiate(task)
  check_folds <- function(l, k, direct_fit) {
    l$param_set$values$k <- k
    utils::capture.output(rr <- mlr3::resample(task, l, cv))
    for (i in 1:3) {
      p <- rr$predictions()[[i]]
      direct <- direct_fit(d[cv$train_set(i), feats], d$class[cv$train_set(i)], k)
      expect_identical(as.character(p$response[order(p$row_ids)]),
                       as.character(predict(direct, d[sort(p$row_ids), feats])),
                       label = sprintf("fold %d, k = %d", i, k))
    }
  }
  # the default kernel choice: every k fitted anew (one learner object, so
  # its memory of fits is in play)
  l <- mlr3::lrn("classif.kmaha", kernels = refit_kernels(), cv_folds = 3, seed = 1)
  for (k in c(1, 5, 10)) check_folds(l, k, auto_fit)
  # a given kernel: the remembered fits serve every k, with the predictions
  # of fits at each k
  l2 <- mlr3::lrn("classif.kmaha", learner = "dne", kernel = rbf_kernel(2))
  for (k in c(1, 5, 10)) {
    check_folds(l2, k, function(x, y, k) kmaha(x, y, learner = "dne", kernel = rbf_kernel(2), k = k))
  }
  # a model whose kernel was chosen with k = 10 does not predict k = 1
  l$param_set$values$k <- 10
  l$train(task, row_ids = cv$train_set(1))
  l$param_set$values$k <- 1
  expect_error(l$predict(task, row_ids = cv$test_set(1)),
               "this model chose its kernel and learner by cross-validated votes of k = 10 neighbours, so it does not predict with k = 1; train it again with k = 1.",
               fixed = TRUE)
})

test_that("caret's resampled predictions are those of kmaha() fitted on the folds", {
  skip_if_not_installed("caret")
  d <- balance_sample()
  feats <- setdiff(names(d), "class")
  set.seed(2)
  index <- caret::createFolds(d$class, k = 3, returnTrain = TRUE)
  grid <- expand.grid(sigma = c(1, 4), targets = 3, k = c(1, 5, 9))
  tuned <- caret::train(d[, feats], d$class, method = kmaha_caret("kdne"), tuneGrid = grid,
                        trControl = caret::trainControl(method = "cv", index = index,
                                                        savePredictions = "all"))
  pred <- tuned$pred
  expect_identical(nrow(pred), nrow(grid) * nrow(d))
  for (fold in names(index)) {
    tr <- index[[fold]]
    for (sigma in unique(grid$sigma)) {
      for (k in unique(grid$k)) {
        p <- pred[pred$Resample == fold & pred$sigma == sigma & pred$k == k, ]
        p <- p[order(p$rowIndex), ]
        direct <- kmaha(d[tr, feats], d$class[tr], learner = "dne", kernel = rbf_kernel(sigma),
                        k = k, learner_args = list(k = 3))
        expect_identical(as.character(p$pred),
                         as.character(predict(direct, d[p$rowIndex, feats])),
                         label = sprintf("%s, sigma = %g, k = %d", fold, sigma, k))
      }
    }
  }
})

test_that("caret's \"auto\" model is kmaha()'s default fitted on each fold", {
  skip_if_not_installed("caret")
  d <- balance_sample()
  feats <- setdiff(names(d), "class")
  set.seed(3)
  index <- caret::createFolds(d$class, k = 3, returnTrain = TRUE)
  tuned <- caret::train(d[, feats], d$class, method = kmaha_caret("auto", seed = 1),
                        trControl = caret::trainControl(method = "cv", index = index,
                                                        savePredictions = "all"))
  pred <- tuned$pred
  expect_identical(nrow(pred), nrow(d))
  for (fold in names(index)) {
    tr <- index[[fold]]
    p <- pred[pred$Resample == fold, ]
    p <- p[order(p$rowIndex), ]
    direct <- kmaha(d[tr, feats], d$class[tr], seed = 1)
    expect_identical(as.character(p$pred),
                     as.character(predict(direct, d[p$rowIndex, feats])), label = fold)
  }
  # the final model is the default fit on every row
  expect_identical(predict(tuned$finalModel, as.matrix(d[, feats])),
                   predict(kmaha(d[, feats], d$class, seed = 1), d[, feats]))
})

test_that("framework fits record the call a user would write, not the data", {
  # (do.call() inlined every value: the training data were stored a second
  # time in the model's call)
  by_name <- function(m) {
    args <- as.list(m$call)[-1]
    expect_true(length(args) >= 2L)
    expect_true(all(vapply(args, is.name, NA)), label = deparse1(m$call))
    expect_lt(length(serialize(m$call, NULL)), 2000)
  }
  x <- iris[, 1:4]
  m <- kmaha:::call_by_name(kmaha, "kmaha", list(x = x, y = iris$Species, kernel = "linear",
                                                  learner = "dne"))
  by_name(m)
  expect_identical(predict(m, x), predict(kmaha(x, iris$Species, kernel = "linear",
                                                learner = "dne"), x))
  skip_without("mlr3")
  l <- mlr3::lrn("classif.kmaha", kernel = "linear", learner = "dne")
  l$train(mlr3::tsk("iris"))
  by_name(l$model)
  skip_without("caret")
  fit <- caret::train(x, iris$Species, method = kmaha_caret("dne"),
                      tuneGrid = data.frame(targets = 3, k = 1),
                      trControl = caret::trainControl(method = "none"))
  by_name(fit$finalModel)
  fit2 <- caret::train(x, iris$Species, method = kmaha_caret("auto"), kernel = "linear",
                       learner = "dne", trControl = caret::trainControl(method = "none"))
  by_name(fit2$finalModel)
  skip_without("recipes")
  rec <- recipes::prep(step_kmaha(recipes::recipe(Species ~ ., iris),
                                  recipes::all_predictors(), learner = "dne",
                                  kernel = "linear"))
  by_name(rec$steps[[1]]$object)
})
