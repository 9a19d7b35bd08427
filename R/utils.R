# Input validation and small shared helpers.  Every check names the argument
# and says how to fix the problem; all errors use call. = FALSE.

stopf <- function(...) stop(sprintf(...), call. = FALSE)
warnf <- function(...) warning(sprintf(...), call. = FALSE)

# tryCatch(expr, error = handler) for the errors of one step of a longer
# computation.  R's time limits (setTimeLimit(), R.utils::withTimeout())
# are signalled as errors, and R clears a limit when it fires: a handler
# that took one for the step's failure would let the computation go on with
# no limit at all.  They pass through (is_stop_condition()), as do
# interrupts (not errors).
try_step <- function(expr, handler) {
  tryCatch(expr, error = function(e) {
    if (is_stop_condition(e)) stop(e)
    handler(e)
  })
}

# One rule for columns that are not numbers.  The matrix interface takes
# numeric and logical columns (TRUE/FALSE become 1/0); the formula interface
# also takes factors and character columns, which model.matrix() expands into
# indicator columns.  Every other class (Date, POSIXct, difftime, complex,
# list, ...) is rejected by both, with the conversion to use: such columns
# carry units that a distance would silently mix with the others.
nonnumeric_hint <- function(col, name, formula = FALSE) {
  if (inherits(col, "Date")) {
    return(sprintf("convert it to days with as.numeric(%s) (days since 1970-01-01), or drop it", name))
  }
  if (inherits(col, "POSIXt")) {
    return(sprintf("convert it to seconds with as.numeric(%s) (seconds since 1970-01-01 UTC), or drop it", name))
  }
  if (inherits(col, "difftime")) {
    return(sprintf("convert it with as.numeric(%s, units = \"secs\") (or another unit), or drop it", name))
  }
  if (!formula && (is.factor(col) || is.character(col))) {
    return("convert it to numbers, drop it, or use the formula interface, which expands factors into indicator columns")
  }
  "convert it to numbers or drop it"
}

# TRUE for the column classes a matrix (or, with formula = TRUE, a model
# frame) may hold.
column_ok <- function(col, formula = FALSE) {
  if (inherits(col, c("Date", "POSIXt", "difftime"))) return(FALSE)
  is.numeric(col) || is.logical(col) ||
    (formula && (is.factor(col) || is.character(col)))
}

stop_bad_column <- function(df, arg, formula = FALSE) {
  bad <- !vapply(df, column_ok, logical(1), formula = formula)
  if (!any(bad)) return(invisible(NULL))
  j <- which(bad)[1]
  nm <- names(df)[j]
  stopf("`%s` must have numeric columns only; column %s is %s: %s.",
        arg, sQuote(nm, FALSE), class(df[[j]])[1],
        nonnumeric_hint(df[[j]], nm, formula))
}

# A numeric matrix from a matrix or data frame of numeric columns.  Training
# data must be complete; new data at predict time may hold rows with missing
# values (allow_na) and may have no rows (allow_empty).
check_x <- function(x, arg = "x", allow_na = FALSE, allow_empty = FALSE) {
  if (is.data.frame(x)) {
    stop_bad_column(x, arg)
    x <- as.matrix(x)
    storage.mode(x) <- "double"
  }
  if (!is.matrix(x)) {
    if (is.numeric(x) && is.null(dim(x)) && !inherits(x, c("Date", "POSIXt", "difftime"))) {
      x <- matrix(x, ncol = 1L)
    } else if (inherits(x, c("Date", "POSIXt", "difftime"))) {
      stopf("`%s` is a %s: %s.", arg, class(x)[1], nonnumeric_hint(x, arg))
    } else {
      stopf("`%s` must be a numeric matrix or data frame, not %s.",
            arg, class(x)[1])
    }
  }
  if (!is.numeric(x) && !is.logical(x)) {
    stopf("`%s` must be numeric, not a %s matrix. Convert it with as.numeric() or use the formula interface.",
          arg, typeof(x))
  }
  if (nrow(x) == 0L && !allow_empty) stopf("`%s` has no rows.", arg)
  if (ncol(x) == 0L) stopf("`%s` has no columns.", arg)
  if (!allow_na && anyNA(x)) {
    stopf("`%s` contains missing values (NA/NaN). Remove or impute them first (the formula interface drops them with na.action = na.omit).",
          arg)
  }
  if (any(is.infinite(x))) {
    stopf("`%s` contains infinite values. Remove or recode them first.", arg)
  }
  storage.mode(x) <- "double"
  x
}

