# Cross-validated choice among base kernels for the KPCA trick: the
# kernel-by-fold fits (through future.apply), successive halving of the
# kernels in the fast strategy, and the result's methods.  The learner
# plumbing (resolve, run, fold fits) lives in learner-run.R.

#' Choose a kernel by cross-validation
#'
#' For every base kernel and every fold of a stratified v-fold split of the
#' training data, applies the KPCA trick — [kpca()] on the fold's training
#' part, the learner on those coordinates, the held-out part projected with
#' the same KPCA and map — and scores the fold by k-nearest-neighbour accuracy
#' on the held-out part. The kernel with the highest mean accuracy wins;
#' **ties go to the first best kernel in the order of `kernels`** (for
#' [paper_kernels()], the smallest \eqn{\sigma}).
#'
#' **Strategies.** `strategy = "exhaustive"` fits every kernel on every fold
#' (v times the number of kernels fits). `strategy = "fast"` (the default)
#' fits every kernel on the first fold only, then drops the kernels that
#' are clearly worse there (successive halving) and fits the others on the
#' remaining folds. A kernel is dropped when the best kernel of the first
#' fold beats it on that fold's held-out points by more than one standard
#' error of a paired comparison: with \eqn{w_b} the points only the best
#' kernel classifies correctly and \eqn{w_j} those only kernel j does, j is
#' dropped when \eqn{w_b - w_j > \sqrt{w_b + w_j + 1}}. The kernels kept are
#' scored exactly as in the exhaustive strategy (same folds, same fits, the
#' same random stream for each kernel-fold fit), so the fast choice equals
#' the exhaustive one unless the exhaustive winner was dropped after the
#' first fold. Over the nine datasets of the paper (10 random splits each)
#' the test accuracy of the kernel the fast strategy chooses is within 0.005
#' of the exhaustive choice on average, with about half the fits
#' (`bench/cv_validate.R`). A dropped kernel's `curve` row holds its
#' first-fold accuracy and `dropped = TRUE`. In both strategies the fold
#' fits of the built-in NCA and DNE return only the learned map (no
#' training embedding or leave-one-out accuracy, which the fold score does
#' not use).
#'
#' The kernel-by-fold fits run through [future.apply::future_lapply()] (one
#' call per round: one for `"exhaustive"`, two for `"fast"`), so the user's
#' [future::plan()] decides where they run (sequentially by default). Every
#' kernel-fold fit gets its own parallel random stream (L'Ecuyer-CMRG, as
#' with `future.seed = TRUE`), drawn before any fit, so the result depends
#' neither on the plan nor on which kernels were dropped. Each fit uses one
#' thread (option `kmaha.num_threads` and the OpenMP threads of the
#' products), under every plan: the fits are many and small, so parallel
#' work across fits, through the plan's workers, is what uses several cores
#' well (threads inside a small fit cost more than they save, and compete
#' with the workers). To give NCA fits their own threads anyway, set
#' `num_threads` in `learner_args`. Progress is signalled with
#' [progressr::progressor()]: wrap the call in [progressr::with_progress()]
#' to see a progress bar. Folds are drawn from R's random number generator:
#' use `seed` or [set.seed()] for reproducible results.
#'
#' A fit that fails on a fold (for example a learner error) scores `NA`
#' there and is reported in `errors`; such kernels can still win on their
#' remaining folds only if no kernel succeeded on all folds. Warnings of
#' the fold fits (for example an NCA fit that stopped before converging) are
#' collected: `cv_kernel()` gives at most one warning, with the number of
#' fits that warned and the first message, and lists them all in
#' `warnings`.
#'
#' @param x Training inputs (numeric matrix or data frame), used as given
#'   ([kmaha()] passes the standardized inputs).
#' @param y Class labels, one per row of `x`.
#' @param learner `"nca"`, `"lmnn"`, `"dne"`, or a function `f(x, y, ...)`
#'   returning a d x D map matrix, or an object holding one (an element `L`,
#'   or a [transform_matrix()] method). See [kmaha()].
#' @param kernels A non-empty list of kernel objects to choose from (kernlab
#'   kernels and R functions too, see [kernel-sources]).
#' @param folds Number of folds (a whole number >= 2), or a vector of fold
#'   labels, one per row of `x`.
#' @param k Neighbours of the kNN classifier that scores each fold.
#' @param learner_args A named list of further arguments for the learner.
#' @param neighbors `"feature"` or `"input"`: where LMNN/DNE target
#'   neighbours are found (see [kmaha()]).
#' @param rank,tol,landmarks,landmark_method Passed to [kpca()]: with
#'   `landmarks` (a number, or a matrix of points), every fold's KPCA uses
#'   the Nystrom method, and a number of landmarks is drawn within each
#'   fold's training part.
#' @param seed `NULL`, or a number for [set.seed()] used to draw the folds and
#'   the parallel random streams (the global random state is restored after).
#' @param strategy `"fast"` (successive halving after the first fold) or
#'   `"exhaustive"` (every kernel on every fold); see Details.
#' @param num_threads `NULL` (the option `kmaha.num_threads`, else the
#'   environment variable `KMAHA_NUM_THREADS`, else 2) or the number of
#'   threads of the compiled code within each fold fit.
#' @param ... Unused; must be empty.
#' @return An object of class `kmaha_cv`: a list with `curve` (a data frame
#'   with one row per kernel: `kernel` index, `sigma`, `mean`, `sd`, `n_ok`,
#'   the number of folds that fitted, and `dropped`, whether the fast
#'   strategy dropped the kernel after the first fold), `accuracy` (kernel x
#'   fold matrix, `NA` where a fit failed or was skipped), `best` (index of
#'   the chosen kernel), `kernel` (the chosen kernel), `folds` (the fold of
#'   each row), `strategy`, `n_fits` (fits run), `seconds` (kernel x fold
#'   matrix of the elapsed time of each fit, where it ran; `NA` where
#'   skipped), `errors` and `warnings` (data frames of kernel, fold and
#'   message) and `k`.
#' @examples
#' x <- scale(iris[, 1:4])
#' cv <- cv_kernel(x, iris$Species, "dne",
#'                 kernels = lapply(c(0.5, 1, 5), rbf_kernel), folds = 3,
#'                 seed = 1)
#' cv$curve
#' @export
cv_kernel <- function(x, y, learner = "nca", kernels = paper_kernels(),
                      folds = 5, k = 1, learner_args = list(),
                      neighbors = c("feature", "input"), rank = NULL,
                      tol = 1e-8, seed = NULL, landmarks = NULL,
                      landmark_method = c("random", "kmeans++"),
                      strategy = c("fast", "exhaustive"), num_threads = NULL, ...) {
  check_dots_empty("cv_kernel()", ..., hint = "Pass learner options in `learner_args`.")
  neighbors <- match.arg(neighbors)
  landmark_method <- match.arg(landmark_method)
  strategy <- match.arg(strategy)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  kernels <- check_kernel_list(kernels)
  check_nystrom_kernels(kernels, landmarks, "kernels")
  learner_args <- check_learner_args(learner_args)
  spec <- learner_spec(learner, learner_args)
  k <- check_count(k, "k")
  if (!is.null(seed)) seed <- check_number(seed, "seed")
  ctx <- kmaha_context(num_threads)
  base <- list(rank = rank, tol = tol, landmarks = landmarks,
               landmark_method = landmark_method)
  cands <- lapply(seq_along(kernels), function(i) cand_kernel(kernels[[i]], i))
  cv_choose(x, y, spec, cands, folds, k, strategy, seed, base, neighbors, ctx,
            views = "cv", arg_folds = "folds")$cv$cv
}

