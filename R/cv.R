# Cross-validated choice among base kernels for the KPCA trick, and the
# learner plumbing shared with kmaha(): resolve a learner (a built-in name or
# any R function), run it on coordinates, and extract its linear map.

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
#' The kernel-by-fold fits run through [future.apply::future_lapply()] with
#' `future.seed = TRUE`, so the user's [future::plan()] decides where they run
#' (sequentially by default) and the result does not depend on the plan.
#' Under a plan with several workers each fit uses one thread (option
#' `kmaha.num_threads`), since the workers already occupy the cores.
#' Progress is signalled with [progressr::progressor()]: wrap the call in
#' [progressr::with_progress()] to see a progress bar. Folds are drawn from
#' R's random number generator: use `seed` or [set.seed()] for reproducible
#' results. A fit that fails on a fold (for example a learner error) scores
#' `NA` there and is reported in `errors`; such kernels can still win on their
#' remaining folds only if no kernel succeeded on all folds.
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
#' @param rank,tol Passed to [kpca()].
#' @param seed `NULL`, or a number for [set.seed()] used to draw the folds and
#'   the parallel random streams (the global random state is restored after).
#' @param ... Unused; must be empty.
#' @return An object of class `kmaha_cv`: a list with `curve` (a data frame
#'   with one row per kernel: `kernel` index, `sigma`, `mean`, `sd` and
#'   `n_ok`, the number of folds that fitted), `accuracy` (kernel x fold
#'   matrix), `best` (index of the chosen kernel), `kernel` (the chosen
#'   kernel), `folds` (the fold of each row), `errors` and `k`.
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
                      tol = 1e-8, seed = NULL, ...) {
  check_dots_empty("cv_kernel()", ..., hint = "Pass learner options in `learner_args`.")
  neighbors <- match.arg(neighbors)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y")
  kernels <- check_kernel_list(kernels)
  lrn <- resolve_learner(learner)
  learner_args <- check_learner_args(learner_args)
  check_learner_signature(lrn, learner_args)
  k <- check_count(k, "k")
  if (!is.null(seed)) {
    seed <- check_number(seed, "seed")
    restore <- save_rng()
    on.exit(restore(), add = TRUE)
    set.seed(seed)
  }
  fold_id <- make_folds(y, folds)
  v <- max(fold_id)
  tasks <- expand.grid(fold = seq_len(v), kernel = seq_along(kernels))
  p <- progressr::progressor(steps = nrow(tasks))
  # With several workers the fits already run in parallel: each then uses
  # one thread (NCA's own threads, unless learner_args sets num_threads, and
  # the OpenMP threads of KPCA's and Eigen's products), as threads competing
  # with other workers for the same cores slow all of them down.
  job <- list(tasks = tasks, fold_id = fold_id, x = x, y = y, kernels = kernels,
              lrn = lrn, learner_args = learner_args, neighbors = neighbors,
              rank = rank, tol = tol, k = k,
              one_thread = future::nbrOfWorkers() > 1)
  # future.apply hands each worker a contiguous chunk of tasks, and tasks
  # differ in cost (small bandwidths keep every KPCA component, large ones
  # few). A fixed low-discrepancy permutation spreads the costly tasks over
  # all chunks; it does not depend on the plan, so the random streams (tied
  # to list positions by future.seed) and the results do not either.
  # The task function lives in the package namespace and gets all its data
  # in one argument, so no globals need to be searched for or sent: a worker
  # finds the package's functions in its own copy of the namespace (each
  # object sent to a worker costs a network round trip).
  n_tasks <- nrow(tasks)
  perm <- order((seq_len(n_tasks) * 0.6180339887498949) %% 1)
  res <- vector("list", n_tasks)
  res[perm] <- future.apply::future_lapply(perm, cv_task_call, job = job,
                                           progress = p,
                                           future.seed = TRUE,
                                           future.globals = FALSE,
                                           future.packages = "kmaha")
  acc <- matrix(vapply(res, `[[`, numeric(1), "acc"), nrow = length(kernels),
                ncol = v, byrow = TRUE,
                dimnames = list(NULL, paste0("fold", seq_len(v))))
  errs <- vapply(res, `[[`, character(1), "error")
  err_tab <- tasks[!is.na(errs), , drop = FALSE]
  err_tab$message <- errs[!is.na(errs)]
  n_ok <- rowSums(!is.na(acc))
  mu <- rowMeans(acc, na.rm = TRUE)
  mu[n_ok == 0L] <- NA_real_
  sdv <- apply(acc, 1L, function(a) if (sum(!is.na(a)) > 1L) stats::sd(a, na.rm = TRUE) else NA_real_)
  if (all(is.na(mu))) {
    stopf("Cross-validation failed for every kernel; first error: %s", err_tab$message[1])
  }
  eligible <- if (any(n_ok == v)) n_ok == v else n_ok > 0L
  score <- ifelse(eligible, mu, -Inf)
  best <- which.max(score)   # first best on ties
  sig <- vapply(kernels, function(kk) if (is.null(kk$sigma)) NA_real_ else kk$sigma,
                numeric(1))
  structure(list(
    curve = data.frame(kernel = seq_along(kernels), sigma = sig, mean = mu,
                       sd = sdv, n_ok = n_ok),
    accuracy = acc, best = best, kernel = kernels[[best]], kernels = kernels,
    folds = fold_id, errors = err_tab, k = k,
    learner = lrn$label), class = "kmaha_cv")
}

