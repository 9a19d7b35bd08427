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
  expect_error(kmaha:::score_chunk_call(1L, job, list(), function(...) NULL), msg, fixed = TRUE)
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

# ---------------------------------------------------------------------------
# How the work is cut into futures (plan_split()), and what a failure says.

# Contiguous chunks that cover 1:n once.
expect_partition <- function(chunks, n) {
  expect_identical(unlist(chunks), seq_len(n))
  expect_true(all(lengths(chunks) >= 1L))
}

test_that("the work is cut into futures to suit the plan", {
  split <- kmaha:::plan_split
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  old_opt <- options(kmaha.chunk_size = NULL, kmaha.scheduler = NULL)
  on.exit(options(old_opt), add = TRUE)
  # in this process: one future
  expect_length(split(21, "round"), 1L)
  expect_length(split(4320, "cells"), 1L)
  expect_false(kmaha:::plan_is_scheduler())
  # local workers: one future per worker and round; 8 cells per future
  for (n in c(1, 2, 5, 21, 105)) {
    ch <- split(n, "round", local = FALSE, scheduler = FALSE, workers = 4)
    expect_partition(ch, n)
    expect_length(ch, min(n, 4))
  }
  ch <- split(100, "cells", local = FALSE, scheduler = FALSE, workers = 2)
  expect_partition(ch, 100)
  expect_length(ch, 13L)
  expect_lte(max(lengths(ch)), 8L)
  # a plan with Inf workers (a batchtools plan treated as local workers)
  expect_length(split(21, "round", local = FALSE, scheduler = FALSE, workers = Inf), 21L)
  # a scheduler: one job per round; the full reproduction (9 datasets x 40
  # splits x 3 learners x 4 kernel choices) in at most 60 jobs, none small
  expect_length(split(105, "round", local = FALSE, scheduler = TRUE, workers = 100), 1L)
  full <- split(9 * 40 * 3 * 4, "cells", local = FALSE, scheduler = TRUE, workers = 100)
  expect_partition(full, 4320)
  expect_length(full, 50L)
  expect_gte(min(lengths(full)), 80L)
  one_dataset <- split(40 * 3 * 4, "cells", local = FALSE, scheduler = TRUE, workers = 100)
  expect_length(one_dataset, 12L)
  expect_gte(min(lengths(one_dataset)), 40L)
  expect_length(split(30, "cells", local = FALSE, scheduler = TRUE, workers = 100), 1L)
  # the chunk size, from the option or the argument, decides on every plan
  options(kmaha.chunk_size = 5)
  expect_length(split(21, "round"), 5L)
  expect_length(split(21, "round", local = FALSE, scheduler = TRUE), 5L)
  expect_lte(max(lengths(split(4320, "cells", local = FALSE, scheduler = TRUE))), 5L)
  expect_length(split(21, "round", chunk_size = 21), 1L)
  expect_length(split(21, "cells", chunk_size = 1), 21L)
  options(kmaha.chunk_size = 0)
  expect_error(split(21, "round"),
               "Option `kmaha.chunk_size` must be a single whole number >= 1 (the tasks each future carries), not 0; reset it with options(kmaha.chunk_size = NULL).",
               fixed = TRUE)
  options(kmaha.chunk_size = NULL)
  expect_error(reproduce_paper("iris", learners = "dne", kernels = "linear", splits = 1,
                               chunk_size = 0),
               "`chunk_size` must be a single whole number >= 1.", fixed = TRUE)
})

test_that("a plan counts as a scheduler when it is future.batchtools' or the option says so", {
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  old_opt <- options(kmaha.scheduler = TRUE)
  on.exit(options(old_opt), add = TRUE)
  # a plan in this process never is (nor the sequential plan inside a job)
  expect_false(kmaha:::plan_is_scheduler())
  skip_if_no_cluster()
  future::plan(future::cluster, workers = test_cluster())
  expect_true(kmaha:::plan_is_scheduler())
  options(kmaha.scheduler = NULL)
  expect_false(kmaha:::plan_is_scheduler())
  options(kmaha.scheduler = "yes")
  expect_error(kmaha:::plan_is_scheduler(),
               "Option `kmaha.scheduler` must be TRUE, FALSE or NULL (NULL: TRUE for future.batchtools plans), not \"yes\"; reset it with options(kmaha.scheduler = NULL).",
               fixed = TRUE)
  options(kmaha.scheduler = NULL)
  skip_if_not_installed("future.batchtools")
  # (no job is submitted here)
  future::plan(future.batchtools::batchtools_slurm, resources = list(ncpus = 1))
  expect_true(kmaha:::plan_is_scheduler())
  options(kmaha.scheduler = FALSE)
  expect_false(kmaha:::plan_is_scheduler())
  options(kmaha.scheduler = NULL)
  future::plan(future.batchtools::batchtools_local)
  expect_false(kmaha:::plan_is_scheduler())
})