# The kmaha_cv object from the task results of cv_run(): per candidate the
# fold accuracies, their mean and sd, the pooled held-out correctness, and
# the candidate chosen by `rule` ("best": highest mean accuracy, the first
# on ties; "auto": see auto_select()).
cv_result <- function(run, cands, fold_id, strategy, k, label, rule = "best",
                      subset = seq_along(cands)) {
  # A view on some of the candidates (kernel = "cv" on the base kernels of
  # a run over auto's candidates): their tasks only, renumbered.
  in_view <- run$tasks$cand %in% subset
  res <- run$res[in_view]
  tasks <- run$tasks[in_view, , drop = FALSE]
  tasks$cand <- match(tasks$cand, subset)
  dropped <- run$dropped[subset]
  cands <- cands[subset]
  nc <- length(cands)
  v <- max(fold_id)
  ran <- !vapply(res, is.null, NA)
  field <- function(name, empty) lapply(res, function(r) if (is.null(r)) empty else r[[name]])
  acc <- matrix(unlist(field("acc", NA_real_)), nrow = nc, ncol = v, byrow = TRUE,
                dimnames = list(NULL, paste0("fold", seq_len(v))))
  secs <- matrix(unlist(field("seconds", NA_real_)), nrow = nc, ncol = v, byrow = TRUE,
                 dimnames = dimnames(acc))
  # Held-out correctness of every training row under every candidate (NA
  # where the candidate was not fitted on the row's fold or the fit failed).
  correct <- matrix(NA, length(fold_id), nc)
  for (t in which(ran)) {
    cc <- res[[t]]$correct
    if (!is.null(cc)) correct[fold_id == tasks$fold[t], tasks$cand[t]] <- cc
  }
  errs <- unlist(field("error", NA_character_))
  err_tab <- data.frame(candidate = tasks$cand[!is.na(errs)],
                        fold = tasks$fold[!is.na(errs)],
                        message = errs[!is.na(errs)], stringsAsFactors = FALSE)
  warns <- field("warnings", character())
  n_warn <- lengths(warns)
  warn_tab <- data.frame(candidate = rep(tasks$cand, n_warn),
                         fold = rep(tasks$fold, n_warn),
                         message = unlist(warns, use.names = FALSE) %||% character(),
                         stringsAsFactors = FALSE)
  # Candidates whose kernel was numerically degenerate on some fold's
  # training part (see kernel_degeneracy()): scored, but left out of the
  # choice.
  deg <- unlist(field("degenerate", FALSE))
  degenerate <- vapply(seq_len(nc), function(j) any(deg[ran & tasks$cand == j] %in% TRUE), NA)
  n_ok <- rowSums(!is.na(acc))
  mu <- rowMeans(acc, na.rm = TRUE)
  mu[n_ok == 0L] <- NA_real_
  sdv <- apply(acc, 1L, function(a) if (sum(!is.na(a)) > 1L) stats::sd(a, na.rm = TRUE) else NA_real_)
  if (all(is.na(mu))) {
    stopf("Cross-validation failed for every candidate; first error: %s", err_tab$message[1])
  }
  if (nrow(err_tab)) {
    warnf("%d of the %d cross-validation fits (candidate x fold) failed and were left out of the choice; the first error: %s",
          nrow(err_tab), sum(ran), err_tab$message[1])
  }
  if (any(n_warn > 0L)) {
    warnf("%d of the %d cross-validation fits (candidate x fold) gave warnings; the first: %s",
          sum(n_warn > 0L), sum(ran), warn_tab$message[1])
  }
  curve <- data.frame(candidate = seq_len(nc),
                      kind = vapply(cands, `[[`, "", "kind"),
                      label = vapply(cands, `[[`, "", "label"),
                      sigma = vapply(cands, function(cd) as.double(cd$sigma), 0),
                      mean = mu, sd = sdv, n_ok = n_ok, dropped = dropped,
                      degenerate = degenerate, stringsAsFactors = FALSE)
  sel <- switch(rule, best = best_select(curve, v), auto = auto_select(curve, correct, v))
  chosen <- cands[[sel$best]]
  structure(list(
    curve = curve, accuracy = acc, correct = correct, best = sel$best,
    reason = sel$reason, rule = rule,
    kernel = switch(chosen$kind, kernel = , unweighted = chosen$kernel, NULL),
    kernels = lapply(cands, function(cd) cd$kernel),
    candidates = lapply(cands, function(cd) cd[c("kind", "label", "sigma")]),
    folds = fold_id, strategy = strategy, n_fits = sum(ran), seconds = secs,
    errors = err_tab, warnings = warn_tab, k = k,
    learner = label), class = "kmaha_cv")
}

