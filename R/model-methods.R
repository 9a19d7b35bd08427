# Methods of the one model object ("kmaha_model"): predict, print, summary,
# plot, and the lm-like accessors coef, fitted, nobs, formula, terms,
# model.frame (update() works through the stored call).

#' Fitted kmaha models
#'
#' Every fitting function of the package — [nca()], [lmnn()], [dne()],
#' [knca()], [klmnn()], [kdne()] and [kmaha()] — returns the same kind of
#' object, a list of class `"kmaha_model"` (with subclasses naming the
#' learner and how the kernel enters: `"kmaha_linear"` for a metric on the
#' inputs, `"kmaha_kpca_trick"` for [kmaha()] with a kernel,
#' `"kmaha_kernel_trick"` for the kernel-trick learners). It is a pipeline
#' of stages, each a plain list of matrices (so it survives [saveRDS()]):
#'
#' * `prep`: the input scaling (`center`, `scale`), or `NULL`;
#' * `feature_map`: `type` `"identity"` (the scaled inputs), `"kpca"`
#'   (exact kernel PCA: the `kernel`, the scaled training inputs `x`, the
#'   `projection`, `col_means`, `grand_mean`, `eigenvalues`, `trace`),
#'   `"nystrom"` (Nystrom KPCA: `landmarks` instead of `x`) or
#'   `"kernel_rows"` (the kernel trick: the `kernel` and `x`; the
#'   coordinates of a point are its kernel values against the training
#'   points);
#' * `L`: the learned linear map (d x r) on those coordinates;
#' * `embedding`: the training points in the learned space (the reference
#'   set of the kNN classifier), `y` their labels and `k` the number of
#'   neighbours;
#' * small diagnostics: `learner`, `learner_label`, `targets` (target
#'   neighbours used, if any), `convergence`, `details` (learner-specific:
#'   eigenvalues for DNE, impostor counts for LMNN, ...), `train_accuracy`,
#'   `kernel_choice` ([kmaha()]), `settings`, `call`, and for formula fits
#'   `terms`, `xlevels`, `contrasts`, `data_vars` (the columns of `data`
#'   the predictors use, which `newdata` must hold) and `na.action`.
#'
#' **Regression models** ([mlkr()]) have the same stages and the class
#' `"kmaha_regression"` before the others; `mode` is `"regression"` (it is
#' absent from classifiers), `y` holds the numeric response, `weights` the
#' neighbour weights of the k-NN regression (`"distance"`, `"uniform"` or
#' `"kernel"`), and `loo_rmse` and `loo_r2` (leave-one-out on the
#' training points, optimistic) replace `train_accuracy`. Their
#' [predict()][predict.kmaha_regression], `fitted()` and `residuals()`
#' (leave-one-out) give numbers; `print()`, `summary()`, `plot()` (points
#' coloured by the response) and the [broom verbs][glance.kmaha_regression]
#' report the regression.
#'
#' The methods are those of [stats::lm()]: [predict()][predict.kmaha_model],
#' `print()`, `summary()`, `plot()`, `coef()` (the map `L`), `fitted()`
#' (leave-one-out predictions for the training rows), `nobs()`, `formula()`,
#' `terms()` and `model.frame()` (formula fits), and [stats::update()],
#' which refits from the stored call with changed arguments.
#'
#' @param object,x,formula A fitted model (`formula` for `model.frame()`).
#' @param type For `fitted()`: `"class"`, `"prob"` or `"transform"`, as for
#'   [predict.kmaha_model()] without `newdata`.
#' @param which For `plot()`: `"embedding"` (the training points in two
#'   learned coordinates) or `"kernel"` (how the kernel was chosen: the CV
#'   curve or the alignment weights, for [kmaha()] fits).
#' @param dims The two learned coordinates drawn.
#' @param col Colours, one per class.
#' @param legend For `plot()`: draw a legend of the classes in the right
#'   margin (widened for it, so it never covers a point; several columns
#'   for many classes).
#' @param num_threads For `fitted()`: `NULL` (the package setting, see
#'   [kmaha_threads()]) or the number of threads of the compiled code.
#' @param ... Unused, except by `plot()` (passed to the plotting function).
#' @return `coef()`: the d x r map; `fitted()`: as [predict.kmaha_model()];
#'   `nobs()`: the number of training rows; `formula()`, `terms()`,
#'   `model.frame()`: as for `lm`; `summary()`: an object with a `print()`
#'   method; `print()` and `plot()`: `x`, invisibly.
#' @examples
#' fit <- nca(Species ~ ., data = iris, max_iter = 50)
#' coef(fit)
#' nobs(fit)
#' formula(fit)
#' head(fitted(fit))
#' summary(fit)
#' fit2 <- update(fit, dim = 2)
#' dim(coef(fit2))
#' @name kmaha-model
NULL

