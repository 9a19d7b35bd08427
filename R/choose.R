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

# No metric learning at all: kNN with the Euclidean distance on the scaled
# inputs (the identity map), the simplest candidate of kernel = "auto".
cand_euclidean <- function() {
  list(kind = "euclidean", label = "Euclidean (no metric learning)", sigma = NA_real_)
}

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
    feature_kpca(kernel, base$rank, base$tol, base$landmarks, base$landmark_method,
                 base$kpca_method %||% "auto")
  }
  switch(cand$kind,
    linear = , euclidean = list(fspec = feature_identity()),
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
  if (cand$kind == "euclidean") return(euclidean_spec())
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
  choose_feature_maps(list(choice), xs, y, spec, kernels, base, k, folds,
                      strategy, seed, neighbors, ctx)[[1]]
}

# The same for several choices at once: kernel = "cv" and "auto" together
# run one cross-validation (over auto's candidates) and read both choices
# from it, exactly as each would alone (see cv_run()).  Returns one
# selection per choice; `rng` is the random state after the choice, for
# the final fits (which kmaha_fit_choices() starts from the same state).
choose_feature_maps <- function(choices, xs, y, spec, kernels, base, k, folds,
                                strategy, seed, neighbors, ctx) {
  one <- function(cand, info) {
    f <- candidate_feature(cand, xs, y, base)
    if (!is.null(f$alignment)) info$alignment <- f$alignment
    list(fspec = f$fspec, spec = candidate_spec(spec, cand), info = info,
         quiet = isTRUE(f$alignment$degenerate_lp))
  }
  types <- vapply(choices, `[[`, "", "type")
  cv_views <- NULL
  if (any(types %in% c("cv", "auto"))) {
    cands <- if ("auto" %in% types) auto_candidates(kernels) else
      lapply(seq_along(kernels), function(i) cand_kernel(kernels[[i]], i))
    large <- base$large
    if (is.null(large)) {
      cv_views <- cv_choose(xs, y, spec, cands, folds, k, strategy, seed, base,
                            neighbors, ctx, views = intersect(c("cv", "auto"), types))
    } else {
      # Large n (see kmaha()): choose on a stratified subsample with KPCA
      # of bounded rank, then fit the choice on all rows with Nystrom KPCA.
      if (!is.null(seed)) {
        restore <- save_rng()
        on.exit(restore(), add = TRUE)
        set.seed(seed)
      }
      rows <- stratified_rows(y, large$n_choose)
      cv_views <- cv_choose(xs[rows, , drop = FALSE], droplevels(y[rows]), spec, cands,
                            folds, k, strategy, NULL,
                            # the full eigensolver: at this size it is as fast,
                            # and never fails to converge
                            utils::modifyList(base, list(rank = large$rank, large = NULL,
                                                         kpca_method = "full")),
                            neighbors, ctx, views = intersect(c("cv", "auto"), types))
      base <- utils::modifyList(base, list(landmarks = large$landmarks, rank = large$rank,
                                           large = NULL))
      for (v in names(cv_views)) {
        cvv <- cv_views[[v]]$cv
        kernelized <- !cvv$curve$kind[cvv$best] %in% c("linear", "euclidean")
        cv_views[[v]]$cv$reason <- sprintf("%s; chosen on a stratified subsample of %d of the %d rows, with KPCA of rank <= %d%s",
                                           cvv$reason, length(rows), nrow(xs), large$rank,
                                           if (kernelized) sprintf(", and fitted on all rows with Nystrom KPCA (%d landmarks)",
                                                                   large$landmarks) else
                                             ", and fitted on all rows")
      }
    }
  }
  lapply(choices, function(choice) {
    switch(choice$type,
      linear = one(cand_linear(), list(type = "linear")),
      kernel = one(cand_kernel(choice$kernel), list(type = "kernel")),
      unweighted = one(cand_unweighted(kernels), list(type = "unweighted")),
      align = one(cand_align(kernels, "qp"), list(type = "align")),
      align_lp = one(cand_align(kernels, "lp"), list(type = "align_lp")),
      cv = , auto = {
        v <- cv_views[[choice$type]]
        one(v$cands[[v$cv$best]], list(type = choice$type, cv = v$cv,
                                        index = v$cv$best, seed = seed))
      })
  })
}

