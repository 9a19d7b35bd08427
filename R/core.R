# The one boundary between R and the C++ glue.  Every call of a compiled
# function goes through a core_*() wrapper here, which takes the call's
# context `ctx` (threads and instruction set, resolved once per user call by
# kmaha_context()) and passes it down.  No other file calls cpp_*() itself.

#' @keywords internal
#' @noRd
kmaha_context <- function(num_threads = NULL, arg = "num_threads") {
  structure(list(threads = resolve_threads(num_threads, arg), isa = resolve_isa()),
            class = "kmaha_context")
}

# A context with one thread (cross-validation tasks and reproduction cells,
# which run side by side under a parallel plan).
single_thread <- function(ctx) {
  ctx$threads <- 1L
  ctx
}

# The instruction-set setting: option kmaha.isa (kmaha.nca_isa of 0.2.0),
# then the environment variable KMAHA_ISA, then "auto".  "auto": AVX2+FMA
# when this build and the CPU have it; "default": the baseline; "avx2":
# insist on AVX2+FMA (an error naming the setting where it is missing).
resolve_isa <- function() {
  name <- "kmaha.isa"
  v <- getOption("kmaha.isa")
  if (is.null(v)) {
    v <- getOption("kmaha.nca_isa")
    if (!is.null(v)) name <- "kmaha.nca_isa"
  }
  what <- "Option"
  if (is.null(v)) {
    env <- Sys.getenv("KMAHA_ISA", "")
    if (nzchar(env)) {
      v <- env
      name <- "KMAHA_ISA"
      what <- "Environment variable"
    }
  }
  if (is.null(v)) return("auto")
  if (!is.character(v) || length(v) != 1L || is.na(v) ||
      !v %in% c("auto", "default", "avx2")) {
    stopf("%s `%s` must be \"auto\", \"avx2\" or \"default\".", what, name)
  }
  if (v == "avx2") {
    have <- core_isa_support()
    if (!have[["compiled"]]) {
      stopf("%s `%s` is \"avx2\", but this build of kmaha has no AVX2 kernels.",
            what, name)
    }
    if (!have[["cpu"]]) {
      stopf("%s `%s` is \"avx2\", but this CPU lacks AVX2 or FMA.", what, name)
    }
  }
  v
}

# Evaluates a call of the compiled code.  The core's own errors arrive as
# classed conditions without a call (kmaha_<kind>_error, raised by the
# glue); an R error raised while the compiled code runs (a limit of
# setTimeLimit() reached at an interrupt poll, R's failure to allocate a
# result) carries the internal .Call as its call, and is signalled again
# without it, so that nothing printed names the glue.  Interrupts pass
# untouched.
core_run <- function(expr) {
  tryCatch(expr, error = function(e) {
    e$call <- NULL
    stop(e)
  })
}

core_kernel_matrix <- function(kernel, x, y, ctx) {
  core_run(cpp_kernel_matrix(kernel, x, y, ctx))
}

core_alignment_products <- function(kernels, x, y, p, ctx) {
  core_run(cpp_alignment_products(kernels, x, y, p, ctx))
}

core_dne_neighbors <- function(z, y, k, gram, ctx) {
  core_run(cpp_dne_neighbors(z, y, k, gram, ctx))
}

# same, other NULL: the core finds them (the k nearest same- and
# other-class rows of x by class codes y) and returns them; score: NULL or
# list(x = held-out coordinates, k, classes), whose votes in the learned
# metric come back as `score` (a fold's fit, then score, in one call).
core_dne_fit <- function(x, same, other, dim, lambda, ctx, principal = FALSE, y = NULL,
                         k = 0L, score = NULL) {
  core_run(cpp_dne_fit(x, same, other, dim, lambda, principal, y, k, score, ctx))
}

core_kdne_fit <- function(K, same, other, dim, eps, ctx) {
  core_run(cpp_kdne_fit(K, same, other, dim, eps, ctx))
}

core_knn_votes <- function(x, y, p, q, ks, ctx) {
  core_run(cpp_knn_votes(x, y, p, q, as.integer(ks), ctx))
}

core_knn_classify <- function(x, y, p, q, k, self, ctx) {
  core_run(cpp_knn_classify(x, y, p, q, k, self, ctx))
}

core_class_neighbors <- function(x, y, k, same, ctx) {
  core_run(cpp_class_neighbors(x, y, k, same, ctx))
}

core_apply_map <- function(x, L, ctx) core_run(cpp_apply_map(x, L, ctx))

