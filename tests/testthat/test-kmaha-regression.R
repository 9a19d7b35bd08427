# kmaha() with a numeric response: MLKR pipelines scored by cross-validated
# RMSE (unstratified folds), the rule with the better-baseline fallback, the
# model's report, and errors naming the argument.

# y depends on the first two of five inputs, one of them non-linearly.
reg_data <- function(n = 90, seed = 1) {
  set.seed(seed)
  x <- matrix(runif(n * 5, -2, 2), n, 5)
  colnames(x) <- paste0("x", 1:5)
  list(x = x, y = sin(2 * x[, 1]) + 0.5 * x[, 2] + 0.1 * rnorm(n))
}

test_that("a numeric response fits a regression chosen by cross-validated RMSE", {
  d <- reg_data()
  fit <- kmaha(d$x, d$y, seed = 1)
  expect_s3_class(fit, c("kmaha_fit", "kmaha_regression", "kmaha_model"))
  expect_identical(fit$mode, "regression")
  expect_identical(fit$learner %in% c("mlkr", "euclidean"), TRUE)
  cv <- fit$kernel_choice$cv
  expect_identical(cv$metric, "rmse")
  expect_identical(unname(cv$learners), "mlkr")
  expect_setequal(unique(cv$curve$kind), c("kernel", "euclidean", "linear", "unweighted"))
  # the fast screen passed one of the 21 base kernels to MLKR
  ker <- cv$curve$kind == "kernel"
  expect_identical(sum(ker & !cv$curve$dropped), 1L)
  # the screen scored every other kernel of the grid (the narrowest are
  # numerically degenerate here: no score), then the neighbours of the best;
  # MLKR got the best
  sc <- cv$curve$screen
  expect_gte(sum(!is.na(sc[ker])), 8L)
  expect_identical(which(ker & !cv$curve$dropped), which.max(sc))
  # folds are unstratified: sizes 18 each
  expect_identical(as.vector(table(cv$folds)), rep(18L, 5))
  # each pipeline at its k of lowest mean RMSE (accuracy_k: fold RMSE per k)
  m <- apply(cv$accuracy_k, c(1, 3), mean)
  scored <- !is.na(cv$curve$mean)
  expect_equal(cv$curve$k[scored], cv$k[apply(m[scored, , drop = FALSE], 1, which.min)])
  expect_equal(cv$curve$mean[scored], apply(m[scored, , drop = FALSE], 1, min))
  # the model keeps the chosen k and distance weights
  expect_identical(fit$k, cv$curve$k[cv$best])
  expect_identical(fit$weights, "distance")
  # a learned metric beats Euclidean k-NN here (y ignores 3 of 5 inputs)
  eu <- which(cv$curve$kind == "euclidean")
  expect_lt(cv$curve$mean[cv$best], cv$curve$mean[eu])
})

test_that("the Euclidean candidate's fold RMSE equals a k-NN regression written out", {
  d <- reg_data(60, seed = 2)
  sc <- score_candidates(d$x, d$y, seed = 3, kernels = paper_kernels()[9:11])
  xs <- scale(d$x)
  eu <- which(sc$curve$kind == "euclidean")
  for (f in 1:5) {
    te <- sc$folds == f
    for (j in seq_along(sc$k)) {
      k <- sc$k[j]
      pred <- vapply(which(te), function(i) {
        d2 <- colSums((t(xs[!te, ]) - xs[i, ])^2)
        nb <- order(d2)[seq_len(k)]
        w <- 1 / sqrt(d2[nb])
        sum(w * d$y[!te][nb]) / sum(w)
      }, 0)
      expect_equal(unname(sc$accuracy_k[eu, f, j]), sqrt(mean((pred - d$y[te])^2)))
      expect_equal(sc$correct_k[te, eu, j], (pred - d$y[te])^2)
    }
  }
})

