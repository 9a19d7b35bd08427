#' kmaha as a parsnip engine for `nearest_neighbor()`
#'
#' When \pkg{parsnip} is installed, loading kmaha registers the engine
#' `"kmaha"` for [parsnip::nearest_neighbor()] in classification mode: kNN
#' in a metric learned by [kmaha()] (the KPCA trick with any learner and
#' kernel choice). It is registered as soon as both packages are loaded, in
#' either order.
#'
#' * `neighbors` is [kmaha()]'s `k`, the neighbours of the kNN vote (1 when
#'   unset, kmaha's default). It can be tuned cheaply: the learned metric
#'   does not depend on it, so \pkg{tune} fits one model for all values of
#'   `neighbors` and predicts each from it ([parsnip::multi_predict()]).
#'   `weight_func` and `dist_power` do not apply.
#' * Engine arguments (`set_engine("kmaha", ...)`) are passed to [kmaha()]:
#'   `learner` (`"nca"`, `"lmnn"`, `"dne"` or a function; tunable with
#'   [metric_learner()]), `kernel`, `learner_args`, `kernels`, `cv_folds`,
#'   `scale`, `rank`, `seed`, `landmarks`, ...
#' * Predictions: `type = "class"` and `"prob"` (the fractions of the `k`
#'   neighbours' votes, as `predict(type = "prob")` of [kmaha()] fits), and
#'   `"raw"` (`opts` go to `predict()` of the fit, e.g.
#'   `opts = list(type = "transform")`).
#'
#' Factor predictors are turned into indicator columns first (parsnip's
#' "traditional" encoding). The fitted kmaha model is
#' `extract_fit_engine(fit)`.
#'
#' @name kmaha_parsnip
#' @aliases nearest_neighbor-kmaha
#' @seealso [step_kmaha()] for the learned embedding as a recipe step.
#' @examplesIf requireNamespace("parsnip", quietly = TRUE)
#' library(parsnip)
#' spec <- nearest_neighbor(neighbors = 3) |>
#'   set_engine("kmaha", learner = "dne", kernel = rbf_kernel(1)) |>
#'   set_mode("classification")
#' fit <- fit(spec, Species ~ ., data = iris)
#' predict(fit, iris[c(1, 51, 101), ], type = "prob")
NULL

# Register the engine with parsnip's model environment (once: parsnip
# refuses a second registration).
register_parsnip_engine <- function() {
  model <- "nearest_neighbor"
  if (parsnip_engine_registered()) return(invisible(FALSE))
  parsnip::set_model_engine(model, mode = "classification", eng = "kmaha")
  parsnip::set_dependency(model, eng = "kmaha", pkg = "kmaha",
                          mode = "classification")
  parsnip::set_model_arg(model = model, eng = "kmaha", parsnip = "neighbors",
                         original = "k",
                         func = list(pkg = "dials", fun = "neighbors"),
                         has_submodel = TRUE)
  parsnip::set_model_arg(model = model, eng = "kmaha", parsnip = "learner",
                         original = "learner",
                         func = list(pkg = "kmaha", fun = "metric_learner"),
                         has_submodel = FALSE)
  parsnip::set_fit(model = model, eng = "kmaha", mode = "classification",
                   value = list(interface = "data.frame",
                                protect = c("x", "y"),
                                func = c(pkg = "kmaha", fun = "kmaha"),
                                defaults = list()))
  parsnip::set_encoding(model = model, eng = "kmaha", mode = "classification",
                        options = list(predictor_indicators = "traditional",
                                       compute_intercept = FALSE,
                                       remove_intercept = TRUE,
                                       allow_sparse_x = FALSE))
  parsnip::set_pred(model = model, eng = "kmaha", mode = "classification",
                    type = "class",
                    value = list(pre = NULL, post = NULL,
                                 func = c(fun = "predict"),
                                 args = list(object = quote(object$fit),
                                             newdata = quote(new_data),
                                             type = "class")))
  parsnip::set_pred(model = model, eng = "kmaha", mode = "classification",
                    type = "prob",
                    value = list(pre = NULL, post = parsnip_prob_frame,
                                 func = c(fun = "predict"),
                                 args = list(object = quote(object$fit),
                                             newdata = quote(new_data),
                                             type = "prob")))
  parsnip::set_pred(model = model, eng = "kmaha", mode = "classification",
                    type = "raw",
                    value = list(pre = NULL, post = NULL,
                                 func = c(fun = "predict"),
                                 args = list(object = quote(object$fit),
                                             newdata = quote(new_data))))
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
# `neighbors` from one fit (tune's submodels).  parsnip prepares `new_data`
# (formula terms, indicator columns) in predict(type = "raw"), whose `opts`
# reach predict() of the kmaha fit.
#' @rawNamespace S3method(parsnip::multi_predict, "_kmaha_fit")
multi_predict._kmaha_fit <- function(object, new_data, type = NULL,
                                     neighbors = NULL, ...) {
  if (is.null(type)) type <- "class"
  if (!type %in% c("class", "prob")) {
    stopf("multi_predict() for the kmaha engine: `type` must be \"class\" or \"prob\", not \"%s\".",
          paste(type, collapse = ", "))
  }
  if (is.null(neighbors)) {
    neighbors <- rlang_eval_arg(object$spec$args$neighbors) %||% 1L
  }
  neighbors <- sort(unique(as.integer(neighbors)))
  long <- do.call(rbind, lapply(neighbors, function(k) {
    p <- stats::predict(object, new_data = new_data, type = "raw",
                        opts = list(type = type, k = k))
    p <- if (type == "class") {
      data.frame(.pred_class = p)
    } else {
      p <- as.data.frame(p, optional = TRUE)
      stats::setNames(p, paste0(".pred_", names(p)))
    }
    cbind(data.frame(.row = seq_len(nrow(p)), neighbors = k), p)
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
