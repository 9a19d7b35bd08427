#' Supervised kmaha embedding as a recipe step
#'
#' `step_kmaha()` creates a *specification* of a recipe step (package
#' \pkg{recipes}) that replaces the selected numeric predictors by their
#' coordinates in a metric learned by [kmaha()]: any learner (NCA, LMNN, DNE
#' or an R function) with any kernel choice (a kernel object, `"align"`,
#' `"cv"`, `"unweighted"`, `"linear"`). The embedding is supervised: it is
#' learned from the outcome column when the recipe is prepared, and new data
#' are mapped by `predict(type = "transform")`, so a kNN classifier (or any
#' other model) that follows works in the learned space.
#'
#' The new columns are named `prefix` followed by 1, 2, ... (zero-padded).
#' Their number is the learner's output dimension: `num_comp` when given,
#' otherwise the learner's default (all coordinates it learns).
#'
#' The parameters `learner`, `num_comp` and `sigma` can be tuned with
#' \pkg{tune} (`tune()`); [tunable()][generics::tunable] names them, with
#' [metric_learner()], [dials::num_comp()] and [dials::rbf_sigma()] (on a
#' range around the paper's scaled RBF bandwidths, 0.1 to 10) as their
#' parameter objects. **`num_comp`'s default range is 1 to 4, whatever the
#' data**, as for recipes' own `step_pca()`: \pkg{tune} cannot adapt the
#' range of a recipe parameter to the data (it refuses an unknown bound
#' there), and a learner's dimension can exceed the number of predictors
#' with a kernel. For another range, set it on the parameter set and pass
#' that as `param_info`:
#' `params <- update(extract_parameter_set_dials(wf), num_comp =
#' dials::num_comp(c(1, 10)))`, then `tune_grid(wf, ..., param_info =
#' params)`; or give the `grid` yourself. Until the step is tuned,
#' [print()] and `tidy()` show such arguments as `tune()`. Case weights
#' are not used. When the selectors match no column, the step does
#' nothing (as recipes' own steps do) and `tidy()` has no rows.
#'
#' Missing values in the selected predictors are an error when the recipe
#' is prepared: impute them in an earlier step (e.g.
#' `step_impute_median()`, `step_impute_knn()`) or remove their rows with
#' `step_naomit()`. New data with missing values are mapped to rows of
#' `NA`.
#'
#' @param recipe A recipe object; the step is added to its sequence.
#' @param ... Selector functions (e.g. `all_numeric_predictors()`) that
#'   choose the predictors to embed.
#' @param role The role of the new columns.
#' @param trained Set by [recipes::prep()].
#' @param outcome The outcome that supervises the embedding: `NULL` (the
#'   recipe's single outcome), a column name, or `vars(name)`. A factor
#'   (class labels), or a numeric outcome: then the metric is learned by
#'   MLKR for regression (see [mlkr()] and [kmaha()]).
#' @param learner,kernel,learner_args Passed to [kmaha()]; `learner` is
#'   `NULL` (the default: `"nca"` for a factor outcome, `"mlkr"` for a
#'   numeric one), `"nca"`, `"lmnn"`, `"dne"`, `"mlkr"` or a learner
#'   function; `kernel`
#'   is a kernel object or a kernel choice such as `"align"` or `"cv"`
#'   (`NULL`: kmaha()'s default).
#' @param num_comp `NULL` or the output dimension, a whole number >= 1:
#'   passed to the learner as `learner_args$dim`.
#' @param sigma `NULL`, or a bandwidth: the kernel is then
#'   `rbf_kernel(sigma)`, replacing `kernel` (for tuning the kernel).
#' @param options A named list of further arguments of [kmaha()], e.g.
#'   `list(rank = 50)` or `list(kernels = paper_kernels()[5:15])`.
#' @param seed A number: the random state of the fit (cross-validation
#'   folds, Nystrom landmarks, ...), so that preparing the recipe twice gives
#'   the same embedding (under any [RNGkind()]). The session's random state
#'   and kind are left as they were.
#' @param prefix The prefix of the new column names.
#' @param keep_original_cols Keep the embedded predictors beside the new
#'   columns?
#' @param object The [kmaha()] fit; set by [recipes::prep()].
#' @param columns The embedded columns' names; set by [recipes::prep()].
#' @param skip Skip this step when [recipes::bake()] is called on new data?
#' @param id A unique identifier of the step.
#' @return The recipe with the step added. When trained, `tidy()` returns one
#'   row per embedded predictor (`terms`) with the `learner`, the `kernel`
#'   and the step's `id`; where the fit chose by cross-validation, the
#'   learner and pipeline it chose (e.g. `"RBF sigma = 5"`, `"linear (no
#'   kernel)"`, or learner `"euclidean"` and `"Euclidean (no metric
#'   learning)"`), as `print()` of the trained recipe does.
#' @seealso [kmaha()]; the parsnip engine `nearest_neighbor(engine =
#'   "kmaha")` ([kmaha_parsnip]).
#' @examplesIf requireNamespace("recipes", quietly = TRUE)
#' suppressPackageStartupMessages(library(recipes))
#' rec <- recipe(Species ~ ., data = iris) |>
#'   step_kmaha(all_numeric_predictors(), learner = "dne",
#'              kernel = rbf_kernel(1), num_comp = 2)
#' prepped <- prep(rec)
#' head(bake(prepped, new_data = iris[c(1, 51, 101), ]))
#' tidy(prepped, number = 1)
#' @export
step_kmaha <- function(recipe, ..., role = "predictor", trained = FALSE,
                       outcome = NULL, learner = NULL, kernel = NULL,
                       num_comp = NULL, sigma = NULL, learner_args = list(),
                       options = list(), seed = sample.int(10^5, 1),
                       prefix = "kmaha_", keep_original_cols = FALSE,
                       object = NULL, columns = NULL, skip = FALSE,
                       id = recipes::rand_id("kmaha")) {
  require_suggested("recipes", "step_kmaha()")
  if (!is.list(learner_args) || (length(learner_args) && is.null(names(learner_args)))) {
    stopf("step_kmaha(): `learner_args` must be a named list, e.g. list(lambda = 0.1).")
  }
  if (!is.list(options) || (length(options) && (is.null(names(options)) || any(!nzchar(names(options)))))) {
    stopf("step_kmaha(): `options` must be a named list of kmaha() arguments, e.g. list(rank = 50).")
  }
  reserved <- intersect(names(options), c("x", "y", "learner", "kernel", "learner_args", "seed"))
  if (length(reserved)) {
    stopf("step_kmaha(): `options` must not set `%s`; it is an argument of step_kmaha() itself.",
          reserved[1])
  }
  if (!is.numeric(seed) || length(seed) != 1L || !is.finite(seed)) {
    stopf("step_kmaha(): `seed` must be one number, e.g. seed = 1.")
  }
  check_step_num_comp(num_comp)
  if (!is.character(prefix) || length(prefix) != 1L || !nzchar(prefix)) {
    stopf("step_kmaha(): `prefix` must be one non-empty string, e.g. \"kmaha_\".")
  }
  recipes::add_step(recipe, step_kmaha_new(
    terms = recipes::ellipse_check(...), role = role, trained = trained,
    outcome = outcome, learner = learner, kernel = kernel,
    num_comp = num_comp, sigma = sigma, learner_args = learner_args,
    options = options, seed = as.integer(seed), prefix = prefix,
    keep_original_cols = keep_original_cols, object = object,
    columns = columns, skip = skip, id = id))
}

