#' Information-theoretic metric learning (ITML)
#'
#' Learns the Mahalanobis metric \eqn{M} closest to a prior \eqn{M_0} (the
#' identity by default) in the LogDet divergence
#' \eqn{D_{ld}(M, M_0) = \mathrm{tr}(M M_0^{-1}) - \log\det(M M_0^{-1}) - D}
#' such that similar pairs lie within squared distance \eqn{u} and dissimilar
#' pairs beyond \eqn{l} (Davis, Kulis, Jain, Sra and Dhillon, 2007), with
#' slack: each pair's target \eqn{\xi_{ij}} (starting at \eqn{u} or \eqn{l})
#' may move at the cost \eqn{\gamma D_{ld}(\mathrm{diag}(\xi),
#' \mathrm{diag}(\xi_0))}.
#'
#' **Algorithm** (the paper's Algorithm 1): the pairs are visited in turn,
#' each by a Bregman projection, a rank-one update
#' \eqn{M \leftarrow M + \beta M v v^\top M} (\eqn{v = x_i - x_j}) that moves
#' \eqn{v^\top M v} onto the pair's (moved) target unless its dual variable
#' \eqn{\lambda_{ij} \ge 0} caps the step, in the form of the authors' code:
#' \eqn{\alpha = \min(\lambda_{ij}, \delta \frac{\gamma}{\gamma + 1}
#' (1/p - 1/\xi_{ij}))}, \eqn{\beta = \delta\alpha/(1 - \delta\alpha p)},
#' \eqn{1/\xi_{ij} \leftarrow 1/\xi_{ij} + \delta\alpha/\gamma},
#' \eqn{\lambda_{ij} \leftarrow \lambda_{ij} - \alpha}, with \eqn{p =
#' v^\top M v} and \eqn{\delta = 1} for a similar pair, \eqn{-1} for a
#' dissimilar one. `gamma = Inf` makes the constraints hard. The cycles stop
#' when the dual variables settle:
#' \eqn{\|\lambda - \lambda_{prev}\|_1 / (\|\lambda\|_1 + \|\lambda_{prev}\|_1)
#' < } `tol` after a cycle. Each update costs \eqn{O(D^2)}.
#'
#' **Thresholds.** With `bounds = NULL`, \eqn{u} and \eqn{l} are the 5th
#' and 95th percentiles (R's [quantile()] type 7) of the squared
#' \eqn{M_0}-distances between all pairs of the distinct rows that appear in
#' a pair, as in the paper's experiments (beyond 2 000 such rows, every
#' k-th of them is used).
#'
#' **Pairs** are given or drawn from `y` exactly as for [mmc()] (see there,
#' and `n_pairs`). With the formula interface, given pairs are row numbers
#' of `data`, renumbered into the rows the model frame keeps (see Pairs in
#' [kmaha()]).
#'
#' **p >> n** with the identity prior: every update lies in the span of the
#' centred training rows, so when `ncol(x) >= nrow(x)` the problem is solved
#' on the points' coordinates in that span (prior \eqn{I_r}; no D x D matrix
#' is formed, `metric` is `NULL`). The full-dimension metric adds the
#' identity off the span: a term that is the same for every training point,
#' so nearest neighbours among the training points are unchanged.
#'
#' @inheritParams mmc
#' @param gamma Slack trade-off \eqn{\gamma > 0}; `Inf` for hard constraints.
#' @param bounds `NULL` (percentiles, see Thresholds) or `c(u, l)`, two
#'   positive numbers with \eqn{u < l}: the squared distance within which
#'   similar pairs are kept, and beyond which dissimilar pairs are pushed.
#' @param prior `"identity"`, or a symmetric positive definite
#'   `ncol(x)` x `ncol(x)` matrix \eqn{M_0} (acting on the scaled inputs when
#'   `scale = TRUE`).
#' @param max_iter Maximum number of cycles through the pairs.
#' @param tol Convergence tolerance on the relative change of the dual
#'   variables per cycle (the authors' 1e-3).
#' @return An object of class `c("kmaha_itml", "kmaha_linear")` (see
#'   [kmaha-model]), whose map `L` has \eqn{L^\top L = M}, with in addition
#'   `pairs` (the pairs used), `bounds` (\eqn{u}, \eqn{l}), `slack_targets`
#'   (the final \eqn{\xi}, one per pair), `duals` (\eqn{\lambda}) and
#'   `metric` (\eqn{M}; `NULL` when solved in the span or for more than 500
#'   columns).
#' @references Davis J. V., Kulis B., Jain P., Sra S., Dhillon I. S. (2007)
#'   Information-theoretic metric learning. *Proceedings of the 24th
#'   International Conference on Machine Learning*, 209--216.
#' @examples
#' set.seed(1)
#' fit <- itml(Species ~ ., data = iris)
#' fit
#' fit$bounds
#' pr <- rbind(c(1, 2), c(51, 52), c(1, 51), c(2, 101))
#' fitp <- itml(iris[, 1:4], iris$Species, pairs = pr, similar = c(1, 1, -1, -1))
#' predict(fitp, iris[c(1, 51, 101), 1:4])
#' @export
itml <- function(x, ...) UseMethod("itml")

