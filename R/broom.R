# broom's verbs for every result class of the package: tidy() (the parts
# of a result as a long data frame), glance() (one row per result) and
# augment() (data with the result's predictions), through the generics
# package, which broom and tidymodels share.

#' @importFrom generics tidy
#' @export
generics::tidy

#' @importFrom generics glance
#' @export
generics::glance

#' @importFrom generics augment
#' @export
generics::augment

#' Tidy a fitted kmaha model
#'
#' The \pkg{broom} verbs for fitted models (see
#' [kmaha-model]); the generics come from the \pkg{generics} package, so
#' they are the same functions as `broom::tidy()` and friends, and they
#' work whether or not \pkg{broom} is attached. All three return tibbles,
#' as broom's own methods do (`augment()` keeps row names of the data that
#' are not 1, ..., n in a first column `.rownames`).
#'
#' **`tidy()`** returns one part of the model, chosen by `matrix`:
#' * `"dimensions"` (the default): one row per learned dimension:
#'   `dimension`, `std.dev` (the standard deviation of the training points
#'   along it), `percent` (its share of the training points' total variance
#'   in the learned space), `cumulative` and `norm` (the Euclidean norm of
#'   its row of the map). The learned space is not ordered by variance (NCA
#'   and LMNN return the map as optimized), so `cumulative` follows the
#'   map's rows. This summary stays small for kernel fits, whose map reads
#'   up to one coordinate per training point.
#' * `"map"`: the learned linear map `coef(x)` in long form (d x D rows),
#'   one row per learned dimension and coordinate it reads: `dimension`
#'   (`"dim1"`, ...), `term` (the coordinate: an input column for a linear
#'   fit, a kernel principal component `"PC1"`, ... for the KPCA trick, a
#'   training row for the kernel trick) and `value`. For a linear fit,
#'   `input_value` is the same entry of [transform_matrix()], the map on the
#'   inputs in their original units (the input scaling folded in), which is
#'   what to read as the weight of an input column; it is `NA` for kernel
#'   fits, whose map has no finite form on the inputs. For a linear fit
#'   these are the weights of the input columns (as the coefficients of
#'   `tidy()` of a linear model); for a kernel fit the map has a row per
#'   learned dimension and a column per KPCA component or training point.
#' * `"embedding"`: the training points in the learned space in long form:
#'   `row` (the training row, or its name), `dimension` and `value`.
#'
#' **`glance()`** returns one row: `n` (training points), `classes`,
#'   `inputs` (input columns), `learner` (e.g. `"KNCA"`), `feature_map`
#'   (`"identity"`, `"kpca"`, `"nystrom"` or `"kernel_rows"`), `kernel`
#'   (the kernel in a few words, `NA` for a linear fit), `kernel_choice`
#'   (how [kmaha()] chose it: `"kernel"`, `"cv"`, `"auto"`, `"align"`,
#'   `"align_lp"`, `"unweighted"`, `"linear"`, or `NA` for the other
#'   learners), `dimension` and `coordinates` (the map is `dimension` x
#'   `coordinates`), `k`, `train_accuracy` (leave-one-out, optimistic: see
#'   [print()][kmaha-model]), `objective`, `converged`, `iterations`, and
#'   `cv_accuracy`, `cv_sd` (the mean and standard deviation over the folds
#'   of the chosen candidate's cross-validated accuracy, for a kernel chosen
#'   by cross-validation; else `NA`).
#'
#' **`augment()`** returns the rows of `data` (the training data of the
#'   fit) or of `newdata` with the model's predictions appended:
#'   `.pred_class`, one column `.pred_<class>` per class with the vote
#'   fractions of [predict()][predict.kmaha_model] `type = "prob"`, and the
#'   coordinates in the learned space `.dim1`, `.dim2`, ... For the training
#'   data (given as `data`, or by default the model frame of a formula fit)
#'   the predictions are the leave-one-out ones of [fitted()][kmaha-model]
#'   and the coordinates the stored training embedding; a matrix fit without
#'   `data` gives the training labels as `.class` instead. For `newdata` they
#'   are those of [predict()][predict.kmaha_model]. A model fitted from pairs
#'   or chunklets without class labels (see [mmc()], [rca()]) only
#'   transforms: its `augment()` appends the coordinates alone.
#'
#' @param x A fitted model (see [kmaha-model]).
#' @param matrix For `tidy()`: `"dimensions"` (the default), `"map"` or
#'   `"embedding"`.
#' @param data For `augment()`: the training data of the fit (rows in the
#'   order of the fit). Defaults to the model frame of a formula fit.
#' @param newdata For `augment()`: new observations, as for
#'   [predict()][predict.kmaha_model]; when given, `data` is ignored.
#' @param k For `augment()`: the number of neighbours of the predictions
#'   (the fit's `k` by default).
#' @param ... Unused.
#' @return A tibble.
#' @seealso [tidy.kmaha_cv()] and the other results' methods,
#'   [autoplot.kmaha_model()].
#' @examples
#' fit <- nca(Species ~ ., data = iris, dim = 2, max_iter = 50)
#' tidy(fit)
#' tidy(fit, matrix = "map")
#' glance(fit)
#' head(augment(fit))
#' augment(fit, newdata = iris[c(1, 51, 101), ], k = 5)
#'
#' kfit <- kmaha(Species ~ ., data = iris, learner = "dne",
#'               kernel = "cv", kernels = lapply(c(0.5, 1, 2), rbf_kernel),
#'               cv_folds = 3, seed = 1)
#' glance(kfit)
#' tidy(kfit)
#' nrow(tidy(kfit, matrix = "map"))  # the whole map: dimensions x components
#' @name tidy.kmaha_model
NULL

