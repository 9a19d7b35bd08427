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
  expect_error(kmaha_caret("svm"), "should be one of")
})
