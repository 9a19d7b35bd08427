#' Kernel principal component analysis
#'
#' Maps the rows of `x` to their coordinates on the principal components of
#' the feature space of `kernel` (kernel PCA). This is the first step of the
#' KPCA trick of the paper: any Mahalanobis learner run on these coordinates
#' learns a kernelized metric (see [kmaha()]).
#'
#' The Gram matrix \eqn{K} is centred in feature space,
#' \eqn{K_c = HKH} with \eqn{H = I - 11^\top/n}, and decomposed as
#' \eqn{K_c = V \Lambda V^\top}. The training coordinates are
#' \eqn{V\Lambda^{1/2}} and a new point with kernel row \eqn{k} (against the
#' training points) is centred with the *training* column means and grand
#' mean of \eqn{K} and projected as \eqn{k_c^\top V \Lambda^{-1/2}}.
#' Eigenvalues are those of \eqn{K_c} itself (not \eqn{K_c / n}).
#'
#' Components whose eigenvalue is at most `tol` times the largest are
#' dropped, so rank-deficient kernels (duplicated rows, a linear kernel with
#' more points than columns) lose exactly their null directions. With every
#' remaining component kept, squared distances between training coordinates
#' equal the feature-space distances
#' \eqn{k(x_i, x_i) + k(x_j, x_j) - 2k(x_i, x_j)} (the paper's
#' Proposition "parseval"), so 1-NN on the coordinates is 1-NN in feature
#' space. The components dropped by `tol` change squared distances by at
#' most twice the sum of their eigenvalues; use a smaller `tol` (e.g.
#' `1e-12`) for distances exact to rounding.
#'
#' **Degenerate kernels.** `kpca()` warns when the kernel is numerically
#' degenerate on `x` (checked on up to 256 evenly spaced rows): when its
#' Gram matrix is numerically the identity (every point equally far from
#' every other in feature space, e.g. an RBF kernel on inputs far too spread
#' out for its `sigma`) or numerically constant (all points at the same
#' place, inputs far too close together). The coordinates are then
#' meaningless for nearest neighbours: standardize the inputs or change the
#' kernel's parameters.
#'
#' **Solvers.** `"full"` reduces \eqn{K_c} to tridiagonal form (Eigen),
#' solves the tridiagonal problem with LAPACK's MRRR solver `dstevr` and
#' back-transforms only the eigenvectors that are kept: every component, or
#' only the top `rank` when `rank` is given. `"truncated"` computes only the top `rank` eigenpairs with the
#' Lanczos solver of the Spectra library, never forming \eqn{K_c}; it needs
#' `rank`. `"auto"` uses `"truncated"` when `rank` is given and either
#' `n >= 200` and `rank < n / 10`, or `n >= 500` and `rank < n / 5`; and
#' `"full"` otherwise, where the full decomposition is as fast (measured in
#' `bench/kpca.R`) and exact. If the Lanczos
#' iterations do not converge, the full solver is used instead (with a
#' warning). Component signs are fixed so that the largest-magnitude entry
#' of each eigenvector is positive, so both solvers return the same
#' coordinates.
#'
#' **Nystrom method (large n).** Exact KPCA needs the n x n Gram matrix
#' (3.2 GB at n = 20 000). `method = "nystrom"` (chosen by `"auto"` whenever
#' `landmarks` is given) works with m landmark points \eqn{z_1, \dots, z_m}
#' instead: with \eqn{W = k(Z, Z) = U S U^\top} and the kernel row
#' \eqn{c(x) = (k(x, z_1), \dots, k(x, z_m))}, the features
#' \eqn{f(x) = S^{-1/2} U^\top c(x)} are the coordinates of
#' \eqn{P\phi(x)}, the orthogonal projection of the feature vector onto the
#' span of \eqn{\phi(z_1), \dots, \phi(z_m)} (directions of \eqn{W} with
#' eigenvalue at most `tol` times the largest are dropped), and KPCA is the
#' PCA of these features. Time is O(n m^2) and memory O(n r + m^2) for r
#' kept components: the n x m kernel rows are never stored, and no n x n
#' matrix is formed in fitting or in [predict()].
#'
#' *Default rank under Nystrom.* With `rank = NULL` the Nystrom method keeps
#' every component above `tol` (at most m, the number of landmarks), as
#' exact KPCA does: the user's landmark count decides. Rules that keep only
#' the components carrying most of the variance cost accuracy, because
#' components of little variance can separate the classes (two thin
#' concentric rings under a wide RBF kernel: the radius): over
#' kernel-friendly data (thin rings, spirals, ringnorm), six of the paper's
#' datasets and Letter, two RBF bandwidths and 50 to 1000 landmarks,
#' keeping 95% of the landmark-span variance (at most 200 components,
#' kmaha 0.4.0's default) lost up to 0.05 of test accuracy against keeping
#' every component, 99% up to 0.018, and even 99.9% up to 0.028 with
#' KPCA-trick NCA (`bench/studies/nystrom-rank.R`). A learner's time grows with the
#' number of components, so pass a smaller `rank` for speed, as [kmaha()]
#' does above 2000 rows (down to `rank = 100` at 16 000): on Letter (16 000 training rows,
#' 1000 landmarks, `rbf_kernel(1)`) NCA took 18 s with 114 components
#' against 129 s with all 997, at the same accuracy (0.982 and 0.981),
#' but with `rbf_kernel(0.25)` 200 components lost 0.05. The fit's
#' `rank_rule` records the rule used.
#'
#' *What the KPCA trick keeps under Nystrom.* Squared distances between the
#' coordinates (all components kept) are
#' \eqn{\|P(\phi(x_i) - \phi(x_j))\|^2 \le \|\phi(x_i) - \phi(x_j)\|^2}:
#' feature-space distances are preserved exactly for differences that lie in
#' the landmark span — in particular between landmarks, and between all
#' training points when every training point is a landmark, in which case the
#' coordinates equal those of exact KPCA up to rotations within eigenspaces.
#' A learner run on the coordinates therefore learns a Mahalanobis metric in
#' the feature space restricted to the landmark span (the paper's
#' representer theorems applied to the projected points \eqn{P\phi(x_i)}).
#' `residual` reports the mean of \eqn{\|\phi(x_i) - P\phi(x_i)\|^2} over
#' the training points: what the span misses.
#'
#' *Landmark choice.* `landmarks = m` draws m distinct training rows:
#' `landmark_method = "random"` uniformly (R's random number generator, so
#' [set.seed()] reproduces it), `"kmeans++"` by kernel k-means++ seeding
#' (Oglic and Gaertner, 2017): the first uniformly, each next one with
#' probability proportional to its squared feature-space distance to the
#' nearest landmark chosen so far, which spreads the landmarks over the data
#' and usually leaves a smaller `residual` for the same m (O(n m D) extra
#' time). A matrix of points (with the columns of `x`) is used as given.
#'
#' **Kernels from elsewhere** ([kernel-sources]). `kernel` may also be a
#' kernlab kernel (translated into the built-in equivalent where there is
#' one, e.g. `kernlab::rbfdot(sigma)`), an R function `k(x, y)` or
#' [custom_kernel()] (evaluated in R: the Gram matrix, then the core's
#' decomposition; new points are projected in blocks of rows), or
#' `"precomputed"`: then `x` is the n x n Gram matrix of the training
#' points, no inputs are stored, and [predict()][predict.kmaha_kpca] takes
#' the m x n kernel values of new points against the training points. The
#' Nystrom method needs a kernel the core evaluates.
#'
#' **kernlab's `kpca()`.** kernlab has a `kpca()` too. When kernlab is
#' attached after kmaha, its `kpca()` masks this one (kmaha says so when
#' that happens), and a call meant for kmaha fails inside kernlab with
#' "'what' must be a function or character string". Call `kernel_pca()`,
#' an alias of this function that kernlab does not mask, or `kmaha::kpca()`.
#' Conversely, when kmaha is attached after kernlab, calls in kernlab's style
#' (a formula, `kpar`, `features`, a kernel name such as `"rbfdot"`) stop
#' with a message pointing to `kernlab::kpca()`.
#'
#' @param x Training data: a numeric matrix or data frame, one observation
#'   per row. KPCA does not rescale columns; standardize them first if their
#'   units differ. With `kernel = "precomputed"`, the n x n Gram matrix.
#' @param kernel A kernel object (see [kernels], [kernel_sum()]), a kernlab
#'   kernel, an R function of two points (see [kernel-sources]), or
#'   `"precomputed"`.
#' @param rank `NULL` (keep every component above `tol`, also with
#'   `landmarks`: see Nystrom method) or the maximum
#'   number of components, a whole number between 1 and `nrow(x)`. Fewer are
#'   kept when fewer eigenvalues exceed the tolerance.
#' @param tol Relative eigenvalue threshold, in (0, 1).
#' @param method `"auto"`, `"full"`, `"truncated"` (see Solvers) or
#'   `"nystrom"` (see Nystrom method).
#' @param landmarks `NULL` (exact KPCA), the number m of landmark points (a
#'   whole number between 2 and `nrow(x)`), or a numeric matrix of landmark
#'   points with the columns of `x` (at least 2 rows). Switches `"auto"` to
#'   the Nystrom method.
#' @param landmark_method How `landmarks = m` chooses the landmarks among
#'   the rows of `x`: `"random"` or `"kmeans++"` (see Nystrom method).
#' @param ... Must be empty (a misspelt argument, or one of kernlab's
#'   `kpca()`, is an error).
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @return An object of class `kmaha_kpca`, a list with
#'   * `coords`: the n x r training coordinates (columns `PC1`, ...);
#'   * `eigenvalues`: the r kept eigenvalues of \eqn{K_c}, decreasing;
#'   * `projection`: the n x r matrix \eqn{V\Lambda^{-1/2}} applied to
#'     centred kernel rows;
#'   * `col_means`, `grand_mean`: the training centring statistics;
#'   * `trace`: the trace of \eqn{K_c} (the sum of all its eigenvalues);
#'   * `rank`, `method` (the solver used), `kernel`, and `x` (the training
#'     data, needed to project new points).
#'
#'   For the Nystrom method, `method` is `"nystrom"`, `projection` is the
#'   m x r matrix applied to centred landmark kernel rows, `col_means` the
#'   mean landmark kernel row of the training points, `x` is `NULL`, and the
#'   fit also holds `landmarks` (the m x D points), `landmark_index` (their
#'   rows in `x`, `NULL` for a given matrix), `landmark_method`,
#'   `landmark_rank` (directions of \eqn{W} kept), `residual` and
#'   `eigen_solver` (`"full"` or `"truncated"`, for the r x r problem).
#' @references Oglic, D. and Gaertner, T. (2017). Nystrom method with kernel
#'   K-means++ samples as landmarks. *ICML*, PMLR 70, 2652--2660.
#' @seealso [predict.kmaha_kpca()], [plot.kmaha_kpca()], [kmaha()]
#' @examples
#' x <- scale(iris[, 1:4])
#' kp <- kpca(x, rbf_kernel(1))
#' kp
#' head(kp$coords[, 1:2])
#' # new points are projected with the training centring
#' predict(kp, x[c(1, 51, 101), ])[, 1:2]
#' # only the top 5 components
#' kpca(x, rbf_kernel(1), rank = 5)$eigenvalues
#' # Nystrom method with 30 landmarks chosen by kernel k-means++
#' set.seed(1)
#' kn <- kpca(x, rbf_kernel(1), landmarks = 30, landmark_method = "kmeans++")
#' kn
#' predict(kn, x[c(1, 51, 101), ])[, 1:2]
#' # a precomputed Gram matrix; new points as their kernel rows
#' K <- kernel_matrix(rbf_kernel(1), x[1:100, ])
#' kg <- kpca(K, "precomputed", rank = 3)
#' predict(kg, kernel_matrix(rbf_kernel(1), x[101:103, ], x[1:100, ]))
#' # kernel_pca() is the same function, under a name kernlab does not mask;
#' # kernlab kernels are accepted
#' if (requireNamespace("kernlab", quietly = TRUE)) {
#'   print(kernel_pca(x, kernlab::rbfdot(sigma = 0.5), rank = 2))
#' }
#' @export
kpca <- function(x, kernel = rbf_kernel(1), rank = NULL, tol = 1e-8,
                 method = c("auto", "full", "truncated", "nystrom"),
                 landmarks = NULL, landmark_method = c("random", "kmeans++"),
                 num_threads = NULL, ...) {
  kernlab_style <- "This is kmaha's kpca(); kernlab's is kernlab::kpca() (kmaha's takes a matrix `x`, a kernel object, `rank` and `tol`)."
  check_dots_empty("kpca()", ..., hint = kernlab_style)
  if (inherits(x, "formula")) {
    stopf("`x` is a formula, but kmaha's kpca() takes a numeric matrix or data frame. %s",
          kernlab_style)
  }
  if (is.character(kernel) && length(kernel) == 1L && !identical(kernel, "precomputed") &&
      grepl("dot$", kernel)) {
    stopf("`kernel` is the kernlab kernel name \"%s\". kmaha's kpca() takes kernel objects, kernlab's too: e.g. kernlab::%s(...) with its parameters. %s",
          kernel, kernel, kernlab_style)
  }
  kernel <- check_kernel(kernel, precomputed = TRUE)
  pre <- is_precomputed(kernel)
  x <- if (pre) check_precomputed_gram(x, "x") else check_x(x, "x")
  if (nrow(x) < 2L) stopf("`x` has %d row; kernel PCA needs at least 2.", nrow(x))
  method <- match_choice(method, c("auto", "full", "truncated", "nystrom"), "method")
  landmark_method <- match_choice(landmark_method, c("random", "kmeans++"), "landmark_method")
  if (!is.null(landmarks) && method %in% c("full", "truncated")) {
    stopf("`landmarks` is used only by the Nystrom method: use method = \"nystrom\" or \"auto\", not \"%s\".",
          method)
  }
  if (method == "nystrom" && is.null(landmarks)) {
    stopf("`method = \"nystrom\"` needs `landmarks`: a number of landmark points (e.g. 500) or a matrix of landmark points.")
  }
  check_nystrom_kernels(kernel, landmarks)
  ctx <- kmaha_context(num_threads)
  fit <- kpca_stage(x, kernel, rank, tol, method, landmarks, landmark_method, ctx)
  if (!is.null(fit$degenerate)) warn_degenerate(fit$degenerate)
  fit$degenerate <- NULL
  fit$kernel <- kernel
  fit$call <- match.call()
  class(fit) <- "kmaha_kpca"
  fit
}