#' @rdname tidy.kmaha_model
#' @export
tidy.kmaha_model <- function(x, matrix = c("dimensions", "map", "embedding"), ...) as_tidy_tibble({
  check_dots_empty("tidy()", ...)
  matrix <- match_choice(matrix, c("dimensions", "map", "embedding"), "matrix")
  L <- x$L
  dims <- rownames(L) %||% paste0("dim", seq_len(nrow(L)))
  switch(matrix,
    map = {
      terms <- colnames(L) %||% as.character(seq_len(ncol(L)))
      input <- if (x$feature_map$type == "identity") transform_matrix(x) else
        matrix(NA_real_, nrow(L), ncol(L))
      data.frame(dimension = factor(rep(dims, times = ncol(L)), levels = dims),
                 term = factor(rep(terms, each = nrow(L)), levels = unique(terms)),
                 value = as.vector(L), input_value = as.vector(input),
                 stringsAsFactors = FALSE)
    },
    dimensions = {
      z <- x$embedding
      v <- apply(z, 2L, function(col) mean((col - mean(col))^2))
      share <- if (sum(v) > 0) v / sum(v) else rep(NA_real_, length(v))
      data.frame(dimension = factor(dims, levels = dims),
                 std.dev = if (nrow(z) > 1L) apply(z, 2L, stats::sd) else NA_real_,
                 percent = share, cumulative = cumsum(share),
                 norm = sqrt(rowSums(L^2)), row.names = NULL)
    },
    embedding = {
      z <- x$embedding
      rows <- rownames(z) %||% as.character(seq_len(nrow(z)))
      data.frame(row = rep(rows, times = ncol(z)),
                 dimension = factor(rep(dims, each = nrow(z)), levels = dims),
                 value = as.vector(z), stringsAsFactors = FALSE)
    })
})

#' @rdname tidy.kmaha_model
#' @export
glance.kmaha_model <- function(x, ...) as_tidy_tibble({
  check_dots_empty("glance()", ...)
  fm <- x$feature_map
  ch <- x$kernel_choice
  cv <- ch$cv
  conv <- x$convergence
  data.frame(
    n = stats::nobs(x), classes = nlevels(x$y), inputs = x$n_features %||% NA_integer_,
    learner = model_label(x), feature_map = fm$type,
    kernel = if (fm$type == "identity") NA_character_ else short_kernel_label(fm$kernel),
    kernel_choice = ch$type %||% NA_character_,
    dimension = nrow(x$L), coordinates = ncol(x$L), k = x$k,
    train_accuracy = x$train_accuracy %||% NA_real_,
    objective = as.numeric(conv$objective %||% NA_real_),
    converged = as.logical(conv$converged %||% NA),
    iterations = as.integer(conv$iterations %||% NA_integer_),
    cv_accuracy = if (!is.null(cv)) cv$curve$mean[cv$best] else NA_real_,
    cv_sd = if (!is.null(cv)) cv$curve$sd[cv$best] else NA_real_,
    stringsAsFactors = FALSE)
})

