# Kernel choice chooses among pipelines.  A *candidate* is one pipeline a
# choice can pick: the linear learner on the inputs (no kernel), the KPCA
# trick with one base kernel, with the aligned combination of the base
# kernels, or with their unweighted sum.  cv_run() scores candidates by
# cross-validation of the whole pipeline (a fold builds only what its score
# reads: feature map and map on the fold's training part, held-out
# coordinates, kNN correctness), in parallel through future.apply.
# choose_feature_map() is kmaha()'s dispatch on `kernel`.

# --------------------------------------------------------------------------
# Candidates.

cand_linear <- function() list(kind = "linear", label = "linear (no kernel)", sigma = NA_real_)

cand_kernel <- function(kernel, index = NA_integer_) {
  list(kind = "kernel", kernel = kernel, index = index,
       sigma = kernel$sigma %||% NA_real_, label = short_kernel_label(kernel))
}

cand_align <- function(kernels, method = "qp") {
  list(kind = if (method == "qp") "align" else "align_lp", kernels = kernels,
       method = method, sigma = NA_real_,
       label = sprintf("aligned combination (%s) of %d kernels", toupper(method),
                       length(kernels)))
}

cand_unweighted <- function(kernels) {
  list(kind = "unweighted", kernel = kernel_sum(kernels), sigma = NA_real_,
       label = sprintf("unweighted sum of %d kernels", length(kernels)))
}

# A kernel in a few words (for tables of candidates).
short_kernel_label <- function(kernel) {
  switch(kernel$type,
    rbf = sprintf("RBF sigma = %s", format(kernel$sigma)),
    gaussian = sprintf("Gaussian sigma = %s", format(kernel$sigma)),
    laplace = sprintf("Laplace sigma = %s", format(kernel$sigma)),
    poly = sprintf("polynomial degree %s", format(kernel$degree)),
    format(kernel))
}

# The feature map of a candidate fitted on training inputs xs (a fold's or
# all of them), with the alignment it computed (or NULL).
candidate_feature <- function(cand, xs, y, base, quiet = FALSE) {
  kpca_of <- function(kernel) {
    feature_kpca(kernel, base$rank, base$tol, base$landmarks, base$landmark_method)
  }
  switch(cand$kind,
    linear = list(fspec = feature_identity()),
    kernel = , unweighted = list(fspec = kpca_of(cand$kernel)),
    align = , align_lp = {
      lm <- base$landmarks
      al <- withCallingHandlers(
        align_kernels(xs, y, cand$kernels, method = cand$method,
                      landmarks = if (is.matrix(lm)) nrow(lm) else lm),
        kmaha_degenerate_kernel = function(w) invokeRestart("muffleWarning"))
      list(fspec = kpca_of(al$kernel), alignment = al)
    })
}

# The learner of a candidate: kernelized LMNN gets the RKLMNN default
# weight unless the user set `lambda` (see kmaha()); linear LMNN none.
candidate_spec <- function(spec, cand) {
  if (isTRUE(spec$builtin) && spec$name == "lmnn" && cand$kind != "linear" &&
      !"lambda" %in% names(spec$args)) {
    spec$opts$lambda <- klmnn_lambda
  }
  spec
}

# --------------------------------------------------------------------------
# kmaha()'s dispatch on `kernel`: the feature map of the final fit, the
# learner spec for it, and what print() and summary() report about the
# choice (`info`).

