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
  fit$settings <- learner_settings(spec, fit, ctx, scale)
  fit
}

#' @rdname lmnn
#' @export
lmnn.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), lmnn.default, list(...), "lmnn")
}

# --------------------------------------------------------------------------
# LMNN's record (the fields: new_learner() in R/learners.R), its options,
# start and fitter (shared with KLMNN, R/learner-klmnn.R) and its cap for
# kernel choice.

learner_lmnn <- function() list(
  name = "lmnn", label = "LMNN", fun = "lmnn.default", task = "classification",
  auto = TRUE,
  options = function(args, argname) lmnn_opts(args, argname),
  start = lmnn_init,
  targets = same_class_targets(in_fit = TRUE),
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    fit_lmnn_map(spec$opts, z, y, targets, ctx, store_metric = keep_square(spec, z),
                 argname = spec$argname, coords = if (isTRUE(spec$public))
                   sprintf("`x` has %d columns", ncol(z)) else
                   sprintf("the learner receives %s", coords),
                 principal = principal, score = score)
  },
  # kernelized LMNN gets the RKLMNN default weight unless the user set
  # `lambda` (see kmaha()); linear LMNN none
  kpca = function(spec) {
    if (!"lambda" %in% names(spec$args)) spec$opts$lambda <- klmnn_lambda
    spec
  },
  choice_dim = function(p) lmnn_choice_dim,
  fold_tol = TRUE,
  settings = function(fit, spec, ctx, scale) {
    o <- spec$opts
    list(k = ncol(fit$targets), dim = o$dim %||% fit$n_features, mu = o$mu,
         lambda = o$lambda, max_iter = o$max_iter, tol = o$tol,
         solver = o$solver,
         init = if (is.matrix(o$init)) "matrix" else o$init,
         scale = scale)
  },
  objective = c(
    short = "target-neighbour distances + impostor hinge losses",
    long = "(1 - mu) * squared distances to the target neighbours + mu * hinge losses of the impostors, plus lambda * trace(M); lower is better"),
  caret = list(param = "targets", option = "k"))

# The rows of the map kernelized LMNN learns for kernel choice (see
# nca_choice_dim in R/learner-nca.R for the measurements).
lmnn_choice_dim <- 16L

lmnn_opts <- function(args, argname, kernel_trick = FALSE) {
  name <- if (kernel_trick) "klmnn" else "lmnn"
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default(name, a)
  mu <- check_number(get_arg("mu"), argname("mu"))
  if (mu <= 0 || mu >= 1) {
    stopf("`%s` must lie strictly between 0 and 1, not %s.", argname("mu"), format(mu))
  }
  lambda <- get_arg("lambda")
  if (!is.function(lambda) && !is.null(lambda)) {
    lambda <- check_number(lambda, argname("lambda"), nonneg = TRUE)
  }
  init <- check_init(get_arg("init"), kernel_trick, argname)
  if (is.matrix(init) && (anyNA(init) || any(!is.finite(init)))) {
    stopf("`%s` must not contain missing or infinite values.", argname("init"))
  }
  solver <- if ("solver" %in% names(args)) args$solver else
    learner_default(name, "solver") %||% "auto"
  if (length(solver) > 1L) solver <- solver[1]
  if (!is.character(solver) || is.na(solver) || !solver %in% c("auto", "M", "L")) {
    stopf("`%s` must be \"auto\", \"M\" or \"L\".", argname("solver"))
  }
  targets <- args$targets
  list(k = check_count(if (!is.null(targets) && !"k" %in% names(args)) 
                         max(ncol(as.matrix(targets)), 1L) else get_arg("k"), argname("k")),
       k_given = "k" %in% names(args),
       dim = opt_dim(get_arg("dim"), argname), mu = mu, lambda = lambda,
       init = init, max_iter = check_count(get_arg("max_iter"), argname("max_iter")),
       tol = check_number(get_arg("tol"), argname("tol"), positive = TRUE),
       solver = if (solver == "auto") "L" else solver,
       verbose = check_flag(get_arg("verbose"), argname("verbose")),
       targets = targets)
}

# Starting map of LMNN (dim x D) on the preprocessed inputs xs, or NULL for
# the D x D identity: the core's default start, which is never formed here
# (at p >> n it would be the largest object of the fit, and the core solves
# in the span of the centred points, where it is the r x r identity).
# "pca": the leading principal directions; at most min(n, D) of them exist,
# and with `dim` above that the start has only those rows (further rows
# would be zero: directions in which the training points do not vary, which
# the solvers do not use; at p >> n with the default `dim` = D they would
# make a D x D matrix).
lmnn_init <- function(init, init_mat, xs, dim, principal = FALSE) {
  D <- ncol(xs)
  if (!is.null(init_mat)) return(unname(init_mat))
  if (init == "auto") init <- if (dim < D) "pca" else "identity"
  # exact KPCA coordinates are principal components already: the PCA start
  # is the first `dim` axes
  if (init == "pca" && principal) return(diag(1, dim, D))
  switch(init,
         identity = if (dim == D) NULL else diag(1, dim, D),
         pca = {
           xc <- sweep(xs, 2L, colMeans(xs))
           nv <- min(dim, dim(xs))
           v <- svd(xc, nu = 0L, nv = nv)$v
           t(v[, seq_len(nv), drop = FALSE])
         },
         random = matrix(stats::rnorm(dim * D), dim, D) / sqrt(D))
}

