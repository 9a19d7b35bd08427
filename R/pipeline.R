# The pipeline every fit shares (ARCHITECTURE.md):
#
#   input scaling -> feature map -> linear map -> reference embedding + labels + k -> kNN
#                    identity | exact KPCA |        one internal fitter per
#                    Nystrom KPCA | kernel rows     learner (R/learners.R)
#
# fit_scaling() fits the first stage, fit_feature_map() the second,
# fit_pipeline() the feature map and the linear map on already-scaled inputs
# (what a cross-validation fold needs), fit_model() the whole model from raw
# inputs (what the public functions return).  New rows go through a fitted
# pipeline by one entry into the core, pipeline_apply(): predict(),
# fitted() and the projection of kpca() fits use it; the held-out rows of a
# cross-validation fold go through the same core functions inside the
# fold's fitting calls (fit_pipeline() with `heldout`).  Every function
# here takes the call's context `ctx` (R/core.R), resolved once by the
# front end.

# --------------------------------------------------------------------------
# Input scaling.

# Column centring/scaling learned on training data.  A column is constant
# when its standard deviation is below 1e-12 of its largest absolute value,
# so the test does not depend on the units: x * 1e-150 and x * 1e150 are
# treated as x is.  For the test, and for the scale of columns so tiny or
# huge that squaring them would underflow or overflow, the sd is computed on
# the column divided by that value; otherwise directly (as scale() does).
fit_scaling <- function(x, scale = TRUE, arg = "x") {
  center <- colMeans(x)
  if (isTRUE(scale)) {
    dof <- max(nrow(x) - 1L, 1L)
    top <- apply(abs(x), 2L, max)
    unit <- ifelse(top > 0, top, 1)
    xs <- sweep(x, 2L, unit, "/", check.margin = FALSE)
    s_unit <- sqrt(colSums(sweep(xs, 2L, colMeans(xs), check.margin = FALSE)^2) / dof)
    s <- sqrt(colSums(sweep(x, 2L, center, check.margin = FALSE)^2) / dof)
    safe <- is.finite(s) & s > 1e-140 & s < 1e140
    s[!safe] <- (s_unit * unit)[!safe]
    const <- !(s_unit > 1e-12)
    if (any(const)) {
      nm <- colnames(x)
      # (an unnamed column, also among named ones: its number)
      which_c <- if (is.null(nm)) as.character(which(const)) else nm[const]
      blank <- is.na(which_c) | !nzchar(which_c)
      which_c[blank] <- as.character(which(const))[blank]
      stopf("`%s` has constant column(s) %s (standard deviation below 1e-12 of the largest absolute value); they carry no distance information. Remove them before fitting.",
            arg, paste(sQuote(which_c, FALSE), collapse = ", "))
    }
  } else {
    s <- rep(1, ncol(x))
  }
  list(center = center, scale = s)
}

apply_scaling <- function(x, prep) {
  if (is.null(prep)) return(x)
  x <- sweep(x, 2L, prep$center, check.margin = FALSE)
  sweep(x, 2L, prep$scale, "/", check.margin = FALSE)
}

# --------------------------------------------------------------------------
# Feature-map specifications.

feature_identity <- function() list(type = "identity")

feature_kpca <- function(kernel, rank = NULL, tol = 1e-8, landmarks = NULL,
                         landmark_method = "random", method = "auto") {
  list(type = "kpca", kernel = kernel, rank = rank, tol = tol,
       landmarks = landmarks, landmark_method = landmark_method, method = method)
}

feature_kernel_rows <- function(kernel) list(type = "kernel_rows", kernel = kernel)

