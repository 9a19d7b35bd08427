# Cluster runs that just work: under future::plan(cluster) with two local
# workers (the mechanism of remote machines: separate R processes that see
# nothing of this session but what is sent), the session's kmaha options
# reach the workers, the user's functions bring their helpers, failed fold
# fits are reported, the session's random generator kind survives, and a
# worker without kmaha says so.

skip_if_no_cluster <- function() {
  skip_on_cran()
  skip_if_not_installed("parallelly")
  skip_if_not(nzchar(find.package("kmaha", lib.loc = .libPaths(), quiet = TRUE)[1] %||% ""),
              "kmaha must be installed for cluster workers")
}

# One PSOCK cluster of two local workers for the tests of this file (stopped
# at its end),
# started without KMAHA_DATA_DIR, KMAHA_ISA and KMAHA_NUM_THREADS in their
# environment and with an empty user cache, as on another machine: what
# they know of the session's settings must come with the work.
cluster_env <- new.env()
test_cluster <- function() {
  if (is.null(cluster_env$cl)) {
    vars <- c("KMAHA_DATA_DIR", "KMAHA_ISA", "KMAHA_NUM_THREADS")
    old <- Sys.getenv(vars, unset = NA)
    Sys.unsetenv(vars)
    on.exit(if (any(!is.na(old))) do.call(Sys.setenv, as.list(old[!is.na(old)])), add = TRUE)
    cluster_env$cache <- tempfile("kmaha-cache")
    dir.create(cluster_env$cache)
    cluster_env$cl <- parallelly::makeClusterPSOCK(
      2L, rscript_envs = c(R_USER_CACHE_DIR = cluster_env$cache), verbose = FALSE)
  }
  cluster_env$cl
}

# Runs `code` under the sequential plan and under the test cluster; returns
# both results.
both_plans <- function(code) {
  code <- substitute(code)
  env <- parent.frame()
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  seq_res <- eval(code, env)
  future::plan(future::cluster, workers = test_cluster())
  list(sequential = seq_res, cluster = eval(code, env))
}

test_that("the session's data path and kmaha options reach cluster workers", {
  skip_if_no_cluster()
  # A yeast.csv of the right shape in a directory known only to this
  # session's option (the workers have neither KMAHA_DATA_DIR nor a cache).
  dir <- tempfile("kmaha-data")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  set.seed(11)
  lev <- c("CYT", "ERL", "EXC", "ME1", "ME2", "ME3", "MIT", "NUC", "POX", "VAC")
  cls <- rep(lev, length.out = 1484)
  feats <- matrix(round(runif(1484 * 8), 2), 1484, 8) + match(cls, lev) / 10
  d <- data.frame(feats, class = cls)
  names(d)[1:8] <- c("mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc")
  utils::write.csv(d, file.path(dir, "yeast.csv"), row.names = FALSE)
  data_var <- Sys.getenv("KMAHA_DATA_DIR", unset = NA)
  Sys.unsetenv("KMAHA_DATA_DIR")
  on.exit(if (!is.na(data_var)) Sys.setenv(KMAHA_DATA_DIR = data_var), add = TRUE)
  old_opt <- options(kmaha.data_path = dir, kmaha.isa = "default", kmaha.num_threads = 1)
  on.exit(options(old_opt), add = TRUE)

  res <- both_plans(as.data.frame(reproduce_paper(
    "yeast", learners = "dne", kernels = "linear", splits = 2, seed = 2))[, 1:5])
  expect_identical(res$cluster, res$sequential)
  expect_false(anyNA(res$cluster$accuracy))

  # The options as a learner function sees them on the workers.
  seen <- function(x, y, ...) {
    if (!identical(getOption("kmaha.isa"), "default") ||
        !identical(kmaha::kmaha_threads(), 1L)) {
      stop("the session's kmaha options are not set here")
    }
    diag(ncol(x))
  }
  environment(seen) <- globalenv()
  fits <- both_plans(kmaha(iris[, 1:4], iris$Species, learner = seen, kernel = "cv",
                           kernels = lapply(c(0.5, 2), rbf_kernel), cv_folds = 2,
                           seed = 1)$kernel_choice$cv)
  expect_identical(fits$cluster$accuracy, fits$sequential$accuracy)
  expect_identical(nrow(fits$cluster$errors), 0L)
})

