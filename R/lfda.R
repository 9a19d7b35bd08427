#' Local Fisher discriminant analysis (LFDA)
#'
#' Learns a linear map that keeps nearby points of a class together and
#' separates the classes, while preserving the local structure within each
#' class (Sugiyama, 2007): Fisher discriminant analysis with every pair of
#' same-class points weighted by their affinity, so that multimodal classes
#' are not forced into one cluster. The solution is a generalized
#' eigen-decomposition: no iterations, no starting point.
#'
#' **Affinities.** Two points of the same class have the local-scaling
#' affinity \eqn{A_{ij} = \exp(-\|x_i - x_j\|^2 / (\sigma_i \sigma_j))},
#' where \eqn{\sigma_i} is the distance from \eqn{x_i} to its `k`-th nearest
#' other point of its class (`k` capped at the class size minus 1; affinity 0
#' when \eqn{\sigma_i \sigma_j = 0}). Affinities are computed a block of
#' rows at a time, so memory grows linearly with the class sizes.
#'
#' **Scatters.** With \eqn{n_c} the size of class \eqn{c}, the local
#' within-class and between-class scatter matrices are
#' \deqn{S^{(lw)} = \frac12 \sum_{i,j} W^{(lw)}_{ij} (x_i - x_j)(x_i - x_j)^\top,
#'   \quad S^{(lb)} = \frac12 \sum_{i,j} W^{(lb)}_{ij} (x_i - x_j)(x_i - x_j)^\top,}
#' with \eqn{W^{(lw)}_{ij} = A_{ij} / n_c} and
#' \eqn{W^{(lb)}_{ij} = A_{ij} (1/n - 1/n_c)} for two points of class
#' \eqn{c}, and \eqn{W^{(lw)}_{ij} = 0}, \eqn{W^{(lb)}_{ij} = 1/n} for
#' points of different classes.
#'
#' **Embedding.** The map's rows come from the generalized eigenproblem
#' \eqn{S^{(lb)} v = \lambda S^{(lw)} v}, solved by a Cholesky whitening of
#' \eqn{S^{(lw)} + \rho I} (\eqn{\rho = 10^{-8}\,\mathrm{trace}(S^{(lw)})},
#' which keeps a singular within-class scatter solvable) and the package's
#' dense symmetric eigensolver; the eigenvectors are normalized so that
#' \eqn{V^\top (S^{(lw)} + \rho I) V = I}. The `dim` eigenvectors of the
#' largest eigenvalues \eqn{\lambda_1 \ge \dots \ge \lambda_d} give the
#' map, according to `metric`:
#' * `"weighted"` (the default, as in Sugiyama's reference code): each
#'   eigenvector multiplied by \eqn{\sqrt{\lambda_j}} (negative eigenvalues
#'   count as 0), so that directions separate the classes in proportion to
#'   their discriminative power;
#' * `"orthonormalized"`: an orthonormal basis of the same subspace (the
#'   default of the CRAN package \pkg{lfda});
#' * `"plain"`: the eigenvectors as normalized above.
#'
#' The CRAN package \pkg{lfda} uses `knn = 5` and `metric =
#' "orthonormalized"` by default, and normalizes eigenvectors to unit length;
#' `lfda(x, y, k = 5, metric = "orthonormalized")` spans its subspace.
#'
#' **p >> n.** Both scatters vanish outside the span of the centred
#' training points. When `ncol(x) >= nrow(x)` the problem is solved on the
#' points' coordinates in that span (from the n x n Gram matrix): no D x D
#' matrix is formed, the map has at most rank-many rows (a larger `dim` is
#' cut to the rank), and `scatter` is `NULL`. Where the within-class scatter
#' is singular (always at p >> n), directions along which all classes are
#' collapsed get eigenvalues of order \eqn{1/\rho} and dominate the
#' weighted metric, as in Fisher's discriminant analysis.
#'
#' @param x A numeric matrix or data frame, one observation per row.
#' @param y Class labels (a factor, or a vector coerced to one).
#' @param dim Output dimension, a whole number between 1 and `ncol(x)`, or
#'   `NULL` for all of them.
#' @param k The neighbour whose distance sets a point's local scale
#'   (Sugiyama's default 7).
#' @param metric `"weighted"`, `"orthonormalized"` or `"plain"` (see
#'   Embedding).
#' @param scale If `TRUE`, columns are centred and scaled to unit variance
#'   before fitting (the scaling is stored and reapplied by [predict()]).
#' @param formula A formula `class ~ predictors`.
#' @param data,subset,na.action As in [stats::lm()].
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `c("kmaha_lfda", "kmaha_linear")` (see
#'   [kmaha-model]), with in addition `eigenvalues` (the generalized
#'   eigenvalues, descending), `local_scale` (\eqn{\sigma_i} of every
#'   training point), `ridge` (\eqn{\rho}) and `scatter` (`list(between =,
#'   within =)`, or `NULL` when solved in the span).
#' @references Sugiyama M. (2007) Dimensionality reduction of multimodal
#'   labeled data by local Fisher discriminant analysis. *Journal of Machine
#'   Learning Research* 8, 1027--1061.
#' @seealso [kmaha()] for the KPCA trick.
#' @examples
#' fit <- lfda(Species ~ ., data = iris, dim = 2)
#' fit
#' fit$eigenvalues
#' predict(fit, iris[c(1, 51, 101), ])
#' @export
lfda <- function(x, ...) UseMethod("lfda")

#' @rdname lfda
#' @export
lfda.default <- function(x, y, dim = NULL, k = 7,
                         metric = c("weighted", "orthonormalized", "plain"),
                         scale = TRUE, ...) {
  check_dots_empty("lfda()", ...)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context()
  spec <- public_spec("lfda", list(dim = dim, k = k, metric = metric))
  scale <- check_flag(scale, "scale")
  fit <- fit_model(x, y, feature_identity(), spec, ctx,
                   scale = if (scale) TRUE else NA, class = "kmaha_lfda",
                   call = model_call(match.call(), "lfda"))
  fit$settings <- list(dim = nrow(fit$L), k = spec$opts$k, metric = spec$opts$metric,
                       scale = scale)
  fit
}

#' @rdname lfda
#' @export
lfda.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), lfda.default, list(...), "lfda")
}

