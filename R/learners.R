# Learners.  A learner is one record in one file, R/learner-<name>.R: its
# public function (whose arguments are its options), its options checker,
# start, fitter call, target neighbours, settings and the words print() and
# summary() use.  learner_records() below is the table: one line per
# learner; learner_table() is the registry built from it, and every list of
# learners (builtin_learners(), auto_learners(), caret_methods(), the
# adapters' allowed values and messages) derives from the registry.  The
# generic code here checks options (learner_spec(), builtin_spec()), finds
# target neighbours (find_targets()) and fits (fit_map()) by reading the
# record; it does not switch on learner names.
#
# A fitter takes already-checked coordinates z (n x r: standardized inputs,
# KPCA coordinates or kernel rows), labels, target neighbours, the call's
# context and the options, and returns the map (d x r) and a convergence
# record; nothing else.  The public nca(), lmnn(), dne(), ..., kmaha(), the
# cross-validation folds, the caret/tidymodels/mlr3 adapters and
# reproduce_paper() all fit through fit_map(), by way of fit_pipeline()
# (R/pipeline.R).
#
# Adding a learner: write R/learner-<name>.R with its public function and a
# record constructor learner_<name>() (the fields are described at
# new_learner()), and add one line to learner_records().

# The table: one line per learner, in the order the lists of learners and
# the messages show them.
learner_records <- function() list(
  learner_nca(),
  learner_lmnn(),
  learner_dne(),
  learner_knca(),
  learner_klmnn(),
  learner_kdne(),
  learner_lfda(),
  learner_rca(),
  learner_mmc(),
  learner_itml(),
  learner_mlkr())

# A learner's record, its fields checked and the optional ones given their
# defaults.  Required:
#   name, label      the name kmaha(learner = ) takes, and the label printed
#   fun              the public function (its name, e.g. "nca.default", or
#                    the function) whose arguments are the options
#   task             "classification" (labels y); a learner for another task
#                    (e.g. "regression", MLKR) is listed by
#                    builtin_learners(task = ) for that task only
#   options          function(args, argname): the options checked, with the
#                    defaults of `fun` (the spec's `opts`)
#   fit              function(spec, z, y, targets, ctx, reg, coords,
#                    principal, score): the fitter call (see fit_map())
# Optional:
#   kernel_trick     TRUE: fits on kernel rows (knca(), ...), not a learner
#                    kmaha() kernelizes by name; `linear` then names the
#                    linear learner it kernelizes
#   auto             TRUE: among the learners of learner = "auto"
#   start            the function that makes its starting map (NULL: none)
#   targets          NULL, or how its target neighbours are found and checked
#                    (same_class_targets(), neighbour_graph_targets());
#                    `in_fit`: on its own coordinates the core finds them in
#                    the fitting call
#   kpca             function(spec): the spec on KPCA coordinates (LMNN's
#                    default weight)
#   choice_dim       function(p): the cap on the map's rows for kernel
#                    choice (p inputs), unless the user sets `dim`
#   fold_tol         TRUE: scored on folds at the tolerance score_tol
#   settings         function(fit, spec, ctx, scale): the settings its public
#                    function records after the fit
#   convergence      words for print()/summary(): `exact` (solved by an
#                    eigen-decomposition), `unit` (of the iterations),
#                    `solution` (summary() shows the solver's message)
#   objective        c(short = , long = ): what its objective measures
#   caret            NULL, or a caret method (kmaha_caret()): `param` the
#                    caret parameter tuning its option `option` (none: list())
#   pairs            TRUE: learns from similar/dissimilar pairs
#   row_options      options that name rows of x (not allowed with kernel
#                    choice, which refits on subsets of the rows)
#   model_options    arguments of `fun` that set the model, not the learner
#                    (MLKR's k-NN regression `k` and `weights`): no options
#   description      what the label stands for, in messages
new_learner <- function(record) {
  req <- c("name", "label", "fun", "task", "options", "fit")
  miss <- setdiff(req, names(record))
  if (length(miss)) {
    stopf("A learner record needs %s.", paste(sQuote(miss, FALSE), collapse = ", "))
  }
  defaults <- list(kernel_trick = FALSE, linear = NULL, auto = FALSE, start = NULL,
                   targets = NULL, kpca = NULL, choice_dim = NULL, fold_tol = FALSE,
                   settings = NULL, convergence = list(), objective = NULL, caret = NULL,
                   pairs = FALSE, row_options = character(), model_options = character(),
                   description = NULL)
  unknown <- setdiff(names(record), c(req, names(defaults)))
  if (length(unknown)) {
    stopf("A learner record has no field(s) %s.", paste(sQuote(unknown, FALSE), collapse = ", "))
  }
  for (f in setdiff(names(defaults), names(record))) {
    record[f] <- list(defaults[[f]])
  }
  record$convergence <- utils::modifyList(list(exact = FALSE, unit = "iterations",
                                               solution = FALSE), record$convergence)
  ok <- is_string(record$name) && grepl("^[a-z][a-z0-9_]*$", record$name) &&
    is_string(record$label) && (is_string(record$fun) || is.function(record$fun)) &&
    is_string(record$task) && is.function(record$options) && is.function(record$fit) &&
    is_flag(record$kernel_trick) && is_flag(record$auto) && is_flag(record$fold_tol) &&
    is_flag(record$pairs) && is.character(record$row_options) &&
    is.character(record$model_options) &&
    (!record$kernel_trick || is_string(record$linear)) &&
    all(vapply(record[c("start", "kpca", "choice_dim", "settings")],
               function(f) is.null(f) || is.function(f), NA)) &&
    (is.null(record$targets) || (is.function(record$targets$find) &&
                                 is.function(record$targets$check)))
  if (!isTRUE(ok)) stopf("The learner record %s is malformed.", dQuote(record$name, FALSE))
  record[c(req, names(defaults))]
}

