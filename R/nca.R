#' Neighbourhood component analysis
#'
#' Learns a linear map \eqn{A} (d x D) that maximises the expected number of
#' training points classified correctly by a stochastic leave-one-out
#' nearest-neighbour rule (Goldberger et al., 2005), i.e. minimises the
#' paper's eq. (2) plus an optional ridge penalty:
#' \deqn{f(A) = -\sum_i \sum_{j: y_j = y_i} p_{ij} + \lambda \|A\|_F^2,}
#' \deqn{p_{ij} = \frac{\exp(-\|A x_i - A x_j\|^2)}{\sum_{k \ne i}
#'   \exp(-\|A x_i - A x_k\|^2)}, \quad p_{ii} = 0.}
#' The objective and its gradient are computed in the package's C++ core
#' through matrix products in blocks of rows (memory grows linearly with the
#' number of points), with a numerically safe softmax, on `num_threads`
#' threads; the minimiser is R's L-BFGS-B.
#'
#' The products and the softmax run in kernels compiled for the baseline
#' instruction set and, where available, for AVX2 with FMA; see the section
#' "Instruction sets" of [kmaha-package] for the option that chooses. The
#' kernels used are recorded in `convergence$isa`.
#'
#' **Small classes.** A point whose class has no other member has no
#' same-class neighbour and contributes nothing to the objective. Such
#' singleton classes are used as they are, with one warning naming them;
#' when no class has 2 members there is nothing to learn, which is an error.
#' This is the rule of [lmnn()] and [dne()] with one neighbour (they need
#' `k + 1` members per class for `k` target neighbours).
#'
#' **Input columns.** The matrix interface takes numeric and logical
#' columns (logical as 0/1); the formula interface also takes factors and
#' character columns, expanded into indicator columns by
#' [stats::model.matrix()]. Columns of any other class (Date, POSIXct,
#' difftime, ...) are rejected by both, with the conversion to use (e.g.
#' `as.numeric()` for days since 1970-01-01), since their units would mix
#' silently with the others. With `scale = TRUE`, a column whose standard
#' deviation is below \eqn{10^{-12}} times its largest absolute value counts
#' as constant (an error): the test is relative, so rescaling the data by
#' any factor does not change the fit. The same rules hold for every learner
#' of the package.
#'
#' **Accuracy.** The printed training accuracy is the leave-one-out 1-NN
#' accuracy on the training points in the learned metric: optimistic, since
#' the metric was fitted to those points (with many more columns than rows
#' it can be near 1 on pure noise). Estimate accuracy on held-out data.
#'
#' @param x A numeric matrix or data frame of inputs, one row per
#'   observation.
#' @param y Class labels (a factor, or a vector coerced to one).
#' @param dim Output dimension d: `NULL` (the number of input columns D) or a
#'   whole number between 1 and D.
#' @param init Starting map: `"auto"` (identity when `dim` equals D,
#'   otherwise `"pca"`), `"identity"` (the first `dim` rows of the identity),
#'   `"pca"` (the leading `dim` principal directions of the (scaled)
#'   inputs), `"random"` (standard normal entries divided by
#'   \eqn{\sqrt{D}}, drawn with R's random number generator, so [set.seed()]
#'   reproduces the fit), or a numeric `dim` x D matrix.
#' @param lambda Non-negative weight of the penalty \eqn{\|A\|_F^2}.
#' @param max_iter Maximum number of L-BFGS-B iterations.
#' @param tol Convergence tolerance: L-BFGS-B stops when the relative
#'   reduction of the objective, \eqn{(f_k - f_{k+1}) / \max(|f_k|,
#'   |f_{k+1}|, 1)}, falls below `tol`. The default 1e-5 is the rule and
#'   value of scikit-learn's `NeighborhoodComponentsAnalysis` (SciPy's
#'   L-BFGS-B `ftol`), whose fits it reproduces.
#' @param scale If `TRUE`, centre and scale the columns of `x` first (the map
#'   then acts on the scaled inputs; [transform_matrix()] folds the scaling
#'   in).
#' @param verbose If `TRUE`, print the objective and gradient norm at each
#'   evaluation.
#' @param num_threads Number of threads: `NULL` uses
#'   `getOption("kmaha.num_threads")`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2.
#' @param ... For the formula method, arguments passed to the default method.
#' @return An object of class `c("kmaha_nca", "kmaha_linear")`: the map `L`
#'   (d x D, acting on the scaled inputs), the scaling `prep`, the training
#'   embedding, the settings and `convergence` (`iterations`: objective
#'   evaluations, `objective`, `trace`, `converged`: `TRUE` only when
#'   L-BFGS-B stopped by its tolerance, and its `message`). See
#'   [predict.kmaha_linear()].
#' @references Goldberger, J., Roweis, S., Hinton, G. and Salakhutdinov, R.
#'   (2005). Neighbourhood components analysis. *NIPS 17*.
#' @examples
#' fit <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 100)
#' fit
#' head(predict(fit, iris[, 1:4], type = "transform"))
#' fit2 <- nca(Species ~ ., data = iris, lambda = 0.01)
#' mean(predict(fit2) == iris$Species)  # leave-one-out 1-NN accuracy
#' @export
nca <- function(x, ...) UseMethod("nca")

