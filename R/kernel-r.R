# Kernels evaluated in R (R functions, kernlab kernels without a built-in
# equivalent, and sums holding them): kernel_gram() is the one place that
# evaluates any kernel's values, the core for built-in kernels and R for the
# others, in blocks of rows; every caller hands the values to the core.

# Rows per block when each row produces `ncol_out` kernel values: about a
# million values (8 MB) per block.
kernel_block_rows <- function(ncol_out, budget = 2^20) {
  max(1L, as.integer(floor(budget / max(ncol_out, 1))))
}

# The Gram matrix k(x_i, y_j) (y = NULL: within x, symmetric) of any
# kernel: the core for built-in kernels, R for the others; a sum is split
# into its built-in part (one core call) and its R-evaluated parts (those
# with non-zero weight).
kernel_gram <- function(kernel, x, y, ctx) {
  if (kernel_in_core(kernel)) return(core_kernel_matrix(kernel, x, y, ctx))
  K <- switch(kernel$type,
    sum = {
      core <- vapply(kernel$kernels, kernel_in_core, NA)
      w <- kernel$weights
      K <- matrix(0, nrow(x), if (is.null(y)) nrow(x) else nrow(y))
      use <- which(core & w != 0)
      if (length(use)) {
        K <- core_kernel_matrix(new_kernel("sum", kernels = kernel$kernels[use],
                                           weights = w[use]), x, y, ctx)
      }
      for (i in which(!core & w != 0)) {
        K <- K + w[i] * kernel_gram(kernel$kernels[[i]], x, y, ctx)
      }
      K
    },
    r = r_kernel_gram(kernel, x, y),
    kernlab = {
      K <- kernel_rows_blocks(x, y, function(a, b) kernlab_gram(kernel, a, b))
      check_kernel_values(K, kernel)
    },
    precomputed = stopf("A precomputed kernel has no function to evaluate: pass its kernel values (the Gram matrix, or the rows of new points against the training points) instead."))
  if (is.null(y)) K <- symmetric_gram(K, kernel)
  K
}

# kernel(x, y) for a function of two blocks of points, computed in blocks
# of rows of x (y = NULL: x against itself).
kernel_rows_blocks <- function(x, y, f, block = NULL) {
  yy <- if (is.null(y)) x else y
  n <- nrow(x)
  m <- nrow(yy)
  b <- block %||% kernel_block_rows(m)
  if (n <= b) return(f(x, if (is.null(y)) NULL else yy))
  K <- matrix(0, n, m)
  for (s in seq(1L, n, by = b)) {
    rows <- s:min(n, s + b - 1L)
    K[rows, ] <- f(x[rows, , drop = FALSE], yy)
  }
  K
}

# An R function kernel on the rows of x and y.
r_kernel_gram <- function(kernel, x, y = NULL) {
  fun <- kernel$fun
  if (isTRUE(kernel$matrix)) {
    K <- kernel_rows_blocks(x, y, function(a, b) {
      v <- fun(a, if (is.null(b)) a else b)
      nb <- if (is.null(b)) nrow(a) else nrow(b)
      if (is.data.frame(v)) v <- as.matrix(v)
      if (!is.numeric(v) || length(v) != nrow(a) * nb) {
        stopf("The function of %s must return the %d x %d matrix of kernel values of its two arguments (rows against rows); it returned %s.",
              kernel_name(kernel), nrow(a), nb,
              if (is.null(dim(v))) sprintf("%s of length %d", class(v)[1], length(v))
              else sprintf("a %s", paste(dim(v), collapse = " x ")))
      }
      if (!is.null(dim(v)) && !identical(as.integer(dim(v)), c(nrow(a), nb))) {
        stopf("The function of %s must return the %d x %d matrix of kernel values of its two arguments (rows against rows); it returned a %d x %d matrix.",
              kernel_name(kernel), nrow(a), nb, nrow(v), ncol(v))
      }
      matrix(as.double(v), nrow(a), nb)
    })
    return(check_kernel_values(K, kernel))
  }
  # A function of two points: one call per pair (i <= j within x).
  one <- function(a, b) {
    v <- fun(a, b)
    if (!is.numeric(v) || length(v) != 1L) {
      stopf("The function of %s must return a single number for two points; it returned %s of length %d. For a function of two matrices use custom_kernel(fun, matrix = TRUE).",
            kernel_name(kernel), class(v)[1], length(v))
    }
    as.double(v)
  }
  rx <- lapply(seq_len(nrow(x)), function(i) x[i, ])
  if (is.null(y)) {
    n <- nrow(x)
    K <- matrix(0, n, n)
    for (j in seq_len(n)) {
      bj <- rx[[j]]
      K[seq_len(j), j] <- vapply(rx[seq_len(j)], one, 0, b = bj)
    }
    K[lower.tri(K)] <- t(K)[lower.tri(K)]
  } else {
    ry <- lapply(seq_len(nrow(y)), function(i) y[i, ])
    K <- matrix(0, nrow(x), nrow(y))
    for (j in seq_along(ry)) K[, j] <- vapply(rx, one, 0, b = ry[[j]])
  }
  check_kernel_values(K, kernel)
}

# "the kernel 'name'" (an R function kernel) or "the kernel <its format>".
kernel_name <- function(kernel) {
  if (identical(kernel$type, "r")) sprintf("the kernel '%s'", kernel$name)
  else sprintf("the kernel %s", format(kernel))
}

cap1 <- function(s) paste0(toupper(substr(s, 1L, 1L)), substring(s, 2L))

check_kernel_values <- function(K, kernel) {
  if (anyNA(K) || any(is.infinite(K))) {
    stopf("%s returned missing or infinite values; a kernel must give a finite number for every pair of points.",
          cap1(kernel_name(kernel)))
  }
  K
}

# A training Gram matrix computed in R: symmetric up to 1e-8 relative (an
# error otherwise), then made exactly symmetric.
symmetric_gram <- function(K, kernel) {
  asym <- max(abs(K - t(K)))
  if (asym > 1e-8 * max(abs(K))) {
    stopf("%s is not symmetric on these points: k(a, b) and k(b, a) differ by up to %s. A kernel must be symmetric.",
          cap1(kernel_name(kernel)), format(asym, digits = 3))
  }
  (K + t(K)) / 2
}