# KPCA of a Gram matrix computed elsewhere: an R kernel's on the rows of x,
# or (x NULL) a precomputed one; with the kernel's degeneracy verdict.
# Kx: NULL, or the kernel rows of held-out points against the training
# points, whose KPCA coordinates come back as `new_coords`.
core_kpca_gram <- function(K, x, rank, tol, method, ctx, Kx = NULL) {
  core_run(cpp_kpca_gram(K, x, rank, tol, method, Kx, ctx))
}

# newdata: NULL, or held-out rows, whose coordinates come back as
# `new_coords` (the same in core_kpca_nystrom()).
core_kpca_kernel <- function(kernel, x, rank, tol, method, ctx, newdata = NULL) {
  core_run(cpp_kpca_kernel(kernel, x, rank, tol, method, newdata, ctx))
}

core_kpca_nystrom <- function(kernel, x, landmarks, rank, tol, method, ctx, newdata = NULL) {
  core_run(cpp_kpca_nystrom(kernel, x, landmarks, rank, tol, method, newdata, ctx))
}

core_kmeanspp_landmarks <- function(kernel, x, m, u, ctx) {
  core_run(cpp_kmeanspp_landmarks(kernel, x, m, u, ctx))
}

# targets: the n x k target neighbours, or NULL: the core finds the
# target_k nearest same-class rows of x and returns them as `targets`.
# reg: NULL (the regulariser lambda tr(M)) or the D x D positive
# semi-definite matrix R of lambda tr(M R), e.g. the Gram matrix K when the
# inputs are kernel rows (the kernel trick's lambda tr(U K U')).  dense_max
# and max_pairs: how the L-form solver visits impostor pairs
# (kmaha::lmnn::options; the defaults, 2048 and 0, except in tests).
# score (here and in core_nca_fit()): see core_dne_fit().
core_lmnn_fit <- function(x, y, targets, init, mu, lambda, max_iter, tol,
                          solver, refresh, slack, verbose, ctx, reg = NULL,
                          dense_max = 2048, max_pairs = 0, metric = TRUE,
                          span = TRUE, target_k = 0L, score = NULL) {
  core_run(cpp_lmnn_fit(x, y, targets, target_k, init, mu, lambda, max_iter, tol,
                        solver, refresh, slack, verbose, dense_max, max_pairs,
                        metric, span, reg, score, ctx))
}

# The NCA start: A0 (d x D), or NULL for the first identity_rows rows of
# the identity (0: all D), formed by the core in the coordinates it solves
# in; in_span: A0 holds coordinates on the basis of the span of the centred
# training points (d x m, m >= its dimension).  span = FALSE: plain NCA on
# all D inputs even when the span of the centred rows has fewer dimensions
# (a reference for tests).
core_nca_fit <- function(x, y, A0, lambda, reg, max_iter, tol, verbose,
                         rescale_start, ctx, score = NULL, identity_rows = 0L,
                         in_span = FALSE, span = TRUE) {
  core_run(cpp_nca_fit(x, y, A0 %||% matrix(0, 0L, 0L), as.integer(identity_rows),
                       in_span, lambda, reg, max_iter, tol, verbose, rescale_start,
                       span, score, ctx))
}

# MLKR (kmaha/mlkr.hpp): A0 a d x D start or a 0 x 0 matrix (the
# identity); the core standardizes y, works in the span of the centred rows
# when that is smaller (span = TRUE) and, with scale_start, rescales the
# start.  score: NULL or list(x = held-out coordinates, k, weights), whose
# k-NN regression predictions in the learned metric come back as `score`.
core_mlkr_fit <- function(x, y, A0, lambda, max_iter, tol, verbose, scale_start, ctx,
                          span = TRUE, score = NULL) {
  core_run(cpp_mlkr_fit(x, y, A0, lambda, max_iter, tol, verbose, scale_start, span,
                        score, ctx))
}

core_nca_minibatch <- function(x, y, A0, lambda, batches, learning_rate, ctx,
                               identity_rows = 0L, in_span = FALSE, span = TRUE) {
  core_run(cpp_nca_minibatch(x, y, A0 %||% matrix(0, 0L, 0L), as.integer(identity_rows),
                             in_span, lambda, batches, learning_rate, span, ctx))
}

