# Running kmaha's parallel work (cross-validation tasks, reproduction cells)
# on the user's future plan so that a cluster behaves as the session:
#
# * the session's kmaha settings travel with the work (worker_settings(),
#   applied by worker_enter() in the task wrappers);
# * the user's functions (learners, lambda or kernel functions) take along
#   the helpers and objects they find in the global environment
#   (ship_closures());
# * the work is cut into futures to suit the plan (plan_split()): on local
#   cores one future per worker and round of cross-validation, small
#   chunks of reproduction tasks; on a scheduler (a future.batchtools plan,
#   where every future is a job that waits in a queue and starts a fresh
#   R) few futures that each carry much work; the option kmaha.chunk_size
#   sets the size;
# * the futures are sent without globals, the work written into their
#   expressions (run_futures(), used by plan_chunks() and plan_lapply());
# * a failure names what to do: a worker without kmaha (or another package)
#   gets the install hint, whatever the backend's wording
#   (worker_error()), and a failed or lost future is reported with the
#   futures still running (kmaha_plan_error), which reproduce_paper()
#   turns into how to resume.
#
# The RNG side (the caller's generator and its kind restored) is save_rng()
# in R/score.R.

# The kmaha settings of this session that the workers need: every option
# named `kmaha.*`, and the data path, instruction set and thread count when
# they come from environment variables instead (a worker on another machine
# does not see this session's environment).  Also the package version, which
# the workers must share (with the message a worker of another version
# gives), and the process the session runs in.  A thread count that travels
# is capped on the worker at the worker's allocation when the worker runs
# inside a scheduler's job (kmaha_threads()).
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
    opts$kmaha.num_threads <- thread_setting()$value
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

# The functions the workers receive (cv_chunk_call(), repro_cell_call(),
# lapply_chunk_call()) carry their bodies with them, while the functions
# they call come from the worker's own kmaha; so their first line, the
# version check, uses base R only (and settings$version_error, made here),
# and a worker of another version says so instead of failing on a function
# it lacks.

# TRUE when the plan evaluates futures in this R process (sequential or
# transparent), where nothing has to travel.
plan_is_local <- function() inherits(future::plan("next"), "uniprocess")

# --------------------------------------------------------------------------
# How work is cut into futures.

