# step_kmaha(): the supervised embedding as a recipe step.

# vars(Species) without dplyr: a list of quosures, else the name.
outcome_vars <- function() {
  if (requireNamespace("rlang", quietly = TRUE)) rlang::quos(Species) else "Species"
}

test_that("bake() gives predict(type = \"transform\") of the direct kmaha() fit", {
  skip_without("recipes")
  s <- iris_split()
  rec <- recipes::recipe(Species ~ ., data = s$train)
  rec <- step_kmaha(rec, recipes::all_numeric_predictors(), learner = "dne",
                    kernel = rbf_kernel(1), num_comp = 2, seed = 1)
  prepped <- recipes::prep(rec, training = s$train)
  baked <- recipes::bake(prepped, new_data = s$test)
  expect_identical(names(baked), c("Species", "kmaha_1", "kmaha_2"))
  direct <- kmaha(s$train[, 1:4], s$train$Species, learner = "dne",
                  kernel = rbf_kernel(1), learner_args = list(dim = 2))
  expect_equal(unname(as.matrix(baked[, c("kmaha_1", "kmaha_2")])),
               unname(predict(direct, s$test[, 1:4], type = "transform")))
  expect_identical(baked$Species, s$test$Species)
  # the training data too (bake(new_data = NULL))
  juiced <- recipes::bake(prepped, new_data = NULL)
  expect_equal(unname(as.matrix(juiced[, 2:3])),
               unname(predict(direct, s$train[, 1:4], type = "transform")))
})

test_that("the embedding agrees with kmaha() on a UCI set and separates it", {
  skip_without("recipes")
  b <- balance_sample()
  test <- kmaha_data("balance", path = NULL)[seq(3, 625, by = 5), ]
  rec <- recipes::recipe(class ~ ., data = b)
  rec <- step_kmaha(rec, recipes::all_numeric_predictors(), learner = "lmnn",
                    sigma = 1, learner_args = list(max_iter = 200))
  baked <- recipes::bake(recipes::prep(rec), new_data = test)
  direct <- kmaha(b[, 1:4], b$class, learner = "lmnn", kernel = rbf_kernel(1),
                  learner_args = list(max_iter = 200))
  z <- as.matrix(baked[, grep("^kmaha_", names(baked))])
  expect_equal(unname(z), unname(predict(direct, test[, 1:4], type = "transform")))
  # 1-NN on the baked coordinates is kmaha's own 1-NN prediction
  train_z <- predict(direct, b[, 1:4], type = "transform")
  nn <- apply(z, 1, function(q) which.min(colSums((t(train_z) - q)^2)))
  expect_gt(mean(b$class[nn] == predict(direct, test[, 1:4])), 0.97)
  expect_gt(mean(b$class[nn] == test$class), 0.8)
})

test_that("keep_original_cols, prefix and the outcome are honoured", {
  skip_without("recipes")
  rec <- recipes::recipe(Species ~ ., data = iris)
  kept <- recipes::prep(step_kmaha(rec, Sepal.Length, Sepal.Width,
                                   learner = "dne", kernel = "linear",
                                   keep_original_cols = TRUE, prefix = "m"))
  out <- recipes::bake(kept, new_data = iris[1:5, ])
  expect_identical(names(out), c(names(iris), "m1", "m2"))
  # outcome by name, by vars() and from the recipe's role give one fit
  z <- lapply(list(NULL, "Species", outcome_vars()), function(o) {
    r <- step_kmaha(rec, recipes::all_numeric_predictors(), outcome = o,
                    learner = "dne", kernel = "linear")
    recipes::bake(recipes::prep(r), new_data = iris[1:5, ])
  })
  expect_identical(z[[1]], z[[2]])
  expect_identical(z[[1]], z[[3]])
})

test_that("bad outcomes and arguments give clear errors", {
  skip_without("recipes")
  rec <- recipes::recipe(Species ~ ., data = iris)
  expect_error(recipes::prep(step_kmaha(rec, recipes::all_numeric_predictors(),
                                        outcome = "Species2")),
               "`outcome` must name one column of the training data")
  expect_error(recipes::prep(step_kmaha(rec, recipes::all_predictors(),
                                        outcome = "Sepal.Length")),
               "the outcome `Sepal.Length` is among the selected predictors")
  rec2 <- recipes::recipe(~ ., data = iris)
  expect_error(recipes::prep(step_kmaha(rec2, recipes::all_numeric())),
               "the recipe has 0 outcome columns")
  d <- iris
  d$y <- as.Date("2020-01-01") + seq_len(nrow(d))
  rec3 <- recipes::recipe(y ~ Sepal.Length + Sepal.Width, data = d)
  expect_error(recipes::prep(step_kmaha(rec3, recipes::all_predictors())),
               "step_kmaha(): the outcome `y` must be a factor (class labels) or numeric (a regression), not Date.",
               fixed = TRUE)
  expect_error(step_kmaha(rec, recipes::all_predictors(), options = list(seed = 3)),
               "`options` must not set `seed`")
  expect_error(step_kmaha(rec, recipes::all_predictors(), options = list(3)),
               "`options` must be a named list")
  expect_error(step_kmaha(rec, recipes::all_predictors(), seed = "a"),
               "`seed` must be one number")
})

