# Input validation and small shared helpers.  Every check names the argument
# and says how to fix the problem; all errors use call. = FALSE.

stopf <- function(...) stop(sprintf(...), call. = FALSE)
warnf <- function(...) warning(sprintf(...), call. = FALSE)

# A numeric matrix from a matrix or data frame of numeric columns.
check_x <- function(x, arg = "x") {
  if (is.data.frame(x)) {
    bad <- !vapply(x, function(col) is.numeric(col) || is.logical(col),
                   logical(1))
    if (any(bad)) {
      stopf("`%s` must have numeric columns only; column %s is %s. Convert it, drop it, or use the formula interface, which expands factors.",
            arg, sQuote(names(x)[which(bad)[1]], FALSE),
            class(x[[which(bad)[1]]])[1])
    }
    x <- as.matrix(x)
    storage.mode(x) <- "double"
  }
  if (!is.matrix(x)) {
    if (is.numeric(x) && is.null(dim(x))) {
      x <- matrix(x, ncol = 1L)
    } else {
      stopf("`%s` must be a numeric matrix or data frame, not %s.",
            arg, class(x)[1])
    }
  }
  if (!is.numeric(x) && !is.logical(x)) {
    stopf("`%s` must be numeric, not a %s matrix. Convert it with as.numeric() or use the formula interface.",
          arg, typeof(x))
  }
  if (nrow(x) == 0L) stopf("`%s` has no rows.", arg)
  if (ncol(x) == 0L) stopf("`%s` has no columns.", arg)
  if (anyNA(x)) {
    stopf("`%s` contains missing values (NA/NaN). Remove or impute them first (the formula interface drops them with na.action = na.omit).",
          arg)
  }
  if (any(is.infinite(x))) {
    stopf("`%s` contains infinite values. Remove or recode them first.", arg)
  }
  storage.mode(x) <- "double"
  x
}

# A factor of class labels matching n rows, with unused levels dropped.
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
  y <- droplevels(as.factor(y))
  if (nlevels(y) < min_classes) {
    stopf("`%s` has only %d class; at least %d classes are needed to learn a metric.",
          arg, nlevels(y), min_classes)
  }
  y
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
check_count <- function(v, arg, lower = 1L) {
  if (!is.numeric(v) || length(v) != 1L || is.na(v) || !is.finite(v) ||
      v != round(v) || v < lower) {
    stopf("`%s` must be a single whole number >= %d.", arg, lower)
  }
  as.integer(v)
}

check_flag <- function(v, arg) {
  if (!is.logical(v) || length(v) != 1L || is.na(v)) {
    stopf("`%s` must be TRUE or FALSE.", arg)
  }
  v
}

# Column centring/scaling learned on training data.
fit_scaling <- function(x, scale = TRUE, arg = "x") {
  center <- colMeans(x)
  if (isTRUE(scale)) {
    s <- sqrt(colSums(sweep(x, 2L, center)^2) / max(nrow(x) - 1L, 1L))
    const <- !(s > 1e-12 * pmax(1, abs(center)))
    if (any(const)) {
      nm <- colnames(x)
      which_c <- if (is.null(nm)) as.character(which(const)) else nm[const]
      stopf("`%s` has constant column(s) %s; they carry no distance information. Remove them before fitting.",
            arg, paste(sQuote(which_c, FALSE), collapse = ", "))
    }
  } else {
    s <- rep(1, ncol(x))
  }
  list(center = center, scale = s)
}

apply_scaling <- function(x, prep) {
  if (is.null(prep)) return(x)
  x <- sweep(x, 2L, prep$center, check.margin = FALSE)
  sweep(x, 2L, prep$scale, "/", check.margin = FALSE)
}

# New data at predict time: same columns as the training data.
check_newdata <- function(newdata, train_names, ncol_train, arg = "newdata") {
  x <- check_x(newdata, arg)
  if (!is.null(train_names) && !is.null(colnames(x))) {
    missing_cols <- setdiff(train_names, colnames(x))
    if (length(missing_cols)) {
      stopf("`%s` lacks column(s) used in training: %s.", arg,
            paste(sQuote(missing_cols, FALSE), collapse = ", "))
    }
    x <- x[, train_names, drop = FALSE]
  }
  if (ncol(x) != ncol_train) {
    stopf("`%s` has %d columns but the model was trained on %d.",
          arg, ncol(x), ncol_train)
  }
  x
}
