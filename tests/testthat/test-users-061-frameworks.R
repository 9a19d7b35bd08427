# What a demanding user of the framework adapters (parsnip, recipes, mlr3,
# caret) found in 0.6.0, on data no other test uses: each test failed
# before its fix.

# The CO2 data: a factor outcome (Type) with a factor predictor (Treatment).
co2 <- function() as.data.frame(CO2)[, c("Type", "Treatment", "conc", "uptake")]

test_that("multi_predict() says what a fit chose by cross-validation, and a fix that works", {
  skip_without("parsnip")
  d <- iris[seq(1, 150, by = 2), ]
  # a kernel given, the learner at its default "auto": the learner is chosen
  # by cross-validated votes of k = 3 neighbours
  spec <- parsnip::nearest_neighbor(neighbors = 3)
  spec <- parsnip::set_engine(spec, "kmaha", kernel = "linear", num_threads = 1)
  fit <- parsnip::fit(parsnip::set_mode(spec, "classification"), Species ~ ., data = d)
  # (was: "this kmaha fit chose its kernel by cross-validated votes ...; ...
  # or give the engine a kernel", which it had been given)
  expect_error(parsnip::multi_predict(fit, d[1:2, ], neighbors = c(1, 5)),
               "multi_predict(): this kmaha fit chose its learner by cross-validated votes of k = 3 neighbours, so its metric is not the one of another `neighbors`; fit the model again with each value (tune_grid() does), or give the engine a learner: set_engine(\"kmaha\", learner = \"nca\").",
               fixed = TRUE)
  # the advice works: with the learner named too, one fit predicts every k
  named <- parsnip::set_engine(parsnip::nearest_neighbor(neighbors = 3), "kmaha",
                               kernel = "linear", learner = "nca", num_threads = 1)
  named <- parsnip::fit(parsnip::set_mode(named, "classification"), Species ~ ., data = d)
  mp <- parsnip::multi_predict(named, d[1:2, ], neighbors = c(1, 5), type = "prob")
  direct <- kmaha(d[, 1:4], d$Species, kernel = "linear", learner = "nca", k = 5, num_threads = 1)
  expect_equal(unname(as.matrix(mp$.pred[[2]][2, -1])),
               unname(predict(direct, d[2, 1:4], type = "prob")))
  # both chosen, and k too (neighbors unset): each is named
  auto <- parsnip::set_engine(parsnip::nearest_neighbor(), "kmaha", seed = 1,
                              kernels = paper_kernels()[8:9], num_threads = 1)
  auto <- parsnip::fit(parsnip::set_mode(auto, "classification"), Species ~ ., data = d)
  k <- parsnip::extract_fit_engine(auto)$k
  expect_error(parsnip::multi_predict(auto, d[1:2, ], neighbors = k + 2L),
               sprintf("this kmaha fit chose its kernel, learner and k by cross-validated votes of k = %d neighbours, so its metric is not the one of another `neighbors`; fit the model again with each value (tune_grid() does), or give the engine a kernel and a learner: set_engine(\"kmaha\", kernel = rbf_kernel(1), learner = \"nca\"), and set `neighbors`.",
                       k), fixed = TRUE)
})

test_that("mlr3 says which choice ties a model to its k", {
  skip_without("mlr3")
  task <- mlr3::as_task_classif(co2()[, -2], target = "Type")
  learner <- mlr3::lrn("classif.kmaha", kernel = "linear", k = 3, num_threads = 1)
  learner$train(task)
  learner$param_set$set_values(k = 5)
  # (was: "chose its kernel, learner or k")
  expect_error(learner$predict(task),
               "classif.kmaha: this model chose its learner by cross-validated votes of k = 3 neighbours, so it does not predict with k = 5; train it again with k = 5.",
               fixed = TRUE)
})

