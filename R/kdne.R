#' Kernel DNE by the kernel trick (KDNE)
#'
#' The kernel-trick version of [dne()] that the paper compares with the KPCA
#' trick. The map in feature space is parameterised as
#' \eqn{A = U \Phi^\top}, so a point is embedded as \eqn{z(x) = U k(x)} with
#' \eqn{k(x) = (k(x_1, x), \dots, k(x_n, x))^\top}, and \eqn{U} (`dim` x n)
#' solves the paper's equation (kdne) with the regularised constraint of
#' Sugiyama (2006):
#' \deqn{\min_{U (K + \epsilon I) U^\top = I}
#'   \mathrm{trace}(U K (D - W) K U^\top),}
#' the generalized eigenproblem \eqn{K (D - W) K u = \mu (K + \epsilon I) u}.
#' It is solved through the Cholesky factor \eqn{R} of
#' \eqn{K + \epsilon I = R^\top R}: the symmetric matrix
#' \eqn{R^{-\top} K (D - W) K R^{-1}} has the same eigenvalues \eqn{\mu},
#' and \eqn{u = R^{-1} v}. The objective is the sum of the `dim` smallest
#' \eqn{\mu}.
#'
#' **Singularity.** With \eqn{\epsilon = 0} the constraint needs \eqn{K} to
#' be non-singular, which fails whenever the mapped points are linearly
#' dependent (for instance a linear kernel with more points than columns,
#' or duplicated rows); this is the difficulty the paper points out. Then
#' `kdne()` stops and asks for a larger `eps`. A Cholesky factor whose
#' smallest squared pivot is below \eqn{10\,n\,\epsilon_{mach}} times the
#' largest diagonal entry of \eqn{K + \epsilon I} counts as singular. The
#' KPCA trick ([kmaha()] with `learner = "dne"`) solves a plain eigenproblem
#' on the KPCA coordinates and has no such difficulty; when \eqn{K} has full
#' rank and `eps` is negligible, both give the same objective value.
#'
#' **Graph.** As in [dne()], but by default the `k` same-class and
#' other-class neighbours come from feature-space distances
#' \eqn{k(x_i, x_i) + k(x_j, x_j) - 2 k(x_i, x_j)}. The Gram matrix is not
#' centred: centring leaves the feature-space distances, and so the attainable
#' objective, unchanged, but it would make \eqn{K} singular.
#' The default dimension is the number of negative generalized eigenvalues
#' that the data support, by the rule of [dne()] (see Dimension there): all
#' of them when the mapped points \eqn{\phi(x_i)} are numerically affinely
#' dependent (the centred Gram matrix has an eigenvalue at most
#' \eqn{10^{-8}} times the largest, the tolerance of [kpca()], as for a
#' smooth kernel on low-dimensional inputs), otherwise those below
#' \eqn{-(1 - \rho)\,\mu_{max}} with \eqn{\rho} the retention of the
#' mapped points (e.g. p >> n inputs, where every training point is far from
#' the span of the others). KDNE costs \eqn{O(n^3)} time and \eqn{O(n^2)}
#' memory.
#'
#' @inheritParams dne
#' @param kernel A kernel object (see [kernels], [kernel_sum()]), a kernlab
#'   kernel or an R function `k(x, y)` (see [kernel-sources]), or
#'   `"precomputed"`: then `x` is the n x n Gram matrix of the training
#'   points (`scale` does not apply) and [predict()][predict.kmaha_model]
#'   takes the m x n kernel values of new points against the training
#'   points as `newdata`.
#' @param k Number of same-class and of other-class neighbours per point
#'   (feature-space distance). Ignored when `targets` is given.
#' @param dim Output dimension, between 1 and the number of training points,
#'   or `NULL` for the number of negative generalized eigenvalues the data
#'   support (see Details).
#' @param eps Non-negative ridge \eqn{\epsilon} added to \eqn{K} in the
#'   constraint.
#' @param scale If `TRUE`, columns are standardised before the kernel is
#'   evaluated (the scaling is stored and reapplied by [predict()]).
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @return An object of class `c("kmaha_kdne", "kmaha_kernel_trick")`: `U`
#'   (`dim` x n), `embedding` (training coordinates \eqn{K U^\top}),
#'   `eigenvalues` (all n generalized eigenvalues, ascending), `n_negative`,
#'   `retention`,
#'   `targets`, `kernel`, `eps`, `convergence` and the training inputs needed
#'   by [predict()][kmaha-model].
#' @seealso [dne()], [kmaha()]
#' @examples
#' idx <- c(1:30, 51:80, 101:130)
#' fit <- kdne(iris[idx, 1:4], iris$Species[idx], kernel = rbf_kernel(1),
#'             dim = 2)
#' fit
#' predict(fit, iris[-idx, 1:4])[1:5]
#' head(predict(fit, iris[-idx, 1:4], type = "transform"))
#' @export
kdne <- function(x, ...) UseMethod("kdne")

#' @rdname kdne
#' @export
kdne.default <- function(x, y, kernel = rbf_kernel(1), k = 3, dim = NULL,
                         eps = 1e-8, targets = NULL, scale = TRUE, num_threads = NULL,
                         ...) {
  check_dots_empty("kdne()", ...)
  ki <- kernel_inputs(x, y, kernel)
  kernel <- ki$kernel
  x <- ki$x
  y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context(num_threads)
  spec <- public_spec("kdne", list(k = k, dim = dim, eps = eps, targets = targets))
  scale <- check_flag(scale, "scale")
  if (!is.null(spec$opts$dim) && spec$opts$dim > nrow(x)) {
    stopf("`dim` (%d) must not exceed the number of training points (%d).",
          spec$opts$dim, nrow(x))
  }
  if (is.null(targets)) check_class_sizes(y, spec$opts$k, "k")
  fit <- fit_model(x, y, feature_kernel_rows(kernel), spec, ctx,
                   scale = if (scale && !ki$precomputed) TRUE else NA, class = "kmaha_kdne",
                   call = model_call(match.call(), "kdne"))
  fit$settings <- list(k = if (is.null(targets)) spec$opts$k else NA_integer_,
                       dim = nrow(fit$L), dim_rule = fit$dim_rule,
                       eps = spec$opts$eps, scale = if (ki$precomputed) NA else scale,
                       targets = if (is.null(targets)) "feature space" else "supplied")
  fit
}

#' @rdname kdne
#' @export
kdne.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), kdne.default, list(...), "kdne")
}

