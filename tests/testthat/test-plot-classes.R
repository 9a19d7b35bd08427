# plot() works for every class whose help page lists it (issue 37): the
# models of every learner (?kmaha-model), kmaha() fits with each kind of
# kernel choice (?kmaha), scored candidates with and without a selection
# (?score_candidates, ?cv_kernel), alignments, kernel PCA and reproductions.
# Each draws on a null device and returns its argument invisibly.

plots_on_null <- function(obj, ...) {
  grDevices::pdf(NULL, width = 7, height = 5)
  dev <- grDevices::dev.cur()
  on.exit(grDevices::dev.off(dev), add = TRUE)
  grDevices::dev.control("enable")
  out <- withVisible(plot(obj, ...))
  expect_false(out$visible)
  expect_identical(out$value, obj)
  # something was drawn
  expect_gt(length(grDevices::recordPlot()[[1]]), 0L)
}

test_that("plot() draws scored candidates with and without a selection", {
  x <- as.matrix(iris[, 1:4])
  ks <- lapply(c(0.1, 1, 10), rbf_kernel)
  sc <- score_candidates(x, iris$Species, learner = "dne", kernels = ks, folds = 3, seed = 1)
  expect_null(sc$best)
  plots_on_null(sc)
  sk <- score_candidates(x, iris$Species, learner = "dne", candidates = "kernels",
                         kernels = ks, folds = 3, seed = 1)
  plots_on_null(sk)
  plots_on_null(cv_kernel(scale(x), iris$Species, "dne", kernels = ks, folds = 3, seed = 1))
  # the selection stored in a fit
  fit <- kmaha(x, iris$Species, kernel = sc)
  plots_on_null(fit$kernel_choice$cv)
})

test_that("plot() draws the models of every learner", {
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species
  models <- list(
    nca = nca(x, y, max_iter = 20),
    lmnn = suppressWarnings(lmnn(x, y, max_iter = 20)),
    dne = dne(x, y),
    knca = suppressWarnings(knca(x, y, kernel = rbf_kernel(1), dim = 2, max_iter = 10)),
    klmnn = suppressWarnings(klmnn(x, y, kernel = rbf_kernel(1), dim = 2, max_iter = 10)),
    kdne = kdne(x, y, kernel = rbf_kernel(1), dim = 2),
    kmaha = kmaha(x, y, learner = "dne", kernel = rbf_kernel(1)))
  for (nm in names(models)) {
    expect_s3_class(models[[nm]], "kmaha_model")
    plots_on_null(models[[nm]])
  }
})

test_that("plot(which = \"kernel\") draws fits whose kernel was chosen or aligned", {
  x <- as.matrix(iris[, 1:4])
  ks <- lapply(c(0.1, 1, 10), rbf_kernel)
  for (kernel in c("auto", "cv", "align")) {
    fit <- kmaha(x, iris$Species, learner = "dne", kernel = kernel, kernels = ks,
                 cv_folds = 3, seed = 1)
    plots_on_null(fit, which = "kernel")
  }
  expect_error(plot(kmaha(x, iris$Species, learner = "dne", kernel = "linear"),
                    which = "kernel"),
               "`which = \"kernel\"` needs a kmaha() fit whose kernel was chosen", fixed = TRUE)
})

test_that("plot() draws alignments, kernel PCA and reproductions", {
  x <- as.matrix(iris[, 1:4])
  ks <- lapply(c(0.1, 1, 10), rbf_kernel)
  plots_on_null(align_kernels(scale(x), iris$Species, ks))
  kp <- kpca(scale(x), rbf_kernel(1), rank = 3)
  plots_on_null(kp)
  plots_on_null(kp, type = "spectrum")
  res <- reproduce_paper(datasets = "iris", learners = "dne",
                         kernels = c("linear", "unweighted"), splits = 2)
  plots_on_null(res)
})
