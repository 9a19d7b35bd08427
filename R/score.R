# Scoring: kernel choice's first step.  Candidates (R/candidates.R) are
# scored on stratified cross-validation folds into a scored-candidates
# object (class "kmaha_scores"); a selection rule (R/select.R) then reads it.
#
# A fold is *fit, then score* (fit_pipeline() with the held-out rows): the
# call that fits the feature map on the fold's training part also projects
# the held-out rows, and the call that fits the learner also votes them in
# its metric (the core's pipeline vote, the one predict() runs), which
# gives their k-NN correctness: two calls of the core per fold for the
# built-in learners, with one Gram matrix per kernel candidate shared by
# its folds.  With the "fast" strategy a learner-free
# screen of the base kernels (kmaha/screen.hpp: k-NN on the leading KPCA
# components of each fold, all kernels from one product of the inputs)
# first picks the few base kernels worth a learner; every other candidate
# (Euclidean k-NN, the linear learner, the unweighted sum) is always scored
# with the learner.  The fits run as futures on the user's plan
# (plan_chunks(), R/parallel.R).

#' Score candidate pipelines by cross-validation
#'
#' The first step of kernel choice: every candidate pipeline is scored by
#' stratified `folds`-fold cross-validation of the whole pipeline (input
#' scaling, the candidate's feature map, the learner, k-nearest-neighbour
#' votes of the held-out rows). The result, a *scored-candidates* object,
#' is what a selection rule reads: [kmaha()] accepts it as its `kernel`
#' (with `rule`), so the same scores can be read under another rule without
#' scoring again. `kmaha(x, y)` scores and selects in one call; its
#' `kernel_choice$cv` is the scored object with the selection.
#'
#' **Candidates.** `candidates = "auto"` (what `kmaha(kernel = "auto")`
#' scores): every base kernel of `kernels` with the KPCA trick, Euclidean
#' k-NN on the scaled inputs (no learned metric), the linear learner (no
#' kernel) and the unweighted sum of `kernels`. `candidates = "kernels"`
#' (what `kernel = "cv"` scores): the base kernels only. Every candidate
#' but Euclidean k-NN is scored with each learner: NCA, LMNN and DNE with
#' `learner = "auto"` (one feature map per candidate and fold, shared by
#' the learners), else the one named. Each fold votes its held-out rows for
#' every k considered (the odd k from 1 to 15 with `k = NULL`; 1, 3, 5, 7, 9,
#' 12, 15, 20 for a regression; else `k`) from one
#' neighbour search, and each pipeline is scored at the k with its best mean
#' accuracy (the smallest on ties).
#'
#' **Regression.** With a numeric `y` the pipelines are MLKR's (see
#' Regression in [kmaha()]): the folds are unstratified, a fold scores its
#' held-out rows by their squared errors (`correct` and `correct_k` hold
#' them), `accuracy` and `accuracy_k` hold the fold RMSEs, `mean` is the
#' mean fold RMSE (lower is better; each pipeline at the k with the lowest
#' mean), `screen` the leave-one-out R^2 of the kernel ridge screen, and
#' `metric` is `"rmse"` (`NULL` for classes).
#'
#' **Strategies.** `strategy = "exhaustive"` fits every candidate on every
#' fold. `strategy = "fast"` (the default) first *screens* the base kernels
#' with a cheap learner: on each fold, the kernel PCA of the fold's training
#' rows keeps its 32 leading components, DNE (a closed-form metric learner)
#' maps them, and each held-out row is classified by k-NN among the training
#' rows in that metric. Only the `shortlist` base kernels with the most
#' held-out rows right in the screen (ties: the first in `kernels`) are then
#' scored with the learner, with every other candidate. The screen reads at
#' most 150 rows (drawn within folds and classes); along an ordered grid of
#' bandwidths (such as [paper_kernels()]) it screens every other kernel,
#' then the neighbours of the best; it passes over kernels that are
#' numerically degenerate, or so narrow that nearest neighbours are almost
#' orthogonal in feature space. All of it is one call of the compiled code,
#' from one product of the inputs, for built-in kernels. On the development
#' data (`bench/studies/screen-study.R`) the pipelines chosen this way were as
#' accurate as those of the exhaustive scoring. Screened-out kernels keep
#' their screen score in `curve$screen` and have no learner score (`mean` is
#' `NA`, `dropped` is `TRUE`). Kernels evaluated in R (see
#' [kernel-sources]) are screened in R, more slowly.
#'
#' **Tolerance.** On the folds, NCA and LMNN stop at the relative tolerance
#' 1e-3 instead of their default 1e-5 (the folds only rank candidates; on
#' the development data this chose as well at 60-75% of the CPU), unless
#' `learner_args` sets `tol`; [kmaha()] fits the chosen candidate with the
#' learner's own tolerance.
#'
#' **Randomness.** Folds are drawn from R's random number generator (use
#' `seed`, or [set.seed()]); every candidate-by-fold fit has its own random
#' stream (L'Ecuyer-CMRG, drawn for every candidate and fold before any
#' fit), so a candidate's scores depend neither on the future plan nor on
#' which other candidates were scored: the scores of `candidates = "auto"`
#' and `"kernels"` agree on the kernels both scored with the learner.
#'
#' **Reuse.** A fold's fit does not depend on the k that votes its held-out
#' rows, so the session keeps every candidate-by-fold result (the held-out
#' votes of every k from 1 to 10 and the k asked for) under a key of all
#' the fit reads: the scaled inputs, the labels, the folds, the learners
#' and their options, the candidate, the feature-map settings, the
#' session's `kmaha.*` options, the fit's random stream and the package
#' version. A later call on the same data with the same `seed` (and so the
#' same folds and streams) takes the stored results instead of fitting
#' again, and its scores are those a call that fitted every task would
#' give. A loop over `k` (tuning `neighbors` in \pkg{tune}, caret or
#' \pkg{mlr3} with a `seed`) thus fits each fold's candidates once. The
#' session keeps at most 2000 results and 64 MB of them (the oldest go
#' first), and no fit that failed; learners and kernels given as R
#' functions are never reused, and `options(kmaha.reuse_fits = FALSE)`
#' turns reuse off. `reused` counts the tasks taken.
#'
#' **Parallel work.** The candidate-by-fold fits run as futures on the
#' user's [future::plan()] (see [kmaha-plans]), one thread each; progress is
#' signalled through \pkg{progressr}. A fit that fails on a fold scores
#' `NA` there (`errors`); warnings of the fold fits are collected
#' (`warnings`) and summarised in one warning.
#'
#' **Large n.** Above 1000 training rows (and without `landmarks` or
#' `rank`) the candidates of `"auto"` and `"kernels"` are scored on a
#' stratified subsample of 1000 rows; a kernel chosen from such scores is
#' fitted by [kmaha()] on all rows, with exact KPCA up to 2000 rows and
#' Nystrom KPCA above (see [kmaha()]; `large` records this).
#'
#' @inheritParams kmaha
#' @param seed `NULL` or a number: the seed for the cross-validation folds,
#'   giving the same folds and scores under any [RNGkind()] (the session's
#'   random state and kind are restored afterwards).
#' @param candidates `"auto"` or `"kernels"`: which candidates to score (see
#'   Candidates).
#' @param folds Number of folds (a whole number >= 2), or a vector of fold
#'   labels, one per row of `x`.
#' @param strategy `"fast"` (screen, then the learner on the shortlist) or
#'   `"exhaustive"` (the learner on every candidate and fold).
#' @param shortlist With `strategy = "fast"`: how many base kernels the
#'   screen passes to the learner; `NULL` for the default of the candidate
#'   set (1 for `"auto"`, 3 for `"kernels"`).
#' @return An object of class `kmaha_scores`: a list with `curve` (a data
#'   frame, one row per pipeline, i.e. candidate and learner: `candidate`
#'   (its index among the candidates), `kind`, `label`, `learner`, `sigma`,
#'   `k` (the row's best k), `mean` and `sd` of the fold accuracies at that
#'   k, `n_ok` (folds scored),
#'   `dropped` (not scored by the learner), `degenerate` (numerically
#'   degenerate kernel on some fold), `screen` (the screen's held-out
#'   accuracy, base kernels only)), `accuracy` (row x fold, at each row's
#'   k), `correct` (training row x row: held-out correctness, `NA` where not
#'   scored), `accuracy_k` and `correct_k` (the same at every k considered,
#'   k the last dimension), `k` (the k considered), `learners`,
#'   `folds` (the fold of each row), `seconds`, `errors`, `warnings`,
#'   `n_fits`, `reused` (how many of the candidate-by-fold tasks were
#'   taken from an earlier call, see Reuse), `strategy`, `learner` (in
#'   words), `candidates` and
#'   `kernels` (what was scored), `settings` (every argument that shaped
#'   the scores: the learner and its options, `k`, `neighbors`, the base
#'   `kernels`, `folds`, `strategy`, `scale`, `rank`, `tol`, `seed`,
#'   `landmarks`, `landmark_method`), `fingerprint` (the data's dimensions,
#'   class sizes and a hash of the input values and labels; [kmaha()]
#'   checks both) and `large`. `print()`, `summary()`, `plot()`,
#'   [tidy()][tidy.kmaha_cv] and [autoplot()][autoplot.kmaha_model] show it.
#' @seealso [kmaha()], which selects from these scores (`rule`),
#'   [cv_kernel()].
#' @examples
#' sc <- score_candidates(Species ~ ., iris, learner = "dne", seed = 1)
#' sc
#' # select twice from the same scores: kernel = "auto"'s rule and the
#' # paper's cross-validation rule
#' fit_auto <- kmaha(Species ~ ., iris, learner = "dne", kernel = sc)
#' fit_cv <- kmaha(Species ~ ., iris, learner = "dne", kernel = sc, rule = "cv")
#' fit_cv$kernel_choice$cv$curve[fit_cv$kernel_choice$cv$best, "label"]
#' @export
score_candidates <- function(x, ...) UseMethod("score_candidates")