test_that("results do not depend on the chunk size or the plan", {
  skip_if_no_cluster()
  old_opt <- options(kmaha.chunk_size = NULL, kmaha.scheduler = NULL)
  on.exit(options(old_opt), add = TRUE)
  cv <- function() {
    fit <- kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = "cv",
                 kernels = lapply(c(0.3, 1, 3), rbf_kernel), cv_folds = 4, seed = 5)
    list(cv = fit$kernel_choice$cv[c("accuracy", "best", "folds")], L = coef(fit))
  }
  args <- list(datasets = "iris", learners = "dne", kernels = c("linear", "unweighted"),
               splits = 3, base_kernels = lapply(c(0.5, 2), rbf_kernel))
  repro <- function(...) {
    r <- as.data.frame(unclass(do.call(reproduce_paper, c(args, list(...)))),
                       stringsAsFactors = FALSE)
    r$seconds <- NULL
    r
  }
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  ref_cv <- cv()
  ref_repro <- repro()
  # sequential, one task per future
  options(kmaha.chunk_size = 1)
  expect_identical(cv(), ref_cv)
  expect_identical(repro(), ref_repro)
  options(kmaha.chunk_size = NULL)
  future::plan(future::cluster, workers = test_cluster())
  for (size in list(NULL, 1, 3, 1000)) {
    options(kmaha.chunk_size = size)
    expect_identical(cv(), ref_cv)
  }
  options(kmaha.chunk_size = NULL, kmaha.scheduler = TRUE)  # one future per round
  expect_identical(cv(), ref_cv)
  expect_identical(repro(), ref_repro)                      # one future
  options(kmaha.scheduler = NULL)
  for (size in list(NULL, 1, 4)) expect_identical(repro(chunk_size = size), ref_repro)
})

# A cluster of two local workers of its own, with worker 2 killed
# (SIGKILL) when the first task reports its progress: a worker lost
# part-way through reproduce_paper().
lost_worker_run <- function(args) {
  cl <- parallelly::makeClusterPSOCK(2L, verbose = FALSE)
  on.exit(try(parallel::stopCluster(cl), silent = TRUE), add = TRUE)
  pids <- unlist(parallel::clusterEvalQ(cl, Sys.getpid()))
  old <- future::plan(future::cluster, workers = cl)
  on.exit(future::plan(old), add = TRUE)
  old_opt <- options(progressr.enable = TRUE)
  on.exit(options(old_opt), add = TRUE)
  killed <- FALSE
  err <- tryCatch(withCallingHandlers(
    do.call(reproduce_paper, args),
    progression = function(p) {
      if (!killed && identical(p$type, "update")) {
        killed <<- TRUE
        tools::pskill(pids[2], tools::SIGKILL)
      }
    }), error = function(e) e)
  # The call has stopped, but the other worker may still be running its
  # task: stop it too.  (It may have saved one more cell before it died;
  # the caller counts the cells saved as a lower bound.)
  tools::pskill(pids, tools::SIGKILL)
  err
}

