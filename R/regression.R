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
#     regression scored by its leave-one-out error (regression_screen());
#   - the rule keeps a kernelized pipeline only when it beats the better
#     baseline (the lower RMSE of Euclidean k-NN and linear MLKR) by more
#     than auto_margin standard errors of the paired per-row differences in
#     squared error (regression_select()).

# The learner specs of a regression: "auto" fits the regression learners
# (the records with task = "regression": MLKR), a regression learner's name
# that one; a classifier's name, or a function, is an error naming
# `learner`.
regression_specs <- function(learner, args, argname = function(a) paste0("learner_args$", a),
                             caller = "kmaha()") {
  reg <- builtin_learners("regression")
  name <- if (is.character(learner) && length(learner) == 1L && !is.na(learner)) tolower(learner)
  if (is.null(name) || !name %in% c("auto", reg)) {
    stopf("`y` is numeric, so %s fits a regression, which `learner = %s` cannot: use learner = %s (%s), or give class labels as a factor.",
          caller, if (is.null(name)) "<a function>" else dQuote(learner, FALSE),
          or_words(dQuote(c("auto", reg), FALSE)),
          paste(vapply(reg, function(nm) learner_record(nm)$description %||% learner_label(nm), ""),
                collapse = ", "))
  }
  use <- if (name == "auto") reg else name
  # with "auto", as for classes (learner_specs()), an element of
  # `learner_args` named by a learner holds options for it alone
  own <- if (name == "auto") intersect(names(args), reg) else character()
  for (nm in own) {
    if (!is.list(args[[nm]])) {
      stopf("`%s` must be a named list of options for %s alone, e.g. list(lambda = 0.1).",
            argname(nm), learner_label(nm))
    }
  }
  shared <- args[setdiff(names(args), own)]
  stats::setNames(lapply(use, function(nm) {
    if (!nm %in% own) return(builtin_spec(nm, shared, argname))
    a <- c(shared, args[[nm]])
    sub_name <- function(o) if (o %in% names(args[[nm]])) paste0(argname(nm), "$", o) else argname(o)
    builtin_spec(nm, a[!duplicated(names(a), fromLast = TRUE)], sub_name)
  }), use)
}

# A regression learner named with class labels: it regresses a numeric
# response.
check_mlkr_classes <- function(learner) {
  if (is.character(learner) && length(learner) == 1L && !is.na(learner) &&
      tolower(learner) %in% builtin_learners("regression")) {
    stopf("`learner = %s` is for a numeric response (regression), but `y` holds class labels; for classes use learner = %s, or give a numeric `y`.",
          dQuote(learner, FALSE), or_words(dQuote(c("auto", auto_learners()), FALSE)))
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
# kernel ridge regression of the response (centred) on the screen's rows,
# scored by its exact leave-one-out error (each row predicted by the fit to
# the others, from one eigendecomposition of the Gram matrix) at the best
# ridge weight of screen_ridge; a kernel's screen score is that held-out
# R^2, 1 - SSE / the sum of squares about the mean.  A closed-form learner,
# as the classification screen's DNE: it asks whether the kernel's
# features explain the response, not how MLKR would reshape them.  Along
# an ordered grid of bandwidths (kernel_grid(), such as paper_kernels())
# it screens every other kernel, then the unscreened neighbours of the
# best, as the classification screen does.  Numerically degenerate kernels
# (a Gram matrix that is the identity or a constant) are flagged and not
# scored.  Returns the shape of screen_candidates()'s result (accuracy: the
# score, higher is better; `fold_id` gives the shape of `degenerate`).
regression_screen <- function(xs, y, cands, fold_id, ctx) {
  v <- length(unique(fold_id))
  nk <- length(cands)
  kernels <- lapply(cands, `[[`, "kernel")
  degenerate <- matrix(FALSE, nk, v)
  score <- rep(NA_real_, nk)
  screened <- rep(FALSE, nk)
  yc <- y - mean(y)
  sst <- sum(yc^2)
  one <- function(j) {
    screened[j] <<- TRUE
    K <- tryCatch(kernel_gram(kernels[[j]], xs, xs, ctx),
                  error = function(e) if (is_stop_condition(e)) stop(e))
    off <- if (!is.null(K)) K[upper.tri(K)]
    if (is.null(K) || any(!is.finite(K)) || !length(off) || !(sst > 0) ||
        max(abs(off)) < 1e-8 * max(abs(diag(K))) || diff(range(K)) < 1e-10 * max(abs(K))) {
      degenerate[j, ] <<- TRUE
      return(invisible())
    }
    e <- eigen(K, symmetric = TRUE)
    uy <- drop(crossprod(e$vectors, yc))
    u2 <- e$vectors^2
    lam <- pmax(e$values, 0)
    sse <- vapply(screen_ridge * mean(diag(K)), function(r) {
      w <- lam / (lam + r)
      fit <- drop(e$vectors %*% (w * uy))
      h <- drop(u2 %*% w)
      sum(((yc - fit) / pmax(1 - h, 1e-12))^2)
    }, 0)
    score[j] <<- 1 - min(sse) / sst
  }
  if (kernel_grid(kernels)) {
    for (j in seq(1L, nk, by = 2L)) one(j)
    if (any(!is.na(score))) {
      best <- which.max(score)
      for (j in intersect(c(best - 1L, best + 1L), seq_len(nk))) if (!screened[j]) one(j)
    }
  } else {
    for (j in seq_len(nk)) one(j)
  }
  list(correct = matrix(NA, nrow(xs), nk), degenerate = degenerate,
       screened = screened, near_identity = rep(FALSE, nk), accuracy = score)
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
  top <- auto_top(curve, score, v)
  best <- top$best
  smoothed <- curve$kind[best] == "kernel" && !isTRUE(all.equal(-score[best], curve$mean[best]))
  reason <- sprintf("lowest cross-validated RMSE (%.4g%s%s)", curve$mean[best], k_words(best),
                    if (smoothed) sprintf(", %.4g smoothed over neighbouring bandwidths",
                                          -score[best]) else "")
  explain <- sprintf("%s has the lowest cross-validated RMSE (%.4g%s%s).",
                     curve$label[best], curve$mean[best], k_words(best),
                     if (smoothed) sprintf("; %.4g smoothed over neighbouring bandwidths",
                                           -score[best]) else "")
  # gain: the mean reduction in held-out squared error
  baseline_guard(list(best = best, reason = reason, explain = explain), curve, top,
                 -err, margin, lower = TRUE,
                 words = list(num = "%.4g", score = "RMSE ", diff = " in squared error",
                              gain = " in mean squared error"))
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

# "a", "a or b", "a, b or c".
or_words <- function(x) {
  if (length(x) <= 1L) return(paste(x, collapse = ""))
  paste(paste(x[-length(x)], collapse = ", "), "or", x[length(x)])
}