# The one path from inputs to learned coordinates and votes
# (kmaha/pipeline.hpp; pipeline_apply() in R/pipeline.R prepares its
# arguments).  model: list(center, scale (both NULL: no scaling),
# feature_map = list(type = "identity" | "kpca" | "nystrom" | "kernel_rows",
# kernel, x (kpca, kernel_rows) | landmarks (nystrom) | n (points without
# inputs), projection, col_means, grand_mean), L (NULL: none), embedding (or
# coords, mapped by L in the core), y (integer codes 1..p), nlevels (p)).
# x: n_new x D complete raw rows, or NULL; Kx: NULL or the n_new x (points
# of the feature map) kernel rows, used instead of evaluating the kernel.
# type "transform": the coordinates; "class", "prob": list(class = integer
# codes, prob = n_new x p vote fractions) of the k nearest reference points
# (knn_classify()'s tie rule); "loo": the same for the reference points,
# each left out of its own neighbours.  Regression models give `response`
# (numeric) and `vote` ("uniform", "distance", "kernel") instead of y and
# nlevels: "value" and "loo_value" return the k-NN regression predictions
# (a numeric vector) of the new rows or, leave-one-out, of the reference
# points.
core_pipeline_apply <- function(model, x, Kx, type, k, ctx) {
  core_run(cpp_pipeline_apply(model, x, Kx, type, k, ctx))
}

# The degeneracy verdict (kmaha/degeneracy.hpp) of a Gram matrix K of the
# rows of x (x NULL: a precomputed Gram matrix, every pair counts): "",
# "constant" or "identity".
core_gram_degeneracy <- function(K, x, ctx) {
  core_run(cpp_gram_degeneracy(K, x, ctx))
}

# The screen of kernel candidates on cross-validation folds
# (kmaha/screen.hpp): kernels is a list of built-in kernels or their sums;
# fold: 1-based fold labels; grid = TRUE when they form an ordered grid.
# Returns list(correct = n x kernels (1, 0, NA), degenerate = kernels x
# folds codes (0 none, 1 constant, 2 identity), screened, near_identity,
# errors = kernels x folds messages).
core_screen_kernels <- function(x, y, classes, fold, folds, kernels, components, k,
                                tol, grid, ctx) {
  core_run(cpp_screen_kernels(x, y, classes, fold, folds, kernels, components, k,
                              tol, grid, ctx))
}

# The largest thread count any call of the compiled code ran with since the
# last reset (a diagnostic for the tests: num_threads = 1 must reach every
# call below a front end).
core_threads_seen <- function(reset = FALSE) cpp_threads_seen(reset)

# The count of products the core has run per instruction set (a diagnostic
# for the tests).
core_gemm_calls <- function(reset, ctx) core_run(cpp_gemm_calls(reset, ctx))

# Whether this build has AVX2+FMA kernels and this CPU runs them
# (c(compiled = , cpu = )): asked while a context is being made, so without
# one.
core_isa_support <- function() core_run(cpp_isa_support())


# LFDA (kmaha/lfda.hpp): y class codes 1..p; dim 0 = all; ridge < 0: 1e-8
# trace(S_lw); reg: the weight of the total-scatter ridge reg s^2 S_t^+ (0:
# none); span = FALSE forces the full-dimension path (tests).
core_lfda_fit <- function(x, y, dim, k, metric, ctx, ridge = -1, span = TRUE,
                          principal = FALSE, reg = 0) {
  core_run(cpp_lfda_fit(x, y, dim, k, metric, ridge, reg, span, principal, ctx))
}

# RCA (kmaha/rca.hpp): chunks integer chunklet ids, NA for rows in none;
# dim 0: no reduction; ridge < 0: automatic.
core_rca_fit <- function(x, chunks, dim, ctx, ridge = -1, span = TRUE, principal = FALSE) {
  core_run(cpp_rca_fit(x, chunks, dim, ridge, span, principal, ctx))
}

# MMC (kmaha/mmc.hpp): pairs an m x 2 integer matrix of rows of x, similar
# +1/-1; diagonal = TRUE for the diagonal metric.
core_mmc_fit <- function(x, pairs, similar, diagonal, max_iter, tol, ctx, span = TRUE) {
  core_run(cpp_mmc_fit(x, pairs, similar, diagonal, max_iter, tol, span, ctx))
}

# The diagonal MMC objective and its gradient at weights a (tests).
core_mmc_diag_objective <- function(x, pairs, similar, a, ctx) {
  core_run(cpp_mmc_diag_objective(x, pairs, similar, a, ctx))
}

# ITML (kmaha/itml.hpp): prior NULL (identity) or a D x D matrix; u, l NA:
# the 5th/95th percentiles.
core_itml_fit <- function(x, pairs, similar, prior, gamma, u, l, max_iter, tol, ctx,
                          span = TRUE) {
  core_run(cpp_itml_fit(x, pairs, similar, prior, gamma, u, l, max_iter, tol, span, ctx))
}

# One ITML Bregman projection (tests).
core_itml_project <- function(A, v, delta, lambda, xi, gamma, ctx) {
  core_run(cpp_itml_project(A, v, delta, lambda, xi, gamma, ctx))
}