test_that("a worker lost in reproduce_paper() is reported with how to resume", {
  skip_if_no_cluster()
  skip_on_os("windows")
  args <- list(datasets = "iris", learners = "dne", kernels = c("linear", "unweighted"),
               splits = 4, base_kernels = lapply(c(0.5, 2), rbf_kernel), chunk_size = 1)
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  ref <- do.call(reproduce_paper, args)
  dir <- tempfile("kmaha-ckpt-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  err <- lost_worker_run(c(args, list(checkpoint = dir)))
  expect_s3_class(err, "kmaha_plan_error")
  msg <- conditionMessage(err)
  expect_match(msg, "^reproduce_paper\\(\\) stopped: a future of the plan failed\\. ")
  expect_match(msg, "\nThe work went to the plan (cluster) as 8 futures: ", fixed = TRUE)
  expect_match(msg, "[0-9]+ failed \\(kmaha-repro-[0-9]of8")
  expect_match(msg, sprintf("To resume, run the same reproduce_paper() call again with checkpoint = \"%s\": it reads the cells saved there",
                            normalizePath(dir)), fixed = TRUE)
  expect_gte(nrow(err$failed_cells), 1L)
  expect_identical(names(err$failed_cells), c("dataset", "split", "learner", "kernel"))
  # resuming (here in this process) gives the rows of an uninterrupted run,
  # and reads every cell saved (those counted now, and any one a dying
  # worker saved after the count)
  saved <- length(list.files(dir, pattern = "^cell_"))
  expect_gte(saved, 1L)
  res <- do.call(reproduce_paper, c(args, list(checkpoint = dir)))
  expect_gte(attr(res, "run_info")$cells_from_checkpoint, saved)
  expect_lt(attr(res, "run_info")$cells_from_checkpoint, nrow(ref))
  rows <- function(r) {
    df <- as.data.frame(unclass(r), stringsAsFactors = FALSE)
    df$seconds <- NULL
    df
  }
  expect_identical(rows(res), rows(ref))
  # without a checkpoint the error says to use one
  err <- lost_worker_run(args)
  expect_s3_class(err, "kmaha_plan_error")
  expect_match(conditionMessage(err),
               "The cells computed so far are lost: run reproduce_paper() with `checkpoint = \"<directory>\"` (on a file system the workers share), so that a run that stops can be resumed by running it again.",
               fixed = TRUE)
})

test_that("a failed future names the futures still running and those not started", {
  skip_if_no_cluster()
  skip_on_os("windows")
  skip_if(!nzchar(Sys.which("mkfifo")), "no mkfifo")
  cl <- parallelly::makeClusterPSOCK(2L, verbose = FALSE)
  on.exit(try(parallel::stopCluster(cl), silent = TRUE), add = TRUE)
  old <- future::plan(future::cluster, workers = cl)
  on.exit(future::plan(old), add = TRUE)
  # element 1 runs until the test is done with it (it waits on a FIFO that
  # only the test's exit writes: no clock decides what is still running),
  # element 2 loses its worker
  gate <- tempfile("kmaha-gate-")
  expect_identical(system2("mkfifo", shQuote(gate)), 0L)
  on.exit({
    # release element 1 (if it is waiting), before the cluster stops
    try({
      con <- fifo(gate, "w", blocking = FALSE)
      writeLines("go", con)
      close(con)
    }, silent = TRUE)
    unlink(gate)
  }, add = TRUE, after = FALSE)
  f <- eval(bquote(function(i) {
    if (i == 2) tools::pskill(Sys.getpid(), tools::SIGKILL)
    if (i == 1) {
      con <- fifo(.(gate), "r", blocking = TRUE)
      readLines(con, n = 1L)
      close(con)
    }
    i
  }), globalenv())
  err <- tryCatch(kmaha:::plan_lapply(1:6, f, chunk_size = 1, label = "t"),
                  error = function(e) e)
  expect_s3_class(err, "kmaha_plan_error")
  # (a future sent to the dead worker after it fails too)
  expect_identical(err$failed[1], 2L)
  expect_identical(err$running, 1L)
  expect_identical(sort(c(err$failed, err$running, err$not_started, err$finished)), 1:6)
  # (future's own words for the lost worker first)
  expect_match(conditionMessage(err), "^[^\n]*t-2of6")
  expect_match(conditionMessage(err),
               "\nThe work went to the plan \\(cluster\\) as 6 futures: [12] failed \\(t-2of6(, t-3of6)?\\); 1 was still running \\(t-1of6\\), not waited for; [34] were not started\\.$")
})

test_that("a missing package gets kmaha's install hint in every backend's wording", {
  hint <- function(msg) kmaha:::worker_error(simpleError(msg))
  e <- hint("there is no package called \u2018kmahaNoSuchPkg\u2019")
  expect_s3_class(e, "kmaha_worker_error")
  expect_match(conditionMessage(e), "cannot load the package 'kmahaNoSuchPkg' (used by your learner, lambda or kernel function, or by the plan): it is not installed in the R library they use. Install it on every worker machine with install.packages(\"kmahaNoSuchPkg\")",
               fixed = TRUE)
  # batchtools' wordings
  e <- hint("BatchtoolsFutureError for BatchtoolsSlurmFuture ('kmaha-cv-1of2') captured by batchtools: Failed to load packages: kmaha")
  expect_match(conditionMessage(e), "cannot load kmaha: it is not installed in the R library they use. Install kmaha",
               fixed = TRUE)
  e <- hint("Failed to load namespaces: mypkg.helpers, other")
  expect_match(conditionMessage(e), "cannot load the package 'mypkg.helpers'", fixed = TRUE)
  # a lost job whose log says R lacked batchtools on the node
  e <- hint("The job of the future 'kmaha-cv' (scheduler job 7, state FAILED) ended without a result. The end of its log (x.log):\nError in loadNamespace(x) : there is no package called 'batchtools'")
  expect_match(conditionMessage(e), "cannot load the package 'batchtools'", fixed = TRUE)
  other <- simpleError("something else")
  expect_identical(hint("something else"), other)
  # a plan in this process reports the package the futures need
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  call_ids <- function(ids, job, seeds, progress) ids
  err <- expect_error(kmaha:::plan_chunks(1:3, call_ids, NULL, list(NULL, NULL, NULL), NULL,
                                          packages = "kmahaNoSuchPkg"),
                      class = "kmaha_worker_error")
  expect_match(conditionMessage(err),
               "The workers of the future plan (sequential) cannot load the package 'kmahaNoSuchPkg'",
               fixed = TRUE)
  skip_if_not_installed("future.batchtools")
  # batchtools' own wording, from a job run by batchtools in this process
  dir <- tempfile("kmaha-bt-")
  dir.create(dir)
  old_wd <- setwd(dir)
  on.exit(setwd(old_wd), add = TRUE)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  future::plan(future.batchtools::batchtools_local)
  err <- expect_error(suppressWarnings(
    kmaha:::plan_chunks(1:3, call_ids, NULL, list(NULL, NULL, NULL), NULL,
                        packages = "kmahaNoSuchPkg")),
    class = "kmaha_worker_error")
  expect_match(conditionMessage(err),
               "The workers of the future plan (batchtools_local) cannot load the package 'kmahaNoSuchPkg'",
               fixed = TRUE)
  # for batchtools plans the advice is about the jobs' library
  expect_match(conditionMessage(err), "Sys.setenv(R_LIBS = ", fixed = TRUE)
})

test_that("a Slurm plan without USER stops before submitting, saying to set it", {
  skip_if_not_installed("future.batchtools")
  user <- Sys.getenv("USER", unset = NA)
  Sys.unsetenv("USER")
  on.exit(if (!is.na(user)) Sys.setenv(USER = user), add = TRUE)
  old <- future::plan(future.batchtools::batchtools_slurm, resources = list(ncpus = 1))
  on.exit(future::plan(old), add = TRUE)
  expect_error(kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = "cv",
                     kernels = lapply(c(0.5, 2), rbf_kernel), cv_folds = 2, seed = 1),
               "The environment variable USER is not set, and the plan (batchtools_slurm) lists your jobs with the scheduler's command for $USER (Slurm: squeue --user=$USER): it would take every running job for a lost one. Set it before the jobs start, e.g. Sys.setenv(USER = Sys.info()[[\"user\"]]).",
               fixed = TRUE)
})