test_that("the rule keeps the better baseline unless a kernel beats it by half a standard error", {
  curve <- data.frame(candidate = 1:4, kind = c("kernel", "euclidean", "linear", "unweighted"),
                      label = c("RBF", "Euclidean", "linear", "sum"), learner = "mlkr",
                      sigma = c(1, NA, NA, NA), k = 5L, mean = c(0.9, 1.2, 1.0, 1.1),
                      sd = 0.1, n_ok = 5L, dropped = FALSE, degenerate = FALSE,
                      screen = c(0.5, NA, NA, NA), stringsAsFactors = FALSE)
  set.seed(1)
  base <- rexp(100)
  # the kernel's squared errors: a small, noisy gain over linear (column 3)
  noisy <- cbind(base + rnorm(100, -0.01, 0.5), base + 0.3, base, base + 0.1)
  sel <- kmaha:::regression_select(curve, noisy, 5L)
  expect_identical(sel$best, 3L)
  expect_match(sel$reason, "the better baseline, linear", fixed = TRUE)
  # a clear gain: the kernel is kept
  clear <- cbind(base - 0.2, base + 0.3, base, base + 0.1)
  sel <- kmaha:::regression_select(curve, clear, 5L)
  expect_identical(sel$best, 1L)
  expect_match(sel$reason, "beats the better baseline, linear, by 0.2", fixed = TRUE)
  # the better baseline is the lower RMSE: Euclidean when it is lower
  curve$mean[2:3] <- c(0.95, 1.0)
  noisy[, 2] <- base - 0.005
  sel <- kmaha:::regression_select(curve, noisy, 5L)
  expect_identical(sel$best, 2L)
  # rule "cv": the lowest RMSE among the kernels
  expect_identical(kmaha:::regression_select(curve, noisy, 5L, "cv")$best, 1L)
})

test_that("scores are reused: kmaha(kernel = <scores>) is the default fit", {
  d <- reg_data(70, seed = 4)
  sc <- score_candidates(d$x, d$y, seed = 5)
  a <- kmaha(d$x, d$y, seed = 5)
  b <- kmaha(d$x, d$y, kernel = sc)
  expect_identical(b$kernel_choice$cv$best, a$kernel_choice$cv$best)
  expect_equal(predict(b, d$x[1:5, ]), predict(a, d$x[1:5, ]))
  # scores of a regression do not fit classes, nor the reverse
  expect_error(kmaha(d$x, factor(d$y > 0), kernel = sc),
               "`kernel` holds scores of a regression (a numeric response), but `y` is class labels; score these data with score_candidates(), or fit with kernel = \"auto\".",
               fixed = TRUE)
})

test_that("the formula interface, a given kernel and learner = \"mlkr\" fit regressions", {
  fit <- kmaha(mpg ~ ., data = mtcars, learner = "mlkr", kernel = "linear")
  direct <- mlkr(mpg ~ ., data = mtcars)
  # a given kernel, no choice: MLKR's own k-NN regression (k = 10)
  expect_identical(fit$k, 10L)
  expect_equal(fit$L, direct$L, tolerance = 1e-8)
  expect_equal(predict(fit, mtcars[1:4, ]), predict(direct, mtcars[1:4, ]), tolerance = 1e-8)
  kf <- kmaha(mpg ~ ., data = mtcars, kernel = rbf_kernel(1), k = 4)
  expect_identical(kf$feature_map$type, "kpca")
  expect_identical(kf$k, 4L)
  expect_length(predict(kf, mtcars[1:4, ]), 4L)
})

test_that("print(), summary() and glance() say what won and why", {
  d <- reg_data(60, seed = 6)
  fit <- kmaha(d$x, d$y, seed = 1)
  cv <- fit$kernel_choice$cv
  out <- paste(capture.output(print(fit)), collapse = " ")
  expect_match(out, "why:", fixed = TRUE)
  expect_match(out, "RMSE", fixed = TRUE)
  s <- paste(capture.output(print(summary(fit))), collapse = " ")
  expect_match(s, "Candidates (cross-validated RMSE, lower is better):", fixed = TRUE)
  g <- generics::glance(fit)
  expect_identical(g$chosen, cv$curve$label[cv$best])
  expect_equal(g$cv_rmse, cv$curve$mean[cv$best])
  gs <- generics::glance(cv)
  expect_equal(gs$rmse, cv$curve$mean[cv$best])
  expect_true(is.na(gs$accuracy))
  expect_match(paste(capture.output(print(cv)), collapse = " "), "mean RMSE", fixed = TRUE)
  # the plots of the choice label the axis by the measure
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_silent(plot(fit, which = "kernel"))
  expect_silent(plot(fit))
  skip_if_not_installed("ggplot2")
  expect_identical(ggplot2::autoplot(fit, which = "kernel")$labels$y, "CV RMSE (mean +/- sd)")
})

