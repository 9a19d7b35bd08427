# Learners: their options checked once (learner_spec()), and one internal
# fitter per learner (fit_map()).  A fitter takes already-checked
# coordinates z (n x r: standardized inputs, KPCA coordinates or kernel
# rows), labels, target neighbours, the call's context and the options, and
# returns the map (d x r) and a convergence record; nothing else.  The
# public nca(), lmnn(), dne(), knca(), klmnn(), kdne(), kmaha(), the
# cross-validation folds, the caret/tidymodels/mlr3 adapters and
# reproduce_paper() all fit through fit_map(), by way of fit_pipeline()
# (R/pipeline.R).

# The built-in learners: the public function whose arguments are the
# options, and the label printed.
learner_table <- list(
  nca = list(label = "NCA", fun = "nca.default"),
  lmnn = list(label = "LMNN", fun = "lmnn.default"),
  dne = list(label = "DNE", fun = "dne.default"),
  knca = list(label = "KNCA", fun = "knca.default"),
  klmnn = list(label = "KLMNN", fun = "klmnn.default"),
  kdne = list(label = "KDNE", fun = "kdne.default"),
  lfda = list(label = "LFDA", fun = "lfda.default"),
  rca = list(label = "RCA", fun = "rca.default"),
  mmc = list(label = "MMC", fun = "mmc.default"),
  itml = list(label = "ITML", fun = "itml.default"),
  mlkr = list(label = "MLKR", fun = "mlkr.default"))

learner_label <- function(method) {
  learner_table[[method]]$label %||% toupper(method)
}

# The options a built-in learner takes through `learner_args` (the formals
# of its public function, less the data and what the pipeline supplies).
learner_option_names <- function(name) {
  # (MLKR's `k` and `weights` are the model's k-NN regression, not options
  # of the learner)
  setdiff(names(formals(get(learner_table[[name]]$fun))),
          c("x", "y", "...", "scale", "kernel", "num_threads",
            if (name == "mlkr") c("k", "weights")))
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
          paste(dQuote(builtin_learners, FALSE), collapse = ", "))
  }
  name <- tolower(learner)
  if (!name %in% builtin_learners) {
    stopf("`learner` must be \"auto\", %s or a function f(x, y, ...) returning a linear map, not %s.",
          paste(dQuote(builtin_learners, FALSE), collapse = ", "), dQuote(learner, FALSE))
  }
  builtin_spec(name, args, argname)
}

# The learners kernel choice scores: `learner` as kmaha() takes it ("auto",
# a built-in name or a function).  A list of specs, one per learner: "auto"
# gives those of auto_learners, each with the options of `args` it takes
# (an option no learner takes is an error) and the entries of a list
# args[[name]] (options for that learner alone, e.g. learner_args =
# list(lmnn = list(mu = 0.3))); anything else a list of one spec.
learner_specs <- function(learner, args = list(),
                          argname = function(a) paste0("learner_args$", a)) {
  if (!identical(learner, "auto")) return(list(learner_spec(learner, args, argname)))
  own <- intersect(names(args), auto_learners)
  for (nm in own) {
    if (!is.list(args[[nm]])) {
      stopf("`%s` must be a named list of options for %s alone, e.g. list(k = 5).",
            argname(nm), learner_label(nm))
    }
  }
  shared <- args[setdiff(names(args), own)]
  takes <- lapply(auto_learners, learner_option_names)
  none <- setdiff(names(shared), unlist(takes))
  if (length(none)) {
    stopf("With learner = \"auto\", %s is an option of none of the learners (%s); the options they take: %s.",
          paste(sQuote(vapply(none, argname, ""), FALSE), collapse = ", "),
          paste(vapply(auto_learners, learner_label, ""), collapse = ", "),
          paste(sort(unique(unlist(takes))), collapse = ", "))
  }
  specs <- lapply(seq_along(auto_learners), function(i) {
    nm <- auto_learners[i]
    a <- c(shared[intersect(names(shared), takes[[i]])], args[[nm]])
    sub_name <- function(o) if (o %in% names(args[[nm]])) paste0(argname(nm), "$", o) else argname(o)
    builtin_spec(nm, a[!duplicated(names(a), fromLast = TRUE)], sub_name)
  })
  names(specs) <- auto_learners
  specs
}

# The linear learners kmaha() kernelizes by name.
builtin_learners <- c("nca", "lmnn", "dne", "lfda", "rca", "mmc", "itml")

