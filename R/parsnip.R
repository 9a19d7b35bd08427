#' kmaha as a parsnip engine for `nearest_neighbor()`
#'
#' When \pkg{parsnip} is installed, loading kmaha registers the engine
#' `"kmaha"` for [parsnip::nearest_neighbor()] in classification mode: kNN
#' in a metric learned by [kmaha()] (the KPCA trick with any learner and
#' kernel choice), and in regression mode: k-NN regression in a metric
#' learned by MLKR (kmaha() with a numeric outcome, see [mlkr()]). It is registered as soon as both packages are loaded, in
#' either order.
#'
#' * `neighbors` is [kmaha()]'s `k`, the neighbours of the kNN vote (unset:
#'   kmaha()'s default). It is not a submodel parameter: at the default
#'   `kernel = "auto"` (and with `"cv"`) the kernel is chosen by
#'   cross-validated k-NN votes with this `k`, so a model fitted at one
#'   value of `neighbors` is not the model of another, and \pkg{tune} fits
#'   every value of a grid on its own. Each result of [tune::tune_grid()] is
#'   then the model `kmaha(x, y, k = neighbors, ...)` of the fold's analysis
#'   rows (with `seed` among the engine arguments, the same fit;
#'   `vignette("frameworks", package = "kmaha")` has a table of `neighbors`
#'   and `k` across the frameworks). With `seed` set, the fits of one fold
#'   at several values of `neighbors` share their cross-validation: the
#'   candidate-by-fold fits of the first are kept in the session and taken
#'   by the others, which then cost their screen and final fit (see Reuse
#'   in [score_candidates()]; the results are those of separate fits). For
#'   a fit whose kernel and learner were given (nothing chosen by
#'   cross-validation: the default `learner = "auto"` is chosen that way
#'   also with a kernel given), [parsnip::multi_predict()] predicts several
#'   values of `neighbors` from the one fit.
#' * `weight_func` and `dist_power`: kmaha's vote gives the `k` neighbours
#'   equal weights (parsnip's `weight_func = "rectangular"`) and measures
#'   Euclidean distance in the learned metric (`dist_power = 2`). Those
#'   values are accepted; any other is an error when the model is fitted,
#'   rather than being ignored: a kernel-weighted vote or another Minkowski
#'   distance is not what kmaha fits (tune `neighbors`, the `learner` and the
#'   kernel instead).
#' * Engine arguments (`set_engine("kmaha", ...)`) are passed to [kmaha()]:
#'   `learner` (`"auto"`, the default, `"nca"`, `"lmnn"`, `"dne"`, `"lfda"`,
#'   `"rca"`, `"mmc"`, `"itml"` or a function; tunable with
#'   [metric_learner()]), `kernel`, `learner_args`, `kernels`, `cv_folds`,
#'   `scale`, `rank`, `seed`, `landmarks`, ... One more is the engine's
#'   own: `sigma` (a number > 0): the kernel is then `rbf_kernel(sigma)`,
#'   replacing `kernel`, as in [step_kmaha()] and mlr3's learners; tunable
#'   with [dials::rbf_sigma()] on kmaha's scaled widths, 0.1 to 10 by
#'   default (`set_engine("kmaha", sigma = tune())`).
#' * Regression mode: the neighbours' responses are weighted by 1 / distance
#'   (parsnip's `weight_func = "inv"`, accepted, as is leaving it unset;
#'   any other is an error); predictions are `type = "numeric"` and
#'   `"raw"`; `learner` is `"auto"` or `"mlkr"`.
#' * Predictions: `type = "class"` and `"prob"` (the fractions of the `k`
#'   neighbours' votes, as `predict(type = "prob")` of [kmaha()] fits), and
#'   `"raw"` (`opts` go to `predict()` of the fit, e.g.
#'   `opts = list(type = "transform")`).
#'
#' Factor predictors are turned into indicator columns first (parsnip's
#' "traditional" encoding). The fitted kmaha model is
#' `extract_fit_engine(fit)`.
#'
#' `kmaha_parsnip_fit()` is the function parsnip calls to fit the engine
#' (`fit()` of the model specification): it checks `neighbors` (as `k`),
#' `weight_func` and `dist_power`, then returns [kmaha()]`(x, y, ...)`.
#'
#' @param x,y,... For `kmaha_parsnip_fit()`: the predictors, the outcome and
#'   further arguments of [kmaha()], as parsnip passes them (the model's
#'   `neighbors` as `k`).
#' @param weight_func,dist_power For `kmaha_parsnip_fit()`: the model's
#'   arguments of these names (`NULL` when not set): `"rectangular"` and 2,
#'   what kmaha does, or an error.
#' @param sigma For `kmaha_parsnip_fit()`: the engine's `sigma` (`NULL` when
#'   not set), the width of the RBF kernel that replaces `kernel`.
#' @return `kmaha_parsnip_fit()`: the [kmaha()] fit.
#' @name kmaha_parsnip
#' @aliases nearest_neighbor-kmaha
#' @seealso [step_kmaha()] for the learned embedding as a recipe step.
#' @examplesIf requireNamespace("parsnip", quietly = TRUE)
#' suppressPackageStartupMessages(library(parsnip))
#' spec <- nearest_neighbor(neighbors = 3) |>
#'   set_engine("kmaha", learner = "dne", kernel = rbf_kernel(1)) |>
#'   set_mode("classification")
#' fit <- fit(spec, Species ~ ., data = iris)
#' predict(fit, iris[c(1, 51, 101), ], type = "prob")
#'
#' # a distance-weighted vote is not what kmaha fits: an error, not ignored
#' weighted <- nearest_neighbor(neighbors = 3, weight_func = "triangular") |>
#'   set_engine("kmaha", learner = "dne") |>
#'   set_mode("classification")
#' msg <- tryCatch(fit(weighted, Species ~ ., data = iris), error = conditionMessage)
#' writeLines(strwrap(msg, 70))
#'
#' # regression mode: MLKR's metric, k-NN regression
#' reg <- nearest_neighbor(neighbors = 5) |>
#'   set_engine("kmaha", kernel = "linear") |>
#'   set_mode("regression")
#' fit_reg <- fit(reg, mpg ~ ., data = mtcars[-(1:3), ])
#' predict(fit_reg, mtcars[1:3, ])
NULL