# The paper's rule: the highest mean fold accuracy among the candidates
# fitted on every fold (dropped ones compete only when no kept one fitted;
# numerically degenerate ones only when every one is); the first on ties.
best_select <- function(curve, v) {
  n_ok <- curve$n_ok
  ok <- n_ok > 0L
  degenerate <- curve_degenerate(curve)
  if (any(ok & !degenerate)) ok <- ok & !degenerate
  cand <- !curve$dropped & ok
  if (!any(cand)) cand <- ok
  eligible <- cand & (if (any(cand & n_ok == v)) n_ok == v else TRUE)
  score <- ifelse(eligible, curve$mean, -Inf)
  best <- which.max(score)
  list(best = best, reason = sprintf("highest mean CV accuracy (%.3f)", curve$mean[best]))
}

#' @export
print.kmaha_cv <- function(x, ...) {
  what <- if (identical(x$rule, "auto")) "candidate pipelines" else "kernels"
  cat(sprintf("<kmaha cv> %d-fold CV of %s over %d %s (kNN k = %d)\n",
              ncol(x$accuracy), x$learner, nrow(x$curve), what, x$k))
  strategy <- x$strategy %||% "exhaustive"
  if (strategy == "fast") {
    cat(sprintf("  fast strategy: %d of %d %s dropped after the first fold; %d fits\n",
                sum(x$curve$dropped), nrow(x$curve), what, x$n_fits))
  }
  cat(sprintf("  chosen: %s (mean accuracy %.3f)\n", x$curve$label[x$best],
              x$curve$mean[x$best]))
  if (!is.null(x$reason)) cat("  why: ", x$reason, "\n", sep = "")
  if (any(curve_degenerate(x$curve))) {
    cat(sprintf("  left out as numerically degenerate on these data (nearest neighbours decided by ties): %s\n",
                paste(x$curve$label[curve_degenerate(x$curve)], collapse = ", ")))
  }
  if (nrow(x$errors)) {
    cat(sprintf("  %d fit(s) failed and were left out; first error: %s\n",
                nrow(x$errors), x$errors$message[1]))
  }
  if (NROW(x$warnings)) {
    cat(sprintf("  %d fit(s) gave warnings\n",
                nrow(unique(x$warnings[c("candidate", "fold")]))))
  }
  invisible(x)
}

