# Typed core errors: the core throws kmaha::error with a kind (or
# std::bad_alloc), and the glue raises the R condition
# c("kmaha_<kind>_error", "kmaha_error", "error", "condition") with the
# core's message and no call, so R code handles core errors by class and no
# internal call text is ever printed.

core_condition <- function(expr) {
  tryCatch({
    force(expr)
    NULL
  }, error = function(e) e)
}

expect_kmaha_error <- function(e, kind, message) {
  expect_s3_class(e, paste0("kmaha_", kind, "_error"))
  expect_identical(class(e), c(paste0("kmaha_", kind, "_error"), "kmaha_error",
                               "error", "condition"))
  expect_null(conditionCall(e))
  if (!is.null(message)) expect_match(conditionMessage(e), message, fixed = TRUE)
  printed <- paste(utils::capture.output(print(e)), collapse = "\n")
  expect_false(grepl("cpp_|.Call|_kmaha_", printed), label = printed)
}

test_that("a singular K + eps I is a kmaha_singular_error", {
  set.seed(13)
  x <- matrix(rnorm(50 * 3), 50)
  y <- factor(rep(c("a", "b"), 25))
  # the linear kernel of 3 features has rank 3 < 50
  e <- core_condition(kdne(x, y, kernel = linear_kernel(), eps = 0))
  expect_kmaha_error(e, "singular", "`K + eps * I` is not positive definite")
  # the core's own message, before kdne() words it for the user
  K <- kernel_matrix(linear_kernel(), x)
  same <- target_neighbors(x, y, 3)
  other <- target_neighbors(x, y, 3, type = "other")
  e <- core_condition(kmaha:::core_kdne_fit(K, same, other, 0L, 0, test_ctx()))
  expect_kmaha_error(e, "singular", "kdne: K + eps I is not positive definite")
})

test_that("a zero (centred) kernel matrix is a kmaha_degenerate_error", {
  e <- core_condition(kpca(matrix(0, 5, 2), linear_kernel()))
  expect_kmaha_error(e, "degenerate", "the kernel matrix is zero")
  x <- matrix(rep(c(1, 2), each = 6), 6)
  e <- core_condition(kpca(x, rbf_kernel(1)))
  expect_kmaha_error(e, "degenerate", "the centred kernel matrix is zero")
  e <- core_condition(kmaha:::core_kpca_gram(matrix(1, 4, 4), NULL, 0L, 1e-8, "full", test_ctx()))
  expect_kmaha_error(e, "degenerate", "the centred kernel matrix is zero")
})

test_that("non-finite values are a kmaha_numerical_error", {
  # a kernel whose values overflow
  x <- matrix(c(1e3, 2e3, 3e3, 1, 2, 3), 3)
  e <- core_condition(kmaha:::core_kpca_kernel(poly_kernel(degree = 200, offset = 1), x,
                                               0L, 1e-8, "full", test_ctx()))
  expect_kmaha_error(e, "numerical", "kpca: the kernel matrix has non-finite entries")
  # an objective that is not finite where L-BFGS starts
  e <- core_condition(kmaha:::cpp_lbfgs_test(function(x) Inf, function(x) x, c(1, 2),
                                             10, 1e-8, test_ctx()))
  expect_kmaha_error(e, "numerical",
                     "the objective or its gradient is not finite at the starting parameters")
})

test_that("arguments R should have checked are a kmaha_invalid_error", {
  e <- core_condition(kmaha:::core_kpca_gram(diag(3), NULL, 0L, 1e-8, "bogus", test_ctx()))
  expect_kmaha_error(e, "invalid", "unknown KPCA method 'bogus'")
  e <- core_condition(kmaha:::core_knn_classify(diag(3), c(0L, 1L, 1L), 2L, diag(3), 1L,
                                                FALSE, test_ctx()))
  expect_kmaha_error(e, "invalid", "labels must be positive integer codes")
  # a failed conversion of an R object (Rcpp's own exception)
  e <- core_condition(kmaha:::core_kernel_matrix(list(type = "rbf"), diag(3), NULL,
                                                 test_ctx()))
  expect_kmaha_error(e, "invalid", NULL)
})

test_that("a failed allocation is a kmaha_memory_error", {
  skip_on_cran()
  skip_on_os("windows")
  skip_if(Sys.which("bash") == "", "needs bash for ulimit")
  skip_if_sanitized()
  # The 12 000 x 12 000 Gram matrix takes 1.15 GB, more than the 1 GB of
  # address space the child R process is given.
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(kmaha)",
    "x <- matrix(rnorm(12000 * 2), 12000)",
    "ctx <- kmaha:::kmaha_context(1L)",
    "e1 <- tryCatch(kmaha:::core_kernel_matrix(rbf_kernel(1), x, NULL, ctx), error = function(e) e)",
    "e2 <- tryCatch(kpca(x, rbf_kernel(1)), error = function(e) e)",
    "cat(paste(class(e1), collapse = ','), conditionMessage(e1), is.null(conditionCall(e1)),",
    "    paste(class(e2), collapse = ','), conditionMessage(e2), sep = '|')"), script)
  out <- system2("bash", c("-c", shQuote(sprintf("ulimit -v 1048576; %s %s",
                                                 file.path(R.home("bin"), "Rscript"),
                                                 shQuote(script)))),
                 stdout = TRUE, stderr = TRUE)
  res <- strsplit(utils::tail(out, 1), "|", fixed = TRUE)[[1]]
  expect_identical(res[1], "kmaha_memory_error,kmaha_error,error,condition")
  expect_identical(res[2], "not enough memory: a matrix of this computation could not be allocated")
  expect_identical(res[3], "TRUE")
  # kpca() points to the Nystrom method, keeping the class
  expect_identical(res[4], "kmaha_memory_error,kmaha_error,error,condition")
  expect_match(res[5], "Exact kernel PCA of 12000 points ran out of memory", fixed = TRUE)
  expect_match(res[5], "use the Nystrom method", fixed = TRUE)
})
