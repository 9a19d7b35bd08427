# Cross-validated choice among base kernels for the KPCA trick: cv_kernel(),
# the paper's "CV" kernel choice as a standalone tool (score the base
# kernels, R/score.R, then select by the paper's rule, R/select.R), and the
# methods of scored candidates (print, summary, plot), with or without a
# selection.

#' Choose a kernel by cross-validation
#'
#' For every base kernel and every fold of a stratified v-fold split of the
#' training data, applies the KPCA trick — [kpca()] on the fold's training
#' part, the learner on those coordinates, the held-out part projected with
#' the same KPCA and map — and scores the fold by k-nearest-neighbour accuracy
#' on the held-out part. The kernel with the highest mean accuracy wins;
#' **ties go to the first best kernel in the order of `kernels`** (for
#' [paper_kernels()], the smallest \eqn{\sigma}). This is the scoring of
#' [score_candidates()] with `candidates = "kernels"` on `x` as given,
#' followed by the paper's rule (`rule = "cv"` of [kmaha()]).
#'
#' **Strategies.** `strategy = "exhaustive"` fits every kernel on every fold
#' (v times the number of kernels fits). `strategy = "fast"` (the default)
#' first screens the kernels with a cheap learner (DNE on the 32 leading
#' KPCA components of each fold, see [score_candidates()]) and fits the
#' learner for the 3 kernels the screen ranks highest only; a screened-out kernel's
#' `curve` row has no learner score (`mean` is `NA`), its screen accuracy in
#' `screen`, and `dropped = TRUE`. The kernels scored are scored exactly as in
#' the exhaustive strategy (same folds, same fits, the same random stream for
#' each kernel-fold fit), so the fast choice equals the exhaustive one
#' whenever the exhaustive winner is among the screen's three.
#'
#' The kernel-by-fold fits run as futures, so the user's [future::plan()]
#' decides where they run (sequentially by default; see [kmaha-plans]). Every kernel-fold fit gets its own parallel random stream
#' (L'Ecuyer-CMRG, as with `future.seed = TRUE`), drawn before any fit, so
#' the result depends neither on the plan nor on which kernels were
#' screened out. Each fit uses one thread (option `kmaha.num_threads` and
#' the OpenMP threads of the products), under every plan: the fits are many
#' and small, so parallel work across fits, through the plan's workers, is
#' what uses several cores well, and NCA's and LMNN's sums run in a fixed
#' order, so the scores depend neither on the plan nor on the thread count
#' (`num_threads` sets the threads of the screen; `learner_args` has no
#' thread setting). Progress is signalled with
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
#' `warnings`. An interrupt or a time limit ([setTimeLimit()]) stops the
#' whole cross-validation.
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
#' @param seed `NULL`, or a number that seeds the folds and the parallel
#'   random streams, with the same draws under any [RNGkind()] (the session's
#'   random state and kind are restored after).
#' @param strategy `"fast"` (the screen, then the learner on three kernels)
#'   or `"exhaustive"` (every kernel on every fold); see Details.
#' @param num_threads `NULL` (the option `kmaha.num_threads`, else the
#'   environment variable `KMAHA_NUM_THREADS`, else 2) or the number of
#'   threads of the compiled code outside the fold fits (the screen); each
#'   fold fit runs on one thread (see Details).
#' @param ... Unused; must be empty.
#' @return An object of class `kmaha_cv` (a scored-candidates object, see
#'   [score_candidates()], with the selection): a list with `curve` (a data
#'   frame with one row per kernel: `candidate` index, `kind`, `label`,
#'   `sigma`, `mean`, `sd`, `n_ok`, the number of folds that fitted,
#'   `dropped`, whether the screen left the kernel out, `degenerate` and
#'   `screen`), `accuracy` (kernel x fold matrix, `NA` where a fit failed or
#'   was skipped), `correct`, `best` (index of the chosen kernel), `reason`,
#'   `kernel` (the chosen kernel), `folds` (the fold of each row),
#'   `strategy`, `n_fits` (fits run), `seconds` (kernel x fold matrix of the
#'   elapsed time of each fit, where it ran; `NA` where skipped), `errors`
#'   and `warnings` (data frames of candidate, fold and message) and `k`.
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
  strategy <- match_choice(strategy, c("fast", "exhaustive"), "strategy")
  a <- check_choice_args(x, y, learner, k, learner_args, neighbors, kernels, TRUE, rank,
                         tol, seed, landmarks, landmark_method, num_threads, type = "cv",
                         caller = "cv_kernel()")
  a$scale <- NA
  base <- list(rank = a$rank, tol = a$tol, landmarks = a$landmarks,
               landmark_method = a$landmark_method)
  sc <- score_fit(a$x, a$y, a$specs, "kernels", a$kernels, folds, a$k, a$neighbors, base,
                  a$seed, strategy, NULL, a$ctx, arg_folds = "folds",
                  settings = choice_settings(a, strategy),
                  fingerprint = data_fingerprint(a$x, a$y))
  with_selection(sc, select_candidate(sc, "cv"))
}

