#' Number of threads used by kmaha
#'
#' One setting governs every multi-threaded loop of the package's C++ core:
#' Gram and kernel matrices, kernel PCA (exact and Nystrom) and its
#' projections, nearest-neighbour searches (kNN classification, target
#' neighbours, DNE's graph), kernel alignment, NCA and LMNN. Where a function
#' has a `num_threads` argument ([nca()], [knca()]), the argument wins;
#' otherwise the count comes from, in this order,
#' 1. the option `kmaha.num_threads` (e.g. `options(kmaha.num_threads = 4)`,
#'    or `kmaha_threads(4)`, which sets it),
#' 2. the environment variable `KMAHA_NUM_THREADS`,
#' 3. the default: inside a scheduler's job (Slurm, PBS/Torque, SGE, LSF:
#'    the process runs with `SLURM_JOB_ID`, `PBS_JOBID`, `JOB_ID` and
#'    `NSLOTS`, or `LSB_JOBID` set) the job's allocation as
#'    [parallelly::availableCores()] reads it (e.g. `SLURM_CPUS_PER_TASK`);
#'    elsewhere 2, or 1 on a machine with a single core
#'    ([future::availableCores()]): kmaha never uses more than 2 threads
#'    unless told to. (Of what availableCores() reads, the CPU affinity,
#'    which it gets by running the `nproc` program, is read once per
#'    session; options and environment variables count on every call.)
#'
#' Inside a scheduler's job the count never exceeds the job's allocation: an
#' option or environment variable that asks for more (also one set in the
#' session that submitted the job, whose `kmaha.*` options travel with the
#' work and whose environment variables `sbatch` passes on) is lowered to
#' the allocation, so a job never runs more threads than it was given CPUs.
#' Only an explicit `num_threads` argument is taken as it is.
#'
#' Results do not depend on the number of threads, except for rounding in
#' NCA's and LMNN's sums. Under a [future::plan()] with several workers,
#' [cv_kernel()] (and so [kmaha()] with `kernel = "cv"`) runs each fit on one
#' thread, since the workers already occupy the cores.
#'
#' @param n `NULL` to query the setting, or a whole number >= 1 to set the
#'   option `kmaha.num_threads` for the rest of the session.
#' @return `kmaha_threads()` returns the number of threads a call without an
#'   explicit `num_threads` would use; `kmaha_threads(n)` returns the previous
#'   value, invisibly.
#' @seealso [kmaha-plans] for running kmaha on a cluster or a scheduler.
#' @examples
#' kmaha_threads()
#' old <- kmaha_threads(1)
#' kmaha_threads()
#' kmaha_threads(old)
#' @export
kmaha_threads <- function(n = NULL) {
  if (is.null(n)) {
    alloc <- job_allocation()
    set <- thread_setting()$value
    if (!is.null(set)) return(if (is.null(alloc)) set else min(set, alloc))
    if (!is.null(alloc)) return(alloc)
    return(min(2L, available_cores()))
  }
  n <- check_count(n, "n")
  old <- kmaha_threads()
  options(kmaha.num_threads = n)
  invisible(old)
}

# The thread count set by the option kmaha.num_threads, else by the
# environment variable KMAHA_NUM_THREADS (validated): list(value, source),
# value NULL when neither is set.
thread_setting <- function() {
  opt <- getOption("kmaha.num_threads")
  if (!is.null(opt)) {
    if (!is_count(opt)) {
      stopf("Option `kmaha.num_threads` must be a single whole number >= 1, not %s; reset it with options(kmaha.num_threads = NULL).",
            deparse1(opt))
    }
    return(list(value = as.integer(opt), source = "option"))
  }
  env <- Sys.getenv("KMAHA_NUM_THREADS", "")
  if (nzchar(env)) {
    v <- suppressWarnings(as.numeric(env))
    if (!is_count(v)) {
      stopf("Environment variable KMAHA_NUM_THREADS must be a whole number >= 1, not \"%s\".",
            env)
    }
    return(list(value = as.integer(v), source = "environment"))
  }
  list(value = NULL, source = "default")
}

# Inside a scheduler's job, the CPUs the job was given (what
# availableCores() reads from the scheduler's variables, and never more
# than the machine or its cgroup has); NULL outside a job.
job_allocation <- function() {
  v <- Sys.getenv(c("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID", "NSLOTS"))
  in_job <- any(nzchar(v[c("SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID")])) ||
    (nzchar(v[["JOB_ID"]]) && nzchar(v[["NSLOTS"]]))
  if (!in_job) return(NULL)
  max(1L, available_cores())
}

# The CPUs this process may use, as future::availableCores() reads them
# (options, environment variables, cgroups, schedulers), with its "nproc"
# method (the CPU affinity, read by running the `nproc` program: about 10
# ms, which every call of a kmaha function paid through its context) run
# once per session: a process's affinity does not change while R runs.
available_cores <- function() {
  methods <- eval(formals(future::availableCores)$methods,
                  envir = environment(future::availableCores))
  n <- as.integer(future::availableCores(methods = setdiff(methods, "nproc")))
  if ("nproc" %in% methods) {
    if (is.null(kmaha_session$nproc)) {
      # (where nproc cannot tell, e.g. it is not installed, availableCores()
      # answers its default instead, named otherwise)
      v <- future::availableCores(methods = "nproc")
      kmaha_session$nproc <- if (identical(names(v), "nproc")) as.integer(v) else NA_integer_
    }
    if (!is.na(kmaha_session$nproc)) n <- min(n, kmaha_session$nproc)
  }
  max(1L, n)
}

# What kmaha reads once per session.
kmaha_session <- new.env(parent = emptyenv())

# The thread count of one call: the function's `num_threads` argument when
# given (validated), else the package setting.
resolve_threads <- function(num_threads = NULL, arg = "num_threads") {
  if (is.null(num_threads)) return(kmaha_threads())
  check_count(num_threads, arg)
}

is_count <- function(v) {
  is.numeric(v) && length(v) == 1L && !is.na(v) && is.finite(v) &&
    v == round(v) && v >= 1
}
