# Runs fun(...) in a fresh R process that loads kmaha from the same library
# paths as this one, so that a crash or a signal in the child shows up as a
# test failure instead of ending the test run.  No time limit: how long the
# child takes depends on the machine and its load, and no test may fail for
# that (a computation that should have been stopped and was not ends on its
# own, and its test fails on the outcome).
run_in_child <- function(fun, args = list()) {
  testthat::skip_if_not_installed("callr")
  # The functions' environments (a test file's) are not serialised with them.
  environment(fun) <- globalenv()
  args <- lapply(args, function(a) {
    if (is.function(a)) environment(a) <- globalenv()
    a
  })
  callr::r(fun, args = args, libpath = .libPaths(),
           env = c(callr::rcmd_safe_env(), KMAHA_NUM_THREADS = "2"))
}

# For a child R process (pass it in run_in_child()'s `args`): sends SIGINT
# to the calling R process once that process has used `cpu` more seconds of
# CPU time (all its threads together), from a background shell that reads
# the process's CPU time in /proc.  The signal thus lands after a fixed
# amount of the computation's own work, not after a wall-clock delay, which
# a loaded machine would fill with other processes' work.  Where there is
# no /proc (not Linux), it falls back to a wall-clock delay of `cpu`
# seconds and returns FALSE: the signal may then land before the
# computation gets far.  Returns TRUE when the CPU-time trigger is used.
sigint_after_cpu <- function(cpu) {
  pid <- Sys.getpid()
  stat <- sprintf("/proc/%d/stat", pid)
  if (!file.exists(stat) || !nzchar(Sys.which("awk"))) {
    system(sprintf("(sleep %g; kill -INT %d) >/dev/null 2>&1 &", cpu, pid))
    return(FALSE)
  }
  # utime and stime: fields 14 and 15, i.e. 12 and 13 after "(comm) "
  ticks <- function() {
    f <- strsplit(sub(".*\\) ", "", readLines(stat, warn = FALSE)), " ")[[1]]
    sum(as.numeric(f[12:13]))
  }
  hz <- as.numeric(system("getconf CLK_TCK", intern = TRUE))
  target <- ticks() + ceiling(cpu * hz)
  system(sprintf(paste0(
    "(f=%s; while [ -r $f ] && [ \"$(awk '{ sub(/.*\\) /, \"\"); print $12 + $13 }' $f)\" -lt %.0f ];",
    " do sleep 0.05; done; [ -r $f ] && kill -INT %d) >/dev/null 2>&1 &"),
    stat, target, pid))
  TRUE
}

# For a child R process: the names of the functions on the call stack.  A
# condition handler calls it to tell where the condition was signalled:
# inside the compiled code, a cpp_*() function (the exports' R wrappers)
# is on the stack, or core_run(), which signals again R's errors raised
# there (R/core.R).
stack_functions <- function() {
  vapply(sys.calls(), function(cl) {
    if (is.name(cl[[1]])) as.character(cl[[1]]) else ""
  }, "")
}

# AddressSanitizer reserves terabytes of address space for its shadow
# memory, so a child process under `ulimit -v` cannot even start: the
# address-space tests skip when the sanitizer runtime is preloaded
# (make sanitize).
skip_if_sanitized <- function() {
  testthat::skip_if(grepl("asan", Sys.getenv("LD_PRELOAD"), fixed = TRUE),
                    "address-space limits do not apply under AddressSanitizer")
}
