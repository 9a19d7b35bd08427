# Time limits (setTimeLimit(), which R.utils::withTimeout() uses) inside the
# compiled code: R checks them where the core polls for interrupts, and they
# must arrive as the ordinary R error ("reached elapsed time limit") that an
# error handler catches, with nothing printed that names the glue (no
# .Call(`_kmaha_cpp_...`)); a user interrupt stays an interrupt.  Each
# computation below would run for minutes.

test_that("a time limit inside the core is R's own error, caught by tryCatch(error = )", {
  skip_on_os("windows")
  skip_on_cran()
  res <- run_in_child(function() {
    library(kmaha)
    set.seed(1)
    n <- 2000
    x <- matrix(rnorm(n * 10), n)
    y <- factor(rep(1:2, n / 2))
    xx <- matrix(rnorm(3000 * 5), 3000)
    limited <- function(expr) {
      t0 <- Sys.time()
      setTimeLimit(elapsed = 1, transient = TRUE)
      out <- tryCatch({
        force(expr)
        "finished"
      }, error = function(e) e, interrupt = function(e) "interrupt")
      setTimeLimit()
      list(out = out, printed = utils::capture.output(print(out)),
           seconds = as.numeric(difftime(Sys.time(), t0, units = "secs")))
    }
    runs <- list(
      nca = limited(nca(x, y, max_iter = 1e6, tol = 1e-300)),
      knca = limited(knca(x[1:800, ], y[1:800], max_iter = 1e6, tol = 1e-300)),
      lmnn = limited(lmnn(x, y, dim = 5, max_iter = 1e6, tol = 1e-300)),
      kpca = limited(kpca(xx, rbf_kernel(1), rank = 200, tol = 1e-300,
                          method = "truncated")),
      knn = limited(knn_classify(xx, factor(rep(1:2, 1500)), xx[rep(1:3000, 400), ], k = 3))
    )
    # try() prints the error as R does at the top level
    setTimeLimit(elapsed = 1, transient = TRUE)
    tried <- utils::capture.output(try(nca(x, y, max_iter = 1e6, tol = 1e-300)),
                                   type = "message")
    setTimeLimit()
    # the script goes on: a small fit afterwards
    after <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)
    list(runs = runs, tried = tried, after = after$L)
  })
  for (nm in names(res$runs)) {
    r <- res$runs[[nm]]
    expect_true(inherits(r$out, "error"), label = paste(nm, "gave", format(r$out)))
    if (!inherits(r$out, "error")) next
    expect_identical(conditionMessage(r$out), "reached elapsed time limit", label = nm)
    expect_null(conditionCall(r$out))
    expect_false(any(grepl(".Call|_kmaha_|cpp_", r$printed)), label = nm)
    # polls are at most ~0.1 s apart; allow for a loaded machine (not under
    # AddressSanitizer, whose instrumented products are many times slower
    # between two polls)
    if (!grepl("asan", Sys.getenv("LD_PRELOAD"), fixed = TRUE)) expect_lt(r$seconds, 5, label = nm)
  }
  expect_identical(res$tried, "Error : reached elapsed time limit")
  ref <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)$L
  expect_equal(res$after, ref)
})

test_that("an uncaught time limit prints R's message without internal names", {
  skip_on_os("windows")
  skip_on_cran()
  script <- tempfile(fileext = ".R")
  writeLines(c(
    "library(kmaha)",
    "set.seed(1)",
    "x <- matrix(rnorm(2000 * 10), 2000)",
    "y <- factor(rep(1:2, 1000))",
    "setTimeLimit(elapsed = 1)",
    "fit <- nca(x, y, max_iter = 1e6, tol = 1e-300)",
    "cat('not reached\\n')"), script)
  out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"), shQuote(script),
                                  stdout = TRUE, stderr = TRUE,
                                  env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))))
  expect_identical(attr(out, "status"), 1L)
  expect_identical(as.character(out), c("Error: reached elapsed time limit",
                                        "Execution halted"))
})

test_that("a user interrupt inside the core is still an interrupt", {
  skip_on_os("windows")
  skip_on_cran()
  res <- run_in_child(function() {
    library(kmaha)
    set.seed(1)
    x <- matrix(rnorm(2000 * 10), 2000)
    y <- factor(rep(1:2, 1000))
    system(sprintf("(sleep 0.5; kill -INT %d) >/dev/null 2>&1 &", Sys.getpid()))
    got <- withCallingHandlers(
      tryCatch(nca(x, y, max_iter = 1e6, tol = 1e-300),
               interrupt = function(e) class(e),
               error = function(e) c("error", conditionMessage(e))),
      # an error handler that does not exit sees no error on the way
      error = function(e) stop("an interrupt must not be an error"))
    list(got = got, after = nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)$L)
  })
  expect_identical(res$got, c("interrupt", "condition"))
  expect_equal(res$after, nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)$L)
})
