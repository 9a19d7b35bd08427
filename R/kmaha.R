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
#' learned space. By default (`kernel = "auto"`) the kernel, or no kernel at
#' all, is chosen by cross-validation of the whole pipeline.
#'
#' **Learners.** `"nca"`, `"lmnn"` and `"dne"` run the fitters of [nca()],
#' [lmnn()] and [dne()] on the KPCA coordinates (used as given, not
#' rescaled); `learner_args` passes their options, e.g. `lambda` for the
#' regularized RKNCA/RKLMNN, `dim`, or `k` (LMNN/DNE target neighbours). Any
#' R function `f(x, y, ...)` works too: it receives the KPCA coordinates and
#' the labels (plus `learner_args`) and must return a d x D map matrix, or an
#' object with one (an element `L` or a [transform_matrix()] method). If it
#' has a `targets` argument it receives the same-class target neighbours
#' chosen by `neighbors`.
#'
#' **Kernel choice.**
#' * `"auto"` (the default): one stratified `cv_folds`-fold
#'   cross-validation of the whole pipeline scores, on the same folds,
#'   every base kernel of `kernels` (with successive halving after the first
#'   fold), the plain 1-NN on the standardized inputs (`"Euclidean"`: no
#'   learned metric), the linear learner (`"linear"`), the kernel-alignment
#'   combination of `kernels` (QP) and their unweighted sum. A base kernel's
#'   score is smoothed over its neighbouring bandwidths (weights 1-2-1 along
#'   `sigma`), so that one lucky fold does not pick an isolated bandwidth;
#'   among equal best scores the middle of the plateau wins. A kernelized
#'   candidate is kept only when it beats the better of the two baselines
#'   (Euclidean, linear) by more than one standard error of their paired
#'   difference over the held-out points; otherwise that baseline is used.
#'   Euclidean 1-NN, in turn, replaces the linear learner only when it beats
#'   it by more than one such standard error.
#'   With more than 2000 training points (and neither `landmarks` nor `rank`
#'   given) the choice is made on a stratified subsample of 1000 rows with
#'   KPCA of rank at most 100, and the chosen pipeline is fitted on all rows
#'   with Nystrom KPCA (1000 landmarks, rank 100). `print()` says what was
#'   chosen and why; `kernel_choice$cv` holds every candidate's scores;
#' * `"cv"`: the best of `kernels` alone by the same cross-validation
#'   ([cv_kernel()]; parallel through the user's [future::plan()], progress
#'   through \pkg{progressr}); by default with successive halving of the
#'   kernels after the first fold (`cv_strategy = "fast"`), or every kernel
#'   on every fold (`cv_strategy = "exhaustive"`); the paper's CV column.
#'   Above 2000 rows it uses the subsample and Nystrom KPCA as `"auto"` does;
#' * a kernel object (e.g. `poly_kernel(2)`): used as given; so is a
#'   kernlab kernel (e.g. `kernlab::rbfdot(sigma = 0.1)`, translated into the
#'   equal built-in kernel where there is one) or an R function `k(x, y)` or
#'   [custom_kernel()], evaluated in R ([kernel-sources] says what is slow);
#' * `"precomputed"`: `x` is the n x n Gram matrix of the training points,
#'   used as given (`scale` does not apply, `neighbors` must be
#'   `"feature"`, no `landmarks`), and `predict()` takes the m x n kernel
#'   values of new points against the training points as `newdata`. The
#'   choices above and below choose among kernel objects only; to combine
#'   several Gram matrices, align them with [align_kernels()] (`kernels =
#'   "precomputed"`) and fit its `gram` as a precomputed kernel;
#' * `"linear"`: no KPCA at all — the original learner on the standardized
#'   inputs;
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
#'   types). With `kernel = "precomputed"`, the n x n Gram matrix of the
#'   training points.
#' @param formula For the formula method, a formula such as `Species ~ .`
#'   (first, or named `formula =` as for the other learners).
#' @param y Class labels, one per row of `x`.
#' @param learner `"nca"`, `"lmnn"`, `"dne"` or a learner function (see
#'   Details).
#' @param kernel A kernel object (a kernlab kernel or an R function too,
#'   see [kernel-sources]), or one of `"auto"`, `"align"`, `"aligned"`,
#'   `"align_lp"`, `"cv"`, `"unweighted"`, `"linear"`, `"precomputed"`.
#' @param k Neighbours of the kNN classifier (used by `predict()`, the
#'   training accuracy and the cross-validation score).
#' @param learner_args A named list of further learner arguments.
#' @param neighbors `"feature"` or `"input"`: where LMNN/DNE target
#'   neighbours are found.
#' @param kernels Base kernels for `"auto"`, `"cv"`, `"align"` and `"unweighted"`
#'   (kernel objects, kernlab kernels or R functions); the paper's 21 scaled
#'   RBF kernels by default.
#' @param cv_folds Number of cross-validation folds for `kernel = "auto"`
#'   and `"cv"`.
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
#' @return A fitted model of class `kmaha_fit` (and `kmaha_model`, with
#'   `kmaha_linear` when no kernel was used and `kmaha_kpca_trick`
#'   otherwise): the stages `prep` (input scaling), `feature_map` (`type`
#'   `"identity"`, `"kpca"` or `"nystrom"`, with the kernel, projection and
#'   centring statistics), `L` (the learned map on the feature map's
#'   coordinates), the reference `embedding` and labels `y`, `k`, the
#'   `targets` (LMNN/DNE target neighbours), `convergence`, `train_accuracy`,
#'   `kernel_choice` (`type`, plus the `cv` or `alignment` object and the
#'   reason for the choice when one was made) and `settings`, plus the
#'   learner's own diagnostics. `y` keeps every level of the labels,
#'   including levels without rows (a warning names them), so predictions
#'   have the training levels. `train_accuracy` is the leave-one-out kNN
#'   accuracy on the training points in the learned space: it is optimistic,
#'   since the kernel and the metric were chosen on those same points (on
#'   pure noise it can be near 1), so estimate accuracy on held-out data or
#'   with [cv_kernel()] / caret resampling. See [kmaha-model] for
#'   `predict()`, `print()`, `summary()`, `plot()` and the other methods.
#' @param num_threads `NULL` (the option `kmaha.num_threads`, else the
#'   environment variable `KMAHA_NUM_THREADS`, else 2) or the number of
#'   threads of the compiled code for this fit.
#' @seealso [kmaha-model], [cv_kernel()], [align_kernels()], [kpca()].
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
#'
#' # The default: the kernel (or none) chosen by cross-validation
#' fit3 <- kmaha(Species ~ ., data = iris, learner = "dne", seed = 1)
#' fit3$kernel_choice$cv
#' @export
kmaha <- function(x, ...) UseMethod("kmaha")