step_kmaha_new <- function(terms, role, trained, outcome, learner, kernel,
                           num_comp, sigma, learner_args, options, seed,
                           prefix, keep_original_cols, object, columns, skip,
                           id) {
  recipes::step(subclass = "kmaha", terms = terms, role = role,
                trained = trained, outcome = outcome, learner = learner,
                kernel = kernel, num_comp = num_comp, sigma = sigma,
                learner_args = learner_args, options = options, seed = seed,
                prefix = prefix, keep_original_cols = keep_original_cols,
                object = object, columns = columns, skip = skip, id = id)
}

# `num_comp` of a step_kmaha(): NULL, a tune() placeholder or the output
# dimension (checked when the step is made, and when it is prepared, as
# tune's finalize sets it without the constructor).
check_step_num_comp <- function(num_comp) {
  if (is.null(num_comp) || is_tune_call(num_comp)) return(invisible(num_comp))
  if (!is_count(num_comp)) {
    stopf("step_kmaha(): `num_comp` (the output dimension) must be NULL or one whole number >= 1, e.g. num_comp = 2, not %s.",
          deparse1(num_comp))
  }
  invisible(num_comp)
}

# The outcome column of a step_kmaha(): the recipe's single outcome, a name,
# or a vars() selection.
step_kmaha_outcome <- function(outcome, training, info) {
  if (is.null(outcome)) {
    name <- info$variable[info$role %in% "outcome"]
    if (length(name) != 1L) {
      stopf("step_kmaha(): the recipe has %d outcome columns; name the one that supervises the embedding, e.g. outcome = \"Species\".",
            length(name))
    }
  } else if (is.character(outcome)) {
    name <- outcome
  } else {
    name <- recipes::recipes_eval_select(outcome, training, info)
  }
  if (length(name) != 1L || !name %in% names(training)) {
    stopf("step_kmaha(): `outcome` must name one column of the training data; %s does not.",
          paste(deparse(if (is.null(name)) outcome else name), collapse = ""))
  }
  name
}

