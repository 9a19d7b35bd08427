# Runs fun(...) in a fresh R process that loads kmaha from the same library
# paths as this one, so that a crash or a signal in the child shows up as a
# test failure instead of ending the test run.
run_in_child <- function(fun, args = list(), timeout = 300) {
  testthat::skip_if_not_installed("callr")
  callr::r(fun, args = args, libpath = .libPaths(), timeout = timeout,
           env = c(callr::rcmd_safe_env(), KMAHA_NUM_THREADS = "2"))
}