is_string <- function(x) is.character(x) && length(x) == 1L && !is.na(x) && nzchar(x)
is_flag <- function(x) is.logical(x) && length(x) == 1L && !is.na(x)

# The registry: the records by name, built from learner_records() on first
# use (so the files' order of loading does not matter), plus any registered
# with register_learner().
learner_registry <- new.env(parent = emptyenv())

learner_table <- function() {
  if (is.null(learner_registry$table)) {
    recs <- lapply(learner_records(), new_learner)
    learner_registry$table <- stats::setNames(recs, vapply(recs, `[[`, "", "name"))
  }
  learner_registry$table
}

# Add a learner to this session's registry (internal: how a learner written
# elsewhere, or a test's, joins the built-in ones; it does not travel to the
# workers of a future plan).  Returns the checked record invisibly.
register_learner <- function(record) {
  record <- new_learner(record)
  reserved <- c("auto", "custom", "euclidean")
  if (record$name %in% reserved) {
    stopf("A learner may not be named %s.", dQuote(record$name, FALSE))
  }
  tab <- learner_table()
  tab[[record$name]] <- record
  learner_registry$table <- tab
  invisible(record)
}

unregister_learner <- function(name) {
  tab <- learner_table()
  tab[[name]] <- NULL
  learner_registry$table <- tab
  invisible(NULL)
}

# The record of a learner name; NULL for names that are no learner's
# ("custom", "euclidean", "auto").
learner_record <- function(name) {
  if (!is.character(name) || length(name) != 1L || is.na(name)) return(NULL)
  learner_table()[[name]]
}

# The learners kmaha() kernelizes by name (for `task`).
builtin_learners <- function(task = "classification") {
  tab <- learner_table()
  names(tab)[vapply(tab, function(r) !r$kernel_trick && identical(r$task, task), NA)]
}