#' Predict with a learned metric
#'
#' Maps new points through the fitted stages — the training scaling, the
#' feature map (none, exact or Nystrom KPCA, or the kernel rows of the
#' kernel trick) and the learned linear map — (`type = "transform"`), and
#' classifies them by k nearest neighbours among the training points in
#' that space (`"class"`, `"prob"`: the fraction of the `k` neighbour votes
#' per class; see [knn_classify()] for the tie rule). With `k = 1` the
#' probabilities are only 0 or 1 (the single neighbour's class); use a
#' larger `k` for graded vote fractions.
#'
#' **New data.** Columns are matched by name when the model was trained on
#' named columns (reordered columns work; a `newdata` without column names is
#' an error, since its columns could not be matched), by position otherwise;
#' a named vector, such as `colMeans(x)`, is one observation (a model fitted
#' on a matrix); for formula fits the model frame is rebuilt with the training terms and
#' factor levels. A row with a missing value gives `NA` (a row of `NA`s for
#' `"prob"` and `"transform"`), as [stats::predict.lm()] does with
#' `na.action = na.pass`; a `newdata` with no rows gives a result of length
#' 0. A column that is present but of the wrong type (e.g. numbers read as
#' text) is an error that says so.
#'
#' **Classes.** Predictions are factors with the levels of the training
#' labels, including levels that had no training rows (the fit warns about
#' them); such levels get probability 0.
#'
#' **No `newdata`.** The training embedding (`"transform"`) or leave-one-out
#' predictions on the training rows; for a formula fit with
#' `na.action = na.exclude`, padded with `NA` for the rows left out, as
#' [stats::fitted()] does for `lm`.
#'
#' @param object A fitted model (see [kmaha-model]).
#' @param newdata New observations: a data frame for models fitted with a
#'   formula, otherwise a matrix or data frame with the training columns.
#' @param type `"class"`, `"prob"` or `"transform"`.
#' @param k Number of neighbours for `"class"` and `"prob"`; the fit's `k` by
#'   default (1 for the learners, `k` of [kmaha()]).
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @param ... Must be empty: a misspelt argument is an error.
#' @return A factor (`"class"`), a matrix of class-vote fractions
#'   (`"prob"`, one column per training level), or a matrix of coordinates
#'   (`"transform"`), with one element or row per row of `newdata`.
#' @examples
#' fit <- nca(Species ~ ., data = iris, max_iter = 50)
#' predict(fit, iris[c(1, 51, 101), ])
#' predict(fit, iris[c(1, 51, 101), ], type = "transform")
#' predict(fit, iris[c(1, 51, 101), ], type = "prob", k = 5)
#' kfit <- kmaha(Species ~ ., data = iris, learner = "dne",
#'               kernel = rbf_kernel(1))
#' predict(kfit, iris[c(1, 51, 101), ])
#' @export
predict.kmaha_model <- function(object, newdata = NULL,
                                type = c("class", "prob", "transform"),
                                k = object$k, num_threads = NULL, ...) {
  check_dots_empty("predict()", ...,
                   hint = "predict() takes `newdata`, `type` (\"class\", \"prob\" or \"transform\"), `k` and `num_threads`.")
  type <- match_type(type)
  k <- check_count(k, "k")
  if (is.null(object$y) && type != "transform") {
    stopf("This model was fitted without class labels (from pairs or chunklets only), so it cannot classify: use type = \"transform\", or refit with `y`.")
  }
  ctx <- kmaha_context(num_threads)
  if (is.null(newdata)) {
    if (type == "transform") return(stats::napredict(object$na.action, object$embedding))
    check_knn_k(k, nrow(object$embedding), self = TRUE)
    out <- pipeline_apply(object, NULL, type, k, ctx)
    if (type == "prob") rownames(out) <- rownames(object$embedding)
    return(stats::napredict(object$na.action, out))
  }
  check_knn_k(k, nrow(object$embedding))
  x <- newdata_matrix(object, newdata, object$n_features)
  ok <- rowSums(is.na(x)) == 0L
  lev <- levels(object$y)
  # Everything in one call of the core: scaling, feature map, map, vote
  # (kernels evaluated in R hand it their kernel rows).
  out <- pipeline_apply_newdata(object, x, ok, type, k, ctx)
  if (type == "transform") return(newdata_embedding(object, x, ok, out))
  if (type == "class") {
    cls <- factor(rep(NA_character_, nrow(x)), levels = lev)
    if (any(ok)) cls[ok] <- out
    return(cls)
  }
  prob <- matrix(NA_real_, nrow(x), length(lev), dimnames = list(rownames(x), lev))
  if (any(ok)) prob[ok, ] <- out
  prob
}

# `type` of predict(): one of the three, with a message naming them.
match_type <- function(type) {
  opts <- c("class", "prob", "transform")
  if (identical(type, opts)) return("class")
  if (!is.character(type) || length(type) != 1L || is.na(type) || !type %in% opts) {
    stopf("`type` must be one of \"class\", \"prob\" or \"transform\", not %s.",
          if (is.character(type) && length(type) == 1L) dQuote(type, FALSE) else deparse1(type))
  }
  type
}

#' @rdname kmaha-model
#' @export
coef.kmaha_model <- function(object, ...) {
  check_dots_empty("coef()", ...)
  object$L
}

#' @rdname kmaha-model
#' @export
fitted.kmaha_model <- function(object, type = c("class", "prob", "transform"),
                               num_threads = NULL, ...) {
  check_dots_empty("fitted()", ...)
  stats::predict(object, NULL, type = match_type(type), num_threads = num_threads)
}

#' @rdname kmaha-model
#' @export
nobs.kmaha_model <- function(object, ...) {
  # (a model fitted without labels, from pairs or chunklets: its embedded rows)
  if (is.null(object$y)) nrow(object$embedding) else length(object$y)
}

#' @rdname kmaha-model
#' @export
formula.kmaha_model <- function(x, ...) {
  if (is.null(x$terms)) {
    stopf("This model was fitted from a matrix, not a formula: it has no formula.")
  }
  stats::formula(x$terms)
}

#' @rdname kmaha-model
#' @export
terms.kmaha_model <- function(x, ...) {
  if (is.null(x$terms)) {
    stopf("This model was fitted from a matrix, not a formula: it has no terms.")
  }
  x$terms
}

