#' kmaha as an mlr3 learner: `lrn("classif.kmaha")`
#'
#' When \pkg{mlr3} is installed, loading kmaha adds the classification
#' learner `"classif.kmaha"` to mlr3's dictionary of learners (as soon as
#' both packages are loaded, in either order): kNN in a metric learned by
#' [kmaha()], the KPCA trick with any learner and kernel choice.
#'
#' Predict types `"response"` and `"prob"` (the fractions of the `k`
#' neighbours' votes; the response is kmaha's own vote, not the most
#' probable class with ties broken at random). Features must be numeric,
#' integer or logical (encode factors first, e.g. with \pkg{mlr3pipelines}).
#'
#' Parameters (see [kmaha()] for each):
#' * `k` (integer, default 1): neighbours of the kNN vote; used at predict
#'   time, so changing it needs no refit.
#' * `learner`: `"nca"` (default), `"lmnn"`, `"dne"` or a learner function.
#' * `kernel`: a kernel object or a kernel choice (`"align"`, `"align_lp"`,
#'   `"cv"`, `"unweighted"`, `"linear"`); unset, kmaha()'s default.
#' * `sigma` (number > 0, unset by default): when set, the kernel is
#'   `rbf_kernel(sigma)`, replacing `kernel` (for tuning the bandwidth).
#' * `learner_args`, `neighbors`, `kernels`, `cv_folds`, `cv_strategy`,
#'   `scale`, `rank`, `tol`, `seed`, `landmarks`, `landmark_method`:
#'   passed to [kmaha()].
#'
#' The trained model (`learner$model`) is the [kmaha()] fit.
#'
#' @name mlr_learners_classif.kmaha
#' @seealso [kmaha()]; the tidymodels adapters [kmaha_parsnip] and
#'   [step_kmaha()]; caret's [kmaha_caret()].
#' @examplesIf requireNamespace("mlr3", quietly = TRUE)
#' library(mlr3)
#' learner <- lrn("classif.kmaha", learner = "dne", kernel = rbf_kernel(1),
#'                k = 3, predict_type = "prob")
#' task <- tsk("iris")
#' learner$train(task, row_ids = seq(1, 150, by = 2))
#' learner$predict(task, row_ids = seq(2, 150, by = 20))
NULL

# R6 methods refer to the object as `self` and to the parent class as `super`.
utils::globalVariables(c("self", "super"))

# The R6 class, built when mlr3 is loaded (it inherits from
# mlr3::LearnerClassif, which exists only then).
mlr3_learner_class <- function() {
  R6::R6Class("LearnerClassifKmaha",
    inherit = mlr3::LearnerClassif,
    public = list(
      initialize = function() {
        ps <- paradox::ps(
          k = paradox::p_int(lower = 1L, default = 1L, tags = c("train", "predict")),
          learner = paradox::p_uty(default = "nca", tags = "train",
                                   custom_check = mlr3_check_learner),
          kernel = paradox::p_uty(tags = "train"),
          sigma = paradox::p_dbl(lower = 0, tags = "train"),
          learner_args = paradox::p_uty(default = list(), tags = "train"),
          neighbors = paradox::p_fct(c("feature", "input"), default = "feature",
                                     tags = "train"),
          kernels = paradox::p_uty(tags = "train"),
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
                                           default = "random", tags = "train")
        )
        super$initialize(
          id = "classif.kmaha",
          param_set = ps,
          feature_types = c("logical", "integer", "numeric"),
          predict_types = c("response", "prob"),
          properties = c("twoclass", "multiclass"),
          packages = "kmaha",
          label = "Kernelized Mahalanobis Distance kNN",
          man = "kmaha::mlr_learners_classif.kmaha")
      }
    ),
    private = list(
      .train = function(task) {
        pv <- self$param_set$get_values(tags = "train")
        if (!is.null(pv$sigma)) pv$kernel <- rbf_kernel(pv$sigma)
        pv$sigma <- NULL
        x <- as.data.frame(task$data(cols = task$feature_names))
        do.call(kmaha, c(list(x = x, y = task$truth()), pv))
      },
      .predict = function(task) {
        k <- self$param_set$get_values(tags = "predict")$k %||% 1L
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

# The `learner` parameter: a learner name or a function.
mlr3_check_learner <- function(x) {
  if (is.function(x) ||
      (is.character(x) && length(x) == 1L && x %in% c("nca", "lmnn", "dne"))) {
    return(TRUE)
  }
  "must be \"nca\", \"lmnn\", \"dne\" or a learner function"
}

register_mlr3_learner <- function() {
  learners <- mlr3::mlr_learners
  if (!"classif.kmaha" %in% learners$keys()) {
    learners$add("classif.kmaha", mlr3_learner_class())
  }
  invisible(TRUE)
}

unregister_mlr3_learner <- function() {
  learners <- mlr3::mlr_learners
  if ("classif.kmaha" %in% learners$keys()) learners$remove("classif.kmaha")
  invisible(TRUE)
}