# The learners `learner = "auto"` chooses among (on the same folds).
auto_learners <- function() {
  tab <- learner_table()
  names(tab)[vapply(tab, `[[`, NA, "auto")]
}

# The methods of kmaha_caret(): each record with a `caret` entry, followed
# by the method of its KPCA-trick version when the record names one
# (`caret$kpca`, for a learner with no kernel-trick record of its own).
caret_methods <- function() {
  tab <- learner_table()
  with_caret <- tab[!vapply(tab, function(r) is.null(r$caret), NA)]
  unlist(lapply(with_caret, function(r) c(r$name, r$caret$kpca)), use.names = FALSE)
}

# What a kmaha_caret() method fits: `base` the linear learner, `kernelized`
# whether by the KPCA trick with an RBF kernel of tuned sigma (a
# kernel-trick record's method, or a record's `caret$kpca`), `tune` the
# caret parameter of a learner option, `label` the model's label.
caret_method <- function(method) {
  rec <- learner_record(method)
  if (!is.null(rec)) {
    return(list(base = rec$linear %||% method, kernelized = rec$kernel_trick,
                tune = rec$caret, label = rec$label))
  }
  tab <- learner_table()
  owner <- Filter(function(r) identical(r$caret$kpca, method), tab)[[1]]
  list(base = owner$name, kernelized = TRUE, tune = owner$caret,
       label = paste0("K", owner$label))
}

learner_label <- function(method) {
  learner_record(method)$label %||% toupper(method)
}

# The public function of a learner, and its name in messages ("nca()").
learner_fun <- function(name) {
  f <- learner_record(name)$fun
  if (is.function(f)) f else get(f, mode = "function")
}
learner_fun_label <- function(name) {
  f <- learner_record(name)$fun
  if (is.character(f)) sub("\\.default$", "()", f) else paste0(name, "()")
}

# The settings a public learner records after its fit (`scale` as shown).
learner_settings <- function(spec, fit, ctx, scale) {
  learner_record(spec$name)$settings(fit, spec, ctx, scale)
}

# The options a built-in learner takes through `learner_args` (the formals
# of its public function, less the data and what the pipeline supplies).
learner_option_names <- function(name) {
  # (a learner's `model_options` are its model's, not the learner's: MLKR's
  # `k` and `weights` are the k-NN regression's)
  setdiff(names(formals(learner_fun(name))),
          c("x", "y", "...", "scale", "kernel", "num_threads",
            learner_record(name)$model_options))
}

# A learner specification: `learner` is a built-in name or a function;
# `args` the options as the user gave them (kmaha()'s `learner_args`, or a
# public learner's arguments).  `argname` renders an option's name in
# messages (e.g. "learner_args$dim" for kmaha(), "dim" for nca()).  Every
# option is checked here, before any work.
learner_spec <- function(learner, args = list(),
                         argname = function(a) paste0("learner_args$", a)) {
  if (is.function(learner)) {
    spec <- list(name = "custom", label = "custom learner", fun = learner,
                 builtin = FALSE, args = args)
    check_learner_signature(spec, args)
    spec$wants_targets <- "targets" %in% names(formals(learner)) && is.null(args$targets)
    spec$target_k <- if (spec$wants_targets) check_count(args$k %||% 3L, argname("k"))
    spec$argname <- argname
    return(spec)
  }
  if (!is.character(learner) || length(learner) != 1L || is.na(learner)) {
    stopf("`learner` must be \"auto\", %s or a function f(x, y, ...) returning a linear map.",
          paste(dQuote(builtin_learners(), FALSE), collapse = ", "))
  }
  name <- tolower(learner)
  if (!name %in% builtin_learners()) {
    stopf("`learner` must be \"auto\", %s or a function f(x, y, ...) returning a linear map, not %s.",
          paste(dQuote(builtin_learners(), FALSE), collapse = ", "), dQuote(learner, FALSE))
  }
  builtin_spec(name, args, argname)
}

