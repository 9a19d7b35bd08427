#' Metric learning with side information (MMC)
#'
#' Learns the Mahalanobis metric \eqn{d_M(x, x')^2 = (x - x')^\top M (x -
#' x')} that keeps pairs known to be similar close while keeping pairs known
#' to be dissimilar apart (Xing, Ng, Jordan and Russell, 2003; the learner the
#' paper cites as "MMC"). The problem
#' \deqn{\min_{M \succeq 0} \sum_{(i,j) \in S} d_M(x_i, x_j)^2 \quad
#'   \textrm{s.t.} \quad \sum_{(i,j) \in D} d_M(x_i, x_j) \ge 1}
#' (S the similar pairs, D the dissimilar ones) is solved in the paper's
#' equivalent form, which fixes the scale the other way:
#' \deqn{\max_{M \succeq 0} g(M) = \sum_{D} d_M(x_i, x_j) \quad
#'   \textrm{s.t.} \quad f(M) = \sum_{S} d_M(x_i, x_j)^2 \le 1.}
#' It is convex, and at its optimum \eqn{f(M) = 1}. The reported `objective`
#' is \eqn{g(M)} and `constraint` is \eqn{f(M)}.
#'
#' **Full matrix** (`diagonal = FALSE`, the paper's Fig. 1): projected
#' gradient ascent from \eqn{M = I / f(I)}. Each step follows the gradient of
#' \eqn{g} made orthogonal to that of \eqn{f}, then projects onto
#' \eqn{\{f \le 1\}} and onto the positive semi-definite cone (eigenvalues
#' clipped at 0, by the package's symmetric eigensolver), alternately until
#' \eqn{f \le 1}, and finally rescales \eqn{M} to \eqn{f(M) = 1} (which
#' keeps it positive semi-definite and can only raise \eqn{g}). A step is
#' kept when it raises \eqn{g} (the step size then grows by half), else undone
#' and the step size halved. The run stops when a kept step raises \eqn{g}
#' by less than `tol` relative, or no step raises it any more. Each
#' round of the alternation costs an eigen-decomposition of a D x D matrix; it is
#' capped at 50 rounds per step (the final rescale then makes the step
#' feasible), so it is Xing et al.'s algorithm as published rather than an
#' exact solver: where the optimum has low rank, the run stops (by `tol`)
#' short of it. On Sonar and Ionosphere it stops at a quarter to a third of
#' the optimal \eqn{g}, with the metric still near full rank; the exact
#' Euclidean projection reaches the optimum, of rank 2-3, in a sixth of the
#' time, and its 1-NN accuracy there is lower (0.51 against 0.76 on Sonar;
#' `bench/mmc-projection.R`). When no similar pair varies along a direction
#' in which dissimilar pairs do, \eqn{g} is unbounded on
#' \eqn{\{f \le 1\}}: the run then stops where the step rule or
#' `max_iter` leaves it.
#'
#' **Diagonal** (`diagonal = TRUE`, the paper's section 2.2):
#' \eqn{M = \mathrm{diag}(a)} minimising the paper's
#' \eqn{h(a) = f(a) - \log g(a)}, \eqn{a \ge 0}, by L-BFGS in
#' \eqn{a = w^2}. Minimising \eqn{h} over the scale of \eqn{a} gives
#' \eqn{f = 1/2}, where \eqn{h} is a constant minus
#' \eqn{\log(g/\sqrt{f})}, so its minimiser, rescaled to \eqn{f = 1}, solves
#' the problem above over diagonal matrices; that is what is returned (with
#' `h`, the paper's objective at its minimiser). Cheap for any D. A column
#' in which no similar pair differs but a dissimilar pair does leaves
#' \eqn{h} without a minimum: raising its weight lowers \eqn{h} without
#' bound, and a minimiser would end with that column alone (the other
#' weights at 0 beside it, so 1-NN votes by that column only; see the Yeast
#' rows of `bench/results/learners-new.md`). Such columns (typically rare
#' indicator columns, e.g. a factor's dummy) get weight 0, with a warning
#' naming them, and the metric is fitted on the others (`unbounded` lists
#' them).
#'
#' **Pairs.** Give them as `pairs`, a two-column matrix of row indices of
#' `x` (one pair per row), and `similar`, one value per pair: 1 (similar) or
#' -1 (dissimilar). Both kinds must occur; a pair may not join a row to
#' itself nor be marked both ways. Or give class labels `y` only: then
#' `n_pairs` pairs are drawn at random with R's random number generator
#' ([set.seed()] reproduces them), half of them similar (uniform among pairs
#' of rows of the same class), half dissimilar (uniform among pairs of rows of
#' different classes), without repeats; the default, \eqn{40 c^2} for
#' \eqn{c} classes, is metric-learn's \eqn{20 c^2} pairs of each kind. The
#' pairs used are returned as `pairs`. With both `pairs` and `y`, the pairs
#' are learned from and `y` labels the training points for classification;
#' without `y` the model only transforms. [kmaha()] kernelizes MMC and ITML
#' with given pairs (`learner_args = list(pairs = , similar = )` and a
#' kernel), fitting the KPCA on the rows that appear in a pair (see its
#' Pairs section).
#'
#' **p >> n** (full matrix): every pair difference lies in the span of the
#' centred training rows, and so does every update; when
#' `ncol(x) >= nrow(x)` the problem is solved on the points' coordinates in
#' that span (no D x D matrix is formed, `metric` is `NULL`). The
#' full-dimension solution differs only off the span, by a term that is the
#' same for every training point, so nearest neighbours among the training
#' points are unchanged.
#'
#' @param x A numeric matrix or data frame, one observation per row.
#' @param y `NULL`, or class labels (a factor, or a vector coerced to one):
#'   the source of pairs when `pairs` is `NULL`, and the labels the model
#'   classifies with.
#' @param pairs `NULL`, or a two-column matrix of row indices of `x`.
#' @param similar With `pairs`: 1 (similar) or -1 (dissimilar) per pair.
#' @param diagonal If `TRUE`, learn a diagonal metric.
#' @param n_pairs Number of pairs drawn from `y` (when `pairs` is `NULL`;
#'   with given `pairs` it is an error); `NULL` for \eqn{40 c^2}.
#' @param max_iter Maximum number of gradient steps (full) or L-BFGS
#'   iterations (diagonal).
#' @param tol Convergence tolerance: relative increase of \eqn{g} per step
#'   (full), relative decrease of \eqn{h} (diagonal).
#' @param scale If `TRUE`, columns are centred and scaled to unit variance
#'   before fitting (the scaling is stored and reapplied by [predict()]).
#' @param formula A formula `class ~ predictors`.
#' @param data,subset,na.action As in [stats::lm()].
#' @param ... Passed from the formula method to the default method.
#' @return An object of class `c("kmaha_mmc", "kmaha_linear")` (see
#'   [kmaha-model]), whose map `L` has \eqn{L^\top L = M}, with in addition
#'   `pairs` (`list(pairs, similar)`, the pairs used), `constraint`
#'   (\eqn{f(M)}), `metric` (\eqn{M}; `NULL` when solved in the span or for
#'   more than 500 columns) and, for the diagonal metric, `weights`
#'   (\eqn{a}), `h` and `unbounded` (the columns left at weight 0 because
#'   \eqn{h} has no minimum along them; empty when none).
#' @references Xing E. P., Ng A. Y., Jordan M. I., Russell S. (2003) Distance
#'   metric learning, with application to clustering with side-information.
#'   *Advances in Neural Information Processing Systems 15*, 505--512.
#' @examples
#' set.seed(1)
#' fit <- mmc(Species ~ ., data = iris)
#' fit
#' fit$constraint
#' fitd <- mmc(iris[, 1:4], iris$Species, diagonal = TRUE)
#' fitd$weights
#' # pairs given directly
#' pr <- rbind(c(1, 2), c(51, 52), c(1, 51), c(2, 101))
#' fitp <- mmc(iris[, 1:4], pairs = pr, similar = c(1, 1, -1, -1))
#' predict(fitp, iris[1:3, 1:4], type = "transform")
#' @export
mmc <- function(x, ...) UseMethod("mmc")