#' @rdname tidy.kmaha_model
#' @export
augment.kmaha_model <- function(x, data = NULL, newdata = NULL, k = x$k, ...) as_tidy_tibble(augmented = TRUE, {
  check_dots_empty("augment()", ...)
  k <- check_count(k, "k")
  # a model fitted from pairs or chunklets without class labels only
  # transforms: its coordinates, no class predictions
  labelled <- !is.null(x$y)
  cls <- prob <- NULL
  if (!is.null(newdata)) {
    out <- as_plain_frame(newdata, "newdata")
    if (labelled) {
      cls <- stats::predict(x, newdata, type = "class", k = k)
      prob <- stats::predict(x, newdata, type = "prob", k = k)
    }
    z <- stats::predict(x, newdata, type = "transform")
  } else {
    if (labelled) {
      cls <- stats::predict(x, NULL, type = "class", k = k)
      prob <- stats::predict(x, NULL, type = "prob", k = k)
    }
    z <- stats::predict(x, NULL, type = "transform")
    if (is.null(data)) {
      if (!is.null(x$terms)) {
        data <- stats::model.frame(x)
        # With na.exclude, the fitted values are padded to the rows of the
        # data; the model frame holds only the complete ones.
        if (inherits(x$na.action, "exclude")) {
          if (labelled) {
            cls <- cls[-x$na.action]
            prob <- prob[-x$na.action, , drop = FALSE]
          }
          z <- z[-x$na.action, , drop = FALSE]
        }
        out <- as_plain_frame(data, "data")
      } else {
        out <- if (labelled) data.frame(.class = x$y) else
          data.frame(row.names = seq_len(nrow(z)))
      }
    } else {
      out <- as_plain_frame(data, "data")
      if (nrow(out) != nrow(z)) {
        stopf("`data` must be the training data of the fit (%d rows), not %d rows; for other rows use `newdata`.",
              nrow(z), nrow(out))
      }
    }
  }
  if (labelled) {
    out$.pred_class <- cls
    prob <- unclass(prob)
    for (j in seq_len(ncol(prob))) out[[paste0(".pred_", colnames(prob)[j])]] <- prob[, j]
  }
  for (j in seq_len(ncol(z))) out[[paste0(".", colnames(z)[j] %||% paste0("dim", j))]] <- z[, j]
  out
})

# The verbs' results as tibbles (what broom's own methods return).  For
# augment(), row names of the data that are not just 1, ..., n become a
# first column `.rownames`, as broom does.
as_tidy_tibble <- function(d, augmented = FALSE) {
  rn <- if (augmented && !identical(rownames(d), as.character(seq_len(nrow(d))))) rownames(d)
  attr(d, "alpha") <- NULL
  attr(d, "run_info") <- NULL
  out <- tibble::as_tibble(d, .name_repair = "minimal")
  if (!is.null(rn)) out <- tibble::add_column(out, .rownames = rn, .before = 1L)
  out
}

#' Glance at and augment a regression model
#'
#' The \pkg{broom} verbs for regression models ([mlkr()]; see
#' [kmaha-model]); `tidy()` is that of every model ([tidy.kmaha_model()]:
#' the learned dimensions, the map or the embedding).
#'
#' **`glance()`** returns one row: `n`, `inputs`, `learner`, `feature_map`,
#' `kernel`, `kernel_choice` (as for classifiers), `dimension` and
#' `coordinates` (the map is `dimension` x `coordinates`), `k`, `weights`,
#' `loo_rmse` and `loo_r2` (the leave-one-out RMSE and \eqn{R^2} of the
#' model's k-NN regression on the training points, each predicted from the
#' others: optimistic, since the metric was learned from all of them),
#' `objective`, `converged` and `iterations`.
#'
#' **`augment()`** returns the rows of `data` (the training data; by default
#' the model frame of a formula fit, or for a matrix fit a column `.y` with
#' the response) with `.fitted` (the leave-one-out predictions of
#' [fitted()][fitted.kmaha_regression]), `.resid` (response minus `.fitted`)
#' and the learned coordinates `.dim1`, `.dim2`, ...; or the rows of
#' `newdata` with `.fitted` (the predictions of
#' [predict()][predict.kmaha_regression]) and the coordinates.
#'
#' @param x A fitted regression model.
#' @param data,newdata As for [augment.kmaha_model()].
#' @param k,weights The neighbours of the predictions (the fit's by default).
#' @param ... Unused.
#' @return A tibble (for `augment()`, row names of the data that are not
#'   1, ..., n in a first column `.rownames`, as for classifiers).
#' @examples
#' fit <- mlkr(mpg ~ ., data = mtcars[-(1:3), ])
#' glance(fit)
#' head(augment(fit))
#' augment(fit, newdata = mtcars[1:3, ])
#' @name glance.kmaha_regression
NULL