#' @rdname kmaha_parsnip
#' @export
kmaha_parsnip_fit <- function(x, y, weight_func = NULL, dist_power = NULL, sigma = NULL, ...) {
  # the model's `neighbors`, which parsnip passes as kmaha()'s `k` (among
  # `...`, so that the fit's call shows its value): checked here, so that
  # an error names what the user set
  k <- list(...)[["k"]]
  if (!is.null(k)) {
    if (!is_count(k)) {
      stopf("The kmaha engine's `neighbors` must be a single whole number >= 1, not %s.",
            deparse1(k))
    }
    if (k > NROW(x) - 1L) {
      stopf("The kmaha engine's `neighbors` (%d) must be smaller than the number of training rows (%d).",
            as.integer(k), NROW(x))
    }
  }
  if (is.numeric(y) && !is.null(weight_func) && !identical(weight_func, "inv")) {
    # regression mode: kmaha's k-NN regression weights the neighbours by
    # 1 / distance (parsnip's "inv")
    stopf("The kmaha engine's regression weights the k neighbours by 1 / distance (weight_func = \"inv\"); weight_func = %s is not available. Leave `weight_func` unset, and tune `neighbors`, the learner or the kernel instead.",
          deparse1(weight_func))
  }
  if (!is.numeric(y) && !is.null(weight_func) && !identical(weight_func, "rectangular")) {
    stopf("The kmaha engine gives the k neighbours equal votes (weight_func = \"rectangular\"); weight_func = %s is not available. Leave `weight_func` unset, and tune `neighbors`, the learner or the kernel instead.",
          deparse1(weight_func))
  }
  if (!is.null(dist_power) && !(is.numeric(dist_power) && length(dist_power) == 1L &&
                                 isTRUE(dist_power == 2))) {
    stopf("The kmaha engine measures Euclidean distance in the learned metric (dist_power = 2); dist_power = %s is not available. Leave `dist_power` unset.",
          deparse1(dist_power))
  }
  if (is.null(sigma)) return(kmaha(x, y, ...))
  # the RBF kernel of that width, replacing `kernel` (as step_kmaha()'s and
  # mlr3's `sigma` do)
  args <- list(...)
  args$kernel <- rbf_kernel(sigma)
  call_by_name(kmaha, "kmaha", c(list(x = x, y = y), args))
}