# The learners `learner = "auto"` chooses among (on the same folds).
auto_learners <- c("nca", "lmnn", "dne")

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
  known <- learner_option_names(name)
  unknown <- setdiff(names(args), known)
  if (length(unknown)) {
    stopf("%s takes no option(s) %s; it takes %s.", sub("\\.default$", "()", learner_table[[name]]$fun),
          paste(sQuote(vapply(unknown, argname, ""), FALSE), collapse = ", "),
          paste(known, collapse = ", "))
  }
  opts <- switch(name,
    nca = , knca = nca_opts(args, argname, kernel_trick = name == "knca"),
    lmnn = , klmnn = lmnn_opts(args, argname, kernel_trick = name == "klmnn"),
    dne = dne_opts(args, argname),
    kdne = dne_opts(args, argname, "kdne"),
    lfda = lfda_opts(args, argname),
    rca = rca_opts(args, argname),
    mmc = mmc_opts(args, argname),
    itml = itml_opts(args, argname),
    mlkr = mlkr_opts(args, argname))
  spec <- list(name = name, label = learner_label(name), builtin = TRUE,
               opts = opts, args = args)
  spec$wants_targets <- name %in% c("lmnn", "dne", "klmnn", "kdne") && is.null(opts$targets)
  spec$target_k <- opts$k
  spec$argname <- argname
  spec
}

# --------------------------------------------------------------------------
# Options of each learner, with the defaults of its public function.

