# Cross-validated kernel choice (cv_kernel) and its parallel/progress plumbing.

set.seed(5)
idx_cv <- sort(c(sample(1:50, 25), sample(51:100, 25), sample(101:150, 25)))
xc <- scale(as.matrix(iris[idx_cv, 1:4]))
yc <- iris$Species[idx_cv]
kc <- lapply(c(0.1, 0.5, 2, 20), rbf_kernel)
identity_learner <- function(x, y, ...) diag(ncol(x))

# Plain-R reference: 1-NN accuracy from kernel-induced feature-space
# distances d2(a, b) = k(a, a) + k(b, b) - 2 k(a, b) (no KPCA involved).
feature_1nn_acc <- function(kern, xtr, ytr, xte, yte) {
  Ktt <- kernel_matrix(kern, xte, xtr)
  dtr <- diag(kernel_matrix(kern, xtr))
  dte <- diag(kernel_matrix(kern, xte))
  D2 <- outer(dte, dtr, "+") - 2 * Ktt
  mean(ytr[apply(D2, 1, which.min)] == yte)
}

test_that("with an identity learner the CV score is feature-space 1-NN accuracy", {
  cv <- cv_kernel(xc, yc, identity_learner, kc, folds = 3, k = 1, seed = 42,
                  tol = 1e-12)
  expect_s3_class(cv, "kmaha_cv")
  expect_equal(dim(cv$accuracy), c(4L, 3L))
  for (j in seq_along(kc)) {
    ref <- vapply(1:3, function(f) {
      tr <- cv$folds != f
      feature_1nn_acc(kc[[j]], xc[tr, ], yc[tr], xc[!tr, ], yc[!tr])
    }, numeric(1))
    expect_equal(unname(cv$accuracy[j, ]), ref, tolerance = 1e-12)
  }
  expect_equal(cv$curve$mean, unname(rowMeans(cv$accuracy)))
  expect_equal(cv$curve$sd, unname(apply(cv$accuracy, 1, sd)))
  expect_equal(cv$curve$sigma, c(0.1, 0.5, 2, 20))
  expect_identical(cv$best, which.max(cv$curve$mean))
  expect_identical(cv$kernel, kc[[cv$best]])
})

test_that("folds are stratified and reproducible; the global RNG is restored", {
  set.seed(1)
  before <- .Random.seed
  cv1 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5, seed = 9)
  expect_identical(.Random.seed, before)
  cv2 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5, seed = 9)
  expect_identical(cv1$folds, cv2$folds)
  expect_identical(cv1$accuracy, cv2$accuracy)
  tab <- table(cv1$folds, yc)
  expect_true(all(apply(tab, 2, function(col) max(col) - min(col)) <= 1L))
  expect_true(max(table(cv1$folds)) - min(table(cv1$folds)) <= 1L)
  set.seed(3)
  cv3 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5)
  set.seed(3)
  cv4 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5)
  expect_identical(cv3$folds, cv4$folds)
  cv5 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5, seed = 10)
  expect_false(identical(cv1$folds, cv5$folds))
})

test_that("ties go to the first best kernel", {
  kk <- list(rbf_kernel(2), rbf_kernel(0.5), rbf_kernel(2))
  cv <- cv_kernel(xc, yc, identity_learner, kk, folds = 3, seed = 1)
  expect_identical(cv$accuracy[1, ], cv$accuracy[3, ])
  if (cv$curve$mean[1] >= cv$curve$mean[2]) expect_identical(cv$best, 1L)
  kk2 <- list(rbf_kernel(0.5), rbf_kernel(0.5))
  cv2 <- cv_kernel(xc, yc, identity_learner, kk2, folds = 3, seed = 1)
  expect_identical(cv2$best, 1L)
})

test_that("user-supplied fold labels are used as given", {
  f <- rep(1:3, length.out = nrow(xc))
  cv <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = f)
  expect_identical(cv$folds, f)
})

test_that("a learner failing on some kernels is recorded, others still win", {
  picky <- function(x, y, ...) {
    if (ncol(x) > 20) stop("too many KPCA components")
    diag(ncol(x))
  }
  # sigma = 0.1 keeps (almost) every component, sigma = 20 only a few
  cv <- cv_kernel(xc, yc, picky, list(rbf_kernel(0.1), rbf_kernel(20)),
                  folds = 3, seed = 2)
  expect_true(all(is.na(cv$accuracy[1, ])))
  expect_identical(cv$best, 2L)
  expect_true(all(cv$errors$kernel == 1L))
  expect_match(cv$errors$message[1], "too many KPCA components", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, function(x, y) stop("boom"), kc[1:2], folds = 3),
               "Cross-validation failed for every kernel; first error: boom",
               fixed = TRUE)
})

test_that("progress is signalled once per kernel and fold", {
  old <- options(progressr.enable = TRUE)
  on.exit(options(old), add = TRUE)
  n_updates <- 0L
  withCallingHandlers(
    cv_kernel(xc, yc, identity_learner, kc[1:3], folds = 4, seed = 1),
    progression = function(cond) {
      if (identical(cond$type, "update")) n_updates <<- n_updates + 1L
    })
  expect_identical(n_updates, 12L)
})

test_that("CV runs through the future plan: sequential equals multisession", {
  skip_on_cran()
  skip_if_not_installed("future")
  skip_if_not(nzchar(Sys.getenv("KMAHA_SLOW_TESTS")), "set KMAHA_SLOW_TESTS=1")
  skip_if_not(nzchar(find.package("kmaha", lib.loc = .libPaths(), quiet = TRUE)[1] %||% ""),
              "kmaha must be installed for multisession workers")
  # a learner that uses random numbers: the result must not depend on the plan
  noisy <- function(x, y, ...) diag(ncol(x)) + matrix(stats::rnorm(ncol(x)^2, sd = 0.01), ncol(x))
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  cv_seq <- cv_kernel(xc, yc, noisy, kc, folds = 3, seed = 7)
  future::plan(future::multisession, workers = 2)
  cv_par <- cv_kernel(xc, yc, noisy, kc, folds = 3, seed = 7)
  expect_identical(cv_par$accuracy, cv_seq$accuracy)
  expect_identical(cv_par$best, cv_seq$best)
})

test_that("bad input gives clear errors", {
  expect_error(cv_kernel(xc, yc, "svm", kc), "`learner` must be \"nca\", \"lmnn\", \"dne\" or a function",
               fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, folds = 1),
               "`folds` must be a single whole number >= 2.", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, folds = 1:3),
               "`folds` must be a single number of folds or a vector of 75 fold labels",
               fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, learner_args = list(1)),
               "`learner_args` must be a named list", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, learner_args = list(scale = TRUE)),
               "`learner_args` must not set 'scale'", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, lambda = 1),
               "Unknown argument(s) to cv_kernel(): 'lambda'. Pass learner options in `learner_args`.",
               fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, rbf_kernel(1)),
               "`kernels` must be a non-empty list", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, function(x, y) "a", kc[1:2], folds = 3),
               "The learner must return a numeric d x", fixed = TRUE)
})