# The k of a scoring in words: "kNN k = 1", or the k it chose among.
k_words <- function(k) {
  if (length(k) == 1L) sprintf("kNN k = %d", k) else
    sprintf("kNN k chosen among %s", paste(k, collapse = ", "))
}

# Text wrapped to the console (or 80 columns), each line led by `indent`;
# the first line led by `first` instead.
wrap_lines <- function(text, indent = "  ", first = indent) {
  width <- max(20L, getOption("width", 80L) - 1L)
  out <- strwrap(paste(text, collapse = " "), width = width, indent = 0L, exdent = 0L,
                 prefix = indent, initial = first)
  paste0(out, "\n", collapse = "")
}

#' @export
print.kmaha_scores <- function(x, ...) {
  auto <- any(x$curve$kind %in% c("euclidean", "linear"))
  what <- if (auto) "candidate pipelines" else "kernels"
  cat(wrap_lines(sprintf("<kmaha %s> %d-fold CV of %s, %d %s (%s)",
                         if (inherits(x, "kmaha_cv")) "cv" else "scores",
                         ncol(x$accuracy), x$learner, nrow(x$curve), what, k_words(x$k)), first = ""))
  strategy <- x$strategy %||% "exhaustive"
  # (fits taken from an earlier call, see Reuse in ?score_candidates)
  fits <- if (isTRUE(x$reused > 0L)) {
    sprintf("%d fits, %d of the candidate-by-fold tasks taken from an earlier call", x$n_fits,
            x$reused)
  } else sprintf("%d fits", x$n_fits)
  # base kernels, once each (a kernel has one row per learner)
  ker <- x$curve$kind == "kernel" & !duplicated(x$curve$candidate %||% seq_len(nrow(x$curve)))
  if (strategy == "fast" && !is.null(x$curve$screen) && any(!is.na(x$curve$screen))) {
    cat(wrap_lines(sprintf("fast strategy: the screen passed %d of %d base kernels to the learner; %s",
                           sum(ker & !x$curve$dropped), sum(ker), fits)))
  } else if (strategy == "fast" && any(x$curve$dropped)) {
    cat(wrap_lines(sprintf("fast strategy: %d of %d %s dropped after the first fold; %s",
                           sum(x$curve$dropped), nrow(x$curve), what, fits)))
  } else {
    cat(wrap_lines(sprintf("%s strategy: %s", strategy, fits)))
  }
  if (!is.null(x$best)) {
    cat(wrap_lines(sprintf(if (is_regression_scores(x)) "chosen: %s (mean RMSE %.4g%s)"
                           else "chosen: %s (mean accuracy %.3f%s)", x$curve$label[x$best],
                           x$curve$mean[x$best],
                           if (length(x$k) > 1L) sprintf(", k = %d", x$curve[["k"]][x$best]) else "")))
    why <- x$explain %||% x$reason
    if (length(why)) cat(wrap_lines(why, indent = "       ", first = "  why: "))
  } else {
    sc <- x$curve[!is.na(x$curve$mean), , drop = FALSE]
    top <- sc[order(if (is_regression_scores(x)) sc$mean else -sc$mean), ,
              drop = FALSE][seq_len(min(3L, nrow(sc))), ]
    cat(wrap_lines(sprintf(if (is_regression_scores(x)) "lowest RMSE: %s" else "best scores: %s",
                           paste(sprintf("%s %.4g", top$label, top$mean),
                                                     collapse = "; "))))
  }
  deg <- curve_degenerate(x$curve)
  if (any(deg)) {
    cat(wrap_lines(sprintf("left out as numerically degenerate on these data (ties decide their neighbours): %s",
                           paste(x$curve$label[deg], collapse = ", "))))
  }
  if (nrow(x$errors)) {
    cat(wrap_lines(sprintf("%d fit(s) failed and were left out; first error: %s",
                           nrow(x$errors), x$errors$message[1])))
  }
  if (NROW(x$warnings)) {
    cat(wrap_lines(sprintf("%d fit(s) gave warnings (see $warnings)",
                           nrow(unique(x$warnings[c("candidate", "fold")])))))
  }
  invisible(x)
}

