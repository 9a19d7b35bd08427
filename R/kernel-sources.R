# Kernels from elsewhere: the documented topic ?`kernel-sources`, the
# constructors of R-function kernels and what an argument may hold as a
# kernel (as_kernel()).  Their homes: R-evaluated kernels in
# R/kernel-r.R, kernlab's in R/kernel-kernlab.R, precomputed Gram matrices in
# R/kernel-precomputed.R.  The built-in kernels (rbf, gaussian, laplace,
# poly, linear and their sums) are evaluated in the C++ core; the kernels
# here are evaluated in R (kernel_gram()), and every place that needs kernel
# values of such a kernel asks kernel_gram() for them and hands the values
# to the core (core_kpca_gram(), and the kernel rows of new points to the
# one transform entry, pipeline_apply()).  A kernlab kernel with an exact built-in equivalent
# is translated into it and runs in C++.

#' Kernels from elsewhere: R functions, kernlab kernels, Gram matrices
#'
#' Besides the built-in kernels ([kernels], evaluated in the package's C++
#' core), [kpca()], [kmaha()], [align_kernels()], [cv_kernel()] and the
#' kernel-trick learners [knca()], [kdne()] and [klmnn()] accept
#'
#' * **kernlab kernel objects** (`kernlab::rbfdot(sigma = 0.1)`,
#'   `polydot()`, `vanilladot()`, `laplacedot()`, ...). Those with an exact
#'   built-in equivalent are translated into it and run at full speed in
#'   C++: `rbfdot(sigma)`, \eqn{\exp(-\sigma\|x - y\|^2)}, is
#'   `gaussian_kernel(1 / sqrt(2 * sigma))`; `laplacedot(sigma)`,
#'   \eqn{\exp(-\sigma\|x - y\|)}, is `laplace_kernel(1 / sigma)`;
#'   `polydot(degree, scale, offset)` is `poly_kernel(degree, scale, offset)`
#'   (for a whole `degree` >= 1, `scale` > 0 and `offset` >= 0);
#'   `vanilladot()` is `linear_kernel()`. Every other kernlab kernel
#'   (`tanhdot()`, `besseldot()`, `anovadot()`, `splinedot()`, a user
#'   kernel of class `"kernel"`) is evaluated in R through
#'   [kernlab::kernelMatrix()]. String kernels (`stringdot()`) do not apply:
#'   the package works on numeric matrices.
#' * **an R function** of two points, `function(x, y)` returning one number,
#'   passed directly or through `custom_kernel(fun)`; or, much faster, a
#'   function of two matrices that returns the whole block of kernel values,
#'   `custom_kernel(fun, matrix = TRUE)`.
#' * **`kernel = "precomputed"`**: the Gram matrix itself in place of `x` at
#'   fit time, and the kernel values of the new points against the training
#'   points (an m x n matrix) in place of `newdata` at prediction time.
#'
#' `as_kmaha_kernel()` shows what a kernel becomes (the translation of a
#' kernlab kernel, or the R-evaluated kernel object).
#'
#' **What is slow.** A function of two points (`matrix = FALSE`, the
#' default, and a plain function) is called once per *pair* of points: the
#' training Gram matrix of n points costs \eqn{n(n+1)/2} calls (it is
#' symmetric: only \eqn{k(x_i, x_j)} for \eqn{i \le j} is evaluated), and
#' every prediction of m new points \eqn{m n} calls (kernel alignment and
#' the kernel-trick learners: \eqn{n^2} per kernel). At a few microseconds
#' per call this is seconds for n = 1000 and minutes for n = 10 000. A
#' matrix function (`matrix = TRUE`) is called once per block of up to
#' about a million kernel values, so it runs at the speed of the vectorised
#' R code inside it; write kernels this way (see the examples). kernlab's
#' own kernels without a built-in equivalent are evaluated by
#' [kernlab::kernelMatrix()], vectorised for most of them; a kernlab user
#' kernel (a plain function given class `"kernel"`) is again called once per
#' pair.
#'
#' **How R kernels are evaluated.** Kernel values are computed in blocks of
#' rows, so predicting many new points never holds more than about a
#' million kernel values (8 MB) beyond the result at a time for the KPCA
#' trick. The training Gram matrix must be symmetric: a matrix function is
#' called on (block of `x`, all of `x`) and the result is checked for
#' symmetry (a relative asymmetry above \eqn{10^{-8}} is an error); a
#' function of two points is assumed symmetric. Every value must be a
#' finite number. The kernel should be positive semi-definite; KPCA drops
#' the directions with non-positive eigenvalues of an indefinite one, while
#' [kdne()] needs a positive definite \eqn{K + \epsilon I}. The Nystrom
#' method (`landmarks`) is available for built-in kernels (and translated
#' kernlab ones) only.
#'
#' **Saving models.** A fitted model stores an R kernel as the function
#' itself (a kernlab kernel as the kernlab object), so [saveRDS()] keeps it;
#' a closure carries its enclosing environment along, with everything in
#' it. A function defined at the top level of a session refers to global
#' variables by name: these are not saved with it, and are missing in
#' another session or on the workers of a parallel [future::plan()] (the
#' cross-validation folds of [kmaha()] and [cv_kernel()]). Make kernel
#' functions self-contained (constants as arguments with defaults, or in
#' the function's own environment, as in the examples). Predicting with a
#' kernlab kernel that has no built-in equivalent needs kernlab installed.
#'
#' **Precomputed Gram matrices.** With `kernel = "precomputed"`, `x` must be
#' the symmetric n x n Gram matrix of the training points (finite values,
#' one row and column per label in `y`), and `scale` does not apply. At
#' prediction, `newdata` holds one row per new point and one column per
#' training point, in the training order (columns are matched by name when
#' both the training Gram matrix and `newdata` have column names). The KPCA
#' trick, [kpca()] and the kernel-trick learners take a precomputed kernel
#' as they take any other; [align_kernels()] takes a list of Gram matrices
#' (`kernels = "precomputed"`), and its weights combine the Gram matrices
#' and the test rows alike (see its examples). [kmaha()]'s kernel choices
#' (`"cv"`, `"align"`, `"unweighted"`, `"auto"`) choose among kernel
#' objects, not among Gram matrices: align Gram matrices with
#' [align_kernels()] and fit the combination as a precomputed kernel. Note
#' that a Gram matrix given with a kernel such as `linear_kernel()` is
#' treated as data (each row a point described by its kernel values, the
#' "empirical kernel map"), which is a different method.
#'
#' @param fun A function: `fun(x, y)` of two numeric vectors (two points)
#'   returning one number, or with `matrix = TRUE` a function of two numeric
#'   matrices (points in rows, the same columns) returning the
#'   `nrow(x)` x `nrow(y)` matrix of kernel values.
#' @param matrix `FALSE` (`fun` takes two points) or `TRUE` (`fun` takes two
#'   matrices of points).
#' @param name A short name shown by `print()`; by default the expression
#'   passed as `fun`.
#' @param kernel A kernel object, a kernlab kernel, or an R function of two
#'   points.
#' @return A `kmaha_kernel`: of type `"r"` (`custom_kernel()`), the
#'   built-in kernel a kernlab kernel translates into, or of type
#'   `"kernlab"` (a kernlab kernel evaluated in R).
#' @seealso [kernels], [kernel_matrix()], [kpca()], [kmaha()],
#'   [align_kernels()]
#' @examples
#' x <- scale(iris[, 1:4])
#' # An R function of two points (called once per pair: slow for large n)
#' k_cauchy <- custom_kernel(function(a, b) 1 / (1 + sum((a - b)^2)),
#'                           name = "Cauchy")
#' k_cauchy
#' kernel_matrix(k_cauchy, x[1:3, ])
#' # The same kernel as a function of two matrices (vectorised: fast)
#' k_cauchy_m <- custom_kernel(function(a, b) {
#'   d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
#'   1 / (1 + pmax(d2, 0))
#' }, matrix = TRUE, name = "Cauchy")
#' all.equal(kernel_matrix(k_cauchy, x[1:20, ]), kernel_matrix(k_cauchy_m, x[1:20, ]))
#' fit <- kmaha(x, iris$Species, learner = "dne", kernel = k_cauchy_m)
#' fit
#'
#' # A function with a parameter, self-contained: the parameter lives in the
#' # function's own environment, which is saved with it.
#' make_cauchy <- function(s) {
#'   force(s)
#'   custom_kernel(function(a, b) {
#'     d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
#'     1 / (1 + pmax(d2, 0) / s^2)
#'   }, matrix = TRUE, name = sprintf("Cauchy, s = %g", s))
#' }
#' cv <- cv_kernel(x, iris$Species, "dne",
#'                 kernels = lapply(c(0.5, 1, 2), make_cauchy), folds = 3,
#'                 seed = 1)
#' cv$curve
#'
#' # kernlab kernels (translated into built-in kernels where exact)
#' if (requireNamespace("kernlab", quietly = TRUE)) {
#'   print(as_kmaha_kernel(kernlab::rbfdot(sigma = 0.1)))
#'   print(as_kmaha_kernel(kernlab::tanhdot(scale = 0.1)))
#'   kp <- kpca(x, kernlab::rbfdot(sigma = 0.1), rank = 2)
#'   head(kp$coords)
#' }
#'
#' # A precomputed Gram matrix: training Gram at fit time, test-by-training
#' # kernel values at prediction time.
#' tr <- c(1:40, 51:90, 101:140)
#' K <- kernel_matrix(rbf_kernel(1), x[tr, ])
#' Kt <- kernel_matrix(rbf_kernel(1), x[-tr, ], x[tr, ])
#' fitp <- kmaha(K, iris$Species[tr], learner = "dne", kernel = "precomputed")
#' mean(predict(fitp, Kt) == iris$Species[-tr])
#' @name kernel-sources
NULL

