# Formula support shared by every fitting function: model frames with
# na.action and subset, factor predictors expanded by model.matrix(), and
# newdata rebuilt with the training terms and factor levels at predict time.

# Evaluate the model frame of a captured call (formula, data, subset,
# na.action) in `env`.  Returns x (numeric matrix), y (response) and the
# pieces needed to rebuild x from new data.
model_data <- function(call, env) {
  nm <- names(call) %||% rep("", length(call))
  if (!"formula" %in% nm && length(call) >= 2L && !nzchar(nm[2L])) {
    names(call)[2L] <- "formula"
  }
  if (!"formula" %in% names(call)) {
    stopf("`formula` is missing: give the model formula first (or as `formula =`), e.g. Species ~ ., with the variables in `data`.")
  }
  m <- match(c("formula", "data", "subset", "na.action"), names(call), 0L)
  mf <- call[c(1L, m)]
  mf$drop.unused.levels <- FALSE
  mf[[1L]] <- quote(stats::model.frame)
  if (is.null(mf$na.action)) mf$na.action <- quote(stats::na.omit)
  mf <- eval(mf, env)
  terms <- attr(mf, "terms")
  if (attr(terms, "response") == 0L) {
    stopf("`formula` needs a response: the class labels on the left, as in Species ~ .")
  }
  # Predictor factors lose the levels without rows (as with
  # drop.unused.levels = TRUE, so no all-zero indicator column appears); the
  # response keeps its levels, which predict() returns (check_y() warns
  # about the unused ones).
  for (j in seq_along(mf)[-1L]) {
    if (is.factor(mf[[j]])) mf[[j]] <- droplevels(mf[[j]])
  }
  stop_bad_column(mf[-1L], "data", formula = TRUE)
  y <- stats::model.response(mf)
  x <- stats::model.matrix(terms, mf)
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  if (ncol(x) == 0L) stopf("`formula` selects no predictors.")
  list(x = x, y = y, terms = terms,
       xlevels = stats::.getXlevels(terms, mf),
       contrasts = attr(x, "contrasts"),
       na.action = attr(mf, "na.action"))
}

# Fit through a default method, then record what predict() needs.  The
# stored call names the generic (`generic`), so update() works.  Arguments
# reach the default method by their exact names: a name that is only the
# beginning of an argument's name is an error (see check_exact_names()).
formula_method <- function(call, env, fit_fun, dots, generic) {
  method <- sys.function(-1L)
  check_exact_names(typed_arg_names(sys.call(-1L), env),
                    c(setdiff(names(formals(method)), "..."),
                      setdiff(names(formals(fit_fun)), c("x", "y", "..."))),
                    generic)
  md <- model_data(call, env)
  fit <- do.call(fit_fun, c(list(md$x, md$y), dots))
  fit$terms <- md$terms
  fit$xlevels <- md$xlevels
  fit$contrasts <- md$contrasts
  fit$na.action <- md$na.action
  fit$call <- model_call(call, generic)
  fit
}

# The argument names of a call as the user typed them (before R completed
# partial names), with arguments passed on through a caller's `...` (the
# names of that `...`, read without evaluating anything, from `env`, the
# frame the call was made in).
typed_arg_names <- function(call, env) {
  args <- as.list(call)[-1L]
  nm <- names(args) %||% rep("", length(args))
  out <- character()
  for (i in seq_along(args)) {
    if (identical(args[[i]], quote(...)) && !nzchar(nm[i])) {
      dn <- tryCatch(names(eval(quote(substitute(list(...))), env))[-1L],
                     error = function(e) NULL)
      out <- c(out, dn)
    } else {
      out <- c(out, nm[i])
    }
  }
  out[!is.na(out) & nzchar(out)]
}