# Fits the feature map on the scaled training inputs xs.  Returns the stored
# stage `state` (what predictions need), the training coordinates `coords`
# (n x r), the coordinates `new_coords` of the held-out rows `newdata` (a
# cross-validation fold's scaled rows, projected in the fitting call; NULL
# without newdata, or for kernel rows, which are not projected here), `reg`
# (the Gram matrix, kernel rows only), `describe`, the
# coordinates in words, and `degenerate`: the kernel's degeneracy verdict
# ("constant" or "identity", NULL when the kernel sees the data), which the
# core's KPCA returns with its fit (kmaha/degeneracy.hpp).  A degenerate
# kernel is reported by a warning unless warn = FALSE (cross-validation folds
# try such kernels on purpose, and leave them out of the choice);
# `standardized` says whether xs are inputs kmaha standardized (see
# warn_degenerate()).
fit_feature_map <- function(fspec, xs, ctx, warn = TRUE, standardized = FALSE,
                            newdata = NULL) {
  out <- switch(fspec$type,
    identity = list(state = list(type = "identity"), coords = xs, reg = NULL,
                    describe = sprintf("%d standardized input columns", ncol(xs)),
                    new_coords = newdata),
    kpca = {
      fit <- kpca_stage(xs, fspec$kernel, fspec$rank, fspec$tol, fspec$method %||% "auto",
                        fspec$landmarks, fspec$landmark_method, ctx, newdata = newdata,
                        gram = fspec$gram)
      coords <- fit$coords
      deg <- fit$degenerate
      new_coords <- fit$new_coords
      fit$coords <- fit$degenerate <- fit$new_coords <- NULL
      fit$type <- if (identical(fit$method, "nystrom")) "nystrom" else "kpca"
      list(state = fit, coords = coords, reg = NULL,
           describe = sprintf("%d KPCA components", ncol(coords)), degenerate = deg,
           new_coords = new_coords)
    },
    kernel_rows = {
      pre <- is_precomputed(fspec$kernel)
      K <- if (pre) xs else kernel_gram(fspec$kernel, xs, NULL, ctx)
      K <- (K + t(K)) / 2
      # A precomputed kernel stores no training inputs: new points come as
      # their kernel rows.
      state <- if (pre) {
        list(type = "kernel_rows", kernel = fspec$kernel, x = NULL, n = nrow(K))
      } else {
        list(type = "kernel_rows", kernel = fspec$kernel, x = xs)
      }
      list(state = state, coords = K, reg = K,
           describe = sprintf("%d kernel rows", ncol(K)),
           degenerate = gram_verdict(K, if (!pre) xs, ctx))
    })
  if (warn && !is.null(out$degenerate)) {
    warn_degenerate(out$degenerate, standardized = standardized)
  }
  out
}

# Number of coordinates a fitted feature map produces.
feature_dim <- function(state, D) {
  switch(state$type, identity = D, kpca = , nystrom = ncol(state$projection),
         kernel_rows = state$n %||% nrow(state$x))
}

# --------------------------------------------------------------------------
# Fitting.