#' @rdname kpca
#' @export
kernel_pca <- kpca

# The KPCA stage shared by kpca() and the pipeline's feature map (checked
# inputs): exact KPCA, or the Nystrom method when `landmarks` is given.  A
# kernel evaluated in R hands its training Gram matrix to the core; with a
# precomputed kernel x is the Gram matrix and no inputs are stored.  The
# result carries the kernel's degeneracy verdict (`degenerate`: NULL,
# "constant" or "identity"), which the core returns with the fit.
# A cross-validation fold fits and projects in one call: `newdata` (NULL,
# or held-out rows; for a precomputed kernel their kernel rows) come back
# projected as `new_coords`.  `gram`: NULL, or list(K, rows, new_rows), a
# Gram matrix of the kernel shared by the folds of a scoring, with the rows
# of x and of newdata in it (exact KPCA of a built-in kernel only).
kpca_stage <- function(x, kernel, rank, tol, method, landmarks, landmark_method, ctx,
                       newdata = NULL, gram = NULL) {
  if (!is.null(landmarks)) {
    check_nystrom_kernels(kernel, landmarks)
    fit <- kpca_nystrom(x, kernel, rank, tol, landmarks, landmark_method, ctx, newdata)
  } else {
    args <- kpca_check_args(nrow(x), rank, tol, method)
    pre <- is_precomputed(kernel)
    what <- if (pre) "the Gram matrix `x`: " else "`kernel` on `x`: "
    fit <- if (!is.null(gram)) {
      kpca_call(core_kpca_gram(gram$K[gram$rows, gram$rows, drop = FALSE], x, args$rank,
                               args$tol, args$method, ctx,
                               Kx = if (!is.null(newdata))
                                 gram$K[gram$new_rows, gram$rows, drop = FALSE]),
                what, n = nrow(x))
    } else if (kernel_in_core(kernel)) {
      kpca_call(core_kpca_kernel(kernel, x, args$rank, args$tol, args$method, ctx,
                                 newdata = newdata),
                what, n = nrow(x))
    } else {
      K <- if (pre) x else kernel_gram(kernel, x, NULL, ctx)
      Kx <- if (!is.null(newdata)) {
        if (pre) newdata else kernel_gram(kernel, newdata, x, ctx)
      }
      kpca_call(core_kpca_gram(K, if (!pre) x, args$rank, args$tol, args$method, ctx,
                               Kx = Kx),
                what, n = nrow(x))
    }
    fit <- kpca_finish(fit, args, rownames(x))
    fit$x <- if (pre) NULL else x
    if (pre) fit$n <- nrow(x)
  }
  if (is.null(newdata)) fit$new_coords <- NULL
  fit$kernel <- kernel
  fit
}