# R matches a name that begins an argument's name to that argument
# (`k = 3` becomes `kernel = 3` in a function without a `k`), which turns a
# mistyped or absent argument into a baffling error about another one.  The
# formula methods refuse such names, naming the argument and the function.
check_exact_names <- function(typed, formal_names, fun) {
  for (n in setdiff(typed, formal_names)) {
    hits <- formal_names[startsWith(formal_names, n)]
    if (length(hits)) {
      stopf("`%s` is not an argument of %s(); it is only the start of %s. Write argument names in full (see ?%s).",
            n, fun, or_list(paste0("`", hits, "`")), fun)
    }
  }
  invisible(NULL)
}

# "a", "a or b", "a, b or c"
or_list <- function(x) {
  if (length(x) < 2L) return(x)
  paste(paste(x[-length(x)], collapse = ", "), "or", x[length(x)])
}

# The numeric predictor matrix for newdata, rebuilt with the training terms
# when the model came from a formula.
newdata_matrix <- function(object, newdata, ncol_train, arg = "newdata") {
  # A precomputed kernel: new points come as their kernel rows.
  if (model_precomputed(object)) {
    return(check_precomputed_rows(newdata, ncol_train, object$feature_names, arg))
  }
  if (is.null(object$terms)) {
    return(check_newdata(newdata, object$feature_names, ncol_train, arg))
  }
  if (!is.data.frame(newdata)) {
    if (is.matrix(newdata)) {
      if (is.null(colnames(newdata))) {
        stop_unnamed_newdata(all.vars(stats::delete.response(object$terms)), arg)
      }
      newdata <- as.data.frame(newdata)
    } else {
      stopf("`%s` must be a data frame with the predictor columns used in training.", arg)
    }
  }
  tt <- stats::delete.response(object$terms)
  needed <- all.vars(tt)
  miss <- setdiff(needed, names(newdata))
  if (length(miss)) {
    stopf("`%s` lacks column(s) used in training: %s.", arg,
          paste(sQuote(miss, FALSE), collapse = ", "))
  }
  check_newdata_types(newdata, object$terms, arg)
  for (v in names(object$xlevels)) {
    if (v %in% names(newdata)) {
      new_lev <- setdiff(unique(as.character(newdata[[v]])), c(object$xlevels[[v]], NA))
      if (length(new_lev)) {
        stopf("`%s` has new level(s) %s of factor %s not seen in training.", arg,
              paste(sQuote(new_lev, FALSE), collapse = ", "), sQuote(v, FALSE))
      }
    }
  }
  mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass,
                           xlev = object$xlevels)
  x <- stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  check_newdata(x, object$feature_names, ncol_train, arg)
}

# A column of newdata that is present but of another type than in training
# (numbers that arrived as text, a factor where numbers were used, ...).
check_newdata_types <- function(newdata, terms, arg = "newdata") {
  cls <- attr(terms, "dataClasses")
  if (is.null(cls)) return(invisible(NULL))
  for (v in intersect(names(cls), names(newdata))) {
    if (identical(v, names(cls)[1L]) && attr(terms, "response") == 1L) next
    col <- newdata[[v]]
    want <- cls[[v]]
    got <- if (is.logical(col)) "logical" else if (is.numeric(col)) "numeric" else
      if (is.factor(col)) "factor" else if (is.character(col)) "character" else class(col)[1]
    numeric_want <- want %in% c("numeric", "logical")
    numeric_got <- got %in% c("numeric", "logical")
    if (numeric_want && !numeric_got) {
      stopf("`%s` column %s is %s, but the model was trained on numbers there; convert it (e.g. as.numeric(%s$%s)) before predicting.",
            arg, sQuote(v, FALSE), got, arg, v)
    }
    if (!numeric_want && numeric_got && want %in% c("factor", "character", "ordered")) {
      stopf("`%s` column %s is %s, but the model was trained on a factor (categories) there; convert it with factor() before predicting.",
            arg, sQuote(v, FALSE), got)
    }
  }
  invisible(NULL)
}
