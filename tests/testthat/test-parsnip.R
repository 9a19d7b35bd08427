# The parsnip engine "kmaha" for nearest_neighbor().

kmaha_spec <- function(..., neighbors = 3) {
  spec <- parsnip::nearest_neighbor(neighbors = neighbors)
  spec <- parsnip::set_engine(spec, "kmaha", ...)
  parsnip::set_mode(spec, "classification")
}

test_that("the engine is registered once parsnip and kmaha are loaded", {
  skip_without("parsnip")
  engines <- parsnip::show_engines("nearest_neighbor")
  expect_setequal(engines$mode[engines$engine == "kmaha"], c("classification", "regression"))
  # Registering again is a no-op, not an error.
  expect_false(kmaha:::register_parsnip_engine())
  args <- parsnip::get_from_env("nearest_neighbor_args")
  args <- args[args$engine == "kmaha", ]
  expect_identical(args$original[args$parsnip == "neighbors"], "k")
  # no submodel: the default's metric depends on k (kernel, learner and k
  # chosen by votes with k), so tune fits every value of `neighbors`
  expect_false(args$has_submodel[args$parsnip == "neighbors"])
})

test_that("the engine fits and predicts exactly as a direct kmaha() fit", {
  skip_without("parsnip")
  s <- iris_split()
  fit <- parsnip::fit(kmaha_spec(learner = "dne", kernel = rbf_kernel(1)),
                      Species ~ ., data = s$train)
  direct <- kmaha(s$train[, 1:4], s$train$Species, learner = "dne",
                  kernel = rbf_kernel(1), k = 3)
  cls <- predict(fit, s$test)
  expect_identical(names(cls), ".pred_class")
  expect_identical(cls$.pred_class, predict(direct, s$test[, 1:4]))
  prob <- predict(fit, s$test, type = "prob")
  expect_identical(names(prob), paste0(".pred_", levels(iris$Species)))
  expect_equal(unname(as.matrix(prob)),
               unname(predict(direct, s$test[, 1:4], type = "prob")))
  raw <- predict(fit, s$test, type = "raw", opts = list(type = "transform"))
  expect_equal(raw, predict(direct, s$test[, 1:4], type = "transform"))
  # The fitted engine model is the kmaha fit itself.
  expect_identical(class(parsnip::extract_fit_engine(fit)), class(direct))
})

test_that("engine and direct fit agree on a UCI set (Balance Scale)", {
  skip_without("parsnip")
  b <- balance_sample()
  test <- kmaha_data("balance", path = NULL)[seq(2, 625, by = 5), ]
  fit <- parsnip::fit(kmaha_spec(learner = "nca", kernel = rbf_kernel(2.5),
                                 learner_args = list(max_iter = 50)),
                      class ~ ., data = b)
  direct <- kmaha(b[, 1:4], b$class, learner = "nca", kernel = rbf_kernel(2.5),
                  k = 3, learner_args = list(max_iter = 50))
  expect_identical(predict(fit, test)$.pred_class, predict(direct, test[, 1:4]))
  # and the metric is worth learning here: better than the majority class
  expect_gt(mean(predict(fit, test)$.pred_class == test$class), 0.8)
})

test_that("multi_predict() gives each k's predictions from one fit", {
  skip_without("parsnip", "tibble")
  s <- iris_split()
  fit <- parsnip::fit(kmaha_spec(learner = "dne", kernel = rbf_kernel(1),
                                 neighbors = 7),
                      Species ~ ., data = s$train)
  direct <- kmaha(s$train[, 1:4], s$train$Species, learner = "dne",
                  kernel = rbf_kernel(1), k = 7)
  ks <- c(5, 1, 3)
  mp <- parsnip::multi_predict(fit, s$test, neighbors = ks)
  expect_identical(nrow(mp), nrow(s$test))
  expect_identical(names(mp$.pred[[1]]), c("neighbors", ".pred_class"))
  long <- do.call(rbind, mp$.pred)
  expect_identical(long$neighbors, rep(c(1L, 3L, 5L), nrow(s$test)))
  for (k in ks) {
    expect_identical(long$.pred_class[long$neighbors == k],
                     predict(direct, s$test[, 1:4], k = k))
  }
  mpp <- parsnip::multi_predict(fit, s$test[1:4, ], type = "prob", neighbors = c(2, 4))
  p2 <- mpp$.pred[[3]]
  expect_identical(names(p2), c("neighbors", paste0(".pred_", levels(iris$Species))))
  expect_equal(unname(unlist(p2[p2$neighbors == 4, -1])),
               unname(predict(direct, s$test[3, 1:4], type = "prob", k = 4)[1, ]))
  # without `neighbors`: the fitted value
  one <- parsnip::multi_predict(fit, s$test[1:3, ])
  expect_identical(unique(do.call(rbind, one$.pred)$neighbors), 7L)
  expect_error(parsnip::multi_predict(fit, s$test, type = "numeric"),
               "`type` must be \"class\" or \"prob\"")
})

