# Running kmaha's parallel work (cross-validation tasks, reproduction cells)
# on the user's future plan so that a cluster behaves as the session:
#
# * the session's kmaha settings travel with the work (worker_settings(),
#   applied by worker_enter() in the task wrappers);
# * the user's functions (learners, lambda or kernel functions) take along
#   the helpers and objects they find in the global environment
#   (ship_closures());
# * a worker without kmaha, or with another version, is named as such
#   (with_worker_errors(), and the version check of the task wrappers);
# * cross-validation sends each worker one message per round
#   (plan_chunks()).
#
# The RNG side (the caller's generator and its kind restored) is save_rng()
# in R/choose.R.

# The kmaha settings of this session that the workers need: every option
# named `kmaha.*`, and the data path, instruction set and thread count when
# they come from environment variables instead (a worker on another machine
# does not see this session's environment).  Also the package version, which
# the workers must share (with the message a worker of another version
# gives), and the process the session runs in.
worker_settings <- function() {
  opts <- options()
  opts <- opts[startsWith(names(opts), "kmaha.")]
  if (is.null(opts$kmaha.data_path)) {
    p <- kmaha_data_path()
    if (!is.null(p)) opts$kmaha.data_path <- p
  }
  if (is.null(opts$kmaha.isa) && is.null(opts$kmaha.nca_isa) &&
      nzchar(Sys.getenv("KMAHA_ISA"))) {
    opts$kmaha.isa <- resolve_isa()
  }
  if (is.null(opts$kmaha.num_threads) && nzchar(Sys.getenv("KMAHA_NUM_THREADS"))) {
    opts$kmaha.num_threads <- kmaha_threads()
  }
  version <- as.character(utils::packageVersion("kmaha"))
  list(options = opts, version = version, pid = Sys.getpid(),
       version_error = paste0(
         "A worker of the future plan runs kmaha %s, but this session runs kmaha ",
         version, ": install the same version of kmaha on every worker (e.g. R CMD INSTALL kmaha_",
         version, ".tar.gz in the library the workers use)."))
}

# On a worker, before a task: the session's kmaha options, returning the
# worker's own to put back after the task.
worker_enter <- function(settings) {
  if (is.null(settings) || !length(settings$options)) return(list())
  options(settings$options)
}

# The functions the workers receive (cv_chunk_call(), repro_cell_call())
# carry their bodies with them, while the functions they call come from the
# worker's own kmaha; so their first line, the version check, uses base R
# only (and settings$version_error, made here), and a worker of another
# version says so instead of failing on a function it lacks.

# TRUE when the plan evaluates futures in this R process (sequential or
# transparent), where nothing has to travel.
plan_is_local <- function() inherits(future::plan("next"), "uniprocess")

# future.apply::future_lapply() with the package's conventions: no search
# for globals (task functions live in the namespace and receive their data
# as arguments), kmaha (and the packages the user's functions use) loaded
# on the workers, and a worker that lacks one of those packages reported as
# such, with what to do.
plan_lapply <- function(X, FUN, ..., seed, chunk_size = NULL,
                        packages = character()) {
  with_worker_errors(
    future.apply::future_lapply(X, FUN, ..., future.seed = seed,
                                future.globals = FALSE,
                                future.packages = unique(c("kmaha", packages)),
                                future.chunk.size = chunk_size))
}

# Evaluates `expr`, turning the error of a worker that cannot load a
# package into one that says what to install where.
with_worker_errors <- function(expr) {
  tryCatch(expr, FutureError = function(e) {
    msg <- conditionMessage(e)
    m <- regmatches(msg, regexec("there is no package called .([A-Za-z][A-Za-z0-9.]*).", msg))[[1]]
    if (length(m) == 2L) stop(missing_package_error(m[2]))
    stop(e)
  })
}