# The Nystrom branch of kpca(): landmarks, the fit, and its fields.
kpca_nystrom <- function(x, kernel, rank, tol, landmarks, landmark_method, ctx,
                         newdata = NULL) {
  args <- kpca_check_args(nrow(x), rank, tol, "auto")
  lm <- nystrom_landmarks(x, kernel, landmarks, landmark_method, ctx)
  # The default keeps every component above tol (see ?kpca, "Default rank
  # under Nystrom", and bench/studies/nystrom-rank.R for the rules measured).
  auto <- is.null(rank)
  if (auto) args$rank <- nrow(lm$points)
  fit <- kpca_call(core_kpca_nystrom(kernel, x, lm$points, args$rank, args$tol,
                                     args$method, ctx, newdata = newdata))
  fit$rank_rule <- if (auto) "every component above tol" else "given"
  fit <- kpca_finish(fit, args, rownames(x), rownames(lm$points))
  fit$eigen_solver <- fit$method
  fit$method <- "nystrom"
  fit$landmarks <- lm$points
  fit$landmark_index <- lm$index
  fit$landmark_method <- lm$method
  fit$x <- NULL
  fit
}

# A matrix (or data frame) of landmark points with the columns of x.
check_landmark_points <- function(landmarks, x) {
  z <- check_x(landmarks, "landmarks")
  if (ncol(z) != ncol(x)) {
    stopf("`landmarks` has %d columns but `x` has %d; landmark points need the columns of `x`.",
          ncol(z), ncol(x))
  }
  if (!is.null(colnames(x)) && !is.null(colnames(z)) &&
      !identical(colnames(z), colnames(x))) {
    stopf("`landmarks` must have the columns of `x` in the same order.")
  }
  colnames(z) <- colnames(x)
  z
}