#' @rdname kernel-sources
#' @export
custom_kernel <- function(fun, matrix = FALSE, name = NULL) {
  label <- if (is.null(name)) {
    paste(trimws(deparse(substitute(fun), width.cutoff = 60L)), collapse = " ")
  }
  if (!is.function(fun)) {
    stopf("`fun` must be a function: fun(x, y) of two points returning one number, or with matrix = TRUE fun(x, y) of two matrices returning their kernel values; not %s.",
          class(fun)[1])
  }
  matrix <- check_flag(matrix, "matrix")
  if (is.null(name)) {
    name <- if (nchar(label) > 40L) paste0(substr(label, 1L, 37L), "...") else label
  } else if (!is.character(name) || length(name) != 1L || is.na(name)) {
    stopf("`name` must be a single character string.")
  }
  nargs <- length(formals(fun) %||% formals(args(fun)))
  if (nargs < 2L && !"..." %in% names(formals(fun) %||% formals(args(fun)))) {
    stopf("`fun` must take two arguments (two points, or two matrices with matrix = TRUE); this one takes %d.",
          nargs)
  }
  new_kernel("r", fun = fun, matrix = matrix, name = name)
}

#' @rdname kernel-sources
#' @export
as_kmaha_kernel <- function(kernel) as_kernel(kernel, "kernel")