#' Running kmaha on a future plan: clusters, schedulers, chunk size
#'
#' Cross-validated kernel choice ([cv_kernel()], [kmaha()] with `kernel =
#' "cv"` or `"auto"`) and [reproduce_paper()] run their fits as futures, so
#' [future::plan()] decides where they run. How the work is cut into
#' futures depends on the plan, because a future costs very different
#' amounts on different backends: a few milliseconds on a local worker, a
#' job on a scheduler (submission, a wait in the queue, a fresh R on a
#' compute node: seconds or more).
#'
#' | plan | a round of cross-validation (candidate x fold fits) | [reproduce_paper()] tasks |
#' |---|---|---|
#' | `sequential` | 1 future | 1 future |
#' | local workers (`multisession`, `multicore`, `cluster`) | 1 future per worker | 8 tasks per future |
#' | a scheduler | 1 future (job) per round | `n %/% 40` futures, at most 50 |
#'
#' The fast cross-validation (the default) has at most two rounds, so a
#' kernel choice on a scheduler is at most two jobs; the full
#' reproduction of the paper (4320 tasks) is 50 jobs of 86 or 87 tasks.
#'
#' **Scheduler.** A plan counts as a scheduler when it is a
#' \pkg{future.batchtools} plan (`batchtools_slurm`, `batchtools_sge`,
#' `batchtools_torque`, `batchtools_lsf`, `batchtools_openlava`, ...;
#' `batchtools_local` runs in the session and does not), or whenever the
#' option `kmaha.scheduler` is `TRUE` (for example for a `cluster` plan
#' whose workers are expensive to reach); `FALSE` treats a batchtools plan
#' as local workers.
#'
#' **Chunk size.** The option `kmaha.chunk_size` (a whole number >= 1, the
#' tasks each future carries) overrides the table for every plan: a task is
#' one candidate x fold fit in cross-validation and one split x learner x
#' kernel choice in [reproduce_paper()], whose `chunk_size` argument, when
#' given, wins over the option. Results do not depend on the plan or the
#' chunk size: every task brings its own random stream.
#'
#' **Failures.** A future that fails (an error that escapes the tasks, a
#' worker or job that died, was cancelled or ran out of time, a job that
#' could not be submitted) stops the call with an error of class
#' `kmaha_plan_error` that gives the cause, then says how many futures had
#' finished, failed, were still running (not waited for; under
#' \pkg{future.batchtools} with their scheduler job ids, to cancel them, and
#' the registry folders they keep) or had not started. A job that ended
#' without a result (cancelled, killed, out of time or memory) is named
#' with its scheduler id and the end of its log, and its batchtools
#' registry (job script and log) is kept, moved to `<registry>-lost`, which
#' the error names (class `kmaha_lost_job` too). A job template that
#' batchtools cannot find is named with the places it looked in (class
#' `kmaha_template_error` too), and a scheduler plan that cannot list your
#' jobs because `USER` is unset stops before anything is submitted; both
#' are `kmaha_plan_error`s as well. A worker that cannot
#' load kmaha or another package it needs gives an error (class
#' `kmaha_worker_error`) saying what to install where, whatever the
#' backend's wording. [reproduce_paper()] adds which cells were affected and
#' how to resume from its `checkpoint`.
#'
#' **Threads.** See [kmaha_threads()]: inside a scheduler's job kmaha's
#' thread count follows the job's allocation and never exceeds it.
#'
#' `vignette("scaling", package = "kmaha")` has the recipes: workers over
#' ssh, one Slurm job holding many cores, and one Slurm job per future with
#' the package's template `system.file("templates", "slurm.tmpl", package =
#' "kmaha")`.
#'
#' @name kmaha-plans
#' @seealso [kmaha_threads()], [reproduce_paper()], [cv_kernel()].
#' @examples
#' x <- iris[, 1:4]
#' y <- iris$Species
#' kern <- lapply(c(0.5, 2), rbf_kernel)
#' a <- kmaha(x, y, learner = "dne", kernel = "cv", kernels = kern, cv_folds = 3, seed = 1)
#' # two fold fits per future: six futures instead of one, the same choice
#' old <- options(kmaha.chunk_size = 2)
#' b <- kmaha(x, y, learner = "dne", kernel = "cv", kernels = kern, cv_folds = 3, seed = 1)
#' options(old)
#' identical(a$kernel_choice$cv$accuracy, b$kernel_choice$cv$accuracy)
#' # On a Slurm cluster, from a session on the login node:
#' if (FALSE) {
#'   future::plan(future.batchtools::batchtools_slurm,
#'                template = system.file("templates", "slurm.tmpl", package = "kmaha"),
#'                resources = list(ncpus = 1, walltime = 3600, memory = 2048))
#'   fit <- kmaha(x, y, kernel = "cv")                # at most 2 jobs
#'   res <- reproduce_paper(checkpoint = "repro-ckpt") # 50 jobs
#' }
NULL

# TRUE when the plan's futures are scheduler jobs (see ?kmaha-plans): a
# future.batchtools plan, or the option kmaha.scheduler.  The kernel-choice
# engine uses it to send a whole kernel choice as one future.
plan_is_scheduler <- function() {
  # A plan that evaluates in this process (also inside a job, where the
  # nested plan is sequential) is never a scheduler.
  if (plan_is_local()) return(FALSE)
  opt <- getOption("kmaha.scheduler")
  if (!is.null(opt)) {
    if (!is.logical(opt) || length(opt) != 1L || is.na(opt)) {
      stopf("Option `kmaha.scheduler` must be TRUE, FALSE or NULL (NULL: TRUE for future.batchtools plans), not %s; reset it with options(kmaha.scheduler = NULL).",
            deparse1(opt))
    }
    return(opt)
  }
  inherits(future::plan("next"), "batchtools")
}

# The chunk size the user set: option kmaha.chunk_size (tasks per future),
# or NULL.
chunk_size_option <- function() {
  v <- getOption("kmaha.chunk_size")
  if (is.null(v)) return(NULL)
  if (!is_count(v)) {
    stopf("Option `kmaha.chunk_size` must be a single whole number >= 1 (the tasks each future carries), not %s; reset it with options(kmaha.chunk_size = NULL).",
          deparse1(v))
  }
  as.integer(min(v, .Machine$integer.max))
}

