# Running a learner on coordinates, shared by kmaha() and cv_kernel():
# resolve a learner (a built-in name or any R function), run it on KPCA
# coordinates (or inputs) with the right target neighbours, and extract its
# linear map.  fold_learner() and fold_map() are the cross-validation path:
# options checked once per cv_kernel() call, and for the built-in NCA and DNE
# a direct call of the core that returns the map and nothing else (no
# training embedding, no leave-one-out accuracy, no fitted-object fields the
# fold score does not use).

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

# A learner function must take the coordinates and the labels as its first
# two arguments, and every name in `learner_args` (and `targets`, which
# run_learner() may add, only when it declares it).  Checked before any
# work, so a wrong signature is reported plainly, without the data.
check_learner_signature <- function(lrn, learner_args) {
  if (lrn$builtin) return(invisible(lrn))
  nm <- names(formals(lrn$fun) %||% formals(args(lrn$fun)))
  has_dots <- "..." %in% nm
  shown <- if (length(nm)) paste(nm, collapse = ", ") else "none"
  if (!has_dots && length(nm) < 2L) {
    stopf("`learner` must be a function f(x, y, ...) taking the coordinates and the class labels as its first two arguments (plus the names in `learner_args`) and returning a d x D map; this one takes (%s).",
          shown)
  }
  extra <- setdiff(names(learner_args), nm)
  if (length(extra) && !has_dots) {
    stopf("`learner_args` sets %s, but `learner` takes only (%s); add the argument(s) or `...` to the function, or remove them from `learner_args`.",
          paste(sQuote(extra, FALSE), collapse = ", "), shown)
  }
  invisible(lrn)
}

# TRUE when run_learner() finds target neighbours for the learner: LMNN,
# DNE, or a function with a `targets` argument, unless `targets` is given.
learner_wants_targets <- function(lrn, args) {
  wants <- lrn$builtin && lrn$name %in% c("lmnn", "dne") ||
    (!lrn$builtin && "targets" %in% names(formals(lrn$fun)))
  wants && is.null(args$targets)
}

# Target neighbours for LMNN/DNE found on `src` (KPCA coordinates or inputs).
learner_targets <- function(name, src, y, kt) {
  same <- core_class_neighbors(src, as.integer(y), kt, TRUE, kmaha_context())
  if (name == "dne") {
    return(list(same = same, other = core_class_neighbors(src, as.integer(y), kt, FALSE, kmaha_context())))
  }
  same
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

# ---------------------------------------------------------------------------
# The cross-validation path.

# How cv_kernel() fits a learner on every fold: `path` "nca" or "dne" (the
# direct core call of fold_map()) when the learner is the built-in one and
# `learner_args` holds only options that path knows, else "generic"
# (run_learner(), the public learner).  The options of the direct paths are
# checked here, once, with the messages and defaults of the learners.
fold_learner <- function(lrn, learner_args) {
  args <- learner_args
  spec <- list(lrn = lrn, args = args, path = "generic")
  known <- switch(if (lrn$builtin) lrn$name else "",
                  nca = c("dim", "init", "lambda", "max_iter", "tol", "verbose",
                          "num_threads"),
                  dne = c("k", "dim", "lambda"),
                  NULL)
  if (is.null(known) || !all(names(args) %in% known)) return(spec)
  if (lrn$name == "nca") {
    def <- formals(nca.default)
    init <- args$init %||% def$init
    if (!is.character(init)) return(spec)   # a start matrix: the general path
    opt <- nca_options(args$lambda %||% def$lambda, args$max_iter %||% def$max_iter,
                       args$tol %||% def$tol, FALSE, args$verbose %||% def$verbose,
                       args$num_threads)
    if (!is.null(args$dim)) check_count(args$dim, "dim")
    spec$opt <- opt
    spec$num_threads <- args$num_threads
    spec$dim <- args$dim
    spec$init <- init
  } else {
    # k: the number of target neighbours run_learner() finds for DNE
    spec$k <- check_count(args$k %||% 3L, "k")
    spec$lambda <- check_number(args$lambda %||% formals(dne.default)$lambda,
                                "lambda", nonneg = TRUE)
    spec$dim <- if (!is.null(args$dim)) check_count(args$dim, "dim")
  }
  spec$path <- lrn$name
  spec
}

# The map (d x ncol(z)) of one fold fit; `input` as in run_learner().
fold_map <- function(spec, z, y, input = NULL) {
  switch(spec$path,
    nca = {
      check_class_sizes(y)
      dim <- check_dim_nca(spec$dim, ncol(z), "x")
      start <- nca_init(spec$init, z, dim)
      opt <- spec$opt
      opt$threads <- resolve_threads(spec$num_threads)
      nca_run("nca", z, y, start, NULL, opt)$map
    },
    dne = {
      if (!is.null(spec$dim) && spec$dim > ncol(z)) {
        stopf("`dim` (%d) must not exceed the number of columns of `x` (%d).",
              spec$dim, ncol(z))
      }
      tg <- learner_targets("dne", if (is.null(input)) z else input, y, spec$k)
      core_dne_fit(z, tg$same, tg$other, spec$dim %||% 0L, spec$lambda, kmaha_context())$A
    },
    run_learner(spec$lrn, z, y, spec$args, input)$map)
}