# The learners kernel choice scores: `learner` as kmaha() takes it ("auto",
# a built-in name or a function).  A list of specs, one per learner: "auto"
# gives those of auto_learners(), each with the options of `args` it takes
# (an option no learner takes is an error) and the entries of a list
# args[[name]] (options for that learner alone, e.g. learner_args =
# list(lmnn = list(mu = 0.3))); anything else a list of one spec.
learner_specs <- function(learner, args = list(),
                          argname = function(a) paste0("learner_args$", a)) {
  if (!identical(learner, "auto")) return(list(learner_spec(learner, args, argname)))
  auto <- auto_learners()
  own <- intersect(names(args), auto)
  for (nm in own) {
    if (!is.list(args[[nm]])) {
      stopf("`%s` must be a named list of options for %s alone, e.g. list(k = 5).",
            argname(nm), learner_label(nm))
    }
  }
  shared <- args[setdiff(names(args), own)]
  takes <- lapply(auto, learner_option_names)
  none <- setdiff(names(shared), unlist(takes))
  if (length(none)) {
    stopf("With learner = \"auto\", %s %s of none of the learners (%s); the options they take: %s.",
          paste(sQuote(vapply(none, argname, ""), FALSE), collapse = ", "),
          if (length(none) == 1L) "is an option" else "are options",
          paste(vapply(auto, learner_label, ""), collapse = ", "),
          paste(sort(unique(unlist(takes))), collapse = ", "))
  }
  specs <- lapply(seq_along(auto), function(i) {
    nm <- auto[i]
    a <- c(shared[intersect(names(shared), takes[[i]])], args[[nm]])
    sub_name <- function(o) if (o %in% names(args[[nm]])) paste0(argname(nm), "$", o) else argname(o)
    builtin_spec(nm, a[!duplicated(names(a), fromLast = TRUE)], sub_name)
  })
  names(specs) <- auto
  specs
}

# The spec that stands for a set of learners in settings and messages: the
# one learner's own, or "auto".
learner_set_spec <- function(specs) {
  if (length(specs) == 1L) return(specs[[1]])
  list(name = "auto", label = sprintf("auto (%s)", paste(vapply(specs, `[[`, "", "label"),
                                                           collapse = ", ")),
       builtin = TRUE, args = list(), opts = list(), argname = function(a) a,
       wants_targets = FALSE)
}

# The spec of a built-in learner (also the kernel-trick ones): unknown
# options are an error naming them and the options the learner takes.
builtin_spec <- function(name, args, argname = function(a) a) {
  # one thread setting per call (issue 37): a learner option would override
  # it inside the fits of kernel choice
  if ("num_threads" %in% names(args)) {
    stopf("`%s` is not a learner option: the number of threads is the `num_threads` argument of the call itself, which every fit of the call uses (cross-validation folds run one thread each).",
          argname("num_threads"))
  }
  rec <- learner_record(name)
  known <- learner_option_names(name)
  unknown <- setdiff(names(args), known)
  # an argument of the learner's function that sets its model (MLKR's `k`
  # and `weights`: the k-NN regression), not the learner: saying the
  # function "takes no option" of that name would contradict its usage
  model <- intersect(unknown, rec$model_options)
  if (length(model)) {
    stopf("%s %s the k-NN regression of %s's model, not its learner, so it cannot be a learner option: give the number of neighbours as the call's own `k` (kmaha(k = ), the frameworks' `neighbors`), and choose `k` and `weights` (\"distance\", \"uniform\" or \"kernel\") of a fitted model at prediction, with predict(fit, k = , weights = ).",
          paste(sQuote(vapply(model, argname, ""), FALSE), collapse = " and "),
          if (length(model) > 1L) "set" else "sets", learner_fun_label(name))
  }
  if (length(unknown)) {
    stopf("%s takes no option(s) %s; it takes %s.", learner_fun_label(name),
          paste(sQuote(vapply(unknown, argname, ""), FALSE), collapse = ", "),
          paste(known, collapse = ", "))
  }
  opts <- rec$options(args, argname)
  spec <- list(name = name, label = rec$label, builtin = TRUE,
               opts = opts, args = args)
  spec$wants_targets <- !is.null(rec$targets) && is.null(opts$targets)
  spec$target_k <- opts$k
  spec$argname <- argname
  spec
}

