# Selection rules: read a scored-candidates object (R/score.R) and name the
# candidate to fit.
#
#   "cv"   the paper's rule, among the base kernels: the highest mean
#          cross-validated accuracy (kernel = "cv");
#   "auto" kernel = "auto"'s rule, among every candidate: the highest
#          (bandwidth-smoothed) score, then the guards that keep a baseline
#          unless a learned candidate clearly beats it (auto_select()).
#
# select_candidate() returns list(best, reason, explain, rule): the index of
# the chosen candidate, one sentence on why, and the sentences that explain
# the whole choice (print() shows them).

selection_rules <- c("auto", "cv")

select_candidate <- function(scores, rule) {
  curve <- rule_view(scores$curve, default_shortlist(if (rule == "auto") "auto" else "kernels"))
  v <- ncol(scores$accuracy)
  # a regression's scores: RMSE, lower is better (R/regression.R)
  sel <- if (is_regression_scores(scores)) regression_select(curve, scores$correct, v, rule) else switch(rule,
    cv = {
      ker <- which(curve$kind == "kernel")
      if (!length(ker)) {
        stopf("`rule = \"cv\"` chooses among base kernels, but these scores have none.")
      }
      s <- best_select(curve[ker, , drop = FALSE], v)
      s$best <- ker[s$best]
      s
    },
    auto = auto_select(curve, scores$correct, v))
  sel$rule <- rule
  sel$explain <- sel$explain %||% sel$reason
  sel
}

# The curve as a rule sees it: of the base kernels the screen passed to the
# learner, only the rule's own number (default_shortlist()) in the screen's
# order; the others count as screened out.  So scores made with a longer
# shortlist (reproduce_paper() scores once for "cv" and "auto") give each
# rule what scoring with its own shortlist would have given: the learner's
# scores of a kernel do not depend on which others were scored.
rule_view <- function(curve, shortlist) {
  if (is.null(curve$screen)) return(curve)
  # by candidate: a kernel's rows (one per learner) share its screen score
  cand <- curve$candidate %||% seq_len(nrow(curve))
  ker <- which(curve$kind == "kernel" & !curve$dropped & !is.na(curve$screen) &
                 !duplicated(cand))
  if (length(ker) <= shortlist) return(curve)
  acc <- curve$screen[ker]
  acc[curve_degenerate(curve)[ker]] <- -Inf
  drop <- ker[order(-acc, ker)][-seq_len(shortlist)]
  curve$dropped[cand %in% cand[drop]] <- TRUE
  curve
}

# The paper's rule: the highest mean fold accuracy among the candidates
# fitted on every fold (screened-out ones compete only when no scored one
# fitted; numerically degenerate ones only when every one is); the first on
# ties.
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
  reason <- sprintf("highest mean CV accuracy (%.3f)", curve$mean[best])
  list(best = best, reason = reason,
       explain = sprintf("%s has the highest mean CV accuracy among the kernels (%.3f).",
                         curve$label[best], curve$mean[best]))
}

# Candidates from the simplest: Euclidean, linear, the kernels from the
# smoothest (largest sigma) to the roughest, aligned, unweighted.
simplicity_order <- function(curve) {
  rank_kind <- c(euclidean = 1, linear = 2, kernel = 3, align = 4, align_lp = 4,
                 unweighted = 5)[curve$kind]
  sig <- ifelse(is.na(curve$sigma), 0, -curve$sigma)
  order(rank_kind, sig, seq_len(nrow(curve)))
}