# Landmark points for the Nystrom method: a matrix of points with the
# columns of x, or m rows of x chosen at random or by kernel k-means++.
nystrom_landmarks <- function(x, kernel, landmarks, landmark_method, ctx) {
  n <- nrow(x)
  if (is.matrix(landmarks) || is.data.frame(landmarks)) {
    z <- check_landmark_points(landmarks, x)
    if (nrow(z) < 2L) stopf("`landmarks` must hold at least 2 landmark points (rows).")
    return(list(points = z, index = NULL, method = "given"))
  }
  if (!is_count(landmarks) || landmarks < 2 || landmarks > n) {
    stopf("`landmarks` must be a number of landmark points between 2 and the number of rows of `x` (%d), or a numeric matrix of landmark points.",
          n)
  }
  m <- as.integer(landmarks)
  idx <- switch(landmark_method,
    random = sort(sample.int(n, m)),
    "kmeans++" = core_kmeanspp_landmarks(kernel, x, m, stats::runif(m), ctx))
  list(points = x[idx, , drop = FALSE], index = idx, method = landmark_method)
}

#' Project new points onto kernel principal components
#'
#' Computes the kernel rows of `newdata` against the training points, centres
#' them with the training statistics and projects them on the components
#' kept by [kpca()]. For the training rows themselves the result equals
#' `object$coords`. New points are processed in blocks of rows, so memory
#' does not grow with `nrow(newdata)` times the number of training points;
#' for the Nystrom method only kernel values against the landmarks are
#' computed.
#'
#' @param object A `kmaha_kpca` object from [kpca()].
#' @param newdata New observations with the training columns (a matrix or a
#'   data frame); `NULL` returns the training coordinates. For a precomputed
#'   kernel, the m x n matrix of kernel values of the new points (rows)
#'   against the n training points (columns).
#' @param ... Unused.
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @return A `nrow(newdata)` by `object$rank` matrix of coordinates.
#' @examples
#' kp <- kpca(iris[1:100, 1:4], rbf_kernel(0.5), rank = 3)
#' predict(kp, iris[101:103, 1:4])
#' @export
predict.kmaha_kpca <- function(object, newdata = NULL, num_threads = NULL, ...) {
  check_dots_empty("predict()", ...,
                   hint = "predict() of a kpca() fit takes `newdata` and `num_threads` only.")
  ctx <- kmaha_context(num_threads)
  if (is.null(newdata)) return(object$coords)
  if (identical(object$method, "nystrom")) {
    z0 <- object$landmarks
    x <- check_newdata(newdata, colnames(z0), ncol(z0))
  } else if (is_precomputed(object$kernel)) {
    x <- check_precomputed_rows(newdata, length(object$col_means),
                                rownames(object$projection))
  } else {
    x <- check_newdata(newdata, colnames(object$x), ncol(object$x))
  }
  if (anyNA(x)) {
    stopf("`newdata` contains missing values; a kpca() fit projects complete rows only.")
  }
  # the fit is the feature-map stage of a pipeline without a map
  stage <- object
  stage$type <- if (identical(object$method, "nystrom")) "nystrom" else "kpca"
  z <- tryCatch(pipeline_apply(list(feature_map = stage), x, "transform", 1L, ctx),
                kmaha_numerical_error = function(e) {
                  stopf("`newdata` is so far from the training data that its kernel values overflow; rescale it as the training data.")
                })
  dimnames(z) <- list(rownames(x), colnames(object$coords))
  z
}

