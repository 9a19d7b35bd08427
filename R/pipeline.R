# The pipeline every fit shares (ARCHITECTURE.md):
#
#   input scaling -> feature map -> linear map -> reference embedding + labels + k -> kNN
#                    identity | exact KPCA |        one internal fitter per
#                    Nystrom KPCA | kernel rows     learner (R/learners.R)
#
# fit_feature_map() fits the feature-map stage, fit_pipeline() the feature
# map and the linear map on already-scaled inputs (what a CV fold needs),
# fit_model() the whole model from raw inputs (what the public functions
# return), and model_transform() / predict() run new data through it.

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
# (n x r), `reg` (the Gram matrix, kernel rows only), `describe`, the
# coordinates in words, and `degenerate`, kernel_degeneracy()'s verdict on
# the kernel (NULL when it sees the data).  A degenerate kernel is reported
# by a warning unless warn = FALSE (cross-validation folds try such kernels
# on purpose, and leave them out of the choice); `standardized` says
# whether xs are inputs kmaha standardized (see warn_degenerate()).
fit_feature_map <- function(fspec, xs, ctx, warn = TRUE, standardized = FALSE) {
  degenerate <- function(K) {
    kind <- kernel_degeneracy(fspec$kernel, xs, K, ctx)
    if (warn && !is.null(kind)) warn_degenerate(kind, standardized = standardized)
    kind
  }
  switch(fspec$type,
    identity = list(state = list(type = "identity"), coords = xs, reg = NULL,
                    describe = sprintf("%d standardized input columns", ncol(xs))),
    kpca = {
      # A kernel evaluated in R (or a precomputed one: xs is its Gram
      # matrix) is evaluated once, for the check and the fit.
      gram <- feature_gram(fspec$kernel, xs, ctx, exact = is.null(fspec$landmarks))
      deg <- degenerate(gram)
      fit <- kpca_stage(xs, fspec$kernel, fspec$rank, fspec$tol, fspec$method %||% "auto",
                        fspec$landmarks, fspec$landmark_method, ctx, gram = gram)
      coords <- fit$coords
      fit$coords <- NULL
      fit$type <- if (identical(fit$method, "nystrom")) "nystrom" else "kpca"
      list(state = fit, coords = coords, reg = NULL,
           describe = sprintf("%d KPCA components", ncol(coords)), degenerate = deg)
    },
    kernel_rows = {
      K <- if (is_precomputed(fspec$kernel)) xs else kernel_gram(fspec$kernel, xs, NULL, ctx)
      K <- (K + t(K)) / 2
      deg <- degenerate(K)
      # A precomputed kernel stores no training inputs: new points come as
      # their kernel rows.
      state <- if (is_precomputed(fspec$kernel)) {
        list(type = "kernel_rows", kernel = fspec$kernel, x = NULL, n = nrow(K))
      } else {
        list(type = "kernel_rows", kernel = fspec$kernel, x = xs)
      }
      list(state = state, coords = K, reg = K,
           describe = sprintf("%d kernel rows", ncol(K)), degenerate = deg)
    })
}

# The training Gram matrix of a kernel the core does not evaluate: computed
# in R, or (precomputed) the input itself; NULL for built-in kernels, which
# the core evaluates where it needs them.  exact = FALSE (Nystrom) needs none.
feature_gram <- function(kernel, xs, ctx, exact = TRUE) {
  if (!exact || kernel_in_core(kernel)) return(NULL)
  if (is_precomputed(kernel)) return(xs)
  kernel_gram(kernel, xs, NULL, ctx)
}