#' @rdname score_candidates
#' @export
score_candidates.formula <- function(formula, data = NULL, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), score_candidates.default, list(...),
                 "score_candidates")
}

#' @rdname score_candidates
#' @export
score_candidates.default <- function(x, y, learner = "auto", candidates = c("auto", "kernels"),
                                     kernels = paper_kernels(), folds = 5, k = NULL,
                                     learner_args = list(),
                                     neighbors = c("feature", "input"), scale = TRUE,
                                     rank = NULL, tol = 1e-8, seed = NULL,
                                     strategy = c("fast", "exhaustive"), shortlist = NULL,
                                     landmarks = NULL,
                                     landmark_method = c("random", "kmeans++"),
                                     num_threads = NULL, ...) {
  check_dots_empty("score_candidates()", ..., hint = "Pass learner options in `learner_args`.")
  candidates <- match_choice(candidates, c("auto", "kernels"), "candidates")
  a <- check_choice_args(x, y, learner, k, learner_args, neighbors, kernels, scale, rank,
                         tol, seed, landmarks, landmark_method, num_threads,
                         type = if (candidates == "auto") "auto" else "cv",
                         caller = "score_candidates()")
  strategy <- match_choice(strategy, c("fast", "exhaustive"), "strategy")
  if (!is.null(shortlist)) shortlist <- check_count(shortlist, "shortlist")
  prep <- fit_scaling(a$x, a$scale)
  xs <- apply_scaling(a$x, prep)
  score_fit(xs, a$y, a$specs, candidates, a$kernels, folds, a$k, a$neighbors,
            choice_base(a, xs, prep), a$seed, strategy, shortlist, a$ctx,
            arg_folds = "folds", settings = choice_settings(a, strategy),
            fingerprint = data_fingerprint(a$x, a$y))
}