#' @export
print.kmaha_kpca <- function(x, ...) {
  cat(wrap_lines(format(x$kernel), indent = "  ", first = "<kmaha KPCA> "))
  nys <- identical(x$method, "nystrom")
  inputs <- if (nys) ncol(x$landmarks) else if (is.null(x$x)) "Gram matrix" else ncol(x$x)
  cat(wrap_lines(sprintf("training points: %d, inputs: %s, components kept: %d (%s solver)",
                         nrow(x$coords), inputs, x$rank, x$method)))
  if (nys) {
    cat(wrap_lines(sprintf("landmarks: %d (%s), landmark rank %d; mean squared distance to their span: %.4g",
                           nrow(x$landmarks), x$landmark_method, x$landmark_rank, x$residual)))
    if (!is.null(x$rank_rule) && x$rank_rule != "given") {
      cat(wrap_lines(sprintf("components: %s", x$rank_rule)))
    }
  }
  show <- utils::head(x$eigenvalues, 6L)
  cat(wrap_lines(sprintf("leading eigenvalues: %s%s",
                         paste(formatC(show, digits = 4, format = "g"), collapse = " "),
                         if (length(x$eigenvalues) > length(show)) " ..." else "")))
  if (x$trace > 0) {
    cat(wrap_lines(sprintf("share of %s variance kept: %.4f",
                           if (nys) "the landmark span's" else "feature-space",
                           sum(x$eigenvalues) / x$trace)))
  }
  invisible(x)
}