choose_feature_map <- function(choice, xs, y, spec, kernels, base, k, folds,
                               strategy, seed, neighbors, ctx) {
  one <- function(cand, info) {
    f <- candidate_feature(cand, xs, y, base)
    if (!is.null(f$alignment)) info$alignment <- f$alignment
    list(fspec = f$fspec, spec = candidate_spec(spec, cand), info = info,
         quiet = isTRUE(f$alignment$degenerate_lp))
  }
  switch(choice$type,
    linear = one(cand_linear(), list(type = "linear")),
    kernel = one(cand_kernel(choice$kernel), list(type = "kernel")),
    unweighted = one(cand_unweighted(kernels), list(type = "unweighted")),
    align = one(cand_align(kernels, "qp"), list(type = "align")),
    align_lp = one(cand_align(kernels, "lp"), list(type = "align_lp")),
    cv = {
      cands <- lapply(seq_along(kernels), function(i) cand_kernel(kernels[[i]], i))
      cv <- cv_choose(xs, y, spec, cands, folds, k, strategy, seed, base,
                      neighbors, ctx, rule = "best")
      r <- one(cands[[cv$best]], list(type = "cv", cv = cv, index = cv$best,
                                       seed = seed))
      r
    },
    auto = {
      cands <- auto_candidates(kernels)
      cv <- cv_choose(xs, y, spec, cands, folds, k, strategy, seed, base,
                      neighbors, ctx, rule = "auto")
      one(cands[[cv$best]], list(type = "auto", cv = cv, index = cv$best,
                                 seed = seed))
    })
}

# --------------------------------------------------------------------------
# Cross-validation of candidates.

# Scores `cands` by stratified `folds`-fold CV (seeded by `seed` when given,
# restoring the caller's random state) and picks one by `rule`.  Returns a
# kmaha_cv object.
cv_choose <- function(xs, y, spec, cands, folds, k, strategy, seed, base,
                      neighbors, ctx, rule = "best", arg_folds = "cv_folds") {
  if (!is.null(seed)) {
    restore <- save_rng()
    on.exit(restore(), add = TRUE)
    set.seed(seed)
  }
  fold_id <- make_folds(y, folds, arg_folds)
  res <- cv_run(xs, y, spec, cands, fold_id, k, strategy, base, neighbors, ctx)
  cv_result(res, cands, fold_id, strategy, k, spec$label, rule)
}

# The candidate-by-fold fits.  Returns the accuracy matrix (candidate x
# fold; NA where a fit failed or was skipped), the held-out correctness of
# every fit, the errors and warnings, which candidates the fast strategy
# dropped after the first fold, and the number of fits.
cv_run <- function(xs, y, spec, cands, fold_id, k, strategy, base, neighbors, ctx) {
  v <- max(fold_id)
  nc <- length(cands)
  # Task t fits candidate tasks$cand[t] on fold tasks$fold[t]; t runs over
  # the folds first.
  tasks <- expand.grid(fold = seq_len(v), cand = seq_len(nc))
  n_tasks <- nrow(tasks)
  seeds <- task_seeds(n_tasks)
  p <- progressr::progressor(steps = n_tasks)
  # Every fit runs on one thread: the fits are many and small, and parallel
  # work across fits goes through the plan's workers.
  job <- list(tasks = tasks, fold_id = fold_id, x = xs, y = y, cands = cands,
              spec = spec, neighbors = neighbors, base = base, k = k,
              ctx = single_thread(ctx), settings = worker_settings())
  # Workers elsewhere get the user's functions with their helpers (see
  # ship_closures()) and attach the packages those use.
  if (!plan_is_local()) {
    shipped <- ship_closures(job[c("spec", "cands", "base")])
    job[c("spec", "cands", "base")] <- shipped
    job$packages <- attr(shipped, "packages")
  }
  res <- vector("list", n_tasks)
  dropped <- rep(FALSE, nc)
  if (strategy == "fast" && nc > 2L) {
    first <- which(tasks$fold == 1L)
    res[first] <- cv_round(first, job, seeds, p)
    keep <- cv_keep(lapply(res[first], `[[`, "correct"))
    dropped <- !keep
    rest <- which(tasks$fold != 1L & keep[tasks$cand])
    skipped <- n_tasks - length(first) - length(rest)
    if (skipped > 0L) p(amount = skipped, message = "candidates dropped")
    res[rest] <- cv_round(rest, job, seeds, p)
  } else {
    res[] <- cv_round(seq_len(n_tasks), job, seeds, p)
  }
  list(res = res, tasks = tasks, dropped = dropped)
}