# The scored candidates of `type` ("auto" or "kernels") on scaled inputs xs
# (checked), as a kmaha_scores object.  `base`: the feature-map settings
# (rank, tol, landmarks, landmark_method, and `large` above the large-n
# threshold: then the scoring runs on a stratified subsample); `settings`
# and `fingerprint` are stored for kmaha(kernel = <scores>) to check.
score_fit <- function(xs, y, spec, type, kernels, folds, k, neighbors, base, seed,
                      strategy, shortlist, ctx, arg_folds = "cv_folds",
                      settings = list(), fingerprint = NULL, cand = NULL) {
  # `spec`: one learner's spec or a list of them (learner = "auto")
  specs <- if (!is.null(spec$name)) list(spec) else spec
  cands <- candidate_set(type, kernels, cand)
  shortlist <- shortlist %||% default_shortlist(type)
  if (!is.null(seed)) {
    restore <- save_rng()
    on.exit(restore(), add = TRUE)
    set_kmaha_seed(seed)
  }
  large <- base$large
  rows <- NULL
  n_all <- nrow(xs)
  if (!is.null(large)) {
    # Large n (see kmaha()): score on a stratified subsample (the full
    # eigensolver: at this size it is as fast, and never fails to converge).
    rows <- stratified_rows(strata_of(y), large$n_choose)
    xs <- xs[rows, , drop = FALSE]
    y <- if (is.numeric(y)) y[rows] else droplevels(y[rows])
    base <- utils::modifyList(base, list(rank = large$rank, large = NULL,
                                         kpca_method = "full"))
  }
  fold_id <- make_folds(strata_of(y), folds, arg_folds,
                        learner = if (is.numeric(y)) builtin_learners("regression")[1] else "nca")
  ks <- score_ks(k, y, fold_id)
  run <- score_run(xs, y, specs, cands, fold_id, ks, strategy, shortlist, base, neighbors, ctx)
  sc <- new_scores(run, cands, fold_id, strategy, ks, specs)
  sc$reused <- run$reused
  sc$settings <- settings
  # the folds as asked: a count, or "labels" (given per row; they are $folds)
  if (length(settings)) sc$settings$folds <- if (length(folds) == 1L) as.integer(folds) else "labels"
  sc$fingerprint <- fingerprint
  sc$type <- type
  sc$shortlist <- shortlist
  if (!is.null(large)) sc$large <- utils::modifyList(large, list(rows = rows, n_rows = n_all))
  sc
}

# How many base kernels the screen passes to the learner, per candidate
# set (and per selection rule, see select_candidate()).
default_shortlist <- function(type) if (type %in% c("auto")) 1L else 3L

# The numbers of neighbours the folds vote with: the user's k, or with k
# unset (NULL) those of k_grid (k_grid_regression for a numeric y) that
# every fold's training part can give (the neighbours are sorted once, so
# each further k costs one vote).
score_ks <- function(k, y, fold_id) {
  if (!is.null(k)) return(as.integer(k))
  n_train <- length(y) - max(tabulate(fold_id))
  grid <- if (is.numeric(y)) k_grid_regression else k_grid
  ks <- grid[grid <= n_train - 1L]
  if (!length(ks)) 1L else ks
}

# The k the screen votes with, among the k the folds vote (ks, the user's
# k or k_grid): the first.
screen_k <- function(ks) ks[1]

# The k that kernel choice considers when the user leaves `k` unset: the
# odd k to 15.  0.6.0's 1-9 stopped too early: its default chose k = 9, the
# largest, on 31 of the 93 acceptance splits, more often than any other k.
# Replaying the default's own scores with wider grids
# (bench/studies/k-grid.R), odd k to 15 changed the mean test accuracy by
# -0.0004 on the development sets (26; no set worse by more than 0.005 but
# Glass), +0.0022 on the 31 acceptance sets and +0.0085 on 14 fresh sets
# (6 better by more than 0.005, none worse); odd k to 21 or 31 and to
# sqrt(n) gained less.
k_grid <- c(1L, 3L, 5L, 7L, 9L, 11L, 13L, 15L)
# ... and for a regression, where averaging more neighbours smooths the
# prediction: on the development sets of the regression the default's
# test RMSE fell by 0.8% on average with 12, 15 and 20 added, and by 0.5%
# on the 12 acceptance sets, no set worse by more than 0.12%
# (bench/studies/regression-kgrid.R).
k_grid_regression <- c(1L, 3L, 5L, 7L, 9L, 12L, 15L, 20L)