# A factor of class labels matching n rows.  Levels without rows are dropped
# for fitting (with a warning) and remembered in the attribute "levels_all";
# fitted objects store the labels through full_levels(), so predictions keep
# every training level.
check_y <- function(y, n, arg = "y", min_classes = 2L) {
  if (is.null(y)) stopf("`%s` is missing: supply the class labels.", arg)
  if (is.matrix(y) || is.data.frame(y)) {
    stopf("`%s` must be a vector or factor of class labels, not a %s.",
          arg, class(y)[1])
  }
  if (length(y) != n) {
    stopf("`%s` has length %d but `x` has %d rows; they must match.",
          arg, length(y), n)
  }
  if (anyNA(y)) {
    stopf("`%s` contains missing labels. Remove those rows first.", arg)
  }
  if (is.numeric(y) && !all(y == round(y))) {
    stopf("`%s` must hold class labels (a factor), but it is continuous. These learners are for classification.",
          arg)
  }
  y <- as.factor(y)
  all_lev <- levels(y)
  # droplevels() rebuilds the factor from its labels; a plain factor using
  # every level would come back unchanged
  plain <- all(names(attributes(y)) %in% c("levels", "class", "names"))
  if (!plain || any(tabulate(y, length(all_lev)) == 0L)) y <- droplevels(y)
  if (nlevels(y) < min_classes) {
    stopf("`%s` has only %d class; at least %d classes are needed to learn a metric.",
          arg, nlevels(y), min_classes)
  }
  unused <- setdiff(all_lev, levels(y))
  if (length(unused)) {
    warnf("`%s` has level(s) %s with no rows; they stay levels of the predictions (with probability 0) but can never be predicted. Use droplevels() to remove them.",
          arg, paste(sQuote(unused, FALSE), collapse = ", "))
    attr(y, "levels_all") <- all_lev
  }
  y
}

# A factor with levels `lev` from 1-based integer codes (NA stays NA):
# factor(lev[codes], levels = lev) without matching the labels back.
codes_factor <- function(codes, lev) {
  f <- as.integer(codes)
  attr(f, "levels") <- lev
  class(f) <- "factor"
  f
}

# The labels with every level they had before check_y() dropped the unused
# ones (what fitted objects store and predictions use).
full_levels <- function(y) {
  lev <- attr(y, "levels_all")
  if (is.null(lev)) return(y)
  factor(as.character(y), levels = lev)
}