#' @rdname kmaha-model
#' @export
model.frame.kmaha_model <- function(formula, ...) {
  object <- formula
  if (is.null(object$terms)) {
    stopf("This model was fitted from a matrix, not a formula: it has no model frame.")
  }
  cl <- object$call
  m <- match(c("formula", "data", "subset", "na.action"), names(cl), 0L)
  mf <- cl[c(1L, m)]
  # the formula of the fit's terms (the call's may have variables that no
  # term uses, which model_data() left out: their missing values would drop
  # other rows)
  mf$formula <- stats::formula(object$terms)
  mf$drop.unused.levels <- FALSE
  mf[[1L]] <- quote(stats::model.frame)
  if (is.null(mf$na.action)) mf$na.action <- quote(stats::na.omit)
  env <- environment(object$terms) %||% parent.frame()
  eval(mf, env)
}

# The call stored in a model names the generic the user called (through
# kmaha::, so update() works whether or not the package is attached).
model_call <- function(call, generic) {
  call[[1L]] <- call("::", quote(kmaha), as.name(generic))
  call
}

# --------------------------------------------------------------------------
# Words for print() and summary().

# "NCA", "KNCA" (kernel trick or KPCA trick), "custom learner", ...
model_label <- function(x) {
  if (identical(x$learner, "euclidean")) return("Euclidean k-NN")
  lab <- x$learner_label %||% learner_label(x$learner)
  if (identical(x$learner, "custom")) {
    return(if (x$feature_map$type == "identity") "custom learner" else "kernelized custom learner")
  }
  if (x$feature_map$type %in% c("kpca", "nystrom") && !startsWith(lab, "K")) lab <- paste0("K", lab)
  lab
}

# The learner without the kernel prefix ("NCA" for KNCA).
base_label <- function(x) {
  if (identical(x$learner, "custom")) return("custom learner")
  learner_label(learner_record(x$learner)$linear %||% x$learner)
}

# The first line of print() and summary(): what was fitted, in words.
model_title <- function(x) {
  fm <- x$feature_map
  inputs <- if (is.null(x$prep)) "inputs as given" else
    if (all(x$prep$scale == 1)) "centred inputs" else "standardized inputs"
  if (identical(x$learner, "euclidean")) {
    return(sprintf("Euclidean k-NN: the Euclidean metric on the %s (no metric learned)", inputs))
  }
  switch(fm$type,
    identity = sprintf("%s: a linear Mahalanobis metric on the %s", model_label(x), inputs),
    kpca = sprintf("%s by the KPCA trick (%s on kernel PCA coordinates)",
                   model_label(x), base_label(x)),
    nystrom = sprintf("%s by the KPCA trick (%s on Nystrom KPCA coordinates, %d landmarks)",
                      model_label(x), base_label(x), nrow(fm$landmarks)),
    kernel_rows = sprintf("%s by the kernel trick (%s on kernel rows, A = U Phi')",
                          model_label(x), base_label(x)))
}

# The kernel in words, or NULL for a linear model that no kernel choice
# made.  A kernel choice names the candidate it chose, truthfully: the
# linear learner, Euclidean k-NN (no metric learned), or the kernel.
model_kernel_label <- function(x) {
  fm <- x$feature_map
  ch <- x$kernel_choice
  chosen_by <- function() {
    sprintf("chosen by %d-fold CV%s", ncol(ch$cv$accuracy),
            if (isTRUE(ch$scored)) sprintf(" (rule \"%s\" on given scores)", ch$type) else "")
  }
  # a given kernel (or none), its learner chosen by CV (learner = "auto")
  if (!is.null(ch$cv) && !ch$type %in% c(selection_rules, "scores")) {
    ch2 <- ch
    ch2$cv <- NULL
    x$kernel_choice <- ch2
    given <- model_kernel_label(x) %||% "none (the learner on the inputs)"
    return(sprintf("%s; the learner %s by %d-fold CV", given,
                   if (isTRUE(ch$k_chosen)) "and k chosen" else "chosen", ncol(ch$cv$accuracy)))
  }
  if (fm$type == "identity") {
    if (!is.null(ch$cv)) {
      what <- if (identical(x$learner, "euclidean")) {
        "none: Euclidean k-NN on the inputs (no metric learned)"
      } else "none: the linear learner"
      return(sprintf("%s, %s", what, chosen_by()))
    }
    return(NULL)
  }
  if (is.null(ch)) return(format(fm$kernel))
  if (!is.null(ch$cv)) {
    return(sprintf("%s, %s", ch$cv$curve$label[ch$cv$best], chosen_by()))
  }
  switch(ch$type,
    kernel = format(fm$kernel),
    align = sprintf("aligned (QP), alignment %.3f", ch$alignment$alignment),
    unweighted = sprintf("unweighted sum of %d kernels", length(fm$kernel$kernels)),
    format(fm$kernel))
}

# Why the kernel choice chose what it did (sentences), or NULL.
model_choice_why <- function(x) {
  cv <- x$kernel_choice$cv
  if (is.null(cv)) return(NULL)
  cv$explain %||% cv$reason
}

# The coordinates the learner received, in words.
model_coords_label <- function(x) {
  fm <- x$feature_map
  r <- ncol(x$L)
  switch(fm$type,
    identity = sprintf("%d input column%s", r, if (r == 1L) "" else "s"),
    kpca = , nystrom = sprintf("%d KPCA component%s", r, if (r == 1L) "" else "s"),
    kernel_rows = sprintf("%d kernel rows", r))
}

