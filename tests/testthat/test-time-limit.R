# Time limits (setTimeLimit(), which R.utils::withTimeout() uses) inside the
# compiled code: R checks them where the core polls for interrupts, and they
# must arrive as the ordinary R error ("reached CPU time limit", "reached
# elapsed time limit") that an error handler catches, with nothing printed
# that names the glue (no .Call(`_kmaha_cpp_...`)); a user interrupt stays
# an interrupt.  Each computation below would run for 20 CPU seconds or more
# (nca on 5000 points, lmnn on 3000, knca, kpca with 1000 components, knn
# with 1.2 million queries).
#
# Nothing here depends on the clock or the machine's load.  The limits that
# must be reached inside the compiled code are CPU-time limits: they come
# after two CPU seconds of the call's own work, whatever else the machine
# runs, when every call is in its long compiled loop (the work before it,
# once a first small fit has loaded what fits need, takes at most half a
# CPU second: knca's kernel PCA; the R code between compiled calls a few
# hundredths).  An
# elapsed-time limit comes wherever a loaded machine has got the call to, so
# for it the test checks what holds wherever it arrives.  How soon a limit
# stops a call is measured in bench/latency.R.

test_that("a time limit inside the core is R's own error, caught by tryCatch(error = )", {
  skip_on_os("windows")
  skip_on_cran()
  res <- run_in_child(function(stack_functions) {
    library(kmaha)
    set.seed(1)
    x <- matrix(rnorm(5000 * 10), 5000)
    y <- factor(rep(1:2, 2500))
    xx <- matrix(rnorm(3000 * 5), 3000)
    yy <- factor(rep(1:2, 1500))
    queries <- xx[rep(1:3000, 400), ]
    # small fits first: they load what the long calls need
    small <- as.matrix(iris[, 1:4])
    invisible(suppressWarnings(list(
      nca(small, iris$Species, max_iter = 5),
      knca(small, iris$Species, max_iter = 5),
      lmnn(small, iris$Species, max_iter = 5),
      kpca(small, rbf_kernel(1), rank = 2, method = "truncated"),
      knn_classify(small, iris$Species, small, k = 3))))
    # where: the functions on the stack when the error was signalled
    limited <- function(expr, cpu = Inf, elapsed = Inf) {
      where <- NULL
      setTimeLimit(cpu = cpu, elapsed = elapsed, transient = TRUE)
      out <- tryCatch(withCallingHandlers({
        force(expr)
        "finished"
      }, error = function(e) if (is.null(where)) where <<- stack_functions()),
      error = function(e) e, interrupt = function(e) "interrupt")
      setTimeLimit()
      list(out = out, printed = utils::capture.output(print(out)),
           in_core = any(where == "core_run" | startsWith(where, "cpp_")))
    }
    long_nca <- function() nca(x, y, max_iter = 1e6, tol = 1e-300)
    runs <- suppressWarnings(list(
      nca = limited(long_nca(), cpu = 2),
      knca = limited(knca(x[1:800, ], y[1:800], max_iter = 1e6, tol = 1e-300), cpu = 2),
      lmnn = limited(lmnn(x[1:3000, ], y[1:3000], dim = 5, max_iter = 1e6, tol = 1e-300),
                     cpu = 2),
      kpca = limited(kpca(xx, rbf_kernel(1), rank = 1000, tol = 1e-300,
                          method = "truncated"), cpu = 2),
      knn = limited(knn_classify(xx, yy, queries, k = 3), cpu = 2)
    ))
    elapsed <- limited(long_nca(), elapsed = 1)
    # try() prints the error as R does at the top level
    setTimeLimit(cpu = 2, transient = TRUE)
    tried <- utils::capture.output(try(long_nca()), type = "message")
    setTimeLimit()
    # the script goes on: a small fit afterwards
    after <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)
    list(runs = runs, elapsed = elapsed, tried = tried, after = after$L)
  }, args = list(stack_functions = stack_functions))
  for (nm in names(res$runs)) {
    r <- res$runs[[nm]]
    expect_true(inherits(r$out, "error"), label = paste(nm, "gave", format(r$out)))
    if (!inherits(r$out, "error")) next
    expect_identical(conditionMessage(r$out), "reached CPU time limit", label = nm)
    expect_true(r$in_core, label = paste(nm, "reached its limit in the compiled code"))
    expect_null(conditionCall(r$out))
    expect_false(any(grepl(".Call|_kmaha_|cpp_", r$printed)), label = nm)
  }
  # Elapsed time: R's error, and nothing printed names the glue, wherever
  # the limit arrived; inside the compiled code, it carries no call.
  e <- res$elapsed$out
  expect_true(inherits(e, "error"), label = paste("elapsed limit gave", format(e)))
  if (inherits(e, "error")) {
    expect_identical(conditionMessage(e), "reached elapsed time limit")
    expect_false(any(grepl(".Call|_kmaha_|cpp_", res$elapsed$printed)))
    if (res$elapsed$in_core) expect_null(conditionCall(e))
  }
  expect_identical(res$tried, "Error : reached CPU time limit")
  ref <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)$L
  expect_equal(res$after, ref)
})

test_that("an uncaught time limit prints R's message without internal names", {
  skip_on_os("windows")
  skip_on_cran()
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(c(
    "library(kmaha)",
    "set.seed(1)",
    "x <- matrix(rnorm(5000 * 10), 5000)",
    "y <- factor(rep(1:2, 2500))",
    "small <- suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5))",
    "setTimeLimit(cpu = 2)",
    "fit <- nca(x, y, max_iter = 1e6, tol = 1e-300)",
    "cat('not reached\\n')"), script)
  out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), shQuote(script),
                                  stdout = TRUE, stderr = TRUE,
                                  env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))))
  expect_identical(attr(out, "status"), 1L)
  expect_identical(as.character(out), c("Error: reached CPU time limit",
                                        "Execution halted"))
})

test_that("a user interrupt inside the core is still an interrupt", {
  skip_on_os("windows")
  skip_on_cran()
  res <- run_in_child(function(sigint_after_cpu, stack_functions) {
    library(kmaha)
    set.seed(1)
    x <- matrix(rnorm(5000 * 10), 5000)
    y <- factor(rep(1:2, 2500))
    invisible(suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5)))
    where <- NULL
    cpu_trigger <- NA
    got <- withCallingHandlers(
      tryCatch(withCallingHandlers({
        cpu_trigger <- sigint_after_cpu(2)
        nca(x, y, max_iter = 1e6, tol = 1e-300)
      }, interrupt = function(e) where <<- stack_functions()),
      interrupt = function(e) class(e),
      error = function(e) c("error", conditionMessage(e))),
      # an error handler that does not exit sees no error on the way
      error = function(e) stop("an interrupt must not be an error"))
    list(got = got, cpu_trigger = cpu_trigger,
         in_core = any(startsWith(where, "cpp_")),
         after = nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)$L)
  }, args = list(sigint_after_cpu = sigint_after_cpu, stack_functions = stack_functions))
  expect_identical(res$got, c("interrupt", "condition"))
  # after two CPU seconds of the fit's own work, the fit is in its
  # compiled loop (where /proc gives the process's CPU time)
  if (isTRUE(res$cpu_trigger)) expect_true(res$in_core)
  expect_equal(res$after, nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)$L)
})