# The candidate-by-fold fits.  Returns the task results (candidate x fold;
# NULL where not run), the tasks, the screen (or NULL), which candidates
# were screened out, and the shortlist.
score_run <- function(xs, y, specs, cands, fold_id, ks, strategy, shortlist, base,
                      neighbors, ctx) {
  v <- max(fold_id)
  nc <- length(cands)
  # Task t fits candidate tasks$cand[t] on fold tasks$fold[t]; t runs over
  # the folds first.  Every task has its own random stream, drawn for all
  # tasks whether they run or not, so a candidate's scores do not depend on
  # which others are scored (base kernels come first in every candidate
  # set, so "auto" and "kernels" share their streams).
  tasks <- expand.grid(fold = seq_len(v), cand = seq_len(nc))
  n_tasks <- nrow(tasks)
  is_kernel <- vapply(cands, function(cd) identical(cd$kind, "kernel"), NA)
  fast <- strategy == "fast" && sum(is_kernel) > shortlist
  seeds <- element_seeds(n_tasks)
  # The rows the screen reads: at most screen_max_rows, drawn within each
  # fold and class after the tasks' streams (which the exhaustive strategy
  # shares).
  srows <- if (fast) screen_rows(strata_of(y), fold_id, screen_max_rows)
  learn <- rep(TRUE, nc)
  screen <- NULL
  if (fast) {
    screen <- if (is.numeric(y)) {
      regression_screen(xs[srows, , drop = FALSE], y[srows], cands[is_kernel], fold_id[srows], ctx)
    } else screen_candidates(xs[srows, , drop = FALSE], droplevels(y[srows]),
                                cands[is_kernel], as.integer(factor(fold_id[srows])),
                                screen_k(ks), base$tol, ctx)
    keep <- which(is_kernel)[screen_order(screen)[seq_len(shortlist)]]
    learn[is_kernel] <- FALSE
    learn[keep] <- TRUE
  }
  ids <- which(learn[tasks$cand])
  settings <- worker_settings()
  # Fits an earlier call of this session made on the same data, folds and
  # settings are taken as they are (R/score-memo.R); the folds then vote
  # every k that a later call may ask for.
  memo <- score_memo_plan(xs, y, fold_id, specs, neighbors, base, ks, settings)
  keys <- if (!is.null(memo)) score_memo_keys(memo, tasks, cands, seeds, ids)
  stored <- if (!is.null(keys)) score_memo_get(keys) else vector("list", length(ids))
  todo <- vapply(stored, is.null, NA)
  p <- progressr::progressor(steps = sum(todo))
  # Every fit runs on one thread: the fits are many and small, and parallel
  # work across fits goes through the plan's workers.
  job <- list(tasks = tasks, fold_id = fold_id, x = xs, y = y, cands = cands,
              specs = specs, neighbors = neighbors, base = base, ks = memo$ks %||% ks,
              ctx = single_thread(ctx), settings = settings)
  # Workers elsewhere get the user's functions with their helpers (see
  # ship_closures()) and attach the packages those use.
  if (!plan_is_local()) {
    shipped <- ship_closures(job[c("specs", "cands", "base")])
    job[c("specs", "cands", "base")] <- shipped
    job$packages <- attr(shipped, "packages")
  }
  res <- vector("list", n_tasks)
  res[ids[todo]] <- score_round(ids[todo], job, seeds, p)
  res[ids[!todo]] <- stored[!todo]
  if (!is.null(keys)) {
    score_memo_put(keys[todo], res[ids[todo]])
    res <- lapply(res, score_task_columns, match(ks, memo$ks))
  }
  list(res = res, tasks = tasks, dropped = !learn, screen = screen,
       screened = is_kernel, shortlist = shortlist, reused = sum(!todo))
}

# The screen of the base kernel candidates `cands` (see score_candidates()):
# on each fold, DNE on the leading KPCA components of the fold's training
# rows and k-NN of the held-out rows in its metric (kmaha/screen.hpp, which
# also says which kernels it passes over).  The core screens built-in
# kernels in one call, from one product of the inputs; kernels evaluated in
# R are screened in R, each on every fold.  Returns list(correct = n x
# kernels held-out correctness (NA where not scored), degenerate = kernels x
# folds logical, screened, near_identity (logical), accuracy = per kernel
# mean held-out correctness, NA where not screened).
screen_candidates <- function(xs, y, cands, fold_id, k, tol, ctx) {
  v <- max(fold_id)
  kernels <- lapply(cands, `[[`, "kernel")
  if (all(vapply(kernels, kernel_in_core, NA))) {
    r <- core_screen_kernels(xs, as.integer(y), nlevels(y), as.integer(fold_id), v,
                             kernels, screen_components, k, tol, kernel_grid(kernels), ctx)
    correct <- r$correct == 1L
    degenerate <- r$degenerate > 0L
    screened <- r$screened
    near <- r$near_identity
  } else {
    correct <- matrix(NA, nrow(xs), length(kernels))
    degenerate <- matrix(FALSE, length(kernels), v)
    screened <- rep(TRUE, length(kernels))
    near <- rep(FALSE, length(kernels))
    dne <- learner_spec("dne", list())
    for (j in seq_along(kernels)) for (f in seq_len(v)) {
      te <- fold_id == f
      ytr <- droplevels(y[!te])
      p <- tryCatch(
        fit_pipeline(xs[!te, , drop = FALSE], ytr,
                     feature_kpca(kernels[[j]], min(screen_components, sum(!te)), tol),
                     dne, ctx, warn = FALSE, heldout = xs[te, , drop = FALSE], k = k),
        error = function(e) if (is_stop_condition(e)) stop(e))
      if (is.null(p)) next
      if (!is.null(p$degenerate)) {
        degenerate[j, f] <- TRUE
        next
      }
      correct[te, j] <- levels(ytr)[p$heldout] == as.character(y[te])
    }
  }
  acc <- colMeans(correct, na.rm = TRUE)
  acc[!screened | is.nan(acc)] <- NA_real_
  list(correct = correct, degenerate = degenerate, screened = screened,
       near_identity = near, accuracy = acc)
}

# TRUE when the kernels form an ordered grid: base kernels of one type with
# one bandwidth each, increasing (the paper's 21 scaled RBF kernels).
kernel_grid <- function(kernels) {
  types <- vapply(kernels, `[[`, "", "type")
  if (length(kernels) < 3L || length(unique(types)) != 1L ||
      !types[1] %in% c("rbf", "gaussian", "laplace")) return(FALSE)
  s <- vapply(kernels, function(k) k$sigma, 0)
  all(diff(s) > 0)
}