# The optimizer's outcome in words (as the learner's record says); NULL when
# unknown.
convergence_words <- function(method, cv, in_print = TRUE) {
  if (is.null(cv) || is.null(cv$iterations)) return(NULL)
  words <- learner_record(method)$convergence
  if (isTRUE(words$exact)) {
    return("solved exactly by an eigen-decomposition (no iterations)")
  }
  # Mini-batch NCA takes a fixed number of steps: there is no convergence test.
  if (isTRUE(startsWith(cv$message %||% "", "mini-batch NCA: "))) {
    return(sprintf("%s (no convergence test)", sub("^mini-batch NCA: ", "", cv$message)))
  }
  unit <- words$unit %||% "iterations"
  # NCA solved in the span of the centred training points (p >> n)
  if (isTRUE(cv$span_rank > 0L)) {
    unit <- sprintf("%s in the %d-dimensional span of the centred training points",
                    unit, as.integer(cv$span_rank))
  }
  if (isTRUE(cv$converged)) {
    sprintf("converged after %d %s%s", as.integer(cv$iterations), unit,
            if (!is.null(cv$stop) && !in_print) sprintf(" (stopped by the %s rule)", cv$stop) else "")
  } else {
    sprintf("stopped after %d %s before converging (%sraise `max_iter`%s)",
            as.integer(cv$iterations), unit,
            if (!is.null(cv$stop)) paste0(cv$stop, "; ") else "",
            if (in_print) "; see summary()" else "")
  }
}

# What the objective value measures, per learner (short for print(), long
# for summary(), from its record); NULL for custom learners.
objective_meaning <- function(method, short = TRUE) {
  unname(learner_record(method)$objective[if (short) "short" else "long"])
}

# The training accuracy is optimistic: the metric was learned on the very
# points it is measured on.  print() says so briefly, summary() in full.
accuracy_words <- function(k, accuracy, short = TRUE) {
  if (short) {
    return(sprintf("training accuracy: %.3f (leave-one-out %d-NN on the training points: optimistic)",
                   accuracy, as.integer(k)))
  }
  sprintf("Training accuracy: %.3f\n  (leave-one-out %d-NN on the points the metric was learned from: optimistic,\n  not an estimate of the accuracy on new data; use held-out data for that)",
          accuracy, as.integer(k))
}

# Why a map has fewer rows than the `dim` asked for (LMNN keeps only the
# non-negligible eigenvalues of M), or NULL.
map_rank_note <- function(map, settings) {
  d <- settings$learner_args$dim %||% settings$dim
  if (is.null(d) || !is.numeric(d) || nrow(map) >= d) return(NULL)
  sprintf("rank %d: the learned metric has %d negligible eigenvalue(s), so the map has fewer rows than `dim` = %d",
          nrow(map), as.integer(d) - nrow(map), as.integer(d))
}

# The first lines of print() of a model (classification or regression):
# its title, kernel and why it was chosen.
print_model_head <- function(x) {
  cat(wrap_lines(model_title(x), indent = "  ", first = sprintf("<kmaha %s> ", model_label(x))))
  kl <- model_kernel_label(x)
  if (!is.null(kl)) cat(wrap_lines(kl, indent = "          ", first = "  kernel: "))
  why <- model_choice_why(x)
  if (!is.null(why)) cat(wrap_lines(why, indent = "          ", first = "  why:    "))
}

#' @export
print.kmaha_model <- function(x, ...) {
  print_model_head(x)
  cat(wrap_lines(sprintf("%d training points, %s, %s; map: %d x %d on the %s",
                         nrow(x$embedding), if (model_precomputed(x)) "a precomputed Gram matrix"
                         else sprintf("%d inputs", x$n_features),
                         if (is.null(x$y)) "no class labels (transform only)"
                         else sprintf("%d classes", nlevels(x$y)), nrow(x$L),
                         ncol(x$L), model_coords_label(x))))
  note <- map_rank_note(x$L, x$settings)
  if (!is.null(note)) cat(wrap_lines(sprintf("(%s)", note)))
  method <- if (identical(x$learner, "custom")) "custom" else x$learner
  words <- convergence_words(method, x$convergence)
  if (!is.null(words)) cat(wrap_lines(words, indent = "    ", first = "  optimizer: "))
  if (!is.null(x$convergence$objective)) {
    meaning <- objective_meaning(method)
    cat(wrap_lines(sprintf("%.6g%s", x$convergence$objective,
                           if (!is.null(meaning)) paste0(" (", meaning, ")") else ""),
                   indent = "    ", first = "  objective: "))
  }
  if (!is.null(x$y)) {
    cat(wrap_lines(accuracy_words(x$k, x$train_accuracy), indent = "    ", first = "  "))
  }
  invisible(x)
}

#' @rdname kmaha-model
#' @export
summary.kmaha_model <- function(object, ...) {
  method <- if (identical(object$learner, "custom")) "custom" else object$learner
  cv <- object$convergence
  ch <- object$kernel_choice
  fm <- object$feature_map
  set <- object$settings
  set <- set[!vapply(set, function(v) is.null(v) || is.list(v) || length(v) != 1L, NA)]
  out <- list(
    title = model_title(object), label = model_label(object),
    kernel = model_kernel_label(object),
    why = model_choice_why(object),
    choice = if (!is.null(ch)) ch$type,
    candidates = if (!is.null(ch$cv)) summary(ch$cv)$table,
    alignment = if (!is.null(ch$alignment)) summary(ch$alignment)$kernels,
    n = stats::nobs(object), n_features = object$n_features,
    precomputed = model_precomputed(object),
    coords = model_coords_label(object), dim = dim(object$L),
    rank_note = map_rank_note(object$L, object$settings),
    solution = if (isTRUE(learner_record(method)$convergence$solution)) cv$message,
    variance_kept = if (fm$type %in% c("kpca", "nystrom") && isTRUE(fm$trace > 0))
      sum(fm$eigenvalues) / fm$trace,
    neighbors = if (!is.null(object$targets)) {
      if (fm$type == "kernel_rows") "feature space (kernel distances)"
      else if (identical(object$settings$neighbors, "input")) "input space"
      else if (fm$type == "identity") "input space" else "feature space (KPCA coordinates)"
    },
    convergence = convergence_words(method, cv, in_print = FALSE),
    objective = cv$objective,
    objective_meaning = objective_meaning(method, short = FALSE),
    k = object$k, classes = table(object$y), settings = set,
    train_accuracy = object$train_accuracy)
  class(out) <- "summary.kmaha_model"
  out
}

