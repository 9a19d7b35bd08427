#' kmaha as an mlr3 learner: `lrn("classif.kmaha")`
#'
#' When \pkg{mlr3} is installed, loading kmaha adds the classification
#' learner `"classif.kmaha"` to mlr3's dictionary of learners (as soon as
#' both packages are loaded, in either order): kNN in a metric learned by
#' [kmaha()], the KPCA trick with any learner and kernel choice.
#'
#' For regression tasks the learner `"regr.kmaha"` is added too: kmaha()
#' with a numeric response (MLKR, see Regression in [kmaha()]), predict
#' type `"response"` (the k-NN regression in the learned metric), the same
#' parameters (`learner`: `"auto"` or `"mlkr"`).
#'
#' Predict types `"response"` and `"prob"` (the fractions of the `k`
#' neighbours' votes; the response is kmaha's own vote, not the most
#' probable class with ties broken at random). Features must be numeric,
#' integer or logical (encode factors first, e.g. with \pkg{mlr3pipelines}).
#'
#' Parameters (see [kmaha()] for each; the defaults are kmaha()'s):
#' * `k` (integer; unset: chosen by kmaha()'s cross-validation, see
#'   [kmaha()]): neighbours of the kNN vote (LMNN's and DNE's target
#'   neighbours are `learner_args$k`; `vignette("frameworks", package =
#'   "kmaha")` has a table of `k` and `neighbors` across the frameworks).
#' * `learner`: `"auto"` (default: NCA, LMNN and DNE scored, see [kmaha()]),
#'   `"nca"`, `"lmnn"`, `"dne"`, `"lfda"`, `"rca"`, `"mmc"`, `"itml"` or a
#'   learner function.
#' * `kernel` (default `"auto"`): a kernel object or a kernel choice
#'   (`"auto"`, `"cv"`, `"align"`, `"align_lp"`, `"unweighted"`,
#'   `"linear"`).
#' * `sigma` (a number > 0, unset by default): when set, the kernel is
#'   `rbf_kernel(sigma)`, replacing `kernel` (for tuning the bandwidth).
#' * `kernels` (default [paper_kernels()]): the base kernels of `"auto"`,
#'   `"cv"`, `"align"` and `"unweighted"`.
#' * `num_threads` (tagged `"threads"`, so [mlr3::set_threads()] sets it):
#'   threads of the compiled code; unset, kmaha's default.
#' * `learner_args`, `neighbors`, `cv_folds`, `cv_strategy`, `scale`,
#'   `rank`, `tol`, `seed`, `landmarks`, `landmark_method`: passed to
#'   [kmaha()].
#'
#' **Tuning `k` without refitting.** The learned metric does not depend on
#' `k` unless kmaha() chooses by cross-validation, whose fold scores use
#' `k`: the kernel (`kernel = "auto"`, the default, or `"cv"`) or the
#' learner (`learner = "auto"`, the default, also with a kernel given).
#' mlr3 itself trains once per configuration (\pkg{mlr3tuning} tunes every
#' configuration by its own resampling), so the learner remembers its last
#' fits: training on the same rows with the same parameters apart from `k`
#' reuses a fit whose metric does not depend on `k`, and only the kNN vote
#' is redone.
#' Tuning `k` over 4 values with 3-fold cross-validation thus fits 3
#' models, not 12, with a named learner and a fixed kernel or `sigma`; a
#' kernel or learner chosen by cross-validation is chosen again for every
#' `k`, so that every result is the model `kmaha(x, y, k = k, ...)` of the
#' training rows. For the same reason, predicting with another `k` than the
#' model was trained with is an error for such a model (train it again). The memory belongs to the
#' learner object (and its clones), keeps the most recently used fits up
#' to `getOption("kmaha.mlr3_cache", 256)` MB in all, and lives in the R
#' session (parallel workers keep their own); set the option to 0 to fit
#' anew every time. A reused fit
#' repeats the random draws of the first one (cross-validation folds,
#' landmarks), which the values of `k` then share.
#'
#' **Tuning with \pkg{mlr3tuning}.** Give ranges with `to_tune(lower,
#' upper)` (as in the example of [mlr3tuning::tune()]), so that `k` and
#' `sigma` stay numbers in `$result`; `to_tune(c(1, 3, 5))` tunes over
#' levels, which mlr3tuning records as character columns of the search
#' space (the values reaching the learner are numbers).
#'
#' The trained model (`learner$model`) is the [kmaha()] fit (with its `k`
#' and training accuracy set to the learner's `k`).
#'
#' @name mlr_learners_classif.kmaha
#' @seealso [kmaha()]; the tidymodels adapters [kmaha_parsnip] and
#'   [step_kmaha()]; caret's [kmaha_caret()].
#' @examplesIf requireNamespace("mlr3", quietly = TRUE)
#' suppressPackageStartupMessages(library(mlr3))
#' learner <- lrn("classif.kmaha", learner = "dne", kernel = rbf_kernel(1),
#'                k = 3, predict_type = "prob")
#' task <- tsk("iris")
#' learner$train(task, row_ids = seq(1, 150, by = 2))
#' learner$predict(task, row_ids = seq(2, 150, by = 20))
#' @examplesIf requireNamespace("mlr3tuning", quietly = TRUE)
#' # tune k and the RBF bandwidth on a 2 x 2 grid: 4 fits (2 sigmas x 2
#' # folds) score the 4 combinations on every fold
#' suppressPackageStartupMessages(library(mlr3tuning))
#' learner <- lrn("classif.kmaha", learner = "dne",
#'                k = to_tune(1, 5), sigma = to_tune(0.5, 2))
#' tuned <- tune(tnr("grid_search", resolution = 2), tsk("iris"), learner,
#'               rsmp("cv", folds = 2), msr("classif.acc"))
#' tuned$result[, c("k", "sigma", "classif.acc")]
NULL

