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
  loo <- if (nrow(z) > 1L) knn_vote(z, y, z, 1L, self = TRUE)$class else y
  fit <- c(list(method = method, L = L, prep = prep, y = y, embedding = z,
                settings = settings, convergence = convergence,
                train_accuracy = mean(loo == y),
                feature_names = feature_names %||% colnames(x),
                n_features = ncol(x), call = call), extra)
  class(fit) <- c(paste0("kmaha_", method), "kmaha_linear")
  fit
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# x %*% t(L) through the core's Eigen product, which does not depend on the
# BLAS R is linked against; keeps the row names of x and uses the row names
# of L as column names, as %*% does.
apply_map <- function(x, L) {
  if (!is.double(x)) storage.mode(x) <- "double"
  if (!is.double(L)) storage.mode(L) <- "double"
  z <- cpp_apply_map(x, L)
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
#' @param object A fitted model from [nca()], [lmnn()] or [dne()].
#' @param newdata New observations: a data frame for models fitted with a
#'   formula, otherwise a matrix or data frame with the training columns.
#'   `NULL` returns the training embedding (for `"transform"`) or
#'   leave-one-out predictions.
#' @param type `"class"`, `"prob"` or `"transform"`.
#' @param k Number of neighbours for `"class"` and `"prob"`.
#' @param ... Unused.
#' @return A factor (`"class"`), a matrix of class-vote fractions
#'   (`"prob"`), or a matrix of coordinates (`"transform"`).
#' @examples
#' fit <- nca(Species ~ ., data = iris, max_iter = 50)
#' predict(fit, iris[c(1, 51, 101), ])
#' predict(fit, iris[c(1, 51, 101), ], type = "transform")
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
    apply_map(cpp_kernel_matrix(object$kernel, apply_scaling(x, object$prep), object$x),
              object$U)
  }
}

# The body every predict method shares: map newdata into the learned space
# with `embed` (a function of the numeric predictor matrix), then classify
# by kNN against the training embedding.  newdata = NULL gives the training
# embedding or leave-one-out predictions.
predict_embedded <- function(object, newdata, type, k, embed) {
  if (is.null(newdata)) {
    if (type == "transform") return(object$embedding)
    k <- check_count(k, "k")
    res <- knn_vote(object$embedding, object$y, object$embedding, k, self = TRUE)
    return(if (type == "class") res$class else res$prob)
  }
  x <- newdata_matrix(object, newdata, object$n_features)
  z <- embed(x)
  dimnames(z) <- list(rownames(x), colnames(object$embedding))
  if (type == "transform") return(z)
  k <- check_count(k, "k")
  res <- knn_vote(object$embedding, object$y, z, k)
  if (type == "class") res$class else res$prob
}

#' @export
print.kmaha_linear <- function(x, ...) {
  cv <- x$convergence
  cat(sprintf("<kmaha %s> linear Mahalanobis metric\n", learner_label(x$method)))
  cat(sprintf("  map: %d x %d   training points: %d   classes: %d\n",
              nrow(x$L), ncol(x$L), length(x$y), nlevels(x$y)))
  if (!is.null(cv$iterations)) {
    cat(sprintf("  iterations: %d   objective: %.6g   converged: %s\n",
                as.integer(cv$iterations), cv$objective,
                if (isTRUE(cv$converged)) "yes" else "no"))
  }
  cat(sprintf("  training accuracy (leave-one-out 1-NN): %.3f\n", x$train_accuracy))
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
  cat(sprintf("Training points: %d; inputs %s\n", x$n,
              if (x$scaled) "centred and scaled" else "used as given"))
  cat("Class sizes:\n")
  print(x$classes)
  set <- x$settings[!vapply(x$settings, function(v) is.null(v) || length(v) > 1L, NA)]
  if (length(set)) {
    cat("Settings: ", paste(names(set), vapply(set, format, ""), sep = " = ",
                            collapse = ", "), "\n", sep = "")
  }
  if (!is.null(x$iterations)) {
    cat(sprintf("Optimizer: %d iterations, final objective %.6g, %s%s\n",
                as.integer(x$iterations), x$objective,
                if (isTRUE(x$converged)) "converged" else "NOT converged",
                if (!is.null(x$message) && nzchar(x$message)) paste0(" (", x$message, ")") else ""))
  }
  cat(sprintf("Training accuracy (leave-one-out 1-NN): %.3f\n", x$train_accuracy))
  invisible(x)
}

#' Plot a learned embedding
#'
#' Draws the training points in the first two learned coordinates (or a strip
#' chart when the map is one-dimensional), coloured by class.
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

plot_embedding <- function(z, y, dims = c(1, 2), col = NULL, main = "", ...) {
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
                 main = main, ...)
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
