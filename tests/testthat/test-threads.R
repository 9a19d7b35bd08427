# The package thread setting: its precedence, its error messages, and that
# every threaded loop of the core gives the same result on 1 and 2 threads.

test_that("thread count: argument > option > environment > default", {
  old <- options(kmaha.num_threads = NULL)
  on.exit(options(old), add = TRUE)
  with_thread_env(NA, {
    expect_identical(kmaha_threads(), min(2L, as.integer(future::availableCores())))
    expect_identical(kmaha:::resolve_threads(NULL), kmaha_threads())
  })
  with_thread_env("3", {
    expect_identical(kmaha_threads(), 3L)
    options(kmaha.num_threads = 1)
    expect_identical(kmaha_threads(), 1L)
    expect_identical(kmaha:::resolve_threads(4), 4L)
    expect_identical(kmaha:::resolve_threads(NULL), 1L)
    # nca() records the count it used
    fit <- suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5, num_threads = 2))
    expect_identical(fit$settings$num_threads, 2L)
    fit <- suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5))
    expect_identical(fit$settings$num_threads, 1L)
  })
  options(kmaha.num_threads = NULL)
  expect_identical(kmaha_threads(2), min(2L, as.integer(future::availableCores())))
  expect_identical(getOption("kmaha.num_threads"), 2L)
  expect_identical(kmaha_threads(), 2L)
})

test_that("bad thread settings give clear errors", {
  old <- options(kmaha.num_threads = 0)
  on.exit(options(old), add = TRUE)
  expect_error(kmaha_threads(),
               "Option `kmaha.num_threads` must be a single whole number >= 1, not 0; reset it with options(kmaha.num_threads = NULL).",
               fixed = TRUE)
  options(kmaha.num_threads = NULL)
  with_thread_env("many", {
    expect_error(kmaha_threads(),
                 "Environment variable KMAHA_NUM_THREADS must be a whole number >= 1, not \"many\".",
                 fixed = TRUE)
    # a broken setting stops the C++ calls too, with the same message
    expect_error(kernel_matrix(rbf_kernel(1), diag(3)),
                 "KMAHA_NUM_THREADS must be a whole number", fixed = TRUE)
  })
  expect_error(kmaha_threads(1.5), "`n` must be a single whole number >= 1.",
               fixed = TRUE)
  expect_error(nca(iris[, 1:4], iris$Species, num_threads = 0),
               "`num_threads` must be a single whole number >= 1.", fixed = TRUE)
})

test_that("threaded loops give identical results on 1 and 2 threads", {
  d <- scale_data()
  x <- d$x
  y <- d$y
  run <- function() {
    set.seed(5)
    list(
      gram = kernel_matrix(kernel_sum(list(rbf_kernel(0.5), poly_kernel(2))), x),
      cross = kernel_matrix(laplace_kernel(2), x, x[1:37, ]),
      kpca = kpca(x, rbf_kernel(1), rank = 20)$coords,
      proj = predict(kpca(x[1:300, ], rbf_kernel(1)), x[301:600, ]),
      nys = kpca(x, rbf_kernel(1), landmarks = 80)$coords,
      nyspp = kpca(x, rbf_kernel(1), landmarks = 40,
                   landmark_method = "kmeans++")$landmark_index,
      knn = knn_classify(x[1:400, ], y[1:400], x[401:600, ], k = 3),
      loo = knn_classify(x, y, k = 5)$class,
      same = target_neighbors(x, y, k = 3),
      other = target_neighbors(x, y, k = 2, type = "other"),
      dne = dne(x, y, k = 3)$L,
      align = align_kernels(x, y, lapply(c(0.5, 1, 4), rbf_kernel))$S)
  }
  one <- with_threads(1, run())
  two <- with_threads(2, run())
  for (nm in names(one)) expect_identical(two[[nm]], one[[nm]], label = nm)
  # NCA sums per thread, so only rounding may differ
  f1 <- suppressWarnings(nca(x, y, max_iter = 20, num_threads = 1))
  f2 <- suppressWarnings(nca(x, y, max_iter = 20, num_threads = 2))
  expect_equal(f2$L, f1$L, tolerance = 1e-8)
})