#' @rdname kmaha
#' @export
kmaha.formula <- function(formula, data = NULL, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), kmaha.default, list(...), "kmaha")
}

#' @rdname kmaha
#' @export
kmaha.default <- function(x, y, learner = "nca", kernel = "auto", k = 1,
                          learner_args = list(),
                          neighbors = c("feature", "input"),
                          kernels = paper_kernels(), cv_folds = 5,
                          scale = TRUE, rank = NULL, tol = 1e-8, seed = NULL,
                          cv_strategy = c("fast", "exhaustive"),
                          landmarks = NULL,
                          landmark_method = c("random", "kmeans++"),
                          num_threads = NULL, ...) {
  call <- model_call(match.call(), "kmaha")
  check_dots_empty("kmaha()", ..., hint = "Pass learner options in `learner_args`.")
  neighbors <- match.arg(neighbors)
  cv_strategy <- match.arg(cv_strategy)
  landmark_method <- match.arg(landmark_method)
  choice <- resolve_kernel_choice(kernel)
  pre <- isTRUE(choice$precomputed)
  x <- if (pre) check_precomputed_gram(x, "x", if (!is.null(y) && is.null(dim(y))) length(y)) else
    check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  k <- check_count(k, "k")
  if (k > nrow(x) - 1L) {
    stopf("`k` (%d) must be smaller than the number of training rows (%d).",
          k, nrow(x))
  }
  scale <- check_flag(scale, "scale")
  ctx <- kmaha_context(num_threads)
  learner_args <- check_learner_args(learner_args)
  spec <- learner_spec(learner, learner_args)
  if (spec$wants_targets) check_class_sizes(y, spec$target_k, "learner_args$k")
  if (choice$type %in% c("cv", "align", "align_lp", "unweighted", "auto")) {
    kernels <- check_kernel_list(kernels)
    check_nystrom_kernels(kernels, landmarks, "kernels")
  }
  if (pre) {
    if (!is.null(landmarks)) {
      stopf("`landmarks` (the Nystrom method) needs kernel values against landmark points, which a precomputed Gram matrix does not give; use exact KPCA (landmarks = NULL).")
    }
    if (neighbors == "input") {
      stopf("`neighbors = \"input\"` finds target neighbours in the input space, which a precomputed kernel does not have; use neighbors = \"feature\".")
    }
  } else if (choice$type == "kernel") {
    check_nystrom_kernels(choice$kernel, landmarks)
  }
  if (!is.null(rank)) rank <- check_count(rank, "rank")
  tol <- check_number(tol, "tol", nonneg = TRUE)
  cv_folds <- check_count(cv_folds, "cv_folds", lower = 2L)
  if (!is.null(seed)) seed <- check_number(seed, "seed")
  if (choice$type %in% c("cv", "auto") && !is.null(learner_args$targets)) {
    stopf("`learner_args$targets` fixes the target neighbours by row, but kernel = \"%s\" refits the learner on subsets of the rows; let kmaha() find them (`learner_args$k`).",
          choice$type)
  }

  kmaha_fit_choices(x, y, list(choice), spec, ctx, k = k, learner_args = learner_args,
                    neighbors = neighbors, kernels = kernels, cv_folds = cv_folds,
                    scale = scale, rank = rank, tol = tol, seed = seed,
                    cv_strategy = cv_strategy, landmarks = landmarks,
                    landmark_method = landmark_method, call = call)[[1]]
}