# On a scheduler, reproduce_paper() sends at most this many futures (jobs),
# each with at least `scheduler_min_tasks` tasks when there are that many:
# the full reproduction (4320 tasks) goes as 50 jobs of 86-87 tasks, about
# a minute and a half of work each on the project's machine
# (bench/slurm.R), against a job's start-up of a few seconds.
scheduler_max_futures <- 50L
scheduler_min_tasks <- 40L
# On local workers, reproduction tasks go in small chunks, so that a free
# worker takes the next one (tasks differ a lot in cost).
local_cells_per_future <- 8L

# The futures for `n` tasks: a list of contiguous index vectors, one per
# future.  `kind` is "round" (one round of cross-validation tasks, i.e.
# candidate x fold fits) or "cells" (reproduce_paper() tasks).  A chunk
# size (tasks per future: `chunk_size`, else the option kmaha.chunk_size)
# decides when given; else the plan does:
#
# | plan                      | "round"                 | "cells"                        |
# |---------------------------|-------------------------|--------------------------------|
# | sequential                | 1 future                | 1 future                       |
# | local workers (multisession, multicore, cluster) | one per worker | 8 tasks per future |
# | scheduler (plan_is_scheduler()) | 1 future (job) per round | n %/% 40 futures, at most 50 |
#
# No result depends on the split: every task brings its own random stream.
plan_split <- function(n, kind = c("round", "cells"), chunk_size = NULL,
                       local = plan_is_local(), scheduler = !local && plan_is_scheduler(),
                       workers = future::nbrOfWorkers()) {
  kind <- match.arg(kind)
  if (n < 1L) return(list())
  size <- chunk_size %||% chunk_size_option()
  k <- if (!is.null(size)) {
    ceiling(n / size)
  } else if (local) {
    1
  } else if (scheduler) {
    if (kind == "round") 1 else min(scheduler_max_futures, max(1, n %/% scheduler_min_tasks))
  } else {
    # (a plan may have Inf workers)
    if (kind == "round") min(n, max(1, workers)) else ceiling(n / local_cells_per_future)
  }
  split_even(n, max(1, min(n, k)))
}

# 1:n in k contiguous chunks whose sizes differ by at most one (so none
# exceeds ceiling(n / k)).
split_even <- function(n, k) {
  ends <- floor(seq_len(k) * n / k)
  starts <- c(0, ends[-k]) + 1
  lapply(seq_len(k), function(i) seq.int(starts[i], ends[i]))
}

# --------------------------------------------------------------------------
# Sending the work.

# One round of tasks on the plan: the tasks `ids` are cut into chunks by
# plan_split(n, "round") (one per worker on local cores, one per round on
# a scheduler, or the option kmaha.chunk_size) and chunk_call(ids, job,
# seeds, progress) runs each chunk, with `seeds` the tasks' random streams.
# Returns chunk_call()'s results, one list element per chunk, in order.
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
plan_chunks <- function(ids, chunk_call, job, seeds, progress, packages = character(),
                        chunk_size = NULL, label = "kmaha-cv") {
  if (!length(ids)) return(list())
  chunks <- plan_split(length(ids), "round", chunk_size = chunk_size)
  run_futures(chunks, function(ch) as.call(list(chunk_call, ids[ch], job, seeds[ch], progress)),
              packages = packages, label = label)
}

# lapply(X, FUN, ...) on the plan: the elements are cut into chunks by
# plan_split(n, "cells") (or `chunk_size` elements per future), each chunk
# one future that runs FUN on its elements in turn.  With `seed` TRUE (or a
# number) each element runs on its own L'Ecuyer-CMRG stream, drawn from
# this session's generator (or from the number), whatever the chunks; the
# caller's random state is left as it was.  Returns the list of results in
# the order of X; a failure is a kmaha_plan_error whose fields index X (see
# run_futures()).
plan_lapply <- function(X, FUN, ..., seed = FALSE, chunk_size = NULL,
                        packages = character(), label = "kmaha") {
  n <- length(X)
  if (!n) return(list())
  seeds <- if (isFALSE(seed)) NULL else element_seeds(n, seed)
  args <- list(...)
  chunks <- plan_split(n, "cells", chunk_size = chunk_size)
  out <- run_futures(chunks, function(ch) {
    as.call(c(list(lapply_chunk_call, X[ch], FUN, if (!is.null(seeds)) seeds[ch]), args))
  }, packages = packages, label = label)
  unlist(out, recursive = FALSE, use.names = FALSE)
}