# The options of LFDA (builtin_spec()).
lfda_opts <- function(args, argname) {
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default("lfda", a)
  metric <- get_arg("metric")
  choices <- c("weighted", "orthonormalized", "plain")
  if (identical(metric, choices)) metric <- "weighted"
  if (!is.character(metric) || length(metric) != 1L || is.na(metric) ||
      !metric %in% choices) {
    stopf("`%s` must be \"weighted\", \"orthonormalized\" or \"plain\".", argname("metric"))
  }
  list(dim = opt_dim(get_arg("dim"), argname), k = check_count(get_arg("k"), argname("k")),
       metric = metric)
}

# The fitter (fit_map()): coordinates z (n x r), labels y.  `principal`: z
# are exact KPCA coordinates.
fit_lfda_map <- function(o, z, y, ctx, store_scatter = FALSE, principal = FALSE) {
  if (max(table(y)) < 2L) {
    stopf("`y` has no class with 2 or more members: LFDA's local within-class scatter is zero. Each class needs at least 2 rows to take part.")
  }
  zz <- z
  dimnames(zz) <- NULL
  res <- core_lfda_fit(zz, as.integer(y), o$dim %||% 0L, o$k, o$metric, ctx,
                       principal = principal)
  d <- res$dim
  obj <- sum(res$eigenvalues[seq_len(d)])
  span <- res$span_rank > 0L
  list(map = res$L,
       convergence = list(
         iterations = 1L, objective = obj, trace = obj, converged = TRUE,
         message = sprintf("direct generalized eigen-solve (Cholesky of S_lw + %s I): the %d largest of %d eigenvalues%s",
                           format(signif(res$ridge, 3)), d, length(res$eigenvalues),
                           if (span) sprintf(" (in the %d-dimensional span of the centred training points)",
                                             res$span_rank) else "")),
       details = list(eigenvalues = res$eigenvalues, local_scale = res$sigma,
                      ridge = res$ridge,
                      scatter = if (store_scatter && !span)
                        list(between = res$Slb, within = res$Slw)))
}
