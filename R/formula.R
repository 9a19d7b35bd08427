# Formula support shared by every fitting function: model frames with
# na.action and subset, factor predictors expanded by model.matrix(), and
# newdata rebuilt with the training terms and factor levels at predict time.

# Evaluate the model frame of a captured call (formula, data, subset,
# na.action) in `env`.  Returns x (numeric matrix), y (response) and the
# pieces needed to rebuild x from new data.
model_data <- function(call, env, row_ids = FALSE, generic = NULL) {
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
  rows <- n_data <- NULL
  if (row_ids) {
    # which rows of the data the model frame keeps (after `subset` and
    # na.action), for options that name rows (formula_row_options())
    whole <- mf
    whole$subset <- NULL
    whole$na.action <- quote(stats::na.pass)
    n_data <- nrow(eval(whole, env))
    mf$.kmaha_row <- seq_len(n_data)
  }
  call_mf <- mf
  mf <- eval(call_mf, env)
  # Variables of the formula that no term uses (`y ~ . - id` removes the
  # term, not the variable) would still be read, checked, coded by
  # model.matrix() (a Date or a one-level factor an error), drop their
  # rows with missing values, and be asked of newdata: refit the frame
  # with the formula of the terms alone.
  tt <- attr(mf, "terms")
  # (model.matrix() leaves an offset out, so it would be ignored silently)
  if (!is.null(attr(tt, "offset"))) {
    stopf("`formula` has an offset() term, which a nearest-neighbour model cannot use: remove it (or subtract it from a numeric response yourself).")
  }
  if (attr(tt, "response") == 1L && length(setdiff(all.vars(tt[[3L]]), term_variables(tt)))) {
    call_mf$formula <- terms_formula(tt)
    mf <- eval(call_mf, env)
  }
  if (row_ids) {
    rows <- mf[["(.kmaha_row)"]]
    mf[["(.kmaha_row)"]] <- NULL
  }
  terms <- attr(mf, "terms")
  if (attr(terms, "response") == 0L) {
    # (a regression learner takes a numeric response; kmaha() and
    # score_candidates() either)
    g <- generic %||% ""
    stopf("`formula` needs a response: %s",
          if (g %in% c("kmaha", "score_candidates"))
            "the class labels (or a numeric response, for a regression) on the left, as in Species ~ . or mpg ~ ."
          else if (g %in% builtin_learners("regression"))
            "the numeric response on the left, as in mpg ~ ."
          else "the class labels on the left, as in Species ~ .")
  }
  if (nrow(mf) == 0L) {
    stopf("No rows of `data` are left to fit: `subset` and `na.action` (which by default drops the rows with a missing value in a variable of the formula) left out every row.")
  }
  # Predictor factors lose the levels without rows (as with
  # drop.unused.levels = TRUE, so no all-zero indicator column appears); the
  # response keeps its levels, which predict() returns (check_y() warns
  # about the unused ones).
  for (j in seq_along(mf)[-1L]) {
    if (is.factor(mf[[j]])) mf[[j]] <- droplevels(mf[[j]])
  }
  stop_bad_column(mf[-1L], "data", formula = TRUE)
  stop_single_level(mf[-1L])
  y <- stats::model.response(mf)
  x <- stats::model.matrix(terms, mf)
  # the contrasts used (subsetting drops the attribute): predict() codes
  # new factors with them, whatever the session's options(contrasts =)
  contrasts <- attr(x, "contrasts")
  x <- x[, colnames(x) != "(Intercept)", drop = FALSE]
  if (ncol(x) == 0L) stopf("`formula` selects no predictors.")
  # The predictors' variables that are columns of `data` (what newdata must
  # hold): not those the formula takes from its environment, such as the
  # knots of bs(x, knots = k) or a constant in I(x - x0).
  data_vars <- term_variables(terms)
  if (!is.null(call_mf$data)) {
    data_vars <- intersect(data_vars, names(eval(call_mf$data, env)))
  }
  list(x = x, y = y, terms = terms,
       xlevels = stats::.getXlevels(terms, mf),
       contrasts = contrasts, data_vars = data_vars,
       na.action = attr(mf, "na.action"), rows = rows, n_data = n_data)
}

# A factor (or text) predictor with one level among the rows the model
# frame keeps is constant, as a constant numeric column is (an error at the
# scaling step): say so by its name, rather than model.matrix()'s "contrasts
# can be applied only to factors with 2 or more levels".
stop_single_level <- function(mf) {
  for (v in names(mf)) {
    col <- mf[[v]]
    if (!(is.factor(col) || is.character(col))) next
    lev <- unique(as.character(col[!is.na(col)]))
    if (length(lev) == 1L) {
      stopf("`data` column %s has a single level (%s) in the rows used (after `subset` and `na.action`): a constant predictor carries no distance information. Remove it from the formula.",
            sQuote(v, FALSE), sQuote(lev, FALSE))
    }
  }
  invisible(NULL)
}

