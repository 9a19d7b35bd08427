# What a demanding user of 0.6.0's additions found (regression, the pair
# and chunklet learners, the frameworks' regression modes): each test
# failed before its fix.

# A small regression on data no other test uses (swiss), and iris pairs.
swiss_x <- function() as.matrix(swiss[, -1])
iris_pairs <- function() {
  list(pairs = rbind(c(1, 2), c(51, 52), c(101, 102), c(1, 51), c(2, 101), c(52, 102)),
       similar = c(1, 1, 1, -1, -1, -1))
}

test_that("autoplot() of a regression model colours the points by the response", {
  skip_without("ggplot2")
  fit <- mlkr(Fertility ~ ., data = swiss)
  p <- ggplot2::autoplot(fit)
  built <- ggplot2::ggplot_build(p)  # (was: "Continuous value supplied to a discrete scale")
  pts <- built$data[[1]]
  expect_identical(nrow(pts), nrow(swiss))
  expect_identical(pts$x, unname(fit$embedding[, 1]))
  # a continuous colour scale of the response
  expect_s3_class(built$plot$scales$get_scales("colour"), "ScaleContinuous")
  expect_gt(length(unique(pts$colour)), 20L)
  expect_identical(p$data$response, fit$y)
  # kmaha()'s regression, with a one-dimensional map too
  one <- kmaha(swiss_x(), swiss$Fertility, learner = "mlkr", kernel = "linear",
               learner_args = list(dim = 1))
  expect_identical(nrow(ggplot2::ggplot_build(ggplot2::autoplot(one))$data[[1]]), nrow(swiss))
})

test_that("plot() and autoplot() of a model fitted without labels draw its points", {
  pr <- iris_pairs()
  fits <- list(mmc(iris[, 1:4], pairs = pr$pairs, similar = pr$similar),
               itml(iris[, 1:4], pairs = pr$pairs, similar = pr$similar),
               rca(iris[, 1:4], chunks = rep(1:30, each = 5)),
               kmaha(iris[, 1:4], learner = "itml", kernel = rbf_kernel(1),
                     learner_args = list(pairs = pr$pairs, similar = pr$similar)))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  for (fit in fits) {
    expect_null(fit$y)
    # (was: "'legend' is of length 0")
    expect_identical(plot(fit), fit)
    if (requireNamespace("ggplot2", quietly = TRUE)) {
      # (was: "arguments imply differing number of rows: 150, 0")
      pts <- ggplot2::ggplot_build(ggplot2::autoplot(fit))$data[[1]]
      expect_identical(nrow(pts), 150L)
      expect_identical(length(unique(pts$colour)), 1L)
    }
  }
})

test_that("augment() of a model fitted without labels gives its coordinates", {
  skip_without("tibble")
  pr <- iris_pairs()
  fit <- mmc(iris[, 1:4], pairs = pr$pairs, similar = pr$similar)
  # (was: "This model was fitted without class labels ... use type = \"transform\"")
  a <- augment(fit)
  z <- predict(fit, type = "transform")
  expect_identical(nrow(a), 150L)
  expect_false(any(startsWith(names(a), ".pred")))
  expect_equal(as.matrix(a[, paste0(".", colnames(z))]), z, ignore_attr = TRUE)
  an <- augment(fit, newdata = iris[c(1, 51), 1:4])
  expect_equal(as.matrix(an[, paste0(".", colnames(z))]),
               predict(fit, iris[c(1, 51), 1:4], type = "transform"), ignore_attr = TRUE)
  expect_true(all(names(iris)[1:4] %in% names(an)))
  expect_error(augment(fit, data = iris[1:10, ]),
               "`data` must be the training data of the fit (150 rows), not 10 rows; for other rows use `newdata`.",
               fixed = TRUE)
})

