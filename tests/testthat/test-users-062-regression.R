# What a user coming from kknn, caret's knnreg or parsnip's kknn engine
# found trying the regression (mlkr(), kmaha() with a numeric response and
# the frameworks' regression modes) on data no other test uses (trees,
# stackloss, MASS::hills): each test failed before its fix.

test_that("k and weights in learner_args are refused as model settings, not as options mlkr() lacks", {
  # (was: "mlkr() takes no option(s) 'learner_args$weights'; it takes dim,
  # init, ...", but mlkr() has a `weights` argument)
  expect_error(kmaha(Volume ~ ., data = trees, kernel = "linear",
                     learner_args = list(weights = "uniform")),
               "'learner_args$weights' sets the k-NN regression of mlkr()'s model, not its learner, so it cannot be a learner option: give the number of neighbours as the call's own `k` (kmaha(k = ), the frameworks' `neighbors`), and choose `k` and `weights` (\"distance\", \"uniform\" or \"kernel\") of a fitted model at prediction, with predict(fit, k = , weights = ).",
               fixed = TRUE)
  expect_error(score_candidates(as.matrix(stackloss[, 1:3]), stackloss$stack.loss,
                                learner_args = list(k = 3, weights = "kernel")),
               "'learner_args$k' and 'learner_args$weights' set the k-NN regression",
               fixed = TRUE)
  # a genuine unknown option keeps its message
  expect_error(kmaha(Volume ~ ., data = trees, kernel = "linear", learner_args = list(mu = 1)),
               "mlkr() takes no option(s) 'learner_args$mu'; it takes dim, init, lambda, max_iter, tol, verbose.",
               fixed = TRUE)
  # what the message advises works
  fit <- kmaha(Volume ~ ., data = trees, kernel = "linear", k = 3)
  expect_identical(fit$k, 3L)
  expect_identical(predict(fit, trees[1:4, ], weights = "uniform"),
                   predict(mlkr(Volume ~ ., data = trees, k = 3), trees[1:4, ],
                           weights = "uniform"))
})

test_that("on too few rows for the folds, a regression's hint names a regression learner", {
  # (was: "... (e.g. kernel = \"linear\", learner = \"nca\", k = 1) ...",
  # and learner = "nca" is an error with a numeric response)
  x <- as.matrix(stackloss[1:4, 1:3])
  y <- stackloss$stack.loss[1:4]
  expect_error(kmaha(x, y),
               "`cv_folds` (5) must not exceed the number of training rows (4). kmaha() chooses its kernel, learner and k by 5-fold cross-validation: set `cv_folds` to at most 4, or give the kernel, the learner and k (e.g. kernel = \"linear\", learner = \"mlkr\", k = 1), which need none.",
               fixed = TRUE)
  # the hint's example fits
  fit <- kmaha(x, y, kernel = "linear", learner = "mlkr", k = 1)
  expect_s3_class(fit, "kmaha_regression")
  # classes keep theirs
  expect_error(kmaha(iris[c(1, 2, 51, 52), 1:4], droplevels(iris$Species[c(1, 2, 51, 52)])),
               "(e.g. kernel = \"linear\", learner = \"nca\", k = 1)", fixed = TRUE)
})

test_that("a formula without a response asks mlkr() for a numeric one, not class labels", {
  # (was: "`formula` needs a response: the class labels on the left, as in
  # Species ~ .")
  expect_error(mlkr(~ Girth + Height, data = trees),
               "`formula` needs a response: the numeric response on the left, as in mpg ~ .",
               fixed = TRUE)
  expect_error(kmaha(~ Girth + Height, data = trees),
               "`formula` needs a response: the class labels (or a numeric response, for a regression) on the left, as in Species ~ . or mpg ~ .",
               fixed = TRUE)
  expect_error(nca(~ Sepal.Length + Sepal.Width, data = iris),
               "`formula` needs a response: the class labels on the left, as in Species ~ .",
               fixed = TRUE)
})

test_that("autoplot() of a regression's scores does not put screen R^2 on the RMSE axis", {
  skip_if_not_installed("ggplot2")
  data(hills, package = "MASS", envir = environment())
  s <- score_candidates(time ~ ., data = hills, seed = 1)
  cu <- s$curve
  scored <- cu$kind == "kernel" & !is.na(cu$mean)
  # the fast strategy's screen left kernels out, with their screen scores
  expect_true(any(cu$kind == "kernel" & is.na(cu$mean) & !is.na(cu$screen)))
  p <- ggplot2::autoplot(s)
  # (was: every screened kernel drawn at its held-out R^2, in [0, 1], on an
  # axis of RMSE in minutes)
  expect_setequal(p$data$candidate, cu$label[scored])
  expect_equal(sort(p$data$y), sort(cu$mean[scored]))
  expect_true(all(p$data$status == "scored by the learner"))
  # classification keeps its screen triangles (DNE accuracy, the axis's scale)
  sc <- score_candidates(Species ~ ., data = iris, seed = 1, learner = "nca")
  pc <- ggplot2::autoplot(sc)
  expect_true(any(pc$data$status != "scored by the learner"))
})

test_that("autoplot() of a choice that scored one kernel draws it without ggplot2's complaint", {
  skip_if_not_installed("ggplot2")
  fit <- kmaha(Volume ~ ., data = trees, seed = 1)
  cu <- fit$kernel_choice$cv$curve
  expect_identical(sum(cu$kind == "kernel" & !is.na(cu$mean)), 1L)
  p <- ggplot2::autoplot(fit, which = "kernel")
  # (was: "`geom_line()`: Each group consists of only one observation.",
  # when drawn)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(print(p))
  b <- ggplot2::ggplot_build(p)
  # the kernel is still drawn, with its bar
  expect_true(any(vapply(b$data, function(l) nrow(l) == 1L && "ymin" %in% names(l), NA)))
})

test_that("mlkr() of a Date or difftime response says how to make it a number", {
  x <- as.matrix(trees[, c("Girth", "Height")])
  d <- as.Date("2020-01-01") + round(trees$Volume)
  # (was: "`y` must be a numeric vector, not Date.", with no way out)
  expect_error(mlkr(x, d),
               "`y` must be a numeric vector, not Date: regress a number in the unit you mean, e.g. as.numeric(y) (days since 1970-01-01 for a Date) or as.numeric(y, units = \"hours\") for a difftime.",
               fixed = TRUE)
  expect_error(mlkr(x, as.difftime(trees$Volume, units = "mins")),
               "`y` must be a numeric vector, not difftime: regress a number", fixed = TRUE)
})

test_that("kmaha() of a Date response says what to give instead (it fitted one class per date)", {
  d <- data.frame(Girth = trees$Girth, Height = trees$Height,
                  when = as.Date("2020-01-01") + round(trees$Volume))
  expect_error(kmaha(when ~ ., data = d),
               "`y` is a Date, neither class labels nor a plain number: for a regression give a number in the unit you mean (e.g. as.numeric(y)), for classes give factor(y).",
               fixed = TRUE)
  expect_error(score_candidates(as.matrix(d[1:2]), as.POSIXct(d$when)),
               "`y` is a POSIXct, neither class labels nor a plain number", fixed = TRUE)
})