#' @export
print.summary.kmaha_model <- function(x, ...) {
  # Every line of prose wraps at getOption("width") (wrap_lines()).
  cat(wrap_lines(x$title, indent = "  ", first = ""))
  if (!is.null(x$kernel)) cat(wrap_lines(x$kernel, indent = "  ", first = "Kernel: "))
  if (!is.null(x$why)) cat(wrap_lines(x$why, indent = "  ", first = "Why: "))
  if (!is.null(x$candidates)) {
    cat(wrap_lines("Candidates (cross-validated accuracy):", first = ""))
    print_candidates(x$candidates)
  }
  if (!is.null(x$alignment)) {
    cat(wrap_lines("Aligned combination (base kernels with non-zero weight):", first = ""))
    print(x$alignment, row.names = FALSE, digits = 4)
  }
  cat(wrap_lines(sprintf("Training points: %d, inputs: %s, learner coordinates: %s, map: %d x %d",
                         x$n, if (isTRUE(x$precomputed)) "precomputed Gram matrix" else x$n_features,
                         x$coords, x$dim[1], x$dim[2]), indent = "  ", first = ""))
  if (!is.null(x$rank_note)) cat(wrap_lines(sprintf("(%s)", x$rank_note), indent = "   ", first = "  "))
  if (!is.null(x$variance_kept)) {
    cat(wrap_lines(sprintf("share of the feature-space variance in the KPCA coordinates: %.4f",
                           x$variance_kept)))
  }
  if (!is.null(x$neighbors)) {
    cat(wrap_lines(x$neighbors, indent = "  ", first = "Target neighbours found in: "))
  }
  if (length(x$classes)) {
    cat("Class sizes:\n")
    print(x$classes)
  } else {
    cat("Class labels: none (fitted from pairs or chunklets; transform only)\n")
  }
  if (length(x$settings)) {
    cat(wrap_lines(paste(names(x$settings), vapply(x$settings, format, ""),
                         sep = " = ", collapse = ", "), indent = "  ", first = "Settings: "))
  }
  if (!is.null(x$convergence)) cat(wrap_lines(x$convergence, indent = "  ", first = "Optimizer: "))
  if (!is.null(x$solution)) cat(wrap_lines(x$solution))
  if (!is.null(x$objective)) {
    cat(sprintf("Objective: %.6g\n", x$objective))
    if (!is.null(x$objective_meaning)) {
      cat(wrap_lines(sprintf("(%s)", x$objective_meaning), indent = "   ", first = "  "))
    }
  }
  if (length(x$classes)) {
    cat(wrap_lines(accuracy_words(x$k, x$train_accuracy, short = FALSE), indent = "  ", first = ""))
  }
  invisible(x)
}

# What a fit without a kernel choice to plot had instead, for the error of
# plot(which = "kernel") and autoplot().
kernel_choice_words <- function(ch) {
  switch(ch$type %||% "none",
         kernel = if (isTRUE(ch$precomputed)) "a precomputed kernel, given" else "a kernel given as `kernel`",
         linear = "kernel = \"linear\", no kernel",
         unweighted = "the unweighted sum of `kernels`, no choice",
         "no kernel choice")
}

#' @rdname kmaha-model
#' @export
plot.kmaha_model <- function(x, which = c("embedding", "kernel"), dims = c(1, 2),
                             col = NULL, legend = TRUE, ...) {
  which <- match_choice(which, c("embedding", "kernel"), "which")
  if (which == "embedding") {
    plot_embedding(x$embedding, x$y, dims, col,
                   main = sprintf("%s embedding", model_label(x)),
                   legend = check_flag(legend, "legend"), ...)
    return(invisible(x))
  }
  ch <- x$kernel_choice
  if (!is.null(ch$alignment)) {
    plot(ch$alignment, ...)
  } else if (!is.null(ch$cv)) {
    plot(ch$cv, ...)
  } else {
    stopf("`which = \"kernel\"` needs a kmaha() fit whose kernel was chosen by alignment or cross-validation (this one: %s).",
          kernel_choice_words(ch))
  }
  invisible(x)
}

# Training points in two learned coordinates (or a strip chart when the map
# is one-dimensional), coloured by class, with equal scales on both axes
# (asp = 1: distances on the plot are the learned distances).  The legend
# goes in the right margin, widened for it, so it never covers a point, in
# as many columns as the height of the plot allows (see legend_fit()).
# Returns, invisibly, where the plot region and the legend are on the
# device (NDC: 0-1 from the bottom left), or NULL for the legend.
plot_embedding <- function(z, y, dims = c(1, 2), col = NULL, main = "", asp = 1,
                           legend = TRUE, ...) {
  if (is.null(y)) {
    # a model fitted from pairs or chunklets alone: no classes to colour by
    y <- factor(rep.int("training points", nrow(z)))
    legend <- FALSE
  }
  p <- nlevels(y)
  col <- col %||% grDevices::hcl.colors(max(p, 2L), "Dark 3")[seq_len(p)]
  if (length(col) < p) col <- rep_len(col, p)
  if (legend) {
    fit <- legend_fit(levels(y), symbol = TRUE)
    op <- graphics::par(mar = fit$mar)
    on.exit(graphics::par(op))
  }
  if (ncol(z) < 2L) {
    graphics::stripchart(split(z[, 1], y), col = col, pch = 19, method = "jitter",
                         main = main, xlab = colnames(z)[1] %||% "dim1", ...)
  } else {
    dims <- as.integer(dims)
    if (length(dims) != 2L || anyNA(dims) || any(dims < 1L) || any(dims > ncol(z))) {
      stopf("`dims` must be two coordinates between 1 and %d.", ncol(z))
    }
    graphics::plot(z[, dims[1]], z[, dims[2]], col = col[as.integer(y)], pch = 19,
                   xlab = colnames(z)[dims[1]] %||% paste0("dim", dims[1]),
                   ylab = colnames(z)[dims[2]] %||% paste0("dim", dims[2]),
                   main = main, asp = asp, ...)
  }
  box <- if (legend) legend_outside(levels(y), col = col, pch = 19, ncol = fit$ncol,
                                    cex = fit$cex)
  invisible(list(plot = plot_region_ndc(), legend = box))
}

