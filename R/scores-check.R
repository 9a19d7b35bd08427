# Scores given as kmaha()'s `kernel` (a scored-candidates object, R/score.R):
# they carry every setting that shaped them (choice_settings(), the folds,
# and a fingerprint of the data values and labels), and the fit must be
# what they scored.  The rule (documented in ?kmaha, "Kernel choice"):
#   - an argument the call leaves out takes the scores' value, and the
#     model's explanation says which were taken (scores_take());
#   - an argument the call sets to another value is an error naming it and
#     the scores' value (check_scores());
#   - data other than the scored (values, labels, their order) are an error.

# kmaha()'s arguments that shape scores, with the name of the setting the
# scores keep for each.
scores_arguments <- c(learner = "learner", learner_args = "learner_args", k = "k",
                      neighbors = "neighbors", kernels = "kernels", cv_folds = "folds",
                      scale = "scale", rank = "rank", tol = "tol", seed = "seed",
                      cv_strategy = "strategy", landmarks = "landmarks",
                      landmark_method = "landmark_method")

# The arguments of kmaha() (its frame `env`) that the call left out
# (`given`: the names it set) take the values the scores were computed
# with; returns the names taken.  Scores without a full record (kmaha 0.5.2
# and earlier) give nothing: check_scores() refuses them.
scores_take <- function(scores, env, given) {
  s <- scores$settings
  if (is.null(scores$fingerprint$hash)) return(character())
  taken <- character()
  for (arg in setdiff(names(scores_arguments), given)) {
    nm <- scores_arguments[[arg]]
    if (!nm %in% names(s)) next
    value <- switch(arg,
      learner = s$learner_fun %||% s$learner,
      # a count of folds, or the number of folds that labels defined
      cv_folds = if (is.numeric(s$folds)) s$folds else max(scores$folds),
      s[[nm]])
    # cv_kernel() uses `x` as given (scale NA): kmaha() has no such setting
    if (arg == "scale" && identical(value, NA)) next
    assign(arg, value, envir = env)
    taken <- c(taken, arg)
  }
  taken
}

# Scores given as `kernel`: computed on these data with these settings (the
# checked arguments `a`, the call's `cv_folds` and `cv_strategy`; `given`:
# the arguments the call set), or an error naming what differs.
check_scores <- function(scores, a, cv_folds, cv_strategy, given = character()) {
  fp <- data_fingerprint(a$x, a$y)
  old <- scores$fingerprint
  if (is.null(old$hash)) {
    stopf("`kernel` holds scores without a record of the data and settings they were computed with (scores of kmaha 0.5.2 or earlier); score these `x` and `y` again with score_candidates(), or fit with kernel = \"auto\".")
  }
  if (!identical(as.integer(old$dim), as.integer(fp$dim))) {
    stopf("`kernel` holds scores of data with %d rows and %d columns, but `x` has %d rows and %d columns; score these data with score_candidates(), or fit with kernel = \"auto\".",
          old$dim[1], old$dim[2], fp$dim[1], fp$dim[2])
  }
  if (!identical(old$levels, fp$levels) || !identical(as.vector(old$y), as.vector(fp$y))) {
    stopf("`kernel` holds scores of other labels (classes %s), but `y` has classes %s; score these data with score_candidates(), or fit with kernel = \"auto\".",
          class_counts(old$levels, old$y), class_counts(fp$levels, fp$y))
  }
  if (!identical(old$hash, fp$hash)) {
    stopf("`kernel` holds scores of other data: `x` and `y` have the scored dimensions and class sizes, but other values or another order of the rows or labels; score these data with score_candidates(), or fit with kernel = \"auto\".")
  }
  s <- scores$settings
  if (identical(s$scale, NA)) {
    stopf("`kernel` holds scores of cv_kernel(), which scores `x` as given, while kmaha() standardizes or centres it (`scale`); score these data with score_candidates() instead.")
  }
  now <- choice_settings(a, cv_strategy)
  now$folds <- cv_folds
  for (arg in names(scores_arguments)) {
    nm <- scores_arguments[[arg]]
    if (!scores_setting_equal(nm, s, now, arg %in% given)) {
      was <- if (arg == "cv_folds" && !is.numeric(s$folds)) {
        sprintf("fold labels given to score_candidates() (%d folds)", max(scores$folds))
      } else {
        sprintf("%s = %s", arg, setting_value(nm, s))
      }
      stopf("`kernel` holds scores computed with %s, but this call %s %s = %s; %s.",
            was, if (arg %in% given) "sets" else "has", arg, setting_value(nm, now),
            if (arg %in% given) sprintf("leave `%s` out to fit with the scores' value, or score again with this value", arg)
            else "score again with this call's settings, or fit with the scores' ones")
    }
  }
  scores
}

