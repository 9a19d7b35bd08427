# caret::train() with each kmaha model on two grid points.

caret_data <- function() {
  set.seed(5)
  idx <- c(sample(1:50, 20), sample(51:100, 20), sample(101:150, 20))
  iris[idx, ]
}

grids <- list(
  nca = data.frame(dim = c(4, 2), k = 1),
  lmnn = data.frame(targets = c(1, 3), k = 1),
  dne = data.frame(targets = c(2, 3), k = 1),
  knca = data.frame(sigma = c(1, 5), k = 1),
  klmnn = data.frame(sigma = c(1, 5), targets = 2, k = 1),
  kdne = data.frame(sigma = c(1, 5), targets = 2, k = 3)
)

for (method in names(grids)) {
  test_that(sprintf("caret::train works with kmaha_caret('%s')", method), {
    skip_if_not_installed("caret")
    dat <- caret_data()
    set.seed(1)
    tuned <- suppressWarnings(caret::train(
      Species ~ ., data = dat, method = if (method %in% c("nca", "knca")) kmaha_caret(method, max_iter = 100)
               else kmaha_caret(method),
      tuneGrid = grids[[method]],
      trControl = caret::trainControl(method = "cv", number = 3,
                                      classProbs = TRUE)))
    expect_s3_class(tuned, "train")
    expect_identical(nrow(tuned$results), 2L)
    expect_true(all(is.finite(tuned$results$Accuracy)))
    # tuned models classify iris far better than chance
    expect_gt(max(tuned$results$Accuracy), 0.8)
    held_out <- iris[setdiff(rownames(iris), rownames(dat)), ]
    pred <- predict(tuned, held_out)
    expect_s3_class(pred, "factor")
    expect_gt(mean(pred == held_out$Species), 0.65)
    pr <- predict(tuned, held_out[1:5, ], type = "prob")
    expect_identical(names(pr), levels(iris$Species))
    expect_equal(unname(rowSums(pr)), rep(1, 5))
  })
}

test_that("default grids have the model's parameters", {
  x <- as.matrix(iris[, 1:4])
  for (method in names(grids)) {
    m <- kmaha_caret(method)
    g <- m$grid(x, iris$Species, len = 2)
    expect_setequal(names(g), m$parameters$parameter)
    expect_gt(nrow(g), 1L)
    gr <- m$grid(x, iris$Species, len = 3, search = "random")
    expect_setequal(names(gr), m$parameters$parameter)
  }
  # a long grid (caret's tuneLength) has no row twice: len consecutive
  # widths of the paper's grid around sigma = 1, inside the grid at its
  # ends (was: widths clipped at the ends, repeated from len = 18 on)
  sig <- paper_sigmas()
  for (len in c(3L, 10L, 18L, 25L)) {
    g <- kmaha_caret("knca")$grid(x, iris$Species, len = len)
    expect_identical(anyDuplicated(g), 0L)
    s <- sort(unique(g$sigma))
    expect_identical(length(s), min(len, length(sig)))
    idx <- match(s, sig)
    expect_identical(idx, seq(idx[1], length.out = length(idx)))
    expect_true(1 %in% s)
  }
  expect_error(kmaha_caret("svm"),
               "`method` must be one of \"nca\", \"lmnn\", \"dne\", \"knca\", \"klmnn\", \"kdne\", \"mlkr\", \"kmlkr\", \"auto\".",
               fixed = TRUE)
})

test_that("loop: one fit per combination of the other parameters serves every k", {
  m <- kmaha_caret("kdne")
  grid <- expand.grid(sigma = c(1, 5), targets = 2, k = c(5, 1, 3))
  lp <- m$loop(grid)
  expect_identical(nrow(lp$loop), 2L)
  expect_setequal(lp$loop$sigma, c(1, 5))
  expect_length(lp$submodels, 2L)
  for (i in 1:2) {
    expect_setequal(c(lp$loop$k[i], lp$submodels[[i]]$k), c(5, 1, 3))
  }
  # nca: no parameter besides dim and k
  lp2 <- kmaha_caret("nca")$loop(data.frame(dim = c(4, 4, 2), k = c(1, 3, 1)))
  expect_identical(nrow(lp2$loop), 2L)
  expect_identical(lp2$submodels[[1]]$k, 3)
  expect_identical(nrow(lp2$submodels[[2]]), 0L)
})

