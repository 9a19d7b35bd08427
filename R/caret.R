#' caret models for kmaha learners
#'
#' `kmaha_caret()` returns a custom-model list for [caret::train()], so the
#' learners can be tuned and resampled in a caret workflow. caret is only
#' suggested: the list is plain data and functions.
#'
#' Methods and their tuning parameters:
#'
#' | method    | model                                   | parameters          |
#' |-----------|-----------------------------------------|---------------------|
#' | `"nca"`   | [nca()]                                 | `dim`, `k`          |
#' | `"lmnn"`  | [lmnn()]                                | `targets`, `k`      |
#' | `"dne"`   | [dne()]                                 | `targets`, `k`      |
#' | `"knca"`  | [kmaha()] with NCA, RBF kernel          | `sigma`, `k`        |
#' | `"klmnn"` | [kmaha()] with LMNN, RBF kernel         | `sigma`, `targets`, `k` |
#' | `"kdne"`  | [kmaha()] with DNE, RBF kernel          | `sigma`, `targets`, `k` |
#' | `"mlkr"`  | [mlkr()] (regression)                   | `k`                 |
#' | `"kmlkr"` | [kmaha()] with MLKR, RBF kernel (regression) | `sigma`, `k`   |
#' | `"auto"`  | [kmaha()] at its defaults               | none (`parameter`)  |
#'
#' `"auto"` is the default `kmaha(x, y)`: the learner, the kernel and `k`
#' are chosen by kmaha's own cross-validation inside each training resample,
#' so caret has nothing to tune (its grid is caret's usual one-row
#' `parameter = "none"`, as for models without tuning parameters); the
#' arguments in `...` go to [kmaha()] (e.g. `seed = 1`, `cv_folds = 10`, or
#' `k = 3` to fix `k`). caret's resampling then estimates the accuracy of
#' the whole procedure, choices included. With a numeric outcome it is
#' kmaha()'s regression (MLKR, see Regression in [kmaha()]), a caret model
#' of both types whose predictions are numbers.
#'
#' `"mlkr"` and `"kmlkr"` are regression models (caret's `type =
#' "Regression"`, a numeric outcome): `k` is the number of neighbours of
#' the k-NN regression (weights 1 / distance) in the metric MLKR learned;
#' `predict` gives numbers and there is no `prob`.
#'
#' `k` is the number of neighbours of the kNN classifier, `targets` the
#' number of target neighbours of LMNN/DNE, `dim` the output dimension of
#' NCA and `sigma` the bandwidth of the paper's scaled RBF kernel
#' ([rbf_kernel()]). The kernel methods use the KPCA trick. Default grids
#' take `sigma` from [paper_sigmas()] around 1, `k` from 1, 3, 5, ...
#' Inputs are standardized on each training resample. Class levels must be
#' valid R names when `classProbs = TRUE` (a caret requirement).
#'
#' `k` only enters the kNN vote, not the learned metric (the kernel is
#' given, never chosen by cross-validation), so every model has a `loop`
#' (caret's submodels): caret fits one model per combination of the other
#' parameters and predicts each `k` of the grid from it. A grid of one
#' kernel and four values of `k` costs one fit per resample, not four, and
#' gives the same predictions as fitting each `k` on its own. (Note that
#' the methods' `targets` is what the learners themselves call `k`;
#' `vignette("frameworks", package = "kmaha")` has a table of `k` and
#' `neighbors` across the frameworks.)
#'
#' Case weights (`weights` of [caret::train()]) are not supported: the
#' learners ignore them, and `fit` says so in a warning.
#'
#' @param method One of `"nca"`, `"lmnn"`, `"dne"`, `"knca"`, `"klmnn"`,
#'   `"kdne"`, `"auto"`, and for regression `"mlkr"`, `"kmlkr"`.
#' @param ... Further fixed arguments passed to the learner, e.g.
#'   `max_iter = 100` for NCA. They are checked when the model is built: each
#'   must be named and be an argument of [nca()], [lmnn()], [dne()] or
#'   [mlkr()] (the regression methods: not `k` or `weights`), other
#'   than the data (`x`, `y`), the tuned parameter (`dim` for `"nca"`, `k`
#'   for the target-neighbour methods), `targets` (row indices, which
#'   resampling would invalidate) and, for the kernel methods, `scale`.
#'   For `"auto"`, arguments of [kmaha()] other than `x` and `y`.
#' @return A list in caret's custom-model format (`library`, `type`,
#'   `parameters`, `grid`, `loop`, `fit`, `predict`, `prob`, `sort`,
#'   `levels`, `label`).
#' @examples
#' m <- kmaha_caret("kdne")
#' m$parameters
#' grid <- m$grid(iris[, 1:4], iris$Species, len = 2)
#' grid
#' # What caret::train() does for each resample and grid row:
#' idx <- c(1:25, 51:75, 101:125)
#' fit <- m$fit(iris[idx, 1:4], iris$Species[idx], param = grid[1, ])
#' mean(m$predict(fit, iris[-idx, 1:4]) == iris$Species[-idx])
#' # kmaha()'s default, which chooses learner, kernel and k itself:
#' auto <- kmaha_caret("auto", seed = 1)
#' fit <- auto$fit(iris[idx, 1:4], iris$Species[idx], param = auto$grid(iris[, 1:4], iris$Species))
#' mean(auto$predict(fit, iris[-idx, 1:4]) == iris$Species[-idx])
#' \dontrun{
#' # The same through caret (not run here: loading caret alone takes
#' # seconds).
#' set.seed(1)
#' tuned <- caret::train(Species ~ ., data = iris, method = m,
#'                       tuneGrid = data.frame(sigma = c(1, 5), targets = 3, k = 1),
#'                       trControl = caret::trainControl(method = "cv", number = 3))
#' tuned$bestTune
#' }
#' @export
kmaha_caret <- function(method = c("nca", "lmnn", "dne", "knca", "klmnn", "kdne",
                                   "mlkr", "kmlkr", "auto"),
                        ...) {
  # the methods and their parameters come from the learners' records
  # (`caret`, see caret_method()); "auto" is kmaha()'s default
  method <- match_choice(method, c(caret_methods(), "auto"), "method")
  fixed <- list(...)
  if (method == "auto") return(caret_auto_model(fixed))
  cm <- caret_method(method)
  kernelized <- cm$kernelized
  base <- cm$base
  tune <- cm$tune
  regression <- identical(learner_record(base)$task, "regression")
  check_caret_fixed(fixed, method, base, kernelized)
  params <- c(if (kernelized) "sigma", tune$param, "k")
  labels <- c(dim = "Output dimension", k = "Neighbours (kNN)",
              targets = "Target neighbours", sigma = "RBF sigma (scaled)")
  parameters <- data.frame(parameter = params, class = "numeric",
                           label = unname(labels[params]))

  grid <- function(x, y, len = NULL, search = "grid") {
    len <- if (is.null(len)) 3L else max(1L, as.integer(len))
    D <- ncol(x)
    ks <- seq(1L, by = 2L, length.out = len)
    sig <- paper_sigmas()
    centre <- which(sig == 1)
    if (search == "random") {
      g <- data.frame(k = sample(ks, len, replace = TRUE))
      if ("sigma" %in% params) g$sigma <- sample(sig[5:17], len, replace = TRUE)
      if ("targets" %in% params) g$targets <- sample(1:5, len, replace = TRUE)
      if ("dim" %in% params) g$dim <- sample(seq_len(D), len, replace = TRUE)
      return(unique(g[, params, drop = FALSE]))
    }
    vals <- list(
      dim = unique(c(D, max(1L, D %/% 2L)))[seq_len(min(len, 2L))],
      k = ks,
      targets = c(3L, 1L, 5L)[seq_len(min(len, 3L))],
      # `len` neighbouring widths around sigma = 1, the window moved inside
      # the grid at its ends (at most all 21: no width twice)
      sigma = sig[sigma_window(centre, len, length(sig))])
    expand.grid(vals[params], KEEP.OUT.ATTRS = FALSE)
  }

  fit <- function(x, y, wts = NULL, param, lev, last, weights, classProbs, ...) {
    if (!is.null(wts)) {
      warning(sprintf("kmaha_caret(\"%s\"): case weights (the `weights` of caret::train()) are ignored: kmaha's learners do not use them.",
                      method), call. = FALSE)
    }
    # (a data frame with a factor column: an error naming the column, not
    # the character matrix as.matrix() would make of it)
    x <- check_x(x, "x")
    args <- utils::modifyList(fixed, list(...))
    # the grid's whole numbers, checked (as.integer() would truncate 1.5
    # to 1 while caret reports the grid's 1.5), named as in the grid
    k <- check_count(param$k, "k")
    # the tuned learner option
    tuned <- if (!is.null(tune$param)) {
      stats::setNames(list(check_count(param[[tune$param]], tune$param)), tune$option)
    } else list()
    m <- if (!kernelized) {
      # (a regression learner's own `k` is its model's k-NN regression)
      if (regression) tuned$k <- k
      fun <- sub("\\.default$", "", learner_record(base)$fun)
      call_by_name(get(fun, mode = "function"), fun, c(list(x = x, y = y), tuned, args))
    } else {
      largs <- tuned
      largs <- utils::modifyList(largs, args)
      # the threads are kmaha()'s own argument, not a learner option
      threads <- largs$num_threads
      largs$num_threads <- NULL
      kmaha(x, y, learner = base, kernel = rbf_kernel(param$sigma),
            k = k, learner_args = largs, num_threads = threads)
    }
    # The kNN k travels with the model (caret stores its own fields in it
    # too): the linear learners' own `k` means target neighbours.
    m$caret_k <- k
    m
  }

  # `submodels`: the other values of k for the same fit (see `loop`); the
  # result is then a list, the fitted k's predictions first.
  predict_k <- function(modelFit, newdata, submodels, one) {
    newdata <- caret_newdata(newdata)
    first <- one(modelFit, newdata, modelFit$caret_k)
    if (is.null(submodels)) return(first)
    if (metric_uses_k(modelFit)) {
      stopf("kmaha_caret(\"%s\"): this fit's metric was chosen with k = %d, so it cannot predict other values of k (caret's submodels); this is a bug in kmaha_caret(), please report it.",
            method, modelFit$caret_k)
    }
    c(list(first), lapply(submodels$k, function(k) one(modelFit, newdata, k)))
  }
  pred <- function(modelFit, newdata, preProc = NULL, submodels = NULL) {
    predict_k(modelFit, newdata, submodels, function(m, x, k) {
      if (regression) return(unname(stats::predict(m, x, k = k)))
      as.character(stats::predict(m, x, type = "class", k = k))
    })
  }
  prob <- function(modelFit, newdata, preProc = NULL, submodels = NULL) {
    predict_k(modelFit, newdata, submodels, function(m, x, k) {
      as.data.frame(stats::predict(m, x, type = "prob", k = k))
    })
  }

  # k is only used by the kNN vote, so one fit per combination of the other
  # parameters serves every k: caret fits the grid's first row of each
  # combination and gets the other k from predict(submodels = ).
  loop <- function(grid) {
    others <- setdiff(names(grid), "k")
    key <- if (length(others)) {
      do.call(paste, c(unname(lapply(grid[others], as.character)), sep = "\r"))
    } else {
      rep("", nrow(grid))
    }
    groups <- split(seq_len(nrow(grid)), factor(key, levels = unique(key)))
    fits <- grid[vapply(groups, function(i) i[1], 1L), , drop = FALSE]
    rownames(fits) <- NULL
    submodels <- lapply(groups, function(i) {
      data.frame(k = grid$k[i[-1]])
    })
    list(loop = fits, submodels = unname(submodels))
  }

  list(label = sprintf("kmaha %s", cm$label),
       library = "kmaha",
       type = if (regression) "Regression" else "Classification",
       parameters = parameters,
       grid = grid,
       fit = fit,
       predict = pred,
       prob = if (regression) NULL else prob,
       sort = function(x) x[do.call(order, unname(as.list(x[, rev(params), drop = FALSE]))), ],
       levels = if (regression) NULL else function(x) levels(x$y),
       loop = loop)
}

