# Every documented shape of `init` is checked, for every learner (issue
# 37): NCA and LMNN take a dim x D matrix (D input columns), KNCA and KLMNN
# a dim x n matrix of coefficients (n training points); with `dim = NULL`
# the matrix's rows give `dim`.  A matrix of another shape is an error that
# says which shape fits; one of the right shape is the start the fit uses.

init_data <- function() list(x = as.matrix(iris[, 1:4]), y = iris$Species)

test_that("KLMNN refuses a matrix start that is not dim x n (0.5.x took diag(3))", {
  d <- init_data()
  for (m in list(diag(3), diag(5), diag(8), diag(1, 2, 4))) {
    expect_error(klmnn(d$x, d$y, init = m, max_iter = 5),
                 sprintf("`init` must be a %d x 150 matrix (dim x number of training points), not %d x %d.",
                         nrow(m), nrow(m), ncol(m)), fixed = TRUE)
  }
  expect_error(klmnn(d$x, d$y, init = matrix(0.01, 2, 150), dim = 3, max_iter = 5),
               "`init` must be a 3 x 150 matrix (dim x number of training points), not 2 x 150.",
               fixed = TRUE)
  K <- kernel_matrix(rbf_kernel(1), scale(d$x))
  expect_error(klmnn(K, d$y, kernel = "precomputed", init = diag(3), max_iter = 5),
               "`init` must be a 3 x 150 matrix", fixed = TRUE)
})

test_that("KNCA refuses the same shapes", {
  d <- init_data()
  for (m in list(diag(3), diag(5), diag(8))) {
    expect_error(knca(d$x, d$y, init = m, max_iter = 5),
                 sprintf("`init` must be a %d x 150 matrix (dim x number of training points), not %d x %d.",
                         nrow(m), nrow(m), ncol(m)), fixed = TRUE)
  }
})

test_that("a dim x n start of KLMNN and KNCA is the start the fit uses", {
  d <- init_data()
  K <- kernel_matrix(rbf_kernel(1), scale(d$x))
  U <- kmaha:::knca_init("kpca", K, 2L, kmaha:::kmaha_context(1))$U
  a <- suppressWarnings(klmnn(K, d$y, kernel = "precomputed", init = U, max_iter = 20))
  b <- suppressWarnings(klmnn(K, d$y, kernel = "precomputed", init = "kpca", dim = 2,
                              max_iter = 20))
  expect_identical(dim(a$L), c(2L, 150L))
  expect_equal(a$L, b$L, tolerance = 1e-12)
  a <- suppressWarnings(knca(K, d$y, kernel = "precomputed", init = U, max_iter = 20))
  b <- suppressWarnings(knca(K, d$y, kernel = "precomputed", init = "kpca", dim = 2,
                             max_iter = 20))
  expect_equal(a$L, b$L, tolerance = 1e-12)
})

test_that("NCA and LMNN take a dim x D matrix, whose rows give dim, and refuse others", {
  d <- init_data()
  A <- diag(1, 2, 4)
  for (learn in list(nca, lmnn)) {
    a <- suppressWarnings(learn(d$x, d$y, init = A, max_iter = 10))
    b <- suppressWarnings(learn(d$x, d$y, init = A, dim = 2, max_iter = 10))
    expect_identical(dim(a$L), c(2L, 4L))
    expect_equal(a$L, b$L, tolerance = 1e-12)
    expect_error(learn(d$x, d$y, init = diag(1, 5, 4)),
                 "`init` has 5 rows but `x` has 4 columns: a map has at most one row per column of its input, so give `init` at most 4 rows.",
                 fixed = TRUE)
  }
  expect_error(nca(d$x, d$y, init = diag(3)),
               "`init` must be a 3 x 4 matrix (dim x number of input columns), not 3 x 3.",
               fixed = TRUE)
  expect_error(nca(d$x, d$y, init = A, dim = 3),
               "`init` must be a 3 x 4 matrix (dim x number of input columns), not 2 x 4.",
               fixed = TRUE)
  expect_error(lmnn(d$x, d$y, init = diag(3)),
               "`init` must have 4 columns (one per feature), not 3.", fixed = TRUE)
})

test_that("kmaha() checks a matrix start against the coordinates its learner receives", {
  d <- init_data()
  expect_error(kmaha(d$x, d$y, kernel = "linear", learner = "nca",
                     learner_args = list(init = diag(3))),
               "NCA on the 4 standardized input columns (its `x`): `init` must be a 3 x 4 matrix",
               fixed = TRUE)
  # the default learner = "auto" fits several learners: a matrix start is
  # for one
  expect_error(kmaha(d$x, d$y, kernel = "linear", learner_args = list(init = diag(3))),
               "`learner_args$init` as a matrix starts one learner on its coordinates, but learner = \"auto\" fits several",
               fixed = TRUE)
  f <- suppressWarnings(kmaha(d$x, d$y, kernel = "linear", learner = "lmnn",
                              learner_args = list(init = diag(1, 2, 4), max_iter = 10)))
  expect_identical(dim(f$L), c(2L, 4L))
  expect_error(kmaha(d$x, d$y, kernel = rbf_kernel(1), learner = "lmnn",
                     learner_args = list(init = diag(3))),
               "`learner_args$init` must have", fixed = TRUE)
  # kernel choice fits each candidate on its own coordinates: refused up front
  for (kernel in c("auto", "cv")) {
    expect_error(kmaha(d$x, d$y, kernel = kernel, learner = "nca",
                       learner_args = list(init = diag(4))),
                 sprintf("`learner_args$init` as a matrix starts the learner on one set of coordinates, but kernel choice (kernel = \"%s\")", kernel),
                 fixed = TRUE)
  }
})