learner_default <- function(name, arg) {
  eval(formals(get(learner_table[[name]]$fun))[[arg]])
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

nca_opts <- function(args, argname, kernel_trick = FALSE) {
  name <- if (kernel_trick) "knca" else "nca"
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default(name, a)
  init <- check_init(get_arg("init"), kernel_trick, argname)
  opts <- list(dim = opt_dim(get_arg("dim"), argname), init = init,
               lambda = check_number(get_arg("lambda"), argname("lambda"), nonneg = TRUE),
               max_iter = check_count(get_arg("max_iter"), argname("max_iter")),
               tol = check_number(get_arg("tol"), argname("tol"), positive = TRUE),
               verbose = check_flag(get_arg("verbose"), argname("verbose")))
  if (!kernel_trick) {
    method <- get_arg("method")
    if (length(method) > 1L) method <- method[1]
    if (!is.character(method) || is.na(method) ||
        !method %in% c("auto", "lbfgs", "minibatch")) {
      stopf("`%s` must be \"auto\", \"lbfgs\" or \"minibatch\".", argname("method"))
    }
    opts$method <- method
    opts$batch_size <- check_count(get_arg("batch_size"), argname("batch_size"), lower = 2L)
  }
  opts
}

lmnn_opts <- function(args, argname, kernel_trick = FALSE) {
  name <- if (kernel_trick) "klmnn" else "lmnn"
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default(name, a)
  mu <- check_number(get_arg("mu"), argname("mu"))
  if (mu <= 0 || mu >= 1) {
    stopf("`%s` must lie strictly between 0 and 1, not %s.", argname("mu"), format(mu))
  }
  lambda <- get_arg("lambda")
  if (!is.function(lambda) && !is.null(lambda)) {
    lambda <- check_number(lambda, argname("lambda"), nonneg = TRUE)
  }
  init <- check_init(get_arg("init"), kernel_trick, argname)
  if (is.matrix(init) && (anyNA(init) || any(!is.finite(init)))) {
    stopf("`%s` must not contain missing or infinite values.", argname("init"))
  }
  solver <- if ("solver" %in% names(args)) args$solver else
    learner_default(name, "solver") %||% "auto"
  if (length(solver) > 1L) solver <- solver[1]
  if (!is.character(solver) || is.na(solver) || !solver %in% c("auto", "M", "L")) {
    stopf("`%s` must be \"auto\", \"M\" or \"L\".", argname("solver"))
  }
  targets <- args$targets
  list(k = check_count(if (!is.null(targets) && !"k" %in% names(args)) 
                         max(ncol(as.matrix(targets)), 1L) else get_arg("k"), argname("k")),
       k_given = "k" %in% names(args),
       dim = opt_dim(get_arg("dim"), argname), mu = mu, lambda = lambda,
       init = init, max_iter = check_count(get_arg("max_iter"), argname("max_iter")),
       tol = check_number(get_arg("tol"), argname("tol"), positive = TRUE),
       solver = if (solver == "auto") "L" else solver,
       verbose = check_flag(get_arg("verbose"), argname("verbose")),
       targets = targets)
}

# DNE and KDNE: the same options, except the diagonal shift (DNE's
# `lambda`, KDNE's `eps`).
dne_opts <- function(args, argname, learner = "dne") {
  get_arg <- function(a) if (a %in% names(args)) args[[a]] else learner_default(learner, a)
  shift <- if (learner == "dne") "lambda" else "eps"
  out <- list(k = check_count(get_arg("k"), argname("k")),
              dim = opt_dim(get_arg("dim"), argname))
  out[[shift]] <- check_number(get_arg(shift), argname(shift), nonneg = TRUE)
  out$targets <- args$targets
  out
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
  reserved <- intersect(names(learner_args), c("x", "y", "scale"))
  if (length(reserved)) {
    stopf("`learner_args` must not set %s: kmaha() supplies it.",
          paste(sQuote(reserved, FALSE), collapse = ", "))
  }
  learner_args
}

# --------------------------------------------------------------------------
# Target neighbours.

# The neighbours a learner needs, found on `src` (coordinates, or a Gram
# matrix when gram = TRUE): NULL for NCA; the k nearest same-class rows for
# LMNN and learner functions with a `targets` argument; list(same, other)
# for DNE.  Targets given in the options are checked and used instead.
# `learner_coords`: src is what the learner fits on; then linear LMNN and
# DNE find their neighbours in the call that fits the map (NULL here, see
# fit_map()).
find_targets <- function(spec, src, y, ctx, gram = FALSE, learner_coords = FALSE) {
  o <- spec$opts
  if (!is.null(o$targets)) {
    arg <- spec$argname("targets")
    if (spec$name %in% c("dne", "kdne")) return(check_dne_targets(o$targets, y, arg))
    return(check_neighbor_matrix(o$targets, y, arg, same = TRUE,
                                 k = if (isTRUE(o$k_given)) o$k, require_any = TRUE))
  }
  if (!isTRUE(spec$wants_targets)) return(NULL)
  if (learner_coords && !gram && isTRUE(spec$builtin) && spec$name %in% c("lmnn", "dne")) {
    return(NULL)
  }
  k <- spec$target_k
  yi <- as.integer(y)
  if (spec$name %in% c("dne", "kdne")) return(core_dne_neighbors(src, yi, k, gram, ctx))
  if (gram) return(core_dne_neighbors(src, yi, k, TRUE, ctx)$same)
  core_class_neighbors(src, yi, k, TRUE, ctx)
}

# --------------------------------------------------------------------------
# The fitters.

# Fit the learner of `spec` on coordinates z (n x r) and labels y (a factor
# without empty levels; for MLKR, and the Euclidean candidate of a
# regression, a numeric response).  `targets` from find_targets(); `reg` the kernel
# trick's Gram matrix (the regulariser trace(U K U') and, for KDNE, the
# constraint); `coords` describes z for messages ("4 standardized input
# columns", "149 KPCA components", "60 kernel rows").  `targets` NULL for
# LMNN and DNE: the core finds them on z in the fitting call.  `score`:
# NULL, or a fold's held-out coordinates to vote in the learned metric
# (list(x, k, classes), see fit_pipeline(); list(x, k, weights) for a
# regression), in the same call for the built-in learners on coordinates.
# Returns list(map, convergence, details, targets (those the core found, or
# NULL), score (the held-out classes as codes of y's levels, the
# regression's predictions, or NULL when not voted here)).
fit_map <- function(spec, z, y, targets, ctx, reg = NULL, coords = NULL, principal = FALSE,
                    score = NULL) {
  coords <- coords %||% sprintf("%d columns of `x`", ncol(z))
  check_map_dim(spec, ncol(z), coords)
  o <- spec$opts
  switch(spec$name,
    nca = fit_nca_map(o, z, y, ctx, lambda_arg = spec$argname("lambda"), principal = principal,
                      score = score),
    knca = fit_nca_map(o, z, y, ctx, reg = reg, lambda_arg = spec$argname("lambda")),
    lmnn = fit_lmnn_map(o, z, y, targets, ctx, store_metric = isTRUE(spec$public) && ncol(z) <= 500L,
                        argname = spec$argname, coords = if (isTRUE(spec$public))
                          sprintf("`x` has %d columns", ncol(z)) else
                          sprintf("the learner receives %s", coords),
                        principal = principal, score = score),
    klmnn = fit_lmnn_map(o, z, y, targets, ctx, reg = reg, argname = spec$argname,
                         gram = spec$gram),
    dne = fit_dne_map(o, z, y, targets, ctx, store_scatter = isTRUE(spec$public) && ncol(z) <= 500L,
                      principal = principal, score = score),
    kdne = fit_kdne_map(o, reg, y, targets, ctx),
    lfda = fit_lfda_map(o, z, y, ctx, store_scatter = isTRUE(spec$public) && ncol(z) <= 500L,
                        principal = principal),
    rca = fit_rca_map(o, z, y, ctx, store_covariance = isTRUE(spec$public) && ncol(z) <= 500L,
                      principal = principal),
    mmc = fit_mmc_map(o, z, y, ctx, store_metric = isTRUE(spec$public) && ncol(z) <= 500L),
    itml = fit_itml_map(o, z, y, ctx, store_metric = isTRUE(spec$public) && ncol(z) <= 500L),
    mlkr = fit_mlkr_map(o, z, y, ctx, lambda_arg = spec$argname("lambda"),
                        principal = principal, score = score),
    custom = fit_custom_map(spec, z, y, targets),
    euclidean = list(map = euclidean_map(z), convergence = NULL, details = list(),
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

# NCA (reg = NULL) and kernel-trick NCA (z = reg = the Gram matrix).
fit_nca_map <- function(o, z, y, ctx, reg = NULL, lambda_arg = "lambda", principal = FALSE,
                        score = NULL) {
  fun <- if (is.null(reg)) "nca" else "knca"
  check_class_sizes(y)
  if (is.null(reg)) {
    # kernel choice's candidates cap the rows of the map (see candidate_spec())
    # a starting matrix gives `dim` by its rows, as for LMNN and the
    # kernel-trick learners
    dim <- o$dim %||% if (is.matrix(o$init)) nrow(o$init) else min(ncol(z), o$dim_cap %||% Inf)
    start <- nca_init(o$init, z, dim, principal)
  } else {
    start <- knca_init(o$init, reg, o$dim, ctx)
    start <- list(A = start$U, label = start$label)
  }
  method <- o$method %||% "lbfgs"
  if (method == "auto") method <- if (nrow(z) > nca_minibatch_min_n) "minibatch" else "lbfgs"
  # Exact KPCA coordinates are centred, orthogonal columns of positive
  # variance: their span is all of them, and the core need not look for a
  # smaller one (an O(n r^2) step).
  res <- if (method == "minibatch") {
    nca_run_minibatch(z, y, start, o, min(o$batch_size, nrow(z)), ctx, span = !principal)
  } else {
    nca_run(fun, z, y, start, reg, o, ctx, score = score, span = !principal)
  }
  # (the start's norm in the coordinates the core solved in)
  warn_collapsed_map(exp(log_norm(res$map) - res$start_log_norm - log(res$start_scale %||% 1)),
                     o$lambda, lambda_arg)
  list(map = res$map, convergence = nca_convergence(res),
       details = list(init = start$label, method = method,
                      batch_size = if (method == "minibatch") min(o$batch_size, nrow(z))),
       score = res$score)
}

# LMNN (reg = NULL: lambda tr(M)) and kernel-trick LMNN (reg = K).  The core
# solves in the span of the centred training points when it has fewer
# dimensions than z has columns (p >> n; kernel rows: their KPCA
# coordinates), and the map it returns acts on z.  `argname` names the
# options in messages, `coords` says what z is (for the linear learner's
# start), `gram` how the user gave the Gram matrix of the kernel trick (see
# lmnn_gram_error()).
fit_lmnn_map <- function(o, z, y, targets, ctx, reg = NULL, store_metric = FALSE,
                         argname = function(a) a, coords = NULL, gram = NULL,
                         principal = FALSE, score = NULL) {
  D <- ncol(z)
  lambda <- o$lambda
  if (is.function(lambda)) lambda <- lambda(z)
  if (is.null(lambda)) lambda <- if (is.null(reg)) 0 else klmnn_lambda_gram(reg)
  init_mat <- if (is.matrix(o$init)) o$init
  dim <- o$dim %||% if (!is.null(init_mat)) nrow(init_mat) else min(D, o$dim_cap %||% Inf)
  if (is.null(reg) && !is.null(init_mat)) {
    check_lmnn_init(init_mat, D, dim, argname,
                    coords %||% sprintf("`x` has %d columns", D))
  }
  # L0 NULL: the D x D identity, left to the core (a 0 x 0 matrix there)
  if (is.null(reg)) {
    L0 <- lmnn_init(o$init, init_mat, z, dim, principal)
  } else if (!is.null(init_mat)) {
    # a dim x n matrix of coefficients, checked as KNCA's
    L0 <- knca_init(init_mat, reg, o$dim, ctx)$U
  } else if (identical(o$init, "auto") && is.null(o$dim)) {
    # The identity on the kernel rows: LMNN is convex in M with a full-rank
    # map, so the start does not change the optimum, and from the identity
    # the core's low-rank mode applies.
    L0 <- NULL
  } else {
    L0 <- knca_init(if (identical(o$init, "auto")) "kpca" else o$init, reg, o$dim, ctx)$U
    dim <- nrow(L0)
  }
  zz <- z
  dimnames(zz) <- NULL
  # the held-out votes use the rows of the map kept below
  if (!is.null(score)) score$dim <- as.integer(dim)
  res <- tryCatch(
    core_lmnn_fit(zz, as.integer(y), targets, L0 %||% matrix(0, 0L, 0L), o$mu, lambda,
                  o$max_iter, o$tol, o$solver, 10L, 0.2, o$verbose, ctx, reg = reg,
                  metric = is.null(reg) && store_metric, target_k = o$k, score = score),
    kmaha_singular_error = function(e) {
      # the only matrix the core requires to be positive semi-definite here
      if (is.null(reg)) stop(e)
      lmnn_gram_error(e, reg, gram)
    })
  L <- res$L
  if (nrow(L) > dim) L <- L[seq_len(dim), , drop = FALSE]
  # The low-rank mode returns exact zero rows beyond the metric's rank; with
  # no `dim` asked for they carry nothing.
  if (is.null(o$dim) && is.null(init_mat)) {
    nz <- rowSums(L != 0) > 0
    if (any(nz) && !all(nz)) L <- L[nz, , drop = FALSE]
  }
  # (the identity's norm: sqrt(D))
  warn_collapsed_map(exp(log_norm(L) - if (is.null(L0)) 0.5 * log(D) else log_norm(L0)),
                     lambda, argname("lambda"))
  fun <- if (is.null(reg)) "lmnn" else "klmnn"
  if (!res$converged) {
    warnf("%s() did not converge (%s after %d %s); raise `max_iter` or loosen `tol`.",
          fun, res$message, as.integer(res$iterations),
          if (o$solver == "M") "iterations" else "evaluations")
  }
  list(map = L,
       convergence = list(iterations = as.integer(res$iterations),
                          objective = res$objective, trace = res$trace,
                          converged = res$converged, message = res$message),
       details = list(lambda = lambda, solver = o$solver,
                      impostors = res$active_pairs,
                      active_triples = res$active_triples,
                      M = if (is.null(reg) && store_metric) res$M),
       targets = res$targets, score = res$score)
}

# A starting map given as a matrix, for LMNN on D coordinates with `dim`
# rows: one column per coordinate, at most one row per coordinate (a map
# with more rows than its input has coordinates is the same metric with
# fewer rows), and as many rows as `dim`.  `coords` says what the
# coordinates are ("`x` has 4 columns").
check_lmnn_init <- function(init, D, dim, argname, coords) {
  arg <- argname("init")
  if (ncol(init) != D) {
    stopf("`%s` must have %d columns (one per feature), not %d.", arg, D, ncol(init))
  }
  if (nrow(init) > D) {
    stopf("`%s` has %d rows but %s: a map has at most one row per column of its input, so give `%s` at most %d rows.",
          arg, nrow(init), coords, arg, D)
  }
  if (nrow(init) != dim) {
    stopf("`%s` has %d rows but `%s` is %d; they must match.", arg, nrow(init),
          argname("dim"), dim)
  }
  invisible(init)
}

# The kernel trick's Gram matrix K is not positive semi-definite (the core's
# error `e`, class kmaha_singular_error): the regulariser trace(U K U') is then
# unbounded below.  Re-signalled with the same class, naming the Gram
# matrix as the user gave it: `gram` is "x" (kernel = "precomputed") or
# "kernel" (the Gram matrix of a kernel on the training points).
lmnn_gram_error <- function(e, K, gram) {
  ev <- eigen(K, symmetric = TRUE, only.values = TRUE)$values
  low <- min(min(ev), -.Machine$double.eps * max(abs(ev)))
  # a ridge just above -low, rounded up to two significant digits
  step <- 10^(floor(log10(-low * 1.01)) - 1)
  ridge <- ceiling(-low * 1.01 / step) * step
  what <- if (identical(gram, "x")) {
    "The precomputed Gram matrix `x`"
  } else if (identical(gram, "kernel")) {
    "The Gram matrix of `kernel` on the training points"
  } else {
    "The Gram matrix"
  }
  fix <- if (identical(gram, "x")) {
    sprintf("make `x` positive semi-definite, e.g. add a ridge (x + %s * diag(nrow(x))) or set its negative eigenvalues to zero", format(ridge))
  } else if (identical(gram, "kernel")) {
    sprintf("use a positive semi-definite kernel, or pass its Gram matrix made positive semi-definite (e.g. plus %s * diag(n), or with its negative eigenvalues set to zero) with kernel = \"precomputed\"", format(ridge))
  } else {
    sprintf("make it positive semi-definite, e.g. add a ridge of %s times the identity", format(ridge))
  }
  e$message <- sprintf("%s is not positive semi-definite (smallest eigenvalue %s, largest %s), which KLMNN needs: its regulariser trace(U K U') would be unbounded below. To fit, %s.",
                       what, format(signif(low, 3)), format(signif(max(ev), 3)), fix)
  stop(e)
}

fit_dne_map <- function(o, z, y, targets, ctx, store_scatter = FALSE, principal = FALSE,
                        score = NULL) {
  res <- core_dne_fit(z, targets$same, targets$other, o$dim %||% 0L, o$lambda, ctx,
                      principal = principal, y = as.integer(y), k = o$k, score = score)
  obj <- sum(res$eigenvalues[seq_len(res$dim)])
  # p >> n: solved in the span of the centred points, S was not formed
  span <- isTRUE(res$span_rank > 0L)
  list(map = res$A,
       convergence = list(
         iterations = 1L, objective = obj, trace = obj, converged = TRUE,
         message = sprintf("direct eigen-solve: %d smallest eigenvalue(s) of X'(D - W)X%s%s; %d negative; retention %.3g; graph with %d edges",
                           res$dim, if (o$lambda > 0) " + lambda I" else "",
                           if (span) sprintf(" (in the %d-dimensional span of the centred training points)",
                                             res$span_rank) else "",
                           res$n_negative, res$retention, res$n_edges)),
       details = list(eigenvalues = res$eigenvalues, n_negative = res$n_negative,
                      retention = res$retention,
                      dim_rule = if (is.null(o$dim)) dne_dim_rule else "given",
                      scatter = if (store_scatter && !span) res$scatter),
       targets = if (is.null(targets)) res[c("same", "other")], score = res$score)
}

# KDNE: the generalized eigenproblem on the Gram matrix K.
fit_kdne_map <- function(o, K, y, targets, ctx) {
  res <- tryCatch(
    core_kdne_fit(K, targets$same, targets$other, o$dim %||% 0L, o$eps, ctx),
    kmaha_singular_error = function(e) {
      # reworded for the user, keeping its class
      e$message <- sprintf("`K + eps * I` is not positive definite: the Gram matrix is singular or nearly so (the points are linearly dependent in feature space). Increase `eps` (now %s), or use the KPCA trick, kmaha(learner = \"dne\"), which needs no inverse.",
                           format(o$eps))
      stop(e)
    })
  obj <- sum(res$eigenvalues[seq_len(res$dim)])
  list(map = res$U,
       convergence = list(
         iterations = 1L, objective = obj, trace = obj, converged = TRUE,
         message = sprintf("direct generalized eigen-solve (Cholesky of K + eps I): %d smallest of %d eigenvalues; %d negative; retention %.3g",
                           res$dim, nrow(K), res$n_negative, res$retention)),
       details = list(eigenvalues = res$eigenvalues, n_negative = res$n_negative,
                      retention = res$retention, eps = o$eps,
                      dim_rule = if (is.null(o$dim)) dne_dim_rule else "given"))
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
      spec$name %in% c("knca", "klmnn", "kdne")) return(invisible(NULL))
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