# One rule for classes too small for a learner, shared by NCA, KNCA, LMNN,
# DNE, KDNE and kmaha(): every point wants `k` same-class neighbours (NCA: at
# least one, k = 1), so a class needs k + 1 members.  Smaller classes are
# used as far as they go, with one warning naming them; when no class is
# large enough the learner has nothing to learn from, which is an error.
# `k_arg` names the argument that set k (NULL for NCA, which has none).
check_class_sizes <- function(y, k = 1L, k_arg = NULL) {
  sizes <- table(y)
  sizes <- sizes[sizes > 0L]
  need <- k + 1L
  if (all(sizes < need)) {
    if (is.null(k_arg) || max(sizes) < 2L) {
      stopf("`y` has no class with 2 or more members, so no point has a same-class neighbour and there is nothing to learn from. Each class needs at least 2 rows to take part%s.",
            if (is.null(k_arg)) "" else sprintf(", and %d rows for `%s` = %d", need, k_arg, k))
    }
    stopf("`%s` (%d) is too large: no class has more than %d members, so no point can have %d same-class neighbours. Use %s <= %d.",
          k_arg, k, max(sizes), k, k_arg, max(sizes) - 1L)
  }
  small <- sizes[sizes < need]
  if (!length(small)) return(invisible(FALSE))
  bound <- if (is.null(k_arg)) "2" else sprintf("%s + 1 = %d", k_arg, need)
  # Many small classes: the first few named, and the count (a response with
  # a hundred distinct values once gave a warning of several thousand
  # characters); when most classes are small and every label is a number,
  # the labels may be a numeric response meant for a regression.
  listed <- utils::head(small, 5L)
  what <- paste0(sQuote(names(listed), FALSE), " (",
                 as.integer(listed), ifelse(listed == 1L, " member)", " members)"),
                 collapse = ", ")
  if (length(small) > length(listed)) {
    numeric_labels <- !anyNA(suppressWarnings(as.numeric(names(sizes))))
    hint <- if (numeric_labels && 2L * length(small) > length(sizes)) {
      " Most classes are that small: if `y` is a numeric response, fit a regression (mlkr(), or kmaha() with numbers)."
    } else ""
    warnf("`y`: %d classes have fewer than %s members (%s and %d more); their points use as many same-class neighbours as each class allows (none for a singleton).%s",
          length(small), bound, what, length(small) - length(listed), hint)
    return(invisible(TRUE))
  }
  if (length(small) == 1L) {
    warnf("`y`: class %s has fewer than %s members; its points use as many same-class neighbours as the class allows (none for a singleton).",
          what, bound)
  } else {
    warnf("`y`: classes %s have fewer than %s members; their points use as many same-class neighbours as each class allows (none for a singleton).",
          what, bound)
  }
  invisible(TRUE)
}

# One way to reject arguments a function does not take: names the function
# and every unknown argument, with an optional hint.  `nm` are the names of
# the surplus arguments ("" for unnamed ones).
stop_unknown_args <- function(fun, nm, hint = NULL) {
  shown <- ifelse(is.na(nm) | !nzchar(nm), "<unnamed>", sQuote(nm, FALSE))
  stopf("Unknown argument(s) to %s: %s.%s", fun, paste(shown, collapse = ", "),
        if (is.null(hint)) "" else paste0(" ", hint))
}

# For functions whose `...` must be empty; `fun` as shown to the user, e.g.
# "nca()". The arguments are not evaluated.
check_dots_empty <- function(fun, ..., hint = NULL) {
  n <- ...length()
  if (n) {
    nm <- names(substitute(alist(...)))[-1L]
    # `data` reaches a default (matrix) method when the first argument was
    # not a formula, e.g. a formula written as a string: point to the
    # function's formula method
    name <- sub("()", "", fun, fixed = TRUE)
    if ("data" %in% nm && exists(paste0(name, ".formula"), envir = asNamespace("kmaha"),
                                  inherits = FALSE)) {
      hint <- sprintf("`data` goes with a formula: give the formula itself first, unquoted (or through as.formula() if you have it as a string), e.g. %s(Species ~ ., data = iris).",
                      name)
    }
    stop_unknown_args(fun, if (is.null(nm)) rep("", n) else nm, hint)
  }
  invisible(NULL)
}

# A single finite number, optionally required to be positive / non-negative.
check_number <- function(v, arg, positive = FALSE, nonneg = FALSE) {
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || !is.finite(v)) {
    stopf("`%s` must be a single finite number.", arg)
  }
  if (positive && v <= 0) stopf("`%s` must be positive, not %s.", arg, format(v))
  if (nonneg && v < 0) stopf("`%s` must be non-negative, not %s.", arg, format(v))
  as.double(v)
}

# A single whole number >= lower.
# TRUE when `v` is one whole number >= lower (the test of check_count(),
# for callers with messages of their own).
is_count <- function(v, lower = 1L) {
  is.numeric(v) && length(v) == 1L && !is.na(v) && is.finite(v) &&
    v == round(v) && v >= lower
}