#' @rdname glance.kmaha_regression
#' @export
glance.kmaha_regression <- function(x, ...) {
  check_dots_empty("glance()", ...)
  fm <- x$feature_map
  conv <- x$convergence
  cv <- x$kernel_choice$cv
  as_tidy_tibble(data.frame(
    n = length(x$y), inputs = x$n_features %||% NA_integer_,
    learner = model_label(x), feature_map = fm$type,
    kernel = if (fm$type == "identity") NA_character_ else short_kernel_label(fm$kernel),
    kernel_choice = x$kernel_choice$type %||% NA_character_,
    # kmaha()'s choice: the pipeline chosen and its cross-validated RMSE
    chosen = if (!is.null(cv)) cv$curve$label[cv$best] else NA_character_,
    cv_rmse = if (!is.null(cv)) cv$curve$mean[cv$best] else NA_real_,
    dimension = nrow(x$L), coordinates = ncol(x$L), k = x$k, weights = x$weights,
    loo_rmse = x$loo_rmse, loo_r2 = x$loo_r2,
    objective = as.numeric(conv$objective %||% NA_real_),
    converged = as.logical(conv$converged %||% NA),
    iterations = as.integer(conv$iterations %||% NA_integer_),
    stringsAsFactors = FALSE))
}

#' @rdname glance.kmaha_regression
#' @export
augment.kmaha_regression <- function(x, data = NULL, newdata = NULL, k = x$k,
                                     weights = x$weights, ...) {
  check_dots_empty("augment()", ...)
  k <- check_count(k, "k")
  if (!is.null(newdata)) {
    out <- as_plain_frame(newdata, "newdata")
    out$.fitted <- unname(stats::predict(x, newdata, k = k, weights = weights))
    z <- stats::predict(x, newdata, type = "transform")
  } else {
    fit <- unname(stats::predict(x, NULL, k = k, weights = weights))
    z <- stats::predict(x, NULL, type = "transform")
    y <- stats::napredict(x$na.action, x$y)
    if (is.null(data)) {
      if (!is.null(x$terms)) {
        data <- stats::model.frame(x)
        # With na.exclude, the fitted values are padded to the rows of the
        # data; the model frame holds only the complete ones.
        if (inherits(x$na.action, "exclude")) {
          fit <- fit[-x$na.action]
          y <- y[-x$na.action]
          z <- z[-x$na.action, , drop = FALSE]
        }
        out <- as_plain_frame(data, "data")
      } else {
        out <- data.frame(.y = x$y)
      }
    } else {
      out <- as_plain_frame(data, "data")
      if (nrow(out) != length(fit)) {
        stopf("`data` must be the training data of the fit (%d rows), not %d rows; for other rows use `newdata`.",
              length(fit), nrow(out))
      }
    }
    out$.fitted <- fit
    out$.resid <- unname(y) - fit
  }
  for (j in seq_len(ncol(z))) out[[paste0(".", colnames(z)[j] %||% paste0("dim", j))]] <- z[, j]
  as_tidy_tibble(out, augmented = TRUE)
}

# A data frame of `d` (a matrix or data frame) with its row names kept.
as_plain_frame <- function(d, arg) {
  if (is.data.frame(d)) return(as.data.frame(d, stringsAsFactors = FALSE, optional = TRUE))
  if (is.matrix(d)) return(as.data.frame(d, stringsAsFactors = FALSE))
  stopf("`%s` must be a data frame or a matrix.", arg)
}

# --------------------------------------------------------------------------
# Kernel choice, alignment, kernel PCA and the reproduction.