# The feature map and the learner on scaled inputs xs: what a fit and every
# cross-validation fold compute.  `neighbors` says where target neighbours
# are found ("feature": in the learner's coordinates, i.e. feature space;
# "input": in xs); the built-in learners find them in the call that fits
# the map when they are in the learner's coordinates.  Returns the
# feature-map state, the training coordinates, the map, the targets and the
# learner's convergence record and details.
#
# A fold is *fit, then score*: with `heldout` (the fold's held-out rows,
# scaled as xs) the feature map's call projects them and the learner's call
# votes them among the k nearest training points in the learned metric, for
# every k of `k` from one neighbour search (`heldout` in the result: the
# classes as codes of the levels of y, one column per k), so a
# fold of a built-in learner crosses into the core twice.  Other learners,
# and feature maps the core does not project in the fit (kernel rows), vote
# through pipeline_apply(), the entry predict() uses.
#
# Regression (y numeric, the MLKR learner or the Euclidean candidate): the
# held-out rows get the k-NN regression predictions in the learned metric
# with neighbour weights `weights` ("distance", "uniform", "kernel"), a
# numeric matrix with one column per k.
fit_pipeline <- function(xs, y, fspec, spec, ctx, neighbors = "feature",
                         warn = TRUE, label_errors = FALSE, standardized = FALSE,
                         heldout = NULL, k = 1L, fm = NULL, weights = "distance") {
  regression <- is.numeric(y)
  # `fm`: the feature map already fitted on xs (with `heldout` projected),
  # shared by the learners a fold scores
  fm <- fm %||% fit_feature_map(fspec, xs, ctx, warn, standardized, newdata = heldout)
  targets <- if (fspec$type == "kernel_rows") {
    find_targets(spec, fm$reg, y, ctx, gram = TRUE)
  } else if (neighbors == "input" && fspec$type != "identity") {
    find_targets(spec, xs, y, ctx)
  } else {
    find_targets(spec, fm$coords, y, ctx, learner_coords = TRUE)
  }
  check_map_dim(spec, ncol(fm$coords), fm$describe)
  k <- as.integer(pmin(k, nrow(xs)))
  score <- if (!is.null(heldout) && !is.null(fm$new_coords)) {
    if (regression) list(x = fm$new_coords, k = k, weights = weights)
    else list(x = fm$new_coords, k = k, classes = nlevels(y))
  }
  fit_it <- function() {
    fit_map(spec, fm$coords, y, targets, ctx, reg = fm$reg, coords = fm$describe,
            principal = identical(fm$state$type, "kpca"), score = score)
  }
  fit <- if (label_errors) {
    # The learner's errors speak of its input `x`: say what that is here.
    try_step(fit_it(), function(e) {
      stopf("%s on the %s (its `x`): %s", spec$label, fm$describe, conditionMessage(e))
    })
  } else {
    fit_it()
  }
  out <- list(feature = fm$state, coords = fm$coords, map = fit$map,
              targets = fit$targets %||% targets, convergence = fit$convergence,
              details = fit$details, describe = fm$describe, degenerate = fm$degenerate)
  if (!is.null(heldout)) {
    # one column per k
    out$heldout <- fit$score %||% if (regression) {
      vapply(k, function(kk) pipeline_apply(
        list(feature_map = fm$state, L = fit$map, coords = fm$coords, y = y, weights = weights),
        heldout, "value", kk, ctx), numeric(nrow(heldout)))
    } else {
      vapply(k, function(kk) as.integer(pipeline_apply(
        list(feature_map = fm$state, L = fit$map, coords = fm$coords, y = y),
        heldout, "class", kk, ctx)), integer(nrow(heldout)))
    }
    dim(out$heldout) <- c(nrow(heldout), length(k))
  }
  out
}

# The whole model from raw inputs x (checked) and labels y (checked by
# check_y(); a numeric response checked by check_response() for a
# regression): input scaling (`scale`: TRUE standardizes, FALSE centres,
# NA leaves the inputs as they are), then fit_pipeline(), then the
# reference embedding and the leave-one-out accuracy (RMSE and R^2 of the
# k-NN regression with neighbour weights `weights` for a regression).
fit_model <- function(x, y, fspec, spec, ctx, scale = TRUE, k = 1L,
                      neighbors = "feature", class = NULL, settings = list(),
                      call = NULL, kernel_choice = NULL, weights = "distance") {
  prep <- if (is.na(scale)) NULL else fit_scaling(x, scale, "x")
  xs <- apply_scaling(x, prep)
  p <- fit_pipeline(xs, y, fspec, spec, ctx, neighbors, standardized = isTRUE(scale))
  new_model(p, y, k, prep, spec, ctx, class = class, settings = settings,
            call = call, feature_names = colnames(x), n_features = ncol(x),
            kernel_choice = kernel_choice, weights = weights)
}

