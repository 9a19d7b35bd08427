#' Metric learning for kernel regression (MLKR)
#'
#' Learns a linear map \eqn{A} (d x D) for regression: the one under which a
#' Gaussian-kernel regression of each training point on all the others
#' (leave-one-out Nadaraya-Watson) has the smallest squared error
#' (Weinberger and Tesauro, 2007):
#' \deqn{f(A) = \sum_i (y_i - \hat y_i)^2 + \lambda \|A\|_F^2,}
#' \deqn{\hat y_i = \frac{\sum_{j \ne i} k_{ij} y_j}{\sum_{j \ne i} k_{ij}},
#'   \quad k_{ij} = \exp(-\|A x_i - A x_j\|^2).}
#' The response enters standardized (centred, divided by its standard
#' deviation): the best map does not depend on the units of `y`, `lambda`
#' and `tol` do not either, and the objective of the map \eqn{A = 0} (every
#' prediction the mean) is about \eqn{n - 1}. The objective and its gradient
#' are computed in the package's C++ core, as NCA's are ([nca()]): matrix
#' products in blocks of rows (memory linear in the number of points), a
#' numerically safe softmax, `num_threads` threads; the minimiser is R's
#' L-BFGS-B.
#'
#' **Start.** `init = "auto"` starts from the identity (a `dim` < D: the
#' leading principal directions) multiplied by the factor that makes the
#' median squared distance between the mapped training points 1 (over the
#' pairs of at most 1000 evenly spaced rows; `convergence$start_scale`).
#' Unscaled, standardized inputs in D dimensions are about \eqn{2D} apart
#' (squared), so every kernel weight but the nearest neighbour's is
#' negligible (\eqn{e^{-2D}}): the start would be a 1-nearest-neighbour
#' regression, where the objective is nearly flat. From the scaled start
#' each point is predicted by a smooth average over many neighbours, and the
#' fit sharpens the kernel along the informative directions. In
#' `bench/studies/mlkr-defaults.R`, on Friedman 1 with 40 noise columns
#' (D = 50) the unscaled identity stalled at an objective of 52 (held-out
#' RMSE 5.0, worse than Euclidean k-NN's 4.3) against 3.2 from the scaled
#' start (RMSE 3.3 with the default predictor); on the three sets with
#' D <= 13 the unscaled identity ended up to 4% lower in objective and up
#' to 6% lower in the held-out RMSE of MLKR's kernel regression. `"identity"`, `"pca"` and `"random"` (as for
#' [nca()]) and a matrix are used as given, unscaled.
#'
#' **More columns than rows.** The objective depends on \eqn{A} only through
#' the differences of the training points, so when they span fewer than D
#' dimensions (D >= n - 1, or collinear columns) the fit runs on the
#' coordinates of the points in that span, as [nca()]'s does, and the map
#' is carried back to the inputs: it has at most as many rows as the span
#' has dimensions (the same metric as any map with more rows) and no
#' component outside the span, which changes no distance between training
#' points.
#'
#' **Prediction.** The fitted model is a regression model (class
#' `"kmaha_regression"`, see [kmaha-model]): [predict()][predict.kmaha_regression]
#' gives the weighted mean of the responses of the `k` nearest training
#' points in the learned metric. The default, `k = 10` with `weights =
#' "distance"` (weights 1 / distance), is a k-NN regression that uses the
#' learned metric's shape; `"uniform"` is the plain mean of the `k`
#' neighbours. `"kernel"` weights them by \eqn{\exp(-\|A x - A x_j\|^2)},
#' the kernel the map was fitted for: with `k` = all training points this
#' is MLKR's own kernel regression, and the leave-one-out error of
#' [fitted()][kmaha-model] is then the objective's. On held-out data
#' (`bench/studies/mlkr-defaults.R`, results in
#' `bench/studies/results/mlkr_defaults.csv`: BostonHousing, two
#' Friedman simulations and Friedman 1 with 40 noise columns, 5 random
#' splits each) the default's RMSE was within 4% of the best of the
#' predictors tried (k = 5, 10, 20; the three weights) on every set, and
#' 8-13% below MLKR's own kernel regression on three of the four (2% above
#' it on Friedman 2); every predictor in the metric learned from the
#' automatic start beat Euclidean k-NN.
#'
#' **Fit statistics.** `print()`, `summary()` and [glance()][glance.kmaha_regression]
#' report the leave-one-out RMSE and \eqn{R^2} of the model's k-NN
#' regression on the training points: each point predicted from the others,
#' but in a metric learned from all of them, hence optimistic; estimate the
#' error on held-out data.
#'
#' @param x A numeric matrix or data frame of inputs, one row per
#'   observation (see [nca()] for the columns accepted).
#' @param y The numeric response, one value per row (finite, not constant).
#' @param dim Output dimension d: `NULL` (the number of input columns D, or
#'   the dimension of the span of the training points when that is smaller)
#'   or a whole number between 1 and D.
#' @param init Starting map: `"auto"` (see Start), `"identity"`, `"pca"`,
#'   `"random"` or a numeric `dim` x D matrix.
#' @param lambda Non-negative weight of the penalty \eqn{\|A\|_F^2}.
#' @param max_iter Maximum number of L-BFGS-B iterations.
#' @param tol Convergence tolerance: the relative reduction of the objective
#'   below which L-BFGS-B stops (as for [nca()]).
#' @param scale If `TRUE`, centre and scale the columns of `x` first.
#' @param k Number of neighbours of the model's k-NN regression (stored in
#'   the model; [predict()][predict.kmaha_regression] may override it), at
#'   most n - 1 (the default 10 becomes n - 1 for fewer than 11 rows).
#' @param weights The weights of the `k` neighbours: `"distance"`,
#'   `"uniform"` or `"kernel"` (see Prediction).
#' @param verbose If `TRUE`, print the objective and gradient norm at each
#'   evaluation.
#' @param num_threads Number of threads: `NULL` uses the package setting
#'   (see [kmaha_threads()]).
#' @param ... For the formula method, arguments passed to the default method.
#' @return An object of class `c("kmaha_mlkr", "kmaha_regression",
#'   "kmaha_linear", "kmaha_model")`: the map `L` (d x D, acting on the
#'   scaled inputs), the scaling `prep`, the training `embedding`, the
#'   response `y` (numeric), `k`, `weights`, `loo_rmse`, `loo_r2`, the
#'   settings and `convergence` (as for [nca()], with `start_scale`, the
#'   factor of the automatic start, and `span_rank`, the dimension of the
#'   span the fit ran in, 0 when it ran on all columns). See [kmaha-model].
#' @references Weinberger, K. Q. and Tesauro, G. (2007). Metric learning for
#'   kernel regression. *Proceedings of the Eleventh International
#'   Conference on Artificial Intelligence and Statistics (AISTATS)*, PMLR 2,
#'   612-619.
#' @examples
#' train <- mtcars[-(1:5), ]
#' fit <- mlkr(mpg ~ ., data = train)
#' fit
#' # new cars
#' cbind(observed = mtcars$mpg[1:5], predicted = predict(fit, mtcars[1:5, ]))
#' predict(fit, mtcars[1:5, ], type = "transform")[, 1:3]
#' # leave-one-out predictions of the training cars
#' head(cbind(observed = train$mpg, fitted = fitted(fit)))
#' @export
mlkr <- function(x, ...) UseMethod("mlkr")