#' Tidy kernel choices, kernel PCA fits and reproductions
#'
#' The \pkg{broom} verbs for the package's other
#' results (fitted models: see [tidy.kmaha_model()]). All return tibbles.
#'
#' **Cross-validation** ([cv_kernel()], or `kernel_choice$cv` of a
#' [kmaha()] fit with `kernel = "cv"` or `"auto"`): `tidy()` gives one row
#' per pipeline scored (candidate and learner): `candidate` (its label),
#' `kind` (`"kernel"`, `"linear"`, `"euclidean"`, `"unweighted"`, `"align"`),
#' `learner`, `sigma` (`NA` without one), `k` (the pipeline's best k), `mean`
#' and `sd` (of the fold accuracies at that k), `std.error` (`sd / sqrt(folds)`), `folds` (the
#' folds it was fitted on), `dropped` (by the fast strategy after the first
#' fold) and `chosen`. `glance()`: `learner`, `folds`, `candidates`,
#' `strategy`, `rule`, `fits`, `failed_fits`, `warned_fits`, `chosen` (the
#' chosen candidate's label), `accuracy` and `sd` (its mean and standard
#' deviation) and `k` (its k). `augment()` gives one row per training row of the
#' cross-validation (the rows of `data`, when given, else a column `.row`)
#' with `.fold` (the fold that held it out) and whether it was classified
#' correctly when held out: `.correct` for the chosen candidate, or, with
#' `candidates`, one column `.correct_<i>` per candidate i (the row of
#' `tidy()` and of `curve`); `NA` where the candidate was not fitted on the
#' row's fold (dropped by the fast strategy) or its fit failed. The mean of
#' a candidate's column within a fold is its accuracy on that fold.
#'
#' **Kernel alignment** ([align_kernels()]): `tidy()` gives one row per base
#' kernel: `kernel` (in a few words), `sigma`, `weight` (\eqn{\alpha_i}, on
#' the raw kernel), `gamma` (on the Frobenius-normalised kernel), `share`
#' (\eqn{\gamma_i / \sum_j \gamma_j}) and `alignment` (of the base kernel
#' alone). `glance()`: `method`, `alignment` (of the combination),
#' `best_single` (the best base kernel's alignment), `kernels`, `nonzero`
#' (kernels with non-zero weight), `objective`, `ridge`, `n`, `classes`.
#' `augment()` takes the training inputs (`data`: as given to
#' [align_kernels()], rows in order; for `kernels = "precomputed"` it may be
#' omitted, the combined Gram matrix is in the result) and their labels `y`,
#' and gives per row `.alignment`, its share
#' \eqn{\langle K_{i\cdot}, Y_{i\cdot}\rangle_F / (\|K\|_F \|Y\|_F)} of the
#' combined kernel's alignment with the labels (the shares sum to the
#' alignment on these rows: `glance()`'s `alignment` when they are the rows
#' it was computed on, all of them unless `landmarks` was used; low or
#' negative shares mark points the kernel places nearer to other classes
#' than to their own), and `.pred_class`, the class of its nearest other row
#' in the combined kernel's feature space (distance
#' \eqn{k(x_i, x_i) + k(x_j, x_j) - 2k(x_i, x_j)}: leave-one-out 1-NN with
#' the kernel alone, before any metric is learned).
#'
#' **Kernel PCA** ([kpca()]): `tidy()` with `matrix = "eigenvalues"` (the
#' default) gives one row per kept component: `component`, `eigenvalue`,
#' `percent` (its share of the trace of the centred Gram matrix: the
#' feature-space variance) and `cumulative`; `matrix = "coords"` the
#' training coordinates in long form (`row`, `component`, `value`).
#' `glance()`: `n`, `components`, `method`, `kernel`, `variance_kept`,
#' `landmarks` and `residual` (Nystrom, else `NA`). `augment()` appends
#' the coordinates `.PC1`, `.PC2`, ... to the training data (`data`,
#' whose rows must be those of the fit) or to `newdata`.
#'
#' **Reproduction** ([reproduce_paper()], [paper_reproduction()]):
#' `tidy()` gives one row per dataset, learner and kernel column: the
#' columns of [summary.kmaha_reproduction()] (our mean and standard
#' deviation over the splits, the paper's, their difference and the
#' win/draw/lose outcome against the linear learner). `glance()`: `cells`,
#' `datasets`, `learners`, `kernels`, `splits` (most splits of a cell),
#' `failed` (cells), `mean_abs_difference` (from the paper, over the cells
#' it reports), `beyond_0.05` (cells more than 0.05 from the paper), `win`,
#' `draw`, `lose` (kernel columns against the linear learner, by our paired
#' t-tests), and `elapsed_seconds`. `augment()` gives the rows of the
#' reproduction (one per dataset, split, learner and kernel choice) with
#' `.paper_mean` and `.paper_sd` (the paper's value for the cell's dataset,
#' learner and kernel choice, `NA` where the paper has none),
#' `.difference` (`accuracy - .paper_mean`), `.linear_accuracy` (the linear
#' learner's accuracy on the same dataset, split and learner, when it was
#' run) and `.gain` (`accuracy - .linear_accuracy`: the paired differences
#' behind the win/draw/lose rule).
#'
#' @param x A result: `kmaha_cv`, `kmaha_alignment`, `kmaha_kpca` or
#'   `kmaha_reproduction`.
#' @param matrix For a KPCA fit: `"eigenvalues"` or `"coords"`.
#' @param data,newdata For `augment()` of a KPCA fit: the training data, or
#'   new rows to project. `data` for a cross-validation: its training data
#'   (rows in order), to which the columns are added; for an alignment: the
#'   training inputs it was computed from.
#' @param candidates For `augment()` of a cross-validation: `NULL` (the
#'   chosen candidate, column `.correct`), `"all"`, or candidate numbers
#'   (rows of `tidy()`), one column `.correct_<i>` each.
#' @param y For `augment()` of an alignment: the training labels.
#' @param alpha For a reproduction: the level of the t-tests (see
#'   [summary.kmaha_reproduction()]).
#' @param ... Unused.
#' @return A tibble.
#' @examples
#' x <- scale(iris[, 1:4])
#' cv <- cv_kernel(x, iris$Species, "dne",
#'                 kernels = lapply(c(0.5, 1, 5), rbf_kernel), folds = 3,
#'                 seed = 1)
#' tidy(cv)
#' glance(cv)
#' # the rows the chosen kernel missed when they were held out
#' a <- augment(cv, data = iris)
#' a[!a$.correct, c("Species", ".fold")]
#'
#' al <- align_kernels(x, iris$Species, lapply(c(0.5, 1, 5), rbf_kernel))
#' tidy(al)
#' glance(al)
#' aa <- augment(al, data = x, y = iris$Species)
#' sum(aa$.alignment)  # glance(al)$alignment
#' table(aa$.pred_class, iris$Species)
#'
#' kp <- kpca(x, rbf_kernel(1), rank = 3)
#' tidy(kp)
#' head(augment(kp, data = iris))
#'
#' res <- reproduce_paper(datasets = "iris", learners = "dne",
#'                        kernels = c("linear", "unweighted"), splits = 2)
#' tidy(res)
#' glance(res)
#' head(augment(res))
#' @name tidy.kmaha_cv
NULL