# The one model object: stages, reference embedding, labels, k and small
# diagnostics.  `p` is a fit_pipeline() result.  A numeric y makes a
# regression model: `mode` "regression" (NULL for a classifier), the
# response as `y`, the neighbour weights `weights` of its k-NN regression,
# and `loo_rmse`, `loo_r2` (leave-one-out on the training points) instead
# of `train_accuracy`; class "kmaha_regression" before the family.
new_model <- function(p, y, k, prep, spec, ctx, class = NULL, settings = list(),
                      call = NULL, feature_names = NULL, n_features = NULL,
                      kernel_choice = NULL, weights = "distance") {
  regression <- is.numeric(y)
  L <- p$map
  storage.mode(L) <- "double"
  d <- nrow(L)
  dimnames(L) <- list(paste0("dim", seq_len(d)),
                      if (p$feature$type == "identity") feature_names %||% colnames(p$coords)
                      else colnames(p$coords))
  emb <- core_apply_map(p$coords, L, ctx)
  dimnames(emb) <- list(rownames(p$coords), rownames(L))
  family <- switch(p$feature$type, identity = "kmaha_linear",
                   kernel_rows = "kmaha_kernel_trick", "kmaha_kpca_trick")
  model <- list(
    learner = spec$name, learner_label = spec$label,
    prep = prep, feature_map = p$feature, L = L, embedding = emb,
    y = if (regression) y else full_levels(y), k = as.integer(k),
    targets = p$targets, convergence = p$convergence,
    train_accuracy = NA_real_,
    kernel_choice = kernel_choice, settings = settings,
    feature_names = feature_names, n_features = n_features %||% ncol(p$coords),
    call = call)
  if (regression) {
    model$train_accuracy <- NULL
    model$mode <- "regression"
    model$weights <- weights
    model$loo_rmse <- model$loo_r2 <- NA_real_
    if (nrow(emb) > k) {
      res <- y - pipeline_apply(model, NULL, "value", k, ctx)
      model$loo_rmse <- sqrt(mean(res^2))
      model$loo_r2 <- 1 - sum(res^2) / sum((y - mean(y))^2)
    }
  } else if (!is.null(y) && nrow(emb) > k) {
    # (a pair or chunklet learner fitted without class labels only transforms)
    # (the predictions have the levels of model$y: compare the codes, not
    # the factors, whose `==` matches them by their labels)
    model$train_accuracy <- mean(as.integer(pipeline_apply(model, NULL, "class", k, ctx)) ==
                                   as.integer(model$y))
  }
  # The learner's own diagnostics (eigenvalues, impostor counts, ...).
  details <- p$details[!vapply(p$details, is.null, NA)]
  model <- c(model, details[setdiff(names(details), names(model))])
  class(model) <- unique(c(class, if (regression) "kmaha_regression", family, "kmaha_model"))
  model
}

# A map that a penalty shrank to (numerically) nothing: at such a map every
# learned distance is rounding noise.  `shrink` is the map's norm relative
# to the norm of the start the optimizer began from.
warn_collapsed_map <- function(shrink, lambda, argname) {
  if (!is.finite(shrink) || shrink >= 1e-6) return(invisible(NULL))
  hint <- if (is.numeric(lambda) && length(lambda) == 1L && lambda > 0) {
    sprintf(" `%s` (%s) outweighs the learner's objective on these data: use a smaller one.",
            argname, format(lambda))
  } else ""
  # (a map of exact zeros: the optimum of an objective that the inputs
  # cannot improve on, e.g. NCA's on inputs unrelated to the classes)
  how <- if (shrink > 0) sprintf("%.2g times", 1 / shrink) else "to zero"
  warnf("The learned map is numerically zero: the optimizer shrank its start %s, so every learned distance is rounding noise and nearest neighbours are arbitrary.%s",
        how, hint)
}

# x %*% t(L) through the core's product, which does not depend on the BLAS
# R is linked against; keeps the row names of x and uses the row names of L
# as column names, as %*% does.
apply_map <- function(x, L, ctx) {
  if (!is.double(x)) storage.mode(x) <- "double"
  if (!is.double(L)) storage.mode(L) <- "double"
  z <- core_apply_map(x, L, ctx)
  dimnames(z) <- list(rownames(x), rownames(L))
  z
}

# --------------------------------------------------------------------------
# The one transform and score entry.

