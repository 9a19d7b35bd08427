# The interrupt policy (kmaha/common.hpp): long computations poll for a user
# interrupt between chunks of work and stop there, also from inside the
# L-BFGS driver, and the R session stays usable afterwards.  Each
# computation below would run for 20 CPU seconds or more; a child R process
# has SIGINT sent to itself once the call has done two CPU seconds of its
# own work (sigint_after_cpu() in helper-child.R), which puts the signal in
# the long compiled loop whatever the machine's load (the work before that
# loop takes at most half a CPU second), and records where the interrupt
# was signalled.  Nothing here depends on the clock: how soon an
# interrupt stops a call is measured in bench/latency.R.

test_that("long fits stop on SIGINT inside the compiled code and R stays usable", {
  skip_on_os("windows")
  skip_on_cran()
  res <- run_in_child(function(sigint_after_cpu, stack_functions) {
    library(kmaha)
    stop_after <- function(expr) {
      where <- NULL
      cpu_trigger <- NA
      out <- tryCatch(withCallingHandlers({
        cpu_trigger <- sigint_after_cpu(2)
        force(expr)
        "finished"
      }, interrupt = function(e) where <<- stack_functions()),
      interrupt = function(e) "interrupted")
      list(outcome = out, cpu_trigger = cpu_trigger,
           in_core = any(startsWith(where, "cpp_")))
    }
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
      lmnn(small, iris$Species, dim = 2, max_iter = 5),
      kpca(small, rbf_kernel(1), rank = 2, method = "truncated"),
      knn_classify(small, iris$Species, small, k = 3))))
    runs <- list(
      nca = stop_after(nca(x, y, max_iter = 1e6, tol = 1e-300)),
      knca = stop_after(knca(x[1:800, ], y[1:800], max_iter = 1e6, tol = 1e-300)),
      lmnn_L = stop_after(lmnn(x[1:3000, ], y[1:3000], dim = 5, max_iter = 1e6,
                               tol = 1e-300)),
      kpca = stop_after(kpca(xx, rbf_kernel(1), rank = 1000, tol = 1e-300,
                             method = "truncated")),
      knn = stop_after(knn_classify(xx, yy, queries, k = 3))
    )
    # The session is usable: a small fit afterwards gives a finite result.
    after <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)
    list(runs = runs, after = after$L)
  }, args = list(sigint_after_cpu = sigint_after_cpu, stack_functions = stack_functions))
  for (nm in names(res$runs)) {
    r <- res$runs[[nm]]
    expect_identical(r$outcome, "interrupted", label = nm)
    # where /proc gives the process's CPU time, the signal came after two
    # CPU seconds of the call's work: inside its compiled loop
    if (isTRUE(r$cpu_trigger)) {
      expect_true(r$in_core, label = paste(nm, "was interrupted in the compiled code"))
    }
  }
  ref <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)$L
  expect_equal(res$after, ref)
})