# --------------------------------------------------------------------------
# Cross-validation of candidates.

# Scores `cands` by stratified `folds`-fold CV (seeded by `seed` when given,
# restoring the caller's random state) and reads the choices named in
# `views` from the scores: "cv" (the paper's rule on the base kernels),
# "auto" (auto_select() on all candidates).  Returns, per view, the kmaha_cv
# object and the candidates it chose among.
cv_choose <- function(xs, y, spec, cands, folds, k, strategy, seed, base,
                      neighbors, ctx, views = "cv", arg_folds = "cv_folds") {
  if (!is.null(seed)) {
    restore <- save_rng()
    on.exit(restore(), add = TRUE)
    set.seed(seed)
  }
  fold_id <- make_folds(y, folds, arg_folds)
  res <- cv_run(xs, y, spec, cands, fold_id, k, strategy, base, neighbors, ctx)
  out <- list()
  for (v in views) {
    subset <- if (v == "cv") which(vapply(cands, `[[`, "", "kind") == "kernel") else
      seq_along(cands)
    out[[v]] <- list(cv = cv_result(res, cands, fold_id, strategy, k, spec$label,
                                    rule = if (v == "cv") "best" else "auto",
                                    subset = subset),
                     cands = cands[subset])
  }
  out
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
  # Successive halving among the base kernels only: the other candidates
  # (the linear learner, the unweighted and the aligned kernel) are few and
  # always scored on every fold.  So the base kernels' scores do not depend
  # on which other candidates are scored beside them: kernel = "cv" and
  # kernel = "auto" with the same seed share them exactly (the base kernels
  # come first in the task order, so their random streams are the same too).
  is_kernel <- vapply(cands, function(cd) identical(cd$kind, "kernel"), NA)
  if (strategy == "fast" && sum(is_kernel) > 2L) {
    first <- which(tasks$fold == 1L)
    res[first] <- cv_round(first, job, seeds, p)
    keep <- rep(TRUE, nc)
    # On small folds one more point right or wrong is a big step: a kernel
    # is dropped only when clearly worse (two standard errors under 40
    # held-out points, one above).
    z <- if (sum(fold_id == 1L) < 40L) 2 else 1
    # a numerically degenerate kernel counts as failed: it is neither the
    # reference nor kept
    keep[is_kernel] <- cv_keep(lapply(res[first][is_kernel[tasks$cand[first]]], function(r) {
      if (isTRUE(r$degenerate)) NULL else r$correct
    }), z = z)
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
       degenerate = vapply(res, `[[`, NA, "degenerate"),
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
         error = p$error[i], warnings = p$warnings[[i]], seconds = p$seconds[i],
         degenerate = p$degenerate[i])
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
    # Numerically degenerate kernels (e.g. the grid's smallest sigmas) are
    # expected here: no warning per fold; the fit is flagged, and the choice
    # leaves the candidate out (its nearest neighbours are decided by ties,
    # so its score says nothing about the kernel).
    p <- fit_pipeline(xtr, ytr, f$fspec, spec, job$ctx,
                      neighbors = job$neighbors, warn = FALSE)
    zte <- apply_map(feature_transform(p$feature, job$x[!tr, , drop = FALSE], job$ctx),
                     p$map, job$ctx)
    ztr <- apply_map(p$coords, p$map, job$ctx)
    kk <- min(job$k, nrow(ztr))
    # As labels: a class missing from the fold's training part (a class of
    # one or a few members) is simply never predicted.
    correct <- as.character(knn_vote(ztr, ytr, zte, kk, ctx = job$ctx)$class) ==
      as.character(job$y[!tr])
    list(acc = mean(correct), correct = correct, error = NA_character_,
         degenerate = !is.null(p$degenerate))
  }, warning = function(w) {
    warns <<- c(warns, conditionMessage(w))
    invokeRestart("muffleWarning")
  }), error = function(e) list(acc = NA_real_, correct = NULL,
                               error = conditionMessage(e), degenerate = FALSE))
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