# Runs the tasks `ids` as one round of futures (one per worker, see
# plan_chunks()) and returns their results in the order of `ids`.
cv_round <- function(ids, job, seeds, progress) {
  # Each worker gets a contiguous chunk of tasks, and tasks differ in cost
  # (small bandwidths keep every KPCA component, large ones few). A fixed
  # low-discrepancy permutation spreads the costly tasks over all chunks;
  # it does not depend on the plan, and every task brings its own random
  # stream, so the results do not either.
  perm <- order((seq_along(ids) * 0.6180339887498949) %% 1)
  chunks <- plan_chunks(ids[perm], cv_chunk_call, job, seeds[ids[perm]], progress,
                        packages = job$packages)
  out <- vector("list", length(ids))
  out[perm] <- unlist(lapply(chunks, cv_unpack), recursive = FALSE)
  out
}

# What the workers receive to run a chunk of tasks: a small wrapper, much
# smaller to send than the functions it calls, which come from the worker's
# own copy of the namespace.  Its first line checks that copy's version
# (written out, see R/parallel.R); the tasks then run with the
# session's kmaha options, each on its own random stream, and the caller's
# random state is put back (in a sequential plan the caller is the session).
cv_chunk_call <- function(ids, job, seeds, progress) {
  if (!is.null(job$settings) &&
      !identical(as.character(getNamespaceVersion("kmaha")), job$settings$version)) {
    stop(sprintf(job$settings$version_error, getNamespaceVersion("kmaha")), call. = FALSE)
  }
  old <- worker_enter(job$settings)
  on.exit(options(old), add = TRUE)
  restore <- save_rng()
  on.exit(restore(), add = TRUE)
  res <- vector("list", length(ids))
  for (i in seq_along(ids)) {
    assign(".Random.seed", seeds[[i]], envir = globalenv())
    res[[i]] <- cv_task(ids[i], job, progress)
  }
  cv_pack(res)
}

# The results of a chunk in a few vectors, so the answer a worker sends is
# small (the held-out correctness as bytes, not a list per task).
cv_pack <- function(res) {
  correct <- lapply(res, `[[`, "correct")
  list(acc = vapply(res, `[[`, 0, "acc"), seconds = vapply(res, `[[`, 0, "seconds"),
       error = vapply(res, `[[`, "", "error"), warnings = lapply(res, `[[`, "warnings"),
       n_correct = vapply(correct, function(cc) if (is.null(cc)) -1L else length(cc), 0L),
       correct = as.raw(unlist(correct, use.names = FALSE) %||% logical()))
}

# cv_pack() undone: one list per task, as cv_task() returned them.
cv_unpack <- function(p) {
  ends <- cumsum(pmax(p$n_correct, 0L))
  lapply(seq_along(p$acc), function(i) {
    nc <- p$n_correct[i]
    list(acc = p$acc[i],
         correct = if (nc >= 0L) as.logical(p$correct[seq_len(nc) + ends[i] - nc]),
         error = p$error[i], warnings = p$warnings[[i]], seconds = p$seconds[i])
  })
}