# The body of kmaha() on checked arguments, for one kernel choice or for
# kernel = "cv" and "auto" together (the reproduction's two CV columns,
# which share their cross-validation): one model per choice, each exactly
# what kmaha() with that choice alone returns.
kmaha_fit_choices <- function(x, y, choices, spec, ctx, k, learner_args, neighbors,
                              kernels, cv_folds, scale, rank, tol, seed,
                              cv_strategy, landmarks, landmark_method, call = NULL) {
  # A precomputed Gram matrix is used as given.
  pre <- any(vapply(choices, function(ch) isTRUE(ch$precomputed), NA))
  prep <- if (pre) NULL else fit_scaling(x, scale)
  xs <- apply_scaling(x, prep)
  # Landmark points are given in the units of x: scale them like x.
  landmarks <- kmaha_landmarks(landmarks, x, prep)
  base <- list(rank = rank, tol = tol, landmarks = landmarks,
               landmark_method = landmark_method)
  # Large n: kernel = "auto" or "cv" at their defaults choose on a subsample
  # and fit with Nystrom KPCA (exact KPCA of every row would not fit).
  if (length(choices) == 1L && choices[[1]]$type %in% c("auto", "cv") && !pre &&
      nrow(x) > auto_large$n && is.null(landmarks) && is.null(rank)) {
    base$large <- auto_large
  }

  # 1. The feature map: the kernel, chosen or given.
  sels <- choose_feature_maps(choices, xs, y, spec, kernels, base, k = k,
                              folds = cv_folds, strategy = cv_strategy,
                              seed = seed, neighbors = neighbors, ctx = ctx)

  # 2. The pipeline on all the training data, each from the same random
  # state (Nystrom landmarks and random starts draw from it).
  restore <- save_rng()
  lapply(sels, function(sel) {
    restore()
    p <- fit_pipeline(xs, y, sel$fspec, sel$spec %||% spec, ctx,
                      neighbors = sel$neighbors %||% neighbors,
                      warn = !isTRUE(sel$quiet), label_errors = TRUE,
                      standardized = isTRUE(scale) && !pre)
    new_model(p, y, k, prep, sel$spec %||% spec, class = "kmaha_fit",
              settings = list(learner_args = learner_args, neighbors = neighbors,
                              cv_folds = cv_folds, cv_strategy = cv_strategy,
                              scale = if (pre) NA else scale, rank = rank, tol = tol,
                              seed = seed,
                              landmarks = if (!is.null(p$feature$landmarks)) nrow(p$feature$landmarks),
                              landmark_method = landmark_method),
              call = call, feature_names = colnames(x), n_features = ncol(x),
              kernel_choice = sel$info, ctx = ctx)
  })
}

# kernel = "auto" above `n` training rows (without `landmarks` or `rank`):
# choose on a stratified subsample of `n_choose` rows with KPCA of rank at
# most `rank`, fit on all rows with Nystrom KPCA (`landmarks`, `rank`).
auto_large <- list(n = 2000L, n_choose = 1000L, landmarks = 1000L, rank = 100L)

# kmaha()'s `landmarks`: NULL, a count (checked by kpca()), or a matrix of
# points in the units of x, returned scaled like the inputs.
kmaha_landmarks <- function(landmarks, x, prep) {
  if (is.null(landmarks) || !(is.matrix(landmarks) || is.data.frame(landmarks))) {
    return(landmarks)
  }
  apply_scaling(check_landmark_points(landmarks, x), prep)
}

kernel_choices <- c("auto", "align", "aligned", "align_lp", "cv", "unweighted", "linear",
                    "precomputed")

resolve_kernel_choice <- function(kernel) {
  if (inherits(kernel, "kmaha_kernel") || is.function(kernel)) {
    return(list(type = "kernel", kernel = check_kernel(kernel)))
  }
  if (identical(kernel, "precomputed")) {
    return(list(type = "kernel", kernel = precomputed_kernel(), precomputed = TRUE))
  }
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel) ||
      !(kernel %in% kernel_choices)) {
    stopf("`kernel` must be a kernel object such as rbf_kernel(1), or one of %s; kernlab kernels and R functions k(x, y) work too (see ?`kernel-sources`).",
          paste(dQuote(kernel_choices, FALSE), collapse = ", "))
  }
  type <- if (kernel == "aligned") "align" else kernel
  list(type = type)
}