#' @export
print.kmaha_cv <- function(x, ...) {
  cat(sprintf("<kmaha cv> %d-fold CV of %s over %d kernels (kNN k = %d)\n",
              ncol(x$accuracy), x$learner, nrow(x$curve), x$k))
  cat(sprintf("  chosen: %s (mean accuracy %.3f)\n", format(x$kernel),
              x$curve$mean[x$best]))
  if (nrow(x$errors)) cat(sprintf("  %d kernel-fold fit(s) failed\n", nrow(x$errors)))
  invisible(x)
}

#' @export
plot.kmaha_cv <- function(x, ...) {
  cu <- x$curve
  has_sigma <- all(!is.na(cu$sigma))
  xs <- if (has_sigma) log10(cu$sigma) else cu$kernel
  lo <- cu$mean - ifelse(is.na(cu$sd), 0, cu$sd)
  hi <- cu$mean + ifelse(is.na(cu$sd), 0, cu$sd)
  graphics::plot(xs, cu$mean, type = "b", pch = 19,
                 ylim = range(c(lo, hi), na.rm = TRUE),
                 xlab = if (has_sigma) expression(log[10] ~ sigma) else "kernel",
                 ylab = "CV accuracy (mean +/- sd)",
                 main = sprintf("%d-fold CV of %s", ncol(x$accuracy), x$learner), ...)
  ok <- !is.na(cu$mean)
  graphics::segments(xs[ok], lo[ok], xs[ok], hi[ok])
  graphics::points(xs[x$best], cu$mean[x$best], pch = 1, cex = 2, col = "red")
  invisible(x)
}

# What the workers receive as the task function: a one-line wrapper is much
# smaller to send than cv_task() itself, which the worker's own copy of the
# namespace provides.
cv_task_call <- function(t, job, progress) cv_task(t, job, progress)