test_that("a thread setting shipped to a worker inside a scheduler's job stays within its allocation", {
  skip_if_no_cluster()
  # a worker that runs as inside a Slurm job given one CPU
  cl <- parallelly::makeClusterPSOCK(
    1L, verbose = FALSE, rscript_envs = c(SLURM_JOB_ID = "1", SLURM_CPUS_PER_TASK = "1"))
  on.exit(parallel::stopCluster(cl), add = TRUE)
  old <- future::plan(future::cluster, workers = cl)
  on.exit(future::plan(old), add = TRUE)
  old_opt <- options(kmaha.num_threads = 2)
  on.exit(options(old_opt), add = TRUE)
  seen <- function(ids, job, seeds, progress) {
    old <- kmaha:::worker_enter(job$settings)
    on.exit(options(old))
    c(option = as.integer(getOption("kmaha.num_threads")), threads = kmaha::kmaha_threads(),
      explicit = kmaha:::resolve_threads(2L))
  }
  environment(seen) <- globalenv()
  got <- kmaha:::plan_chunks(1L, seen, list(settings = kmaha:::worker_settings()),
                             list(NULL), NULL)[[1]]
  expect_identical(got, c(option = 2L, threads = 1L, explicit = 2L))
})

if (!is.null(cluster_env$cl)) {
  parallel::stopCluster(cluster_env$cl)
  cluster_env$cl <- NULL
}
