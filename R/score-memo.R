# Reuse of candidate-by-fold fits between calls (see "Reuse" in
# ?score_candidates).  A fold's fit does not depend on the k that votes its
# held-out rows (fit_pipeline() learns the map, then votes every k of the
# request from one sorted neighbour list whose ties go to the lower index),
# so one fit serves every k.  The scoring therefore votes every k from 1 to
# memo_k_max (and the k asked for), keeps each task's result in this
# session under a key of everything the fit reads (the package version, the
# scaled inputs, the labels, the folds, the learners, the candidate, the
# feature-map settings, the session's kmaha options and the task's random
# stream), and a later call whose task has the same key takes the stored
# result instead of fitting again.  The scores it builds are then those of
# a call that fitted every task (the k asked for are read from the stored
# columns).  This is what makes a tuning loop over k (tune_grid() over
# `neighbors`, caret's and mlr3's grids) fit each fold's candidates once
# when the engine has a seed.  Tasks with functions in their description
# (user learners, kernels evaluated in R) are never reused: a closure's
# environment is not part of what a key can see.
score_memo <- new.env(parent = emptyenv())
score_memo$keys <- character()
score_memo$values <- list()
score_memo$bytes <- numeric()

# Results kept at most, and their size at most (the oldest go first): a
# task's result is its held-out correctness (rows x k) per learner, a few
# kB (a few hundred rows, as bytes) to a few hundred (a regression's
# squared errors, as doubles, for the 200 held-out rows of a 1000-row
# subsample).
memo_max_tasks <- 2000L
memo_max_bytes <- 64 * 2^20

# The k the folds vote when their fits may be reused: 1 to memo_k_max (a
# tuning grid's usual range, e.g. dials::neighbors()'s 1 to 10), the k
# that k = NULL considers (k_grid, or k_grid_regression for a numeric y)
# and the k asked for, as far as every fold's training part has
# neighbours: so a call with k unset and one with a given k share their
# fits.
memo_k_max <- 10L

# The reuse plan of one scoring: NULL when reuse is off (option
# kmaha.reuse_fits = FALSE) or the learners include a function, else the
# k to vote (`ks`) and a key prefix of what every task shares.
score_memo_plan <- function(xs, y, fold_id, specs, neighbors, base, ks, settings) {
  if (!isTRUE(getOption("kmaha.reuse_fits", TRUE))) return(NULL)
  specs <- lapply(specs, function(sp) sp[setdiff(names(sp), "argname")])
  if (has_function(specs) || has_function(base)) return(NULL)
  # (kmaha() says precomputed = FALSE where score_candidates() says nothing)
  base$precomputed <- isTRUE(base$precomputed)
  n_train <- length(y) - max(tabulate(fold_id))
  grid <- if (is.numeric(y)) k_grid_regression else k_grid
  wide <- sort(unique(c(as.integer(ks), seq_len(max(0L, min(memo_k_max, n_train - 1L))),
                        grid[grid <= n_train - 1L])))
  opts <- settings$options
  list(ks = wide,
       prefix = md5_of(list(settings$version, xs, y, fold_id, specs, neighbors, base,
                            wide, opts[order(names(opts))])))
}

# The key of each task `ids` (NA where its candidate holds a function).
score_memo_keys <- function(plan, tasks, cands, seeds, ids) {
  vapply(ids, function(t) {
    cand <- cands[[tasks$cand[t]]]
    if (has_function(cand)) return(NA_character_)
    md5_of(list(plan$prefix, tasks$fold[t], cand, seeds[[t]]))
  }, "")
}

# The stored results of `keys` (NULL where none).
score_memo_get <- function(keys) {
  i <- match(keys, score_memo$keys)
  lapply(i, function(j) if (is.na(j)) NULL else score_memo$values[[j]])
}

score_memo_put <- function(keys, values) {
  # (a fit that failed is not kept: its error may be the machine's, e.g.
  # memory, rather than the data's)
  keep <- !is.na(keys) & !vapply(values, task_failed, NA)
  if (!any(keep)) return(invisible())
  all_keys <- c(score_memo$keys, keys[keep])
  all_values <- c(score_memo$values, values[keep])
  all_bytes <- c(score_memo$bytes,
                 vapply(values[keep], function(v) as.numeric(utils::object.size(v)), 0))
  # the oldest go until both limits hold (the newest is always kept)
  n <- length(all_keys)
  over <- pmax(n - memo_max_tasks,
               sum(cumsum(rev(all_bytes)) > memo_max_bytes & seq_len(n) > 1L), 0L)
  if (over > 0L) {
    drop <- seq_len(over)
    all_keys <- all_keys[-drop]
    all_values <- all_values[-drop]
    all_bytes <- all_bytes[-drop]
  }
  score_memo$keys <- all_keys
  score_memo$values <- all_values
  score_memo$bytes <- all_bytes
  invisible()
}

# TRUE when a task's result holds an error (of its feature map or of a
# learner).
task_failed <- function(r) {
  is.list(r) && is.list(r$slots) &&
    any(vapply(r$slots, function(s) !is.null(s$error) && !is.na(s$error), NA))
}

# Forget every stored result (tests; a user turns reuse off with the
# option).
score_memo_clear <- function() {
  score_memo$keys <- character()
  score_memo$values <- list()
  score_memo$bytes <- numeric()
  invisible()
}

# A task's result with its held-out columns cut to the columns `j` (the k
# asked for, among the k voted).
score_task_columns <- function(r, j) {
  if (is.null(r)) return(r)
  r$slots <- lapply(r$slots, function(s) {
    if (!is.null(s$correct)) s$correct <- s$correct[, j, drop = FALSE]
    s
  })
  r
}

# TRUE when `x` holds a function anywhere (its serialization would carry
# an environment, which a key cannot compare).
has_function <- function(x) {
  if (is.function(x)) return(TRUE)
  if (is.list(x)) return(any(vapply(x, has_function, NA)))
  FALSE
}

# The MD5 hash of an R object's serialization (format 2, which writes
# ALTREP vectors such as 1:10 as plain ones, so equal values hash equally;
# big-endian, the same on every platform).
md5_of <- function(x) md5_written(function(con) serialize(x, con, version = 2L))
