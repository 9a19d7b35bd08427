# Arguments (issue 27): the formula methods take argument names exactly (a
# name that only begins an argument's name is an error naming both), choices
# are checked exactly with errors naming the argument, and coef() rejects
# unknown arguments as fitted() and tidy() do.

test_that("a partial argument name in a formula method is an error naming it and the function", {
  msg <- function(arg, fun, hits) {
    sprintf("`%s` is not an argument of %s(); it is only the start of %s. Write argument names in full (see ?%s).",
            arg, fun, hits, fun)
  }
  # the case of the issue: `k` would become knca()'s `kernel`
  expect_error(knca(Species ~ ., iris, k = 3), msg("k", "knca", "`kernel`"), fixed = TRUE)
  expect_error(kmaha(Species ~ ., iris, learn = "dne"),
               msg("learn", "kmaha", "`learner` or `learner_args`"), fixed = TRUE)
  expect_error(kmaha(Species ~ ., iris, landmark = 10),
               msg("landmark", "kmaha", "`landmarks` or `landmark_method`"), fixed = TRUE)
  expect_error(nca(Species ~ ., iris, di = 2), msg("di", "nca", "`dim`"), fixed = TRUE)
  expect_error(nca(Species ~ ., iris, d = 2), msg("d", "nca", "`data` or `dim`"),
               fixed = TRUE)
  expect_error(lmnn(Species ~ ., iris, max = 10), msg("max", "lmnn", "`max_iter`"),
               fixed = TRUE)
  expect_error(dne(Species ~ ., iris, tar = NULL), msg("tar", "dne", "`targets`"),
               fixed = TRUE)
  expect_error(kdne(Species ~ ., iris, ep = 1e-6), msg("ep", "kdne", "`eps`"), fixed = TRUE)
  expect_error(klmnn(Species ~ ., iris, m = 0.3),
               msg("m", "klmnn", "`mu` or `max_iter`"), fixed = TRUE)
  # the formula method's own arguments too (R would take `dat` as `data`)
  expect_error(nca(Species ~ ., dat = iris), msg("dat", "nca", "`data`"), fixed = TRUE)
  # names passed on through a wrapper's `...` are checked as typed
  wrap <- function(...) knca(Species ~ ., iris, ...)
  expect_error(wrap(k = 3), msg("k", "knca", "`kernel`"), fixed = TRUE)
})

test_that("full argument names reach the default method unchanged", {
  # lmnn() has a `k`: exact names are never mistaken for partial ones
  a <- lmnn(Species ~ ., iris, k = 2)
  b <- lmnn(as.matrix(iris[, 1:4]), iris$Species, k = 2)
  expect_equal(a$L, b$L)
  # a wrapper passing full names
  wrap <- function(...) dne(Species ~ ., data = iris, ...)
  expect_equal(wrap(k = 2, dim = 2)$L, dne(iris[, 1:4], iris$Species, k = 2, dim = 2)$L)
  # names that begin no argument are left to the default method's check
  expect_error(dne(Species ~ ., iris, zzz = 1), "Unknown argument(s) to dne(): 'zzz'.",
               fixed = TRUE)
})

test_that("match_choice() and match_choices() name the argument and the choices", {
  expect_identical(match_choice(c("feature", "input"), c("feature", "input"), "neighbors"),
                   "feature")
  expect_identical(match_choice("input", c("feature", "input"), "neighbors"), "input")
  for (bad in list(1, NA_character_, c("feature", "feature"), "feat", character(), NULL)) {
    expect_error(match_choice(bad, c("feature", "input"), "neighbors"),
                 "`neighbors` must be one of \"feature\", \"input\".", fixed = TRUE)
  }
  ch <- c("linear", "cv", "auto")
  expect_identical(match_choices(ch, ch, "kernels"), ch)
  expect_identical(match_choices(c("cv", "linear", "cv"), ch, "kernels"), c("cv", "linear"))
  expect_error(match_choices("auto2", ch, "kernels"),
               "`kernels` must be one or more of \"linear\", \"cv\", \"auto\"; \"auto2\" is not.",
               fixed = TRUE)
  expect_error(match_choices(c("x", "cv", "y"), ch, "kernels"),
               "`kernels` must be one or more of \"linear\", \"cv\", \"auto\"; \"x\", \"y\" are not.",
               fixed = TRUE)
  for (bad in list(1, character(), NA_character_, NULL)) {
    expect_error(match_choices(bad, ch, "kernels"),
                 "`kernels` must be one or more of \"linear\", \"cv\", \"auto\".", fixed = TRUE)
  }
})