# --------------------------------------------------------------------------
# Options shared by the learners' checkers, with the defaults of their
# public functions.

learner_default <- function(name, arg) {
  eval(formals(learner_fun(name))[[arg]])
}

# The advice of a learner stopped by its iteration limit, with its options
# named as the caller passes them (`argname`: `max_iter` to nca(),
# `learner_args$max_iter` to kmaha(), see learner_spec()).
iteration_advice <- function(argname = function(a) a) {
  sprintf("raise `%s` or loosen `%s`", argname("max_iter"), argname("tol"))
}

opt_dim <- function(dim, argname) {
  if (is.null(dim)) NULL else check_count(dim, argname("dim"))
}

# `init` of NCA and LMNN: a named start or a numeric matrix.
check_init <- function(init, kernel_trick, argname) {
  choices <- if (kernel_trick) c("auto", "kpca", "random") else c("auto", "identity", "pca", "random")
  if (!(is.numeric(init) && is.matrix(init)) &&
      !(is.character(init) && length(init) == 1L && !is.na(init) && init %in% choices)) {
    stopf("`%s` must be %s or a numeric matrix.", argname("init"),
          paste(dQuote(choices, FALSE), collapse = ", "))
  }
  init
}

# A learner function must take the coordinates and the labels as its first
# two arguments, and every name in `learner_args` (and `targets`, which the
# pipeline may add, only when it declares it).  Checked before any work, so
# a wrong signature is reported plainly, without the data.
check_learner_signature <- function(spec, learner_args) {
  nm <- names(formals(spec$fun) %||% formals(args(spec$fun)))
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
  invisible(spec)
}

check_learner_args <- function(learner_args) {
  if (!is.list(learner_args) || (length(learner_args) &&
      (is.null(names(learner_args)) || any(!nzchar(names(learner_args)))))) {
    stopf("`learner_args` must be a named list of learner arguments, e.g. list(lambda = 0.1).")
  }
  dup <- unique(names(learner_args)[duplicated(names(learner_args))])
  if (length(dup)) {
    stopf("`learner_args` names %s more than once (only the first would be used): give each option once.",
          paste(sQuote(dup, FALSE), collapse = ", "))
  }
  reserved <- intersect(names(learner_args), c("x", "y", "scale"))
  if (length(reserved)) {
    stopf("`learner_args` must not set %s: kmaha() supplies it.",
          paste(sQuote(reserved, FALSE), collapse = ", "))
  }
  learner_args
}

# --------------------------------------------------------------------------
# Target neighbours.

# How a learner's target neighbours are found (`find`: on coordinates, or a
# Gram matrix when gram = TRUE) and how given ones are checked (`check`), for
# a record's `targets`.  `in_fit`: on the learner's own coordinates the core
# finds them in the call that fits the map.
# The k nearest same-class rows (LMNN, KLMNN, learner functions with a
# `targets` argument): an n x k matrix.
same_class_targets <- function(in_fit = FALSE) {
  list(find = function(src, yi, k, gram, ctx) {
         if (gram) core_dne_neighbors(src, yi, k, TRUE, ctx)$same else
           core_class_neighbors(src, yi, k, TRUE, ctx)
       },
       check = function(targets, y, arg, o) {
         check_neighbor_matrix(targets, y, arg, same = TRUE,
                               k = if (isTRUE(o$k_given)) o$k, require_any = TRUE)
       },
       in_fit = in_fit)
}