# The base kernels' CV scores smoothed over neighbouring bandwidths (1-2-1
# weights; 2-1 at the ends; missing scores left out), when every base
# kernel has a bandwidth: neighbouring kernels of an ordered grid behave
# alike, so a score that is noisy for one kernel borrows strength from its
# neighbours.  Other candidates keep their score.
smooth_scores <- function(curve) {
  if (!is.null(curve$learner) && length(unique(curve$learner[curve$kind == "kernel"])) > 1L) {
    # each learner's kernels along the grid
    score <- curve$mean
    for (lr in unique(curve$learner[curve$kind == "kernel"])) {
      rows <- which(curve$kind != "kernel" | curve$learner == lr)
      score[rows] <- smooth_scores(curve[rows, , drop = FALSE])
    }
    return(score)
  }
  score <- curve$mean
  ker <- which(curve$kind == "kernel")
  if (length(ker) < 3L || anyNA(curve$sigma[ker])) return(score)
  ker <- ker[order(curve$sigma[ker])]
  # a degenerate kernel's score (ties decide its neighbours) tells nothing
  # about its neighbours on the grid
  m <- curve$mean[ker]
  m[curve_degenerate(curve)[ker]] <- NA_real_
  w <- c(1, 2, 1)
  sm <- vapply(seq_along(ker), function(i) {
    j <- (i - 1L):(i + 1L)
    ok <- j >= 1L & j <= length(ker)
    v <- m[j[ok]]
    ww <- w[ok][!is.na(v)]
    if (is.na(m[i]) || !length(ww)) return(NA_real_)
    sum(ww * v[!is.na(v)]) / sum(ww)
  }, 0)
  score[ker] <- sm
  score
}

# The choice of kernel = "auto".  Every pipeline (candidate and learner,
# at its best k) is scored by its mean CV accuracy, the base kernels' scores
# smoothed over neighbouring bandwidths (smooth_scores(), per learner).  The
# best pipeline among those scored on every fold wins; on ties, the middle
# of the longest run of tied pipelines in simplicity order
# (simplicity_order()).  The baselines are Euclidean k-NN and the linear
# learner(s): the better baseline is the one with the higher score (on a
# tie the simpler, Euclidean first).  A kernelized winner is kept only when
# it beats that better baseline by more than `margin` standard errors of
# their paired difference (held-out points of all folds); otherwise the
# better baseline is chosen: a winner picked among many noisy estimates is
# optimistic, and a baseline costs nothing to trust (see auto_margin).
auto_select <- function(curve, correct, v, margin = auto_margin) {
  score <- smooth_scores(curve)
  top <- auto_top(curve, score, v)
  best <- top$best
  smoothed <- curve$kind[best] == "kernel" && !identical(score[best], curve$mean[best])
  k_words <- if (!is.null(curve[["k"]])) sprintf(" with k = %d", curve[["k"]][best]) else ""
  reason <- sprintf("highest cross-validated accuracy (%.3f%s%s)", curve$mean[best], k_words,
                    if (smoothed) sprintf(", %.3f smoothed over neighbouring bandwidths",
                                          score[best]) else "")
  explain <- sprintf("%s has the highest cross-validated accuracy (%.3f%s%s).",
                     curve$label[best], curve$mean[best], k_words,
                     if (smoothed) sprintf("; %.3f smoothed over neighbouring bandwidths",
                                           score[best]) else "")
  baseline_guard(list(best = best, reason = reason, explain = explain), curve, top,
                 correct, margin, lower = FALSE,
                 words = list(num = "%.3f", score = "", diff = "", gain = ""))
}

# The top of the automatic choices (auto_select(), regression_select()) by
# `score` (higher is better): among the pipelines scored on every one of
# the `v` folds, not dropped and not degenerate (failing those, the
# non-degenerate ones; failing those, all with a score), those at the top
# score (within 1e-12 relative to max(1, |top|)); on ties, the middle of the
# longest run of tied pipelines in simplicity order.  Returns the winner
# `best`, the `eligible` pipelines and the simplicity order `ord` of those.
auto_top <- function(curve, score, v) {
  degenerate <- curve_degenerate(curve)
  eligible <- curve$n_ok == v & !curve$dropped & !degenerate & !is.na(score)
  if (!any(eligible)) eligible <- !degenerate & !is.na(score)
  if (!any(eligible)) eligible <- !is.na(score)
  ord <- simplicity_order(curve)
  ord <- ord[eligible[ord]]
  top_score <- max(score[ord])
  at_top <- score[ord] >= top_score - 1e-12 * max(1, abs(top_score))
  runs <- rle(at_top)
  ends <- cumsum(runs$lengths)
  longest <- which.max(ifelse(runs$values, runs$lengths, -1L))
  run <- (ends[longest] - runs$lengths[longest] + 1L):ends[longest]
  list(best = ord[run[(length(run) + 1L) %/% 2L]], eligible = eligible, ord = ord)
}

