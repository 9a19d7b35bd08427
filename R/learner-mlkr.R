# Regression with kmaha(): a numeric response makes kmaha() (and
# score_candidates()) fit and score MLKR pipelines instead of classifiers.
# The candidates, folds, scores object and selection are those of the
# classification default (R/candidates.R, R/score.R, R/select.R) with these
# differences, all made here:
#   - the learner is MLKR (learner = "auto" or "mlkr"; classifiers refuse a
#     numeric response, MLKR refuses classes);
#   - folds are unstratified (one "class"), as are the screen's rows and the
#     large-n subsample;
#   - a fold's held-out rows are predicted by the k-NN regression (distance
#     weights) in the learned metric, for every k of the grid, and scored by
#     their squared errors: a pipeline's score is its mean fold RMSE, lower
#     is better, at the k with the lowest mean;
#   - the screen of the base kernels (strategy "fast") is kernel ridge
#     regression of the held-out rows of each fold (regression_screen());
#   - the rule keeps a kernelized pipeline only when it beats the better
#     baseline (the lower RMSE of Euclidean k-NN and linear MLKR) by more
#     than auto_margin standard errors of the paired per-row differences in
#     squared error (regression_select()).

# The learner specs of a regression: "auto" and "mlkr" fit MLKR; a
# classifier's name, or a function, is an error naming `learner`.
regression_specs <- function(learner, args, argname = function(a) paste0("learner_args$", a)) {
  name <- if (is.character(learner) && length(learner) == 1L && !is.na(learner)) tolower(learner)
  if (!identical(name, "auto") && !identical(name, "mlkr")) {
    stopf("`y` is numeric, so kmaha() fits a regression, which `learner = %s` cannot: use learner = \"auto\" or \"mlkr\" (metric learning for kernel regression), or give class labels as a factor.",
          if (is.null(name)) "<a function>" else dQuote(learner, FALSE))
  }
  list(mlkr = builtin_spec("mlkr", args, argname))
}

# `learner = "mlkr"` with class labels: MLKR regresses a numeric response.
check_mlkr_classes <- function(learner) {
  if (is.character(learner) && length(learner) == 1L && identical(tolower(learner), "mlkr")) {
    stopf("`learner = \"mlkr\"` is for a numeric response (regression), but `y` holds class labels; for classes use learner = \"auto\", \"nca\", \"lmnn\" or \"dne\", or give a numeric `y`.")
  }
  invisible(NULL)
}

# The "classes" folds, screen rows and subsamples are stratified by: the
# labels, or one class for a numeric response (unstratified).
strata_of <- function(y) {
  if (is.numeric(y)) factor(rep.int(1L, length(y))) else y
}

# Kernel choice's MLKR on a kernel's KPCA coordinates learns a map of at
# most this many rows (or as many as there are inputs, when more), from the
# leading components (as NCA's nca_choice_dim): MLKR's cost per evaluation
# grows with n^2 times the rows of the map.
mlkr_choice_dim <- 16L

# Ridge weights of the regression screen, relative to the mean diagonal of
# the Gram matrix.
screen_ridge <- 10^seq(-3, 1)

# The screen of the base kernels for a regression (see score_candidates()):
# on each fold, kernel ridge regression of the held-out rows on the fold's
# training rows (response centred by the training mean), for each ridge
# weight of screen_ridge; a kernel's screen score is the held-out R^2 of its
# best ridge weight (1 - SSE / the held-out sum of squares about the
# training means).  A closed-form learner, as the classification screen's
# DNE: it asks whether the kernel's features explain the response, not how
# MLKR would reshape them.  Returns the shape of screen_candidates()'s
# result (accuracy: the score, higher is better).
regression_screen <- function(xs, y, cands, fold_id, ctx) {
  fold_id <- as.integer(factor(fold_id))
  v <- max(fold_id)
  nk <- length(cands)
  degenerate <- matrix(FALSE, nk, v)
  score <- rep(NA_real_, nk)
  for (j in seq_len(nk)) {
    K <- tryCatch(kernel_gram(cands[[j]]$kernel, xs, xs, ctx),
                  error = function(e) if (is_stop_condition(e)) stop(e))
    if (is.null(K) || any(!is.finite(K))) {
      degenerate[j, ] <- TRUE
      next
    }
    sse <- numeric(length(screen_ridge))
    sst <- 0
    for (f in seq_len(v)) {
      te <- fold_id == f
      Ktr <- K[!te, !te, drop = FALSE]
      # numerically the identity (too narrow) or a constant (too wide)
      off <- Ktr[upper.tri(Ktr)]
      if (!length(off) || max(abs(off)) < 1e-8 * max(abs(diag(Ktr))) ||
          diff(range(Ktr)) < 1e-10 * max(abs(Ktr))) {
        degenerate[j, f] <- TRUE
        next
      }
      m <- mean(y[!te])
      e <- eigen(Ktr, symmetric = TRUE)
      uy <- crossprod(e$vectors, y[!te] - m)
      kte <- K[te, !te, drop = FALSE] %*% e$vectors
      scale <- mean(diag(Ktr))
      for (l in seq_along(screen_ridge)) {
        pred <- m + kte %*% (uy / pmax(e$values + screen_ridge[l] * scale, 1e-12 * scale))
        sse[l] <- sse[l] + sum((y[te] - pred)^2)
      }
      sst <- sst + sum((y[te] - m)^2)
    }
    if (!any(degenerate[j, ]) && sst > 0) score[j] <- 1 - min(sse) / sst
  }
  list(correct = matrix(NA, nrow(xs), nk), degenerate = degenerate,
       screened = rep(TRUE, nk), near_identity = rep(FALSE, nk), accuracy = score)
}

