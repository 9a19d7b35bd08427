#' Kernel functions
#'
#' Constructors for the kernels used by [kpca()], [kmaha()] and
#' [align_kernels()]. A kernel object is a plain list (it can be saved with
#' [saveRDS()]); evaluate it on data with [kernel_matrix()].
#'
#' * `rbf_kernel(sigma)` is the *scaled* RBF kernel of the paper,
#'   \eqn{k(x, y) = \exp(-\|x - y\|^2 / (2 D \sigma^2))}, where \eqn{D} is
#'   the number of input columns, so one \eqn{\sigma} grid suits data of any
#'   dimension.
#' * `gaussian_kernel(sigma)` is the plain Gaussian kernel with bandwidth
#'   \eqn{\sigma}: \eqn{\exp(-\|x - y\|^2 / (2 \sigma^2))}.
#' * `laplace_kernel(sigma)` is \eqn{\exp(-\|x - y\| / \sigma)}.
#' * `poly_kernel(degree, scale, offset)` is
#'   \eqn{(\mathrm{scale}\, x^\top y + \mathrm{offset})^{\mathrm{degree}}}.
#' * `linear_kernel()` is \eqn{x^\top y}.
#'
#' @param sigma Bandwidth: a single positive finite number.
#' @param degree Polynomial degree: a single whole number >= 1.
#' @param scale Multiplier of the inner product: a single positive number.
#' @param offset Constant added before the power: a single number >= 0.
#' @return An object of class `kmaha_kernel`.
#' Kernels from elsewhere (kernlab kernel objects, R functions, precomputed
#' Gram matrices) are described in [kernel-sources].
#'
#' @seealso [kernel_matrix()], [kernel_sum()], [paper_sigmas()],
#'   [kernel-sources]
#' @examples
#' k <- rbf_kernel(sigma = 1)
#' k
#' kernel_matrix(k, as.matrix(iris[1:4, 1:4]))
#' kernel_matrix(poly_kernel(degree = 2), diag(2))
#' @name kernels
NULL

new_kernel <- function(type, ...) {
  structure(list(type = type, ...), class = "kmaha_kernel")
}

#' @rdname kernels
#' @export
rbf_kernel <- function(sigma = 1) {
  new_kernel("rbf", sigma = check_number(sigma, "sigma", positive = TRUE))
}

#' @rdname kernels
#' @export
gaussian_kernel <- function(sigma = 1) {
  new_kernel("gaussian", sigma = check_number(sigma, "sigma", positive = TRUE))
}

#' @rdname kernels
#' @export
laplace_kernel <- function(sigma = 1) {
  new_kernel("laplace", sigma = check_number(sigma, "sigma", positive = TRUE))
}

#' @rdname kernels
#' @export
poly_kernel <- function(degree = 2, scale = 1, offset = 0) {
  if (!is.numeric(degree) || length(degree) != 1L || !is.finite(degree) ||
      degree != round(degree) || degree < 1) {
    stopf("`degree` must be a single whole number >= 1, not %s.",
          paste(format(degree), collapse = ", "))
  }
  new_kernel("poly", degree = as.double(degree),
             scale = check_number(scale, "scale", positive = TRUE),
             offset = check_number(offset, "offset", nonneg = TRUE))
}

#' @rdname kernels
#' @export
linear_kernel <- function() new_kernel("linear")

#' Non-negative combinations of kernels
#'
#' `kernel_sum()` combines base kernels into
#' \eqn{k = \sum_i w_i k_i} with \eqn{w_i \ge 0}, which is again a positive
#' semi-definite kernel. With `weights = NULL` all weights are 1: the
#' *unweighted kernel* of the paper.
#'
#' @param kernels A list of kernel objects (see [kernels]; kernlab kernels
#'   and R functions too, see [kernel-sources]: a sum with such parts is
#'   evaluated part by part, the built-in parts in one core call).
#' @param weights `NULL` or non-negative finite numbers, one per kernel, not
#'   all zero.
#' @return A `kmaha_kernel` of type `"sum"`.
#' @examples
#' k <- kernel_sum(lapply(c(0.5, 1, 2), rbf_kernel))
#' k
#' kernel_matrix(k, as.matrix(iris[1:3, 1:4]))
#' @export
kernel_sum <- function(kernels, weights = NULL) {
  if (inherits(kernels, "kmaha_kernel") || !is.list(kernels) ||
      length(kernels) == 0L) {
    stopf("`kernels` must be a non-empty list of kernel objects, e.g. lapply(paper_sigmas(), rbf_kernel).")
  }
  for (i in seq_along(kernels)) kernels[[i]] <- check_kernel(kernels[[i]], sprintf("kernels[[%d]]", i))
  if (is.null(weights)) weights <- rep(1, length(kernels))
  if (!is.numeric(weights) || length(weights) != length(kernels) ||
      anyNA(weights) || any(!is.finite(weights))) {
    stopf("`weights` must be %d finite numbers, one per kernel.", length(kernels))
  }
  if (any(weights < 0)) {
    stopf("`weights` must be non-negative (a negative weight can make the kernel indefinite); got %s.",
          format(min(weights)))
  }
  if (all(weights == 0)) stopf("`weights` must not all be zero.")
  new_kernel("sum", kernels = unname(kernels), weights = as.double(weights))
}