test_that("step_kmaha() on an empty selection leaves the data alone, as recipes' steps do", {
  skip_without("recipes")
  d <- co2()
  rec <- recipes::recipe(Type ~ Treatment, data = d)
  rec <- step_kmaha(rec, recipes::all_numeric_predictors(), learner = "nca",
                    kernel = "linear", seed = 1)
  # (was: "`x` has no columns." from prep())
  prepped <- recipes::prep(rec)
  expect_identical(recipes::bake(prepped, new_data = NULL), tibble::as_tibble(d[, c("Treatment", "Type")]))
  expect_identical(recipes::bake(prepped, new_data = d[1:3, ]),
                   tibble::as_tibble(d[1:3, c("Treatment", "Type")]))
  td <- recipes::tidy(prepped, number = 1)
  expect_identical(nrow(td), 0L)
  expect_identical(names(td), c("terms", "learner", "kernel", "id"))
  expect_match(printed_text(prepped), "kmaha embedding \\(nca, linear\\) of: <none> \\| Trained")
  # the prepped step survives saveRDS()
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path), add = TRUE)
  saveRDS(prepped, path)
  expect_identical(recipes::bake(readRDS(path), new_data = d[1:3, ]),
                   recipes::bake(prepped, new_data = d[1:3, ]))
})

test_that("kmaha_caret() on a data frame with a factor names the column, not a character matrix", {
  d <- co2()
  x <- d[, c("Treatment", "conc", "uptake")]
  msg <- "`x` must have numeric columns only; column 'Treatment' is factor"
  # (was: "`x` must be numeric, not a character matrix. Convert it with
  # as.numeric() or use the formula interface.")
  m <- kmaha_caret("nca")
  expect_error(m$fit(x, d$Type, param = data.frame(dim = 2, k = 1)), msg, fixed = TRUE)
  mk <- kmaha_caret("kdne")
  expect_error(mk$fit(x, d$Type, param = data.frame(sigma = 1, targets = 3, k = 1)), msg, fixed = TRUE)
  ma <- kmaha_caret("auto", kernel = "linear", learner = "nca")
  expect_error(ma$fit(x, d$Type, param = data.frame(parameter = "none")), msg, fixed = TRUE)
  # numeric data frames still fit, and predict as the direct fit
  fit <- m$fit(x[, -1], d$Type, param = data.frame(dim = 2, k = 3))
  direct <- nca(as.matrix(x[, -1]), d$Type, dim = 2L)
  expect_identical(m$predict(fit, x[1:5, -1]),
                   as.character(predict(direct, as.matrix(x[1:5, -1]), k = 3)))
  # predicting from new data with a factor column names it too (was: "`newdata`
  # must be numeric, not a character matrix ... as.numeric()"), for classes,
  # probabilities and the "auto" model; missing values still give NA
  nd <- x[1:5, c("Treatment", "uptake")]
  names(nd) <- c("conc", "uptake")
  bad <- "`newdata` must have numeric columns only; column 'conc' is factor"
  expect_error(m$predict(fit, nd), bad, fixed = TRUE)
  expect_error(m$prob(fit, nd), bad, fixed = TRUE)
  fa <- ma$fit(x[, -1], d$Type, param = data.frame(parameter = "none"))
  expect_error(ma$predict(fa, nd), bad, fixed = TRUE)
  na_row <- x[1:3, -1]
  na_row$conc[2] <- NA
  expect_identical(is.na(m$predict(fit, na_row)), c(FALSE, TRUE, FALSE))
})

test_that("the parsnip engine names `neighbors`, its own argument, in errors about k", {
  skip_without("parsnip")
  d <- co2()
  spec <- function(k, mode = "classification") {
    s <- parsnip::set_engine(parsnip::nearest_neighbor(neighbors = k), "kmaha",
                             learner = if (mode == "classification") "nca" else "mlkr",
                             kernel = "linear", num_threads = 1)
    parsnip::set_mode(s, mode)
  }
  # (was: "`k` (100) must be smaller than the number of training rows (84).")
  expect_error(parsnip::fit(spec(100), Type ~ conc + uptake, data = d),
               "The kmaha engine's `neighbors` (100) must be smaller than the number of training rows (84).",
               fixed = TRUE)
  expect_error(parsnip::fit(spec(84, "regression"), uptake ~ conc, data = d),
               "The kmaha engine's `neighbors` (84) must be smaller than the number of training rows (84).",
               fixed = TRUE)
  # (was: "`k` must be a single whole number >= 1.")
  expect_error(parsnip::fit(spec(0), Type ~ conc + uptake, data = d),
               "The kmaha engine's `neighbors` must be a single whole number >= 1, not 0.",
               fixed = TRUE)
  # a valid value fits as before
  ok <- parsnip::fit(spec(83), Type ~ conc + uptake, data = d)
  expect_identical(parsnip::extract_fit_engine(ok)$k, 83L)
})