# The guard of the automatic choices: a kernelized winner (sel$best, with
# its reason and explanation) is kept only when it beats the better
# baseline (Euclidean k-NN or a linear learner among top$eligible: the best
# mean score, `lower` = TRUE when lower is better; on a tie the simpler)
# by more than `margin` standard errors of their paired difference in
# `gains` (held-out points x pipelines, higher is better); otherwise the
# baseline is chosen.  `words` formats the messages: num, the format of
# scores and gains; score, the words before a score; diff, what the paired
# difference is in; gain, what the gain is in.
baseline_guard <- function(sel, curve, top, gains, margin, lower, words) {
  best <- sel$best
  base <- which(curve$kind %in% c("euclidean", "linear") & top$eligible)
  if (!length(base) || best %in% base) return(sel)
  # the better baseline; on a tie the simpler
  b <- base[order(if (lower) curve$mean[base] else -curve$mean[base],
                  match(base, top$ord))][1]
  pg <- paired_gain(gains, best, b, margin)
  num <- words$num
  if (!pg$beats) {
    sel$reason <- sprintf(paste0("%s: %s (", words$score, num, ") did not beat it by more than %s of the paired difference",
                                 words$diff, " (gain ", num, ", standard error ", num, ")"),
                          baseline_words(curve, b), curve$label[best], curve$mean[best],
                          margin_words(margin), pg$gain, pg$se)
    sel$explain <- c(sel$explain, sprintf(
      paste0("It does not beat the better baseline, %s (", words$score, num, "), by more than %s of their paired difference",
             words$diff, " (gain ", num, ", standard error ", num, "), so the baseline is kept."),
      curve$label[b], curve$mean[b], margin_words(margin), pg$gain, pg$se))
    sel$best <- b
  } else {
    sel$reason <- sprintf(paste0("%s; beats the better baseline, %s, by ", num, words$diff,
                                 " (standard error ", num, ")"),
                          sel$reason, curve$label[b], pg$gain, pg$se)
    sel$explain <- c(sel$explain, sprintf(
      paste0("It beats the better baseline, %s (", words$score, num, "), by ", num, words$gain,
             " (standard error ", num, " of their paired difference)."),
      curve$label[b], curve$mean[b], pg$gain, pg$se))
  }
  sel
}

# How many standard errors of the paired difference a kernelized pipeline
# must beat the better baseline by (auto_select()); see NEWS and
# bench/studies/default-study.R for the measurements behind the value.
auto_margin <- 0.5

margin_words <- function(margin) {
  if (margin == 1) "one standard error" else sprintf("%s standard errors", format(margin))
}

# "the better baseline, <label>" for the message of the guard.
baseline_words <- function(curve, b) {
  sprintf("the better baseline, %s", curve$label[b])
}

# Which candidates of a CV curve were numerically degenerate on some fold
# (see the scoring); none for curves of kmaha 0.4.0 and earlier, which have
# no such column.
curve_degenerate <- function(curve) {
  if (is.null(curve$degenerate)) logical(nrow(curve)) else curve$degenerate %in% TRUE
}

# Mean paired difference in held-out correctness of candidates a and b over
# the points both were scored on, its standard error (Inf for one point),
# and whether a beats b by more than one standard error (`beats`).  With W
# points only a gets right and L only b, the gain is (W - L) / m and the
# standard error about sqrt(W + L) / m over m points: a single discordant
# point (W = 1, L = 0) gives gain = se exactly, which must not count as a
# win.  The comparison is therefore made with a margin far below any real
# difference (multiples of 1/m) but above the rounding of mean() and sd(),
# which otherwise decided such ties either way.
paired_gain <- function(correct, a, b, margin = 1) {
  both <- !is.na(correct[, a]) & !is.na(correct[, b])
  d <- as.numeric(correct[both, a]) - as.numeric(correct[both, b])
  gain <- mean(d)
  se <- if (length(d) > 1L) stats::sd(d) / sqrt(length(d)) else Inf
  list(gain = gain, se = se, beats = gain - margin * se > 1e-9)
}