# LMNN (reg = NULL: lambda tr(M)) and kernel-trick LMNN (reg = K).  The core
# solves in the span of the centred training points when it has fewer
# dimensions than z has columns (p >> n; kernel rows: their KPCA
# coordinates), and the map it returns acts on z.  `argname` names the
# options in messages, `coords` says what z is (for the linear learner's
# start), `gram` how the user gave the Gram matrix of the kernel trick (see
# lmnn_gram_error()).
fit_lmnn_map <- function(o, z, y, targets, ctx, reg = NULL, store_metric = FALSE,
                         argname = function(a) a, coords = NULL, gram = NULL,
                         principal = FALSE, score = NULL) {
  D <- ncol(z)
  lambda <- o$lambda
  if (is.function(lambda)) lambda <- lambda(z)
  if (is.null(lambda)) lambda <- if (is.null(reg)) 0 else klmnn_lambda_gram(reg)
  init_mat <- if (is.matrix(o$init)) o$init
  dim <- o$dim %||% if (!is.null(init_mat)) nrow(init_mat) else min(D, o$dim_cap %||% Inf)
  if (is.null(reg) && !is.null(init_mat)) {
    check_lmnn_init(init_mat, D, dim, argname,
                    coords %||% sprintf("`x` has %d columns", D))
  }
  # L0 NULL: the D x D identity, left to the core (a 0 x 0 matrix there)
  if (is.null(reg)) {
    L0 <- lmnn_init(o$init, init_mat, z, dim, principal)
  } else if (!is.null(init_mat)) {
    # a dim x n matrix of coefficients, checked as KNCA's
    L0 <- knca_init(init_mat, reg, o$dim, ctx)$U
  } else if (identical(o$init, "auto") && is.null(o$dim)) {
    # The identity on the kernel rows: LMNN is convex in M with a full-rank
    # map, so the start does not change the optimum, and from the identity
    # the core's low-rank mode applies.
    L0 <- NULL
  } else {
    L0 <- knca_init(if (identical(o$init, "auto")) "kpca" else o$init, reg, o$dim, ctx)$U
    dim <- nrow(L0)
  }
  zz <- z
  dimnames(zz) <- NULL
  # the held-out votes use the rows of the map kept below
  if (!is.null(score)) score$dim <- as.integer(dim)
  res <- tryCatch(
    core_lmnn_fit(zz, as.integer(y), targets, L0 %||% matrix(0, 0L, 0L), o$mu, lambda,
                  o$max_iter, o$tol, o$solver, 10L, 0.2, o$verbose, ctx, reg = reg,
                  metric = is.null(reg) && store_metric, target_k = o$k, score = score),
    kmaha_singular_error = function(e) {
      # the only matrix the core requires to be positive semi-definite here
      if (is.null(reg)) stop(e)
      lmnn_gram_error(e, reg, gram)
    })
  L <- res$L
  if (nrow(L) > dim) L <- L[seq_len(dim), , drop = FALSE]
  # The low-rank mode returns exact zero rows beyond the metric's rank; with
  # no `dim` asked for they carry nothing.
  if (is.null(o$dim) && is.null(init_mat)) {
    nz <- rowSums(L != 0) > 0
    if (any(nz) && !all(nz)) L <- L[nz, , drop = FALSE]
  }
  # (the identity's norm: sqrt(D))
  warn_collapsed_map(exp(log_norm(L) - if (is.null(L0)) 0.5 * log(D) else log_norm(L0)),
                     lambda, argname("lambda"))
  fun <- if (is.null(reg)) "lmnn" else "klmnn"
  if (!res$converged) {
    warnf("%s() did not converge (%s after %d %s); %s.",
          fun, res$message, as.integer(res$iterations),
          if (o$solver == "M") "iterations" else "evaluations", iteration_advice(argname))
  }
  list(map = L,
       convergence = list(iterations = as.integer(res$iterations),
                          objective = res$objective, trace = res$trace,
                          converged = res$converged, message = res$message),
       details = list(lambda = lambda, solver = o$solver,
                      impostors = res$active_pairs,
                      active_triples = res$active_triples,
                      M = if (is.null(reg) && store_metric) res$M),
       targets = res$targets, score = res$score)
}

# A starting map given as a matrix, for LMNN on D coordinates with `dim`
# rows: one column per coordinate, at most one row per coordinate (a map
# with more rows than its input has coordinates is the same metric with
# fewer rows), and as many rows as `dim`.  `coords` says what the
# coordinates are ("`x` has 4 columns").
check_lmnn_init <- function(init, D, dim, argname, coords) {
  arg <- argname("init")
  if (ncol(init) != D) {
    stopf("`%s` must have %d columns (one per feature), not %d.", arg, D, ncol(init))
  }
  if (nrow(init) > D) {
    stopf("`%s` has %d rows but %s: a map has at most one row per column of its input, so give `%s` at most %d rows.",
          arg, nrow(init), coords, arg, D)
  }
  if (nrow(init) != dim) {
    stopf("`%s` has %d rows but `%s` is %d; they must match.", arg, nrow(init),
          argname("dim"), dim)
  }
  invisible(init)
}