# Whether setting `nm` of the scores `s` equals the call's (`now`; `given`:
# whether the call set it).  Scores on fold labels match a call that leaves
# `cv_folds` out (it then has their number of folds).
scores_setting_equal <- function(nm, s, now, given) {
  switch(nm,
    learner = identical(s$learner, now$learner) &&
      (!identical(now$learner, "custom") || identical(s$learner_fun, now$learner_fun)),
    folds = if (is.numeric(s$folds)) identical(as.integer(s$folds), as.integer(now$folds))
            else !given,
    identical(s[[nm]], now[[nm]]))
}

# A setting in a few words, for messages.
setting_value <- function(nm, s) {
  v <- s[[nm]]
  switch(nm,
    learner = if (identical(v, "custom")) "a learner function" else dQuote(v, FALSE),
    kernels = kernels_words(v),
    short_value(v))
}

short_value <- function(v) {
  if (is.null(v)) return("NULL")
  if (is.function(v)) return("a function")
  if (is.list(v)) {
    if (!length(v)) return("list()")
    if (!is.null(names(v)) && all(vapply(v, function(e) is.atomic(e) && length(e) == 1L, NA))) {
      return(sprintf("list(%s)", paste(names(v), vapply(v, format, ""), sep = " = ",
                                      collapse = ", ")))
    }
    return("a list of arguments")
  }
  if (is.matrix(v)) return(sprintf("a %d x %d matrix", nrow(v), ncol(v)))
  if (is.character(v)) return(paste(dQuote(v, FALSE), collapse = ", "))
  paste(format(v), collapse = ", ")
}

# A list of kernels in a few words: its length and its first and last.
kernels_words <- function(kernels) {
  if (is.null(kernels)) return("NULL")
  lab <- vapply(kernels, function(k) tryCatch(short_kernel_label(k), error = function(e) "a kernel"), "")
  if (length(lab) <= 3L) return(sprintf("list(%s)", paste(lab, collapse = "; ")))
  sprintf("%d kernels (%s, %s, ..., %s)", length(lab), lab[1], lab[2], lab[length(lab)])
}

# "a: 30, b: 30" for messages.
class_counts <- function(levels, counts) {
  paste(sprintf("%s: %d", levels, as.integer(counts)), collapse = ", ")
}

# The fingerprint of a data set: its dimensions, class levels and sizes
# (for messages), and an MD5 hash of the input values, the labels in row
# order and the levels, so that scores of other data (other values, the
# same values in another order, permuted labels) are recognised.  The bytes
# are written little-endian, so the hash is the same on every platform.
data_fingerprint <- function(x, y) {
  hash <- md5_written(function(con) {
    writeBin(as.integer(dim(x)), con, endian = "little")
    writeBin(as.double(x), con, endian = "little")
    # (a numeric response: its values)
    if (is.numeric(y)) writeBin(as.double(y), con, endian = "little") else
      writeBin(as.integer(y), con, endian = "little")
    if (!is.numeric(y)) writeBin(enc2utf8(levels(y)), con)
  })
  list(dim = dim(x), y = if (is.numeric(y)) length(y) else tabulate(as.integer(y), nlevels(y)),
       levels = levels(y), hash = hash)
}

# The MD5 hash of the bytes that write(con) writes to a binary connection
# (R has no in-memory MD5: they go to a temporary file).
md5_written <- function(write) {
  f <- tempfile("kmaha-md5-")
  on.exit(unlink(f), add = TRUE)
  con <- file(f, "wb")
  tryCatch(write(con), finally = close(con))
  unname(tools::md5sum(f))
}

# The note of a model fitted from given scores: the settings it took from
# them, with their values.
scores_taken_note <- function(taken, a, cv_folds, cv_strategy) {
  shown <- intersect(c("seed", "cv_folds", "cv_strategy", "learner"), taken)
  if (!length(taken)) {
    return("Selected from the scores given as `kernel`, without scoring again.")
  }
  now <- choice_settings(a, cv_strategy)
  now$folds <- cv_folds
  words <- vapply(shown, function(arg) sprintf("%s = %s", arg, setting_value(scores_arguments[[arg]], now)), "")
  sprintf("Selected from the scores given as `kernel`, without scoring again; the settings the call left out are taken from them (%s%s).",
          paste(words, collapse = ", "),
          if (length(taken) > length(shown)) ", and the others they record" else "")
}

# Scores of a regression given for class labels, or the reverse (checked
# before the scores' settings are taken, since they name the learner).
check_scores_mode <- function(scores, y) {
  numeric_y <- is.numeric(y) && !is.factor(y)
  if (is_regression_scores(scores) != numeric_y) {
    stopf("`kernel` holds scores of a %s, but `y` is %s; score these data with score_candidates(), or fit with kernel = \"auto\".",
          if (is_regression_scores(scores)) "regression (a numeric response)" else "classification",
          if (numeric_y) "a numeric response" else "class labels")
  }
  invisible(NULL)
}