test_that("predictions for submodels equal fits with each k", {
  m <- kmaha_caret("kdne")
  x <- as.matrix(iris[seq(1, 150, 2), 1:4])
  y <- iris$Species[seq(1, 150, 2)]
  newx <- iris[seq(2, 150, 2), 1:4]
  fit <- m$fit(x, y, wts = NULL, param = data.frame(sigma = 1, targets = 2, k = 5))
  sub <- data.frame(k = c(1, 3))
  cls <- m$predict(fit, newx, submodels = sub)
  prb <- m$prob(fit, newx, submodels = sub)
  expect_length(cls, 3L)
  for (i in 1:3) {
    k <- c(5, 1, 3)[i]
    own <- m$fit(x, y, wts = NULL, param = data.frame(sigma = 1, targets = 2, k = k))
    expect_identical(cls[[i]], m$predict(own, newx))
    expect_equal(prb[[i]], m$prob(own, newx))
  }
  expect_identical(m$predict(fit, newx), cls[[1]])
})

test_that("caret::train() with the loop fits once per sigma and matches fits per k", {
  skip_if_not_installed("caret")
  dat <- caret_data()
  grid <- expand.grid(sigma = c(1, 5), targets = 2, k = c(1, 3, 5))
  calls <- 0L
  counted <- function(m) {
    f <- m$fit
    m$fit <- function(...) {
      calls <<- calls + 1L
      f(...)
    }
    m
  }
  run <- function(m) {
    calls <<- 0L
    set.seed(1)
    tuned <- caret::train(Species ~ ., data = dat, method = counted(m), tuneGrid = grid,
                          trControl = caret::trainControl(method = "cv", number = 3))
    list(results = tuned$results[order(tuned$results$sigma, tuned$results$k), ],
         calls = calls)
  }
  with_loop <- run(kmaha_caret("kdne"))
  m <- kmaha_caret("kdne")
  m$loop <- NULL
  without <- run(m)
  # 3 folds x 2 sigmas + the final fit, against 3 folds x 6 grid rows + 1
  expect_identical(with_loop$calls, 7L)
  expect_identical(without$calls, 19L)
  expect_equal(with_loop$results$Accuracy, without$results$Accuracy)
  expect_equal(with_loop$results$Kappa, without$results$Kappa)
})

test_that("case weights are ignored with a warning", {
  m <- kmaha_caret("dne")
  x <- as.matrix(iris[, 1:4])
  expect_warning(m$fit(x, iris$Species, wts = rep(1, 150),
                       param = data.frame(targets = 3, k = 1)),
                 "case weights \\(the `weights` of caret::train\\(\\)\\) are ignored")
  expect_silent(m$fit(x, iris$Species, wts = NULL, param = data.frame(targets = 3, k = 1)))
  skip_if_not_installed("caret")
  w <- collect_warnings(caret::train(
    Species ~ ., data = caret_data(), method = m, weights = rep(2, 60),
    tuneGrid = data.frame(targets = 3, k = 1),
    trControl = caret::trainControl(method = "cv", number = 2)))
  expect_true(any(grepl("case weights", w$warnings)))
})

test_that("kmaha_caret(\"auto\") passes its arguments to kmaha() and checks them", {
  m <- kmaha_caret("auto", seed = 1, k = 3)
  expect_identical(m$parameters$parameter, "parameter")
  expect_identical(m$grid(iris[, 1:4], iris$Species), data.frame(parameter = "none"))
  dat <- caret_data()
  fit <- m$fit(dat[, 1:4], dat$Species, param = m$grid(dat[, 1:4], dat$Species))
  direct <- kmaha(as.matrix(dat[, 1:4]), dat$Species, seed = 1, k = 3)
  expect_identical(fit$k, 3L)
  expect_identical(m$predict(fit, iris[, 1:4]),
                   as.character(predict(direct, as.matrix(iris[, 1:4]))))
  expect_equal(as.matrix(m$prob(fit, iris[1:5, 1:4])),
               predict(direct, as.matrix(iris[1:5, 1:4]), type = "prob"),
               ignore_attr = TRUE)
  expect_error(kmaha_caret("auto", sigma = 2),
               "Unknown argument(s) to kmaha_caret(\"auto\"): 'sigma'. It passes its arguments to kmaha(), which takes: learner, kernel, k,",
               fixed = TRUE)
  expect_error(kmaha_caret("auto", 1),
               "Unknown argument(s) to kmaha_caret(\"auto\"): <unnamed>. Arguments for kmaha() must be named, e.g. seed = 1.",
               fixed = TRUE)
})