#' @rdname mmc
#' @export
mmc.default <- function(x, y = NULL, pairs = NULL, similar = NULL, diagonal = FALSE,
                        n_pairs = NULL, max_iter = 500, tol = 1e-6, scale = TRUE, ...) {
  check_typed_names("mmc")
  check_dots_empty("mmc()", ...)
  pair_front_end("mmc", x, y, pairs, similar, scale, match.call(),
                 list(pairs = pairs, similar = similar, diagonal = diagonal, n_pairs = n_pairs,
                      max_iter = max_iter, tol = tol))
}

#' @rdname mmc
#' @export
mmc.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), mmc.default, list(...), "mmc")
}

# The options of MMC (builtin_spec()); pairs are checked against the rows
# where those are known (pair_front_end(), learner_pairs()).
mmc_opts <- function(args, argname) {
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default("mmc", a)
  n_pairs <- get_arg("n_pairs")
  list(pairs = args$pairs, similar = args$similar,
       diagonal = check_flag(get_arg("diagonal"), argname("diagonal")),
       n_pairs = check_n_pairs(n_pairs, args, argname),
       max_iter = check_count(get_arg("max_iter"), argname("max_iter")),
       tol = check_number(get_arg("tol"), argname("tol"), positive = TRUE))
}

# The fitter (fit_map()): coordinates z (n x r); labels y (the source of
# pairs when none are given; may be NULL otherwise).
fit_mmc_map <- function(o, z, y, ctx, store_metric = FALSE, argname = function(a) a) {
  pr <- learner_pairs(o, z, y, "mmc()")
  zz <- z
  dimnames(zz) <- NULL
  res <- core_mmc_fit(zz, pr$pairs, pr$similar, o$diagonal, o$max_iter, o$tol, ctx)
  if (length(res$unbounded)) {
    cols <- colnames(z)
    named <- if (is.null(cols)) as.character(res$unbounded) else sprintf("'%s'", cols[res$unbounded])
    one <- length(named) == 1L
    warnf("mmc(): no similar pair differs in column%s %s, where dissimilar pairs do: the diagonal objective has no minimum along %s (it would weigh %s without bound and the other columns not at all), so %s weight 0 and the metric is fitted on the other columns. Give similar pairs that differ in %s, or leave %s out.",
          if (one) "" else "s", paste(named, collapse = ", "), if (one) "it" else "them",
          if (one) "it" else "them", if (one) "it gets" else "they get",
          if (one) "it" else "them", if (one) "it" else "them")
  }
  if (!res$converged) {
    warnf("mmc() did not converge (%s after %d %s); %s.",
          res$stop, as.integer(res$iterations),
          if (o$diagonal) "evaluations" else "steps", iteration_advice(argname))
  }
  span <- res$span_rank > 0L
  list(map = res$L,
       convergence = list(
         iterations = as.integer(res$iterations), objective = res$objective,
         trace = res$trace, converged = res$converged, stop = res$stop,
         message = sprintf("%s; %d similar and %d dissimilar pairs%s",
                           if (o$diagonal) "diagonal metric by L-BFGS on the paper's h(a) = f(a) - log g(a)"
                           else "full metric by projected gradient ascent",
                           sum(pr$similar == 1), sum(pr$similar == -1),
                           if (span) sprintf(" (in the %d-dimensional span of the centred training points)",
                                             res$span_rank) else "")),
       details = list(pairs = pr, constraint = res$constraint,
                      weights = if (o$diagonal) res$a, h = if (o$diagonal) res$h,
                      unbounded = if (o$diagonal) res$unbounded,
                      metric = if (store_metric && !span && !o$diagonal) res$M))
}

# --------------------------------------------------------------------------
# MMC's record (the fields: new_learner() in R/learners.R); its front end is shared with ITML (pair_front_end(),
# R/pairs.R).

learner_mmc <- function() list(
  name = "mmc", label = "MMC", fun = "mmc.default", task = "classification",
  options = function(args, argname) mmc_opts(args, argname),
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    fit_mmc_map(spec$opts, z, y, ctx, store_metric = keep_square(spec, z),
                argname = spec$argname)
  },
  settings = function(fit, spec, ctx, scale) pair_settings(fit, spec, scale),
  objective = c(
    short = "sum of dissimilar-pair distances, similar pairs' squared distances summing to 1",
    long = "the sum over dissimilar pairs of their learned distances, subject to the sum over similar pairs of their squared learned distances being at most 1 (it is 1 at the optimum); higher is better"),
  pairs = TRUE, row_options = c("pairs", "similar"))