# What a future of plan_lapply() runs (base R only: see above).
lapply_chunk_call <- function(X, FUN, seeds, ...) {
  out <- vector("list", length(X))
  if (is.null(seeds)) {
    for (i in seq_along(X)) out[i] <- list(FUN(X[[i]], ...))
    return(out)
  }
  genv <- globalenv()
  had <- exists(".Random.seed", envir = genv, inherits = FALSE)
  old <- if (had) get(".Random.seed", envir = genv, inherits = FALSE)
  kind <- RNGkind()
  on.exit({
    if (had) {
      assign(".Random.seed", old, envir = genv)
    } else {
      suppressWarnings(RNGkind(kind[1], kind[2], kind[3]))
      if (exists(".Random.seed", envir = genv, inherits = FALSE)) rm(".Random.seed", envir = genv)
    }
  }, add = TRUE)
  for (i in seq_along(X)) {
    assign(".Random.seed", seeds[[i]], envir = genv)
    out[i] <- list(FUN(X[[i]], ...))
  }
  out
}

# n successive L'Ecuyer-CMRG streams, from a number drawn from this
# session's generator (seed = TRUE) or from `seed`; the session's random
# state is put back, so only the draw of that number advances it.
element_seeds <- function(n, seed = TRUE) {
  env <- globalenv()
  s0 <- if (isTRUE(seed)) sample.int(.Machine$integer.max, 1L) else as.integer(seed)
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  caller <- if (had) get(".Random.seed", envir = env, inherits = FALSE)
  kind <- RNGkind()
  on.exit({
    if (had) {
      assign(".Random.seed", caller, envir = env)
    } else {
      suppressWarnings(RNGkind(kind[1], kind[2], kind[3]))
      if (exists(".Random.seed", envir = env, inherits = FALSE)) rm(".Random.seed", envir = env)
    }
  }, add = TRUE)
  set.seed(s0, kind = "L'Ecuyer-CMRG")
  s <- get(".Random.seed", envir = env, inherits = FALSE)
  out <- vector("list", n)
  for (i in seq_len(n)) {
    s <- parallel::nextRNGStream(s)
    out[[i]] <- s
  }
  out
}

# Runs one future per chunk, make_call(chunk) its expression (the work
# written in, no globals; kmaha and `packages` loaded on the worker), and
# returns the futures' values in the order of the chunks.  The futures are
# labelled "<label>-<i>of<n>" (a scheduler's job names).  Finished futures
# are collected as they finish (not in order), so that a failure shows at
# once; a failure (a future that cannot be created or submitted, an error
# in it, a worker or job that died or was cancelled) stops the call with a
# kmaha_plan_error: the cause's message (with the install hint when a
# package is missing, see worker_error()), then which futures had finished,
# failed, were still running (not waited for: under a scheduler their jobs
# go on) or had not been started.  Its fields `failed`, `running`,
# `not_started` and `finished` list the task positions (indices into the
# chunks' union), `cause` is the original condition.
run_futures <- function(chunks, make_call, packages = character(), label = "kmaha") {
  pkgs <- unique(c("kmaha", packages))
  n <- length(chunks)
  labels <- if (n == 1L) label else sprintf("%s-%dof%d", label, seq_len(n), n)
  fs <- vector("list", n)
  values <- vector("list", n)
  # "queued" (not created yet), "running", "finished", "failed"
  state <- rep("queued", n)
  cause <- NULL
  scheduler <- plan_is_scheduler()
  check_scheduler_user()
  # Polling: a local future's resolved() costs microseconds; a scheduler's
  # reads files of its registry, so it is polled less often.
  max_sleep <- if (scheduler) 1 else 0.02
  last_poll <- -Inf
  collect <- function(i) {
    # A scheduler's job that ended without a result: said here at once
    # (future.batchtools would first wait about a minute for its log).
    lost <- lost_job_error(fs[[i]])
    if (!is.null(lost)) {
      state[i] <<- "failed"
      if (is.null(cause)) cause <<- lost
      return(invisible())
    }
    v <- try_step(list(future::value(fs[[i]])), function(e) e)
    if (inherits(v, "error")) {
      state[i] <<- "failed"
      if (is.null(cause)) cause <<- v
    } else {
      values[i] <<- v
      state[i] <<- "finished"
    }
  }
  poll <- function() {
    last_poll <<- proc.time()[["elapsed"]]
    done <- FALSE
    for (i in which(state == "running")) {
      r <- try_step(future::resolved(fs[[i]]), function(e) TRUE)
      if (isTRUE(r)) {
        collect(i)
        done <- TRUE
        if (!is.null(cause)) break
      }
    }
    done
  }
  for (i in seq_len(n)) {
    f <- try_step(future::future(make_call(chunks[[i]]), substitute = FALSE, globals = FALSE,
                                 packages = pkgs, seed = FALSE, label = labels[i]),
                  function(e) e)
    if (inherits(f, "error")) {
      state[i] <- "failed"
      cause <- f
      break
    }
    fs[[i]] <- f
    state[i] <- "running"
    if (!scheduler || proc.time()[["elapsed"]] - last_poll >= 1) poll()
    if (!is.null(cause)) break
  }
  delay <- 0.002
  while (is.null(cause) && any(state == "running")) {
    if (poll()) {
      delay <- 0.002
    } else {
      Sys.sleep(delay)
      delay <- min(max_sleep, delay * 1.5)
    }
  }
  if (!is.null(cause)) {
    cause <- template_error(cause)
    # What else had finished by now (not waited for).
    for (i in which(state == "running")) {
      if (isTRUE(try_step(future::resolved(fs[[i]]), function(e) TRUE))) {
        v <- if (is.null(lost_job_error(fs[[i]]))) {
          try_step(list(future::value(fs[[i]])), function(e) e)
        }
        state[i] <- if (!is.list(v) || inherits(v, "error")) "failed" else "finished"
      }
    }
    # In this process (a sequential plan) the error is the task's own.
    if (plan_is_local()) stop(worker_error(cause))
    stop(plan_error(cause, chunks, state, labels, fs))
  }
  values
}

