#' Large Margin Nearest Neighbours (LMNN)
#'
#' Learns a Mahalanobis metric \eqn{d_M(x, x') = (x - x')^\top M (x - x')}
#' such that each point's `k` *target neighbours* (its nearest points of the
#' same class in the Euclidean metric) are close, while points of other
#' classes (*impostors*) stay at least one unit farther away than the targets.
#'
#' **Objective.** With \eqn{w_{ij} = 1} when \eqn{x_j} is a target neighbour of
#' \eqn{x_i} and \eqn{y_{il} = 1} when \eqn{x_i, x_l} share a class, `lmnn()`
#' minimises
#' \deqn{f(M) = (1-\mu)\sum_{ij} w_{ij} d_M(x_i, x_j) +
#'   \mu \sum_{ijl} w_{ij}(1-y_{il})\,[1 + d_M(x_i, x_j) - d_M(x_i, x_l)]_+ +
#'   \lambda\,\mathrm{tr}(M)}
#' over positive semi-definite \eqn{M = L^\top L}. This is \eqn{(1-\mu)} times
#' the paper's objective with \eqn{c = \mu / (1-\mu)} (so the default
#' `mu = 0.5` is \eqn{c = 1}), plus the optional regulariser
#' \eqn{\lambda\,\mathrm{tr}(M) = \lambda \|L\|_F^2}.
#'
#' **Solver.** The default (`solver = "L"`, also what `"auto"` picks) writes
#' \eqn{M = L^\top L} and minimises over the `dim` x D map \eqn{L} by
#' L-BFGS (R's own `lbfgsb`), in coordinates chosen so that the problem is
#' well conditioned: the quadratic part of the objective,
#' \eqn{(1-\mu)\,\mathrm{pull} + \lambda\,\mathrm{tr}(M)}, becomes
#' \eqn{\|L\|_F^2} after a linear change of variables (a Cholesky factor of
#' its matrix; a tiny ridge is added when `lambda = 0` and that matrix is
#' singular). This is what makes the solver fast when the dimension is about
#' the number of points, as on kernel PCA coordinates (the KPCA trick of
#' [kmaha()]). With `dim` equal to the number of features the problem is the
#' convex one over \eqn{M}; with a smaller `dim` it is not convex. The hinge
#' is first smoothed (quadratic within 0.5 of the kink, then 0.05 and 0.005)
#' and the last stage uses the exact hinge. Impostors are visited in one of
#' three ways, re-decided whenever the impostor set is refreshed: for up to
#' 2048 points with many impostors, every pair at every evaluation through the
#' Gram matrix of the mapped points; otherwise an active set of pairs
#' refreshed by an exhaustive blocked search (going back with both sets when
#' a refresh shows missed impostors); and when that set would exceed
#' \eqn{\max(2^{23}, 512n)} pairs, every pair at every evaluation by the
#' blocked search, so memory stays linear in the number of points. The
#' reported objective is always the exact one. An iteration is one objective
#' and gradient evaluation; `max_iter` bounds their number (the last L-BFGS
#' run may finish its line search a few evaluations beyond it), so it bounds
#' the work. `solver = "M"` solves the convex problem over \eqn{M} directly by
#' projected sub-gradient steps with momentum (one eigendecomposition of a
#' D x D matrix per step: slow when D is large; kept as a reference).
#'
#' **More features than points.** The objective depends on \eqn{M} only
#' through differences of training points, which lie in the span of the
#' centred training points. When that span has fewer dimensions than there
#' are features (p >= n - 1, as for gene expression data, or collinear
#' features), both solvers work in its r <= n - 1 coordinates, with the
#' same objective: the start, `dim` and the regulariser
#' \eqn{\lambda\,\mathrm{tr}(M)} carry over (the regularised problem has
#' its optimum in the span anyway), and the map is mapped back to act on the
#' p original features, with at most r rows. Nothing of size p x p is formed,
#' so a fit on 60 x 2300 inputs costs a few times one on 60 x 59
#' (`bench/lmnn-span.R`). The metric ignores directions in which the
#' training points do not vary; a new point's component there would add the
#' same amount to its distance to every training point.
#'
#' **Small classes.** A class with fewer than `k + 1` members gives its points
#' as many target neighbours as it has other members (none for a singleton,
#' which then acts only as an impostor for other classes); one warning names
#' such classes. It is an error when no class has `k + 1` members. The rule
#' is the same for every learner of the package (see [nca()], [dne()]).
#'
#' @param x A numeric matrix or data frame (one observation per row).
#' @param y Class labels (a factor, or a vector coerced to one).
#' @param k Number of target neighbours per point.
#' @param dim Dimension of the learned map (rows of \eqn{L}); `NULL` means the
#'   number of features.
#' @param mu Weight of the push (impostor) term, strictly between 0 and 1;
#'   the pull term gets `1 - mu`.
#' @param targets Optional `nrow(x)` by `k` integer matrix of target
#'   neighbour row indices (`NA` for none). Each must be another row of the
#'   same class. `NULL` computes the `k` nearest same-class rows by Euclidean
#'   distance on the (scaled) inputs, as [target_neighbors()] does. When
#'   given, `k` defaults to its number of columns.
#' @param init Starting map: `"auto"` (identity for a full-rank metric,
#'   otherwise PCA), `"identity"`, `"pca"` (leading principal directions),
#'   `"random"` (Gaussian entries), or a numeric `dim` x D matrix with at
#'   most D rows.
#' @param lambda Non-negative weight of the regulariser \eqn{\lambda \|L\|_F^2}.
#' @param max_iter Maximum number of iterations (see Solvers).
#' @param tol Convergence tolerance on the relative decrease of the objective
#'   (L-BFGS's `factr` is `tol / .Machine$double.eps`, as in [stats::optim()]).
#'   The default `1e-5` reaches the converged objective within 0.5% on the
#'   benchmark problems (`bench/studies/lmnn-solver.R`).
#' @param solver `"auto"`, `"M"` or `"L"` (see Solver).
#' @param scale Standardize the columns before learning (the scaling is stored
#'   and applied at prediction time).
#' @param verbose Print progress.
#' @param num_threads Number of threads for the impostor search: `NULL` uses
#'   the package setting, see [kmaha_threads()].
#' @param formula A formula `class ~ predictors`.
#' @param data,subset,na.action Model frame arguments, as in [stats::lm()].
#' @param ... Further arguments passed to `lmnn.default()`.
#' @return An object of class `c("kmaha_lmnn", "kmaha_linear")` (see
#'   [kmaha-model]) with, besides the common fields, `M` (the
#'   metric found by the solver, on the preprocessed inputs, before any
#'   truncation to `dim` rows), `targets` (the target
#'   neighbours used), `solver`, `impostors` (impostor pairs in the final
#'   active set) and `active_triples` (triples with a positive hinge at the
#'   solution).
#' @references Weinberger, K. Q., Blitzer, J. and Saul, L. K. (2006). Distance
#'   metric learning for large margin nearest neighbor classification. NIPS 18.
#' @examples
#' fit <- lmnn(Species ~ ., data = iris, k = 3)
#' fit
#' predict(fit, iris[c(1, 51, 101), ])
#' low <- lmnn(iris[, 1:4], iris$Species, dim = 2, max_iter = 200)
#' head(predict(low, type = "transform"))
#' @export
lmnn <- function(x, ...) UseMethod("lmnn")