# How a legend of `labels` fits in the right margin of the next plot: rows
# of `cex` text as many as the plot region's height holds, columns as
# needed, and the text shrunk (down to cex 0.5) while the columns would take
# more than 40% of the figure's width.  Returns the margins (`mar`, the
# current ones with the right margin widened for the legend), `ncol` and
# `cex`.
legend_fit <- function(labels, cex = 0.8, symbol = TRUE) {
  mar <- graphics::par("mar")
  fin <- graphics::par("fin")
  csi <- graphics::par("csi")
  cin <- graphics::par("cin")
  p <- length(labels)
  repeat {
    row_h <- cex * cin[2]
    height <- fin[2] - (mar[1] + mar[3]) * csi
    rows <- max(1L, floor(height / row_h) - 1L)
    ncol <- max(1L, ceiling(p / rows))
    col_w <- max(graphics::strwidth(labels, units = "inches", cex = cex)) +
      (if (symbol) 3 else 1.5) * cex * cin[1]
    width <- ncol * col_w + 0.15
    if (width <= 0.4 * fin[1] || cex <= 0.5) break
    cex <- max(0.5, cex * 0.9)
  }
  list(mar = c(mar[1:3], mar[4] + width / csi), ncol = ncol, cex = cex)
}

# A legend in the right margin of the current plot, outside the data.
# Entries without a line may give `lty` NA: it becomes 0 (no line), since
# legend() stops when every line type is NA.  Returns its box on the device
# (NDC), invisibly.
legend_outside <- function(legend, ncol = 1L, cex = 0.8, ...) {
  usr <- graphics::par("usr")
  args <- list(...)
  if (!is.null(args$lty)) args$lty[is.na(args$lty)] <- 0
  r <- do.call(graphics::legend, c(list(x = usr[2], y = usr[4], legend = legend, bty = "n",
                                        cex = cex, xpd = NA, ncol = ncol, xjust = 0,
                                        yjust = 1), args))$rect
  invisible(c(left = graphics::grconvertX(r$left, "user", "ndc"),
              right = graphics::grconvertX(r$left + r$w, "user", "ndc"),
              bottom = graphics::grconvertY(r$top - r$h, "user", "ndc"),
              top = graphics::grconvertY(r$top, "user", "ndc")))
}

# The plot region of the current plot on the device (NDC).
plot_region_ndc <- function() {
  usr <- graphics::par("usr")
  c(left = graphics::grconvertX(usr[1], "user", "ndc"),
    right = graphics::grconvertX(usr[2], "user", "ndc"),
    bottom = graphics::grconvertY(usr[3], "user", "ndc"),
    top = graphics::grconvertY(usr[4], "user", "ndc"))
}

#' The learned linear map and Mahalanobis matrix
#'
#' `transform_matrix()` returns the map \eqn{A} (d x D) expressed on the
#' *original* input columns of a linear model, so that distances in the
#' learned metric are \eqn{\|A(x_i - x_j)\|}; `mahalanobis_matrix()`
#' returns \eqn{M = A^\top A}. For models fitted with `scale = TRUE` the
#' column scaling is folded into \eqn{A}. For [kmaha()] fits the map acts on
#' the KPCA coordinates. A kernel-trick fit ([knca()], [klmnn()], [kdne()])
#' has no finite map on the inputs: its map acts on the kernel rows, which is
#' what [coef()][kmaha-model] returns.
#'
#' @param object A fitted model.
#' @return A numeric matrix.
#' @examples
#' fit <- dne(iris[, 1:4], iris$Species)
#' transform_matrix(fit)
#' mahalanobis_matrix(fit)
#' @export
transform_matrix <- function(object) UseMethod("transform_matrix")

#' @export
transform_matrix.kmaha_model <- function(object) {
  A <- object$L
  type <- object$feature_map$type
  if (type == "kernel_rows") {
    stopf("A kernel-trick fit (%s) has no finite map on the inputs: its map A = U Phi' acts on the kernel's feature space. coef() gives U, the map on the kernel rows; predict(type = \"transform\") embeds new points.",
          model_label(object))
  }
  if (type == "identity" && !is.null(object$prep)) {
    A <- sweep(A, 2L, object$prep$scale, "/")
  }
  A
}

#' @export
transform_matrix.default <- function(object) {
  stopf("transform_matrix() needs a model fitted by kmaha's learners (nca(), lmnn(), dne(), kmaha(), ...), not an object of class %s.",
        class(object)[1])
}

#' @rdname transform_matrix
#' @export
mahalanobis_matrix <- function(object) {
  A <- transform_matrix(object)
  crossprod(A)
}