# The kmaha engine with linear NCA and 3 neighbours, fitted on co2().
co2_nca_fit <- function(d) {
  spec <- parsnip::set_engine(parsnip::nearest_neighbor(neighbors = 3), "kmaha",
                              learner = "nca", kernel = "linear", num_threads = 1)
  parsnip::fit(parsnip::set_mode(spec, "classification"), Type ~ conc + uptake, data = d)
}

test_that("multi_predict() checks `neighbors` and names it", {
  skip_without("parsnip")
  d <- co2()
  fit <- co2_nca_fit(d)
  # (was: 2 predicted silently as 2.5; "argument 1 is not a vector" for NA;
  # "`k` (100) must not exceed the number of training rows (84).")
  expect_error(parsnip::multi_predict(fit, d[1:2, ], neighbors = c(2.5, 3)),
               "multi_predict() for the kmaha engine: `neighbors` must be whole numbers >= 1, not c(2.5, 3).",
               fixed = TRUE)
  expect_error(parsnip::multi_predict(fit, d[1:2, ], neighbors = NA),
               "`neighbors` must be whole numbers >= 1, not NA.", fixed = TRUE)
  expect_error(parsnip::multi_predict(fit, d[1:2, ], neighbors = "3"),
               "`neighbors` must be whole numbers >= 1, not \"3\".", fixed = TRUE)
  expect_error(parsnip::multi_predict(fit, d[1:2, ], neighbors = c(0, 3)),
               "`neighbors` must be whole numbers >= 1, not c(0, 3).", fixed = TRUE)
  expect_error(parsnip::multi_predict(fit, d[1:2, ], neighbors = c(3, 100)),
               "multi_predict() for the kmaha engine: `neighbors` (100) must not exceed the number of training rows (84).",
               fixed = TRUE)
  # all the training rows may vote for new data
  mp <- parsnip::multi_predict(fit, d[1:2, ], neighbors = c(84, 3), type = "prob")
  expect_identical(mp$.pred[[1]]$neighbors, c(3L, 84L))
  direct <- kmaha(d[, c("conc", "uptake")], d$Type, learner = "nca", kernel = "linear",
                  k = 3, num_threads = 1)
  expect_equal(unname(unlist(mp$.pred[[1]][2, -1])),
               unname(predict(direct, d[1, c("conc", "uptake")], type = "prob", k = 84)[1, ]))
})

test_that("multi_predict() of no rows gives no rows, as predict() does", {
  skip_without("parsnip")
  d <- co2()
  fit <- co2_nca_fit(d)
  expect_identical(nrow(predict(fit, d[0, ], type = "prob")), 0L)
  # (was: "arguments imply differing number of rows: 0, 1")
  for (type in c("class", "prob")) {
    mp <- parsnip::multi_predict(fit, d[0, ], neighbors = c(1, 3), type = type)
    expect_identical(names(mp), ".pred")
    expect_identical(nrow(mp), 0L)
  }
  reg <- parsnip::set_engine(parsnip::nearest_neighbor(neighbors = 3), "kmaha",
                             learner = "mlkr", kernel = "linear", num_threads = 1)
  fit_reg <- parsnip::fit(parsnip::set_mode(reg, "regression"), uptake ~ conc, data = d)
  expect_identical(nrow(parsnip::multi_predict(fit_reg, d[0, ], neighbors = c(1, 3))), 0L)
  # one row still gives one tibble of every k
  one <- parsnip::multi_predict(fit, d[5, ], neighbors = c(1, 3))
  expect_identical(nrow(one), 1L)
  expect_identical(one$.pred[[1]]$neighbors, c(1L, 3L))
})