#' @rdname lmnn
#' @export
lmnn.default <- function(x, y, k = 3, dim = NULL, mu = 0.5, targets = NULL,
                         init = "auto", lambda = 0, max_iter = 1000,
                         tol = 1e-5, solver = c("auto", "M", "L"),
                         scale = TRUE, verbose = FALSE, num_threads = NULL,
                         ...) {
  check_dots_empty("lmnn()", ...)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context(num_threads)
  args <- list(dim = dim, mu = mu, targets = targets, init = init,
               lambda = lambda, max_iter = max_iter, tol = tol,
               solver = solver[1], verbose = verbose)
  if (!missing(k) || is.null(targets)) args$k <- k
  spec <- public_spec("lmnn", args)
  scale <- check_flag(scale, "scale")
  if (is.null(targets)) check_class_sizes(y, spec$opts$k, "k")
  fit <- fit_model(x, y, feature_identity(), spec, ctx,
                   scale = if (scale) TRUE else NA, class = "kmaha_lmnn",
                   call = model_call(match.call(), "lmnn"))
  o <- spec$opts
  fit$settings <- list(k = ncol(fit$targets), dim = o$dim %||% ncol(x), mu = o$mu,
                       lambda = o$lambda, max_iter = o$max_iter, tol = o$tol,
                       solver = o$solver,
                       init = if (is.matrix(o$init)) "matrix" else o$init,
                       scale = scale)
  fit
}

#' @rdname lmnn
#' @export
lmnn.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), lmnn.default, list(...), "lmnn")
}