# The kernel an argument holds, as a kmaha_kernel: built-in and R kernels
# as they are, a kernlab kernel translated, a plain function wrapped by
# custom_kernel().  With precomputed = TRUE the string "precomputed" is
# accepted too.  `arg` names the argument in messages.
as_kernel <- function(kernel, arg = "kernel", precomputed = FALSE) {
  if (inherits(kernel, "kmaha_kernel")) {
    if (!is.list(kernel) || !is.character(kernel$type) ||
        !kernel$type %in% c(core_kernel_types, "sum", "r", "kernlab", "precomputed")) {
      stopf("`%s` is not a valid kernel object; build it with rbf_kernel(), custom_kernel() or the like.", arg)
    }
    return(kernel)
  }
  if (is_kernlab_kernel(kernel)) return(kernlab_kernel(kernel, arg))
  if (is.function(kernel)) {
    return(custom_kernel(kernel, name = sprintf("R function given as `%s`", arg)))
  }
  if (precomputed && identical(kernel, "precomputed")) return(precomputed_kernel())
  stopf("`%s` must be a kernel object such as rbf_kernel(1) or poly_kernel(2), not %s. Kernels from elsewhere: a kernlab kernel (e.g. kernlab::rbfdot(0.1)), an R function k(x, y) (see custom_kernel())%s.",
        arg, class(kernel)[1],
        if (precomputed) ", or \"precomputed\" with the Gram matrix as `x`" else "")
}

# The kernel types the C++ core evaluates.
core_kernel_types <- c("linear", "rbf", "gaussian", "laplace", "poly")

# TRUE when the core evaluates the kernel (a built-in kernel, or a sum of
# such kernels).
kernel_in_core <- function(kernel) {
  if (kernel$type %in% core_kernel_types) return(TRUE)
  if (identical(kernel$type, "sum")) {
    return(all(vapply(kernel$kernels, kernel_in_core, NA)))
  }
  FALSE
}