# The kmaha() arguments a step or model gets from its settings.
# `regression`: the outcome is numeric (the default learner is then MLKR).
step_kmaha_args <- function(x, regression = FALSE) {
  learner_args <- x$learner_args
  if (!is.null(x$num_comp)) learner_args$dim <- as.integer(x$num_comp)
  kernel <- if (is.null(x$sigma)) x$kernel else rbf_kernel(x$sigma)
  args <- list(learner = x$learner %||% if (regression) builtin_learners("regression")[1] else "nca", kernel = kernel,
               learner_args = learner_args)
  c(args[!vapply(args, is.null, NA)], x$options)
}

# Evaluate `expr` from the random state set by `seed` (the same generator
# under any RNGkind(), set_kmaha_seed()), then restore the session's random
# state and kind (or their absence).
with_kmaha_seed <- function(seed, expr) {
  restore <- save_rng()
  on.exit(restore(), add = TRUE)
  set_kmaha_seed(seed)
  expr
}

#' @exportS3Method recipes::prep
prep.step_kmaha <- function(x, training, info = NULL, ...) {
  check_step_num_comp(x$num_comp)
  columns <- recipes::recipes_eval_select(x$terms, training, info)
  if (!length(columns)) {
    # nothing selected: the step does nothing, as recipes' own steps do
    # (a selector such as all_numeric_predictors() may match no column
    # of some data)
    x$trained <- TRUE
    x$columns <- character()
    x$keep_original_cols <- isTRUE(x$keep_original_cols)
    return(x)
  }
  recipes::check_type(training[, columns], quant = TRUE)
  y_name <- step_kmaha_outcome(x$outcome, training, info)
  if (y_name %in% columns) {
    stopf("step_kmaha(): the outcome `%s` is among the selected predictors; select predictors only, e.g. all_numeric_predictors().",
          y_name)
  }
  y <- training[[y_name]]
  regression <- is.numeric(y)
  if (!is.factor(y) && !is.character(y) && !is.logical(y) && !regression) {
    stopf("step_kmaha(): the outcome `%s` must be a factor (class labels) or numeric (a regression), not %s.",
          y_name, class(y)[1])
  }
  step_kmaha_check_na(training[, columns, drop = FALSE], y, y_name)
  fit <- with_kmaha_seed(x$seed, call_by_name(kmaha, "kmaha", c(
    list(x = as.data.frame(training[, columns]), y = y, seed = x$seed),
    step_kmaha_args(x, regression))))
  step_kmaha_new(
    terms = x$terms, role = x$role, trained = TRUE, outcome = y_name,
    learner = x$learner, kernel = x$kernel, num_comp = x$num_comp,
    sigma = x$sigma, learner_args = x$learner_args, options = x$options,
    seed = x$seed, prefix = x$prefix,
    keep_original_cols = isTRUE(x$keep_original_cols), object = fit,
    columns = columns, skip = x$skip, id = x$id)
}