check_count <- function(v, arg, lower = 1L) {
  if (!is_count(v, lower)) {
    stopf("`%s` must be a single whole number >= %d.", arg, lower)
  }
  if (v > .Machine$integer.max) {
    stopf("`%s` (%s) must be at most %d.", arg, format(v), .Machine$integer.max)
  }
  as.integer(v)
}

check_flag <- function(v, arg) {
  if (!is.logical(v) || length(v) != 1L || is.na(v)) {
    stopf("`%s` must be TRUE or FALSE.", arg)
  }
  v
}

# New data at predict time: the training columns, matched by name when the
# model was trained on named columns (so reordered columns work, and other
# columns are ignored), by position otherwise; a named vector is one row.
# Rows with missing values and zero rows are allowed: predict() returns NA
# for such rows.
check_newdata <- function(newdata, train_names, ncol_train, arg = "newdata") {
  if (is.atomic(newdata) && is.null(dim(newdata)) && !is.null(names(newdata))) {
    # a named vector (e.g. colMeans(x)) is one observation: one row
    newdata <- matrix(newdata, nrow = 1L, dimnames = list(NULL, names(newdata)))
  }
  if (!is.null(train_names) && !is.null(colnames(newdata))) {
    nd_names <- colnames(newdata)
    # A name that several columns share matches none of them for certain
    # (indexing by name would take the first, silently), and an empty or
    # missing name matches nothing: training columns with such names are
    # matched by position, when newdata has the same names in the same
    # order; a newdata name that is both a training column's and shared is
    # an error.
    blank <- is.na(train_names) | !nzchar(train_names)
    if (anyDuplicated(train_names) || any(blank)) {
      if (!identical(unname(nd_names), unname(train_names))) {
        what <- if (any(blank)) {
          sprintf("empty or missing names (column%s %s)", if (sum(blank) > 1L) "s" else "",
                  paste(utils::head(which(blank), 5L), collapse = ", "))
        } else {
          sprintf("duplicated names (%s)",
                  paste(sQuote(unique(train_names[duplicated(train_names)]), FALSE), collapse = ", "))
        }
        stopf("The model was trained on columns with %s, which cannot be matched by name: `%s` must have the training columns with the same names in the same order (or refit with unique names, e.g. colnames(x) <- make.names(colnames(x), unique = TRUE)).",
              what, arg)
      }
    } else {
      shared <- intersect(train_names, nd_names[duplicated(nd_names)])
      if (length(shared)) {
        stopf("`%s` has several columns named %s; the model's column of that name cannot be told among them. Keep one.",
              arg, paste(sQuote(shared, FALSE), collapse = ", "))
      }
      # Columns not used in training are ignored (whatever their type).
      missing_cols <- setdiff(train_names, nd_names)
      if (length(missing_cols)) {
        stopf("`%s` lacks column(s) used in training: %s.", arg,
              paste(sQuote(missing_cols, FALSE), collapse = ", "))
      }
      newdata <- newdata[, train_names, drop = FALSE]
    }
  }
  x <- check_x(newdata, arg, allow_na = TRUE, allow_empty = TRUE)
  if (!is.null(train_names) && is.null(colnames(x))) {
    stop_unnamed_newdata(train_names, arg)
  }
  if (ncol(x) != ncol_train) {
    stopf("`%s` has %d columns but the model was trained on %d.",
          arg, ncol(x), ncol_train)
  }
  x
}

stop_unnamed_newdata <- function(train_names, arg = "newdata") {
  shown <- utils::head(train_names, 4L)
  stopf("`%s` has no column names, but the model was trained on named columns (%s%s). Columns are matched by name: set them first, with colnames(%s) <- the training names in the order of your columns.",
        arg, paste(sQuote(shown, FALSE), collapse = ", "),
        if (length(train_names) > length(shown)) ", ..." else "", arg)
}

`%||%` <- function(a, b) if (is.null(a)) b else a