#' @export
summary.kmaha_scores <- function(object, ...) {
  cu <- object$curve
  tab <- data.frame(candidate = cu$label, k = cu[["k"]] %||% rep(object$k[1], nrow(cu)),
                    mean = cu$mean, sd = cu$sd,
                    folds = cu$n_ok, screen = cu$screen %||% rep(NA_real_, nrow(cu)),
                    dropped = cu$dropped,
                    chosen = if (is.null(object$best)) rep(FALSE, nrow(cu)) else
                      seq_len(nrow(cu)) == object$best,
                    stringsAsFactors = FALSE)
  out <- list(table = tab, folds = ncol(object$accuracy), k = object$k,
              learner = object$learner, strategy = object$strategy, metric = object$metric,
              n_fits = object$n_fits, reason = object$reason, explain = object$explain,
              errors = object$errors, n_warned = nrow(unique(object$warnings[c("candidate", "fold")])))
  class(out) <- "summary.kmaha_scores"
  out
}

#' @export
print.summary.kmaha_scores <- function(x, ...) {
  cat(wrap_lines(sprintf("%d-fold cross-validation of %s (%s, %s strategy, %d fits)%s",
                         x$folds, x$learner, k_words(x$k), x$strategy, x$n_fits,
                         if (identical(x$metric, "rmse")) "; mean = RMSE, lower is better" else ""),
                 first = ""))
  print_candidates(x$table)
  why <- x$explain %||% x$reason
  if (length(why)) cat(wrap_lines(why, indent = "  ", first = "Chosen because: "))
  if (nrow(x$errors)) {
    cat(wrap_lines(sprintf("%d fit(s) failed and were left out of the choice:", nrow(x$errors)),
                   first = ""))
    print(utils::head(x$errors, 5L), row.names = FALSE)
  }
  if (x$n_warned) cat(wrap_lines(sprintf("%d fit(s) gave warnings (see $warnings)", x$n_warned), first = ""))
  invisible(x)
}

# The cross-validation curve of scores, with or without a selection (the
# chosen candidate marked red when there is one).  Selections of kmaha 0.4
# and earlier have the class kmaha_cv alone.
#' @export
plot.kmaha_cv <- function(x, ...) plot.kmaha_scores(x, ...)