# Options that name rows of the data: `pairs` (a two-column matrix of row
# numbers, mmc() and itml()) and `chunks` (one chunklet id per row, rca()),
# given to a formula method directly or in kmaha()'s `learner_args` (also
# for one learner by name).  With the formula interface they refer to the
# rows of `data`; the learners receive the rows the model frame kept (after
# `subset` and the rows na.action removed), so formula_row_options()
# renumbers the pairs into those rows and keeps the chunk ids of those rows.
row_option_names <- c("pairs", "chunks")

has_row_options <- function(dots) {
  in_list <- function(o) is.list(o) && !is.data.frame(o) && any(row_option_names %in% names(o))
  in_list(dots) || (in_list(dots$learner_args) ||
                      (is.list(dots$learner_args) && any(vapply(dots$learner_args, in_list, NA))))
}

# `dots` with the row options given as rows of the data (n_data rows)
# carried to the rows `rows` of the model frame.  Pair indices and the
# length of chunks are checked against the rows of `data` (the learner's
# own checks would count the model frame's rows, and call them `x`); other
# malformed options are left to the learner; a pair that joins a row the
# model frame left out is an error naming it.
formula_row_options <- function(dots, rows, n_data) {
  same <- identical(as.integer(rows), seq_len(n_data))
  pos <- match(seq_len(n_data), rows)
  remap <- function(o, prefix) {
    if (!is.null(o$pairs)) {
      o$pairs <- pairs_to_frame(o$pairs, pos, paste0(prefix, "pairs"), renumber = !same)
    }
    ch <- o$chunks
    if (!is.null(ch) && is.null(dim(ch)) && is.atomic(ch)) {
      if (length(ch) == n_data) {
        o$chunks <- ch[rows]
      } else if (length(ch) != length(rows)) {
        stopf("`%schunks` has length %d but `data` has %d rows; with the formula interface chunks give one chunklet id per row of `data` (NA for a row in no chunklet).",
              prefix, length(ch), n_data)
      }
    }
    o
  }
  dots <- remap(dots, "")
  la <- dots$learner_args
  if (is.list(la) && !is.data.frame(la)) {
    la <- remap(la, "learner_args$")
    for (nm in setdiff(names(la), c("", row_option_names))) {
      if (is.list(la[[nm]]) && !is.data.frame(la[[nm]])) {
        la[[nm]] <- remap(la[[nm]], sprintf("learner_args$%s$", nm))
      }
    }
    dots["learner_args"] <- list(la)
  }
  dots
}

