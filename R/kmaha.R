# The KPCA trick (paper, Figure "KPCA trick"): kernel PCA on the training
# data, then any linear Mahalanobis learner on the KPCA coordinates, with the
# kernel chosen by cross-validation, kernel alignment or an unweighted sum.

#' Kernelized Mahalanobis distance learning by the KPCA trick
#'
#' Kernelizes a linear Mahalanobis distance learner without changing its
#' code: the training inputs are standardized, mapped to their kernel PCA
#' coordinates (all components whose eigenvalue exceeds `tol`, or the top
#' `rank`), and the learner is run on those coordinates. By the paper's
#' representer theorems this equals learning the metric in the kernel's
#' feature space. New points are classified by k nearest neighbours in the
#' learned space.
#'
#' **Learners.** `"nca"`, `"lmnn"` and `"dne"` call [nca()], [lmnn()] and
#' [dne()] (with `scale = FALSE`, since the KPCA coordinates are used as
#' given); `learner_args` passes their options, e.g. `lambda` for the
#' regularized RKNCA/RKLMNN, `dim`, or `k` (LMNN/DNE target neighbours). Any
#' R function `f(x, y, ...)` works too: it receives the KPCA coordinates and
#' the labels (plus `learner_args`) and must return a d x D map matrix, or an
#' object with one (an element `L` or a [transform_matrix()] method). If it
#' has a `targets` argument it receives the same-class target neighbours
#' chosen by `neighbors`.
#'
#' **Kernel choice.**
#' * a kernel object (e.g. `poly_kernel(2)`): used as given;
#' * `"linear"`: no KPCA at all — the original learner on the standardized
#'   inputs;
#' * `"cv"`: the best of `kernels` by stratified `cv_folds`-fold
#'   cross-validation of the whole pipeline ([cv_kernel()]; parallel through
#'   the user's [future::plan()], progress through \pkg{progressr}); by
#'   default with successive halving of the kernels after the first fold
#'   (`cv_strategy = "fast"`), or every kernel on every fold
#'   (`cv_strategy = "exhaustive"`);
#' * `"align"` (alias `"aligned"`), `"align_lp"`: the combination of `kernels`
#'   learned by kernel alignment, QP or LP ([align_kernels()]);
#' * `"unweighted"`: the plain sum of `kernels`.
#'
#' **Large n: Nystrom KPCA.** Exact KPCA needs the n x n Gram matrix, which
#' limits the KPCA trick to a few thousand training points. With
#' `landmarks` (a number m, or a matrix of landmark points in the units of
#' `x`) the KPCA step uses the Nystrom method of [kpca()] instead: O(n m^2)
#' time, O(n r + m^2) memory, and predictions that evaluate the kernel
#' against the m landmarks only. The learner then learns a metric in the
#' feature space restricted to the span of the landmarks (see [kpca()] for
#' what is preserved). `landmark_method` chooses m landmarks among the
#' training rows (`"random"` or kernel `"kmeans++"`). With `kernel = "cv"`
#' each fold draws its own landmarks ([cv_kernel()]); with `"align"` or
#' `"align_lp"` the alignment is computed on m training rows drawn at random
#' within classes ([align_kernels()]). Combine with `rank` (e.g. 100) to keep
#' the learner's input small.
#'
#' **Regularized KLMNN (the default for `learner = "lmnn"` with a kernel).**
#' With every KPCA component kept there are \eqn{n - 1} coordinates, and LMNN
#' can map each training class onto a single point, a unit away from the
#' other classes: its objective is zero, but the map amplifies the smallest
#' kernel principal components and test points land far from their class.
#' Unless `learner_args` sets `lambda`, kernelized LMNN is therefore the
#' paper's regularized RKLMNN, \eqn{\lambda\,\mathrm{tr}(M)} added to the
#' objective, with the scale-free weight \eqn{\lambda = \lambda_0 s}: \eqn{s}
#' is the total variance of the KPCA coordinates (the mean squared
#' feature-space distance of the training points to their centroid), so that
#' the same problem is solved whatever the scale of the kernel, and
#' \eqn{\lambda_0 = 1}. `learner_args = list(lambda = 0)` gives plain KLMNN.
#' A `lambda` given as a function is called with the learner's input
#' coordinates and replaced by its value. Linear LMNN (`kernel = "linear"`)
#' is not regularized by default.
#'
#' **Small classes** (LMNN and DNE, and learner functions that take
#' `targets`): each point wants `learner_args$k` same-class target
#' neighbours (3 by default); a class with fewer than `k + 1` members is used
#' as far as it goes, with one warning, and it is an error when no class has
#' `k + 1` members. NCA follows the same rule with `k = 1` (see [nca()]).
#'
#' **Numerically degenerate kernels**, whose Gram matrix is numerically the
#' identity or a constant on the training data (e.g. an RBF kernel whose
#' `sigma` is far too small or too large for the scale of the inputs), give a
#' warning from [kpca()].
#'
#' **Target neighbours** (LMNN and DNE): `neighbors = "feature"` finds them by
#' Euclidean distance in the KPCA coordinates, which equals the distance in
#' feature space (the paper's Proposition "parseval"); `"input"` finds them in
#' the standardized input space, as the paper does with the unweighted kernel.
#'
#' @param x A numeric matrix or data frame of inputs, one row per
#'   observation (numeric or logical columns; see [nca()] for other column
#'   types).
#' @param formula For the formula method, a formula such as `Species ~ .`
#'   (first, or named `formula =` as for the other learners).
#' @param y Class labels, one per row of `x`.
#' @param learner `"nca"`, `"lmnn"`, `"dne"` or a learner function (see
#'   Details).
#' @param kernel A kernel object, or one of `"align"`, `"aligned"`,
#'   `"align_lp"`, `"cv"`, `"unweighted"`, `"linear"`.
#' @param k Neighbours of the kNN classifier (used by `predict()`, the
#'   training accuracy and the cross-validation score).
#' @param learner_args A named list of further learner arguments.
#' @param neighbors `"feature"` or `"input"`: where LMNN/DNE target
#'   neighbours are found.
#' @param kernels Base kernels for `"cv"`, `"align"` and `"unweighted"`; the
#'   paper's 21 scaled RBF kernels by default.
#' @param cv_folds Number of cross-validation folds for `kernel = "cv"`.
#' @param cv_strategy `"fast"` or `"exhaustive"`: the `strategy` of
#'   [cv_kernel()] for `kernel = "cv"`.
#' @param scale Standardize the input columns by the training data (`TRUE`)
#'   or only centre them (`FALSE`).
#' @param rank,tol Passed to [kpca()]: number of components kept (`NULL`:
#'   all with eigenvalue above `tol` relative to the largest).
#' @param seed `NULL` or a number: the seed for the cross-validation folds
#'   (the global random state is restored afterwards).
#' @param landmarks `NULL` (exact KPCA), or the number of Nystrom landmarks,
#'   or a numeric matrix of landmark points with the columns of `x` (see
#'   Large n).
#' @param landmark_method `"random"` or `"kmeans++"`: how `landmarks = m`
#'   picks the landmarks (see [kpca()]).
#' @param ... For the formula method, arguments passed to the default method.
#'   Must be empty otherwise.
#' @param data,subset,na.action For the formula method: where to find the
#'   variables, which rows to use, and what to do with missing values.
#' @return An object of class `kmaha_fit` with elements `learner`, `kernel`
#'   (the kernel used, `NULL` for `"linear"`), `kernel_choice` (`type`, plus
#'   the `alignment` or `cv` object when applicable), `kpca` (the
#'   [kpca()] fit on the training data, `NULL` for `"linear"`), `L` (the
#'   learned map on the KPCA coordinates), `learner_fit` (what the learner
#'   returned), `embedding` (training points in the learned space), `targets`
#'   (LMNN/DNE target neighbours used), `prep` (input scaling), `y`, `k`,
#'   `convergence`, `train_accuracy` and `settings`. `y` keeps every level
#'   of the labels, including levels without rows (a warning names them), so
#'   predictions have the training levels. `train_accuracy` is the
#'   leave-one-out kNN accuracy on the training points in the learned space:
#'   it is optimistic, since the kernel and the metric were chosen on those
#'   same points (on pure noise it can be near 1), so estimate accuracy on
#'   held-out data or with [cv_kernel()] / caret resampling.
#' @seealso [predict.kmaha_fit()], [cv_kernel()], [align_kernels()],
#'   [kpca()].
#' @examples
#' # Two concentric rings: no linear metric separates them, a degree-2
#' # polynomial kernel does.
#' set.seed(1)
#' t <- runif(120, 0, 2 * pi)
#' r <- rep(c(1, 2), each = 60)
#' x <- cbind(r * cos(t), r * sin(t))
#' y <- factor(r)
#' fit <- kmaha(x, y, learner = "dne", kernel = poly_kernel(2), scale = FALSE)
#' fit
#' predict(fit, rbind(c(0, 1), c(0, 2)))
#'
#' # Aligned kernel on iris, formula interface
#' fit2 <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = "align")
#' summary(fit2)
#' @export
kmaha <- function(x, ...) UseMethod("kmaha")