#' Plot a kernel PCA
#'
#' `type = "coords"` draws the training points on two kernel principal
#' components, coloured by the class labels `y` when given (a strip chart if
#' only one component was kept). `type = "spectrum"` draws the kept
#' eigenvalues as shares of the total feature-space variance (the trace of
#' the centred Gram matrix), with their cumulative share.
#'
#' @param x A `kmaha_kpca` object.
#' @param y Optional class labels of the training rows, for colouring.
#' @param type `"coords"` or `"spectrum"`.
#' @param dims The two components to draw.
#' @param col Colours, one per class (or one colour without `y`).
#' @param ... Passed to [graphics::plot()].
#' @return `x`, invisibly.
#' @examples
#' kp <- kpca(scale(iris[, 1:4]), rbf_kernel(1))
#' plot(kp, y = iris$Species)
#' plot(kp, type = "spectrum")
#' @export
plot.kmaha_kpca <- function(x, y = NULL, type = c("coords", "spectrum"),
                            dims = c(1, 2), col = NULL, ...) {
  type <- match_choice(type, c("coords", "spectrum"), "type")
  if (type == "spectrum") {
    share <- x$eigenvalues / x$trace
    r <- length(share)
    leg <- c("component", "cumulative")
    fit <- legend_fit(leg)
    op <- graphics::par(mar = fit$mar)
    on.exit(graphics::par(op))
    graphics::plot(seq_len(r), share, type = "h", lwd = 3,
                   col = col %||% "grey40", ylim = c(0, 1),
                   xlab = "component", ylab = "share of variance",
                   main = "KPCA eigenvalue spectrum", ...)
    graphics::lines(seq_len(r), cumsum(share), type = "b", pch = 19, cex = 0.5)
    legend_outside(leg, lty = 1, lwd = c(3, 1), col = c(col %||% "grey40", "black"),
                   ncol = fit$ncol, cex = fit$cex)
    return(invisible(x))
  }
  if (is.null(y)) {
    y <- factor(rep("all", nrow(x$coords)))
    col <- col %||% "grey30"
    plot_embedding(x$coords, y, dims, col, main = "KPCA coordinates", ...)
  } else {
    y <- check_y(y, nrow(x$coords), "y", min_classes = 1L)
    plot_embedding(x$coords, y, dims, col, main = "KPCA coordinates", ...)
  }
  invisible(x)
}

