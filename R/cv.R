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
#' @param kernels A non-empty list of kernel objects to choose from.
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
#' @param ... Unused; must be empty.
#' @return An object of class `kmaha_cv`: a list with `curve` (a data frame
#'   with one row per kernel: `kernel` index, `sigma`, `mean`, `sd`, `n_ok`,
#'   the number of folds that fitted, and `dropped`, whether the fast
#'   strategy dropped the kernel after the first fold), `accuracy` (kernel x
#'   fold matrix, `NA` where a fit failed or was skipped), `best` (index of
#'   the chosen kernel), `kernel` (the chosen kernel), `folds` (the fold of
#'   each row), `strategy`, `n_fits` (fits run), `errors` and `warnings`
#'   (data frames of kernel, fold and message) and `k`.
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
                      strategy = c("fast", "exhaustive"), ...) {
  check_dots_empty("cv_kernel()", ..., hint = "Pass learner options in `learner_args`.")
  neighbors <- match.arg(neighbors)
  landmark_method <- match.arg(landmark_method)
  strategy <- match.arg(strategy)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  kernels <- check_kernel_list(kernels)
  lrn <- resolve_learner(learner)
  learner_args <- check_learner_args(learner_args)
  check_learner_signature(lrn, learner_args)
  k <- check_count(k, "k")
  spec <- fold_learner(lrn, learner_args)
  if (!is.null(seed)) {
    seed <- check_number(seed, "seed")
    restore <- save_rng()
    on.exit(restore(), add = TRUE)
    set.seed(seed)
  }
  fold_id <- make_folds(y, folds)
  v <- max(fold_id)
  nk <- length(kernels)
  # Task t fits kernel tasks$kernel[t] on fold tasks$fold[t]; t runs over
  # the folds first, so the results fill the kernel x fold matrix by row.
  tasks <- expand.grid(fold = seq_len(v), kernel = seq_len(nk))
  n_tasks <- nrow(tasks)
  seeds <- task_seeds(n_tasks)
  p <- progressr::progressor(steps = n_tasks)
  # Every fit runs on one thread (NCA's own threads, unless learner_args
  # sets num_threads, and the OpenMP threads of KPCA's and Eigen's
  # products): at n = 200, two threads per fit were no faster on an idle
  # two-core machine and up to 10 times slower on a busy one (spinning
  # OpenMP threads), and under several workers they compete with the other
  # workers for the same cores.
  job <- list(tasks = tasks, fold_id = fold_id, x = x, y = y, kernels = kernels,
              spec = spec, neighbors = neighbors, rank = rank, tol = tol,
              k = k, landmarks = landmarks, landmark_method = landmark_method)
  res <- vector("list", n_tasks)
  dropped <- rep(FALSE, nk)
  if (strategy == "fast" && nk > 2L) {
    first <- which(tasks$fold == 1L)
    res[first] <- cv_round(first, job, seeds, p)
    keep <- cv_keep(lapply(res[first], `[[`, "correct"))
    dropped <- !keep
    rest <- which(tasks$fold != 1L & keep[tasks$kernel])
    skipped <- n_tasks - length(first) - length(rest)
    if (skipped > 0L) p(amount = skipped, message = "kernels dropped")
    res[rest] <- cv_round(rest, job, seeds, p)
  } else {
    res[] <- cv_round(seq_len(n_tasks), job, seeds, p)
  }
  cv_result(res, tasks, kernels, dropped, fold_id, strategy, k, lrn$label)
}

# Runs the tasks `ids` in one future_lapply() call and returns their results
# in the order of `ids`.
cv_round <- function(ids, job, seeds, progress) {
  # future.apply hands each worker a contiguous chunk of tasks, and tasks
  # differ in cost (small bandwidths keep every KPCA component, large ones
  # few). A fixed low-discrepancy permutation spreads the costly tasks over
  # all chunks; it does not depend on the plan, and every task brings its
  # own random stream, so the results do not either.
  # The task function lives in the package namespace and gets all its data
  # in one argument, so no globals need to be searched for or sent: a worker
  # finds the package's functions in its own copy of the namespace (each
  # object sent to a worker costs a network round trip).
  perm <- order((seq_along(ids) * 0.6180339887498949) %% 1)
  out <- vector("list", length(ids))
  out[perm] <- future.apply::future_lapply(ids[perm], cv_task_call, job = job,
                                           progress = progress,
                                           future.seed = seeds[ids[perm]],
                                           future.globals = FALSE,
                                           future.packages = "kmaha")
  out
}