test_that("choices of the standalone tools and reproduce_paper() give errors naming the argument", {
  x <- scale(iris[, 1:4])
  expect_error(reproduce_paper(kernels = "auto2"),
               "`kernels` must be one or more of \"linear\", \"cv\", \"aligned\", \"unweighted\", \"auto\"; \"auto2\" is not.",
               fixed = TRUE)
  expect_error(reproduce_paper(learners = 1),
               "`learners` must be one or more of \"nca\", \"lmnn\", \"dne\".", fixed = TRUE)
  expect_error(reproduce_paper(learners = c("dne", "knn")),
               "`learners` must be one or more of \"nca\", \"lmnn\", \"dne\"; \"knn\" is not.",
               fixed = TRUE)
  expect_error(target_neighbors(x, iris$Species, type = "diff"),
               "`type` must be one of \"same\", \"other\".", fixed = TRUE)
  kp <- kpca(x, rbf_kernel(1), rank = 3)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_error(plot(kp, type = "eigen"),
               "`type` must be one of \"coords\", \"spectrum\".", fixed = TRUE)
  # values are no longer completed: "trunc" is not "truncated"
  expect_error(kpca(x, rbf_kernel(1), rank = 3, method = "trunc"),
               "`method` must be one of \"auto\", \"full\", \"truncated\", \"nystrom\".",
               fixed = TRUE)
  expect_error(align_kernels(x, iris$Species, method = 1),
               "`method` must be one of \"qp\", \"lp\".", fixed = TRUE)
})

test_that("kmaha(), score_candidates(), plot() and kmaha_caret() take exact choices", {
  x <- scale(iris[, 1:4])
  y <- iris$Species
  # abbreviations were completed by match.arg(); now they name the argument
  expect_error(kmaha(x, y, cv_strategy = "exh"),
               "`cv_strategy` must be one of \"fast\", \"exhaustive\".", fixed = TRUE)
  expect_error(kmaha(x, y, neighbors = 1),
               "`neighbors` must be one of \"feature\", \"input\".", fixed = TRUE)
  expect_error(kmaha(x, y, kernel = "linear", landmark_method = "kmeans"),
               "`landmark_method` must be one of \"random\", \"kmeans++\".", fixed = TRUE)
  expect_error(score_candidates(x, y, candidates = "kern"),
               "`candidates` must be one of \"auto\", \"kernels\".", fixed = TRUE)
  expect_error(score_candidates(x, y, strategy = "greedy"),
               "`strategy` must be one of \"fast\", \"exhaustive\".", fixed = TRUE)
  expect_error(kmaha_caret("nc"),
               "`method` must be one of \"nca\", \"lmnn\", \"dne\", \"knca\", \"klmnn\", \"kdne\", \"mlkr\", \"kmlkr\", \"auto\".",
               fixed = TRUE)
  fit <- nca(x, y)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_error(plot(fit, which = "kern"),
               "`which` must be one of \"embedding\", \"kernel\".", fixed = TRUE)
})

test_that("coef() rejects unknown arguments, as fitted() and tidy() do", {
  fit <- dne(Species ~ ., iris, dim = 2)
  expect_error(coef(fit, matrix = TRUE), "Unknown argument(s) to coef(): 'matrix'.",
               fixed = TRUE)
  expect_error(fitted(fit, matrix = TRUE), "Unknown argument(s) to fitted(): 'matrix'.",
               fixed = TRUE)
  expect_identical(coef(fit), fit$L)
})