#' @export
summary.kmaha_cv <- function(object, ...) {
  cu <- object$curve
  tab <- data.frame(candidate = cu$label, mean = cu$mean, sd = cu$sd,
                    folds = cu$n_ok, dropped = cu$dropped,
                    chosen = seq_len(nrow(cu)) == object$best,
                    stringsAsFactors = FALSE)
  out <- list(table = tab, folds = ncol(object$accuracy), k = object$k,
              learner = object$learner, strategy = object$strategy,
              n_fits = object$n_fits, reason = object$reason,
              errors = object$errors, n_warned = nrow(unique(object$warnings[c("candidate", "fold")])))
  class(out) <- "summary.kmaha_cv"
  out
}

#' @export
print.summary.kmaha_cv <- function(x, ...) {
  cat(sprintf("%d-fold cross-validation of %s (kNN k = %d, %s strategy, %d fits)\n",
              x$folds, x$learner, x$k, x$strategy, x$n_fits))
  tab <- x$table
  tab$mean <- round(tab$mean, 4)
  tab$sd <- round(tab$sd, 4)
  tab$chosen <- ifelse(tab$chosen, "<==", "")
  print(tab, row.names = FALSE)
  if (!is.null(x$reason)) cat("Chosen because: ", x$reason, "\n", sep = "")
  if (nrow(x$errors)) {
    cat(sprintf("%d fit(s) failed and were left out of the choice:\n", nrow(x$errors)))
    print(utils::head(x$errors, 5L), row.names = FALSE)
  }
  if (x$n_warned) cat(sprintf("%d fit(s) gave warnings (see $warnings)\n", x$n_warned))
  invisible(x)
}