test_that("formula pairs and chunklets are rows of `data`, also when rows are left out", {
  pr <- iris_pairs()
  d <- iris
  d$Sepal.Width[3] <- NA
  kept <- setdiff(1:150, 3)
  renum <- matrix(match(pr$pairs, kept), ncol = 2)
  x <- as.matrix(iris[kept, 1:4])
  # (was: the pairs silently used as rows of the model frame, one row off
  # after row 3)
  for (fun in list(mmc, itml)) {
    f <- fun(Species ~ ., data = d, pairs = pr$pairs, similar = pr$similar)
    m <- fun(x, iris$Species[kept], pairs = renum, similar = pr$similar)
    expect_equal(f$L, m$L)
    expect_identical(f$pairs, m$pairs)
  }
  # a pair joining a row left out
  expect_error(mmc(Species ~ ., data = d, pairs = rbind(pr$pairs, c(3, 60)),
                   similar = c(pr$similar, -1)),
               "`pairs` row 7 refers to row 3 of `data`, which the model frame leaves out (a missing value, or not in `subset`); with the formula interface pairs are row numbers of `data`. Remove that pair, or that row's missing values.",
               fixed = TRUE)
  # `subset`: the pairs are still rows of `data`
  di <- iris
  di$Species <- as.character(di$Species)
  s <- itml(Species ~ ., data = di, subset = 51:150, pairs = pr$pairs[c(2, 3, 6), ],
            similar = pr$similar[c(2, 3, 6)])
  ms <- itml(iris[51:150, 1:4], di$Species[51:150], pairs = pr$pairs[c(2, 3, 6), ] - 50L,
             similar = pr$similar[c(2, 3, 6)])
  expect_equal(s$L, ms$L)
  # chunklets: one id per row of `data` (was: "`chunks` has length 150 but
  # `x` has 149 rows")
  ch <- rep(1:30, each = 5)
  r <- rca(Species ~ ., data = d, chunks = ch)
  expect_equal(r$L, rca(x, iris$Species[kept], chunks = ch[kept])$L)
  # kmaha()'s learner_args, with a kernel
  k1 <- kmaha(Species ~ ., data = d, learner = "itml", kernel = rbf_kernel(1),
              learner_args = list(pairs = pr$pairs, similar = pr$similar))
  k2 <- kmaha(x, iris$Species[kept], learner = "itml", kernel = rbf_kernel(1),
              learner_args = list(pairs = renum, similar = pr$similar))
  expect_equal(predict(k1, iris[1:5, ], type = "transform"),
               predict(k2, iris[1:5, 1:4], type = "transform"))
  expect_error(kmaha(Species ~ ., data = d, learner = "mmc", kernel = rbf_kernel(1),
                     learner_args = list(pairs = rbind(c(3, 4), c(1, 60)), similar = c(1, -1))),
               "`learner_args$pairs` row 1 refers to row 3 of `data`",
               fixed = TRUE)
  # no row left out: the pairs as given
  f <- mmc(Species ~ ., data = iris, pairs = pr$pairs, similar = pr$similar)
  expect_equal(f$L, mmc(iris[, 1:4], iris$Species, pairs = pr$pairs, similar = pr$similar)$L)
})

test_that("kmaha(seed = ) makes the final fit's random draws reproducible too", {
  x <- as.matrix(rock[, 1:3])
  y <- factor(cut(rock$perm, c(0, 10, 200, 2000)))
  fit <- function() {
    suppressWarnings(kmaha(x, y, learner = "itml", kernel = rbf_kernel(1), seed = 4))
  }
  set.seed(1)
  before <- .Random.seed
  a <- fit()
  # (was: the pairs drawn from the session's generator, a new model each call)
  expect_identical(.Random.seed, before)
  b <- fit()
  expect_identical(a$L, b$L)
  expect_identical(a$pairs, b$pairs)
  old <- RNGkind("L'Ecuyer-CMRG")
  on.exit(RNGkind(old[1], old[2], old[3]), add = TRUE)
  set.seed(2)
  expect_identical(fit()$L, a$L)
  RNGkind(old[1], old[2], old[3])
  # Nystrom landmarks
  l1 <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(1), landmarks = 10, seed = 3)
  l2 <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(1), landmarks = 10, seed = 3)
  expect_identical(l1$feature_map$landmarks, l2$feature_map$landmarks)
})

test_that("multi_predict() of a parsnip regression fit predicts numbers for each k", {
  skip_without("parsnip", "tibble")
  spec <- parsnip::nearest_neighbor(neighbors = 4) |>
    parsnip::set_engine("kmaha", learner = "mlkr", kernel = rbf_kernel(1)) |>
    parsnip::set_mode("regression")
  pf <- parsnip::fit(spec, rating ~ ., data = attitude)
  # (was: "`type` must be \"response\" or \"transform\" for a regression model, not \"class\".")
  mp <- parsnip::multi_predict(pf, attitude[1:3, ], neighbors = c(2, 5))
  long <- do.call(rbind, mp$.pred)
  direct <- parsnip::extract_fit_engine(pf)
  expect_identical(names(long), c("neighbors", ".pred"))
  expect_equal(long$.pred[long$neighbors == 2], unname(predict(direct, attitude[1:3, -1], k = 2)))
  expect_equal(long$.pred[long$neighbors == 5], unname(predict(direct, attitude[1:3, -1], k = 5)))
  expect_error(parsnip::multi_predict(pf, attitude[1:3, ], type = "class"),
               "multi_predict() for the kmaha engine: `type` must be \"numeric\" for a regression model, not \"class\".",
               fixed = TRUE)
})

