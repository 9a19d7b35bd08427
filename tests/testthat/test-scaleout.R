# Scale-out: the parallel parts of kmaha go through future.apply, so a
# future::cluster plan of local workers (the plan a user points at a real
# cluster by giving host names) must give the results of a sequential plan.

test_that("a cluster plan of local workers reproduces the sequential results", {
  skip_on_cran()
  skip_if_not(nzchar(Sys.getenv("KMAHA_SLOW_TESTS")), "set KMAHA_SLOW_TESTS=1")
  skip_if_not(nzchar(find.package("kmaha", lib.loc = .libPaths(), quiet = TRUE)[1] %||% ""),
              "kmaha must be installed for cluster workers")
  x <- scale(as.matrix(iris[, 1:4]))
  y <- iris$Species
  kern <- lapply(c(0.3, 1, 3), rbf_kernel)
  # a session whose random state exists (cv_kernel(seed = ) restores it)
  set.seed(1)
  run <- function() {
    list(
      cv = cv_kernel(x, y, "dne", kern, folds = 3, seed = 7)$accuracy,
      # NCA on mini-batches draws random numbers inside each fold's task
      cv_nca = cv_kernel(x, y, "nca", kern[2], folds = 3, seed = 8,
                         learner_args = list(method = "minibatch", batch_size = 40,
                                             max_iter = 30),
                         landmarks = 20)$accuracy,
      paper = as.data.frame(reproduce_paper(datasets = "iris", learners = "dne",
                                            kernels = c("linear", "aligned"),
                                            splits = 2, seed = 3))[, 1:5])
  }
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  seq_res <- run()
  future::plan(future::cluster, workers = 2)
  expect_equal(future::nbrOfWorkers(), 2)
  cl_res <- run()
  expect_identical(cl_res$cv, seq_res$cv)
  expect_identical(cl_res$cv_nca, seq_res$cv_nca)
  expect_identical(cl_res$paper, seq_res$paper)
})

test_that("large-n fit and predict paths hold no n x n matrix", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if(Sys.which("bash") == "", "needs bash for ulimit")
  skip_if_sanitized()
  skip_if_not(nzchar(find.package("kmaha", lib.loc = .libPaths(), quiet = TRUE)[1] %||% ""),
              "kmaha must be installed for the child process")
  # n = 12 000: one n x n matrix of doubles takes 1.15 GB, more than the
  # 1 GB address space the child R process is given (R itself takes ~0.3 GB).
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(kmaha)",
    "set.seed(1)",
    "n <- 12000",
    "y <- factor(rep(1:3, length.out = n))",
    "x <- matrix(rnorm(n * 3), n, 3) + as.integer(y)",
    "kp <- kpca(x, rbf_kernel(1), landmarks = 50, rank = 10)",
    "z <- predict(kp, x[1:3000, ])",
    "f1 <- dne(x, y, k = 3)",
    "f2 <- nca(x, y, method = 'minibatch', batch_size = 200, max_iter = 20)",
    "f3 <- kmaha(x, y, learner = 'dne', kernel = rbf_kernel(1), landmarks = 50, rank = 10)",
    "p <- predict(f3, x[1:3000, ])",
    "ok <- identical(dim(z), c(3000L, 10L)) && length(p) == 3000 && nrow(f2$L) == 3",
    "exact <- tryCatch({kpca(x, rbf_kernel(1)); 'fitted'}, error = function(e) conditionMessage(e))",
    "cat(ok, '|', exact, sep = '')"), script)
  out <- system2("bash", c("-c", shQuote(sprintf("ulimit -v 1048576; %s %s",
                                                 file.path(R.home("bin"), "Rscript"),
                                                 shQuote(script)))),
                 stdout = TRUE, stderr = TRUE)
  res <- strsplit(utils::tail(out, 1), "|", fixed = TRUE)[[1]]
  expect_identical(res[1], "TRUE")
  # the exact KPCA needs the n x n Gram matrix: under the same cap it fails,
  # with a message that points to the Nystrom method
  expect_match(res[2], "use the Nystrom method", fixed = TRUE)
})