# Missing values in the training data of the step: inside a recipe they are
# imputed (or their rows removed) by an earlier step, which the message
# names.
step_kmaha_check_na <- function(x, y, y_name) {
  na_cols <- names(x)[vapply(x, anyNA, NA)]
  if (length(na_cols)) {
    rows <- sum(!stats::complete.cases(x))
    stopf("step_kmaha(): the selected predictors have missing values (%d row%s; column%s %s). Impute them earlier in the recipe, e.g. step_impute_median(all_numeric_predictors()) or step_impute_knn(all_numeric_predictors()), or drop those rows with step_naomit(all_predictors()).",
          rows, if (rows == 1L) "" else "s", if (length(na_cols) == 1L) "" else "s",
          paste0("`", na_cols, "`", collapse = ", "))
  }
  if (anyNA(y)) {
    n_na <- sum(is.na(y))
    stopf("step_kmaha(): the outcome `%s` has missing values (%d row%s). Drop those rows first, e.g. with step_naomit(%s, skip = TRUE) before this step, or filter the data.",
          y_name, n_na, if (n_na == 1L) "" else "s", y_name)
  }
  invisible(NULL)
}

#' @exportS3Method recipes::bake
bake.step_kmaha <- function(object, new_data, ...) {
  if (!length(object$columns)) return(new_data)
  recipes::check_new_data(object$columns, object, new_data)
  # (predict()'s own check would name its `newdata` and the formula
  # interface)
  recipes::check_type(new_data[, object$columns], quant = TRUE)
  z <- stats::predict(object$object, as.data.frame(new_data[, object$columns]),
                      type = "transform")
  z <- as.data.frame(unname(z))
  names(z) <- recipes::names0(ncol(z), object$prefix)
  z <- recipes::check_name(z, new_data, object, names(z))
  if (!isTRUE(object$keep_original_cols)) {
    new_data <- new_data[, setdiff(names(new_data), object$columns), drop = FALSE]
  }
  new_data[names(z)] <- z
  new_data
}

#' @export
print.step_kmaha <- function(x, width = max(20, options()$width - 35), ...) {
  title <- sprintf("kmaha embedding (%s, %s) of ", step_kmaha_learner_label(x$learner, x$object),
                   step_kmaha_kernel_label(x))
  recipes::print_step(x$columns, x$terms, x$trained, title, width)
  invisible(x)
}

# (NULL: the default, "nca", or "mlkr" for a step trained on a numeric
# outcome, `object` its fit).  A trained step whose fit chose by
# cross-validation says what it chose (e.g. "euclidean" when Euclidean k-NN
# won, or the learner of learner = "auto").
step_kmaha_learner_label <- function(learner, object = NULL) {
  cv <- object$kernel_choice$cv
  if (!is.null(cv)) return(cv$curve$learner[cv$best])
  if (is.null(learner)) return(if (inherits(object, "kmaha_regression"))
    builtin_learners("regression")[1] else "nca")
  if (is_tune_call(learner)) return("tune()")
  if (is.character(learner)) learner[1] else "custom learner"
}