# The candidates of kernel = "auto": each base kernel (first, in the order
# of kernel = "cv", so that both share their scores and random streams),
# then the Euclidean metric (no learning), the linear learner on the inputs,
# the aligned combination (QP; the LP alignment is degenerate and never a
# candidate) and the unweighted sum.
auto_candidates <- function(kernels) {
  c(lapply(seq_along(kernels), function(i) cand_kernel(kernels[[i]], i)),
    list(cand_euclidean(), cand_linear(), cand_align(kernels, "qp"),
         cand_unweighted(kernels)))
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

# The choice of kernel = "auto".  Every candidate is scored by its mean CV
# accuracy, the base kernels' scores smoothed over neighbouring bandwidths
# (smooth_scores()).  The best candidate among those scored on every fold
# wins; on ties, the middle of the longest run of tied candidates in
# simplicity order (simplicity_order()).  A learned candidate then has to
# beat the better of the two baselines, the Euclidean metric and the linear
# learner, by more than one standard error of their paired difference
# (held-out points of all folds), else that baseline is chosen: a winner
# picked among many noisy estimates is optimistic, and the baselines cost
# nothing to trust.  Likewise Euclidean 1-NN must beat the linear learner
# by more than one standard error to be chosen over it.
auto_select <- function(curve, correct, v) {
  score <- smooth_scores(curve)
  degenerate <- curve_degenerate(curve)
  eligible <- curve$n_ok == v & !curve$dropped & !degenerate & !is.na(score)
  if (!any(eligible)) eligible <- !degenerate & !is.na(score)
  if (!any(eligible)) eligible <- !is.na(score)
  ord <- simplicity_order(curve)
  ord <- ord[eligible[ord]]
  top_score <- max(score[ord])
  at_top <- score[ord] >= top_score - 1e-12
  runs <- rle(at_top)
  ends <- cumsum(runs$lengths)
  longest <- which.max(ifelse(runs$values, runs$lengths, -1L))
  run <- (ends[longest] - runs$lengths[longest] + 1L):ends[longest]
  best <- ord[run[(length(run) + 1L) %/% 2L]]
  reason <- sprintf("highest cross-validated accuracy (%.3f%s)", curve$mean[best],
                    if (curve$kind[best] == "kernel" && !identical(score[best], curve$mean[best]))
                      sprintf(", %.3f smoothed over neighbouring bandwidths", score[best]) else "")
  base <- which(curve$kind %in% c("euclidean", "linear") & eligible)
  if (length(base) && !best %in% base) {
    b <- base[which.max(curve$mean[base])]
    pg <- paired_gain(correct, best, b)
    gain <- pg$gain
    se <- pg$se
    if (!pg$beats) {
      reason <- sprintf("%s: %s (%.3f) did not beat it by more than one standard error of the paired difference (%.3f vs %.3f)",
                        "the better baseline", curve$label[best], curve$mean[best],
                        gain, se)
      best <- b
    } else {
      reason <- sprintf("%s; beats the better baseline, %s, by %.3f (standard error %.3f)",
                        reason, curve$label[b], gain, se)
    }
  }
  # Euclidean 1-NN (no learned metric) must beat the linear learner the
  # same way before it replaces the learner the user asked for: on small
  # data the two are often tied within noise, and the learned metric is
  # then the better bet (external data: crabs +0.017, no set worse by more
  # than 0.0003).
  eu <- which(curve$kind == "euclidean" & eligible)
  lin <- which(curve$kind == "linear" & eligible)
  if (length(eu) && length(lin) && best == eu) {
    pg <- paired_gain(correct, eu, lin)
    if (!pg$beats) {
      reason <- sprintf("the linear learner: Euclidean 1-NN (%.3f) did not beat it (%.3f) by more than one standard error of the paired difference (%.3f vs %.3f)",
                        curve$mean[eu], curve$mean[lin], pg$gain, pg$se)
      best <- lin
    }
  }
  list(best = best, reason = reason)
}

# Which candidates of a CV curve were numerically degenerate on some fold
# (see cv_result()); none for curves of kmaha 0.4.0 and earlier, which have
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
paired_gain <- function(correct, a, b) {
  both <- !is.na(correct[, a]) & !is.na(correct[, b])
  d <- as.numeric(correct[both, a]) - as.numeric(correct[both, b])
  gain <- mean(d)
  se <- if (length(d) > 1L) stats::sd(d) / sqrt(length(d)) else Inf
  list(gain = gain, se = se, beats = gain - se > 1e-9)
}
