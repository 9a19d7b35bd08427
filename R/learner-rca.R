#' Relevant component analysis (RCA)
#'
#' Learns the metric that whitens the variation *within chunklets*: small
#' groups of points known to belong to the same (possibly unknown) class
#' (Bar-Hillel et al., 2005). Directions along which points of a chunklet
#' vary are irrelevant and shrunk; the rest stretched. The solution is
#' closed-form: no iterations, no starting point.
#'
#' **Chunklets.** Give them as `chunks`, one chunklet id per row of `x`
#' (`NA` for a row in no chunklet), or let the classes of `y` be the
#' chunklets (`chunks = NULL`). Groups of one point carry no equivalence and
#' are ignored. With \eqn{N} the number of points in chunklets of two or more
#' points and \eqn{m_j} the mean of chunklet \eqn{j}, the within-chunklet
#' covariance is
#' \deqn{C = \frac1N \sum_j \sum_{i \in j} (x_i - m_j)(x_i - m_j)^\top,}
#' and the map is \eqn{C^{-1/2}} (symmetric), from the package's dense
#' symmetric eigensolver.
#'
#' **Singular C.** With fewer chunklet points than dimensions (always at
#' p >> n), or chunklets that vary in fewer directions than there are
#' columns, \eqn{C} has no inverse square root. A ridge \eqn{\rho I} is then
#' added: `ridge = NULL` uses \eqn{\rho = 10^{-6}} times the largest
#' eigenvalue of \eqn{C} when \eqn{C} is singular (smallest eigenvalue at or
#' below \eqn{10^{-10}} times the largest), and 0 otherwise, and says so in a
#' warning; a number sets \eqn{\rho} (no warning). Directions in which no
#' chunklet varies then dominate the metric; a `dim` at most the rank of
#' \eqn{C} avoids them.
#'
#' **Dimension reduction** (`dim` below `ncol(x)`; Bar-Hillel et al.,
#' section 6): the `dim` directions maximising
#' \eqn{|A^\top S_t A| / |A^\top C A|}, \eqn{S_t} the covariance of all rows
#' of `x`, i.e. the leading generalized eigenvectors \eqn{V} of
#' \eqn{S_t v = \lambda (C + \rho I) v}; RCA is then applied in the reduced
#' space, \eqn{L = (V^\top C V + \rho' I)^{-1/2} V^\top} (\eqn{\rho'} by the
#' same rule).
#'
#' **p >> n.** \eqn{C} and \eqn{S_t} depend on the rows only through their
#' differences, so when `ncol(x) >= nrow(x)` they are computed on the
#' points' coordinates in the span of the centred training rows (from the
#' n x n Gram matrix) and no D x D matrix is formed: the map has at most
#' rank-many rows. The full-dimension metric differs only off that span, by a
#' term that is the same for every training point, so nearest neighbours
#' among the training points are unchanged.
#'
#' @param x A numeric matrix or data frame, one observation per row.
#' @param y Class labels (a factor, or a vector coerced to one): the
#'   chunklets when `chunks` is `NULL`, and the labels the model classifies
#'   with. May be `NULL` when `chunks` is given: the model then only
#'   transforms (`predict(type = "transform")`).
#' @param chunks `NULL`, or one chunklet id per row of `x` (integers,
#'   characters or a factor; `NA` for rows in no chunklet).
#' @param dim `NULL` (no reduction) or the output dimension, a whole number
#'   between 1 and `ncol(x)`.
#' @param ridge `NULL` (automatic, see Singular C) or a non-negative number
#'   added to the eigenvalues of the covariance whitened.
#' @param scale If `TRUE`, columns are centred and scaled to unit variance
#'   before fitting (the scaling is stored and reapplied by [predict()]).
#' @param formula A formula `class ~ predictors`.
#' @param data,subset,na.action As in [stats::lm()].
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `c("kmaha_rca", "kmaha_linear")` (see
#'   [kmaha-model]), with in addition `covariance` (\eqn{C}, or `NULL` when
#'   solved in the span), `c_eigenvalues` (those of the covariance whitened,
#'   ascending), `rank`, `ridge`, `n_chunklets`, `n_chunklet_points` and,
#'   with `dim`, `fisher_eigenvalues`.
#' @references Bar-Hillel A., Hertz T., Shental N., Weinshall D. (2005)
#'   Learning a Mahalanobis metric from equivalence constraints. *Journal of
#'   Machine Learning Research* 6, 937--965.
#' @examples
#' fit <- rca(Species ~ ., data = iris)
#' fit
#' # chunklets of 5 points from each class, other rows unlabelled
#' set.seed(1)
#' ch <- rep(NA, 150)
#' for (s in c(1, 51, 101)) ch[s + 0:9] <- (s + 0:9) %/% 5
#' fit2 <- rca(iris[, 1:4], iris$Species, chunks = ch)
#' predict(fit2, iris[c(1, 51, 101), 1:4])
#' @export
rca <- function(x, ...) UseMethod("rca")

#' @rdname rca
#' @export
rca.default <- function(x, y = NULL, chunks = NULL, dim = NULL, ridge = NULL,
                        scale = TRUE, ...) {
  check_typed_names("rca")
  check_dots_empty("rca()", ...)
  x <- check_x(x, "x")
  if (is.null(y) && is.null(chunks)) {
    stopf("rca() needs chunklets: give `chunks` (one id per row of `x`) or class labels `y`.")
  }
  if (!is.null(y)) y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context()
  spec <- public_spec("rca", list(chunks = chunks, dim = dim, ridge = ridge))
  if (!is.null(chunks)) spec$opts$chunks <- check_chunks(chunks, nrow(x), warn = TRUE)
  scale <- check_flag(scale, "scale")
  fit <- fit_model(x, y, feature_identity(), spec, ctx,
                   scale = if (scale) TRUE else NA, class = "kmaha_rca",
                   call = model_call(match.call(), "rca"))
  fit$settings <- learner_settings(spec, fit, ctx, scale)
  fit
}

#' @rdname rca
#' @export
rca.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), rca.default, list(...), "rca")
}