#' @rdname tidy.kmaha_cv
#' @export
tidy.kmaha_cv <- function(x, ...) as_tidy_tibble({
  check_dots_empty("tidy()", ...)
  cu <- x$curve
  data.frame(candidate = cu$label, kind = cu$kind,
             learner = cu$learner %||% rep(NA_character_, nrow(cu)), sigma = cu$sigma,
             k = as.integer(cu[["k"]] %||% rep(x$k[1], nrow(cu))), mean = cu$mean, sd = cu$sd,
             std.error = ifelse(cu$n_ok > 0L, cu$sd / sqrt(cu$n_ok), NA_real_),
             folds = as.integer(cu$n_ok), dropped = cu$dropped,
             screen = cu$screen %||% rep(NA_real_, nrow(cu)),
             chosen = if (is.null(x$best)) rep(FALSE, nrow(cu)) else seq_len(nrow(cu)) == x$best,
             stringsAsFactors = FALSE)
})

#' @rdname tidy.kmaha_cv
#' @export
tidy.kmaha_scores <- function(x, ...) tidy.kmaha_cv(x, ...)

#' @rdname tidy.kmaha_cv
#' @export
glance.kmaha_cv <- function(x, ...) as_tidy_tibble({
  check_dots_empty("glance()", ...)
  warned <- if (NROW(x$warnings)) nrow(unique(x$warnings[c("candidate", "fold")])) else 0L
  data.frame(learner = x$learner %||% NA_character_, folds = ncol(x$accuracy),
             candidates = nrow(x$curve), strategy = x$strategy %||% NA_character_,
             rule = x$rule %||% NA_character_, fits = as.integer(x$n_fits),
             failed_fits = NROW(x$errors), warned_fits = as.integer(warned),
             chosen = if (is.null(x$best)) NA_character_ else x$curve$label[x$best],
             accuracy = if (is.null(x$best) || is_regression_scores(x)) NA_real_ else
               x$curve$mean[x$best],
             rmse = if (is.null(x$best) || !is_regression_scores(x)) NA_real_ else
               x$curve$mean[x$best],
             sd = if (is.null(x$best)) NA_real_ else x$curve$sd[x$best],
             k = if (is.null(x$best)) NA_integer_ else
               as.integer((x$curve[["k"]] %||% rep(x$k[1], nrow(x$curve)))[x$best]),
             stringsAsFactors = FALSE)
})

#' @rdname tidy.kmaha_cv
#' @export
glance.kmaha_scores <- function(x, ...) glance.kmaha_cv(x, ...)

#' @rdname tidy.kmaha_cv
#' @export
augment.kmaha_cv <- function(x, data = NULL, candidates = NULL, ...) as_tidy_tibble(augmented = TRUE, {
  check_dots_empty("augment()", ...)
  folds <- x$folds
  correct <- x$correct
  n <- length(folds)
  nc <- nrow(x$curve)
  if (is.null(correct) || !identical(dim(correct), c(n, nc))) {
    stopf("This cross-validation result holds no per-row correctness (`correct`): it was made by an older version of kmaha; run cv_kernel() again.")
  }
  idx <- if (is.null(candidates)) NULL else if (identical(candidates, "all")) seq_len(nc) else {
    if (!is.numeric(candidates) || !length(candidates) || anyNA(candidates) ||
        any(candidates != round(candidates)) || any(candidates < 1) || any(candidates > nc)) {
      stopf("`candidates` must be NULL (the chosen one), \"all\", or candidate numbers between 1 and %d (the rows of tidy()).",
            nc)
    }
    unique(as.integer(candidates))
  }
  out <- if (is.null(data)) data.frame(.row = seq_len(n)) else as_plain_frame(data, "data")
  if (nrow(out) != n) {
    stopf("`data` must be the training data of the cross-validation (%d rows, in order), not %d rows.",
          n, nrow(out))
  }
  out$.fold <- as.integer(folds)
  if (is.null(idx)) {
    out$.correct <- as.logical(correct[, x$best])
  } else {
    for (j in idx) out[[paste0(".correct_", j)]] <- as.logical(correct[, j])
  }
  out
})