test_that("a learner function brings the helpers it finds in the global environment", {
  skip_if_no_cluster()
  # As if typed at the top level: helpers, a constant, a learner that calls
  # them, and a closure made by a top-level factory.
  g <- globalenv()
  defs <- c("kmaha_tc_scale", "kmaha_tc_helper", "kmaha_tc_inner", "kmaha_tc_learner",
            "kmaha_tc_factory")
  on.exit(rm(list = intersect(defs, ls(g)), envir = g), add = TRUE)
  evalq({
    kmaha_tc_scale <- 0.5
    kmaha_tc_inner <- function(r) diag(r) * kmaha_tc_scale
    kmaha_tc_helper <- function(x) kmaha_tc_inner(ncol(x))
    kmaha_tc_learner <- function(x, y, ...) kmaha_tc_helper(x)
    kmaha_tc_factory <- function(power) {
      w <- power + 1
      function(x, y, ...) kmaha_tc_helper(x) * w
    }
  }, g)
  learner <- get("kmaha_tc_learner", g)
  made <- get("kmaha_tc_factory", g)(2)
  kern <- lapply(c(0.5, 2), rbf_kernel)
  run <- function(f) {
    fit <- kmaha(iris[, 1:4], iris$Species, learner = f, kernel = "cv",
                 kernels = kern, cv_folds = 2, seed = 4)
    list(cv = fit$kernel_choice$cv$accuracy, errors = fit$kernel_choice$cv$errors,
         L = coef(fit))
  }
  res <- both_plans(list(plain = run(learner), closure = run(made)))
  expect_identical(res$cluster, res$sequential)
  expect_identical(nrow(res$cluster$plain$errors), 0L)
  expect_identical(nrow(res$cluster$closure$errors), 0L)
  # The user's objects are left as they were.
  expect_identical(environment(learner), g)
  expect_identical(parent.env(environment(made)), g)
})

test_that("failed fold fits are reported under a cluster plan", {
  skip_if_no_cluster()
  # Fails on the KPCA coordinates of the small bandwidth (many components),
  # works on the others.
  picky <- function(x, y, ...) {
    if (ncol(x) > 60) stop("too many coordinates for this learner")
    diag(ncol(x))
  }
  environment(picky) <- globalenv()
  kern <- lapply(c(0.05, 5), rbf_kernel)
  res <- both_plans({
    w <- NULL
    cv <- withCallingHandlers(
      cv_kernel(scale(iris[, 1:4]), iris$Species, picky, kern, folds = 3, seed = 2,
                strategy = "exhaustive"),
      warning = function(cond) {
        w <<- c(w, conditionMessage(cond))
        invokeRestart("muffleWarning")
      })
    list(cv = cv, warnings = w, printed = utils::capture.output(print(cv)),
         summary = utils::capture.output(print(summary(cv))))
  })
  for (r in res) {
    expect_match(r$warnings, "3 of the 6 cross-validation fits (candidate x fold) failed", fixed = TRUE,
                 all = FALSE)
    expect_identical(r$cv$errors$candidate, c(1L, 1L, 1L))
    expect_match(r$cv$errors$message, "too many coordinates", fixed = TRUE)
    expect_match(r$printed, "3 fit(s) failed and were left out", fixed = TRUE, all = FALSE)
    expect_match(r$summary, "3 fit(s) failed and were left out of the choice", fixed = TRUE,
                 all = FALSE)
    expect_identical(r$cv$best, 2L)
  }
  expect_identical(res$cluster$cv$accuracy, res$sequential$cv$accuracy)
})

test_that("a parallel run leaves the session's random generator kind as it was", {
  skip_if_no_cluster()
  env <- globalenv()
  had <- exists(".Random.seed", envir = env, inherits = FALSE)
  saved <- if (had) get(".Random.seed", envir = env)
  kind <- RNGkind()
  on.exit({
    suppressWarnings(RNGkind(kind[1], kind[2], kind[3]))
    if (had) assign(".Random.seed", saved, envir = env)
  }, add = TRUE)
  # A session that has not drawn a random number yet.
  fresh <- function() {
    suppressWarnings(RNGkind("default", "default", "default"))
    if (exists(".Random.seed", envir = env, inherits = FALSE)) rm(".Random.seed", envir = env)
  }
  folds <- function() {
    kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = "cv",
          kernels = lapply(c(0.5, 2), rbf_kernel), cv_folds = 3,
          seed = 3)$kernel_choice$cv$folds
  }
  fresh()
  reference <- folds()
  old <- future::plan(future::cluster, workers = test_cluster())
  on.exit(future::plan(old), add = TRUE)
  fresh()
  reproduce_paper("iris", learners = "dne", kernels = "linear", splits = 2)
  expect_identical(RNGkind(), c("Mersenne-Twister", "Inversion", "Rejection"))
  expect_false(exists(".Random.seed", envir = env, inherits = FALSE))
  expect_identical(folds(), reference)
  # The same through cross-validation without a seed, which draws the
  # tasks' streams from the session's generator.
  fresh()
  cv_kernel(scale(iris[, 1:4]), iris$Species, "dne", lapply(c(0.5, 2), rbf_kernel),
            folds = 2)
  expect_identical(RNGkind(), c("Mersenne-Twister", "Inversion", "Rejection"))
})