#' @export
plot.kmaha_cv <- function(x, ...) {
  cu <- x$curve
  ker <- which(cu$kind == "kernel" & !is.na(cu$sigma))
  other <- setdiff(seq_len(nrow(cu)), ker)
  lo <- cu$mean - ifelse(is.na(cu$sd), 0, cu$sd)
  hi <- cu$mean + ifelse(is.na(cu$sd), 0, cu$sd)
  has_sigma <- length(ker) > 0L
  xs <- if (has_sigma) log10(cu$sigma[ker]) else seq_along(ker)
  dropped <- cu$dropped
  xr <- if (has_sigma) range(xs) else c(1, max(1, nrow(cu)))
  b <- x$best
  ltys <- c(2, 3, 4, 5)
  other_lty <- ltys[(seq_along(other) - 1L) %% 4L + 1L]
  # The legend explains every mark: the chosen candidate (a red circle on
  # the curve, or a red line), the kernels dropped by the fast strategy
  # (crosses) and the candidates without a sigma (grey reference lines).  A
  # symbol-only entry has line type 0 and a line-only one no symbol (NA).
  # It gets a right margin of its own, so it never covers the curve.
  any_dropped <- any(dropped[ker])
  leg <- c(sprintf("chosen: %s", cu$label[b]),
           if (any_dropped) "dropped after the first fold",
           cu$label[other])
  leg_pch <- c(if (b %in% ker) 1 else NA, if (any_dropped) 4, rep(NA, length(other)))
  leg_lty <- c(if (b %in% ker) 0 else 1, if (any_dropped) 0, other_lty)
  leg_lwd <- c(2, if (any_dropped) 1, rep(1, length(other)))
  leg_col <- c("red", if (any_dropped) "black", rep("grey40", length(other)))
  fit <- legend_fit(leg)
  op <- graphics::par(mar = fit$mar)
  on.exit(graphics::par(op))
  # Candidates without a sigma (linear, aligned, unweighted) are drawn as
  # horizontal reference lines.
  graphics::plot(NA, xlim = xr, ylim = range(c(lo, hi), na.rm = TRUE),
                 xlab = if (has_sigma) expression(log[10] ~ sigma) else "candidate",
                 ylab = "CV accuracy (mean +/- sd)",
                 main = sprintf("%d-fold CV of %s", ncol(x$accuracy), x$learner), ...)
  if (length(ker)) {
    graphics::lines(xs, cu$mean[ker], type = "b", pch = ifelse(dropped[ker], 4, 19))
    ok <- !is.na(cu$mean[ker])
    graphics::segments(xs[ok], lo[ker][ok], xs[ok], hi[ker][ok])
  }
  for (j in seq_along(other)) {
    graphics::abline(h = cu$mean[other[j]], lty = other_lty[j], col = "grey40")
  }
  if (b %in% ker) {
    graphics::points(xs[match(b, ker)], cu$mean[b], pch = 1, cex = 2, lwd = 2, col = "red")
  } else {
    graphics::abline(h = cu$mean[b], col = "red", lwd = 2)
  }
  legend_outside(leg, pch = leg_pch, lty = leg_lty, lwd = leg_lwd, col = leg_col,
                 ncol = fit$ncol, cex = fit$cex)
  invisible(x)
}