#' The paper's bandwidth grid
#'
#' The 21 values of \eqn{\sigma} for the scaled RBF base kernels used in all
#' experiments of the paper: 0.01, 0.025, ..., 1000. `paper_kernels()` returns
#' the corresponding list of [rbf_kernel()] objects.
#'
#' @return `paper_sigmas()`: a numeric vector of length 21;
#'   `paper_kernels()`: a list of 21 kernel objects.
#' @examples
#' paper_sigmas()
#' length(paper_kernels())
#' @export
paper_sigmas <- function() {
  c(0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
    25, 50, 75, 100, 250, 500, 750, 1000)
}

#' @rdname paper_sigmas
#' @export
paper_kernels <- function() lapply(paper_sigmas(), rbf_kernel)

#' Gram matrices
#'
#' Evaluates a kernel on all pairs of rows of `x` and `y`. The built-in
#' kernels are computed in the package's C++ core through matrix products
#' (distances as \eqn{\|x\|^2 + \|y\|^2 - 2 x^\top y}); for a sum of
#' kernels the distances are computed once and shared. R functions and
#' kernlab kernels without a built-in equivalent are evaluated in R (see
#' [kernel-sources]).
#'
#' @param kernel A kernel object (see [kernels], [kernel_sum()]), a kernlab
#'   kernel or an R function (see [kernel-sources]).
#' @param x A numeric matrix or data frame, one observation per row.
#' @param y `NULL` (pairs within `x`) or data with the same columns as `x`.
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @return An `nrow(x)` by `nrow(y)` matrix.
#' @examples
#' x <- as.matrix(iris[1:5, 1:4])
#' kernel_matrix(rbf_kernel(1), x)
#' kernel_matrix(linear_kernel(), x, x[1:2, ])
#' @export
kernel_matrix <- function(kernel, x, y = NULL, num_threads = NULL) {
  kernel <- check_kernel(kernel)
  x <- check_x(x, "x")
  if (!is.null(y)) {
    y <- check_x(y, "y")
    if (ncol(y) != ncol(x)) {
      stopf("`y` has %d columns but `x` has %d; they must match.",
            ncol(y), ncol(x))
    }
  }
  K <- kernel_gram(kernel, x, y, kmaha_context(num_threads))
  dimnames(K) <- list(rownames(x), if (is.null(y)) rownames(x) else rownames(y))
  K
}

# The kernel an argument holds (see as_kernel() in R/kernel-sources.R:
# kernel objects, kernlab kernels, R functions).
check_kernel <- function(kernel, arg = "kernel", precomputed = FALSE) {
  as_kernel(kernel, arg, precomputed)
}

#' @export
format.kmaha_kernel <- function(x, ...) {
  out <- switch(x$type,
    linear = "linear kernel <x, y>",
    rbf = sprintf("scaled RBF kernel exp(-|x - y|^2 / (2 D sigma^2)), sigma = %s",
                  format(x$sigma)),
    gaussian = sprintf("Gaussian kernel exp(-|x - y|^2 / (2 sigma^2)), sigma = %s",
                       format(x$sigma)),
    laplace = sprintf("Laplace kernel exp(-|x - y| / sigma), sigma = %s",
                      format(x$sigma)),
    poly = sprintf("polynomial kernel (%s <x, y> + %s)^%s", format(x$scale),
                   format(x$offset), format(x$degree)),
    sum = sprintf("sum of %d kernels (%d with non-zero weight)",
                  length(x$kernels), sum(x$weights > 0)),
    r = sprintf("R function kernel '%s' (%s, evaluated in R)", x$name,
                if (isTRUE(x$matrix)) "of two matrices" else "of two points, called once per pair"),
    kernlab = sprintf("%s (evaluated in R by kernlab::kernelMatrix())", x$origin),
    precomputed = if (is.null(x$label)) "precomputed kernel (Gram matrix given)" else
      sprintf("precomputed kernel: Gram matrix %s", x$label),
    x$type)
  if (!is.null(x$origin) && x$type %in% core_kernel_types) {
    out <- sprintf("%s [%s]", out, x$origin)
  }
  out
}

#' @export
print.kmaha_kernel <- function(x, ...) {
  cat("<kmaha kernel> ", format(x), "\n", sep = "")
  if (identical(x$type, "sum")) {
    nz <- which(x$weights > 0)
    shown <- utils::head(nz, 8L)
    for (i in shown) {
      cat(sprintf("  %10.4g x %s\n", x$weights[i], format(x$kernels[[i]])))
    }
    if (length(nz) > length(shown)) {
      cat(sprintf("  ... and %d more\n", length(nz) - length(shown)))
    }
  }
  invisible(x)
}