# Coordinates of new (scaled) rows under a fitted feature map.  For a
# precomputed kernel the rows are kernel values against the training points.
feature_transform <- function(state, xs, ctx) {
  pre <- !is.null(state$kernel) && is_precomputed(state$kernel)
  z <- switch(state$type,
    identity = xs,
    kpca = if (pre) {
      core_kpca_project(xs, state$projection, state$col_means, state$grand_mean, ctx)
    } else {
      kpca_project_rows(state$kernel, xs, state$x, state$projection,
                        state$col_means, state$grand_mean, ctx)
    },
    nystrom = core_nystrom_project(state$kernel, xs, state$landmarks,
                                   state$projection, state$col_means, ctx),
    kernel_rows = if (pre) xs else kernel_gram(state$kernel, xs, state$x, ctx))
  if (state$type != "identity" && anyNA(z)) {
    stopf("`newdata` is so far from the training data that its kernel values overflow; rescale it as the training data.")
  }
  z
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
# "input": in xs).  Returns the feature-map state, the training coordinates,
# the map, the targets and the learner's convergence record and details.
fit_pipeline <- function(xs, y, fspec, spec, ctx, neighbors = "feature",
                         warn = TRUE, label_errors = FALSE, standardized = FALSE) {
  fm <- fit_feature_map(fspec, xs, ctx, warn, standardized)
  targets <- if (fspec$type == "kernel_rows") {
    find_targets(spec, fm$reg, y, ctx, gram = TRUE)
  } else {
    find_targets(spec, if (neighbors == "input") xs else fm$coords, y, ctx)
  }
  check_map_dim(spec, ncol(fm$coords), fm$describe)
  fit <- if (label_errors) {
    # The learner's errors speak of its input `x`: say what that is here.
    tryCatch(fit_map(spec, fm$coords, y, targets, ctx, reg = fm$reg, coords = fm$describe),
             error = function(e) {
               stopf("%s on the %s (its `x`): %s", spec$label, fm$describe, conditionMessage(e))
             })
  } else {
    fit_map(spec, fm$coords, y, targets, ctx, reg = fm$reg, coords = fm$describe)
  }
  list(feature = fm$state, coords = fm$coords, map = fit$map, targets = targets,
       convergence = fit$convergence, details = fit$details,
       describe = fm$describe, degenerate = fm$degenerate)
}

# The whole model from raw inputs x (checked) and labels y (checked by
# check_y()): input scaling (`scale`: TRUE standardizes, FALSE centres,
# NA leaves the inputs as they are), then fit_pipeline(), then the
# reference embedding and the leave-one-out accuracy.
fit_model <- function(x, y, fspec, spec, ctx, scale = TRUE, k = 1L,
                      neighbors = "feature", class = NULL, settings = list(),
                      call = NULL, kernel_choice = NULL) {
  prep <- if (is.na(scale)) NULL else fit_scaling(x, scale, "x")
  xs <- apply_scaling(x, prep)
  p <- fit_pipeline(xs, y, fspec, spec, ctx, neighbors, standardized = isTRUE(scale))
  new_model(p, y, k, prep, spec, class = class, settings = settings,
            call = call, feature_names = colnames(x), n_features = ncol(x),
            kernel_choice = kernel_choice, ctx = ctx)
}

# The one model object: stages, reference embedding, labels, k and small
# diagnostics.  `p` is a fit_pipeline() result.
new_model <- function(p, y, k, prep, spec, class = NULL, settings = list(),
                      call = NULL, feature_names = NULL, n_features = NULL,
                      kernel_choice = NULL, ctx = kmaha_context()) {
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
    y = full_levels(y), k = as.integer(k),
    targets = p$targets, convergence = p$convergence,
    train_accuracy = loo_accuracy(emb, y, k, ctx),
    kernel_choice = kernel_choice, settings = settings,
    feature_names = feature_names, n_features = n_features %||% ncol(p$coords),
    call = call)
  # The learner's own diagnostics (eigenvalues, impostor counts, ...).
  details <- p$details[!vapply(p$details, is.null, NA)]
  model <- c(model, details[setdiff(names(details), names(model))])
  class(model) <- unique(c(class, family, "kmaha_model"))
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
  warnf("The learned map is numerically zero: the optimizer shrank its start %.2g times, so every learned distance is rounding noise and nearest neighbours are arbitrary.%s",
        1 / shrink, hint)
}

# Leave-one-out kNN accuracy of the training embedding z: every fit reports
# it, labelled as optimistic (the metric was learned on the same points).
loo_accuracy <- function(z, y, k = 1L, ctx = kmaha_context()) {
  if (nrow(z) <= k) return(NA_real_)
  mean(knn_vote(z, y, z, k, self = TRUE, ctx = ctx)$class == y)
}

# x %*% t(L) through the core's product, which does not depend on the BLAS
# R is linked against; keeps the row names of x and uses the row names of L
# as column names, as %*% does.
apply_map <- function(x, L, ctx = kmaha_context()) {
  if (!is.double(x)) storage.mode(x) <- "double"
  if (!is.double(L)) storage.mode(L) <- "double"
  z <- core_apply_map(x, L, ctx)
  dimnames(z) <- list(rownames(x), rownames(L))
  z
}

# --------------------------------------------------------------------------
# New data through a fitted model.

# Raw input rows (complete, checked) -> learned coordinates.
model_transform <- function(object, x, ctx = kmaha_context()) {
  xs <- apply_scaling(x, object$prep)
  z <- apply_map(feature_transform(object$feature_map, xs, ctx), object$L, ctx)
  dimnames(z) <- list(rownames(x), colnames(object$embedding))
  z
}