#' @rdname nca
#' @export
nca.default <- function(x, y, dim = NULL, init = "auto", lambda = 0,
                        max_iter = 500, tol = 1e-5, scale = TRUE,
                        verbose = FALSE, num_threads = NULL, ...) {
  check_dots_empty("nca()", ...)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  check_class_sizes(y)
  D <- ncol(x)
  dim <- check_dim_nca(dim, D, "x")
  opt <- nca_options(lambda, max_iter, tol, scale, verbose, num_threads)
  lambda <- opt$lambda; max_iter <- opt$max_iter; tol <- opt$tol
  scale <- opt$scale; threads <- opt$threads
  prep <- if (scale) fit_scaling(x, TRUE, "x") else NULL
  xs <- apply_scaling(x, prep)
  start <- nca_init(init, xs, dim)
  res <- nca_run("nca", xs, y, start$A, NULL, opt)
  new_linear_fit(
    "nca", res$map, prep, xs, y,
    settings = list(dim = dim, init = start$label, lambda = lambda,
                    max_iter = max_iter, tol = tol, scale = scale,
                    num_threads = threads),
    convergence = list(iterations = res$iterations, objective = res$value,
                       trace = res$trace, converged = res$converged,
                       message = res$message, isa = res$isa),
    call = match.call(), feature_names = colnames(x))
}

#' @rdname nca
#' @param formula A formula `class ~ predictors`.
#' @param data A data frame holding the variables of `formula`.
#' @param subset Optional expression selecting rows of `data`.
#' @param na.action How to treat missing values (default [stats::na.omit()]).
#' @export
nca.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), nca.default, list(...))
}

# Thread count: argument, option kmaha.num_threads, env KMAHA_NUM_THREADS, 2.
nca_threads <- function(num_threads = NULL) {
  if (is.null(num_threads)) num_threads <- getOption("kmaha.num_threads")
  if (is.null(num_threads)) {
    env <- Sys.getenv("KMAHA_NUM_THREADS", "")
    num_threads <- if (nzchar(env)) suppressWarnings(as.numeric(env)) else 2L
  }
  check_count(num_threads, "num_threads")
}

check_dim_nca <- function(dim, D, arg_x = "x") {
  if (is.null(dim)) return(D)
  dim <- check_count(dim, "dim")
  if (dim > D) {
    stopf("`dim` (%d) must not exceed the number of input columns of `%s` (%d).",
          dim, arg_x, D)
  }
  dim
}

# Starting map (d x D) for NCA on the (already scaled) inputs xs.
nca_init <- function(init, xs, dim) {
  D <- ncol(xs)
  if (is.numeric(init) && is.matrix(init)) {
    if (nrow(init) != dim || ncol(init) != D) {
      stopf("`init` must be a %d x %d matrix (dim x number of input columns), not %d x %d.",
            dim, D, nrow(init), ncol(init))
    }
    if (anyNA(init) || any(!is.finite(init))) {
      stopf("`init` must contain finite numbers only.")
    }
    if (all(init == 0)) {
      stopf("`init` must not be all zero (the NCA gradient vanishes there).")
    }
    storage.mode(init) <- "double"
    return(list(A = unname(init), label = "matrix"))
  }
  if (!is.character(init) || length(init) != 1L || is.na(init) ||
      !init %in% c("auto", "identity", "pca", "random")) {
    stopf("`init` must be \"auto\", \"identity\", \"pca\", \"random\" or a %d x %d numeric matrix.",
          dim, D)
  }
  if (init == "auto") init <- if (dim == D) "identity" else "pca"
  A <- switch(init,
    identity = diag(1, dim, D),
    pca = pca_directions(xs, dim),
    random = matrix(stats::rnorm(dim * D), dim, D) / sqrt(D)
  )
  list(A = A, label = init)
}

# Leading `dim` principal directions (rows) of xs.
pca_directions <- function(xs, dim) {
  xc <- sweep(xs, 2L, colMeans(xs), check.margin = FALSE)
  e <- eigen(crossprod(xc), symmetric = TRUE)
  v <- e$vectors[, seq_len(dim), drop = FALSE]
  # Deterministic sign: largest-magnitude entry of each direction positive.
  s <- apply(v, 2L, function(col) sign(col[which.max(abs(col))]))
  t(sweep(v, 2L, s, "*"))
}

# Options shared by nca() and knca(), validated once.
nca_options <- function(lambda, max_iter, tol, scale, verbose, num_threads) {
  list(lambda = check_number(lambda, "lambda", nonneg = TRUE),
       max_iter = check_count(max_iter, "max_iter"),
       tol = check_number(tol, "tol", positive = TRUE),
       scale = check_flag(scale, "scale"),
       verbose = check_flag(verbose, "verbose"),
       threads = nca_threads(num_threads))
}

# One L-BFGS run of the NCA core on `feats` (inputs, or Gram rows for KNCA
# with `K` the regulariser's Gram matrix), warning when it hits the cap.
nca_run <- function(fun, feats, y, start, K, opt) {
  res <- cpp_nca_fit(feats, as.integer(y), start, opt$lambda, K, opt$max_iter,
                     opt$tol, opt$verbose, opt$threads)
  if (!res$converged) {
    warnf("%s() did not converge (%s after %d evaluations); raise `max_iter` or loosen `tol`.",
          fun, res$message, as.integer(res$iterations))
  }
  res
}