#' @rdname kmaha
#' @export
kmaha.formula <- function(formula, data = NULL, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), kmaha.default, list(...))
}

#' @rdname kmaha
#' @export
kmaha.default <- function(x, y, learner = "nca", kernel = "align", k = 1,
                          learner_args = list(),
                          neighbors = c("feature", "input"),
                          kernels = paper_kernels(), cv_folds = 5,
                          scale = TRUE, rank = NULL, tol = 1e-8, seed = NULL,
                          cv_strategy = c("fast", "exhaustive"),
                          landmarks = NULL,
                          landmark_method = c("random", "kmeans++"), ...) {
  call <- match.call()
  check_dots_empty("kmaha()", ..., hint = "Pass learner options in `learner_args`.")
  neighbors <- match.arg(neighbors)
  cv_strategy <- match.arg(cv_strategy)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  k <- check_count(k, "k")
  if (k > nrow(x) - 1L) {
    stopf("`k` (%d) must be smaller than the number of training rows (%d).",
          k, nrow(x))
  }
  scale <- check_flag(scale, "scale")
  lrn <- resolve_learner(learner)
  learner_args <- check_learner_args(learner_args)
  user_learner_args <- learner_args
  check_learner_signature(lrn, learner_args)
  if (learner_wants_targets(lrn, learner_args)) {
    check_class_sizes(y, check_count(learner_args$k %||% 3L, "learner_args$k"),
                      "learner_args$k")
  }
  choice <- resolve_kernel_choice(kernel)
  if (lrn$builtin && lrn$name == "lmnn" && choice$type != "linear" &&
      is.null(learner_args$lambda)) {
    learner_args$lambda <- klmnn_lambda
  }
  if (choice$type %in% c("cv", "align", "align_lp", "unweighted")) {
    kernels <- check_kernel_list(kernels)
  }
  if (!is.null(rank)) rank <- check_count(rank, "rank")
  tol <- check_number(tol, "tol", nonneg = TRUE)
  cv_folds <- check_count(cv_folds, "cv_folds", lower = 2L)
  landmark_method <- match.arg(landmark_method)

  feature_names <- colnames(x)
  prep <- fit_scaling(x, scale)
  xs <- apply_scaling(x, prep)
  # Landmark points are given in the units of x: scale them like x.
  landmarks <- kmaha_landmarks(landmarks, x, prep)

  # 1. The kernel.
  kern <- NULL
  kinfo <- list(type = choice$type)
  switch(choice$type,
    kernel = {
      kern <- choice$kernel
    },
    cv = {
      cv <- cv_kernel(xs, y, learner, kernels, folds = cv_folds, k = k,
                      learner_args = learner_args, neighbors = neighbors,
                      rank = rank, tol = tol, seed = seed,
                      strategy = cv_strategy, landmarks = landmarks,
                      landmark_method = landmark_method)
      cv$learner <- lrn$label
      kern <- cv$kernel
      kinfo$cv <- cv
      kinfo$index <- cv$best
    },
    align = , align_lp = {
      # A degenerate combined kernel is reported once, by kpca() below.
      al <- withCallingHandlers(
        align_kernels(xs, y, kernels,
                      method = if (choice$type == "align") "qp" else "lp",
                      landmarks = if (is.matrix(landmarks)) nrow(landmarks) else landmarks),
        kmaha_degenerate_kernel = function(w) invokeRestart("muffleWarning"))
      kern <- al$kernel
      kinfo$alignment <- al
    },
    unweighted = {
      kern <- kernel_sum(kernels)
    })
  if (choice$type == "cv" && !is.null(seed)) kinfo$seed <- seed

  # 2. KPCA on the training data (none for "linear").
  kp <- NULL
  z <- xs
  if (!is.null(kern)) {
    kp <- kpca(xs, kernel = kern, rank = rank, tol = tol, landmarks = landmarks,
               landmark_method = landmark_method)
    z <- kp$coords
  }

  # 3. The learner on the coordinates.  Its errors speak of its input `x`:
  # say what that is here.
  coords <- if (is.null(kp)) {
    sprintf("%d standardized input columns", ncol(z))
  } else {
    sprintf("%d KPCA components", ncol(z))
  }
  if (!is.null(learner_args$dim) && is.numeric(learner_args$dim) &&
      length(learner_args$dim) == 1L && !is.na(learner_args$dim) &&
      learner_args$dim > ncol(z)) {
    stopf("`learner_args$dim` (%s) must not exceed the number of coordinates the learner receives: %s%s.",
          format(learner_args$dim), coords,
          if (is.null(kp)) "" else " (keep more with a smaller `tol` or a larger `rank`, or lower `dim`)")
  }
  lf <- tryCatch(
    run_learner(lrn, z, y, learner_args, input = if (neighbors == "input") xs),
    error = function(e) {
      stopf("%s on the %s (its `x`): %s", lrn$label, coords, conditionMessage(e))
    })
  A <- lf$map
  emb <- apply_map(z, A)
  colnames(emb) <- paste0("dim", seq_len(ncol(emb)))
  rownames(emb) <- rownames(x)
  conv <- if (is.list(lf$fit) && !is.null(lf$fit$convergence)) lf$fit$convergence

  fit <- list(
    learner = lrn$name, learner_label = lrn$label,
    kernel = kern, kernel_choice = kinfo, kpca = kp, L = A,
    learner_fit = lf$fit, embedding = emb, targets = lf$targets,
    prep = prep, y = full_levels(y), k = k, convergence = conv,
    train_accuracy = loo_accuracy(emb, y, k),
    feature_names = feature_names, n_features = ncol(x),
    settings = list(learner_args = user_learner_args, neighbors = neighbors,
                    cv_folds = cv_folds, cv_strategy = cv_strategy,
                    scale = scale, rank = rank,
                    tol = tol, seed = seed,
                    landmarks = if (!is.null(kp$landmarks)) nrow(kp$landmarks),
                    landmark_method = landmark_method),
    call = call)
  class(fit) <- "kmaha_fit"
  fit
}

