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
#' \eqn{S^{(lb)} v = \lambda S^{(w)} v} with the regularized within-class
#' scatter
#' \deqn{S^{(w)} = S^{(lw)} + \rho I + \mathrm{reg}\; s^2\, S_t^{+},
#'   \qquad s = \mathrm{trace}(S_t) / n,}
#' where \eqn{S_t = \sum_i (x_i - \bar x)(x_i - \bar x)^\top} is the total
#' scatter of the training points, \eqn{S_t^{+}} its pseudo-inverse, and
#' \eqn{\rho = 10^{-8}\,\mathrm{trace}(S^{(lw)})} keeps a singular
#' within-class scatter solvable. The last term is the ridge of kernel LFDA
#' (Sugiyama, 2007, kernel LFDA; `reg` of `lfda::klfda()`): a direction
#' \eqn{w = \sum_i \alpha_i (x_i - \bar x)} has smallest
#' \eqn{\|\alpha\|^2 = w^\top S_t^{+} w}, so the term is
#' \eqn{\mathrm{reg}\,\|\alpha\|^2} up to the factor \eqn{s^2}. On the
#' kernel PCA coordinates of the KPCA trick ([kmaha()] with a kernel),
#' \eqn{S_t = \mathrm{diag}(\Lambda)} holds the kernel's eigenvalues and the
#' term is \eqn{\mathrm{reg}\, s^2\, u^\top \Lambda^{-1} u}: a ridge that grows
#' as a component's eigenvalue shrinks, which keeps directions of tiny
#' components from collapsing each class onto a point. The factor
#' \eqn{s^2} (\eqn{s} is the mean squared distance of a point to the mean)
#' makes the map scale-free: the map of \eqn{c x} is the map of \eqn{x}
#' divided by \eqn{c}. For a kernel with unit diagonal such as the RBF
#' kernel, \eqn{s = 1 - \mathrm{mean}(K) \le 1}. `reg = 0` gives
#' Sugiyama's LFDA. The default `reg = 0.001` (klfda's) is the same for
#' linear LFDA and on KPCA coordinates: on the inputs it matters only where
#' the local within-class scatter is small in some direction compared with
#' the total scatter (many columns for the rows, always at p >> n), and
#' there it bounds the discriminant (see `bench/results/lfda-klfda.md`).
#' The problem is solved by a Cholesky
#' whitening of \eqn{S^{(w)}} and the package's dense symmetric eigensolver;
#' the eigenvectors are normalized so that \eqn{V^\top S^{(w)} V = I}. The
#' `dim` eigenvectors of the
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
#' `lfda(x, y, k = 5, metric = "orthonormalized", reg = 0, scale = FALSE)`
#' spans its subspace (its `r` is `dim` here). With the defaults
#' `scale = TRUE` (columns standardized, which changes the affinities) and
#' `reg = 0.001` the subspace differs.
#'
#' **p >> n.** Both scatters vanish outside the span of the centred
#' training points. When `ncol(x) >= nrow(x)` the problem is solved on the
#' points' coordinates in that span (from the n x n Gram matrix): no D x D
#' matrix is formed, the map has at most rank-many rows (a larger `dim` is
#' cut to the rank), and `scatter` is `NULL`. Where the within-class scatter
#' is singular (always at p >> n) and `reg = 0`, directions along which all
#' classes are collapsed get eigenvalues of order \eqn{1/\rho} and dominate
#' the weighted metric, as in Fisher's discriminant analysis; `reg > 0`
#' bounds them (in the span, \eqn{S_t} is diagonal in the points'
#' coordinates, so the penalty is the same as on all columns).
#'
#' @param x A numeric matrix or data frame, one observation per row.
#' @param y Class labels (a factor, or a vector coerced to one).
#' @param dim Output dimension, a whole number between 1 and `ncol(x)`, or
#'   `NULL` for all of them.
#' @param k The neighbour whose distance sets a point's local scale
#'   (Sugiyama's default 7).
#' @param metric `"weighted"`, `"orthonormalized"` or `"plain"` (see
#'   Embedding).
#' @param reg The weight of the ridge \eqn{\mathrm{reg}\, s^2 S_t^{+}} added
#'   to the local within-class scatter (see Embedding), a non-negative number;
#'   0 for Sugiyama's LFDA without it. The default 0.001 is the `reg` of
#'   `lfda::klfda()`; with it, LFDA by the KPCA trick ([kmaha()] with a
#'   kernel) is as accurate as `klfda()` on the same kernel (within 0.01
#'   in 1-NN test accuracy on the paper's nine sets; without it, 0.05--0.11
#'   below; `bench/results/lfda-klfda.md`).
#' @param scale If `TRUE`, columns are centred and scaled to unit variance
#'   before fitting (the scaling is stored and reapplied by [predict()]).
#' @param formula A formula `class ~ predictors`.
#' @param data,subset,na.action As in [stats::lm()].
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `c("kmaha_lfda", "kmaha_linear")` (see
#'   [kmaha-model]), with in addition `eigenvalues` (the generalized
#'   eigenvalues, descending), `local_scale` (\eqn{\sigma_i} of every
#'   training point), `ridge` (\eqn{\rho}), `reg`, `reg_weight` (the
#'   multiplier \eqn{\mathrm{reg}\, s^2} of \eqn{S_t^{+}}) and `scatter` (`list(between =,
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
                         reg = 1e-3, scale = TRUE, ...) {
  check_typed_names("lfda")
  check_dots_empty("lfda()", ...)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context()
  spec <- public_spec("lfda", list(dim = dim, k = k, metric = metric, reg = reg))
  scale <- check_flag(scale, "scale")
  fit <- fit_model(x, y, feature_identity(), spec, ctx,
                   scale = if (scale) TRUE else NA, class = "kmaha_lfda",
                   call = model_call(match.call(), "lfda"))
  fit$settings <- learner_settings(spec, fit, ctx, scale)
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
       metric = metric, reg = check_number(get_arg("reg"), argname("reg"), nonneg = TRUE))
}