# --------------------------------------------------------------------------
# Regression models (mode "regression": mlkr()): the response is numeric,
# predictions are k-NN regressions in the learned metric.

#' Predict with a learned metric for regression
#'
#' Maps new points through the fitted stages of a regression model ([mlkr()];
#' see [kmaha-model]) — the training scaling, the feature map and the
#' learned linear map — (`type = "transform"`), and predicts their response
#' as the weighted mean of the responses of their `k` nearest training
#' points in that space (`"response"`). Neighbours are ordered by distance,
#' equal distances by training row (as for classification, see
#' [knn_classify()]). The weights: `"distance"`, \eqn{1 / \|z - z_j\|} in
#' the learned coordinates \eqn{z} (neighbours at distance 0, if any, share
#' all the weight); `"uniform"`, the plain mean; `"kernel"`,
#' \eqn{\exp(-\|z - z_j\|^2)} (the Gaussian kernel MLKR fitted the map for;
#' with `k` = all training points, MLKR's own kernel regression).
#'
#' New data are matched and checked as for classifiers
#' ([predict.kmaha_model()]); a row with a missing value gives `NA`.
#' Without `newdata`: the training embedding (`"transform"`) or the
#' leave-one-out predictions of the training rows (each predicted from the
#' others), padded with `NA` for the rows a formula fit with
#' `na.action = na.exclude` left out.
#'
#' @param object A fitted regression model.
#' @param newdata New observations: a data frame for models fitted with a
#'   formula, otherwise a matrix or data frame with the training columns.
#' @param type `"response"` (the predictions) or `"transform"` (the learned
#'   coordinates).
#' @param k Number of neighbours; the fit's `k` by default.
#' @param weights `"distance"`, `"uniform"` or `"kernel"`; the fit's by
#'   default.
#' @param ... Must be empty.
#' @return A numeric vector with one prediction per row of `newdata`
#'   (`"response"`), or a matrix of coordinates (`"transform"`).
#' @examples
#' fit <- mlkr(mpg ~ ., data = mtcars[-(1:3), ])
#' predict(fit, mtcars[1:3, ])
#' predict(fit, mtcars[1:3, ], k = 3, weights = "uniform")
#' predict(fit, mtcars[1:3, ], type = "transform")
#' head(residuals(fit))  # leave-one-out
#' @export
predict.kmaha_regression <- function(object, newdata = NULL,
                                     type = c("response", "transform"),
                                     k = object$k, weights = object$weights, ...) {
  check_dots_empty("predict()", ...,
                   hint = "predict() of a regression model takes `newdata`, `type` (\"response\" or \"transform\"), `k` and `weights`.")
  type <- match_regression_type(type)
  k <- check_count(k, "k")
  weights <- check_weights(weights)
  ctx <- kmaha_context()
  if (is.null(newdata)) {
    if (type == "transform") return(stats::napredict(object$na.action, object$embedding))
    check_knn_k(k, nrow(object$embedding), self = TRUE)
    out <- pipeline_apply(object, NULL, "value", k, ctx, weights)
    names(out) <- rownames(object$embedding)
    return(stats::napredict(object$na.action, out))
  }
  check_knn_k(k, nrow(object$embedding))
  x <- newdata_matrix(object, newdata, object$n_features)
  ok <- rowSums(is.na(x)) == 0L
  out <- pipeline_apply_newdata(object, x, ok, if (type == "transform") "transform" else "value",
                                k, ctx, weights)
  if (type == "transform") return(newdata_embedding(object, x, ok, out))
  v <- rep(NA_real_, nrow(x))
  names(v) <- rownames(x)
  v[ok] <- out
  v
}

# predict() on `newdata`: the rows `ok` (those without missing values) of
# its matrix `x` through the model's pipeline (pipeline_apply()); NULL when
# there are none.
pipeline_apply_newdata <- function(object, x, ok, type, k, ctx, ...) {
  if (!any(ok)) return(NULL)
  tryCatch(pipeline_apply(object, x[ok, , drop = FALSE], type, k, ctx, ...),
           kmaha_numerical_error = function(e) {
             stopf("`newdata` is so far from the training data that its kernel values overflow; rescale it as the training data.")
           })
}

# The embedding of `newdata` (matrix `x`) from the transform `out` of its
# rows `ok`: NA rows where a value was missing.
newdata_embedding <- function(object, x, ok, out) {
  z <- matrix(NA_real_, nrow(x), ncol(object$embedding),
              dimnames = list(rownames(x), colnames(object$embedding)))
  if (any(ok)) z[ok, ] <- out
  z
}

# `type` of predict() for a regression model.
match_regression_type <- function(type) {
  opts <- c("response", "transform")
  if (identical(type, opts)) return("response")
  if (!is.character(type) || length(type) != 1L || is.na(type) || !type %in% opts) {
    stopf("`type` must be \"response\" or \"transform\" for a regression model, not %s.",
          if (is.character(type) && length(type) == 1L) dQuote(type, FALSE) else deparse1(type))
  }
  type
}

#' @rdname predict.kmaha_regression
#' @export
fitted.kmaha_regression <- function(object, type = c("response", "transform"),
                                    k = object$k, weights = object$weights, ...) {
  check_dots_empty("fitted()", ...)
  stats::predict(object, NULL, type = match_regression_type(type), k = k, weights = weights)
}

#' @rdname predict.kmaha_regression
#' @export
residuals.kmaha_regression <- function(object, ...) {
  check_dots_empty("residuals()", ...)
  loo <- pipeline_apply(object, NULL, "value", object$k, kmaha_context())
  res <- object$y - loo
  names(res) <- rownames(object$embedding)
  stats::naresid(object$na.action, res)
}

