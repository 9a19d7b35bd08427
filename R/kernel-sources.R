# Kernels from elsewhere: kernlab kernel objects, R functions and
# precomputed Gram matrices.  The built-in kernels (rbf, gaussian, laplace,
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

# --------------------------------------------------------------------------
# kernlab.

is_kernlab_kernel <- function(kernel) {
  is.function(kernel) && inherits(kernel, "kernel")
}

# A kernlab kernel as a kmaha_kernel: its exact built-in equivalent, else a
# kernel of type "kernlab" evaluated by kernlab::kernelMatrix().
kernlab_kernel <- function(k, arg = "kernel") {
  cls <- class(k)[1]
  par <- attr(k, "kpar") %||% list()
  origin <- sprintf("kernlab %s(%s)", sub("kernel$", "dot", cls),
                    paste(names(par), vapply(par, function(v) format(v), ""),
                          sep = " = ", collapse = ", "))
  ok <- function(v, lower = 0) is.numeric(v) && length(v) == 1L && is.finite(v) && v > lower
  out <- switch(cls,
    rbfkernel = if (ok(par$sigma)) gaussian_kernel(1 / sqrt(2 * par$sigma)),
    laplacekernel = if (ok(par$sigma)) laplace_kernel(1 / par$sigma),
    vanillakernel = linear_kernel(),
    polykernel = if (ok(par$degree, 0.5) && par$degree == round(par$degree) &&
                     ok(par$scale) && ok(par$offset, -1) && par$offset >= 0) {
      poly_kernel(par$degree, par$scale, par$offset)
    },
    stringkernel = stopf("`%s` is a kernlab string kernel (%s), which compares character strings; kmaha works on numeric matrices.",
                         arg, origin),
    NULL)
  if (is.null(out)) return(new_kernel("kernlab", kernel = k, origin = origin))
  out$origin <- origin
  out
}

kernlab_gram <- function(kernel, x, y = NULL) {
  if (!requireNamespace("kernlab", quietly = TRUE)) {
    stopf("The kernel (%s) is evaluated by kernlab::kernelMatrix(), but kernlab is not installed; install it with install.packages(\"kernlab\").",
          kernel$origin)
  }
  if (inherits(kernel$kernel, "tanhkernel")) {
    # kernlab's kernelMatrix() of a tanh kernel fails for two matrices (its
    # method looks up `scale` and `offset` only for one): kernlab's formula.
    par <- attr(kernel$kernel, "kpar")
    return(tanh(par$scale * tcrossprod(x, if (is.null(y)) x else y) + par$offset))
  }
  km <- if (is.null(y)) kernlab::kernelMatrix(kernel$kernel, x) else
    kernlab::kernelMatrix(kernel$kernel, x, y)
  matrix(as.double(km), nrow(x), if (is.null(y)) nrow(x) else nrow(y))
}

# --------------------------------------------------------------------------
# Precomputed Gram matrices.

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
    if (!setequal(colnames(newdata), train_names) || anyDuplicated(colnames(newdata))) {
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

# --------------------------------------------------------------------------
# Evaluation.

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

# The Nystrom method evaluates kernels in the core only.
check_nystrom_kernels <- function(kernels, landmarks, arg = "kernel") {
  if (is.null(landmarks)) return(invisible(NULL))
  if (inherits(kernels, "kmaha_kernel")) kernels <- list(kernels)
  for (k in kernels) {
    if (!kernel_in_core(k)) {
      stopf("`landmarks` (the Nystrom method) needs kernels the C++ core evaluates (rbf_kernel(), gaussian_kernel(), laplace_kernel(), poly_kernel(), linear_kernel(), their sums, and the kernlab kernels that translate into them); %s is %s. Use exact KPCA (landmarks = NULL).",
            if (length(kernels) > 1L) sprintf("one of `%s`", arg) else sprintf("`%s`", arg),
            if (is_precomputed(k)) "precomputed" else format(k))
    }
  }
  invisible(NULL)
}

# --------------------------------------------------------------------------
# Kernel alignment with kernels evaluated in R, or precomputed Gram
# matrices: the Frobenius products of core_alignment_products() (S, b, l1,
# min_entry, y_norm), accumulated over blocks of columns as the core does.
# `block_gram(j, cols)` returns the n x length(cols) slice of base Gram j.
alignment_products_r <- function(block_gram, m, y, p) {
  n <- length(y)
  yi <- as.integer(y)
  off <- -1 / (p - 1)
  counts <- tabulate(yi, p)
  same <- sum(counts^2)
  out <- list(S = matrix(0, m, m), b = numeric(m), l1 = numeric(m),
              min_entry = rep(Inf, m),
              y_norm = sqrt(same + (n * n - same) * off^2))
  b <- max(1L, min(n, as.integer(floor(4e6 / (n * m)))))
  for (s in seq(1L, n, by = b)) {
    cols <- s:min(n, s + b - 1L)
    G <- matrix(0, n * length(cols), m)
    for (j in seq_len(m)) {
      Kb <- block_gram(j, cols)
      out$l1[j] <- out$l1[j] + sum(abs(Kb))
      out$min_entry[j] <- min(out$min_entry[j], min(Kb))
      G[, j] <- Kb
    }
    yv <- ifelse(outer(yi, yi[cols], "=="), 1, off)
    out$S <- out$S + crossprod(G)
    out$b <- out$b + drop(crossprod(G, as.vector(yv)))
  }
  out$S <- (out$S + t(out$S)) / 2
  out
}

# --------------------------------------------------------------------------
# kernlab's kpca() and kmaha's kpca().  Attached after kmaha, kernlab masks
# kmaha's kpca(); kernlab_attach_note() says so when it happens (a hook on
# kernlab's attach event, set while kmaha is attached), and names the
# unmasked alias kernel_pca().

kernlab_attach_note <- structure(function(...) {
  if ("package:kmaha" %in% search()) {
    packageStartupMessage("kmaha: kernlab's kpca() now masks kmaha's kpca(). Use kmaha::kpca() or its alias kernel_pca() for kmaha's, and kernlab::kpca() for kernlab's. kmaha accepts kernlab kernels such as rbfdot(sigma = 0.1).")
  }
}, kmaha_hook = TRUE)

kernlab_hook_set <- function() {
  kernlab_hook_clear()
  setHook(packageEvent("kernlab", "attach"), kernlab_attach_note)
}

kernlab_hook_clear <- function() {
  hook <- packageEvent("kernlab", "attach")
  kept <- Filter(function(h) !isTRUE(attr(h, "kmaha_hook")), getHook(hook))
  setHook(hook, if (length(kept)) kept else NULL, "replace")
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