# One round of tasks on the plan, one future per worker: the tasks `ids`
# are cut into as many contiguous chunks as the plan has workers (one for a
# sequential plan) and chunk_call(ids, job, seeds, progress) runs each
# chunk, with `seeds` the tasks' random streams.  Returns chunk_call()'s
# results, one list element per chunk, in order.
#
# Why not future_lapply(): a future sends each of its globals (the task
# function, the chunk, the seeds, the job) to its worker with a call that
# waits for the worker's answer, one future after the other, and on
# sockets every message of more than a few kilobytes waits ~40 ms for the
# receiver's delayed acknowledgement.  With the job written into the
# future's expression instead there are no globals: each worker gets one
# message, sent without waiting, so the workers start together and a round
# costs about one such delay instead of several per worker (measured in
# bench/cluster.R).
plan_chunks <- function(ids, chunk_call, job, seeds, progress, packages = character()) {
  if (!length(ids)) return(list())
  # (a batchtools plan may have Inf workers: then one task per future)
  w <- as.integer(max(1, min(length(ids), future::nbrOfWorkers())))
  chunks <- parallel::splitIndices(length(ids), w)
  pkgs <- unique(c("kmaha", packages))
  with_worker_errors({
    fs <- lapply(chunks, function(ch) {
      expr <- as.call(list(chunk_call, ids[ch], job, seeds[ch], progress))
      future::future(expr, substitute = FALSE, globals = FALSE, packages = pkgs,
                     seed = FALSE, label = "kmaha")
    })
    future::value(fs)
  })
}

missing_package_error <- function(pkg) {
  how <- if (pkg == "kmaha") {
    v <- as.character(utils::packageVersion("kmaha"))
    sprintf("Install kmaha %s (this session's version) on every worker machine, e.g. R CMD INSTALL kmaha_%s.tar.gz there", v, v)
  } else {
    sprintf("Install it on every worker machine with install.packages(\"%s\")", pkg)
  }
  errorCondition(
    sprintf("The workers of the future plan (%s) cannot load %s: it is not installed in the R library they use. %s, or point the workers to a library that holds it, e.g. future::plan(future::cluster, workers = parallelly::makeClusterPSOCK(hosts, rscript_libs = c(\"/path/to/library\", \"*\"))).",
            plan_name(),
            if (pkg == "kmaha") "kmaha" else
              sprintf("the package '%s' (used by your learner, lambda or kernel function)", pkg),
            how),
    class = c("kmaha_worker_error", "kmaha_error"), call = NULL)
}

# The current plan in a word ("cluster", "multisession", ...).
plan_name <- function() {
  cl <- setdiff(class(future::plan("next")),
                c("FutureStrategy", "tweaked", "function", "uniprocess", "multiprocess", "future"))
  if (length(cl)) cl[1] else "unknown"
}

# --------------------------------------------------------------------------
# The user's functions on the workers.
#
# Serializing a function keeps its environment only up to the global
# environment, which a worker has empty: a learner that calls a helper
# defined at the top level works in this session and fails on a cluster
# with "could not find function".  ship_closures() finds the globals of
# every user function in `x` (a function, or a list holding functions at
# any depth) with the globals package, as future does for its own
# expressions, and copies those that live in the global environment (or in
# an environment attached by attach()) into one private environment that
# takes the global environment's place in the functions' chains: the local
# frames of a closure are copied and re-parented onto it, the helpers
# themselves are re-parented too, so a helper that calls another helper
# works.  Functions from packages stay references to their namespaces; the
# packages the globals come from (attached with library() in this session)
# are returned in attribute "packages", to attach on the workers.  Used
# only for plans that run elsewhere: under a sequential plan the functions
# run as they are.

ship_closures <- function(x) {
  state <- new.env(parent = emptyenv())
  state$shipped <- NULL
  state$frames <- list()
  state$packages <- character()
  out <- ship_walk(x, state, depth = 0L)
  attr(out, "packages") <- setdiff(unique(state$packages), "base")
  out
}

ship_walk <- function(x, state, depth) {
  if (is.function(x)) return(ship_function(x, state))
  if (is.list(x) && !is.data.frame(x) && depth < 6L && length(x)) {
    a <- attributes(x)
    for (i in seq_along(x)) {
      v <- x[[i]]
      if (is.function(v) || (is.list(v) && !is.data.frame(v))) {
        v <- ship_walk(v, state, depth + 1L)
        attr(v, "packages") <- NULL
        if (!is.null(v)) x[[i]] <- v
      }
    }
    attributes(x) <- a
  }
  x
}