#' @rdname itml
#' @export
itml.default <- function(x, y = NULL, pairs = NULL, similar = NULL, gamma = 1,
                         bounds = NULL, prior = "identity", n_pairs = NULL,
                         max_iter = 1000, tol = 1e-3, scale = TRUE, ...) {
  check_typed_names("itml")
  check_dots_empty("itml()", ...)
  pair_front_end("itml", x, y, pairs, similar, scale, match.call(),
                 list(pairs = pairs, similar = similar, gamma = gamma,
                      bounds = bounds, prior = prior, n_pairs = n_pairs,
                      max_iter = max_iter, tol = tol))
}

#' @rdname itml
#' @export
itml.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), itml.default, list(...), "itml")
}

# The options of ITML (builtin_spec()).
itml_opts <- function(args, argname) {
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default("itml", a)
  gamma <- get_arg("gamma")
  if (!is.numeric(gamma) || length(gamma) != 1L || is.na(gamma) || !(gamma > 0)) {
    stopf("`%s` must be a positive number or Inf.", argname("gamma"))
  }
  bounds <- get_arg("bounds")
  if (!is.null(bounds) && (!is.numeric(bounds) || length(bounds) != 2L ||
                           anyNA(bounds) || any(!is.finite(bounds)) || any(bounds <= 0))) {
    stopf("`%s` must be NULL or c(u, l), two positive numbers (squared distances).",
          argname("bounds"))
  }
  if (!is.null(bounds) && bounds[1] >= bounds[2]) {
    stopf("`%s` = c(u, l) needs u < l (similar pairs are kept within u, dissimilar ones pushed beyond l), but it is c(%s, %s); did you mean c(%s, %s)?",
          argname("bounds"), format(bounds[1]), format(bounds[2]), format(bounds[2]),
          format(bounds[1]))
  }
  prior <- get_arg("prior")
  if (!(is.character(prior) && length(prior) == 1L && identical(prior, "identity")) &&
      !(is.numeric(prior) && is.matrix(prior))) {
    stopf("`%s` must be \"identity\" or a symmetric positive definite matrix.", argname("prior"))
  }
  if (is.matrix(prior)) {
    if (nrow(prior) != ncol(prior) || anyNA(prior) || any(!is.finite(prior)) ||
        max(abs(prior - t(prior))) > 1e-10 * max(abs(prior))) {
      stopf("`%s` must be a symmetric square matrix of finite numbers.", argname("prior"))
    }
    if (inherits(tryCatch(chol(prior), error = function(e) e), "error")) {
      stopf("`%s` must be positive definite (its Cholesky factorization failed).",
            argname("prior"))
    }
    storage.mode(prior) <- "double"
    dimnames(prior) <- NULL
  }
  n_pairs <- get_arg("n_pairs")
  list(pairs = args$pairs, similar = args$similar, gamma = as.double(gamma),
       bounds = if (!is.null(bounds)) as.double(bounds), prior = prior,
       n_pairs = check_n_pairs(n_pairs, args, argname),
       max_iter = check_count(get_arg("max_iter"), argname("max_iter")),
       tol = check_number(get_arg("tol"), argname("tol"), positive = TRUE))
}