# At most `m` rows for the screen, drawn at random within each fold and
# class in proportion (all rows when there are not more): the screen only
# ranks bandwidths, which a sample of this size ranks as the whole does, and
# its cost grows with the cube of the rows (bench/studies/default-dev.R).
screen_rows <- function(y, fold_id, m) {
  n <- length(y)
  if (n <= m) return(seq_len(n))
  g <- interaction(fold_id, y, drop = TRUE)
  idx <- split(seq_len(n), g)
  want <- pmax(1L, round(lengths(idx) * m / n))
  sort(unlist(lapply(seq_along(idx), function(j) {
    i <- idx[[j]]
    if (length(i) <= want[j]) i else i[sample.int(length(i), want[j])]
  }), use.names = FALSE))
}
screen_max_rows <- 150L

# Leading KPCA components the screen's DNE maps (q of kmaha/screen.hpp): on
# the development data DNE on 32 components screened as well as k-NN on the
# 8 leading ones (kernel = "auto"'s test accuracy 0.8547 / 0.8416 against
# 0.8543 / 0.8423 for NCA / DNE), and unlike it picks the bandwidths that
# separate two thin concentric rings (bench/studies/screen-study.R).
screen_components <- 32L

# Base kernels in the order the screen ranks them: those it scored, most
# held-out rows right first (ties in the order of `kernels`); then those it
# did not screen, nearest on the grid to the best scored one first; last the
# numerically degenerate ones and those near the identity.
screen_order <- function(screen) {
  acc <- screen$accuracy
  n <- length(acc)
  bad <- rowSums(screen$degenerate) > 0L | screen$near_identity %in% TRUE
  scored <- !is.na(acc) & !bad
  tier <- ifelse(scored, 1L, ifelse(bad, 3L, 2L))
  top <- if (any(scored)) which(scored)[order(-acc[scored], which(scored))][1] else 1L
  key <- ifelse(tier == 1L, -acc, ifelse(tier == 2L, abs(seq_len(n) - top), 0))
  order(tier, key, seq_len(n))
}

# Runs the tasks `ids` as one round of futures (one per worker, see
# plan_chunks()) and returns their results in the order of `ids`.
score_round <- function(ids, job, seeds, progress) {
  # Each worker gets a contiguous chunk of tasks, and tasks differ in cost
  # (the unweighted kernel keeps every KPCA component, a large bandwidth
  # few). A fixed low-discrepancy permutation spreads the costly tasks over
  # all chunks; it does not depend on the plan, and every task brings its own
  # random stream, so the results do not either.
  if (!length(ids)) return(list())
  perm <- order((seq_along(ids) * 0.6180339887498949) %% 1)
  chunks <- plan_chunks(ids[perm], score_chunk_call, job, seeds[ids[perm]], progress,
                        packages = job$packages)
  out <- vector("list", length(ids))
  out[perm] <- unlist(lapply(chunks, score_unpack), recursive = FALSE)
  out
}

# What the workers receive to run a chunk of tasks: a small wrapper, much
# smaller to send than the functions it calls, which come from the worker's
# own copy of the namespace.  Its first line checks that copy's version
# (written out, see R/parallel.R); the tasks then run with the
# session's kmaha options, each on its own random stream, and the caller's
# random state is put back (in a sequential plan the caller is the session).
score_chunk_call <- function(ids, job, seeds, progress) {
  if (!is.null(job$settings) &&
      !identical(as.character(getNamespaceVersion("kmaha")), job$settings$version)) {
    stop(sprintf(job$settings$version_error, getNamespaceVersion("kmaha")), call. = FALSE)
  }
  old <- worker_enter(job$settings)
  on.exit(options(old), add = TRUE)
  restore <- save_rng()
  on.exit(restore(), add = TRUE)
  res <- vector("list", length(ids))
  # The chunk's tasks run candidate by candidate, so that the folds of a
  # kernel candidate share one Gram matrix (see fold_gram()) and one is
  # kept at a time; every task brings its own random stream, so the order
  # does not change any result.
  job$gram <- new.env(parent = emptyenv())
  for (i in order(job$tasks$cand[ids], seq_along(ids))) {
    assign(".Random.seed", seeds[[i]], envir = globalenv())
    res[[i]] <- score_task(ids[i], job, progress)
  }
  score_pack(res)
}

# The Gram matrix of candidate `cand` on all the scoring's rows, computed
# once for the folds of the candidate that one worker runs (in job$gram,
# the cache of the chunk): a fold's training and held-out blocks are parts
# of it, since the inputs are scaled once for all folds.  NULL where the
# folds evaluate the kernel themselves: kernels evaluated in R, the Nystrom
# method (the rows it needs are few), and above gram_share_max_rows rows.
fold_gram <- function(cand, id, job) {
  cache <- job$gram
  if (is.null(cache) || !cand$kind %in% c("kernel", "unweighted") ||
      !is.null(job$base$landmarks) || nrow(job$x) > gram_share_max_rows ||
      !candidate_in_core(cand)) return(NULL)
  if (!identical(cache$id, id)) {
    cache$K <- NULL
    cache$K <- core_kernel_matrix(cand$kernel, job$x, NULL, job$ctx)
    cache$id <- id
  }
  cache$K
}
# (a Gram matrix of 4000 rows takes 128 MB)
gram_share_max_rows <- 4000L

# The results of a chunk in a few vectors, so the answer a worker sends is
# small (the held-out correctness as bytes, not a list per task).  A task
# has one result per learner it fitted (its slots, see score_task()).
score_pack <- function(res) {
  slots <- unlist(lapply(res, `[[`, "slots"), recursive = FALSE)
  correct <- lapply(slots, `[[`, "correct")
  # (a regression's squared errors as doubles, class correctness as bytes)
  values <- unlist(correct, use.names = FALSE) %||% logical()
  list(n_slots = lengths(lapply(res, `[[`, "slots")),
       seconds = vapply(res, `[[`, 0, "seconds"),
       degenerate = vapply(res, `[[`, NA, "degenerate"),
       error = vapply(slots, `[[`, "", "error"), warnings = lapply(slots, `[[`, "warnings"),
       dim_correct = lapply(correct, dim),
       correct = if (is.double(values)) values else as.raw(values))
}

