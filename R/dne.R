#' Discriminant neighbourhood embedding (DNE)
#'
#' Learns an orthonormal linear map \eqn{A} (`dim` x D) that pulls together
#' neighbouring points of the same class and pushes apart neighbouring points
#' of different classes (Zhang et al., 2006; section "DNE" of
#' Chatpatanasiri et al., 2010). The solution is a direct eigen-decomposition,
#' so there is no iteration and no starting point.
#'
#' **Graph.** For each point \eqn{x_i}, \eqn{N^I(i)} holds its `k` nearest
#' points of the same class and \eqn{N^E(i)} its `k` nearest points of other
#' classes (Euclidean distance on the scaled inputs unless `targets` is
#' given). The graph weights are \eqn{w_{ij} = +1} if \eqn{j \in N^I(i)} or
#' \eqn{i \in N^I(j)}, \eqn{w_{ij} = -1} if \eqn{j \in N^E(i)} or
#' \eqn{i \in N^E(j)}, and 0 otherwise. The graph is kept sparse (at most
#' \eqn{2nk} edges); no n x n matrix is formed.
#'
#' **Objective.** With one observation per row of \eqn{X} and \eqn{D} the
#' diagonal matrix of the row sums of \eqn{W},
#' \deqn{\min_{A A^\top = I} \mathrm{trace}(A S A^\top), \quad
#'   S = X^\top (D - W) X.}
#' This is the paper's \eqn{\sum_{i,j} w_{ij}\|A x_i - A x_j\|^2} (sum over
#' ordered pairs) divided by 2. The rows of \eqn{A} are the eigenvectors of
#' the `dim` smallest eigenvalues of \eqn{S}, and the minimum is the sum of
#' those eigenvalues (reported as the objective).
#'
#' **Dimension.** With `dim = NULL` the dimension is the number of negative
#' eigenvalues of \eqn{S + \lambda I} (at least 1) that the data support:
#' the directions along which the embedding shrinks same-class
#' neighbourhoods more than different-class ones, by more than chance.
#' Eigenvalues within rounding error of zero
#' (\eqn{|\mu| \le 10\,D\,\epsilon_{mach} \max|\mu|}) never count.
#' For ordinary data, where the n training points are affinely dependent (in
#' particular whenever \eqn{D < n - 1}), every negative eigenvalue counts.
#' When they are affinely independent (\eqn{D \ge n - 1}, e.g. p >> n, or
#' kernel coordinates of full rank), each point has a private part outside
#' the span of the others, which a new point does not share, and the number
#' of negative eigenvalues is then set by the neighbour graph (Sylvester's law
#' of inertia), not by the data; keeping them all overfits, and new points
#' land near the origin of the embedding. The *retention* \eqn{\rho} measures
#' this: the spread of the training points at their leave-one-out positions
#' (each projected onto the affine span of the others) divided by their
#' spread, 1 for affinely dependent points and near 0 for p >> n noise.
#' Without class information the same-class and other-class neighbour sums
#' are exchangeable and the spectrum of \eqn{S} is symmetric about 0, so
#' its largest eigenvalue \eqn{\mu_{max}} is the size of the eigenvalues
#' chance produces; a negative eigenvalue counts only below
#' \eqn{-(1 - \rho)\,\mu_{max}}. `retention` in the fit reports
#' \eqn{\rho} and `n_negative` the plain count.
#'
#' **p >> n.** When \eqn{D \ge n - 1} the problem is solved in the span of
#' the centred training points, where all its negative (indeed all its
#' non-zero) eigenvalues live: with an orthonormal basis \eqn{B} of that
#' span (from the n x n Gram matrix), the eigenpairs of \eqn{S} are those of
#' the r x r matrix \eqn{B^\top S B} (eigenvectors \eqn{B v}) and
#' \eqn{D - r} zeros. The cost is \eqn{O(n^2 D)} instead of
#' \eqn{O(D^3)}, and \eqn{S} is not formed (`scatter` is `NULL`).
#'
#' **`lambda`.** The regularised objective
#' \eqn{\mathrm{trace}(A S A^\top) + \lambda \|A\|_F^2} equals
#' \eqn{\mathrm{trace}(A (S + \lambda I) A^\top)}. Under \eqn{A A^\top = I}
#' the penalty is the constant \eqn{\lambda d}, so for a fixed `dim` the map
#' is *unchanged*: the eigenvectors of \eqn{S + \lambda I} are those of
#' \eqn{S}. What `lambda` does change is the automatic dimension: a direction
#' is kept only if its eigenvalue of \eqn{S} is below \eqn{-\lambda}, i.e.
#' `lambda` is a price per retained dimension. Reported eigenvalues and the
#' objective include the shift.
#'
#' **Small classes.** A class with fewer than `k + 1` members supplies its
#' points with as many same-class neighbours as it has other members (none
#' for a class of one); one warning names such classes. When no class has
#' `k + 1` members it is an error (lower `k`), as for [lmnn()]. When fewer
#' than `k` points lie outside a class, its points likewise get fewer
#' other-class neighbours.
#'
#' @param x A numeric matrix or data frame, one observation per row.
#' @param y Class labels (a factor, or a vector coerced to one).
#' @param k Number of same-class and of other-class neighbours per point.
#'   Ignored when `targets` is given.
#' @param dim Output dimension, a whole number between 1 and `ncol(x)`, or
#'   `NULL` for the number of negative eigenvalues the data support (see
#'   Details).
#' @param targets `NULL`, or neighbours computed elsewhere (e.g. in a kernel
#'   feature space): `list(same = , other = )`, two integer matrices with
#'   one row per observation holding row indices of `x`; `NA` marks a missing
#'   neighbour. `same` must list points of the same class, `other` points of
#'   other classes, never the point itself.
#' @param lambda Non-negative price per retained dimension (see Details).
#' @param scale If `TRUE`, columns are centred and scaled to unit variance
#'   before fitting (the scaling is stored and reapplied by [predict()]).
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @param formula A formula `class ~ predictors`.
#' @param data,subset,na.action As in [stats::lm()].
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `c("kmaha_dne", "kmaha_linear")` (see
#'   [kmaha-model]), with in addition `eigenvalues` (all D
#'   eigenvalues of \eqn{S + \lambda I}, ascending), `n_negative`,
#'   `retention` (see Dimension), `scatter` (\eqn{S}, or `NULL` when
#'   \eqn{D \ge n - 1}) and `targets` (the neighbour lists used).
#' @references Zhang W., Xue X., Lu H., Guo Y.-F. (2006) Discriminant
#'   neighborhood embedding for classification. *Pattern Recognition* 39,
#'   2240--2243.
#'
#'   Chatpatanasiri R., Korsrilabutr T., Tangchanachaianan P., Kijsirikul B.
#'   (2010) On kernelizing Mahalanobis distance learning algorithms.
#'   *Neurocomputing* 73, 1570--1579.
#' @seealso [kdne()] for the kernel-trick version; [kmaha()] for the KPCA
#'   trick.
#' @examples
#' fit <- dne(Species ~ ., data = iris, k = 3)
#' fit
#' fit$eigenvalues
#' predict(fit, iris[c(1, 51, 101), ])
#' @export
dne <- function(x, ...) UseMethod("dne")

#' @rdname dne
#' @export
dne.default <- function(x, y, k = 3, dim = NULL, targets = NULL, lambda = 0,
                        scale = TRUE, num_threads = NULL, ...) {
  check_dots_empty("dne()", ...)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context(num_threads)
  spec <- public_spec("dne", list(k = k, dim = dim, targets = targets,
                                  lambda = lambda))
  scale <- check_flag(scale, "scale")
  if (is.null(targets)) check_class_sizes(y, spec$opts$k, "k")
  fit <- fit_model(x, y, feature_identity(), spec, ctx,
                   scale = if (scale) TRUE else NA, class = "kmaha_dne",
                   call = model_call(match.call(), "dne"))
  fit$settings <- list(k = if (is.null(targets)) spec$opts$k else NA_integer_,
                       dim = nrow(fit$L), dim_rule = fit$dim_rule,
                       lambda = spec$opts$lambda, scale = scale,
                       targets = if (is.null(targets)) "input" else "supplied")
  fit
}

#' @rdname dne
#' @export
dne.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), dne.default, list(...), "dne")
}

# Validate list(same = , other = ) neighbour matrices against labels y.
check_dne_targets <- function(targets, y, arg = "targets") {
  if (!is.list(targets) || is.data.frame(targets) ||
      !all(c("same", "other") %in% names(targets))) {
    stopf("`%s` must be a list with components `same` and `other` (n x k matrices of row indices), as returned by dne()$targets.",
          arg)
  }
  out <- list(same = check_neighbor_matrix(targets$same, y, paste0(arg, "$same"), same = TRUE),
              other = check_neighbor_matrix(targets$other, y, paste0(arg, "$other"), same = FALSE))
  if (all(is.na(out$same)) && all(is.na(out$other))) {
    stopf("`%s` lists no neighbour at all (`%s$same` and `%s$other` are all NA): the graph has no edge, so there is nothing to learn.",
          arg, arg, arg)
  }
  out
}

# How dne() and kdne() choose the dimension when `dim = NULL` (the rule is
# detail::automatic_dim() in inst/include/kmaha/dne.hpp).
dne_dim_rule <- "negative eigenvalues below -(1 - retention) x the largest"