# One candidate-by-fold fit: the candidate's pipeline on the fold's
# training part, kNN correctness of every held-out point.
cv_task <- function(t, job, progress) {
  t0 <- proc.time()[["elapsed"]]
  tr <- job$fold_id != job$tasks$fold[t]
  cand <- job$cands[[job$tasks$cand[t]]]
  warns <- character()
  out <- tryCatch(withCallingHandlers({
    ytr <- droplevels(job$y[tr])
    xtr <- job$x[tr, , drop = FALSE]
    f <- candidate_feature(cand, xtr, ytr, job$base, quiet = TRUE)
    spec <- candidate_spec(job$spec, cand)
    # Degenerate candidates (e.g. the grid's smallest sigmas) are expected
    # here: they just score badly, without a warning per fold.
    p <- fit_pipeline(xtr, ytr, f$fspec, spec, job$ctx,
                      neighbors = job$neighbors, warn = FALSE)
    zte <- apply_map(feature_transform(p$feature, job$x[!tr, , drop = FALSE], job$ctx),
                     p$map, job$ctx)
    ztr <- apply_map(p$coords, p$map, job$ctx)
    kk <- min(job$k, nrow(ztr))
    correct <- knn_vote(ztr, ytr, zte, kk, ctx = job$ctx)$class == job$y[!tr]
    list(acc = mean(correct), correct = correct, error = NA_character_)
  }, warning = function(w) {
    warns <<- c(warns, conditionMessage(w))
    invokeRestart("muffleWarning")
  }), error = function(e) list(acc = NA_real_, correct = NULL,
                               error = conditionMessage(e)))
  out$warnings <- warns
  out$seconds <- proc.time()[["elapsed"]] - t0
  progress()
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

# Successive halving after the first fold.  `correct` holds, per candidate,
# the logical vector of correctly classified held-out points of that fold
# (NULL when the fit failed).  A candidate is kept unless the best one (most
# points correct; the first on ties) beats it by more than one standard
# error of the paired comparison on those points:
# wins_best - wins_j > sqrt(wins_best + wins_j + 1).  Failed candidates are
# dropped unless every candidate failed.
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

# Stratified fold labels 1..v: within each class the rows are shuffled and
# dealt round-robin, the deal continuing across classes so fold sizes differ
# by at most one.  `arg` names the argument in messages.
make_folds <- function(y, folds, arg = "folds") {
  n <- length(y)
  if (is.numeric(folds) && length(folds) == 1L) {
    v <- check_count(folds, arg, lower = 2L)
    if (v > n) stopf("`%s` (%d) must not exceed the number of training rows (%d).", arg, v, n)
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

# --------------------------------------------------------------------------
# kernel = "auto".

# The candidates of kernel = "auto", from the simplest: the linear learner
# on the inputs, each base kernel, the unweighted sum and the aligned
# combination (QP; the LP alignment is degenerate and never a candidate).
auto_candidates <- function(kernels) {
  c(list(cand_linear()),
    lapply(seq_along(kernels), function(i) cand_kernel(kernels[[i]], i)),
    list(cand_unweighted(kernels), cand_align(kernels, "qp")))
}

# How complex a candidate is, for the one-standard-error rule.
candidate_complexity <- function(kind) {
  unname(c(linear = 0, kernel = 1, unweighted = 2, align = 3, align_lp = 3)[kind])
}

# The choice of kernel = "auto": the candidate with the highest mean CV
# accuracy, unless a simpler one is within one standard error of it (the
# standard error of the paired difference of held-out correctness).
auto_select <- function(curve, correct, v) {
  top <- best_select(curve, v)$best
  ok <- curve$n_ok == v & !curve$dropped
  ok[top] <- TRUE
  se <- vapply(seq_len(nrow(curve)), function(j) {
    both <- !is.na(correct[, top]) & !is.na(correct[, j])
    if (!any(both)) return(NA_real_)
    d <- as.numeric(correct[both, top]) - as.numeric(correct[both, j])
    if (length(d) < 2L) return(0)
    stats::sd(d) / sqrt(length(d))
  }, 0)
  within <- ok & !is.na(se) & curve$mean >= curve$mean[top] - se
  cx <- candidate_complexity(curve$kind)
  pool <- which(within & cx == min(cx[within]))
  best <- pool[which.max(curve$mean[pool])]
  reason <- if (best == top) {
    sprintf("highest mean CV accuracy (%.3f)", curve$mean[top])
  } else {
    sprintf("simplest candidate within one standard error (%.3f) of the best, %s (%.3f)",
            se[best], curve$label[top], curve$mean[top])
  }
  list(best = best, reason = reason)
}