# Fixed learner arguments of kmaha_caret(), validated against the learner's
# formals when the model is built (not in every resample).
check_caret_fixed <- function(fixed, method, base, kernelized) {
  fun <- sprintf("kmaha_caret(\"%s\")", method)
  nm <- names(fixed) %||% rep("", length(fixed))
  if (any(!nzchar(nm))) {
    stop_unknown_args(fun, nm[!nzchar(nm)],
                      "Fixed learner arguments must be named, e.g. max_iter = 100.")
  }
  tune <- caret_method(method)$tune
  tuned <- tune$option %||% character()
  # (a regression learner's model options, MLKR's k-NN regression `k` and
  # `weights`: `k` is tuned by caret, the weights are kmaha()'s 1 / distance)
  tuned <- c(tuned, learner_record(base)$model_options)
  clash <- intersect(nm, tuned)
  if (length(clash)) {
    if (clash[1] == "weights") {
      stopf("%s: the regression's neighbour weights are 1 / distance (kmaha()'s); `weights` cannot be set.", fun)
    }
    stopf("%s: `%s` is tuned by caret (parameter `%s`); give its values in `tuneGrid`, not as a fixed argument.",
          fun, clash[1], tune$param %||% clash[1])
  }
  allowed <- setdiff(names(formals(learner_fun(base))),
                     c("x", "y", "...", "targets", tuned, if (kernelized) "scale"))
  unknown <- setdiff(nm, allowed)
  if (length(unknown)) {
    stop_unknown_args(fun, unknown, sprintf("It passes fixed arguments to %s(), which takes: %s.",
                                            base, paste(allowed, collapse = ", ")))
  }
  invisible(fixed)
}