# The core's zero local within-class scatter (every local scale 0) said
# with its cause and fix: a point's local scale is the distance to its k-th
# nearest point of its class, which is 0 when the point has k or more copies
# there (repeated rows, e.g. discrete columns).  Other degenerate errors
# pass through unchanged; the condition keeps its classes.
lfda_zero_scatter <- function(e, z, y, k, argname) {
  if (!startsWith(conditionMessage(e), "lfda: the local within-class scatter is zero")) stop(e)
  key <- do.call(paste, c(lapply(seq_len(ncol(z)), function(j) z[, j]), sep = "\r"))
  copies <- max(table(key, y))
  e$message <- sprintf("LFDA's local within-class scatter is zero: every point's local scale (the distance to its k-th nearest point of its class, `%s` = %d) is 0, because rows repeat (up to %d copies of a point in a class). Give a larger `%s` (with `%s` = %d every point has a positive scale), or remove the repeated rows.",
                       argname("k"), as.integer(k), as.integer(copies), argname("k"),
                       argname("k"), as.integer(copies))
  e$call <- NULL
  stop(e)
}

# The fitter (fit_map()): coordinates z (n x r), labels y.  `principal`: z
# are exact KPCA coordinates.  `argname` renders option names in messages.
fit_lfda_map <- function(o, z, y, ctx, store_scatter = FALSE, principal = FALSE,
                         argname = function(a) a) {
  if (max(table(y)) < 2L) {
    stopf("`y` has no class with 2 or more members: LFDA's local within-class scatter is zero. Each class needs at least 2 rows to take part.")
  }
  zz <- z
  dimnames(zz) <- NULL
  res <- tryCatch(core_lfda_fit(zz, as.integer(y), o$dim %||% 0L, o$k, o$metric, ctx,
                                principal = principal, reg = o$reg),
                  kmaha_degenerate_error = function(e) lfda_zero_scatter(e, zz, y, o$k, argname))
  d <- res$dim
  obj <- sum(res$eigenvalues[seq_len(d)])
  span <- res$span_rank > 0L
  list(map = res$L,
       convergence = list(
         iterations = 1L, objective = obj, trace = obj, converged = TRUE,
         message = sprintf("direct generalized eigen-solve (Cholesky of S_lw + %s I%s): the %d largest of %d eigenvalues%s",
                           format(signif(res$ridge, 3)),
                           if (res$reg > 0) sprintf(" + %s S_t^+", format(signif(res$reg_weight, 3))) else "",
                           d, length(res$eigenvalues),
                           if (span) sprintf(" (in the %d-dimensional span of the centred training points)",
                                             res$span_rank) else "")),
       details = list(eigenvalues = res$eigenvalues, local_scale = res$sigma,
                      ridge = res$ridge, reg = res$reg, reg_weight = res$reg_weight,
                      scatter = if (store_scatter && !span)
                        list(between = res$Slb, within = res$Slw)))
}

# --------------------------------------------------------------------------
# LFDA's record (the fields: new_learner() in R/learners.R).

learner_lfda <- function() list(
  name = "lfda", label = "LFDA", fun = "lfda.default", task = "classification",
  options = function(args, argname) lfda_opts(args, argname),
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    fit_lfda_map(spec$opts, z, y, ctx, store_scatter = keep_square(spec, z),
                 principal = principal, argname = spec$argname)
  },
  settings = function(fit, spec, ctx, scale) {
    list(dim = nrow(fit$L), k = spec$opts$k, metric = spec$opts$metric, reg = spec$opts$reg,
         scale = scale)
  },
  convergence = list(exact = TRUE),
  objective = c(
    short = "sum of the largest generalized eigenvalues of local between- vs within-class scatter",
    long = "the sum of the `dim` largest generalized eigenvalues of the local between-class scatter relative to the local within-class scatter; higher is better"))
