#' Kernel-trick LMNN (KLMNN)
#'
#' The kernel-trick version of [lmnn()], completing the paper's comparison
#' of the two ways to kernelize a learner (with [knca()] and [kdne()]; the
#' KPCA trick is [kmaha()]). The map in feature space is parameterised as
#' \eqn{A = U \Phi^\top}, so the learned squared distance between two inputs
#' is \eqn{\|U(k_i - k_j)\|^2}, where \eqn{k_i} is the column of Gram values
#' \eqn{k(x_l, x_i)} over the training points. \eqn{U} (d x n) minimises
#' LMNN's objective (see [lmnn()]) on these Gram columns with the
#' regulariser of the strong representer theorem,
#' \eqn{\lambda\, \mathrm{trace}(U K U^\top)} (the squared Hilbert-Schmidt
#' norm of \eqn{A}; RKLMNN):
#' \deqn{f(U) = (1-\mu)\sum_{ij} w_{ij} \|U(k_i - k_j)\|^2 +
#'   \mu \sum_{ijl} w_{ij}(1-y_{il})\,[1 + \|U(k_i - k_j)\|^2 -
#'   \|U(k_i - k_l)\|^2]_+ + \lambda\,\mathrm{tr}(U K U^\top).}
#' Target neighbours are the `k` nearest same-class points in feature space
#' (\eqn{k(x_i, x_i) + k(x_j, x_j) - 2k(x_i, x_j)}).
#'
#' **Relation to the KPCA trick.** For \eqn{U} whose rows sum to zero, the
#' objective equals that of LMNN on the KPCA coordinates (all components
#' kept) at the map \eqn{U V \Lambda^{1/2}}, where \eqn{V \Lambda V^\top}
#' is the eigendecomposition of the centred Gram matrix: the two tricks
#' solve the same problem (the paper's representer theorems). The kernel
#' trick works with n x n matrices whatever the rank of the kernel, and its
#' start is the KPCA map (`init = "auto"`).
#'
#' **Computation.** The optimal \eqn{U} has rows that sum to zero (its
#' feature-space map lies in the span of the centred training points), so
#' `klmnn()` solves exactly that problem: LMNN on the KPCA coordinates with
#' \eqn{\lambda\,\mathrm{tr}(M)}, after one eigendecomposition of the
#' centred Gram matrix, and maps the solution back to \eqn{U}; the objective
#' reported is the kernel trick's. The regulariser needs a positive
#' semi-definite Gram matrix: an indefinite one (a precomputed matrix, or a
#' kernel function that is not positive semi-definite on the data) is an
#' error that says so and proposes a ridge.
#'
#' **Default regularization.** `lambda = NULL` uses the scale-free weight
#' of [kmaha()]'s kernelized LMNN: \eqn{\lambda = \lambda_0 s} with \eqn{s}
#' the total variance of the training points in feature space,
#' \eqn{\mathrm{tr}(HKH)/n}, and \eqn{\lambda_0 = 1}; `lambda = 0` gives
#' plain KLMNN, which can collapse each class to a point (see [kmaha()]).
#'
#' @inheritParams lmnn
#' @param kernel A kernel object (see [kernels], [kernel_sum()]), a kernlab
#'   kernel or an R function `k(x, y)` (see [kernel-sources]), or
#'   `"precomputed"`: then `x` is the n x n Gram matrix of the training
#'   points (`scale` does not apply) and [predict()][predict.kmaha_model]
#'   takes the m x n kernel values of new points against the training
#'   points as `newdata`.
#' @param dim Output dimension d: `NULL` (the rank of the centred Gram
#'   matrix) or a whole number up to that rank.
#' @param lambda `NULL` (the default weight, see Details) or a non-negative
#'   weight of \eqn{\mathrm{trace}(U K U^\top)}.
#' @param init Starting coefficients: `"auto"` or `"kpca"` (the map onto the
#'   leading `dim` kernel principal components), `"random"`, or a `dim` x n
#'   matrix.
#' @return An object of class `c("kmaha_klmnn", "kmaha_kernel_trick",
#'   "kmaha_model")`; see [predict.kmaha_model()] and [kmaha-model].
#' @seealso [lmnn()], [knca()], [kdne()], [kmaha()].
#' @examples
#' idx <- c(1:25, 51:75, 101:125)
#' fit <- klmnn(iris[idx, 1:4], iris$Species[idx], kernel = rbf_kernel(1),
#'              max_iter = 200)
#' fit
#' mean(predict(fit, iris[-idx, 1:4]) == iris$Species[-idx])
#' @export
klmnn <- function(x, ...) UseMethod("klmnn")

#' @rdname klmnn
#' @export
klmnn.default <- function(x, y, kernel = rbf_kernel(1), k = 3, dim = NULL,
                          mu = 0.5, lambda = NULL, init = "auto",
                          max_iter = 1000, tol = 1e-5, scale = TRUE,
                          verbose = FALSE, num_threads = NULL, ...) {
  check_dots_empty("klmnn()", ...)
  ki <- kernel_inputs(x, y, kernel)
  kernel <- ki$kernel
  x <- ki$x
  y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context(num_threads)
  spec <- public_spec("klmnn", list(k = k, dim = dim, mu = mu, lambda = lambda,
                                    init = init, max_iter = max_iter, tol = tol,
                                    verbose = verbose))
  # how the user gave the Gram matrix, for the message when it is not
  # positive semi-definite
  spec$gram <- if (ki$precomputed) "x" else "kernel"
  scale <- check_flag(scale, "scale")
  check_class_sizes(y, spec$opts$k, "k")
  fit <- fit_model(x, y, feature_kernel_rows(kernel), spec, ctx,
                   scale = if (scale && !ki$precomputed) TRUE else NA, class = "kmaha_klmnn",
                   call = model_call(match.call(), "klmnn"))
  o <- spec$opts
  fit$settings <- list(k = o$k, dim = nrow(fit$L), mu = o$mu,
                       lambda = fit$lambda, max_iter = o$max_iter,
                       tol = o$tol, scale = if (ki$precomputed) NA else scale, num_threads = ctx$threads)
  fit
}

#' @rdname klmnn
#' @export
klmnn.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), klmnn.default, list(...), "klmnn")
}