#' @export
plot.kmaha_scores <- function(x, ...) {
  cu <- x$curve
  b <- x$best
  # with several learners, the kernels of the chosen one (of the first when
  # Euclidean k-NN was chosen)
  lr <- cu$learner %||% rep(NA_character_, nrow(cu))
  own <- if (is.null(b) || lr[b] %in% c("euclidean", NA)) lr[cu$kind == "kernel"][1] else lr[b]
  ker <- which(cu$kind == "kernel" & !is.na(cu$sigma) & (is.na(lr) | lr == own))
  other <- which(cu$kind != "kernel" | is.na(cu$sigma))
  lo <- cu$mean - ifelse(is.na(cu$sd), 0, cu$sd)
  hi <- cu$mean + ifelse(is.na(cu$sd), 0, cu$sd)
  has_sigma <- length(ker) > 0L
  xs <- if (has_sigma) log10(cu$sigma[ker]) else seq_along(ker)
  dropped <- cu$dropped
  xr <- if (has_sigma) range(xs) else c(1, max(1, nrow(cu)))
  ltys <- c(2, 3, 4, 5)
  other_lty <- ltys[(seq_along(other) - 1L) %% 4L + 1L]
  # The legend explains every mark: the chosen candidate (a red circle on
  # the curve, or a red line), the kernels dropped by the fast strategy
  # (crosses) and the candidates without a sigma (grey reference lines).  A
  # symbol-only entry has line type 0 and a line-only one no symbol (NA).
  # It gets a right margin of its own, so it never covers the curve.
  # (a kernel dropped before it was scored has no mean, so no cross: the
  # legend names the crosses only when one is drawn)
  any_dropped <- any(dropped[ker] & !is.na(cu$mean[ker]))
  chosen <- !is.null(b)
  leg <- c(if (chosen) sprintf("chosen: %s", cu$label[b]),
           if (any_dropped) "not scored by the learner (screened out)",
           cu$label[other])
  leg_pch <- c(if (chosen) (if (b %in% ker) 1 else NA), if (any_dropped) 4,
               rep(NA, length(other)))
  leg_lty <- c(if (chosen) (if (b %in% ker) 0 else 1), if (any_dropped) 0, other_lty)
  leg_lwd <- c(if (chosen) 2, if (any_dropped) 1, rep(1, length(other)))
  leg_col <- c(if (chosen) "red", if (any_dropped) "black", rep("grey40", length(other)))
  # (scores of base kernels alone, without a selection: no legend)
  fit <- if (length(leg)) legend_fit(leg) else list(mar = graphics::par("mar"))
  op <- graphics::par(mar = fit$mar)
  on.exit(graphics::par(op))
  # Candidates without a sigma (linear, aligned, unweighted) are drawn as
  # horizontal reference lines.
  graphics::plot(NA, xlim = xr, ylim = range(c(lo, hi), na.rm = TRUE),
                 xlab = if (has_sigma) expression(log[10] ~ sigma) else "candidate",
                 ylab = sprintf("CV %s (mean +/- sd)", score_metric_words(x)),
                 main = sprintf("%d-fold CV of %s", ncol(x$accuracy), x$learner), ...)
  if (length(ker)) {
    graphics::lines(xs, cu$mean[ker], type = "b", pch = ifelse(dropped[ker], 4, 19))
    ok <- !is.na(cu$mean[ker])
    graphics::segments(xs[ok], lo[ker][ok], xs[ok], hi[ker][ok])
  }
  for (j in seq_along(other)) {
    graphics::abline(h = cu$mean[other[j]], lty = other_lty[j], col = "grey40")
  }
  if (chosen && b %in% ker) {
    graphics::points(xs[match(b, ker)], cu$mean[b], pch = 1, cex = 2, lwd = 2, col = "red")
  } else if (chosen) {
    graphics::abline(h = cu$mean[b], col = "red", lwd = 2)
  }
  if (length(leg)) {
    legend_outside(leg, pch = leg_pch, lty = leg_lty, lwd = leg_lwd, col = leg_col,
                   ncol = fit$ncol, cex = fit$cex)
  }
  invisible(x)
}

# The candidates' table of a summary (of scores or of a model): accuracies
# to 4 digits, the screen column only when something was screened, the
# chosen row marked.
print_candidates <- function(tab) {
  for (col in c("mean", "sd", "screen")) tab[[col]] <- round(tab[[col]], 4)
  if (all(is.na(tab$screen))) tab$screen <- NULL
  tab$chosen <- ifelse(tab$chosen, "<==", "")
  print(tab, row.names = FALSE)
}