#' @rdname mlkr
#' @export
mlkr.default <- function(x, y, dim = NULL, init = "auto", lambda = 0,
                         max_iter = 500, tol = 1e-5, scale = TRUE, k = 10,
                         weights = c("distance", "uniform", "kernel"),
                         verbose = FALSE, num_threads = NULL, ...) {
  check_dots_empty("mlkr()", ...)
  x <- check_x(x, "x")
  if (missing(y)) stopf("`y` is missing: supply the numeric response.")
  y <- check_response(y, nrow(x), "y")
  ctx <- kmaha_context(num_threads)
  spec <- public_spec("mlkr", list(dim = dim, init = init, lambda = lambda,
                                   max_iter = max_iter, tol = tol, verbose = verbose))
  scale <- check_flag(scale, "scale")
  weights <- check_weights(weights)
  k_default <- missing(k)
  k <- check_count(k, "k")
  if (k_default) k <- min(k, nrow(x) - 1L)
  if (k > nrow(x) - 1L) {
    stopf("`k` (%d) must be below the number of rows (%d): the fitted values leave each point out of its own neighbours.",
          k, nrow(x))
  }
  fit <- fit_model(x, y, feature_identity(), spec, ctx,
                   scale = if (scale) TRUE else NA, k = k, weights = weights,
                   class = "kmaha_mlkr", call = model_call(match.call(), "mlkr"))
  fit$settings <- c(learner_settings(spec, fit, ctx, scale),
                    list(k = k, weights = weights, num_threads = ctx$threads))
  fit
}

#' @rdname mlkr
#' @param formula A formula `response ~ predictors`.
#' @param data A data frame holding the variables of `formula`.
#' @param subset Optional expression selecting rows of `data`.
#' @param na.action How to treat missing values (default [stats::na.omit()]).
#' @export
mlkr.formula <- function(formula, data, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), mlkr.default, list(...), "mlkr")
}