# The neighbour graph of DNE and KDNE: list(same, other), the k nearest
# rows of the same class and of other classes.
neighbour_graph_targets <- function(in_fit = FALSE) {
  list(find = function(src, yi, k, gram, ctx) core_dne_neighbors(src, yi, k, gram, ctx),
       check = function(targets, y, arg, o) check_dne_targets(targets, y, arg),
       in_fit = in_fit)
}

# The neighbours a learner needs, found on `src` (coordinates, or a Gram
# matrix when gram = TRUE) as its record says (a learner function with a
# `targets` argument: the k nearest same-class rows); NULL when it needs
# none.  Targets given in the options are checked and used instead.
# `learner_coords`: src is what the learner fits on; then learners whose
# core finds them in the fitting call get NULL here (see fit_map()).
find_targets <- function(spec, src, y, ctx, gram = FALSE, learner_coords = FALSE) {
  how <- if (isTRUE(spec$builtin)) learner_record(spec$name)$targets else same_class_targets()
  o <- spec$opts
  if (!is.null(o$targets) && !is.null(how)) {
    return(how$check(o$targets, y, spec$argname("targets"), o))
  }
  if (!isTRUE(spec$wants_targets)) return(NULL)
  if (learner_coords && !gram && isTRUE(how$in_fit)) return(NULL)
  how$find(src, as.integer(y), spec$target_k, gram, ctx)
}

# --------------------------------------------------------------------------
# The fitters.

# Fit the learner of `spec` on coordinates z (n x r) and labels y (a factor
# without empty levels; a numeric response for a regression learner and
# the Euclidean candidate of a regression): its record's `fit`, a learner function, or the
# identity of Euclidean k-NN.  `targets` from find_targets(); `reg` the
# kernel trick's Gram matrix (the regulariser trace(U K U') and, for KDNE,
# the constraint); `coords` describes z for messages ("4 standardized input
# columns", "149 KPCA components", "60 kernel rows").  `targets` NULL for
# learners whose core finds them on z in the fitting call.  `principal`: z
# are exact KPCA coordinates.  `score`: NULL, or a fold's held-out
# coordinates to vote in the learned metric (list(x, k, classes), see
# fit_pipeline(); list(x, k, weights) for a regression), in the same call
# for the built-in learners that can.
# Returns list(map, convergence, details, targets (those the core found, or
# NULL), score (the held-out classes as codes of y's levels, the
# regression's predictions (one column per k), or NULL when not voted
# here)).
fit_map <- function(spec, z, y, targets, ctx, reg = NULL, coords = NULL, principal = FALSE,
                    score = NULL) {
  coords <- coords %||% sprintf("%d columns of `x`", ncol(z))
  check_map_dim(spec, ncol(z), coords)
  if (identical(spec$name, "euclidean")) {
    return(list(map = euclidean_map(z), convergence = NULL, details = list(),
                score = if (!is.null(score) && is.numeric(y)) {
                  # a regression: the k-NN predictions, one column per k
                  vapply(pmin(score$k, nrow(z)), function(kk) core_pipeline_apply(
                    list(feature_map = list(type = "identity"), embedding = z,
                         response = y, vote = score$weights),
                    score$x, NULL, "value", kk, ctx), numeric(nrow(score$x)))
                } else if (!is.null(score)) {
                  core_knn_votes(z, as.integer(y), score$classes, score$x,
                                 pmin(score$k, nrow(z)), ctx)
                }))
  }
  if (!isTRUE(spec$builtin)) return(fit_custom_map(spec, z, y, targets))
  learner_record(spec$name)$fit(spec, z, y, targets, ctx, reg = reg, coords = coords,
                                principal = principal, score = score)
}

# Whether the public learner's fit keeps a D x D matrix (a metric or a
# scatter) with the model: only for public fits on at most 500 columns.
keep_square <- function(spec, z) isTRUE(spec$public) && ncol(z) <= 500L