# New rows through a fitted pipeline, in one call of the core
# (kmaha/pipeline.hpp): input scaling, feature map, linear map, and for
# type "class" or "prob" the k-nearest-neighbour vote among the reference
# points.  `model` is a fitted model, or any list with its stages: `prep`,
# `feature_map`, `L` (NULL: the feature map's coordinates), the reference
# `embedding` (or `coords`, the reference points' feature coordinates, which
# the core maps) and their labels `y` (a factor).  `x`: raw input rows, all
# complete (for a precomputed kernel: the kernel rows of the new points
# against the training points); NULL votes each reference point among the
# others (leave-one-out: fitted()).  Kernels evaluated in R hand their
# kernel rows to the core, computed here in blocks of rows.  Returns the
# coordinates (a matrix), the classes (a factor with the levels of y) or the
# vote fractions (a matrix with one column per level).
#
# Regression models (numeric y; `weights`: the neighbour weights, the
# model's by default): type "value" gives the k-NN regression predictions
# (a numeric vector), for the new rows or, with x NULL, leave-one-out for
# the reference points.
pipeline_apply <- function(model, x, type, k, ctx, weights = model$weights) {
  core <- pipeline_of(model, weights)
  lev <- levels(model$y)
  finish <- function(out) {
    if (type %in% c("transform", "value")) return(out)
    if (type == "prob") {
      dimnames(out$prob) <- list(NULL, lev)
      return(out$prob)
    }
    codes_factor(out$class, lev)
  }
  if (is.null(x)) {
    return(finish(core_pipeline_apply(core, NULL, NULL,
                                      if (type == "value") "loo_value" else "loo", k, ctx)))
  }
  fm <- model$feature_map
  in_core <- fm$type == "identity" || (!is_precomputed(fm$kernel) && kernel_in_core(fm$kernel))
  if (in_core) return(finish(core_pipeline_apply(core, x, NULL, type, k, ctx)))
  # Kernel rows from R: the precomputed rows themselves, or an R kernel's
  # rows against the training points (of the scaled rows), a block of new
  # rows at a time; the core then starts from the kernel rows.
  core$center <- core$scale <- NULL
  if (is_precomputed(fm$kernel)) return(finish(core_pipeline_apply(core, NULL, x, type, k, ctx)))
  xs <- apply_scaling(x, model$prep)
  m <- nrow(xs)
  b <- kernel_block_rows(nrow(fm$x))
  if (m <= b) {
    return(finish(core_pipeline_apply(core, NULL, kernel_gram(fm$kernel, xs, fm$x, ctx),
                                      type, k, ctx)))
  }
  parts <- lapply(seq(1L, m, by = b), function(s) {
    rows <- s:min(m, s + b - 1L)
    core_pipeline_apply(core, NULL, kernel_gram(fm$kernel, xs[rows, , drop = FALSE], fm$x, ctx),
                        type, k, ctx)
  })
  finish(if (type == "transform") do.call(rbind, parts) else if (type == "value")
    unlist(parts) else
    list(class = unlist(lapply(parts, `[[`, "class")),
         prob = do.call(rbind, lapply(parts, `[[`, "prob"))))
}

# The stages as the core reads them (cpp_pipeline_apply()); a numeric y
# (regression) goes as `response`, with the neighbour weights `vote`.
pipeline_of <- function(model, weights = model$weights) {
  fm <- model$feature_map
  out <- list(center = model$prep$center, scale = model$prep$scale,
              feature_map = fm[intersect(names(fm), c("type", "kernel", "x", "landmarks", "n",
                                                      "projection", "col_means", "grand_mean"))],
              L = model$L, embedding = model$embedding, coords = model$coords)
  if (is.numeric(model$y)) {
    out$response <- as.double(model$y)
    out$vote <- weights %||% "distance"
  } else {
    out$y <- if (!is.null(model$y)) as.integer(model$y)
    out$nlevels <- nlevels(model$y)
  }
  out
}