test_that("step_kmaha() checks num_comp, rather than truncating it", {
  skip_without("recipes", "tune")
  d <- co2()[, c("Type", "conc", "uptake")]
  step <- function(...) step_kmaha(recipes::recipe(Type ~ ., data = d),
                                   recipes::all_numeric_predictors(), learner = "nca",
                                   kernel = "linear", seed = 1, ...)
  msg <- "step_kmaha(): `num_comp` (the output dimension) must be NULL or one whole number >= 1, e.g. num_comp = 2, not %s."
  # (was: 1.5 fitted silently a one-dimensional map, "2" a two-dimensional one)
  expect_error(step(num_comp = 1.5), sprintf(msg, "1.5"), fixed = TRUE)
  expect_error(step(num_comp = "2"), sprintf(msg, "\"2\""), fixed = TRUE)
  # (was: "`learner_args$dim` must be a single whole number >= 1.")
  expect_error(step(num_comp = 0), sprintf(msg, "0"), fixed = TRUE)
  # a value set later (as tune's finalize does) is checked when prepared
  rec <- step(num_comp = 2)
  rec$steps[[1]]$num_comp <- 1.5
  expect_error(recipes::prep(rec), sprintf(msg, "1.5"), fixed = TRUE)
  # a whole number, also a double, and tune() are fine
  rec$steps[[1]]$num_comp <- 1
  expect_identical(names(recipes::bake(recipes::prep(rec), new_data = NULL)), c("Type", "kmaha_1"))
  expect_identical(step(num_comp = tune::tune())$steps[[1]]$num_comp, quote(tune()))
})

test_that("kmaha_caret() refuses a grid value it would truncate", {
  d <- co2()
  x <- as.matrix(d[, c("conc", "uptake")])
  # (was: each fitted silently with the value truncated, while caret
  # reported the grid's value: k = 1.5 scored k = 1, and so on)
  expect_error(kmaha_caret("nca")$fit(x, d$Type, param = data.frame(dim = 2, k = 1.5)),
               "`k` must be a single whole number >= 1.", fixed = TRUE)
  expect_error(kmaha_caret("nca")$fit(x, d$Type, param = data.frame(dim = 1.5, k = 3)),
               "`dim` must be a single whole number >= 1.", fixed = TRUE)
  expect_error(kmaha_caret("dne")$fit(x, d$Type, param = data.frame(targets = 2.5, k = 3)),
               "`targets` must be a single whole number >= 1.", fixed = TRUE)
  expect_error(kmaha_caret("kdne")$fit(x, d$Type, param = data.frame(sigma = 1, targets = 3, k = 2.5)),
               "`k` must be a single whole number >= 1.", fixed = TRUE)
  expect_error(kmaha_caret("mlkr")$fit(x[, 1, drop = FALSE], d$uptake, param = data.frame(k = 2.5)),
               "`k` must be a single whole number >= 1.", fixed = TRUE)
  # as a submodel (predict() of another k) it was already an error
  m <- kmaha_caret("nca")
  fit <- m$fit(x, d$Type, param = data.frame(dim = 2, k = 3))
  expect_error(m$predict(fit, x[1:3, ], submodels = data.frame(k = 2.5)),
               "`k` must be a single whole number >= 1.", fixed = TRUE)
  # whole numbers stored as doubles (caret's grids) are fine
  expect_identical(fit$caret_k, 3L)
})

test_that("bake() of new data whose embedded column is not numeric says so in recipes' terms", {
  skip_without("recipes")
  d <- co2()[, c("Type", "conc", "uptake")]
  prepped <- recipes::prep(step_kmaha(recipes::recipe(Type ~ ., data = d),
                                      recipes::all_numeric_predictors(), learner = "nca",
                                      kernel = "linear", seed = 1))
  nd <- d[1:3, ]
  nd$uptake <- factor(nd$uptake)
  # (was: "`newdata` must have numeric columns only; ... or use the formula
  # interface", naming predict()'s argument and an interface a recipe
  # does not have)
  err <- tryCatch(recipes::bake(prepped, new_data = nd), error = conditionMessage)
  expect_match(err, "All columns selected for the step should be numeric", fixed = TRUE)
  expect_match(err, "1 factor variable found: `uptake`", fixed = TRUE)
  expect_no_match(err, "newdata", fixed = TRUE)
  # numeric new data, integer columns too, bake as before
  nd$uptake <- as.integer(round(d$uptake[1:3]))
  expect_identical(dim(recipes::bake(prepped, new_data = nd)), c(3L, 3L))
})