kpca_check_args <- function(n, rank, tol, method) {
  method <- match_choice(method, c("auto", "full", "truncated"), "method")
  if (!is.null(rank)) {
    if (!is.numeric(rank) || length(rank) != 1L || is.na(rank) ||
        !is.finite(rank) || rank != round(rank) || rank < 1) {
      stopf("`rank` must be NULL or a single whole number >= 1.")
    }
    if (rank > n) {
      stopf("`rank` (%d) must not exceed the number of training points (%d).",
            as.integer(rank), n)
    }
    rank <- as.integer(rank)
  }
  if (!is.numeric(tol) || length(tol) != 1L || is.na(tol) || !(tol > 0 && tol < 1)) {
    stopf("`tol` must be a single number strictly between 0 and 1.")
  }
  if (method == "truncated" && is.null(rank)) {
    stopf("`method = \"truncated\"` computes only the top `rank` components: supply `rank`.")
  }
  list(rank = if (is.null(rank)) 0L else rank, tol = as.double(tol),
       method = method, requested = method)
}

# Core errors (classed, without a call) with their message led by `what`
# (the argument they concern, e.g. "`kernel` on `x`: "); a failed allocation
# of exact KPCA's n x n matrices points to the Nystrom method.
kpca_call <- function(expr, what = "", n = NULL) {
  tryCatch(expr, kmaha_error = function(e) {
    e$message <- if (!is.null(n) && inherits(e, "kmaha_memory_error")) {
      sprintf("Exact kernel PCA of %d points ran out of memory: it needs the %d x %d Gram matrix (%.2f GB) and a copy of it. For large n use the Nystrom method, e.g. kpca(x, kernel, landmarks = 1000) or kmaha(..., landmarks = 1000).",
              n, n, n, 8 * n^2 / 1e9)
    } else {
      paste0(what, conditionMessage(e))
    }
    stop(e)
  })
}

kpca_finish <- function(fit, args, row_names, proj_names = row_names) {
  if (isTRUE(fit$fallback)) {
    warnf("the truncated eigensolver did not converge after %d products; used the full eigendecomposition instead.",
          as.integer(fit$matvecs))
  }
  r <- length(fit$eigenvalues)
  pcs <- paste0("PC", seq_len(r))
  dimnames(fit$coords) <- list(row_names, pcs)
  dimnames(fit$projection) <- list(proj_names, pcs)
  fit$rank <- r
  fit$fallback <- NULL
  # the core's degeneracy verdict: "" when the kernel sees the data
  if (!is.null(fit$degenerate) && !nzchar(fit$degenerate)) fit$degenerate <- NULL
  fit
}

# The Nystrom method evaluates kernels in the core only.
check_nystrom_kernels <- function(kernels, landmarks, arg = "kernel") {
  if (is.null(landmarks)) return(invisible(NULL))
  if (inherits(kernels, "kmaha_kernel")) kernels <- list(kernels)
  for (k in kernels) {
    if (!kernel_in_core(k)) {
      stopf("`landmarks` (the Nystrom method) needs kernels the C++ core evaluates (rbf_kernel(), gaussian_kernel(), laplace_kernel(), poly_kernel(), linear_kernel(), their sums, and the kernlab kernels that translate into them); %s is %s. Use exact KPCA (landmarks = NULL).",
            if (length(kernels) > 1L) sprintf("one of `%s`", arg) else sprintf("`%s`", arg),
            if (is_precomputed(k)) "precomputed" else format(k))
    }
  }
  invisible(NULL)
}