# The choice among scored regression pipelines (rule "auto"): the lowest
# mean CV RMSE (base kernels' scores smoothed over neighbouring bandwidths,
# as for classification), ties to the middle of the run in simplicity
# order; a kernelized winner is kept only when it beats the better baseline
# (the lower RMSE of Euclidean k-NN and linear MLKR, the simpler on a tie)
# by more than `margin` standard errors of the paired per-row differences
# in held-out squared error.  `err`: rows x pipelines held-out squared
# errors at each pipeline's k.  Rule "cv": the lowest RMSE among the base
# kernels.
regression_select <- function(curve, err, v, rule = "auto", margin = auto_margin) {
  k_words <- function(i) if (!is.null(curve[["k"]])) sprintf(" with k = %d", curve[["k"]][i]) else ""
  if (rule == "cv") {
    ker <- which(curve$kind == "kernel")
    if (!length(ker)) stopf("`rule = \"cv\"` chooses among base kernels, but these scores have none.")
    flip <- curve[ker, , drop = FALSE]
    flip$mean <- -flip$mean
    best <- ker[best_select(flip, v)$best]
    reason <- sprintf("lowest mean CV RMSE (%.4g%s)", curve$mean[best], k_words(best))
    return(list(best = best, reason = reason,
                explain = sprintf("%s has the lowest mean CV RMSE among the kernels (%.4g%s).",
                                  curve$label[best], curve$mean[best], k_words(best))))
  }
  score <- -smooth_scores(curve)
  degenerate <- curve_degenerate(curve)
  eligible <- curve$n_ok == v & !curve$dropped & !degenerate & !is.na(score)
  if (!any(eligible)) eligible <- !degenerate & !is.na(score)
  if (!any(eligible)) eligible <- !is.na(score)
  ord <- simplicity_order(curve)
  ord <- ord[eligible[ord]]
  at_top <- score[ord] >= max(score[ord]) - 1e-12 * max(1, abs(max(score[ord])))
  runs <- rle(at_top)
  ends <- cumsum(runs$lengths)
  longest <- which.max(ifelse(runs$values, runs$lengths, -1L))
  run <- (ends[longest] - runs$lengths[longest] + 1L):ends[longest]
  best <- ord[run[(length(run) + 1L) %/% 2L]]
  smoothed <- curve$kind[best] == "kernel" && !isTRUE(all.equal(-score[best], curve$mean[best]))
  reason <- sprintf("lowest cross-validated RMSE (%.4g%s%s)", curve$mean[best], k_words(best),
                    if (smoothed) sprintf(", %.4g smoothed over neighbouring bandwidths",
                                          -score[best]) else "")
  explain <- sprintf("%s has the lowest cross-validated RMSE (%.4g%s%s).",
                     curve$label[best], curve$mean[best], k_words(best),
                     if (smoothed) sprintf("; %.4g smoothed over neighbouring bandwidths",
                                           -score[best]) else "")
  base <- which(curve$kind %in% c("euclidean", "linear") & eligible)
  if (length(base) && !best %in% base) {
    b <- base[order(curve$mean[base], match(base, ord))][1]
    # gain: the mean reduction in held-out squared error
    pg <- paired_gain(-err, best, b, margin)
    if (!pg$beats) {
      reason <- sprintf("%s: %s (RMSE %.4g) did not beat it by more than %s of the paired difference in squared error (gain %.4g, standard error %.4g)",
                        baseline_words(curve, b), curve$label[best], curve$mean[best],
                        margin_words(margin), pg$gain, pg$se)
      explain <- c(explain, sprintf(
        "It does not beat the better baseline, %s (RMSE %.4g), by more than %s of their paired difference in squared error (gain %.4g, standard error %.4g), so the baseline is kept.",
        curve$label[b], curve$mean[b], margin_words(margin), pg$gain, pg$se))
      best <- b
    } else {
      reason <- sprintf("%s; beats the better baseline, %s, by %.4g in squared error (standard error %.4g)",
                        reason, curve$label[b], pg$gain, pg$se)
      explain <- c(explain, sprintf(
        "It beats the better baseline, %s (RMSE %.4g), by %.4g in mean squared error (standard error %.4g of their paired difference).",
        curve$label[b], curve$mean[b], pg$gain, pg$se))
    }
  }
  list(best = best, reason = reason, explain = explain)
}

# TRUE for scores of a regression (mean fold RMSE, lower is better).
is_regression_scores <- function(x) identical(x$metric, "rmse")

# The name of a scores object's measure, in words.
score_metric_words <- function(x) if (is_regression_scores(x)) "RMSE" else "accuracy"

# A regression model with another k (a fit whose metric does not depend on
# k, reused by the mlr3 learner): k and the leave-one-out statistics.
regression_set_k <- function(fit, k, ctx) {
  fit$k <- as.integer(k)
  fit$loo_rmse <- fit$loo_r2 <- NA_real_
  if (nrow(fit$embedding) > k) {
    res <- fit$y - pipeline_apply(fit, NULL, "value", k, ctx)
    fit$loo_rmse <- sqrt(mean(res^2))
    fit$loo_r2 <- 1 - sum(res^2) / sum((fit$y - mean(fit$y))^2)
  }
  fit
}