# R6 methods refer to the object as `self`, its private part as `private` and
# to the parent class as `super`.
utils::globalVariables(c("self", "super", "private"))

# The R6 class, built when mlr3 is loaded (it inherits from
# mlr3::LearnerClassif, which exists only then).
# The parameters of classif.kmaha and regr.kmaha (kmaha()'s arguments).
mlr3_param_set <- function() {
  paradox::ps(
    k = paradox::p_int(lower = 1L, tags = c("train", "predict")),
    learner = paradox::p_uty(default = "auto", tags = "train",
                             custom_check = mlr3_check_learner),
    kernel = paradox::p_uty(default = "auto", tags = "train"),
    # sigma > 0: a positive bound with no tolerance (the default
    # tolerance would quietly turn 0 into the bound; a zero tolerance
    # needs a finite upper bound).
    sigma = paradox::p_dbl(lower = 1e-300, upper = 1e300, tolerance = 0,
                           tags = "train"),
    learner_args = paradox::p_uty(default = list(), tags = "train"),
    neighbors = paradox::p_fct(c("feature", "input"), default = "feature",
                               tags = "train"),
    kernels = paradox::p_uty(default = paper_kernels(), tags = "train"),
    cv_folds = paradox::p_int(lower = 2L, default = 5L, tags = "train"),
    cv_strategy = paradox::p_fct(c("fast", "exhaustive"), default = "fast",
                                 tags = "train"),
    scale = paradox::p_lgl(default = TRUE, tags = "train"),
    rank = paradox::p_int(lower = 1L, special_vals = list(NULL),
                          default = NULL, tags = "train"),
    tol = paradox::p_dbl(lower = 0, default = 1e-8, tags = "train"),
    seed = paradox::p_int(special_vals = list(NULL), default = NULL,
                          tags = "train"),
    landmarks = paradox::p_uty(default = NULL, tags = "train"),
    landmark_method = paradox::p_fct(c("random", "kmeans++"),
                                     default = "random", tags = "train"),
    num_threads = paradox::p_int(lower = 1L, special_vals = list(NULL),
                                 default = NULL, tags = c("train", "threads"))
  )
}