# The identity map: kNN in the Euclidean metric of the learner's
# coordinates, no learning (a candidate of kernel = "auto").
euclidean_spec <- function() {
  list(name = "euclidean", label = "Euclidean", builtin = TRUE, opts = list(),
       args = list(), wants_targets = FALSE, argname = function(a) a)
}

# The map of Euclidean k-NN on the coordinates z (n x D): the D x D
# identity, or with at least as many columns as rows (p >> n) the
# projection B' (r x D) onto the span of the centred rows (B: the leading
# right singular vectors of the centred z, singular values above 1e-5 of
# the largest, as the core's spans).  A point's squared distance to a
# training point differs from the Euclidean one by its squared distance to
# the affine span of the training points, the same for every training
# point: the neighbours, votes and predictions are those of the Euclidean
# metric, and no D x D matrix is formed.  (All rows equal: one zero row,
# all distances equal, as in the Euclidean metric.)
euclidean_map <- function(z) {
  n <- nrow(z)
  D <- ncol(z)
  if (D < n) return(diag(1, D))
  s <- svd(sweep(z, 2L, colMeans(z), check.margin = FALSE), nu = 0L,
           nv = max(min(n - 1L, D), 1L))
  keep <- s$d[seq_len(ncol(s$v))] > 1e-5 * s$d[1]
  if (!any(keep)) return(matrix(0, 1L, D))
  t(s$v[, keep, drop = FALSE])
}

# log of the Frobenius norm, without overflow or underflow for entries of
# extreme magnitude.
log_norm <- function(A) {
  m <- max(abs(A))
  if (!(m > 0) || !is.finite(m)) return(log(m))
  log(m) + 0.5 * log(sum((A / m)^2))
}

# `dim` must not exceed the number of coordinates the learner receives
# (`coords` says what they are).
check_map_dim <- function(spec, r, coords) {
  dim <- spec$opts$dim
  if (is.null(dim) || !spec$builtin || dim <= r ||
      isTRUE(learner_record(spec$name)$kernel_trick)) return(invisible(NULL))
  if (isTRUE(spec$public)) {
    stopf("`dim` (%d) must not exceed the number of input columns of `x` (%d).", dim, r)
  }
  stopf("`%s` (%d) must not exceed the number of coordinates the learner receives: %s%s.",
        spec$argname("dim"), dim, coords,
        if (grepl("KPCA", coords, fixed = TRUE))
          " (keep more with a smaller `tol` or a larger `rank`, or lower `dim`)" else "")
}

# The spec of a public learner function (nca(), lmnn(), ...): options named
# as its arguments.
public_spec <- function(name, args) {
  spec <- builtin_spec(name, args, function(a) a)
  spec$public <- TRUE
  spec
}

# A learner function: called with the coordinates, the labels, `targets`
# when it takes them, and its options; its map extracted.
fit_custom_map <- function(spec, z, y, targets) {
  args <- spec$args
  if (!is.null(targets)) args$targets <- targets
  # A weight given as a function of the coordinates is evaluated on them.
  if (is.function(args$lambda)) args$lambda <- args$lambda(z)
  # Called with symbols, not values, so an error message never prints the data.
  fun <- spec$fun
  obj <- eval(as.call(c(list(quote(fun), quote(z), quote(y)),
                        lapply(stats::setNames(nm = names(args)),
                               function(a) call("[[", quote(args), a)))))
  list(map = extract_map(obj, ncol(z)),
       convergence = if (is.list(obj)) obj$convergence, details = list())
}

# The d x D map of a learner function's result.
extract_map <- function(obj, D) {
  A <- if (is.matrix(obj) && is.numeric(obj)) {
    obj
  } else if (inherits(obj, "kmaha_model")) {
    transform_matrix(obj)
  } else if (is.list(obj) && is.matrix(obj$L)) {
    obj$L
  } else {
    try_step(transform_matrix(obj), function(e) NULL)
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