# One kernel-by-fold fit of cv_kernel(): KPCA on the fold's training part,
# the learner on its coordinates, kNN accuracy on the held-out part.
cv_task <- function(t, job, progress) {
  if (job$one_thread) {
    restore <- one_thread()
    on.exit(restore(), add = TRUE)
  }
  x <- job$x
  y <- job$y
  tr <- job$fold_id != job$tasks$fold[t]
  out <- tryCatch({
    # Degenerate candidates (e.g. the grid's smallest sigmas) are expected
    # here: they just score badly, without a warning per fold.
    kp <- withCallingHandlers(
      kpca(x[tr, , drop = FALSE], kernel = job$kernels[[job$tasks$kernel[t]]],
           rank = job$rank, tol = job$tol),
      kmaha_degenerate_kernel = function(w) invokeRestart("muffleWarning"))
    fit <- run_learner(job$lrn, kp$coords, y[tr], job$learner_args,
                       input = if (job$neighbors == "input") x[tr, , drop = FALSE])
    ztr <- apply_map(kp$coords, fit$map)
    zte <- apply_map(predict(kp, x[!tr, , drop = FALSE]), fit$map)
    kk <- min(job$k, nrow(ztr))
    pred <- knn_vote(ztr, y[tr], zte, kk)$class
    list(acc = mean(pred == y[!tr]), error = NA_character_)
  }, error = function(e) list(acc = NA_real_, error = conditionMessage(e)))
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

check_learner_args <- function(learner_args) {
  if (!is.list(learner_args) || (length(learner_args) &&
      (is.null(names(learner_args)) || any(!nzchar(names(learner_args)))))) {
    stopf("`learner_args` must be a named list of learner arguments, e.g. list(lambda = 0.1).")
  }
  reserved <- intersect(names(learner_args), c("x", "y", "scale"))
  if (length(reserved)) {
    stopf("`learner_args` must not set %s: kmaha() supplies it.",
          paste(sQuote(reserved, FALSE), collapse = ", "))
  }
  learner_args
}

# A learner specification: a built-in name or a user function.
resolve_learner <- function(learner) {
  if (is.function(learner)) {
    return(list(name = "custom", label = "custom learner", fun = learner,
                builtin = FALSE))
  }
  if (!is.character(learner) || length(learner) != 1L || is.na(learner)) {
    stopf("`learner` must be \"nca\", \"lmnn\", \"dne\" or a function f(x, y, ...) returning a linear map.")
  }
  name <- tolower(learner)
  fun <- switch(name, nca = nca, lmnn = lmnn, dne = dne,
                stopf("`learner` must be \"nca\", \"lmnn\", \"dne\" or a function f(x, y, ...) returning a linear map, not %s.",
                      dQuote(learner, FALSE)))
  list(name = name, label = learner_label(name), fun = fun, builtin = TRUE)
}

# Target neighbours for LMNN/DNE found on `src` (KPCA coordinates or inputs).
learner_targets <- function(name, src, y, kt) {
  same <- cpp_class_neighbors(src, as.integer(y), kt, TRUE)
  if (name == "dne") {
    return(list(same = same, other = cpp_class_neighbors(src, as.integer(y), kt, FALSE)))
  }
  same
}

# TRUE when run_learner() finds target neighbours for the learner: LMNN,
# DNE, or a function with a `targets` argument, unless `targets` is given.
learner_wants_targets <- function(lrn, args) {
  wants <- lrn$builtin && lrn$name %in% c("lmnn", "dne") ||
    (!lrn$builtin && "targets" %in% names(formals(lrn$fun)))
  wants && is.null(args$targets)
}

# Run a learner on coordinates z (n x r).  `input` (or NULL) holds the rows'
# input-space coordinates when targets are to come from the input space.
# Returns list(map = d x r matrix, fit = learner's return value, targets).
run_learner <- function(lrn, z, y, learner_args, input = NULL) {
  args <- learner_args
  targets <- NULL
  if (learner_wants_targets(lrn, args)) {
    kt <- args$k %||% 3L
    kt <- check_count(kt, "learner_args$k")
    targets <- learner_targets(if (lrn$builtin) lrn$name else "lmnn",
                               if (is.null(input)) z else input, y, kt)
    args$targets <- targets
  }
  if (lrn$builtin) args$scale <- FALSE
  # A weight given as a function of the coordinates (kmaha()'s RKLMNN
  # default) is evaluated on this fit's coordinates.
  if (is.function(args$lambda)) args$lambda <- args$lambda(z)
  # Called with symbols, not values, so an error message never prints the data.
  fun <- lrn$fun
  obj <- eval(as.call(c(list(quote(fun), quote(z), quote(y)),
                        lapply(stats::setNames(nm = names(args)),
                               function(a) call("[[", quote(args), a)))))
  list(map = extract_map(obj, ncol(z)), fit = obj, targets = targets)
}

# The d x D map of a learner's result.
extract_map <- function(obj, D) {
  A <- if (is.matrix(obj) && is.numeric(obj)) {
    obj
  } else if (inherits(obj, "kmaha_linear")) {
    transform_matrix(obj)
  } else if (is.list(obj) && is.matrix(obj$L)) {
    obj$L
  } else {
    tryCatch(transform_matrix(obj), error = function(e) NULL)
  }
  if (is.null(A) || !is.numeric(A) || !is.matrix(A)) {
    stopf("The learner must return a numeric d x %d map matrix, or an object with one (element `L` or a transform_matrix() method).", D)
  }
  if (ncol(A) != D) {
    stopf("The learner returned a map with %d columns, but its input has %d.",
          ncol(A), D)
  }
  if (any(!is.finite(A))) stopf("The learner returned a map with non-finite entries.")
  storage.mode(A) <- "double"
  dimnames(A) <- NULL
  A
}