# The record of MLKR (see new_learner()): a regression learner, fitted by
# L-BFGS as NCA (objective evaluations), scored on folds at score_tol, its
# map capped for kernel choice as NCA's; `k` and `weights` of mlkr() are its
# model's k-NN regression, not options of the learner.
learner_mlkr <- function() list(
  name = "mlkr", label = "MLKR", fun = "mlkr.default", task = "regression",
  description = "metric learning for kernel regression",
  options = function(args, argname) mlkr_opts(args, argname),
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    fit_mlkr_map(spec$opts, z, y, ctx, lambda_arg = spec$argname("lambda"),
                 principal = principal, score = score, argname = spec$argname)
  },
  choice_dim = function(p) max(mlkr_choice_dim, p),
  fold_tol = TRUE,
  # (mlkr() adds its model's k, weights and threads)
  settings = function(fit, spec, ctx, scale) {
    o <- spec$opts
    list(dim = nrow(fit$L), init = fit$init, lambda = o$lambda, max_iter = o$max_iter,
         tol = o$tol, scale = scale)
  },
  convergence = list(unit = "objective evaluations"),
  objective = c(
    short = "leave-one-out squared error of the kernel regression, standardized response",
    long = "sum over the training points of the squared error of their leave-one-out Gaussian-kernel regression (Nadaraya-Watson) on the others, the response standardized (about n - 1 when every prediction is the mean), plus lambda * ||A||^2; lower is better"),
  caret = list(kpca = "kmlkr"),
  model_options = c("k", "weights"))

# A numeric response matching n rows: finite, not constant, at least 3 rows
# (leave-one-out needs two others).
check_response <- function(y, n, arg = "y") {
  if (is.null(y)) stopf("`%s` is missing: supply the numeric response.", arg)
  if (is.factor(y) || is.character(y) || is.logical(y)) {
    stopf("`%s` is %s, but MLKR is for numeric responses (regression); for class labels use nca() or lmnn().",
          arg, if (is.factor(y)) "a factor" else if (is.character(y)) "character" else "logical")
  }
  if (is.matrix(y) || is.data.frame(y)) {
    stopf("`%s` must be a numeric vector (one response per row), not a %s.", arg,
          class(y)[1])
  }
  if (inherits(y, c("Date", "POSIXt", "difftime"))) {
    # (a date or a duration has a unit the fit would silently drop)
    stopf("`%s` must be a numeric vector, not %s: regress a number in the unit you mean, e.g. as.numeric(%s) (days since 1970-01-01 for a Date) or as.numeric(%s, units = \"hours\") for a difftime.",
          arg, class(y)[1], arg, arg)
  }
  if (!is.numeric(y)) {
    stopf("`%s` must be a numeric vector, not %s.", arg, class(y)[1])
  }
  if (length(y) != n) {
    stopf("`%s` has length %d but `x` has %d rows; they must match.", arg, length(y), n)
  }
  if (anyNA(y)) stopf("`%s` contains missing values (NA/NaN). Remove those rows first.", arg)
  if (any(is.infinite(y))) stopf("`%s` contains infinite values. Remove those rows first.", arg)
  if (n < 3L) {
    stopf("MLKR needs at least 3 rows (each point is predicted from the others), not %d.", n)
  }
  y <- as.double(y)
  if (!(stats::sd(y) > 1e-12 * max(abs(y)))) {
    stopf("`%s` is constant: there is no variation to regress on.", arg)
  }
  attributes(y) <- NULL
  y
}

# `weights` of the k-NN regression: one of the three, with a message naming
# them.
check_weights <- function(weights, arg = "weights") {
  opts <- c("distance", "uniform", "kernel")
  if (identical(weights, opts)) return(opts[1])
  if (!is.character(weights) || length(weights) != 1L || is.na(weights) ||
      !weights %in% opts) {
    stopf("`%s` must be \"distance\", \"uniform\" or \"kernel\".", arg)
  }
  weights
}

# MLKR's options (learner_spec()), with the defaults of mlkr().
mlkr_opts <- function(args, argname) {
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default("mlkr", a)
  init <- check_init(get_arg("init"), FALSE, argname)
  list(dim = opt_dim(get_arg("dim"), argname), init = init,
       lambda = check_number(get_arg("lambda"), argname("lambda"), nonneg = TRUE),
       max_iter = check_count(get_arg("max_iter"), argname("max_iter")),
       tol = check_number(get_arg("tol"), argname("tol"), positive = TRUE),
       verbose = check_flag(get_arg("verbose"), argname("verbose")))
}