# The default RKLMNN weight (see kmaha()): lambda0 times the total variance
# of the learner's input coordinates z.
klmnn_lambda0 <- 1
klmnn_lambda <- function(z) {
  klmnn_lambda0 * sum(colMeans(sweep(z, 2L, colMeans(z))^2))
}

# kmaha()'s `landmarks`: NULL, a count (checked by kpca()), or a matrix of
# points in the units of x, returned scaled like the inputs.
kmaha_landmarks <- function(landmarks, x, prep) {
  if (is.null(landmarks) || !(is.matrix(landmarks) || is.data.frame(landmarks))) {
    return(landmarks)
  }
  apply_scaling(check_landmark_points(landmarks, x), prep)
}

resolve_kernel_choice <- function(kernel) {
  if (inherits(kernel, "kmaha_kernel")) return(list(type = "kernel", kernel = kernel))
  opts <- c("align", "aligned", "align_lp", "cv", "unweighted", "linear")
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel) ||
      !(kernel %in% opts)) {
    stopf("`kernel` must be a kernel object such as rbf_kernel(1), or one of %s.",
          paste(dQuote(opts, FALSE), collapse = ", "))
  }
  type <- if (kernel == "aligned") "align" else kernel
  if (type == "linear") return(list(type = "linear", kernel = NULL))
  list(type = type)
}