# Pairs of row numbers of the data renumbered into the model frame's rows
# (`pos`: the frame row of each data row, NA for a row left out).
pairs_to_frame <- function(pairs, pos, arg, renumber = TRUE) {
  P <- if (is.data.frame(pairs)) as.matrix(pairs) else pairs
  n_data <- length(pos)
  ok <- is.matrix(P) && ncol(P) == 2L && nrow(P) > 0L && is.numeric(P)
  if (!ok) return(pairs)
  check_pair_rows(P, n_data, arg, "data")
  if (!renumber) return(pairs)
  new <- pos[P]
  if (anyNA(new)) {
    bad <- which(is.na(new))[1]
    r <- (bad - 1L) %% nrow(P) + 1L
    stopf("`%s` row %d refers to row %d of `data`, which the model frame leaves out (a missing value, or not in `subset`); with the formula interface pairs are row numbers of `data`. Remove that pair, or that row's missing values.",
          arg, r, as.integer(P[bad]))
  }
  matrix(as.integer(new), nrow(P), 2L)
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
  rows_named <- has_row_options(dots)
  md <- model_data(call, env, row_ids = rows_named, generic = generic)
  if (rows_named) dots <- formula_row_options(dots, md$rows, md$n_data)
  fit <- do.call(fit_fun, c(list(md$x, md$y), dots))
  fit$terms <- md$terms
  fit$xlevels <- md$xlevels
  fit$contrasts <- md$contrasts
  fit$data_vars <- md$data_vars
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

# check_exact_names() for a default (matrix) method: the names of the call
# that reached it, as typed, against its formals.  Called first thing in the
# method, as check_typed_names("lfda").  (A user of the CRAN package lfda
# writes `r = 2` for the dimension; R would take it as `reg = 2`.)
check_typed_names <- function(fun) {
  check_exact_names(typed_arg_names(sys.call(-1L), parent.frame(2L)),
                    setdiff(names(formals(sys.function(-1L))), "..."), fun)
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
    used <- term_variables(tt)
    # (the columns of the training data the terms use; models saved before
    # `data_vars` was recorded: every variable a term uses)
    absent <- intersect(miss, object$data_vars %||% used)
    if (length(absent)) {
      stopf("`%s` lacks column(s) used in training: %s.", arg,
            paste(sQuote(absent, FALSE), collapse = ", "))
    }
    # Variables of the formula that no term uses (`y ~ . - id` drops the
    # term, not the variable; only models saved before model_data() refitted
    # such frames have them):
    # model.frame() evaluates them, so they stand in as NA; the model matrix
    # has no column of them.  A variable that a term uses but that was not a
    # column of the data is taken from the formula's environment, as in
    # training.
    unused <- setdiff(miss, used)
    if (length(unused)) {
      newdata <- as.data.frame(newdata)
      for (v in unused) newdata[[v]] <- rep(NA, nrow(newdata))
    }
  }
  newdata <- check_newdata_types(newdata, object$terms, arg)
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

# The names of the variables that the terms (without the response) use:
# those of `.` that a `- v` removed, or a response in the data, are
# variables of the formula without a term.
term_variables <- function(tt) {
  vars <- as.list(attr(tt, "variables"))[-1L]
  nm <- vapply(vars, function(v) paste(deparse(v, width.cutoff = 500L), collapse = " "), "")
  unique(unlist(lapply(vars[nm %in% term_columns(tt)], all.vars)))
}

# The formula of the terms `tt` (with a response) alone: the response, the
# term labels and the intercept, in the environment of the original.
terms_formula <- function(tt) {
  lhs <- attr(tt, "variables")[[attr(tt, "response") + 1L]]
  labels <- attr(tt, "term.labels")
  rhs <- if (length(labels)) paste(labels, collapse = " + ") else "1"
  if (attr(tt, "intercept") == 0L) rhs <- paste(rhs, "- 1")
  f <- stats::as.formula(paste(deparse1(lhs), "~", rhs), env = environment(tt))
  f
}

# The variables (as the model frame names its columns, e.g. "log(x)") that
# some term uses.
term_columns <- function(tt) {
  fac <- attr(tt, "factors")
  if (!length(fac)) return(character())
  rownames(fac)[rowSums(fac != 0) > 0]
}

# A column of newdata that is present but of another type than in training
# (numbers that arrived as text, a factor where numbers were used, ...).
# Returns newdata, with TRUE/FALSE where the model was trained on numbers
# turned into 1/0 (model.matrix() would code them as a column `vTRUE`);
# numbers where it was trained on TRUE/FALSE are an error, as in lm.
check_newdata_types <- function(newdata, terms, arg = "newdata") {
  cls <- attr(terms, "dataClasses")
  if (is.null(cls)) return(newdata)
  for (v in intersect(names(cls), names(newdata))) {
    if (identical(v, names(cls)[1L]) && attr(terms, "response") == 1L) next
    col <- newdata[[v]]
    want <- cls[[v]]
    # a column of nothing but NA (read as logical): missing values, which
    # give NA predictions whatever the column's type in training
    if (is.logical(col) && all(is.na(col)) && want != "logical") {
      newdata[[v]] <- if (want == "numeric") as.numeric(col) else as.character(col)
      next
    }
    got <- if (is.logical(col)) "logical" else if (is.numeric(col)) "numeric" else
      if (is.factor(col)) "factor" else if (is.character(col)) "character" else class(col)[1]
    numeric_want <- want %in% c("numeric", "logical")
    numeric_got <- got %in% c("numeric", "logical")
    if (want == "logical" && got == "numeric") {
      stopf("`%s` column %s is numeric, but the model was trained on TRUE/FALSE there; convert it (e.g. as.logical(%s$%s)) before predicting.",
            arg, sQuote(v, FALSE), arg, v)
    }
    if (want == "numeric" && got == "logical") {
      newdata[[v]] <- as.numeric(col)
      next
    }
    if (numeric_want && !numeric_got) {
      stopf("`%s` column %s is %s, but the model was trained on numbers there; convert it (e.g. as.numeric(%s$%s)) before predicting.",
            arg, sQuote(v, FALSE), got, arg, v)
    }
    if (!numeric_want && numeric_got && want %in% c("factor", "character", "ordered")) {
      stopf("`%s` column %s is %s, but the model was trained on a factor (categories) there; convert it with factor() before predicting.",
            arg, sQuote(v, FALSE), got)
    }
  }
  newdata
}
