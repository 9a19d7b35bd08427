# klmnn(): the kernel trick's LMNN; its Gram matrix must be positive
# semi-definite (the regulariser trace(U K U')), and an error says which
# matrix is not and what to do.

klmnn_data <- function() {
  idx <- c(1:20, 51:70, 101:120)
  list(x = as.matrix(iris[idx, 1:4]), y = iris$Species[idx])
}

test_that("an indefinite precomputed Gram matrix is refused, naming `x` and a ridge that fixes it", {
  d <- klmnn_data()
  K <- kernel_matrix(rbf_kernel(1), scale(d$x))
  K[1, 2] <- K[2, 1] <- -0.9
  K[3, 4] <- K[4, 3] <- 3
  low <- min(eigen(K, symmetric = TRUE, only.values = TRUE)$values)
  expect_lt(low, -1)
  err <- tryCatch(klmnn(K, d$y, kernel = "precomputed"), error = function(e) e)
  expect_s3_class(err, "kmaha_singular_error")
  expect_null(conditionCall(err))
  expect_identical(conditionMessage(err), sprintf(
    "The precomputed Gram matrix `x` is not positive semi-definite (smallest eigenvalue %s, largest %s), which KLMNN needs: its regulariser trace(U K U') would be unbounded below. To fit, make `x` positive semi-definite, e.g. add a ridge (x + 2.1 * diag(nrow(x))) or set its negative eigenvalues to zero.",
    format(signif(low, 3)), format(signif(max(eigen(K, symmetric = TRUE, only.values = TRUE)$values), 3))))
  # the ridge it names is enough
  fit <- suppressWarnings(klmnn(K + 2.1 * diag(nrow(K)), d$y, kernel = "precomputed", max_iter = 50))
  expect_s3_class(fit, "kmaha_klmnn")
})

test_that("an indefinite kernel function is refused, naming `kernel`", {
  d <- klmnn_data()
  sigmoid <- function(x, y) tanh(2 * sum(x * y) - 1)
  err <- tryCatch(klmnn(d$x, d$y, kernel = sigmoid), error = function(e) e)
  expect_s3_class(err, "kmaha_singular_error")
  expect_match(conditionMessage(err),
               "^The Gram matrix of `kernel` on the training points is not positive semi-definite \\(smallest eigenvalue -[0-9.]+, largest [0-9.]+\\), which KLMNN needs: its regulariser trace\\(U K U'\\) would be unbounded below\\. To fit, use a positive semi-definite kernel, or pass its Gram matrix made positive semi-definite \\(e\\.g\\. plus [0-9.]+ \\* diag\\(n\\), or with its negative eigenvalues set to zero\\) with kernel = \"precomputed\"\\.$")
})

test_that("a positive semi-definite Gram matrix of low rank is accepted", {
  d <- klmnn_data()
  # linear kernel on 4 columns: rank 4, singular but positive semi-definite
  xs <- scale(d$x)
  K <- tcrossprod(xs)
  fit <- klmnn(K, d$y, kernel = "precomputed", max_iter = 200)
  expect_lte(nrow(fit$L), 4L)
  expect_true(all(is.finite(fit$L)))
})
