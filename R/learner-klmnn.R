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
  fit$settings <- learner_settings(spec, fit, ctx, if (ki$precomputed) NA else scale)
  fit
}

#' @rdname klmnn
#' @export
klmnn.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), klmnn.default, list(...), "klmnn")
}

# --------------------------------------------------------------------------
# KLMNN's record (the fields: new_learner() in R/learners.R; its options and
# fitter are LMNN's, R/learner-lmnn.R), the default weight of kernelized
# LMNN and the message for a Gram matrix that is not positive semi-definite.

learner_klmnn <- function() list(
  name = "klmnn", label = "KLMNN", fun = "klmnn.default", task = "classification",
  kernel_trick = TRUE, linear = "lmnn",
  options = function(args, argname) lmnn_opts(args, argname, kernel_trick = TRUE),
  start = knca_init,
  targets = same_class_targets(),
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    fit_lmnn_map(spec$opts, z, y, targets, ctx, reg = reg, argname = spec$argname,
                 gram = spec$gram)
  },
  settings = function(fit, spec, ctx, scale) {
    o <- spec$opts
    list(k = o$k, dim = nrow(fit$L), mu = o$mu,
         lambda = fit$lambda, max_iter = o$max_iter,
         tol = o$tol, scale = scale, num_threads = ctx$threads)
  },
  objective = c(
    short = "target-neighbour distances + impostor hinge losses",
    long = "(1 - mu) * squared feature-space distances to the target neighbours + mu * hinge losses of the impostors, plus lambda * trace(U K U'); lower is better"),
  caret = list(param = "targets", option = "k"))

# The default weight of kernelized LMNN, for the KPCA trick (from the
# coordinates z) and the kernel trick (from the Gram matrix K): lambda0
# times the total variance of the training points in feature space.
klmnn_lambda0 <- 1
klmnn_lambda <- function(z) {
  klmnn_lambda0 * sum(colMeans(sweep(z, 2L, colMeans(z))^2))
}
klmnn_lambda_gram <- function(K) {
  n <- nrow(K)
  klmnn_lambda0 * (sum(diag(K)) - sum(K) / n) / n
}

# The kernel trick's Gram matrix K is not positive semi-definite (the core's
# error `e`, class kmaha_singular_error): the regulariser trace(U K U') is then
# unbounded below.  Re-signalled with the same class, naming the Gram
# matrix as the user gave it: `gram` is "x" (kernel = "precomputed") or
# "kernel" (the Gram matrix of a kernel on the training points).
lmnn_gram_error <- function(e, K, gram) {
  ev <- eigen(K, symmetric = TRUE, only.values = TRUE)$values
  low <- min(min(ev), -.Machine$double.eps * max(abs(ev)))
  # a ridge just above -low, rounded up to two significant digits
  step <- 10^(floor(log10(-low * 1.01)) - 1)
  ridge <- ceiling(-low * 1.01 / step) * step
  what <- if (identical(gram, "x")) {
    "The precomputed Gram matrix `x`"
  } else if (identical(gram, "kernel")) {
    "The Gram matrix of `kernel` on the training points"
  } else {
    "The Gram matrix"
  }
  fix <- if (identical(gram, "x")) {
    sprintf("make `x` positive semi-definite, e.g. add a ridge (x + %s * diag(nrow(x))) or set its negative eigenvalues to zero", format(ridge))
  } else if (identical(gram, "kernel")) {
    sprintf("use a positive semi-definite kernel, or pass its Gram matrix made positive semi-definite (e.g. plus %s * diag(n), or with its negative eigenvalues set to zero) with kernel = \"precomputed\"", format(ridge))
  } else {
    sprintf("make it positive semi-definite, e.g. add a ridge of %s times the identity", format(ridge))
  }
  e$message <- sprintf("%s is not positive semi-definite (smallest eigenvalue %s, largest %s), which KLMNN needs: its regulariser trace(U K U') would be unbounded below. To fit, %s.",
                       what, format(signif(low, 3)), format(signif(max(ev), 3)), fix)
  stop(e)
}