test_that("a worker without kmaha gives a message that says what to install where", {
  skip_if_no_cluster()
  skip_on_os("windows")
  skip_if(Sys.which("env") == "", "needs env(1)")
  # A worker whose libraries are this session's less those holding kmaha;
  # the site and user environment files, which could add them back, are
  # skipped.
  libs <- .libPaths()
  without <- libs[!dir.exists(file.path(libs, "kmaha"))]
  needed <- c("future", "future.apply", "progressr")
  have <- vapply(needed, function(p) any(dir.exists(file.path(without, p))), NA)
  skip_if_not(all(have), "future, future.apply and progressr share a library with kmaha here")
  cl <- parallelly::makeClusterPSOCK(
    1L, verbose = FALSE,
    rscript = c("env", "R_ENVIRON=/dev/null", "R_ENVIRON_USER=/dev/null", "R_LIBS=",
                "R_LIBS_USER=", paste0("R_LIBS_SITE=", paste(without, collapse = ":")),
                file.path(R.home("bin"), "Rscript")))
  on.exit(parallel::stopCluster(cl), add = TRUE)
  expect_false(parallel::clusterEvalQ(cl, requireNamespace("kmaha", quietly = TRUE))[[1]])
  old <- future::plan(future::cluster, workers = cl)
  on.exit(future::plan(old), add = TRUE)
  err <- expect_error(suppressWarnings(
    kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = "cv",
          kernels = lapply(c(0.5, 2), rbf_kernel), cv_folds = 2, seed = 1)),
    class = "kmaha_worker_error")
  expect_match(conditionMessage(err),
               "The workers of the future plan (cluster) cannot load kmaha: it is not installed in the R library they use. Install kmaha",
               fixed = TRUE)
  expect_match(conditionMessage(err), "rscript_libs", fixed = TRUE)
  # (newer versions of future also warn about the failed launch)
  expect_error(suppressWarnings(
    reproduce_paper("iris", learners = "dne", kernels = "linear", splits = 1)),
    "cannot load kmaha", class = "kmaha_worker_error")
})

test_that("a worker with another kmaha version is named as such", {
  # The task wrappers' first line runs on the worker; here the session
  # claims another version.
  job <- list(settings = kmaha:::worker_settings())
  here <- job$settings$version
  job$settings$version <- "0.0.1"
  job$settings$version_error <- gsub(here, "0.0.1", job$settings$version_error, fixed = TRUE)
  msg <- sprintf("A worker of the future plan runs kmaha %s, but this session runs kmaha 0.0.1: install the same version of kmaha on every worker (e.g. R CMD INSTALL kmaha_0.0.1.tar.gz in the library the workers use).",
                 here)
  expect_error(kmaha:::cv_chunk_call(1L, job, list(), function(...) NULL), msg, fixed = TRUE)
  expect_error(kmaha:::repro_cell_call(1L, job, function(...) NULL), msg, fixed = TRUE)
})

test_that("ship_closures() copies globals of user functions and nothing else", {
  g <- globalenv()
  on.exit(rm(list = intersect(c("kmaha_sc_a", "kmaha_sc_f"), ls(g)), envir = g), add = TRUE)
  evalq({
    kmaha_sc_a <- 7
    kmaha_sc_f <- function(x) stats::median(x) + kmaha_sc_a + sd(x)
  }, g)
  spec <- list(fun = get("kmaha_sc_f", g), argname = kmaha::rbf_kernel, n = 1)
  out <- kmaha:::ship_closures(spec)
  e <- environment(out$fun)
  expect_false(identical(e, g))
  expect_identical(parent.env(e), g)
  expect_identical(sort(ls(e)), "kmaha_sc_a")
  # sd() is found in package:stats, which the workers are asked to attach.
  expect_true("stats" %in% attr(out, "packages"))
  # Functions from a namespace (here the test's own) are left alone.
  expect_identical(out$argname, spec$argname)
  expect_identical(out$n, 1)
  expect_equal(out$fun(c(1, 2, 3)), get("kmaha_sc_f", g)(c(1, 2, 3)))
  # Serialized and read in a fresh environment chain it still finds its
  # global: the copy travels with it.
  back <- unserialize(serialize(out$fun, NULL))
  rm("kmaha_sc_a", envir = g)
  expect_equal(back(c(1, 2, 3)), 2 + 7 + 1)
})

if (!is.null(cluster_env$cl)) {
  parallel::stopCluster(cluster_env$cl)
  cluster_env$cl <- NULL
}