# "KNCA", "LMNN" (kernel = "linear"), "kernelized custom learner", ...
kmaha_fit_label <- function(fit) {
  if (identical(fit$learner, "custom")) {
    return(if (is.null(fit$kpca)) "custom learner" else "kernelized custom learner")
  }
  paste0(if (is.null(fit$kpca)) "" else "K", fit$learner_label)
}

kmaha_kernel_label <- function(fit) {
  ch <- fit$kernel_choice
  switch(ch$type,
    kernel = format(fit$kernel),
    cv = sprintf("chosen by %d-fold CV: %s", ncol(ch$cv$accuracy), format(fit$kernel)),
    align = sprintf("aligned (QP), alignment %.3f", ch$alignment$alignment),
    align_lp = sprintf("aligned (LP), alignment %.3f", ch$alignment$alignment),
    unweighted = sprintf("unweighted sum of %d kernels", length(fit$kernel$kernels)))
}

#' Predict with a kernelized Mahalanobis metric
#'
#' Maps new points through the training scaling, the training KPCA and the
#' learned map (`type = "transform"`), and classifies them by k nearest
#' neighbours among the training points in that space (`"class"`, `"prob"`:
#' the fraction of the `k` neighbour votes per class; see [knn_classify()]
#' for ties). With `k = 1` the probabilities are only 0 or 1 (the single
#' neighbour's class); use a larger `k` for graded vote fractions.
#'
#' The rules for new data are those of [predict.kmaha_linear()]: columns
#' matched by name (a `newdata` without column names is an error when the
#' model was trained on named columns), `NA` for rows with missing values, a
#' result of length 0 for a `newdata` with no rows, and factors with every
#' training level.
#'
#' @param object A `kmaha_fit` from [kmaha()].
#' @param newdata New observations (a data frame for formula fits). `NULL`:
#'   the training embedding, or leave-one-out predictions on the training
#'   rows.
#' @param type `"class"`, `"prob"` or `"transform"`.
#' @param k Neighbours for the vote; the fit's `k` by default.
#' @param ... Unused.
#' @return A factor, a matrix of class probabilities (rows sum to 1; one
#'   column per training level) or a matrix of learned coordinates, with one
#'   element or row per row of `newdata`.
#' @examples
#' fit <- kmaha(Species ~ ., data = iris, learner = "dne",
#'              kernel = rbf_kernel(1))
#' predict(fit, iris[c(1, 51, 101), ])
#' predict(fit, iris[c(1, 51, 101), ], type = "prob", k = 5)
#' @export
predict.kmaha_fit <- function(object, newdata = NULL,
                              type = c("class", "prob", "transform"),
                              k = object$k, ...) {
  predict_embedded(object, newdata, match.arg(type), k,
                   function(x) kmaha_transform(object, x))
}

