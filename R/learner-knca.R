#' Kernel-trick NCA (KNCA)
#'
#' The kernel-trick version of [nca()] that the paper compares with the KPCA
#' trick ([kmaha()]). The map in feature space is parameterised as
#' \eqn{A = U \Phi^\top} (Section 3.1), so the learned squared distance
#' between two inputs is \eqn{\|U(k_i - k_j)\|^2}, where \eqn{k_i} is the
#' column of Gram values \eqn{k(x_l, x_i)} over the training points. The
#' coefficient matrix \eqn{U} (d x n) minimises the NCA objective of eq. (2)
#' on these Gram columns plus the regulariser of the strong representer
#' theorem, \eqn{\lambda\, \mathrm{trace}(U K U^\top)} (RKNCA). The objective
#' is the package's NCA core with the Gram rows as features; only the
#' regulariser differs.
#'
#' Every prediction evaluates the kernel against all training points, which
#' are therefore stored in the fitted object (not with
#' `kernel = "precomputed"`: new points then come as their kernel values
#' against the training points).
#'
#' @inheritParams nca
#' @param kernel A kernel object (see [kernels], [kernel_sum()]), a kernlab
#'   kernel or an R function `k(x, y)` (see [kernel-sources]), or
#'   `"precomputed"`: then `x` is the n x n Gram matrix of the training
#'   points (`scale` does not apply) and [predict()][predict.kmaha_model]
#'   takes the m x n kernel values of new points against the training
#'   points as `newdata`.
#' @param dim Output dimension d: `NULL` (the rank of the centred Gram
#'   matrix) or a whole number between 1 and that rank (or up to the number
#'   of training points with a `"random"` or matrix start).
#' @param lambda Non-negative weight of \eqn{\mathrm{trace}(U K U^\top)},
#'   the squared Hilbert-Schmidt norm of the map in feature space.
#' @param init Starting coefficients: `"auto"` or `"kpca"` (the map onto
#'   the leading `dim` kernel principal components, \eqn{U = \alpha^\top H}
#'   with \eqn{H} the centring matrix), `"random"` (normal entries divided by
#'   \eqn{\sqrt{n}}, reproducible with [set.seed()]), or a `dim` x n matrix.
#' @param max_iter Maximum number of L-BFGS-B iterations.
#' @return An object of class `c("kmaha_knca", "kmaha_kernel_trick")` with
#'   the coefficients `U` (d x n), the `kernel`, the scaled training inputs
#'   `x`, the scaling `prep`, the labels `y`, the training `embedding`
#'   (\eqn{K U^\top}), `settings`, `convergence` (as for [nca()]) and the
#'   leave-one-out 1-NN `train_accuracy`.
#' @seealso [kmaha-model], [kmaha()] for the KPCA trick.
#' @examples
#' fit <- knca(iris[, 1:4], iris$Species, kernel = rbf_kernel(1), dim = 2,
#'             max_iter = 50)
#' fit
#' predict(fit, iris[c(1, 51, 101), 1:4])
#' @export
knca <- function(x, ...) UseMethod("knca")

#' @rdname knca
#' @export
knca.default <- function(x, y, kernel = rbf_kernel(1), dim = NULL, lambda = 0,
                         init = "auto", max_iter = 500, tol = 1e-5,
                         scale = TRUE, verbose = FALSE, num_threads = NULL,
                         ...) {
  check_dots_empty("knca()", ...)
  ki <- kernel_inputs(x, y, kernel)
  kernel <- ki$kernel
  x <- ki$x
  y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context(num_threads)
  spec <- public_spec("knca", list(dim = dim, init = init, lambda = lambda,
                                   max_iter = max_iter, tol = tol, verbose = verbose))
  scale <- check_flag(scale, "scale")
  fit <- fit_model(x, y, feature_kernel_rows(kernel), spec, ctx,
                   scale = if (scale && !ki$precomputed) TRUE else NA, class = "kmaha_knca",
                   call = model_call(match.call(), "knca"))
  fit$settings <- learner_settings(spec, fit, ctx, if (ki$precomputed) NA else scale)
  fit
}

#' @rdname knca
#' @param formula A formula `class ~ predictors`.
#' @param data A data frame holding the variables of `formula`.
#' @param subset Optional expression selecting rows of `data`.
#' @param na.action How to treat missing values (default [stats::na.omit()]).
#' @export
knca.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), knca.default, list(...), "knca")
}