test_that("the seed makes prep() reproducible and leaves the session's RNG alone", {
  skip_without("recipes")
  rec <- recipes::recipe(Species ~ ., data = iris)
  rec <- step_kmaha(rec, recipes::all_numeric_predictors(), learner = "dne",
                    kernel = "cv", seed = 11,
                    options = list(kernels = paper_kernels()[c(5, 9, 13)], cv_folds = 3))
  set.seed(99)
  before <- .Random.seed
  a <- recipes::bake(recipes::prep(rec), new_data = iris[1:10, ])
  expect_identical(.Random.seed, before)
  b <- recipes::bake(recipes::prep(rec), new_data = iris[1:10, ])
  expect_identical(a, b)
})

test_that("print(), tidy(), tunable() and required_pkgs() describe the step", {
  skip_without("recipes", "generics")
  rec <- recipes::recipe(Species ~ ., data = iris)
  rec <- step_kmaha(rec, recipes::all_numeric_predictors(), learner = "dne",
                    sigma = 2, id = "kmaha_test")
  untrained <- recipes::tidy(rec, number = 1)
  expect_identical(untrained$id, "kmaha_test")
  expect_identical(untrained$learner, "dne")
  expect_identical(untrained$kernel, "rbf sigma = 2")
  prepped <- recipes::prep(rec)
  trained <- recipes::tidy(prepped, number = 1)
  expect_identical(trained$terms, names(iris)[1:4])
  expect_match(printed_text(prepped), "kmaha embedding \\(dne, rbf sigma = 2\\)")
  tn <- generics::tunable(rec$steps[[1]])
  expect_identical(tn$name, c("learner", "num_comp", "sigma"))
  expect_identical(unique(tn$component_id), "kmaha_test")
  expect_identical(generics::required_pkgs(rec$steps[[1]]), "kmaha")
  skip_without("dials")
  param <- metric_learner(c("nca", "dne"))
  expect_s3_class(param, "qual_param")
  expect_identical(param$values, c("nca", "dne"))
  expect_error(metric_learner("svm"), "`values` must be some of")
})

test_that("a custom learner function and num_comp reach kmaha()", {
  skip_without("recipes")
  first_two <- function(x, y) diag(ncol(x))[1:2, , drop = FALSE]
  rec <- recipes::recipe(Species ~ ., data = iris)
  rec <- step_kmaha(rec, recipes::all_numeric_predictors(), learner = first_two,
                    kernel = poly_kernel(2))
  out <- recipes::bake(recipes::prep(rec), new_data = iris[1:3, ])
  expect_identical(names(out), c("Species", "kmaha_1", "kmaha_2"))
  expect_match(printed_text(rec), "custom learner")
})

withr_seed <- function(seed, expr) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (!is.null(old)) assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  expr
}

test_that("without kernel or sigma the step uses kmaha()'s default kernel choice", {
  skip_without("recipes")
  s <- iris_split()
  rec <- step_kmaha(recipes::recipe(Species ~ ., data = s$train),
                    recipes::all_numeric_predictors(), learner = "dne", seed = 4)
  baked <- recipes::bake(recipes::prep(rec), new_data = s$test)
  # the default choice cross-validates: the same random state as the step
  direct <- withr_seed(4, kmaha(s$train[, 1:4], s$train$Species, learner = "dne"))
  expect_equal(unname(as.matrix(baked[, -1])),
               unname(predict(direct, s$test[, 1:4], type = "transform")))
  expect_match(printed_text(rec), "kmaha embedding \\(dne, default kernel\\)")
  # trained, print() and tidy() name what the cross-validation chose (was:
  # "default kernel" still), as the fit's own scores say
  prepped <- recipes::prep(rec)
  cv <- direct$kernel_choice$cv
  chosen <- cv$curve$label[cv$best]
  expect_identical(unique(recipes::tidy(prepped, number = 1)$kernel), chosen)
  expect_identical(unique(recipes::tidy(prepped, number = 1)$learner), cv$curve$learner[cv$best])
  expect_match(printed_text(prepped),
               sprintf("kmaha embedding (%s, %s)", cv$curve$learner[cv$best], chosen), fixed = TRUE)
})