# Environments that serialize as references (the worker has its own).
is_system_env <- function(env) {
  identical(env, emptyenv()) || identical(env, baseenv()) ||
    identical(env, globalenv()) || isNamespace(env) ||
    startsWith(environmentName(env), "package:")
}

# The local frames of a function's environment chain up to the global
# environment, or NULL when the chain ends elsewhere (a namespace: a package
# function, which the worker has).
local_frames <- function(env) {
  frames <- list()
  while (!is_system_env(env)) {
    frames[[length(frames) + 1L]] <- env
    env <- parent.env(env)
  }
  if (identical(env, globalenv())) frames else NULL
}

ship_function <- function(f, state) {
  env <- environment(f)
  if (is.null(env)) return(f)
  frames <- local_frames(env)
  if (is.null(frames)) return(f)
  home <- ship_home(state)
  probe <- new.env(parent = env)
  assign(".kmaha_shipped_fun", f, envir = probe)
  gl <- tryCatch(
    globals::globalsOf(quote(.kmaha_shipped_fun), envir = probe, recursive = TRUE,
                       mustExist = FALSE),
    error = function(e) NULL)
  if (!is.null(gl)) {
    where <- attr(gl, "where")
    for (nm in setdiff(names(gl), ".kmaha_shipped_fun")) {
      w <- where[[nm]]
      if (is.null(w)) next
      name <- environmentName(w)
      if (startsWith(name, "package:")) {
        state$packages <- c(state$packages, sub("^package:", "", name))
      } else if (identical(w, globalenv()) || (!is_system_env(w) && attached_env(w))) {
        if (!exists(nm, envir = home, inherits = FALSE)) {
          v <- gl[[nm]]
          # Assigned first, so a helper that refers to itself (or to one
          # being shipped) resolves.
          assign(nm, v, envir = home)
          if (is.function(v)) assign(nm, rebase_function(v, state), envir = home)
        }
      }
    }
  }
  rebase_function(f, state)
}

# An environment on the search path put there by attach().
attached_env <- function(env) {
  for (i in seq_along(search())) {
    if (identical(env, as.environment(i))) return(TRUE)
  }
  FALSE
}

# The private environment that stands in for the global environment.
ship_home <- function(state) {
  if (is.null(state$shipped)) state$shipped <- new.env(parent = globalenv())
  state$shipped
}

# `f` with its environment chain re-rooted on the private environment:
# its local frames copied (once per frame, shared between functions that
# share them), the last one's parent the private environment.
rebase_function <- function(f, state) {
  env <- environment(f)
  if (is.null(env)) return(f)
  frames <- local_frames(env)
  if (is.null(frames)) return(f)
  home <- ship_home(state)
  if (!length(frames)) {
    environment(f) <- home
    return(f)
  }
  parent <- home
  copies <- vector("list", length(frames))
  for (i in rev(seq_along(frames))) {
    copies[[i]] <- frame_copy(frames[[i]], parent, state)
    parent <- copies[[i]]
  }
  environment(f) <- copies[[1L]]
  f
}

# A copy of a local frame onto `parent`; the closures it holds that were
# made in it (or in frames below the global environment) are re-rooted
# too, so a local helper that calls a global one works.  The copy is
# registered before it is filled, so closures that refer to their own
# frame find the copy.
frame_copy <- function(frame, parent, state) {
  for (p in state$frames) {
    if (identical(p$from, frame)) return(p$to)
  }
  to <- new.env(parent = parent)
  state$frames[[length(state$frames) + 1L]] <- list(from = frame, to = to)
  for (nm in setdiff(ls(frame, all.names = TRUE), "...")) {
    if (bindingIsActive(nm, frame)) next
    # A missing argument of the frame's function has no value to copy.
    v <- tryCatch(get(nm, envir = frame, inherits = FALSE), error = function(e) e)
    if (inherits(v, "error")) next
    if (is.function(v) && !is.primitive(v)) v <- rebase_function(v, state)
    assign(nm, v, envir = to)
  }
  to
}