# score_pack() undone: one list per task, as score_task() returned them.
score_unpack <- function(p) {
  n <- vapply(p$dim_correct, function(d) if (is.null(d)) 0L else as.integer(prod(d)), 0L)
  ends <- cumsum(n)
  slot <- lapply(seq_along(p$error), function(j) {
    d <- p$dim_correct[[j]]
    v <- if (!is.null(d)) p$correct[seq_len(n[j]) + ends[j] - n[j]]
    list(correct = if (!is.null(d)) matrix(if (is.raw(v)) as.logical(v) else v, d[1], d[2]),
         error = p$error[j], warnings = p$warnings[[j]])
  })
  first <- cumsum(p$n_slots) - p$n_slots
  lapply(seq_along(p$n_slots), function(i) {
    list(slots = slot[first[i] + seq_len(p$n_slots[i])], seconds = p$seconds[i],
         degenerate = p$degenerate[i])
  })
}

# One candidate-by-fold task, fit then score (see fit_pipeline()): the
# candidate's feature map fitted on the fold's training part with the
# held-out rows projected (one call of the core), then each learner fitted
# on those coordinates with the held-out rows voted in its metric (one call
# each), for every k of job$ks.  Returns the task's `slots`, one per learner
# (Euclidean k-NN: one), each the held-out correctness (rows x k; NULL where
# the fit failed), the error and the warnings of its fit; a failed feature
# map fails every slot.  An interrupt or a time limit (setTimeLimit())
# stops the whole scoring.
score_task <- function(t, job, progress) {
  t0 <- proc.time()[["elapsed"]]
  tr <- job$fold_id != job$tasks$fold[t]
  cand <- job$cands[[job$tasks$cand[t]]]
  specs <- if (cand$kind == "euclidean") list(euclidean_spec()) else job$specs
  slots <- lapply(specs, function(sp) list(correct = NULL, error = NA_character_,
                                           warnings = character()))
  slot <- 0L
  fail <- function(e) {
    if (is_stop_condition(e)) stop(e)
    conditionMessage(e)
  }
  collect <- function(w) {
    i <- max(slot, 1L)
    slots[[i]]$warnings <<- c(slots[[i]]$warnings, conditionMessage(w))
    invokeRestart("muffleWarning")
  }
  degenerate <- FALSE
  regression <- is.numeric(job$y)
  ytr <- if (regression) job$y[tr] else droplevels(job$y[tr])
  truth <- if (regression) job$y[!tr] else as.character(job$y[!tr])
  fm <- tryCatch(withCallingHandlers({
    pre <- isTRUE(job$base$precomputed)
    # a precomputed Gram matrix: the fold's block, and the held-out rows'
    # kernel values against the fold's training rows
    xtr <- if (pre) job$x[tr, tr, drop = FALSE] else job$x[tr, , drop = FALSE]
    xte <- if (pre) job$x[!tr, tr, drop = FALSE] else job$x[!tr, , drop = FALSE]
    f <- candidate_feature(cand, xtr, ytr, job$base, job$ctx)
    K <- fold_gram(cand, job$tasks$cand[t], job)
    if (!is.null(K)) f$fspec$gram <- list(K = K, rows = which(tr), new_rows = which(!tr))
    # Numerically degenerate kernels (e.g. the grid's smallest sigmas) are
    # expected here: no warning per fold; the fit is flagged, and the choice
    # leaves the candidate out (its nearest neighbours are decided by ties,
    # so its score says nothing about the kernel).
    list(f = f, xtr = xtr, xte = xte,
         map = fit_feature_map(f$fspec, xtr, job$ctx, FALSE, FALSE, newdata = xte))
  }, warning = collect), error = fail)
  if (is.character(fm)) {
    for (i in seq_along(slots)) slots[[i]]$error <- fm
  } else {
    degenerate <- !is.null(fm$map$degenerate)
    for (i in seq_along(specs)) {
      slot <- i
      spec <- scoring_spec(candidate_spec(specs[[i]], cand, chosen = !isTRUE(cand$fixed),
                                          p = ncol(job$x)))
      p <- tryCatch(withCallingHandlers(
        fit_pipeline(fm$xtr, ytr, fm$f$fspec, spec, job$ctx, neighbors = job$neighbors,
                     warn = FALSE, heldout = fm$xte, k = job$ks, fm = fm$map),
        warning = collect), error = fail)
      if (is.character(p)) {
        slots[[i]]$error <- p
        next
      }
      if (regression) {
        # a regression: the held-out squared errors (rows x k)
        slots[[i]]$correct <- (p$heldout - truth)^2
        next
      }
      # As labels: a class missing from the fold's training part (a class of
      # one or a few members) is simply never predicted.
      cl <- matrix(levels(ytr)[p$heldout], nrow(p$heldout))
      slots[[i]]$correct <- cl == truth
    }
  }
  progress()
  list(slots = slots, degenerate = degenerate, seconds = proc.time()[["elapsed"]] - t0)
}

# TRUE for an error that must stop the whole computation rather than fail
# one fit: R's time limits (setTimeLimit(), R.utils::withTimeout()), which
# R signals as errors with these messages (translated or not).
is_stop_condition <- function(e) {
  msg <- conditionMessage(e)
  any(vapply(c("reached elapsed time limit", "reached CPU time limit",
               gettext("reached elapsed time limit", domain = "R"),
               gettext("reached CPU time limit", domain = "R")),
             function(m) startsWith(msg, m), NA)) ||
    inherits(e, "TimeoutException")
}