# TRUE for a placeholder `tune()` (or `tune("id")`) of a tunable argument.
is_tune_call <- function(x) is.call(x) && identical(x[[1L]], quote(tune))
# A trained step whose fit chose by cross-validation names the pipeline
# chosen ("RBF sigma = 5", "linear (no kernel)", "Euclidean (no metric
# learning)", ...), else the kernel asked for.
step_kmaha_kernel_label <- function(x) {
  cv <- x$object$kernel_choice$cv
  if (isTRUE(x$trained) && !is.null(cv)) return(cv$curve$label[cv$best])
  if (is_tune_call(x$sigma)) return("rbf sigma = tune()")
  if (!is.null(x$sigma)) return(sprintf("rbf sigma = %s", format(x$sigma)))
  if (is.null(x$kernel)) return("default kernel")
  if (is.character(x$kernel)) return(x$kernel[1])
  if (inherits(x$kernel, "kmaha_kernel")) return(format(x$kernel))
  "kernel"
}

#' @export
tidy.step_kmaha <- function(x, ...) {
  terms <- if (isTRUE(x$trained)) x$columns else recipes::sel2char(x$terms)
  tibble::tibble(terms = unname(as.character(terms)),
                 learner = step_kmaha_learner_label(x$learner, x$object),
                 kernel = step_kmaha_kernel_label(x),
                 id = x$id)
}

#' @exportS3Method generics::tunable
tunable.step_kmaha <- function(x, ...) {
  tibble::tibble(
    name = c("learner", "num_comp", "sigma"),
    call_info = list(list(pkg = "kmaha", fun = "metric_learner"),
                     # 1-4, as recipes' step_pca(): tune cannot finalize
                     # a recipe parameter from the data (see ?step_kmaha)
                     list(pkg = "dials", fun = "num_comp", range = c(1L, 4L)),
                     list(pkg = "dials", fun = "rbf_sigma", range = c(-1, 1))),
    source = "recipe",
    component = "step_kmaha",
    component_id = x$id)
}

#' @exportS3Method generics::required_pkgs
required_pkgs.step_kmaha <- function(x, ...) "kmaha"

#' The metric learner as a tuning parameter
#'
#' A qualitative \pkg{dials} parameter for the `learner` argument of
#' [step_kmaha()] and of the parsnip engine `"kmaha"`, so that
#' `learner = tune()` draws from `values` in a grid.
#'
#' The default values are the paper's three classifiers, so a grid from it
#' serves classification only: with a numeric outcome each of them is an
#' error (kmaha's one regression learner is MLKR; `"auto"` and `"mlkr"` are
#' the choices there, give them with
#' `update(parameters, learner = metric_learner(c("auto", "mlkr")))`).
#'
#' @param values The learners to choose from (names understood by
#'   [kmaha()]).
#' @return A `qual_param` object of \pkg{dials}.
#' @examplesIf requireNamespace("dials", quietly = TRUE)
#' metric_learner()
#' metric_learner(c("nca", "dne"))
#' @export
metric_learner <- function(values = c("nca", "lmnn", "dne")) {
  require_suggested("dials", "metric_learner()")
  if (!is.character(values) || !length(values) || anyNA(values) ||
      !all(values %in% c("auto", builtin_learners(), builtin_learners("regression")))) {
    stopf("metric_learner(): `values` must be some of %s.",
          paste(dQuote(c("auto", builtin_learners(), builtin_learners("regression")), FALSE), collapse = ", "))
  }
  dials::new_qual_param(type = "character", values = values,
                        label = c(learner = "Metric learner"))
}

# Stop with a clear message when a suggested package is missing.
require_suggested <- function(pkg, what) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    stopf("%s needs the package '%s': install.packages(\"%s\").", what, pkg, pkg)
  }
  invisible(TRUE)
}
