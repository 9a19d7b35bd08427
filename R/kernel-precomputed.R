# Precomputed Gram matrices (kernel = "precomputed"): the training Gram
# matrix and the kernel rows of new points, checked; and the checked
# training inputs of kpca() and the kernel-trick learners, which take a
# kernel or a Gram matrix.

precomputed_kernel <- function(label = NULL) new_kernel("precomputed", label = label)

is_precomputed <- function(kernel) identical(kernel$type, "precomputed")

# The training Gram matrix of kernel = "precomputed" (argument `arg`):
# numeric, square, finite and symmetric (up to 1e-8 relative, then made
# exactly symmetric); `n_y`, when given, the number of labels it must match;
# `via` the argument that said "precomputed".
check_precomputed_gram <- function(K, arg = "x", n_y = NULL, via = "kernel") {
  what <- sprintf("With %s = \"precomputed\", `%s` must be the n x n Gram matrix of the training points",
                  via, arg)
  if (is.data.frame(K)) K <- check_x(K, arg)
  if (!is.matrix(K) || !(is.numeric(K) || is.logical(K))) {
    stopf("%s (a numeric matrix), not %s.", what, class(K)[1])
  }
  if (nrow(K) != ncol(K)) {
    stopf("%s; it is %d x %d, not square. To use the rows of `%s` as inputs, pass a kernel object such as rbf_kernel(1) instead.",
          what, nrow(K), ncol(K), arg)
  }
  if (nrow(K) < 2L) stopf("%s; it covers %d point(s), at least 2 are needed.", what, nrow(K))
  if (!is.null(n_y) && n_y != nrow(K)) {
    stopf("`y` has %d labels but the Gram matrix `%s` covers %d points; they must match (one row and column of `%s` per training point).",
          n_y, arg, nrow(K), arg)
  }
  if (anyNA(K)) stopf("The Gram matrix `%s` contains missing values.", arg)
  if (any(is.infinite(K))) stopf("The Gram matrix `%s` contains infinite values.", arg)
  storage.mode(K) <- "double"
  top <- max(abs(K))
  asym <- max(abs(K - t(K)))
  if (asym > 1e-8 * top) {
    ij <- which(abs(K - t(K)) == asym, arr.ind = TRUE)[1, ]
    stopf("The Gram matrix `%s` must be symmetric: %s[%d, %d] = %s but %s[%d, %d] = %s.",
          arg, arg, ij[1], ij[2], format(K[ij[1], ij[2]]), arg, ij[2], ij[1],
          format(K[ij[2], ij[1]]))
  }
  dn <- dimnames(K)
  K <- (K + t(K)) / 2
  dimnames(K) <- dn
  K
}

# Kernel rows of new points against the n training points (kernel =
# "precomputed" at prediction): an m x n numeric matrix (a vector of length
# n is one point), columns matched by name when both sides have names.
# Rows with missing values are allowed (predict() returns NA for them).
check_precomputed_rows <- function(newdata, n, train_names = NULL, arg = "newdata") {
  if (is.numeric(newdata) && is.null(dim(newdata)) && length(newdata) == n) {
    newdata <- matrix(newdata, nrow = 1L, dimnames = list(NULL, names(newdata)))
  }
  if (is.data.frame(newdata)) newdata <- check_x(newdata, arg, allow_na = TRUE, allow_empty = TRUE)
  if (!is.matrix(newdata) || !(is.numeric(newdata) || is.logical(newdata))) {
    stopf("The model was fitted on a precomputed kernel: `%s` must be the m x %d matrix of kernel values of the new points (rows) against the %d training points (columns), not %s.",
          arg, n, n, class(newdata)[1])
  }
  if (ncol(newdata) != n) {
    stopf("The model was fitted on a precomputed kernel: `%s` must have one column per training point (%d), holding the kernel values of the new points against them; it has %d.",
          arg, n, ncol(newdata))
  }
  if (!is.null(train_names) && !is.null(colnames(newdata)) &&
      !identical(colnames(newdata), train_names)) {
    # (empty, missing or duplicated training names can only be matched
    # in place)
    if (!setequal(colnames(newdata), train_names) || anyDuplicated(colnames(newdata)) ||
        anyDuplicated(train_names) || any(is.na(train_names) | !nzchar(train_names))) {
      stopf("The column names of `%s` are not the names of the training points (the row and column names of the training Gram matrix); give the columns those names, in any order, or none (then they are taken in the training order).",
            arg)
    }
    newdata <- newdata[, train_names, drop = FALSE]
  }
  if (any(is.infinite(newdata))) stopf("`%s` contains infinite kernel values.", arg)
  storage.mode(newdata) <- "double"
  newdata
}

# TRUE for a fitted model whose kernel is precomputed.
model_precomputed <- function(object) {
  k <- object$feature_map$kernel
  !is.null(k) && is_precomputed(k)
}

# The kernel and the checked training inputs of kpca() and the kernel-trick
# learners: with kernel = "precomputed", x is the training Gram matrix
# (checked against the number of labels in y when y is a vector).
kernel_inputs <- function(x, y, kernel) {
  kernel <- check_kernel(kernel, precomputed = TRUE)
  pre <- is_precomputed(kernel)
  n_y <- if (!is.null(y) && is.null(dim(y))) length(y)
  x <- if (pre) check_precomputed_gram(x, "x", n_y) else check_x(x, "x")
  list(kernel = kernel, x = x, precomputed = pre)
}