# Raw input rows -> learned coordinates.
kmaha_transform <- function(object, x) {
  xs <- apply_scaling(x, object$prep)
  coords <- if (is.null(object$kpca)) xs else predict(object$kpca, xs)
  z <- apply_map(coords, object$L)
  colnames(z) <- colnames(object$embedding)
  rownames(z) <- rownames(x)
  z
}

#' @rdname transform_matrix
#' @export
transform_matrix.kmaha_fit <- function(object) {
  A <- object$L
  rownames(A) <- colnames(object$embedding)
  if (is.null(object$kpca)) {
    A <- sweep(A, 2L, object$prep$scale, "/")
    colnames(A) <- object$feature_names
  } else {
    colnames(A) <- colnames(object$kpca$coords)
  }
  A
}

# The first line of print() and summary(): what was fitted, in words.
kmaha_fit_title <- function(fit) {
  if (is.null(fit$kpca)) {
    sprintf("%s on the %s inputs (kernel = \"linear\": no kernel, no KPCA)",
            fit$learner_label,
            if (isTRUE(fit$settings$scale)) "standardized" else "centred")
  } else {
    sprintf("%s by the KPCA trick (%s on kernel PCA coordinates)",
            kmaha_fit_label(fit), fit$learner_label)
  }
}

# The learner's objective in words, or NULL (custom learners).
kmaha_learner_method <- function(fit) {
  if (identical(fit$learner, "custom")) "custom" else fit$learner
}

#' @export
print.kmaha_fit <- function(x, ...) {
  cat("<kmaha fit> ", kmaha_fit_title(x), "\n", sep = "")
  if (!is.null(x$kpca)) cat(sprintf("  kernel: %s\n", kmaha_kernel_label(x)))
  cat(sprintf("  %d training points, %d inputs, %s -> learned dimension %d\n",
              length(x$y), x$n_features,
              if (is.null(x$kpca)) "no KPCA" else
                sprintf("%d KPCA components", ncol(x$kpca$coords)),
              ncol(x$embedding)))
  print_fit_lines(kmaha_learner_method(x), x$convergence, x$train_accuracy, x$k)
  invisible(x)
}

