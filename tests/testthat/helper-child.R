# Runs fun(...) in a fresh R process that loads kmaha from the same library
# paths as this one, so that a crash or a signal in the child shows up as a
# test failure instead of ending the test run.
run_in_child <- function(fun, args = list(), timeout = 300) {
  testthat::skip_if_not_installed("callr")
  # The function's environment (a test file's) is not serialised with it.
  environment(fun) <- globalenv()
  callr::r(fun, args = args, libpath = .libPaths(), timeout = timeout,
           env = c(callr::rcmd_safe_env(), KMAHA_NUM_THREADS = "2"))
}

# AddressSanitizer reserves terabytes of address space for its shadow
# memory, so a child process under `ulimit -v` cannot even start: the
# address-space tests skip when the sanitizer runtime is preloaded
# (make sanitize).
skip_if_sanitized <- function() {
  testthat::skip_if(grepl("asan", Sys.getenv("LD_PRELOAD"), fixed = TRUE),
                    "address-space limits do not apply under AddressSanitizer")
}