# The core's zero distance threshold said with its cause and fix: u (or l)
# is the 5th (95th) percentile of the squared distances between the paired
# rows, 0 when at least 5% (95%) of those pairs of rows coincide.  Other
# degenerate errors pass through; the condition keeps its classes.
itml_zero_bound <- function(e, argname) {
  if (!startsWith(conditionMessage(e), "itml: a distance threshold is zero")) stop(e)
  e$message <- sprintf("ITML's distance thresholds, the 5th and 95th percentiles of the squared distances between the rows that appear in a pair, include 0: at least 5%% of those pairs of rows coincide (repeated rows). Give `%s` = c(u, l), two positive squared distances with u < l, or remove the repeated rows.",
                       argname("bounds"))
  e$call <- NULL
  stop(e)
}

# The fitter (fit_map()): as fit_mmc_map().
fit_itml_map <- function(o, z, y, ctx, store_metric = FALSE, argname = function(a) a) {
  pr <- learner_pairs(o, z, y, "itml()")
  prior <- if (is.matrix(o$prior)) o$prior
  if (!is.null(prior) && ncol(prior) != ncol(z)) {
    stopf("`%s` is %d x %d but the learner receives %d coordinates; they must match.",
          argname("prior"), nrow(prior), ncol(prior), ncol(z))
  }
  zz <- z
  dimnames(zz) <- NULL
  b <- o$bounds %||% c(NA_real_, NA_real_)
  res <- tryCatch(core_itml_fit(zz, pr$pairs, pr$similar, prior, o$gamma, b[1], b[2],
                                o$max_iter, o$tol, ctx),
                  kmaha_degenerate_error = function(e) itml_zero_bound(e, argname))
  if (!res$converged) {
    warnf("itml() did not converge (dual variables still changing by %.2g after %d cycles); %s.",
          res$change, as.integer(res$iterations), iteration_advice(argname))
  }
  span <- res$span_rank > 0L
  list(map = res$L,
       convergence = list(
         iterations = as.integer(res$iterations), trace = res$trace,
         converged = res$converged,
         message = sprintf("Bregman projections: %d cycles through %d similar and %d dissimilar pairs (u = %s, l = %s)%s",
                           as.integer(res$iterations), sum(pr$similar == 1),
                           sum(pr$similar == -1), format(signif(res$u, 4)),
                           format(signif(res$l, 4)),
                           if (span) sprintf(" (in the %d-dimensional span of the centred training points)",
                                             res$span_rank) else "")),
       details = list(pairs = pr, bounds = c(u = res$u, l = res$l),
                      slack_targets = res$xi, duals = res$lambda,
                      metric = if (store_metric && !span) res$A))
}

# --------------------------------------------------------------------------
# ITML's record (the fields: new_learner() in R/learners.R).

learner_itml <- function() list(
  name = "itml", label = "ITML", fun = "itml.default", task = "classification",
  options = function(args, argname) itml_opts(args, argname),
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    fit_itml_map(spec$opts, z, y, ctx, store_metric = keep_square(spec, z),
                 argname = spec$argname)
  },
  settings = function(fit, spec, ctx, scale) {
    s <- pair_settings(fit, spec, scale)
    s$prior <- if (is.matrix(spec$opts$prior)) "matrix" else "identity"
    s$bounds <- NULL
    s
  },
  pairs = TRUE, row_options = c("pairs", "similar"))