# Starting map for MLKR on the (already scaled) coordinates z: list(A (a
# 0 x 0 matrix for the full identity, which the core never forms: it starts
# from the identity on the span of the points), scale (the core multiplies A
# by its automatic factor), label).  `dim`: the rows asked for, or NULL
# (all D, or the cap `dim_cap` of kernel choice's candidates); a start with
# more rows than the span has dimensions is reduced in the core to the same
# metric on the span, so the principal and random starts take at most
# n - 1 rows.
mlkr_init <- function(init, z, dim, dim_cap = NULL, principal = FALSE) {
  D <- ncol(z)
  d <- dim %||% min(D, dim_cap %||% Inf)
  if (is.numeric(init) && is.matrix(init)) {
    if (nrow(init) != d || ncol(init) != D) {
      stopf("`init` must be a %d x %d matrix (dim x number of input columns), not %d x %d.",
            d, D, nrow(init), ncol(init))
    }
    if (anyNA(init) || any(!is.finite(init))) stopf("`init` must contain finite numbers only.")
    if (all(init == 0)) stopf("`init` must not be all zero (the MLKR gradient vanishes there).")
    storage.mode(init) <- "double"
    return(list(A = unname(init), scale = FALSE, label = "matrix"))
  }
  auto <- identical(init, "auto")
  if (auto) init <- if (d == D) "identity" else "pca"
  d_span <- min(d, nrow(z) - 1L)
  A <- switch(init,
    identity = if (d == D) matrix(0, 0L, 0L) else diag(1, d, D),
    pca = if (principal) diag(1, d, D) else pca_directions(z, d_span),
    random = matrix(stats::rnorm(d_span * D), d_span, D) / sqrt(D))
  list(A = A, scale = auto, label = if (auto) paste("scaled", init) else init)
}

# MLKR on coordinates z (n x r) with the numeric response y: the map (d x
# r), its convergence record and details.  score: NULL, or a fold's
# held-out coordinates to predict in the learned metric, list(x, k,
# weights), whose predictions come back as `score` (fit_pipeline()).
fit_mlkr_map <- function(o, z, y, ctx, lambda_arg = "lambda", principal = FALSE,
                         score = NULL, argname = function(a) a) {
  if (!is.numeric(y)) {
    stopf("MLKR is for numeric responses (regression), but `y` holds classes; for class labels use NCA, LMNN or DNE.")
  }
  start <- mlkr_init(o$init, z, o$dim, o$dim_cap, principal = principal)
  zz <- z
  dimnames(zz) <- NULL
  res <- core_mlkr_fit(zz, y, start$A, o$lambda, o$max_iter, o$tol, o$verbose,
                       scale_start = start$scale, span = TRUE, ctx = ctx, score = score)
  if (isTRUE(res$flat_start)) {
    warnf("mlkr() could not move from its start: the objective is flat there (%s), so the gradient vanishes; %s.",
          if (identical(start$label, "matrix") || !start$scale)
            "the mapped points are so far apart that each is predicted by its nearest neighbour alone, or so close that every prediction is the mean"
          else "all points coincide under the start map",
          if (!start$scale) "use init = \"auto\", which scales the start to the data, or scale `init`"
          else "check for constant or duplicated inputs")
  } else if (!res$converged) {
    if (identical(res$stop, "iteration limit")) {
      warnf("mlkr() did not converge within `%s` = %d iterations (%d evaluations); %s.",
            argname("max_iter"), o$max_iter, as.integer(res$iterations),
            iteration_advice(argname))
    } else {
      warnf("mlkr() stopped after %d evaluations: the line search found no lower objective, yet the gradient is not small (norm %.3g), so the map may not be a minimum; try `scale = TRUE`, another `init` or a small `lambda`.",
            as.integer(res$iterations), res$gradient_norm)
    }
  }
  A0_norm <- if (length(start$A)) log_norm(start$A) else 0.5 * log(min(ncol(z), nrow(z) - 1))
  warn_collapsed_map(exp(log_norm(res$map) - A0_norm - log(res$start_scale)), o$lambda,
                     lambda_arg)
  list(map = res$map,
       convergence = list(iterations = res$iterations, objective = res$value,
                          trace = res$trace, converged = res$converged, stop = res$stop,
                          gradient_norm = res$gradient_norm,
                          start_scale = res$start_scale, span_rank = res$span_rank,
                          message = res$message, isa = res$isa),
       details = list(init = start$label),
       score = res$score)
}
