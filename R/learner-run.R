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

# Whether the learner receives target neighbours computed by kmaha().
learner_wants_targets <- function(lrn) {
  if (lrn$builtin) lrn$name %in% c("lmnn", "dne")
  else "targets" %in% names(formals(lrn$fun))
}

# Target neighbours for LMNN/DNE found on `src` (KPCA coordinates or inputs).
learner_targets <- function(name, src, y, kt) {
  same <- cpp_class_neighbors(src, as.integer(y), kt, TRUE)
  if (name == "dne") {
    return(list(same = same, other = cpp_class_neighbors(src, as.integer(y), kt, FALSE)))
  }
  same
}

# The targets a learner gets from kmaha(): NULL when it takes none or when
# `learner_args` supplies them.
run_learner_targets <- function(lrn, z, y, args, input) {
  if (!learner_wants_targets(lrn) || !is.null(args$targets)) return(NULL)
  kt <- check_count(args$k %||% 3L, "learner_args$k")
  learner_targets(if (lrn$builtin) lrn$name else "lmnn",
                  if (is.null(input)) z else input, y, kt)
}

# Run a learner on coordinates z (n x r).  `input` (or NULL) holds the rows'
# input-space coordinates when targets are to come from the input space.
# Returns list(map = d x r matrix, fit = learner's return value, targets).
run_learner <- function(lrn, z, y, learner_args, input = NULL) {
  args <- learner_args
  targets <- run_learner_targets(lrn, z, y, args, input)
  if (!is.null(targets)) args$targets <- targets
  if (lrn$builtin) args$scale <- FALSE
  obj <- do.call(lrn$fun, c(list(z, y), args))
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
# checked here, once, with the messages the learners give.  `tol` (or NULL)
# overrides NCA's tolerance inside the folds.
fold_learner <- function(lrn, learner_args, tol = NULL) {
  args <- learner_args
  spec <- list(lrn = lrn, args = args, path = "generic")
  known <- switch(if (lrn$builtin) lrn$name else "",
                  nca = c("dim", "init", "lambda", "max_iter", "tol", "verbose",
                          "num_threads"),
                  dne = c("k", "dim", "lambda"),
                  NULL)
  if (is.null(known) || !all(names(args) %in% known)) return(spec)
  if (lrn$name == "nca") {
    init <- args$init %||% "auto"
    if (!is.character(init)) return(spec)   # a start matrix: the general path
    opt <- nca_options(args$lambda %||% 0, args$max_iter %||% 500,
                       args$tol %||% 1e-5, FALSE, args$verbose %||% FALSE,
                       args$num_threads)
    if (!is.null(tol)) opt$tol <- max(opt$tol, tol)
    if (!is.null(args$dim)) check_count(args$dim, "dim")
    spec$opt <- opt
    spec$num_threads <- args$num_threads
    spec$dim <- args$dim
    spec$init <- init
  } else {
    spec$k <- check_count(args$k %||% 3L, "k")
    spec$lambda <- check_number(args$lambda %||% 0, "lambda", nonneg = TRUE)
    spec$dim <- if (!is.null(args$dim)) check_count(args$dim, "dim")
  }
  spec$path <- lrn$name
  spec
}

# The map (d x ncol(z)) of one fold fit; `input` as in run_learner().
fold_map <- function(spec, z, y, input = NULL) {
  switch(spec$path,
    nca = {
      dim <- check_dim_nca(spec$dim, ncol(z), "x")
      start <- nca_init(spec$init, z, dim)
      opt <- spec$opt
      opt$threads <- nca_threads(spec$num_threads)
      nca_run("nca", z, y, start$A, NULL, opt)$map
    },
    dne = {
      if (!is.null(spec$dim) && spec$dim > ncol(z)) {
        stopf("`dim` (%d) must not exceed the number of columns of `x` (%d).",
              spec$dim, ncol(z))
      }
      tg <- learner_targets("dne", if (is.null(input)) z else input, y, spec$k)
      cpp_dne_fit(z, tg$same, tg$other, spec$dim %||% 0L, spec$lambda)$A
    },
    run_learner(spec$lrn, z, y, spec$args, input)$map)
}