# kmaha_caret("auto"): the default kmaha() fit, which chooses the learner,
# kernel and k by its own cross-validation on each training resample; no
# caret tuning parameter (caret's one-row `parameter = "none"` grid), the
# fixed arguments go to kmaha().
caret_auto_model <- function(fixed) {
  fun <- "kmaha_caret(\"auto\")"
  nm <- names(fixed) %||% rep("", length(fixed))
  if (any(!nzchar(nm))) {
    stop_unknown_args(fun, nm[!nzchar(nm)],
                      "Arguments for kmaha() must be named, e.g. seed = 1.")
  }
  allowed <- setdiff(names(formals(kmaha.default)), c("x", "y", "..."))
  unknown <- setdiff(nm, allowed)
  if (length(unknown)) {
    stop_unknown_args(fun, unknown, sprintf("It passes its arguments to kmaha(), which takes: %s.",
                                            paste(allowed, collapse = ", ")))
  }
  fit <- function(x, y, wts = NULL, param, lev, last, weights, classProbs, ...) {
    if (!is.null(wts)) {
      warning("kmaha_caret(\"auto\"): case weights (the `weights` of caret::train()) are ignored: kmaha's learners do not use them.",
              call. = FALSE)
    }
    call_by_name(kmaha, "kmaha", c(list(x = check_x(x, "x"), y = y),
                                   utils::modifyList(fixed, list(...))))
  }
  list(label = "kmaha (learner, kernel and k chosen by kmaha)",
       library = "kmaha",
       # a numeric outcome: kmaha()'s regression (MLKR), numeric predictions
       type = c("Classification", "Regression"),
       parameters = data.frame(parameter = "parameter", class = "character",
                               label = "parameter"),
       grid = function(x, y, len = NULL, search = "grid") data.frame(parameter = "none"),
       fit = fit,
       predict = function(modelFit, newdata, preProc = NULL, submodels = NULL) {
         if (inherits(modelFit, "kmaha_regression")) {
           return(unname(stats::predict(modelFit, caret_newdata(newdata))))
         }
         as.character(stats::predict(modelFit, caret_newdata(newdata), type = "class"))
       },
       prob = function(modelFit, newdata, preProc = NULL, submodels = NULL) {
         as.data.frame(stats::predict(modelFit, caret_newdata(newdata), type = "prob"))
       },
       sort = function(x) x,
       levels = function(x) levels(x$y),
       loop = NULL)
}

# caret's new data (a data frame or matrix) as the numeric matrix the model
# predicts from: a factor or text column is an error naming it, as at fit
# time (as.matrix() made a character matrix of it, and the error then
# advised as.numeric()); missing values stay, for NA predictions.
caret_newdata <- function(newdata) {
  check_x(newdata, "newdata", allow_na = TRUE, allow_empty = TRUE)
}

# The indices of `len` consecutive widths of a grid of `n`, centred at
# `centre` where the grid allows, else moved inside it (all n when len > n).
sigma_window <- function(centre, len, n) {
  m <- min(len, n)
  first <- min(max(1L, centre - len %/% 2L), n - m + 1L)
  seq(first, length.out = m)
}