# The kmaha_scores object from the task results of score_run().  Its rows
# are the pipelines scored: each candidate with each learner of `specs`
# (Euclidean k-NN, which learns nothing, once), in the order of the
# candidates; with one learner, one row per candidate.  Per row: the fold
# accuracies at every k of `ks` (accuracy_k, rows x folds x k), the k with
# the highest mean (the smallest on ties), and at that k the fold
# accuracies, their mean and sd, the pooled held-out correctness; the
# screen's score, the errors and warnings.
new_scores <- function(run, cands, fold_id, strategy, ks, specs) {
  res <- run$res
  tasks <- run$tasks
  nc <- length(cands)
  v <- max(fold_id)
  nk <- length(ks)
  n <- length(fold_id)
  multi <- length(specs) > 1L
  regression <- any(vapply(specs, function(sp)
    identical(learner_record(sp$name)$task, "regression"), NA))
  kinds <- vapply(cands, `[[`, "", "kind")
  # the rows: candidate and learner slot
  per <- ifelse(kinds == "euclidean", 1L, length(specs))
  rows <- data.frame(cand = rep(seq_len(nc), per),
                     slot = unlist(lapply(per, seq_len)), stringsAsFactors = FALSE)
  rows$learner <- ifelse(kinds[rows$cand] == "euclidean", "euclidean",
                         vapply(specs, `[[`, "", "name")[rows$slot])
  nr <- nrow(rows)
  row_of <- function(j, slot) which(rows$cand == j & rows$slot == slot)
  ran <- !vapply(res, is.null, NA)
  acc_k <- array(NA_real_, c(nr, v, nk),
                 dimnames = list(NULL, paste0("fold", seq_len(v)), paste0("k", ks)))
  correct_k <- array(if (regression) NA_real_ else NA, c(n, nr, nk))
  secs <- matrix(NA_real_, nc, v, dimnames = list(NULL, paste0("fold", seq_len(v))))
  err_rows <- list()
  warn_rows <- list()
  for (t in which(ran)) {
    j <- tasks$cand[t]
    f <- tasks$fold[t]
    te <- fold_id == f
    secs[j, f] <- res[[t]]$seconds
    for (sl in seq_along(res[[t]]$slots)) {
      r <- row_of(j, sl)
      o <- res[[t]]$slots[[sl]]
      if (!is.null(o$correct)) {
        correct_k[te, r, ] <- o$correct
        # (a regression: the fold's RMSE)
        acc_k[r, f, ] <- if (regression) sqrt(colMeans(o$correct)) else colMeans(o$correct)
      }
      if (!is.na(o$error)) err_rows[[length(err_rows) + 1L]] <- data.frame(
        candidate = r, fold = f, message = o$error, stringsAsFactors = FALSE)
      if (length(o$warnings)) warn_rows[[length(warn_rows) + 1L]] <- data.frame(
        candidate = r, fold = f, message = o$warnings, stringsAsFactors = FALSE)
    }
  }
  empty <- data.frame(candidate = integer(), fold = integer(), message = character(),
                      stringsAsFactors = FALSE)
  err_tab <- if (length(err_rows)) do.call(rbind, err_rows) else empty
  warn_tab <- if (length(warn_rows)) do.call(rbind, warn_rows) else empty
  at <- scores_at_best_k(acc_k, correct_k, lower = regression)
  acc <- at$accuracy
  correct <- at$correct
  kbest <- at$k_index
  # Candidates whose kernel was numerically degenerate on some fold's
  # training part (the core's verdict, kmaha/degeneracy.hpp): scored, but
  # left out of the choice.  The screen's verdicts count too.
  deg <- vapply(res, function(r) isTRUE(r$degenerate), NA)
  degenerate <- vapply(seq_len(nc), function(j) any(deg[ran & tasks$cand == j]), NA)
  screen <- rep(NA_real_, nc)
  if (!is.null(run$screen)) {
    sk <- which(run$screened)
    screen[sk] <- run$screen$accuracy
    degenerate[sk] <- degenerate[sk] | rowSums(run$screen$degenerate) > 0L
  }
  n_ok <- at$n_ok
  mu <- at$mean
  sdv <- at$sd
  n_fits <- sum(vapply(res[ran], function(r) length(r$slots), 0L))
  if (all(is.na(mu))) {
    stop(errorCondition(sprintf("Cross-validation failed for every candidate; first error: %s",
                                err_tab$message[1]), class = "kmaha_cv_failed_error"))
  }
  if (nrow(err_tab)) {
    warnf("%d of the %d cross-validation fits (candidate x fold) failed and were left out of the choice; the first error: %s",
          nrow(err_tab), n_fits, err_tab$message[1])
  }
  if (nrow(warn_tab)) {
    n_warned <- nrow(unique(warn_tab[c("candidate", "fold")]))
    warnf("%d of the %d cross-validation fits (candidate x fold) gave warnings; the first: %s",
          n_warned, n_fits, warn_tab$message[1])
  }
  labels <- vapply(cands, `[[`, "", "label")[rows$cand]
  lab_of <- vapply(specs, `[[`, "", "label")
  if (multi) {
    labels <- ifelse(rows$learner == "euclidean", labels,
                     paste0(lab_of[rows$slot], ", ", labels))
  }
  curve <- data.frame(candidate = rows$cand,
                      kind = kinds[rows$cand],
                      label = labels,
                      learner = rows$learner,
                      sigma = vapply(cands, function(cd) as.double(cd$sigma), 0)[rows$cand],
                      # (NA for a pipeline no fold scored: it has no best k)
                      k = ifelse(is.na(mu), NA_integer_, ks[kbest]),
                      mean = mu, sd = sdv, n_ok = n_ok, dropped = run$dropped[rows$cand],
                      degenerate = degenerate[rows$cand], screen = screen[rows$cand],
                      stringsAsFactors = FALSE)
  structure(list(
    curve = curve, accuracy = acc, correct = correct,
    accuracy_k = acc_k, correct_k = correct_k,
    kernels = lapply(cands, function(cd) cd$kernel),
    candidates = lapply(cands, function(cd) cd[c("kind", "label", "sigma")]),
    folds = fold_id, strategy = strategy, n_fits = n_fits, seconds = secs,
    errors = err_tab, warnings = warn_tab, k = ks,
    learner = if (multi) sprintf("the learners %s", paste(lab_of, collapse = ", ")) else lab_of,
    learners = vapply(specs, `[[`, "", "name"),
    metric = if (regression) "rmse"), class = "kmaha_scores")
}