# The error of run_futures(): see there.
plan_error <- function(cause, chunks, state, labels, fs) {
  e <- worker_error(cause)
  tasks <- function(s) sort(unlist(chunks[state == s], use.names = FALSE))
  n <- length(chunks)
  count <- function(s) sum(state == s)
  named <- function(s, what, after = "") {
    k <- count(s)
    if (!k) return(NULL)
    shown <- utils::head(labels[state == s], 6L)
    sprintf("%d %s (%s%s)%s", k, what, paste(shown, collapse = ", "), if (k > 6L) ", ..." else "",
            after)
  }
  were <- function(s) if (count(s) == 1L) "was" else "were"
  status <- c(named("failed", "failed"),
              if (count("finished")) sprintf("%d had finished", count("finished")),
              named("running", paste(were("running"), "still running"), ", not waited for"),
              if (count("queued")) sprintf("%d %s not started", count("queued"), were("queued")))
  msg <- sprintf("%s\nThe work went to the plan (%s) as %d future%s: %s.%s",
                 conditionMessage(e), plan_name(), n, if (n == 1L) "" else "s",
                 paste(status, collapse = "; "), running_jobs_hint(fs[state == "running"]))
  structure(class = unique(c(class(e)[class(e) %in% c("kmaha_worker_error", "kmaha_template_error",
                                                        "kmaha_lost_job")],
                             "kmaha_plan_error", "kmaha_error", "error", "condition")),
            list(message = msg, call = NULL, cause = cause, worker_message = conditionMessage(e),
                 failed = tasks("failed"), running = tasks("running"),
                 not_started = tasks("queued"), finished = tasks("finished"),
                 futures = table(factor(state, c("finished", "failed", "running", "queued")))))
}

# Under future.batchtools: the scheduler's ids of the jobs still running
# and the registry folders they keep, so the user can cancel them.
running_jobs_hint <- function(fs) {
  fs <- Filter(function(f) inherits(f, "BatchtoolsFuture"), fs)
  if (!length(fs) || !requireNamespace("batchtools", quietly = TRUE)) return("")
  info <- lapply(fs, function(f) {
    reg <- f$config$reg
    id <- try_step(batchtools::getJobTable(f$config$jobid, reg = reg)$batch.id, function(e) NA_character_)
    list(id = id, dir = try_step(reg$file.dir, function(e) NA_character_))
  })
  ids <- unlist(lapply(info, `[[`, "id"))
  ids <- ids[!is.na(ids)]
  dirs <- unlist(lapply(info, `[[`, "dir"))
  dirs <- dirs[!is.na(dirs)]
  paste0(
    if (length(ids)) sprintf(" Their scheduler job%s (%s) go%s on; cancel %s with your scheduler (e.g. scancel %s under Slurm) if you do not need %s.",
                             if (length(ids) == 1L) "" else "s", paste(ids, collapse = ", "),
                             if (length(ids) == 1L) "es" else "", if (length(ids) == 1L) "it" else "them",
                             paste(ids, collapse = " "), if (length(ids) == 1L) "it" else "them"),
    if (length(dirs)) sprintf(" Their batchtools registr%s stay%s in %s.",
                              if (length(dirs) == 1L) "y" else "ies",
                              if (length(dirs) == 1L) "s" else "",
                              paste(unique(dirname(dirs)), collapse = ", ")))
}