test_that("the engine's tunable parameters are neighbors and learner", {
  skip_without("parsnip", "dials", "tune")
  spec <- parsnip::nearest_neighbor(neighbors = parsnip::tune())
  spec <- parsnip::set_engine(spec, "kmaha", learner = parsnip::tune(), kernel = rbf_kernel(1))
  spec <- parsnip::set_mode(spec, "classification")
  params <- tune::extract_parameter_set_dials(spec)
  expect_setequal(params$id, c("neighbors", "learner"))
  learner_param <- params$object[[which(params$id == "learner")]]
  expect_s3_class(learner_param, "qual_param")
  expect_setequal(learner_param$values, c("nca", "lmnn", "dne"))
})

test_that("the engine's sigma is the RBF width, replacing kernel, and tunes on kmaha's widths", {
  skip_without("parsnip", "dials", "tune")
  s <- iris_split()
  # (was: sigma reached kmaha() as an unknown argument, an error)
  fit <- parsnip::fit(kmaha_spec(learner = "nca", sigma = 2, kernel = "linear", seed = 1),
                      Species ~ ., data = s$train)
  direct <- kmaha(s$train[, 1:4], s$train$Species, learner = "nca", kernel = rbf_kernel(2),
                  k = 3, seed = 1)
  eng <- parsnip::extract_fit_engine(fit)
  expect_identical(eng$feature_map$kernel$sigma, 2)
  expect_equal(coef(eng), coef(direct))
  expect_identical(predict(fit, s$test)$.pred_class, predict(direct, s$test[, 1:4]))
  # the recorded call names no data
  expect_identical(as.list(eng$call)[c("x", "y")], list(x = quote(x), y = quote(y)))
  # a bad width is kmaha's error for rbf_kernel()
  expect_error(parsnip::fit(kmaha_spec(learner = "nca", sigma = -1), Species ~ ., data = s$train),
               "sigma")
  # tunable, on kmaha's scaled widths (0.1 to 10), not dials' inverse widths
  spec <- parsnip::set_mode(parsnip::set_engine(parsnip::nearest_neighbor(neighbors = 3), "kmaha",
                                                learner = "nca", sigma = parsnip::tune()),
                            "classification")
  params <- tune::extract_parameter_set_dials(spec)
  expect_identical(params$id, "sigma")
  expect_equal(params$object[[1]]$range, list(lower = -1, upper = 1))
  grid <- dials::grid_regular(params, levels = 3)
  expect_equal(grid$sigma, c(0.1, 1, 10))
})

test_that("factor predictors become indicator columns", {
  skip_without("parsnip")
  d <- iris
  d$big <- factor(ifelse(d$Sepal.Length > 6, "yes", "no"))
  fit <- parsnip::fit(kmaha_spec(learner = "dne", kernel = rbf_kernel(1)),
                      Species ~ ., data = d)
  x <- cbind(iris[, 1:4], bigyes = as.numeric(d$big == "yes"))
  direct <- kmaha(x, d$Species, learner = "dne", kernel = rbf_kernel(1), k = 3)
  expect_identical(predict(fit, d[1:20, ])$.pred_class, predict(direct, x[1:20, ]))
})

test_that("the engine is registered whichever package loads first", {
  skip_without("parsnip", "callr")
  for (order in list(c("kmaha", "parsnip"), c("parsnip", "kmaha"))) {
    engines <- callr::r(function(order) {
      for (p in order) loadNamespace(p)
      parsnip::show_engines("nearest_neighbor")$engine
    }, args = list(order = order))
    expect_true("kmaha" %in% engines, label = paste(order, collapse = " then "))
  }
})