#' @rdname tidy.kmaha_cv
#' @export
tidy.kmaha_alignment <- function(x, ...) as_tidy_tibble({
  check_dots_empty("tidy()", ...)
  data.frame(kernel = vapply(x$kernels, short_kernel_label, ""),
             sigma = x$sigma, weight = x$weights, gamma = x$gamma,
             share = x$gamma / sum(x$gamma), alignment = x$base_alignment,
             stringsAsFactors = FALSE)
})

#' @rdname tidy.kmaha_cv
#' @export
glance.kmaha_alignment <- function(x, ...) as_tidy_tibble({
  check_dots_empty("glance()", ...)
  data.frame(method = x$method, alignment = x$alignment,
             best_single = max(x$base_alignment), kernels = length(x$weights),
             nonzero = sum(x$weights > 0), objective = x$objective,
             ridge = x$ridge %||% 0, n = x$n, classes = x$classes,
             stringsAsFactors = FALSE)
})

#' @rdname tidy.kmaha_cv
#' @export
augment.kmaha_alignment <- function(x, data = NULL, y = NULL, ...) as_tidy_tibble(augmented = TRUE, {
  check_dots_empty("augment()", ...)
  if (is.null(y)) {
    stopf("augment() of an alignment needs the training labels `y` (as given to align_kernels()).")
  }
  if (is.null(x$kernel)) {
    # kernels = "precomputed": the combined Gram matrix is in the result.
    K <- x$gram
    n <- nrow(K)
    out <- if (is.null(data)) data.frame(.row = seq_len(n)) else as_plain_frame(data, "data")
    if (nrow(out) != n) {
      stopf("`data` must have the %d rows of the Gram matrices that were aligned, not %d.",
            n, nrow(out))
    }
    blocks <- list(seq_len(n))
    rows_of <- function(b) K[b, , drop = FALSE]
    diag_k <- diag(K)
  } else {
    if (is.null(data)) {
      stopf("augment() of an alignment needs `data`, the training inputs given to align_kernels() (rows in order).")
    }
    xm <- check_x(data, "data")
    n <- nrow(xm)
    out <- as_plain_frame(data, "data")
    ctx <- kmaha_context()
    # The combined kernel in blocks of rows, never all n x n at once.
    blocks <- split(seq_len(n), ceiling(seq_len(n) / 1000L))
    rows_of <- function(b) kernel_gram(x$kernel, xm[b, , drop = FALSE], xm, ctx)
    diag_k <- unlist(lapply(blocks, function(b) {
      diag(kernel_gram(x$kernel, xm[b, , drop = FALSE], NULL, ctx))
    }), use.names = FALSE)
  }
  y <- check_y(y, n, "y")
  p <- nlevels(y)
  yi <- as.integer(y)
  onehot <- outer(yi, seq_len(p), `==`) + 0
  off <- -1 / (p - 1)
  counts <- tabulate(yi, p)
  # ||Y||_F^2: n_c^2 same-class entries 1 and n_c (n - n_c) others
  # -1 / (p - 1), over the classes c.
  y_norm <- sqrt(sum(counts^2) + sum(counts * (n - counts)) * off^2)
  inner <- numeric(n)
  k_sq <- 0
  pred <- integer(n)
  for (b in blocks) {
    Kb <- rows_of(b)
    same <- (Kb %*% onehot)[cbind(seq_along(b), yi[b])]
    inner[b] <- same + off * (rowSums(Kb) - same)
    k_sq <- k_sq + sum(Kb^2)
    d <- outer(diag_k[b], diag_k, `+`) - 2 * Kb
    d[cbind(seq_along(b), b)] <- Inf
    pred[b] <- max.col(-d, ties.method = "first")
  }
  out$.alignment <- inner / (sqrt(k_sq) * y_norm)
  out$.pred_class <- factor(levels(y)[yi[pred]], levels = levels(y))
  out
})