# One L'Ecuyer-CMRG stream per task, as future.seed = TRUE would make them:
# the first from one draw of the caller's random generator (which advances
# it by that draw and no more), the others by parallel::nextRNGStream().
task_seeds <- function(n) {
  env <- globalenv()
  s0 <- sample.int(.Machine$integer.max, 1L)
  caller <- get(".Random.seed", envir = env, inherits = FALSE)
  on.exit(assign(".Random.seed", caller, envir = env), add = TRUE)
  set.seed(s0, kind = "L'Ecuyer-CMRG")
  s <- get(".Random.seed", envir = env, inherits = FALSE)
  out <- vector("list", n)
  for (i in seq_len(n)) {
    s <- parallel::nextRNGStream(s)
    out[[i]] <- s
  }
  out
}

# Successive halving after the first fold.  `correct` holds, per kernel,
# the logical vector of correctly classified held-out points of that fold
# (NULL when the fit failed).  A kernel is kept unless the best kernel (most
# points correct; the first on ties) beats it by more than one standard
# error of the paired comparison on those points:
# wins_best - wins_j > sqrt(wins_best + wins_j + 1).  Failed kernels are
# dropped unless every kernel failed.
cv_keep <- function(correct, z = 1) {
  ok <- !vapply(correct, is.null, NA)
  if (!any(ok)) return(rep(TRUE, length(correct)))
  score <- vapply(correct, function(cc) if (is.null(cc)) -1 else sum(cc), 0)
  b <- correct[[which.max(score)]]
  vapply(seq_along(correct), function(j) {
    cj <- correct[[j]]
    if (is.null(cj)) return(FALSE)
    wb <- sum(b & !cj)
    wj <- sum(cj & !b)
    wb - wj <= z * sqrt(wb + wj + 1)
  }, NA)
}

# The kmaha_cv object from the task results.
cv_result <- function(res, tasks, kernels, dropped, fold_id, strategy, k, label) {
  nk <- length(kernels)
  v <- max(fold_id)
  ran <- !vapply(res, is.null, NA)
  field <- function(name, empty) lapply(res, function(r) if (is.null(r)) empty else r[[name]])
  acc <- matrix(unlist(field("acc", NA_real_)), nrow = nk, ncol = v, byrow = TRUE,
                dimnames = list(NULL, paste0("fold", seq_len(v))))
  errs <- unlist(field("error", NA_character_))
  err_tab <- tasks[!is.na(errs), c("kernel", "fold"), drop = FALSE]
  err_tab$message <- errs[!is.na(errs)]
  rownames(err_tab) <- NULL
  warns <- field("warnings", character())
  n_warn <- lengths(warns)
  warn_tab <- data.frame(kernel = rep(tasks$kernel, n_warn),
                         fold = rep(tasks$fold, n_warn),
                         message = unlist(warns, use.names = FALSE) %||% character())
  n_ok <- rowSums(!is.na(acc))
  mu <- rowMeans(acc, na.rm = TRUE)
  mu[n_ok == 0L] <- NA_real_
  sdv <- apply(acc, 1L, function(a) if (sum(!is.na(a)) > 1L) stats::sd(a, na.rm = TRUE) else NA_real_)
  if (all(is.na(mu))) {
    stopf("Cross-validation failed for every kernel; first error: %s", err_tab$message[1])
  }
  if (any(n_warn > 0L)) {
    warnf("%d of the %d cross-validation fits (kernel x fold) gave warnings; the first: %s",
          sum(n_warn > 0L), sum(ran), warn_tab$message[1])
  }
  # Dropped kernels compete only when no kept kernel fitted at all.
  cand <- !dropped & n_ok > 0L
  if (!any(cand)) cand <- n_ok > 0L
  eligible <- cand & (if (any(cand & n_ok == v)) n_ok == v else TRUE)
  score <- ifelse(eligible, mu, -Inf)
  best <- which.max(score)   # first best on ties
  sig <- vapply(kernels, function(kk) if (is.null(kk$sigma)) NA_real_ else kk$sigma,
                numeric(1))
  structure(list(
    curve = data.frame(kernel = seq_len(nk), sigma = sig, mean = mu,
                       sd = sdv, n_ok = n_ok, dropped = dropped),
    accuracy = acc, best = best, kernel = kernels[[best]], kernels = kernels,
    folds = fold_id, strategy = strategy, n_fits = sum(ran),
    errors = err_tab, warnings = warn_tab, k = k,
    learner = label), class = "kmaha_cv")
}

#' @export
print.kmaha_cv <- function(x, ...) {
  cat(sprintf("<kmaha cv> %d-fold CV of %s over %d kernels (kNN k = %d)\n",
              ncol(x$accuracy), x$learner, nrow(x$curve), x$k))
  strategy <- x$strategy %||% "exhaustive"
  if (strategy == "fast") {
    cat(sprintf("  fast strategy: %d of %d kernels dropped after the first fold; %d fits\n",
                sum(x$curve$dropped), nrow(x$curve), x$n_fits))
  }
  cat(sprintf("  chosen: %s (mean accuracy %.3f)\n", format(x$kernel),
              x$curve$mean[x$best]))
  if (nrow(x$errors)) cat(sprintf("  %d kernel-fold fit(s) failed\n", nrow(x$errors)))
  if (NROW(x$warnings)) {
    cat(sprintf("  %d kernel-fold fit(s) gave warnings\n",
                nrow(unique(x$warnings[c("kernel", "fold")]))))
  }
  invisible(x)
}