#' @export
summary.kmaha_fit <- function(object, ...) {
  ch <- object$kernel_choice
  chosen <- switch(ch$type,
    cv = list(index = ch$cv$best, sigma = ch$cv$curve$sigma[ch$cv$best],
              cv_accuracy = ch$cv$curve$mean[ch$cv$best]),
    align = , align_lp = list(alignment = ch$alignment$alignment,
                              nonzero = sum(ch$alignment$gamma > 0),
                              sigma = ch$alignment$sigma[ch$alignment$gamma > 0]),
    NULL)
  cv <- object$convergence
  method <- kmaha_learner_method(object)
  out <- list(title = kmaha_fit_title(object), learner = object$learner_label,
              kernel = if (is.null(object$kpca)) NULL else kmaha_kernel_label(object),
              choice = ch$type, chosen = chosen,
              n = length(object$y), n_features = object$n_features,
              kpca_rank = if (is.null(object$kpca)) NA_integer_ else ncol(object$kpca$coords),
              dim = ncol(object$embedding),
              neighbors = if (!is.null(object$targets)) object$settings$neighbors,
              iterations = cv$iterations, objective = cv$objective,
              converged = cv$converged, message = cv$message,
              convergence = convergence_words(method, cv, in_print = FALSE),
              objective_meaning = objective_meaning(method, short = FALSE),
              k = object$k, classes = table(object$y),
              train_accuracy = object$train_accuracy)
  class(out) <- "summary.kmaha_fit"
  out
}

#' @export
print.summary.kmaha_fit <- function(x, ...) {
  cat(x$title, "\n", sep = "")
  if (!is.null(x$kernel)) cat(sprintf("Kernel: %s\n", x$kernel))
  if (!is.null(x$chosen$sigma) && length(x$chosen$sigma)) {
    cat(sprintf("  sigma: %s\n", paste(format(x$chosen$sigma), collapse = ", ")))
  }
  if (!is.null(x$chosen$cv_accuracy)) {
    cat(sprintf("  CV accuracy of the chosen kernel: %.3f\n", x$chosen$cv_accuracy))
  }
  if (is.na(x$kpca_rank)) {
    cat(sprintf("Training points: %d, inputs: %d, learned dimension: %d\n",
                x$n, x$n_features, x$dim))
  } else {
    cat(sprintf("Training points: %d, inputs: %d, KPCA components: %d, learned dimension: %d\n",
                x$n, x$n_features, x$kpca_rank, x$dim))
  }
  if (!is.null(x$neighbors)) {
    cat(sprintf("Target neighbours found in: %s space\n", x$neighbors))
  }
  cat("Class sizes:\n")
  print(x$classes)
  print_summary_fit_lines(x, x$k)
  invisible(x)
}

#' Plot a kernelized fit
#'
#' `which = "embedding"` draws the training points in two learned
#' coordinates, coloured by class; `which = "kernel"` draws how the kernel was
#' chosen: the alignment weights (see [plot.kmaha_alignment()]) or the
#' cross-validation curve.
#'
#' @param x A `kmaha_fit` from [kmaha()].
#' @param which `"embedding"` or `"kernel"`.
#' @param dims The two coordinates drawn for the embedding.
#' @param col Colours, one per class.
#' @param ... Passed to the plotting function.
#' @return `x`, invisibly.
#' @examples
#' fit <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = "align")
#' plot(fit)
#' plot(fit, which = "kernel")
#' @export
plot.kmaha_fit <- function(x, which = c("embedding", "kernel"), dims = c(1, 2),
                           col = NULL, ...) {
  which <- match.arg(which)
  if (which == "embedding") {
    plot_embedding(x$embedding, x$y, dims, col,
                   main = sprintf("%s embedding", kmaha_fit_label(x)), ...)
    return(invisible(x))
  }
  ch <- x$kernel_choice
  if (!is.null(ch$alignment)) {
    plot(ch$alignment, ...)
  } else if (!is.null(ch$cv)) {
    plot(ch$cv, ...)
  } else {
    stopf("`which = \"kernel\"` needs a fit whose kernel was chosen by alignment or cross-validation (this one: %s).",
          ch$type)
  }
  invisible(x)
}