test_that("kmaha_caret(\"auto\") fits a numeric outcome as kmaha()'s regression", {
  a <- kmaha_caret("auto", seed = 1)
  expect_true("Regression" %in% a$type)
  x <- swiss_x()
  y <- swiss$Fertility
  fit <- a$fit(x[1:40, ], y[1:40], param = a$grid(x, y))
  # (was: "`type` must be \"response\" or \"transform\" for a regression model, not \"class\".")
  expect_equal(a$predict(fit, x[41:47, ]),
               unname(predict(kmaha(x[1:40, ], y[1:40], seed = 1), x[41:47, ])))
  skip_without("caret")
  set.seed(1)
  # (was: caret's "wrong model type for regression")
  tr <- caret::train(x = x, y = y, method = a,
                     trControl = caret::trainControl(method = "cv", number = 3))
  expect_true(is.numeric(predict(tr, x[1:3, ])))
})

test_that("a constant column without a name is named by its number", {
  x <- cbind(as.matrix(iris[, 1:4]), 1)
  # (was: "`x` has constant column(s) '' ...")
  expect_error(mmc(x, iris$Species),
               "`x` has constant column(s) '5' (standard deviation below 1e-12 of the largest absolute value); they carry no distance information. Remove them before fitting.",
               fixed = TRUE)
  expect_error(mlkr(cbind(swiss_x(), 2), swiss$Fertility),
               "`x` has constant column(s) '6' (", fixed = TRUE)
})

test_that("a regression's learner_args may name MLKR, as a classification's name its learners", {
  x <- swiss_x()
  y <- swiss$Fertility
  # (was: "mlkr() takes no option(s) 'learner_args$mlkr'; ...")
  a <- kmaha(x, y, learner_args = list(mlkr = list(lambda = 0.5)), seed = 1)
  b <- kmaha(x, y, learner_args = list(lambda = 0.5), seed = 1)
  expect_identical(a$L, b$L)
  expect_error(kmaha(x, y, learner_args = list(mlkr = 0.5)),
               "`learner_args$mlkr` must be a named list of options for MLKR alone, e.g. list(lambda = 0.1).",
               fixed = TRUE)
  expect_error(kmaha(x, y, learner_args = list(mlkr = list(mu = 1))),
               "'learner_args$mlkr$mu'", fixed = TRUE)
})

test_that("a data frame as kmaha()'s `y` is refused in terms of both tasks", {
  # (was: "`y` must be a vector or factor of class labels, not a data.frame.")
  expect_error(kmaha(swiss_x(), swiss[, "Fertility", drop = FALSE]),
               "`y` must be a vector, one value per row of `x`: class labels (a factor) or a numeric response (a regression), not a data.frame; for a one-column data frame d use d[[1]].",
               fixed = TRUE)
})

test_that("a named vector is one observation at predict time", {
  x <- as.matrix(iris[, 1:4])
  fit <- kmaha(x, iris$Species, kernel = "linear", learner = "nca", seed = 1)
  v <- x[51, ]
  expect_identical(predict(fit, v), predict(fit, x[51, , drop = FALSE]))
  # matched by name, so the order of the names does not matter
  expect_identical(predict(fit, rev(v)), predict(fit, x[51, , drop = FALSE]))
  expect_equal(predict(fit, v, type = "transform"),
               predict(fit, x[51, , drop = FALSE], type = "transform"))
  # a vector lacking a training name says which
  expect_error(predict(fit, v[-2]), "`newdata` lacks column(s) used in training: 'Sepal.Width'.",
               fixed = TRUE)
  r <- kmaha(swiss_x(), swiss$Fertility, kernel = "linear", seed = 1)
  expect_equal(predict(r, swiss_x()[3, ]), unname(predict(r, swiss_x()[3, , drop = FALSE])))
})