#' @export
plot.kmaha_cv <- function(x, ...) {
  cu <- x$curve
  has_sigma <- all(!is.na(cu$sigma))
  xs <- if (has_sigma) log10(cu$sigma) else cu$kernel
  lo <- cu$mean - ifelse(is.na(cu$sd), 0, cu$sd)
  hi <- cu$mean + ifelse(is.na(cu$sd), 0, cu$sd)
  dropped <- if (is.null(cu$dropped)) rep(FALSE, nrow(cu)) else cu$dropped
  graphics::plot(xs, cu$mean, type = "b", pch = ifelse(dropped, 4, 19),
                 ylim = range(c(lo, hi), na.rm = TRUE),
                 xlab = if (has_sigma) expression(log[10] ~ sigma) else "kernel",
                 ylab = "CV accuracy (mean +/- sd)",
                 main = sprintf("%d-fold CV of %s", ncol(x$accuracy), x$learner), ...)
  ok <- !is.na(cu$mean)
  graphics::segments(xs[ok], lo[ok], xs[ok], hi[ok])
  graphics::points(xs[x$best], cu$mean[x$best], pch = 1, cex = 2, col = "red")
  if (any(dropped)) {
    graphics::legend("bottomright", legend = "dropped after the first fold",
                     pch = 4, bty = "n", cex = 0.8)
  }
  invisible(x)
}

# What the workers receive as the task function: a one-line wrapper is much
# smaller to send than cv_task() itself, which the worker's own copy of the
# namespace provides.
cv_task_call <- function(t, job, progress) cv_task(t, job, progress)

# One kernel-by-fold fit of cv_kernel(): KPCA on the fold's training part,
# the learner on its coordinates, kNN accuracy on the held-out part.
# Returns the accuracy, the correctness of each held-out point (for the
# halving), the error message (NA) and the warnings raised.
cv_task <- function(t, job, progress) {
  restore <- one_thread()
  on.exit(restore(), add = TRUE)
  x <- job$x
  y <- job$y
  tr <- job$fold_id != job$tasks$fold[t]
  warns <- character()
  out <- tryCatch(withCallingHandlers({
    ytr <- y[tr]
    # Degenerate candidates (e.g. the grid's smallest sigmas) are expected
    # here: they just score badly, without a warning per fold.
    kp <- withCallingHandlers(
      kpca(x[tr, , drop = FALSE], kernel = job$kernels[[job$tasks$kernel[t]]],
           rank = job$rank, tol = job$tol, landmarks = job$landmarks,
           landmark_method = job$landmark_method),
      kmaha_degenerate_kernel = function(w) invokeRestart("muffleWarning"))
    map <- fold_map(job$spec, kp$coords, droplevels(ytr),
                    input = if (job$neighbors == "input") x[tr, , drop = FALSE])
    ztr <- apply_map(kp$coords, map)
    zte <- apply_map(predict(kp, x[!tr, , drop = FALSE]), map)
    kk <- min(job$k, nrow(ztr))
    correct <- knn_vote(ztr, ytr, zte, kk)$class == y[!tr]
    list(acc = mean(correct), correct = correct, error = NA_character_)
  }, warning = function(w) {
    warns <<- c(warns, conditionMessage(w))
    invokeRestart("muffleWarning")
  }), error = function(e) list(acc = NA_real_, correct = NULL,
                               error = conditionMessage(e)))
  out$warnings <- warns
  progress()
  out
}

# Stratified fold labels 1..v: within each class the rows are shuffled and
# dealt round-robin, the deal continuing across classes so fold sizes differ
# by at most one.
make_folds <- function(y, folds) {
  n <- length(y)
  if (is.numeric(folds) && length(folds) == 1L) {
    v <- check_count(folds, "folds", lower = 2L)
    if (v > n) stopf("`folds` (%d) must not exceed the number of training rows (%d).", v, n)
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
    stopf("`folds` must be a single number of folds or a vector of %d fold labels without NA.", n)
  }
  id <- as.integer(factor(folds))
  if (max(id) < 2L) stopf("`folds` must define at least two folds.")
  id
}

save_rng <- function() {
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  function() {
    if (had) assign(".Random.seed", old, envir = env)
    else if (exists(".Random.seed", envir = env, inherits = FALSE))
      rm(".Random.seed", envir = env)
  }
}