# The options of RCA (builtin_spec()); `chunks` is checked against the rows
# where they are known (rca.default(), fit_rca_map()).
rca_opts <- function(args, argname) {
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default("rca", a)
  ridge <- get_arg("ridge")
  if (!is.null(ridge)) ridge <- check_number(ridge, argname("ridge"), nonneg = TRUE)
  list(dim = opt_dim(get_arg("dim"), argname), ridge = ridge, chunks = args$chunks)
}

# Chunklet ids to 0-based integer codes (NA: in no chunklet).  `warn`: say
# so when -1 is an id (metric-learn's and RECA's mark of a row in no
# chunklet; here those rows would form one chunklet): once per fit, where
# the user's ids are first checked (rca.default(), check_given_chunks()).
check_chunks <- function(chunks, n, arg = "chunks", warn = FALSE) {
  if (is.list(chunks) && !is.data.frame(chunks)) {
    # dml::rca()'s form: a list of row-index vectors, one per chunklet
    stopf("`%s` must be a vector of chunklet ids, one per row of `x`, not a list. For a list of row indices, one element per chunklet, give ids <- rep(NA, nrow(x)); ids[unlist(chunks)] <- rep(seq_along(chunks), lengths(chunks)).",
          arg)
  }
  if (is.list(chunks) || !is.null(dim(chunks)) ||
      !(is.atomic(chunks) || is.factor(chunks))) {
    stopf("`%s` must be a vector of chunklet ids, one per row of `x`.", arg)
  }
  if (length(chunks) != n) {
    stopf("`%s` has length %d but `x` has %d rows; they must match.", arg, length(chunks), n)
  }
  if (warn && is.numeric(chunks) && any(chunks == -1, na.rm = TRUE)) {
    warnf("`%s` has %d rows with id -1, which RCA takes as one chunklet. If -1 marks rows in no chunklet (as in metric-learn and the RECA package), set those ids to NA (ids[ids == -1] <- NA).",
          arg, sum(chunks == -1, na.rm = TRUE))
  }
  codes <- as.integer(factor(chunks)) - 1L
  sizes <- tabulate(codes + 1L)
  if (!any(sizes >= 2L)) {
    stopf("`%s` has no chunklet with 2 or more rows: a chunklet says which points belong together, so it needs at least two.",
          arg)
  }
  codes
}