# The batchtools plans whose cluster functions list the user's jobs with
# the scheduler's command for $USER (squeue --user=$USER, qstat -u $USER,
# qselect -u $USER, bjobs -u $USER): with USER unset they take every
# running job for a lost one.
user_listed_plans <- c("batchtools_slurm", "batchtools_sge", "batchtools_torque",
                       "batchtools_lsf", "batchtools_openlava")

check_scheduler_user <- function() {
  if (inherits(future::plan("next"), user_listed_plans) && !nzchar(Sys.getenv("USER"))) {
    stop(plan_setup_error(sprintf(
      "The environment variable USER is not set, and the plan (%s) lists your jobs with the scheduler's command for $USER (Slurm: squeue --user=$USER): it would take every running job for a lost one. Set it before the jobs start, e.g. Sys.setenv(USER = Sys.info()[[\"user\"]]).",
      plan_name())))
  }
}

# An error of the plan's set-up, found before any future was created: a
# kmaha_plan_error like those of run_futures() (no future ran, none is
# running).
plan_setup_error <- function(msg, cause = NULL) {
  structure(class = c("kmaha_plan_error", "kmaha_error", "error", "condition"),
            list(message = msg, call = NULL, cause = cause, worker_message = msg,
                 failed = integer(), running = integer(), not_started = integer(),
                 finished = integer(), futures = NULL))
}

# A batchtools plan whose job template cannot be found fails with
# batchtools' or future.batchtools' own words ("'nzchar(template)' is not
# TRUE", "Failed to locate a batchtools template file", "must point to a
# readable template file"): the error that names
# the template and the places batchtools looked in (its documented search
# order, ?batchtools::makeClusterFunctionsSlurm).  Any other error is
# returned as it is.
template_error <- function(e) {
  plan <- future::plan("next")
  if (!inherits(plan, "batchtools")) return(e)
  msg <- conditionMessage(e)
  said <- c("nzchar(template)", "must point to a readable template file",
            "Failed to locate a batchtools template file")
  if (!any(vapply(said, grepl, NA, x = msg, fixed = TRUE)) &&
      !grepl("\\.tmpl.*(does not exist|not readable)|(does not exist|not readable).*\\.tmpl", msg)) {
    return(e)
  }
  template <- plan_template(plan)
  if (!is.null(template) && !is.character(template)) return(e)
  type <- sub("^batchtools_", "", plan_name())
  places <- template_places(template %||% type)
  errorCondition(
    sprintf("The plan (%s) found no job template %s. %s Give the template's path, e.g. future::plan(future.batchtools::batchtools_slurm, template = system.file(\"templates\", \"slurm.tmpl\", package = \"kmaha\"), resources = ...) for kmaha's Slurm template (vignette(\"scaling\", package = \"kmaha\")). (batchtools said: %s)",
            plan_name(),
            if (is.null(template)) sprintf("(none was given, so batchtools looked for one named \"%s\")", type) else
              sprintf("\"%s\"", template),
            places, trimws(msg)),
    class = c("kmaha_template_error", "kmaha_error"), call = NULL)
}

# The `template` argument of a batchtools plan (NULL when not given).
plan_template <- function(plan) {
  tw <- attr(plan, "tweaks")
  if (!is.null(tw) && "template" %in% names(tw)) return(tw$template)
  f <- formals(plan)
  if ("template" %in% names(f)) {
    v <- tryCatch(eval(f$template, baseenv()), error = function(e) NULL)
    if (is.character(v) || is.null(v)) return(v)
  }
  NULL
}