mlr3_learner_class <- function() {
  R6::R6Class("LearnerClassifKmaha",
    inherit = mlr3::LearnerClassif,
    public = list(
      initialize = function() {
        ps <- mlr3_param_set()
        super$initialize(
          id = "classif.kmaha",
          param_set = ps,
          feature_types = c("logical", "integer", "numeric"),
          predict_types = c("response", "prob"),
          properties = c("twoclass", "multiclass"),
          packages = "kmaha",
          label = "Kernelized Mahalanobis Distance kNN",
          man = "kmaha::mlr_learners_classif.kmaha")
        private$.uid <- basename(tempfile("kmaha_mlr3_"))
      }
    ),
    private = list(
      .uid = NULL,
      .train = function(task) mlr3_train(self, private$.uid, task),
      .predict = function(task) {
        k <- mlr3_predict_k(self, "classif.kmaha")
        x <- as.data.frame(task$data(cols = self$state$feature_names))
        response <- stats::predict(self$model, x, type = "class", k = k)
        if (self$predict_type == "prob") {
          prob <- stats::predict(self$model, x, type = "prob", k = k)
          list(response = as.character(response), prob = prob)
        } else {
          list(response = as.character(response))
        }
      }
    )
  )
}

# The regression learner regr.kmaha (kmaha() with a numeric response: MLKR,
# see R/regression.R), built when mlr3 is loaded.
mlr3_regr_learner_class <- function() {
  R6::R6Class("LearnerRegrKmaha",
    inherit = mlr3::LearnerRegr,
    public = list(
      initialize = function() {
        super$initialize(
          id = "regr.kmaha",
          param_set = mlr3_param_set(),
          feature_types = c("logical", "integer", "numeric"),
          predict_types = "response",
          packages = "kmaha",
          label = "Metric Learning for Kernel Regression kNN",
          man = "kmaha::mlr_learners_classif.kmaha")
        private$.uid <- basename(tempfile("kmaha_mlr3_"))
      }
    ),
    private = list(
      .uid = NULL,
      .train = function(task) mlr3_train(self, private$.uid, task),
      .predict = function(task) {
        k <- mlr3_predict_k(self, "regr.kmaha")
        x <- as.data.frame(task$data(cols = self$state$feature_names))
        list(response = unname(stats::predict(self$model, x, k = k)))
      }
    )
  )
}

# The training of classif.kmaha and regr.kmaha: the parameters tagged
# "train", `sigma` (when set) turned into the RBF kernel of that width, fitted
# (or remembered) by mlr3_fit().
mlr3_train <- function(learner, uid, task) {
  pv <- learner$param_set$get_values(tags = "train")
  if (!is.null(pv[["sigma"]])) pv[["kernel"]] <- rbf_kernel(pv[["sigma"]])
  pv[["sigma"]] <- NULL
  mlr3_fit(uid, task, pv)
}

# The k a prediction of classif.kmaha or regr.kmaha uses: the parameter `k`,
# else the model's.  A model whose metric was chosen with its own k predicts
# with no other (`id`: the learner's, for the error).
mlr3_predict_k <- function(learner, id) {
  model <- learner$model
  k <- learner$param_set$get_values(tags = "predict")[["k"]] %||% model$k
  if (metric_uses_k(model) && !identical(as.integer(k), as.integer(model$k))) {
    stopf("%s: this model chose its %s by cross-validated %s of k = %d neighbours, so it does not predict with k = %d; train it again with k = %d.",
          id, and_list(cv_choices(model)),
          if (inherits(model, "kmaha_regression")) "predictions" else "votes",
          model$k, as.integer(k), as.integer(k))
  }
  k
}

# The memory of recent fits of the mlr3 learner (see "Tuning `k` without
# refitting" in ?mlr_learners_classif.kmaha): entries list(uid, task, args,
# fit, bytes), the most recently used last.
mlr3_cache <- new.env(parent = emptyenv())
mlr3_cache$entries <- list()