# The fit statistics in words: leave-one-out, and optimistic.
regression_words <- function(x, short = TRUE) {
  how <- sprintf("leave-one-out %d-NN regression, %s weights", as.integer(x$k), x$weights)
  if (short) {
    return(sprintf("training fit: RMSE %.4g, R^2 %.3f (%s; optimistic: the metric was learned on these points)",
                   x$loo_rmse, x$loo_r2, how))
  }
  sprintf("Training fit: RMSE %.4g, R^2 %.3f\n  (%s on the points the metric was learned from:\n  optimistic, not an estimate of the error on new data; use held-out data for that)",
          x$loo_rmse, x$loo_r2, how)
}

#' @export
print.kmaha_regression <- function(x, ...) {
  print_model_head(x)
  cat(wrap_lines(sprintf("%d training points, %d inputs, numeric response; map: %d x %d on the %s",
                         length(x$y), x$n_features, nrow(x$L), ncol(x$L),
                         model_coords_label(x))))
  note <- map_rank_note(x$L, x$settings)
  if (!is.null(note)) cat(wrap_lines(sprintf("(%s)", note)))
  words <- convergence_words(x$learner, x$convergence)
  if (!is.null(words)) cat(wrap_lines(words, indent = "    ", first = "  optimizer: "))
  if (!is.null(x$convergence$objective)) {
    meaning <- objective_meaning(x$learner)
    cat(wrap_lines(sprintf("%.6g%s", x$convergence$objective,
                           if (!is.null(meaning)) paste0(" (", meaning, ")") else ""),
                   indent = "    ", first = "  objective: "))
  }
  cat(wrap_lines(regression_words(x), indent = "    ", first = "  "))
  invisible(x)
}

#' @rdname kmaha-model
#' @export
summary.kmaha_regression <- function(object, ...) {
  cv <- object$convergence
  set <- object$settings
  set <- set[!vapply(set, function(v) is.null(v) || is.list(v) || length(v) != 1L, NA)]
  out <- list(
    title = model_title(object), label = model_label(object),
    kernel = model_kernel_label(object),
    why = model_choice_why(object),
    candidates = if (!is.null(object$kernel_choice$cv)) summary(object$kernel_choice$cv)$table,
    n = length(object$y), n_features = object$n_features,
    coords = model_coords_label(object), dim = dim(object$L),
    rank_note = map_rank_note(object$L, object$settings),
    start_scale = cv$start_scale,
    convergence = convergence_words(object$learner, cv, in_print = FALSE),
    objective = cv$objective,
    objective_meaning = objective_meaning(object$learner, short = FALSE),
    response = stats::quantile(object$y), k = object$k, weights = object$weights,
    settings = set, loo_rmse = object$loo_rmse, loo_r2 = object$loo_r2)
  out$words <- regression_words(object, short = FALSE)
  class(out) <- "summary.kmaha_regression"
  out
}

#' @export
print.summary.kmaha_regression <- function(x, ...) {
  # Every line of prose wraps at getOption("width"), as for classifiers.
  cat(wrap_lines(x$title, indent = "  ", first = ""))
  if (!is.null(x$kernel)) cat(wrap_lines(x$kernel, indent = "  ", first = "Kernel: "))
  if (!is.null(x$why)) cat(wrap_lines(x$why, indent = "  ", first = "Why: "))
  if (!is.null(x$candidates)) {
    cat(wrap_lines("Candidates (cross-validated RMSE, lower is better):", first = ""))
    print_candidates(x$candidates)
  }
  cat(wrap_lines(sprintf("Training points: %d, inputs: %s, learner coordinates: %s, map: %d x %d",
                         x$n, x$n_features, x$coords, x$dim[1], x$dim[2]),
                 indent = "  ", first = ""))
  if (!is.null(x$rank_note)) cat(wrap_lines(sprintf("(%s)", x$rank_note), indent = "   ", first = "  "))
  cat("Response (quantiles):\n")
  print(x$response)
  if (length(x$settings)) {
    cat(wrap_lines(paste(names(x$settings), vapply(x$settings, format, ""),
                         sep = " = ", collapse = ", "), indent = "  ", first = "Settings: "))
  }
  if (isTRUE(x$start_scale != 1)) {
    cat(wrap_lines(sprintf("multiplied by %.4g (median squared distance of the mapped training points 1)",
                           x$start_scale), indent = "  ", first = "Start: "))
  }
  if (!is.null(x$convergence)) cat(wrap_lines(x$convergence, indent = "  ", first = "Optimizer: "))
  if (!is.null(x$objective)) {
    cat(sprintf("Objective: %.6g\n", x$objective))
    if (!is.null(x$objective_meaning)) {
      cat(wrap_lines(sprintf("(%s)", x$objective_meaning), indent = "   ", first = "  "))
    }
  }
  cat(wrap_lines(x$words, indent = "  ", first = ""))
  invisible(x)
}

#' @export
plot.kmaha_regression <- function(x, which = c("embedding", "kernel"), dims = c(1, 2),
                                  col = NULL, legend = TRUE, ...) {
  which <- match_choice(which, c("embedding", "kernel"), "which")
  if (which == "kernel") return(NextMethod())
  # the response in five quantile bins, coloured from low to high
  br <- unique(stats::quantile(x$y, seq(0, 1, length.out = 6L)))
  bins <- cut(x$y, br, include.lowest = TRUE, dig.lab = 3)
  plot_embedding(x$embedding, bins, dims,
                 col %||% grDevices::hcl.colors(nlevels(bins), "viridis"),
                 main = sprintf("%s embedding (colour: response)", model_label(x)),
                 legend = check_flag(legend, "legend"), ...)
  invisible(x)
}