# The chunks given to kmaha() for a learner that takes them (RCA: "chunks"
# among its record's row_options), checked against the n rows of `x` up
# front with kmaha()'s argument name (learner_args$chunks).
check_given_chunks <- function(spec, n) {
  if (isTRUE(spec$builtin) && "chunks" %in% learner_record(spec$name)$row_options &&
      !is.null(spec$opts$chunks)) {
    check_chunks(spec$opts$chunks, n, spec$argname("chunks"), warn = TRUE)
  }
  spec
}

# The fitter (fit_map()): coordinates z (n x r), labels y (or NULL when
# chunks are given).  `argname` renders option names in messages.
fit_rca_map <- function(o, z, y, ctx, store_covariance = FALSE, principal = FALSE,
                        argname = function(a) a) {
  chunks <- if (!is.null(o$chunks)) {
    check_chunks(o$chunks, nrow(z), argname("chunks"))
  } else {
    if (is.null(y)) stopf("rca() needs chunklets: give `chunks` or class labels `y`.")
    codes <- as.integer(y) - 1L
    if (!any(tabulate(codes + 1L) >= 2L)) {
      stopf("`y` has no class with 2 or more members, so its classes make no chunklet. Give `chunks`, or classes with at least two rows.")
    }
    codes
  }
  zz <- z
  dimnames(zz) <- NULL
  res <- core_rca_fit(zz, chunks, o$dim %||% 0L, ctx, ridge = o$ridge %||% -1,
                      principal = principal)
  if (is.null(o$ridge) && res$ridge_added) {
    warnf("The within-chunklet covariance is singular (rank %d of %d): RCA added a ridge of %s (1e-6 times its largest eigenvalue). Set `%s` to choose it, or `%s` <= %d to reduce to the directions the chunklets vary in.",
          res$rank, length(res$c_eigenvalues), format(signif(res$ridge, 3)), argname("ridge"),
          argname("dim"), res$rank)
  }
  span <- res$span_rank > 0L
  list(map = res$L,
       convergence = list(
         iterations = 1L, converged = TRUE,
         message = sprintf("closed form C^(-1/2) from %d chunklets (%d points)%s%s%s",
                           res$n_chunklets, res$n_points,
                           if (!is.null(o$dim)) sprintf(", after a Fisher-like reduction to %d dimensions", nrow(res$L)) else "",
                           if (res$ridge > 0) sprintf(", ridge %s", format(signif(res$ridge, 3))) else "",
                           if (span) sprintf(" (in the %d-dimensional span of the centred training points)",
                                             res$span_rank) else "")),
       details = list(c_eigenvalues = res$c_eigenvalues, rank = res$rank, ridge = res$ridge,
                      n_chunklets = res$n_chunklets, n_chunklet_points = res$n_points,
                      fisher_eigenvalues = if (!is.null(o$dim)) res$fisher_eigenvalues,
                      covariance = if (store_covariance && !span && is.null(o$dim)) res$C))
}

# --------------------------------------------------------------------------
# RCA's record (the fields: new_learner() in R/learners.R).

learner_rca <- function() list(
  name = "rca", label = "RCA", fun = "rca.default", task = "classification",
  options = function(args, argname) rca_opts(args, argname),
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    fit_rca_map(spec$opts, z, y, ctx, store_covariance = keep_square(spec, z),
                principal = principal, argname = spec$argname)
  },
  settings = function(fit, spec, ctx, scale) {
    list(dim = nrow(fit$L), ridge = fit$ridge,
         chunks = if (is.null(spec$args$chunks)) "classes" else "given", scale = scale)
  },
  convergence = list(exact = TRUE),
  row_options = "chunks")
