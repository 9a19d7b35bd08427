# The tidymodels adapters (issue 27): parsnip's weight_func and dist_power
# are checked, not ignored; step_kmaha() points to an imputation step for
# missing values, labels tune() placeholders as such, and finalizes
# num_comp's range from the data.

kmaha_nn <- function(...) {
  spec <- parsnip::nearest_neighbor(neighbors = 3, ...)
  spec <- parsnip::set_engine(spec, "kmaha", learner = "dne", kernel = rbf_kernel(1))
  parsnip::set_mode(spec, "classification")
}

test_that("a weighted vote or another distance is an error, not silently ignored", {
  skip_without("parsnip")
  expect_error(parsnip::fit(kmaha_nn(weight_func = "triangular"), Species ~ ., data = iris),
               "The kmaha engine gives the k neighbours equal votes (weight_func = \"rectangular\"); weight_func = \"triangular\" is not available. Leave `weight_func` unset, and tune `neighbors`, the learner or the kernel instead.",
               fixed = TRUE)
  expect_error(parsnip::fit(kmaha_nn(dist_power = 1), Species ~ ., data = iris),
               "The kmaha engine measures Euclidean distance in the learned metric (dist_power = 2); dist_power = 1 is not available. Leave `dist_power` unset.",
               fixed = TRUE)
  # what kmaha does is accepted, and fits as without the arguments
  same <- parsnip::fit(kmaha_nn(weight_func = "rectangular", dist_power = 2),
                       Species ~ ., data = iris)
  plain <- parsnip::fit(kmaha_nn(), Species ~ ., data = iris)
  expect_identical(predict(same, iris, type = "prob"), predict(plain, iris, type = "prob"))
  expect_identical(parsnip::extract_fit_engine(same)$L, parsnip::extract_fit_engine(plain)$L)
  args <- parsnip::get_from_env("nearest_neighbor_args")
  expect_setequal(args$parsnip[args$engine == "kmaha"],
                  c("neighbors", "learner", "weight_func", "dist_power", "sigma"))
})

test_that("kmaha_parsnip_fit() checks its arguments and is kmaha() otherwise", {
  x <- iris[, 1:4]
  expect_identical(kmaha_parsnip_fit(x, iris$Species, learner = "dne", kernel = "linear")$L,
                   kmaha(x, iris$Species, learner = "dne", kernel = "linear")$L)
  expect_error(kmaha_parsnip_fit(x, iris$Species, weight_func = "gaussian"),
               "weight_func = \"gaussian\" is not available", fixed = TRUE)
  expect_error(kmaha_parsnip_fit(x, iris$Species, dist_power = c(2, 2)),
               "dist_power = c(2, 2) is not available", fixed = TRUE)
})

test_that("step_kmaha() on missing values points to an imputation step", {
  skip_without("recipes")
  d <- iris
  d$Sepal.Length[3] <- NA
  d$Petal.Width[c(7, 9)] <- NA
  rec <- step_kmaha(recipes::recipe(Species ~ ., data = d),
                    recipes::all_numeric_predictors(), learner = "dne")
  expect_error(recipes::prep(rec),
               "step_kmaha(): the selected predictors have missing values (3 rows; columns `Sepal.Length`, `Petal.Width`). Impute them earlier in the recipe, e.g. step_impute_median(all_numeric_predictors()) or step_impute_knn(all_numeric_predictors()), or drop those rows with step_naomit(all_predictors()).",
               fixed = TRUE)
  # the advice works: after an imputation step the recipe prepares
  imputed <- recipes::step_impute_median(recipes::recipe(Species ~ ., data = d),
                                         recipes::all_numeric_predictors())
  imputed <- step_kmaha(imputed, recipes::all_numeric_predictors(), learner = "dne",
                        kernel = "linear")
  baked <- recipes::bake(recipes::prep(imputed), new_data = NULL)
  expect_false(anyNA(baked))
  d2 <- iris
  d2$Species[5] <- NA
  rec2 <- step_kmaha(recipes::recipe(Species ~ ., data = d2),
                     recipes::all_numeric_predictors(), learner = "dne")
  expect_error(recipes::prep(rec2),
               "step_kmaha(): the outcome `Species` has missing values (1 row). Drop those rows first, e.g. with step_naomit(Species, skip = TRUE) before this step, or filter the data.",
               fixed = TRUE)
})

test_that("tune() placeholders are shown as tune(), not as a custom learner", {
  skip_without("recipes")
  # tune() returns this call
  rec <- step_kmaha(recipes::recipe(Species ~ ., data = iris),
                    recipes::all_numeric_predictors(), learner = quote(tune()),
                    sigma = quote(tune()))
  td <- recipes::tidy(rec, number = 1)
  expect_identical(td$learner, "tune()")
  expect_identical(td$kernel, "rbf sigma = tune()")
  expect_match(printed_text(rec), "kmaha embedding (tune(), rbf sigma = tune())", fixed = TRUE)
  # a function is still a custom learner
  f <- step_kmaha(recipes::recipe(Species ~ ., data = iris),
                  recipes::all_numeric_predictors(), learner = function(x, y) diag(ncol(x)))
  expect_identical(recipes::tidy(f, number = 1)$learner, "custom learner")
})

test_that("num_comp's range is 1-4 by default and the documented way widens it", {
  skip_without("recipes", "dials", "tune", "workflows", "parsnip", "rsample", "yardstick")
  set.seed(3)
  wide <- data.frame(matrix(rnorm(60 * 7), 60, 7), y = factor(rep(c("a", "b"), 30)))
  rec <- step_kmaha(recipes::recipe(y ~ ., data = wide),
                    recipes::all_numeric_predictors(), learner = "dne", kernel = "linear",
                    num_comp = tune::tune())
  tn <- generics::tunable(rec$steps[[1]])
  expect_identical(tn$call_info[[which(tn$name == "num_comp")]]$range, c(1L, 4L))
  knn <- parsnip::set_mode(parsnip::set_engine(parsnip::nearest_neighbor(neighbors = 1),
                                               "kmaha", learner = function(x, y) diag(ncol(x)),
                                               kernel = "linear", scale = FALSE),
                           "classification")
  wf <- workflows::workflow(rec, knn)
  params <- stats::update(tune::extract_parameter_set_dials(wf),
                          num_comp = dials::num_comp(c(1L, 7L)))
  set.seed(4)
  folds <- rsample::vfold_cv(wide, v = 2)
  res <- tune::tune_grid(wf, resamples = folds, grid = 4, param_info = params,
                         metrics = yardstick::metric_set(yardstick::accuracy))
  got <- tune::collect_metrics(res)$num_comp
  expect_true(max(got) > 4L)
  expect_true(all(got >= 1L & got <= 7L))
})
