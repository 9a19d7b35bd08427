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
#' @param kernel A kernel object (see [kernels]).
#' @param k Number of same-class and of other-class neighbours per point
#'   (feature-space distance). Ignored when `targets` is given.
#' @param dim Output dimension, between 1 and the number of training points,
#'   or `NULL` for the number of negative generalized eigenvalues the data
#'   support (see Details).
#' @param eps Non-negative ridge \eqn{\epsilon} added to \eqn{K} in the
#'   constraint.
#' @param scale If `TRUE`, columns are standardised before the kernel is
#'   evaluated (the scaling is stored and reapplied by [predict()]).
#' @return An object of class `c("kmaha_kdne", "kmaha_kernel_trick")`: `U`
#'   (`dim` x n), `embedding` (training coordinates \eqn{K U^\top}),
#'   `eigenvalues` (all n generalized eigenvalues, ascending), `n_negative`,
#'   `retention`,
#'   `targets`, `kernel`, `eps`, `convergence` and the training inputs needed
#'   by [predict.kmaha_kdne()].
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
                         eps = 1e-8, targets = NULL, scale = TRUE, ...) {
  check_dots_empty("kdne()", ...)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  check_kernel(kernel)
  k <- check_count(k, "k")
  eps <- check_number(eps, "eps", nonneg = TRUE)
  scale <- check_flag(scale, "scale")
  n <- nrow(x)
  if (!is.null(dim)) {
    dim <- check_count(dim, "dim")
    if (dim > n) {
      stopf("`dim` (%d) must not exceed the number of training points (%d).",
            dim, n)
    }
  }
  prep <- if (scale) fit_scaling(x, TRUE, "x") else NULL
  xs <- apply_scaling(x, prep)
  K <- core_kernel_matrix(kernel, xs, NULL, kmaha_context())
  warn_degenerate_kernel(kernel, xs, K)
  tg <- dne_targets(targets, K, y, k, gram = TRUE, found_in = "feature space")
  targets <- tg$targets
  source <- tg$source
  res <- tryCatch(
    core_kdne_fit(K, targets$same, targets$other,
                  if (is.null(dim)) 0L else dim, eps, kmaha_context()),
    error = function(e) {
      if (!grepl("not positive definite", conditionMessage(e), fixed = TRUE)) stop(e)
      stopf("`K + eps * I` is not positive definite: the Gram matrix is singular or nearly so (the points are linearly dependent in feature space). Increase `eps` (now %s), or use the KPCA trick, kmaha(learner = \"dne\"), which needs no inverse.",
            format(eps))
    })
  U <- res$U
  rownames(U) <- paste0("dim", seq_len(nrow(U)))
  z <- apply_map(K, U)
  dimnames(z) <- list(rownames(x), rownames(U))
  obj <- sum(res$eigenvalues[seq_len(res$dim)])
  fit <- list(
    method = "kdne", U = U, kernel = kernel, x = xs, prep = prep, y = full_levels(y),
    embedding = z, eigenvalues = res$eigenvalues, n_negative = res$n_negative,
    retention = res$retention,
    eps = eps, targets = targets,
    settings = list(k = if (source == "supplied") NA_integer_ else k,
                    dim = res$dim,
                    dim_rule = if (is.null(dim)) dne_dim_rule else "given",
                    eps = eps, scale = scale, targets = source),
    convergence = list(
      iterations = 1L, objective = obj, trace = obj, converged = TRUE,
      message = sprintf("direct generalized eigen-solve (Cholesky of K + eps I): %d smallest of %d eigenvalues; %d negative; retention %.3g",
                        res$dim, n, res$n_negative, res$retention)),
    train_accuracy = loo_accuracy(z, y), feature_names = colnames(x),
    n_features = ncol(x), call = match.call())
  class(fit) <- c("kmaha_kdne", "kmaha_kernel_trick")
  fit
}

#' @rdname kdne
#' @export
kdne.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), kdne.default, list(...))
}

#' Predict with a kernel-trick DNE model
#'
#' `type = "transform"` embeds new points as \eqn{z = U k(x)}, where
#' \eqn{k(x)} holds the kernel values between the (scaled) new point and the
#' training points; `"class"` and `"prob"` classify by k-nearest neighbours
#' among the training embeddings (tie rule of [knn_classify()]).
#'
#' @param object A model fitted by [kdne()].
#' @param newdata New observations (a data frame for formula fits, otherwise
#'   a matrix or data frame with the training columns); `NULL` returns the
#'   training embedding or leave-one-out predictions.
#' @param type `"class"`, `"prob"` or `"transform"`.
#' @param k Number of neighbours for `"class"` and `"prob"`.
#' @param ... Unused.
#' @return A factor, a matrix of vote fractions, or a matrix of coordinates.
#' @examples
#' fit <- kdne(Species ~ ., data = iris[c(1:20, 51:70, 101:120), ], dim = 2)
#' predict(fit, iris[c(25, 75, 125), ])
#' @export
predict.kmaha_kdne <- function(object, newdata = NULL,
                               type = c("class", "prob", "transform"),
                               k = 1, ...) {
  predict_embedded(object, newdata, match.arg(type), k, kernel_trick_embed(object))
}

#' @export
print.kmaha_kdne <- function(x, ...) {
  cat("<kmaha KDNE> kernel-trick discriminant neighbourhood embedding\n")
  cat(sprintf("  kernel: %s\n", format(x$kernel)))
  cat(sprintf("  embedding dim: %d (%d negative generalized eigenvalues)   training points: %d   classes: %d   eps: %s\n",
              nrow(x$U), x$n_negative, length(x$y), nlevels(x$y), format(x$eps)))
  print_fit_lines("kdne", x$convergence, x$train_accuracy)
  invisible(x)
}