# Where batchtools looks for a template `name`: a file when it ends in
# ".tmpl", else its search order.
template_places <- function(name) {
  if (grepl("\\.tmpl$", name)) {
    path <- if (grepl("^(/|~)", name)) path.expand(name) else file.path(getwd(), name)
    return(sprintf("It is read as a file, and %s does not exist or cannot be read.", path))
  }
  home <- path.expand("~")
  env <- Sys.getenv("R_BATCHTOOLS_SEARCH_PATH")
  config <- Sys.getenv("XDG_CONFIG_HOME", file.path(home, ".config"))
  places <- c(
    if (nzchar(env)) file.path(env, sprintf("batchtools.%s.tmpl", name)),
    file.path(getwd(), sprintf("batchtools.%s.tmpl", name)),
    file.path(config, "batchtools", sprintf("%s.tmpl", name)),
    file.path(home, sprintf(".batchtools.%s.tmpl", name)),
    file.path("/etc/xdg/batchtools", sprintf("%s.tmpl", name)),
    sprintf("%s (batchtools' own templates)",
            file.path(system.file(package = "batchtools"), "templates", sprintf("%s.tmpl", name))))
  sprintf("batchtools looked for it in: %s.", paste(places, collapse = ", "))
}

# For a future.batchtools future whose job has ended without a result (the
# job was cancelled, killed, ran out of time or memory, or its node failed;
# or R could not start the job's work), the error that says so, with the
# scheduler's job id and state and the end of the job's log; NULL for any
# other future.  The job's registry (its script, its log) is kept for the
# user, moved aside to "<registry>-lost" so that future.batchtools no
# longer finds it (it would wait about a minute for a log when it
# finalizes the future), and the error says where it is.
lost_job_error <- function(f) {
  if (!inherits(f, "BatchtoolsFuture") || !requireNamespace("batchtools", quietly = TRUE)) {
    return(NULL)
  }
  reg <- f$config$reg
  id <- f$config$jobid
  if (is.null(reg) || is.null(id)) return(NULL)
  expired <- try_step(nrow(batchtools::findExpired(id, reg = reg)) > 0L, function(e) FALSE)
  if (!expired) return(NULL)
  jt <- try_step(batchtools::getJobTable(id, reg = reg), function(e) NULL)
  batch_id <- if (!is.null(jt$batch.id)) as.character(jt$batch.id[1]) else NA_character_
  said <- scheduler_job_state(batch_id)
  dir <- reg$file.dir
  log <- job_log_file(jt, dir)
  kept <- NA_character_
  if (!is.null(dir) && dir.exists(dir)) {
    kept <- paste0(dir, "-lost")
    if (dir.exists(kept)) kept <- tempfile(paste0(basename(dir), "-lost-"), tmpdir = dirname(dir))
    if (!file.rename(dir, kept)) {
      # (another file system: the log alone is copied, the registry goes)
      kept <- tempfile(paste0(basename(dir), "-lost-"))
      dir.create(kept)
      if (!is.na(log) && file.exists(log)) file.copy(log, kept)
      unlink(dir, recursive = TRUE)
    }
    if (!is.na(log)) log <- file.path(kept, substring(log, nchar(dir) + 2L))
    if (!is.na(log) && !file.exists(log)) log <- file.path(kept, basename(log))
  }
  tail <- if (!is.na(log) && file.exists(log)) {
    lines <- readLines(log, warn = FALSE)
    lines <- utils::tail(lines[nzchar(trimws(lines))], 8L)
    if (length(lines)) sprintf(" The end of its log (%s):\n%s", log, paste(lines, collapse = "\n")) else
      sprintf(" Its log (%s) is empty.", log)
  } else {
    sprintf(" It wrote no log%s (it never started, or was stopped before R began).",
            if (!is.na(log)) sprintf(" (looked for %s)", log) else "")
  }
  where <- if (!is.na(kept)) {
    sprintf("\nIts batchtools registry (job script and log) is kept in %s; delete it when you have read it.", kept)
  } else ""
  errorCondition(
    sprintf("The job of the future '%s' (%s%s) ended without a result: it was cancelled, killed, ran out of time or memory, its node failed, or R could not run it.%s%s",
            f$label %||% "?",
            if (is.na(batch_id)) "scheduler job id unknown" else sprintf("scheduler job %s", batch_id),
            if (!is.na(said)) sprintf(", state %s", said) else "", tail, where),
    class = c("kmaha_lost_job", "kmaha_error"), call = NULL, registry = kept)
}