# The memory's limit in bytes: the option `kmaha.mlr3_cache`, in MB.
mlr3_cache_limit <- function() {
  mb <- getOption("kmaha.mlr3_cache", 256)
  if (!is.numeric(mb) || length(mb) != 1L || is.na(mb) || mb < 0) {
    stopf("The option `kmaha.mlr3_cache` must be a size in MB >= 0 (0: every training fits anew), not %s.",
          deparse1(mb))
  }
  mb * 2^20
}

# The kmaha() fit of the learner with training parameters `pv` on the
# task's current rows: a remembered fit when one of this learner (`uid`,
# shared by its clones) has the same rows and parameters, `k` aside where
# it does not enter the fit (metric_uses_k(): anything but a kernel chosen
# by cross-validation; an unset `k` is kmaha()'s to choose, so it matches
# only itself).
mlr3_fit <- function(uid, task, pv) {
  k_arg <- if (!is.null(pv[["k"]])) as.integer(pv[["k"]])
  fit_now <- function() {
    x <- as.data.frame(task$data(cols = task$feature_names))
    call_by_name(kmaha, "kmaha", c(list(x = x, y = task$truth()), pv))
  }
  limit <- mlr3_cache_limit()
  if (limit == 0) return(fit_now())
  args <- pv[setdiff(names(pv), "k")]
  task_hash <- task$hash
  entries <- mlr3_cache$entries
  hit <- which(vapply(entries, function(e) {
    identical(e$uid, uid) && identical(e$task, task_hash) && identical(e$args, args) &&
      (identical(e$k, k_arg) ||
         (!is.null(e$k) && !is.null(k_arg) && !metric_uses_k(e$fit)))
  }, NA))
  if (length(hit)) {
    e <- entries[[hit[1]]]
    entries <- c(entries[-hit[1]], list(e))
    fit <- e$fit
    k <- k_arg %||% as.integer(fit$k)
    if (!identical(as.integer(fit$k), k) && inherits(fit, "kmaha_regression")) {
      fit <- regression_set_k(fit, k, kmaha_context(pv[["num_threads"]]))
    } else if (!identical(as.integer(fit$k), k)) {
      fit$k <- k
      fit$train_accuracy <- if (nrow(fit$embedding) > k) {
        mean(pipeline_apply(fit, NULL, "class", k, kmaha_context(pv[["num_threads"]])) == fit$y)
      } else NA_real_
    }
  } else {
    fit <- fit_now()
    entries <- c(entries, list(list(uid = uid, task = task_hash, args = args, k = k_arg, fit = fit,
                                    bytes = as.numeric(utils::object.size(fit)))))
    # Forget the least recently used fits beyond the limit (the new one is
    # kept even when it alone exceeds it, until the next fit).
    bytes <- rev(cumsum(rev(vapply(entries, `[[`, 0, "bytes"))))
    entries <- entries[bytes <= limit | seq_along(entries) == length(entries)]
  }
  mlr3_cache$entries <- entries
  fit
}

# The `learner` parameter: a learner name or a function.
mlr3_check_learner <- function(x) {
  if (is.function(x) ||
      (is.character(x) && length(x) == 1L && x %in% c("auto", builtin_learners(), builtin_learners("regression")))) {
    return(TRUE)
  }
  sprintf("must be %s or a learner function",
          paste(dQuote(c("auto", builtin_learners(), builtin_learners("regression")), FALSE), collapse = ", "))
}

register_mlr3_learner <- function() {
  learners <- mlr3::mlr_learners
  if (!"classif.kmaha" %in% learners$keys()) {
    learners$add("classif.kmaha", mlr3_learner_class())
  }
  if (!"regr.kmaha" %in% learners$keys()) {
    learners$add("regr.kmaha", mlr3_regr_learner_class())
  }
  invisible(TRUE)
}

unregister_mlr3_learner <- function() {
  learners <- mlr3::mlr_learners
  if ("classif.kmaha" %in% learners$keys()) learners$remove("classif.kmaha")
  if ("regr.kmaha" %in% learners$keys()) learners$remove("regr.kmaha")
  invisible(TRUE)
}
