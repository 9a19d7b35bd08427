# The interrupt policy (kmaha/common.hpp): long computations poll for a user
# interrupt between chunks of work and stop at once, also from inside R's
# L-BFGS-B, and the R session stays usable afterwards.  Each computation below
# would run for minutes; a child R process sends itself SIGINT after `delay`
# seconds and records how long the call took to return.

test_that("long fits stop within a second of SIGINT and R stays usable", {
  skip_on_os("windows")
  skip_on_cran()
  res <- run_in_child(function() {
    library(kmaha)
    delay <- 0.5
    stop_after <- function(expr) {
      system(sprintf("(sleep %g; kill -INT %d) >/dev/null 2>&1 &", delay,
                     Sys.getpid()))
      t0 <- Sys.time()
      out <- tryCatch({
        force(expr)
        "finished"
      }, interrupt = function(e) "interrupted")
      list(outcome = out,
           lag = as.numeric(difftime(Sys.time(), t0, units = "secs")) - delay)
    }
    set.seed(1)
    n <- 2000
    x <- matrix(rnorm(n * 10), n)
    y <- factor(rep(1:2, n / 2))
    xx <- matrix(rnorm(3000 * 5), 3000)
    yy <- factor(rep(1:2, 1500))
    runs <- list(
      nca = stop_after(nca(x, y, max_iter = 1e6, tol = 1e-300)),
      knca = stop_after(knca(x[1:800, ], y[1:800], max_iter = 1e6, tol = 1e-300)),
      lmnn_L = stop_after(lmnn(x, y, dim = 5, max_iter = 1e6, tol = 1e-300)),
      kpca = stop_after(kpca(xx, rbf_kernel(1), rank = 200, tol = 1e-300,
                             method = "truncated")),
      knn = stop_after(knn_classify(xx, yy, xx[rep(1:3000, 40), ], k = 3))
    )
    # The session is usable: a small fit afterwards gives a finite result.
    after <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)
    list(runs = runs, after = after$L)
  })
  for (nm in names(res$runs)) {
    expect_identical(res$runs[[nm]]$outcome, "interrupted", label = nm)
    # Polls are at most ~0.1 s apart; allow for a loaded machine.
    expect_lt(res$runs[[nm]]$lag, 1.5, label = nm)
  }
  ref <- nca(iris[, 1:4], iris$Species, dim = 2, max_iter = 30)$L
  expect_equal(res$after, ref)
})