# The log file of a batchtools job (a row of getJobTable()) in the
# registry folder `dir`: batchtools records its name only once the job has
# run, and otherwise writes it as "logs/<job.hash>.log" (the file the
# job's script sends its output to).
job_log_file <- function(jt, dir) {
  if (is.null(jt) || is.null(dir) || !nrow(jt)) return(NA_character_)
  name <- if (!is.null(jt$log.file) && !is.na(jt$log.file[1])) {
    jt$log.file[1]
  } else if (!is.null(jt$job.hash) && !is.na(jt$job.hash[1])) {
    sprintf("%s.log", jt$job.hash[1])
  } else {
    return(NA_character_)
  }
  file.path(dir, "logs", name)
}

# The state Slurm reports for job `id` (while it still lists the job), or
# NA.
scheduler_job_state <- function(id) {
  if (is.na(id) || !nzchar(Sys.which("squeue"))) return(NA_character_)
  out <- try_step(suppressWarnings(system2("squeue", c("-h", "--states=all", "-j", shQuote(id),
                                                        "-o", shQuote("%T")),
                                           stdout = TRUE, stderr = FALSE)),
                  function(e) character())
  out <- trimws(out)
  if (length(out) && nzchar(out[1]) && grepl("^[A-Z_]+$", out[1])) out[1] else NA_character_
}

# A worker's error as kmaha reports it: one that says a package cannot be
# loaded, in any backend's wording, becomes missing_package_error(); any
# other is returned as it is.  Wordings: R's "there is no package called
# 'x'" (future's cluster, multisession and callr workers; also in the log
# of a batchtools job whose Rscript lacks batchtools), batchtools' "Failed
# to load packages: x" and "Failed to load namespaces: x".
worker_error <- function(e) {
  if (inherits(e, "kmaha_worker_error")) return(e)
  msg <- conditionMessage(e)
  pats <- c("there is no package called .([A-Za-z][A-Za-z0-9.]*[A-Za-z0-9]).",
            "Failed to load (?:packages|namespaces): ([A-Za-z][A-Za-z0-9.]*[A-Za-z0-9])")
  for (p in pats) {
    m <- regmatches(msg, regexec(p, msg, perl = TRUE))[[1]]
    if (length(m) == 2L) return(missing_package_error(m[2]))
  }
  e
}

# Evaluates `expr`, turning the error of a worker that cannot load a
# package into one that says what to install where.
with_worker_errors <- function(expr) {
  try_step(expr, function(e) stop(worker_error(e)))
}

missing_package_error <- function(pkg) {
  how <- if (pkg == "kmaha") {
    v <- as.character(utils::packageVersion("kmaha"))
    sprintf("Install kmaha %s (this session's version) on every worker machine, e.g. R CMD INSTALL kmaha_%s.tar.gz there", v, v)
  } else {
    sprintf("Install it on every worker machine with install.packages(\"%s\")", pkg)
  }
  where <- if (inherits(future::plan("next"), "batchtools")) {
    "point the jobs to a library that holds it: the jobs inherit this session's environment variables (sbatch passes them on), so Sys.setenv(R_LIBS = \"/shared/R/library\") before the jobs start, or export R_LIBS in the job template"
  } else {
    "point the workers to a library that holds it, e.g. future::plan(future::cluster, workers = parallelly::makeClusterPSOCK(hosts, rscript_libs = c(\"/path/to/library\", \"*\")))"
  }
  errorCondition(
    sprintf("The workers of the future plan (%s) cannot load %s: it is not installed in the R library they use. %s, or %s.",
            plan_name(),
            if (pkg == "kmaha") "kmaha" else
              sprintf("the package '%s' (used by your learner, lambda or kernel function, or by the plan)", pkg),
            how, where),
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
  gl <- try_step(
    globals::globalsOf(quote(.kmaha_shipped_fun), envir = probe, recursive = TRUE,
                       mustExist = FALSE), function(e) NULL)
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
    v <- try_step(get(nm, envir = frame, inherits = FALSE), function(e) e)
    if (inherits(v, "error")) next
    if (is.function(v) && !is.primitive(v)) v <- rebase_function(v, state)
    assign(nm, v, envir = to)
  }
  to
}
