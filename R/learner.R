# The fitted-object contract shared by the linear learners nca(), lmnn() and
# dne() (class c("kmaha_<method>", "kmaha_linear")), with predict, print,
# summary, plot and accessors.

# Build a fitted linear learner.
#   method      "nca", "lmnn", "dne", ...
#   L           d x D map acting on the *preprocessed* inputs
#   prep        list(center, scale) from fit_scaling(), or NULL
#   x           the preprocessed training inputs (n x D)
#   y           training labels (factor)
#   settings    named list of the arguments used
#   convergence list(iterations, objective, trace, converged, message)
new_linear_fit <- function(method, L, prep, x, y, settings, convergence,
                           call = NULL, feature_names = NULL, extra = list()) {
  L <- as.matrix(L)
  if (ncol(L) != ncol(x)) {
    stopf("internal: map has %d columns for %d features", ncol(L), ncol(x))
  }
  rownames(L) <- paste0("dim", seq_len(nrow(L)))
  colnames(L) <- feature_names %||% colnames(x)
  z <- apply_map(x, L)
  colnames(z) <- rownames(L)
  fit <- c(list(method = method, L = L, prep = prep, y = full_levels(y),
                embedding = z, settings = settings, convergence = convergence,
                train_accuracy = loo_accuracy(z, y),
                feature_names = feature_names %||% colnames(x),
                n_features = ncol(x), call = call), extra)
  class(fit) <- c(paste0("kmaha_", method), "kmaha_linear")
  fit
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# Leave-one-out kNN accuracy of the training embedding z: every fit reports
# it, labelled as optimistic (the metric was learned on the same points).
loo_accuracy <- function(z, y, k = 1L) {
  if (nrow(z) <= k) return(NA_real_)
  mean(knn_vote(z, y, z, k, self = TRUE)$class == y)
}

# x %*% t(L) through the core's Eigen product, which does not depend on the
# BLAS R is linked against; keeps the row names of x and uses the row names
# of L as column names, as %*% does.
apply_map <- function(x, L) {
  if (!is.double(x)) storage.mode(x) <- "double"
  if (!is.double(L)) storage.mode(L) <- "double"
  z <- core_apply_map(x, L, kmaha_context())
  dimnames(z) <- list(rownames(x), rownames(L))
  z
}

learner_label <- function(method) {
  switch(method, nca = "NCA", lmnn = "LMNN", dne = "DNE", knca = "KNCA",
         kdne = "KDNE", toupper(method))
}

#' Predict with a learned Mahalanobis metric
#'
#' `type = "transform"` maps new data into the learned space,
#' \eqn{z = L\,\mathrm{scale}(x)}; `"class"` and `"prob"` classify it by
#' k-nearest neighbours among the training points in that space (see
#' [knn_classify()] for the tie rule).
#'
#' **New data.** Columns are matched by name when the model was trained on
#' named columns (reordered columns work; a `newdata` without column names is
#' an error, since its columns could not be matched), by position otherwise.
#' A row with a missing value gives `NA` (a row of `NA`s for `"prob"` and
#' `"transform"`), as [stats::predict.lm()] does with `na.action = na.pass`;
#' a `newdata` with no rows gives a result of length 0.
#'
#' **Classes.** Predictions are factors with the levels of the training
#' labels, including levels that had no training rows (the fit warns about
#' them); such levels get probability 0. With `k = 1` the `"prob"` matrix
#' holds only 0 and 1 (the single neighbour's class); use a larger `k` for
#' graded vote fractions.
#'
#' @param object A fitted model from [nca()], [lmnn()] or [dne()].
#' @param newdata New observations: a data frame for models fitted with a
#'   formula, otherwise a matrix or data frame with the training columns.
#'   `NULL` returns the training embedding (for `"transform"`) or
#'   leave-one-out predictions.
#' @param type `"class"`, `"prob"` or `"transform"`.
#' @param k Number of neighbours for `"class"` and `"prob"`.
#' @param ... Unused.
#' @return A factor (`"class"`), a matrix of class-vote fractions
#'   (`"prob"`, one column per training level), or a matrix of coordinates
#'   (`"transform"`), with one element or row per row of `newdata`.
#' @examples
#' fit <- nca(Species ~ ., data = iris, max_iter = 50)
#' predict(fit, iris[c(1, 51, 101), ])
#' predict(fit, iris[c(1, 51, 101), ], type = "transform")
#' predict(fit, iris[c(1, 51, 101), ], type = "prob", k = 5)
#' @export
predict.kmaha_linear <- function(object, newdata = NULL,
                                 type = c("class", "prob", "transform"),
                                 k = 1, ...) {
  predict_embedded(object, newdata, match.arg(type), k, function(x) {
    apply_map(apply_scaling(x, object$prep), object$L)
  })
}

# The embedding function of a kernel-trick fit (KNCA, KDNE): new rows x go
# to U k(X_train, x), with the training scaling applied first.
kernel_trick_embed <- function(object) {
  function(x) {
    apply_map(core_kernel_matrix(object$kernel, apply_scaling(x, object$prep), object$x, kmaha_context()),
              object$U)
  }
}

# The body of every predict method (linear, kernel-trick and kmaha() fits):
# map newdata into the learned space with `embed` (a function of the
# numeric predictor matrix, given complete rows only), then classify by kNN
# against the training embedding.  Rows with missing values give NA; zero
# rows give an empty result of the right type.  newdata = NULL gives the
# training embedding or leave-one-out predictions.
predict_embedded <- function(object, newdata, type, k, embed) {
  k <- check_count(k, "k")
  if (is.null(newdata)) {
    if (type == "transform") return(object$embedding)
    res <- knn_vote(object$embedding, object$y, object$embedding, k, self = TRUE)
    return(if (type == "class") res$class else res$prob)
  }
  check_knn_k(k, nrow(object$embedding))
  x <- newdata_matrix(object, newdata, object$n_features)
  ok <- rowSums(is.na(x)) == 0L
  z <- matrix(NA_real_, nrow(x), ncol(object$embedding),
              dimnames = list(rownames(x), colnames(object$embedding)))
  if (any(ok)) z[ok, ] <- embed(x[ok, , drop = FALSE])
  if (type == "transform") return(z)
  res <- knn_predict(object$embedding, object$y, z, k)
  if (type == "class") res$class else res$prob
}

# What print() and summary() say about a fit, shared by every learner.

# The optimizer's outcome in words; NULL when unknown.  print() adds a
# pointer to summary(), which shows the solver's own message.
convergence_words <- function(method, cv, in_print = TRUE) {
  if (is.null(cv) || is.null(cv$iterations)) return(NULL)
  if (method %in% c("dne", "kdne")) {
    return("solved exactly by an eigen-decomposition (no iterations)")
  }
  unit <- if (method %in% c("nca", "knca")) "objective evaluations" else "iterations"
  if (isTRUE(cv$converged)) {
    sprintf("converged after %d %s", as.integer(cv$iterations), unit)
  } else {
    sprintf("stopped after %d %s before converging (raise `max_iter`%s)",
            as.integer(cv$iterations), unit, if (in_print) "; see summary()" else "")
  }
}

# What the objective value measures, per learner (short for print(), long
# for summary()); NULL for custom learners.
objective_meaning <- function(method, short = TRUE) {
  if (short) {
    return(switch(method,
      nca = , knca = "minus the expected number of points classified correctly",
      lmnn = "target-neighbour distances + impostor hinge losses",
      dne = , kdne = "same-class minus other-class neighbour distances",
      NULL))
  }
  switch(method,
    nca = "minus the expected number of training points that a stochastic nearest-neighbour rule classifies correctly, plus lambda * ||A||^2; lower is better",
    knca = "minus the expected number of training points that a stochastic nearest-neighbour rule classifies correctly, plus lambda * trace(U K U'); lower is better",
    lmnn = "(1 - mu) * squared distances to the target neighbours + mu * hinge losses of the impostors, plus lambda * trace(M); lower is better",
    dne = "half the sum of squared mapped distances over same-class neighbour pairs minus the same over other-class neighbour pairs; lower is better",
    kdne = "half the sum of squared mapped feature-space distances over same-class neighbour pairs minus the same over other-class neighbour pairs; lower is better",
    NULL)
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
  d <- settings$dim
  if (is.null(d) || !is.numeric(d) || nrow(map) >= d) return(NULL)
  sprintf("rank %d: the learned metric has %d negligible eigenvalue(s), so the map has fewer rows than `dim` = %d",
          nrow(map), as.integer(d) - nrow(map), as.integer(d))
}

# The optimizer, objective and accuracy lines of print().
print_fit_lines <- function(method, cv, accuracy, k = 1L) {
  words <- convergence_words(method, cv)
  if (!is.null(words)) cat("  optimizer: ", words, "\n", sep = "")
  if (!is.null(cv$objective)) {
    meaning <- objective_meaning(method)
    cat(sprintf("  objective: %.6g", cv$objective),
        if (!is.null(meaning)) paste0(" (", meaning, ")"), "\n", sep = "")
  }
  cat("  ", accuracy_words(k, accuracy), "\n", sep = "")
}

# The same in summary(), with the details: the solver's own message and
# the full meaning of the objective.
print_summary_fit_lines <- function(x, k = 1L) {
  if (!is.null(x$convergence)) {
    cat("Optimizer: ", x$convergence, "\n", sep = "")
    if (!is.null(x$message) && nzchar(x$message)) {
      cat("  solver message: ", x$message, "\n", sep = "")
    }
  }
  if (!is.null(x$objective)) {
    cat(sprintf("Objective: %.6g\n", x$objective))
    if (!is.null(x$objective_meaning)) cat("  (", x$objective_meaning, ")\n", sep = "")
  }
  cat(accuracy_words(k, x$train_accuracy, short = FALSE), "\n", sep = "")
}

#' @export
print.kmaha_linear <- function(x, ...) {
  cat(sprintf("<kmaha %s> linear Mahalanobis metric\n", learner_label(x$method)))
  cat(sprintf("  map: %d x %d   training points: %d   classes: %d\n",
              nrow(x$L), ncol(x$L), length(x$y), nlevels(x$y)))
  note <- map_rank_note(x$L, x$settings)
  if (!is.null(note)) cat("  (", note, ")\n", sep = "")
  print_fit_lines(x$method, x$convergence, x$train_accuracy)
  invisible(x)
}

#' @export
summary.kmaha_linear <- function(object, ...) {
  summarise_fit(object, object$L, object$settings)
}

# The summary shared by linear and kernel-trick fits (`map` is L or U).
summarise_fit <- function(object, map, settings) {
  cv <- object$convergence
  out <- list(method = object$method, dim = dim(map),
              n = length(object$y), classes = table(object$y),
              settings = settings,
              iterations = cv$iterations, objective = cv$objective,
              converged = cv$converged, message = cv$message,
              convergence = convergence_words(object$method, cv, in_print = FALSE),
              objective_meaning = objective_meaning(object$method, short = FALSE),
              rank_note = map_rank_note(map, settings),
              train_accuracy = object$train_accuracy,
              scaled = !is.null(object$prep))
  class(out) <- "summary.kmaha_linear"
  out
}

#' @export
print.summary.kmaha_linear <- function(x, ...) {
  cat(sprintf("%s metric: map %d x %d (%s)\n", learner_label(x$method),
              x$dim[1], x$dim[2],
              if (x$dim[1] < x$dim[2]) "low rank" else "full rank"))
  if (!is.null(x$rank_note)) cat("  (", x$rank_note, ")\n", sep = "")
  cat(sprintf("Training points: %d; inputs %s\n", x$n,
              if (x$scaled) "centred and scaled" else "used as given"))
  cat("Class sizes:\n")
  print(x$classes)
  set <- x$settings[!vapply(x$settings, function(v) is.null(v) || length(v) > 1L, NA)]
  if (length(set)) {
    cat("Settings: ", paste(names(set), vapply(set, format, ""), sep = " = ",
                            collapse = ", "), "\n", sep = "")
  }
  print_summary_fit_lines(x)
  invisible(x)
}

#' Plot a learned embedding
#'
#' Draws the training points in the first two learned coordinates (or a strip
#' chart when the map is one-dimensional), coloured by class, with equal
#' scales on both axes (`asp = 1`, so distances on the plot are the learned
#' distances; pass another `asp` to override).
#'
#' @param x A fitted model.
#' @param dims The two embedding coordinates to draw.
#' @param col Colours, one per class.
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' fit <- dne(Species ~ ., data = iris, dim = 2)
#' plot(fit)
#' @export
plot.kmaha_linear <- function(x, dims = c(1, 2), col = NULL, ...) {
  plot_embedding(x$embedding, x$y, dims, col,
                 main = sprintf("%s embedding", learner_label(x$method)), ...)
  invisible(x)
}

# Equal axis scales by default (asp = 1): distances on the plot are the
# learned distances.
plot_embedding <- function(z, y, dims = c(1, 2), col = NULL, main = "", asp = 1, ...) {
  col <- col %||% grDevices::hcl.colors(max(nlevels(y), 2L), "Dark 3")[seq_len(nlevels(y))]
  if (ncol(z) < 2L) {
    graphics::stripchart(split(z[, 1], y), col = col, pch = 19, method = "jitter",
                         main = main, xlab = "dim1", ...)
    return(invisible(NULL))
  }
  dims <- as.integer(dims)
  if (length(dims) != 2L || anyNA(dims) || any(dims < 1L) || any(dims > ncol(z))) {
    stopf("`dims` must be two coordinates between 1 and %d.", ncol(z))
  }
  graphics::plot(z[, dims[1]], z[, dims[2]], col = col[as.integer(y)], pch = 19,
                 xlab = colnames(z)[dims[1]] %||% paste0("dim", dims[1]),
                 ylab = colnames(z)[dims[2]] %||% paste0("dim", dims[2]),
                 main = main, asp = asp, ...)
  graphics::legend("topright", legend = levels(y), col = col, pch = 19,
                   bty = "n", cex = 0.8)
  invisible(NULL)
}

#' The learned linear map and Mahalanobis matrix
#'
#' `transform_matrix()` returns the map \eqn{A} (d x D) expressed on the
#' *original* input columns, so that distances in the learned metric are
#' \eqn{\|A(x_i - x_j)\|}; `mahalanobis_matrix()` returns
#' \eqn{M = A^\top A}. For models fitted with `scale = TRUE` the column scaling
#' is folded into \eqn{A}. For kernel models from [kmaha()] the map acts on the
#' KPCA coordinates.
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
transform_matrix.kmaha_linear <- function(object) {
  A <- object$L
  if (!is.null(object$prep)) A <- sweep(A, 2L, object$prep$scale, "/")
  A
}

#' @rdname transform_matrix
#' @export
mahalanobis_matrix <- function(object) {
  A <- transform_matrix(object)
  crossprod(A)
}