# Each row's k and its scores there, from the fold accuracies at every k
# (acc_k: rows x folds x k) and the held-out correctness (correct_k: points
# x rows x k): the k with the highest mean fold accuracy (the smallest on
# ties), and at that k the fold accuracies (rows x folds), the correctness
# (points x rows), the folds scored, the mean and sd.
scores_at_best_k <- function(acc_k, correct_k, lower = FALSE) {
  nr <- dim(acc_k)[1]
  v <- dim(acc_k)[2]
  mean_k <- apply(acc_k, c(1L, 3L), function(a) if (all(is.na(a))) NA_real_ else mean(a, na.rm = TRUE))
  dim(mean_k) <- dim(acc_k)[c(1L, 3L)]
  # (lower = TRUE: a regression's RMSE, the lowest is best)
  kbest <- apply(mean_k, 1L, function(m) if (all(is.na(m))) 1L else
    if (lower) which.min(m) else which.max(m))
  acc <- vapply(seq_len(nr), function(r) acc_k[r, , kbest[r]], numeric(v))
  acc <- matrix(acc, nr, v, byrow = TRUE, dimnames = list(NULL, dimnames(acc_k)[[2]]))
  correct <- vapply(seq_len(nr), function(r) correct_k[, r, kbest[r]],
                    vector(typeof(correct_k), dim(correct_k)[1]))
  dim(correct) <- c(dim(correct_k)[1], nr)
  n_ok <- rowSums(!is.na(acc))
  mu <- rowMeans(acc, na.rm = TRUE)
  mu[n_ok == 0L] <- NA_real_
  sdv <- apply(acc, 1L, function(a) if (sum(!is.na(a)) > 1L) stats::sd(a, na.rm = TRUE) else NA_real_)
  list(k_index = kbest, accuracy = acc, correct = correct, n_ok = n_ok, mean = mu, sd = sdv)
}

# A scored-candidates object with a selection attached (what cv_kernel()
# returns and kmaha() stores as kernel_choice$cv): the chosen candidate
# `best`, the `reason`, the `explain` sentences, the `rule` and the chosen
# `kernel` (NULL for Euclidean or linear).
with_selection <- function(scores, sel) {
  scores$best <- sel$best
  scores$reason <- sel$reason
  scores$explain <- sel$explain
  scores$rule <- sel$rule
  kind <- scores$curve$kind[sel$best]
  scores$kernel <- if (kind %in% c("kernel", "unweighted"))
    scores$kernels[[scores$curve$candidate[sel$best]]]
  class(scores) <- c("kmaha_cv", "kmaha_scores")
  scores
}

# Stratified fold labels 1..v: within each class the rows are shuffled and
# dealt round-robin, the deal continuing across classes so fold sizes differ
# by at most one.  `arg` names the argument in messages; `learner` the
# learner its hint gives as an example (a regression's is "mlkr").
make_folds <- function(y, folds, arg = "folds", learner = "nca") {
  n <- length(y)
  if (is.numeric(folds) && length(folds) == 1L) {
    v <- check_count(folds, arg, lower = 2L)
    if (v > n) {
      # (kmaha()'s cv_folds is 5 unless set: on a handful of rows the user
      # meets an argument they never gave, so say what chose by CV)
      hint <- if (identical(arg, "cv_folds")) {
        sprintf(" kmaha() chooses its kernel, learner and k by %d-fold cross-validation: set `cv_folds` to at most %d, or give the kernel, the learner and k (e.g. kernel = \"linear\", learner = \"%s\", k = 1), which need none.",
                v, n, learner)
      } else ""
      stopf("`%s` (%d) must not exceed the number of training rows (%d).%s", arg, v, n, hint)
    }
    id <- integer(n)
    start <- 0L
    for (cl in levels(y)) {
      rows <- which(y == cl)
      if (length(rows) > 1L) rows <- rows[sample.int(length(rows))]
      id[rows] <- ((start + seq_along(rows) - 1L) %% v) + 1L
      start <- start + length(rows)
    }
    return(id)
  }
  if (length(folds) != n || anyNA(folds)) {
    stopf("`%s` must be a single number of folds or a vector of %d fold labels without NA.", arg, n)
  }
  id <- as.integer(factor(folds))
  if (max(id) < 2L) stopf("`%s` must define at least two folds.", arg)
  id
}

# kmaha's `seed`: the same generator whatever the session's RNGkind()
# (tune and the future-based frameworks run their work under
# "L'Ecuyer-CMRG", where set.seed(1) alone starts another stream), so that
# seed = s draws the same folds everywhere.  The caller keeps its own state
# and kind with save_rng().
set_kmaha_seed <- function(seed) {
  set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion",
           sample.kind = "Rejection")
}

# The caller's random state, and a function that puts it back: the seed
# when there was one (it records the generator kinds too), else the kinds
# (a parallel plan's streams switch this session to L'Ecuyer-CMRG, which
# would change every later draw of a session that had not drawn yet) and
# no seed.
save_rng <- function() {
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  kind <- RNGkind()
  function() {
    if (had) {
      assign(".Random.seed", old, envir = env)
    } else {
      if (!identical(RNGkind(), kind)) {
        # "Rounding" sampling warns that it is not the default.
        suppressWarnings(RNGkind(kind[1], kind[2], kind[3]))
      }
      if (exists(".Random.seed", envir = env, inherits = FALSE)) {
        rm(".Random.seed", envir = env)
      }
    }
  }
}