# Register the engine with parsnip's model environment (once: parsnip
# refuses a second registration).
register_parsnip_engine <- function() {
  model <- "nearest_neighbor"
  if (parsnip_engine_registered()) return(invisible(FALSE))
  for (mode in c("classification", "regression")) {
    parsnip::set_model_engine(model, mode = mode, eng = "kmaha")
    parsnip::set_dependency(model, eng = "kmaha", pkg = "kmaha", mode = mode)
  }
  # The engine's arguments: parsnip's name, kmaha's, the dials function of
  # its tuning parameter, and whether one fit serves several values (none:
  # `neighbors` enters the kernel choice of kernel = "auto" and "cv", and
  # parsnip's declaration holds for every engine argument set, so tune
  # fits each value).  weight_func and dist_power reach
  # kmaha_parsnip_fit(), which accepts only what kmaha does (they are not
  # silently dropped).
  engine_args <- data.frame(
    parsnip = c("neighbors", "learner", "weight_func", "dist_power", "sigma"),
    original = c("k", "learner", "weight_func", "dist_power", "sigma"),
    pkg = c("dials", "kmaha", "dials", "dials", "dials"),
    fun = c("neighbors", "metric_learner", "weight_func", "dist_power", "rbf_sigma"),
    # neighbors is no submodel: with the default kernel and learner choice
    # (and k unset) the fitted metric depends on k, so tune must fit each
    # value (multi_predict() still predicts other k from one fit on request)
    has_submodel = c(FALSE, FALSE, FALSE, FALSE, FALSE), stringsAsFactors = FALSE)
  # sigma: kmaha's scaled width (rbf_kernel()), 0.1 to 10 on a log10 scale
  # as for step_kmaha(), not dials' default range for an inverse width
  ranges <- list(sigma = c(-1, 1))
  for (i in seq_len(nrow(engine_args))) {
    func <- list(pkg = engine_args$pkg[i], fun = engine_args$fun[i])
    func$range <- ranges[[engine_args$parsnip[i]]]
    parsnip::set_model_arg(model = model, eng = "kmaha", parsnip = engine_args$parsnip[i],
                           original = engine_args$original[i], func = func,
                           has_submodel = engine_args$has_submodel[i])
  }
  for (mode in c("classification", "regression")) {
    parsnip::set_fit(model = model, eng = "kmaha", mode = mode,
                     value = list(interface = "data.frame",
                                  protect = c("x", "y"),
                                  func = c(pkg = "kmaha", fun = "kmaha_parsnip_fit"),
                                  defaults = list()))
    parsnip::set_encoding(model = model, eng = "kmaha", mode = mode,
                          options = list(predictor_indicators = "traditional",
                                         compute_intercept = FALSE,
                                         remove_intercept = TRUE,
                                         allow_sparse_x = FALSE))
  }
  # predict() of the fit; `predict_type`: its `type` (NULL: the default)
  set_pred <- function(mode, type, predict_type = NULL, post = NULL) {
    args <- list(object = quote(object$fit), newdata = quote(new_data))
    if (!is.null(predict_type)) args$type <- predict_type
    parsnip::set_pred(model = model, eng = "kmaha", mode = mode, type = type,
                      value = list(pre = NULL, post = post,
                                   func = c(fun = "predict"), args = args))
  }
  # regression mode: the k-NN regression in the learned metric (kmaha()
  # with a numeric outcome)
  set_pred("regression", "numeric", "response")
  set_pred("regression", "raw")
  set_pred("classification", "class", "class")
  set_pred("classification", "prob", "prob", post = parsnip_prob_frame)
  set_pred("classification", "raw")
  invisible(TRUE)
}

parsnip_engine_registered <- function() {
  engines <- tryCatch(parsnip::get_from_env("nearest_neighbor"),
                      error = function(e) NULL)
  !is.null(engines) && any(engines$engine == "kmaha")
}

