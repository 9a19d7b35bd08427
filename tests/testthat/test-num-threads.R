# One thread argument (issue 37): every front end that computes takes
# `num_threads`, and it reaches every call of the compiled code (the core
# records the largest thread count it was given since a reset); no learner
# option overrides it.

threads_seen_by <- function(expr) {
  kmaha:::core_threads_seen(TRUE)
  force(expr)
  kmaha:::core_threads_seen()
}

test_that("num_threads = 1 reaches every compiled call of each front end", {
  old <- options(kmaha.num_threads = 2)
  on.exit(options(old), add = TRUE)
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species
  ks <- lapply(c(0.5, 2), rbf_kernel)
  fit <- kmaha(x, y, learner = "dne", kernel = rbf_kernel(1))
  kp <- kpca(x, rbf_kernel(1), rank = 3)
  calls <- list(
    dne = quote(dne(x, y, num_threads = 1)),
    kdne = quote(kdne(x, y, num_threads = 1)),
    kpca = quote(kpca(x, rbf_kernel(1), rank = 3, num_threads = 1)),
    predict_kpca = quote(predict(kp, x[1:5, ], num_threads = 1)),
    align_kernels = quote(align_kernels(scale(x), y, ks, num_threads = 1)),
    predict = quote(predict(fit, x[1:5, ], num_threads = 1)),
    predict_prob = quote(predict(fit, x[1:5, ], type = "prob", num_threads = 1)),
    fitted = quote(fitted(fit, num_threads = 1)),
    knn_classify = quote(knn_classify(x, y, x[1:5, ], num_threads = 1)),
    target_neighbors = quote(target_neighbors(x, y, num_threads = 1)),
    kernel_matrix = quote(kernel_matrix(rbf_kernel(1), x, num_threads = 1)),
    reproduce_paper = quote(reproduce_paper(datasets = "iris", learners = "dne",
                                            kernels = c("aligned", "cv"), splits = 1,
                                            base_kernels = ks, num_threads = 1)))
  for (nm in names(calls)) {
    expect_identical(threads_seen_by(eval(calls[[nm]])), 1L, label = nm)
  }
  # and without the argument the package setting reaches them (2 here)
  expect_identical(threads_seen_by(predict(fit, x[1:5, ])), 2L)
  expect_identical(threads_seen_by(kernel_matrix(rbf_kernel(1), x)), 2L)
})

test_that("reproduce_paper(num_threads = 2) gives each fit two threads", {
  old <- options(kmaha.num_threads = 1)
  on.exit(options(old), add = TRUE)
  seen <- threads_seen_by(reproduce_paper(datasets = "iris", learners = "dne",
                                          kernels = "linear", splits = 1, num_threads = 2))
  expect_identical(seen, 2L)
  expect_error(reproduce_paper(datasets = "iris", learners = "nca", kernels = "linear",
                               splits = 1, learner_args = list(nca = list(num_threads = 2))),
               "`learner_args$nca` must not set `num_threads`: the threads of every fit are reproduce_paper()'s own `num_threads`.",
               fixed = TRUE)
})

test_that("learner_args has no thread setting that overrides the call's", {
  x <- as.matrix(iris[, 1:4])
  msg <- "`learner_args$num_threads` is not a learner option: the number of threads is the `num_threads` argument of the call itself"
  expect_error(kmaha(x, iris$Species, learner = "nca", learner_args = list(num_threads = 4)),
               msg, fixed = TRUE)
  expect_error(score_candidates(x, iris$Species, learner = "lmnn",
                                learner_args = list(num_threads = 4)), msg, fixed = TRUE)
  expect_error(cv_kernel(scale(x), iris$Species, "nca", learner_args = list(num_threads = 4)),
               msg, fixed = TRUE)
  # the folds of kernel choice run one thread each, whatever the call's
  # setting (their scores do not depend on it), and the final fit the call's
  old <- options(kmaha.num_threads = 1)
  on.exit(options(old), add = TRUE)
  ks <- lapply(c(0.5, 2), rbf_kernel)
  a <- kmaha(x, iris$Species, learner = "dne", kernel = "cv", kernels = ks, seed = 1,
             num_threads = 1)
  seen <- threads_seen_by(b <- kmaha(x, iris$Species, learner = "dne", kernel = "cv",
                                     kernels = ks, seed = 1, num_threads = 2))
  expect_identical(seen, 2L)
  expect_identical(a$kernel_choice$cv$accuracy, b$kernel_choice$cv$accuracy)
})