test_that("bad input to a regression is refused with errors naming the argument", {
  d <- reg_data(40, seed = 7)
  cases <- list(
    list(quote(kmaha(d$x, d$y, learner = "nca")),
         "`y` is numeric, so kmaha() fits a regression, which `learner = \"nca\"` cannot: use learner = \"auto\" or \"mlkr\" (metric learning for kernel regression), or give class labels as a factor."),
    list(quote(kmaha(d$x, d$y, learner = function(x, y) diag(ncol(x)))),
         "`y` is numeric, so kmaha() fits a regression, which `learner = <a function>` cannot: use learner = \"auto\" or \"mlkr\" (metric learning for kernel regression), or give class labels as a factor."),
    list(quote(kmaha(d$x, factor(d$y > 0), learner = "mlkr")),
         "`learner = \"mlkr\"` is for a numeric response (regression), but `y` holds class labels; for classes use learner = \"auto\", \"nca\", \"lmnn\" or \"dne\", or give a numeric `y`."),
    list(quote(kmaha(d$x, rep(1.5, 40))),
         "`y` is constant: there is no variation to regress on."),
    list(quote(kmaha(d$x, replace(d$y, 2, NA))),
         "`y` contains missing values (NA/NaN). Remove those rows first."),
    list(quote(kmaha(d$x, d$y, learner_args = list(k = 3))),
         "'learner_args$k' sets the k-NN regression of mlkr()'s model, not its learner, so it cannot be a learner option: give the number of neighbours as the call's own `k` (kmaha(k = ), the frameworks' `neighbors`), and choose `k` and `weights` (\"distance\", \"uniform\" or \"kernel\") of a fitted model at prediction, with predict(fit, k = , weights = )."),
    list(quote(kmaha(d$x, d$y, kernel = "align")),
         "`kernel = \"align\"` aligns the kernels with the class labels, but `y` is a numeric response; for a regression use kernel = \"auto\", \"cv\", \"unweighted\", \"linear\" or a kernel object."),
    list(quote(score_candidates(d$x, d$y, learner = "lmnn")),
         "`y` is numeric, so score_candidates() fits a regression, which `learner = \"lmnn\"` cannot: use learner = \"auto\" or \"mlkr\" (metric learning for kernel regression), or give class labels as a factor."),
    # (was: "... so kmaha() fits ...", a function the user did not call)
    list(quote(cv_kernel(d$x, d$y)),
         "`y` is numeric, so cv_kernel() fits a regression, which `learner = \"nca\"` cannot: use learner = \"auto\" or \"mlkr\"")
  )
  for (case in cases) expect_error(eval(case[[1]]), case[[2]], fixed = TRUE)
})

test_that("classification is unchanged by the regression path (integer-coded labels as factors)", {
  fit <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = "linear")
  expect_false(inherits(fit, "kmaha_regression"))
  expect_null(fit$kernel_choice$cv$metric)
  sc <- score_candidates(iris[, 1:4], iris$Species, learner = "dne", seed = 1)
  expect_null(sc$metric)
  expect_true(is.logical(sc$correct))
})

test_that("kernel = \"cv\" takes the screened base kernel of lowest CV RMSE", {
  d <- reg_data(60, seed = 8)
  # (the final MLKR fit on 60 rows may stop at max_iter, with a warning)
  fit <- suppressWarnings(kmaha(d$x, d$y, kernel = "cv", kernels = paper_kernels()[7:13],
                                seed = 2))
  cv <- fit$kernel_choice$cv
  expect_identical(cv$rule, "cv")
  scored <- which(!cv$curve$dropped & !is.na(cv$curve$mean))
  # the screen passes 3 base kernels to MLKR for kernel = "cv"
  expect_length(scored, 3L)
  expect_identical(cv$best, scored[which.min(cv$curve$mean[scored])])
  expect_identical(fit$feature_map$type, "kpca")
  expect_identical(fit$k, cv$curve$k[cv$best])
})

test_that("with k unset a regression considers k up to 20, classes up to 15", {
  set.seed(21)
  x <- matrix(rnorm(120 * 2), 120, 2)
  y <- x[, 1] + 0.3 * rnorm(120)
  ks <- paper_kernels()[c(9, 13)]
  sc <- score_candidates(x, y, kernels = ks, seed = 1)
  expect_identical(sc$k, c(1L, 3L, 5L, 7L, 9L, 12L, 15L, 20L))
  expect_identical(dimnames(sc$accuracy_k)[[3]], paste0("k", sc$k))
  scored <- !is.na(sc$curve$mean)
  expect_true(all(sc$curve$k[scored] %in% sc$k))
  expect_true(all(is.na(sc$curve$k[!scored])))
  expect_identical(score_candidates(x, factor(y > 0), kernels = ks, seed = 1)$k,
                   c(1L, 3L, 5L, 7L, 9L, 11L, 13L, 15L))
  # only the k every fold's training part allows: 24 rows in 5 folds leave
  # 19 training rows, so at most 18 neighbours
  expect_identical(score_candidates(x[1:24, ], y[1:24], kernels = ks, seed = 1)$k,
                   c(1L, 3L, 5L, 7L, 9L, 12L, 15L))
  # a given k is used as it is
  expect_identical(score_candidates(x, y, kernels = ks, k = 4, seed = 1)$k, 4L)
})