# Class probabilities as parsnip wants them: a data frame with one column
# per class level, named by the level.
parsnip_prob_frame <- function(x, object) {
  as.data.frame(x, optional = TRUE, stringsAsFactors = FALSE)
}

# multi_predict() for the engine: the predictions for several values of
# `neighbors` from one fit whose metric does not depend on k (a given
# kernel; tune does not call it, see has_submodel above).  parsnip prepares
# `new_data` (formula terms, indicator columns) in predict(type = "raw"),
# whose `opts` reach predict() of the kmaha fit.
#' @rawNamespace S3method(parsnip::multi_predict, "_kmaha_fit")
multi_predict._kmaha_fit <- function(object, new_data, type = NULL,
                                     neighbors = NULL, ...) {
  # a regression fit predicts numbers (parsnip's type "numeric")
  regression <- inherits(object$fit, "kmaha_regression")
  types <- if (regression) "numeric" else c("class", "prob")
  if (is.null(type)) type <- types[1]
  if (!is.character(type) || length(type) != 1L || !type %in% types) {
    stopf("multi_predict() for the kmaha engine: `type` must be %s for a %s model, not \"%s\".",
          paste0("\"", types, "\"", collapse = " or "),
          if (regression) "regression" else "classification", paste(type, collapse = ", "))
  }
  if (is.null(neighbors)) {
    neighbors <- rlang_eval_arg(object$spec$args$neighbors) %||% object$fit$k
  }
  if (!is.numeric(neighbors) || !length(neighbors) || !all(vapply(neighbors, is_count, NA))) {
    stopf("multi_predict() for the kmaha engine: `neighbors` must be whole numbers >= 1, not %s.",
          deparse1(neighbors))
  }
  # new data may have every training row among its neighbours
  n_train <- nrow(object$fit$embedding)
  if (any(neighbors > n_train)) {
    stopf("multi_predict() for the kmaha engine: `neighbors` (%d) must not exceed the number of training rows (%d).",
          as.integer(max(neighbors)), n_train)
  }
  neighbors <- sort(unique(as.integer(neighbors)))
  if (metric_uses_k(object$fit) && !all(neighbors == object$fit$k)) {
    chose <- cv_choices(object$fit)
    # the engine arguments that fix what was chosen
    give <- intersect(c("kernel", "learner"), chose)
    example <- c(kernel = "kernel = rbf_kernel(1)",
                 learner = if (regression) "learner = \"mlkr\"" else "learner = \"nca\"")[give]
    stopf("multi_predict(): this kmaha fit chose its %s by cross-validated %s of k = %d neighbours, so its metric is not the one of another `neighbors`; fit the model again with each value (tune_grid() does)%s%s.",
          and_list(chose), if (regression) "predictions" else "votes", object$fit$k,
          if (length(give)) sprintf(", or give the engine %s: set_engine(\"kmaha\", %s)",
                                    and_list(paste("a", give)), paste(example, collapse = ", ")) else "",
          if ("k" %in% chose) if (length(give)) ", and set `neighbors`" else ", or set `neighbors`" else "")
  }
  long <- do.call(rbind, lapply(neighbors, function(k) {
    p <- stats::predict(object, new_data = new_data, type = "raw",
                        opts = list(type = if (regression) "response" else type, k = k))
    p <- if (regression) {
      data.frame(.pred = unname(p))
    } else if (type == "class") {
      data.frame(.pred_class = p)
    } else {
      p <- as.data.frame(p, optional = TRUE)
      stats::setNames(p, paste0(".pred_", names(p)))
    }
    # (rep(): no rows of new data give no rows)
    cbind(data.frame(.row = seq_len(nrow(p)), neighbors = rep(k, nrow(p))), p)
  }))
  long <- long[order(long$.row, long$neighbors), , drop = FALSE]
  rows <- split(tibble::as_tibble(long[, -1L, drop = FALSE]), long$.row)
  tibble::tibble(.pred = unname(rows))
}

# The value of a model-spec argument (a quosure or a plain value), or NULL.
rlang_eval_arg <- function(arg) {
  if (is.null(arg)) return(NULL)
  value <- if (inherits(arg, "quosure")) rlang::eval_tidy(arg) else arg
  if (is.numeric(value)) value else NULL
}