# --------------------------------------------------------------------------
# KNCA's record (the fields: new_learner() in R/learners.R; its options and
# fitter are NCA's, R/learner-nca.R) and the kernel-trick start it shares
# with KLMNN.

learner_knca <- function() list(
  name = "knca", label = "KNCA", fun = "knca.default", task = "classification",
  kernel_trick = TRUE, linear = "nca",
  options = function(args, argname) nca_opts(args, argname, kernel_trick = TRUE),
  start = knca_init,
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    fit_nca_map(spec$opts, z, y, ctx, reg = reg, lambda_arg = spec$argname("lambda"),
                argname = spec$argname)
  },
  settings = function(fit, spec, ctx, scale) nca_settings(fit, spec, ctx, scale),
  convergence = list(unit = "objective evaluations"),
  objective = c(
    short = "minus the expected number of points classified correctly",
    long = "minus the expected number of training points that a stochastic nearest-neighbour rule classifies correctly, plus lambda * trace(U K U'); lower is better"),
  caret = list())

# Kernel PCA of the training Gram matrix for the kernel-trick start, by the
# package's KPCA core (K is centred in place, never through an n x n centring
# matrix): the eigenvalues above rel_tol times the largest and the
# coefficients alpha = V Lambda^(-1/2).  A zero centred Gram matrix gives no
# component.
knca_kpca_basis <- function(K, ctx, rel_tol = 1e-10) {
  fit <- tryCatch(core_kpca_gram(K, NULL, 0L, rel_tol, "full", ctx),
                  kmaha_degenerate_error = function(e) NULL)
  if (is.null(fit)) return(list(values = numeric(0), alpha = matrix(0, nrow(K), 0)))
  list(values = fit$eigenvalues, alpha = fit$projection)
}

# The start of KNCA and KLMNN: coefficients U (dim x n) from `init` ("auto"
# or "kpca": the map onto the leading `dim` kernel principal components,
# "random", or a dim x n matrix), with its label.
knca_init <- function(init, K, dim, ctx) {
  n <- nrow(K)
  if (!is.null(dim)) {
    dim <- check_count(dim, "dim")
    if (dim > n) {
      stopf("`dim` (%d) must not exceed the number of training points (%d).",
            dim, n)
    }
  }
  if (is.numeric(init) && is.matrix(init)) {
    if (is.null(dim)) dim <- nrow(init)
    if (nrow(init) != dim || ncol(init) != n) {
      stopf("`init` must be a %d x %d matrix (dim x number of training points), not %d x %d.",
            dim, n, nrow(init), ncol(init))
    }
    if (anyNA(init) || any(!is.finite(init))) {
      stopf("`init` must contain finite numbers only.")
    }
    storage.mode(init) <- "double"
    return(list(U = unname(init), label = "matrix"))
  }
  if (!is.character(init) || length(init) != 1L || is.na(init) ||
      !init %in% c("auto", "kpca", "random")) {
    stopf("`init` must be \"auto\", \"kpca\", \"random\" or a numeric dim x %d matrix.", n)
  }
  if (init == "random" && !is.null(dim)) {
    return(list(U = matrix(stats::rnorm(dim * n), dim, n) / sqrt(n),
                label = "random"))
  }
  basis <- knca_kpca_basis(K, ctx)
  r <- length(basis$values)
  if (r == 0L) {
    stopf("`kernel` sees no differences between the rows of `x`: their centred Gram matrix is zero; use a kernel whose parameters suit the scale of `x`.")
  }
  if (is.null(dim)) dim <- r
  if (init == "random") {
    return(list(U = matrix(stats::rnorm(dim * n), dim, n) / sqrt(n),
                label = "random"))
  }
  if (dim > r) {
    stopf("`dim` (%d) exceeds the rank of the centred Gram matrix (%d); use a smaller `dim` or init = \"random\".",
          dim, r)
  }
  # U = alpha' H: each coefficient row centred (H = I - 11'/n on the right).
  alpha <- basis$alpha[, seq_len(dim), drop = FALSE]
  list(U = t(sweep(alpha, 2L, colMeans(alpha))), label = "kpca")
}