#' @rdname tidy.kmaha_cv
#' @export
tidy.kmaha_kpca <- function(x, matrix = c("eigenvalues", "coords"), ...) as_tidy_tibble({
  check_dots_empty("tidy()", ...)
  matrix <- match_choice(matrix, c("eigenvalues", "coords"), "matrix")
  comps <- colnames(x$coords) %||% paste0("PC", seq_len(ncol(x$coords)))
  if (matrix == "eigenvalues") {
    ev <- x$eigenvalues
    share <- if (isTRUE(x$trace > 0)) ev / x$trace else rep(NA_real_, length(ev))
    data.frame(component = factor(comps, levels = comps), eigenvalue = ev,
               percent = share, cumulative = cumsum(share))
  } else {
    z <- x$coords
    rows <- rownames(z) %||% as.character(seq_len(nrow(z)))
    data.frame(row = rep(rows, times = ncol(z)),
               component = factor(rep(comps, each = nrow(z)), levels = comps),
               value = as.vector(z), stringsAsFactors = FALSE)
  }
})

#' @rdname tidy.kmaha_cv
#' @export
glance.kmaha_kpca <- function(x, ...) as_tidy_tibble({
  check_dots_empty("glance()", ...)
  nys <- identical(x$method, "nystrom")
  data.frame(n = nrow(x$coords), components = ncol(x$coords), method = x$method,
             kernel = short_kernel_label(x$kernel),
             variance_kept = if (isTRUE(x$trace > 0)) sum(x$eigenvalues) / x$trace else NA_real_,
             landmarks = if (nys) nrow(x$landmarks) else NA_integer_,
             residual = if (nys) x$residual else NA_real_,
             stringsAsFactors = FALSE)
})

#' @rdname tidy.kmaha_cv
#' @export
augment.kmaha_kpca <- function(x, data = NULL, newdata = NULL, ...) as_tidy_tibble(augmented = TRUE, {
  check_dots_empty("augment()", ...)
  if (!is.null(newdata)) {
    out <- as_plain_frame(newdata, "newdata")
    z <- stats::predict(x, newdata)
  } else {
    z <- x$coords
    out <- if (is.null(data)) data.frame(row.names = seq_len(nrow(z))) else
      as_plain_frame(data, "data")
    if (nrow(out) != nrow(z)) {
      stopf("`data` must be the training data of the KPCA (%d rows), not %d rows; for other rows use `newdata`.",
            nrow(z), nrow(out))
    }
  }
  for (j in seq_len(ncol(z))) out[[paste0(".", colnames(z)[j] %||% paste0("PC", j))]] <- z[, j]
  out
})

#' @rdname tidy.kmaha_cv
#' @export
tidy.kmaha_reproduction <- function(x, alpha = 0.05, ...) as_tidy_tibble({
  check_dots_empty("tidy()", ...)
  s <- summary(x, alpha = alpha)
  out <- as.data.frame(unclass(s), stringsAsFactors = FALSE)
  attr(out, "alpha") <- NULL
  attr(out, "run_info") <- NULL
  out
})

#' @rdname tidy.kmaha_cv
#' @export
augment.kmaha_reproduction <- function(x, ...) as_tidy_tibble(augmented = TRUE, {
  check_dots_empty("augment()", ...)
  out <- as.data.frame(unclass(x), stringsAsFactors = FALSE)
  attr(out, "run_info") <- NULL
  paper <- paper_results()
  info <- paper_datasets()
  label <- info$label[match(out$dataset, info$name)]
  m <- match(paste(label, toupper(out$learner), out$kernel),
             paste(paper$dataset, paper$learner, paper$kernel))
  out$.paper_mean <- paper$mean_accuracy[m]
  out$.paper_sd <- paper$sd_accuracy[m]
  out$.difference <- out$accuracy - out$.paper_mean
  key <- paste(out$dataset, out$split, out$learner)
  lin <- out$kernel == "linear"
  out$.linear_accuracy <- out$accuracy[lin][match(key, key[lin])]
  out$.gain <- out$accuracy - out$.linear_accuracy
  rownames(out) <- NULL
  out
})

#' @rdname tidy.kmaha_cv
#' @export
glance.kmaha_reproduction <- function(x, alpha = 0.05, ...) as_tidy_tibble({
  check_dots_empty("glance()", ...)
  s <- tidy.kmaha_reproduction(x, alpha = alpha)
  d <- s$difference[!is.na(s$difference)]
  vs <- s$versus_linear
  info <- attr(x, "run_info")
  data.frame(cells = nrow(x), datasets = length(unique(x$dataset)),
             learners = length(unique(x$learner)), kernels = length(unique(x$kernel)),
             splits = if (nrow(s)) max(s$splits) else 0L,
             failed = sum(is.na(x$accuracy)),
             mean_abs_difference = if (length(d)) mean(abs(d)) else NA_real_,
             beyond_0.05 = sum(abs(d) > 0.05),
             win = sum(vs == "win", na.rm = TRUE), draw = sum(vs == "draw", na.rm = TRUE),
             lose = sum(vs == "lose", na.rm = TRUE),
             elapsed_seconds = as.numeric(info$elapsed_seconds %||% NA_real_))
})
