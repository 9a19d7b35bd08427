# What a scheduler plan's errors say: the template that was not found and
# where batchtools looked; a lost job's log (its end quoted) and registry
# (kept, and named); every plan error classed.

# A fresh working directory for a batchtools plan (its registries go to
# .future/ there), restored with the plan and USER when the test ends.
local_batchtools <- function(env = parent.frame()) {
  dir <- tempfile("kmaha-bt-")
  dir.create(dir)
  old_wd <- setwd(dir)
  old_plan <- future::plan()
  user <- Sys.getenv("USER", unset = NA)
  if (!nzchar(Sys.getenv("USER"))) Sys.setenv(USER = Sys.info()[["user"]])
  withr::defer({
    future::plan(old_plan)
    setwd(old_wd)
    if (is.na(user)) Sys.unsetenv("USER") else Sys.setenv(USER = user)
    unlink(dir, recursive = TRUE)
  }, envir = env)
  dir
}

small_cv <- function() {
  kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = "cv",
        kernels = lapply(c(0.5, 2), rbf_kernel), cv_folds = 2, seed = 1)
}

test_that("a job template that is not found is named, with where batchtools looked", {
  skip_if_not_installed("future.batchtools")
  dir <- local_batchtools()
  future::plan(future.batchtools::batchtools_slurm, template = "slurmm",
               resources = list(ncpus = 1))
  err <- expect_error(small_cv(), class = "kmaha_template_error")
  expect_s3_class(err, "kmaha_plan_error")
  msg <- conditionMessage(err)
  expect_match(msg, "^The plan \\(batchtools_slurm\\) found no job template \"slurmm\"\\. batchtools looked for it in: ")
  expect_match(msg, file.path(normalizePath(dir), "batchtools.slurmm.tmpl"), fixed = TRUE)
  expect_match(msg, file.path(path.expand("~"), ".batchtools.slurmm.tmpl"), fixed = TRUE)
  expect_match(msg, "template = system.file(\"templates\", \"slurm.tmpl\", package = \"kmaha\")",
               fixed = TRUE)
  # a path to a file that is not there
  future::plan(future.batchtools::batchtools_slurm, template = "tmpl/slurm.tmpl",
               resources = list(ncpus = 1))
  err <- expect_error(small_cv(), class = "kmaha_template_error")
  expect_match(conditionMessage(err),
               sprintf("found no job template \"tmpl/slurm.tmpl\". It is read as a file, and %s does not exist or cannot be read.",
                       file.path(normalizePath(dir), "tmpl/slurm.tmpl")), fixed = TRUE)
})

test_that("a Slurm plan without USER gives a classed plan error", {
  skip_if_not_installed("future.batchtools")
  local_batchtools()
  Sys.unsetenv("USER")
  future::plan(future.batchtools::batchtools_slurm, resources = list(ncpus = 1))
  err <- expect_error(small_cv(), class = "kmaha_plan_error")
  expect_match(conditionMessage(err), "The environment variable USER is not set", fixed = TRUE)
  expect_length(err$running, 0L)
})

test_that("a killed job's error quotes its log and keeps its registry where it says", {
  skip_if_not_installed("future.batchtools")
  skip_on_os("windows")
  # (under make sanitize, with AddressSanitizer preloaded into R, the
  # forked batchtools job that kills itself leaves the waiting session hung;
  # the code under test here is R, which the sanitizers do not check)
  skip_if(grepl("libasan", Sys.getenv("LD_PRELOAD"), fixed = TRUE),
          "batchtools' forked jobs under a preloaded AddressSanitizer")
  dir <- local_batchtools()
  # batchtools' multicore backend forks a job per future; this one kills
  # itself after writing to its log
  future::plan(future.batchtools::batchtools_multicore, workers = 2)
  die <- function(ids, job, seeds, progress) {
    message("kmaha test: this job is about to be killed")
    tools::pskill(Sys.getpid(), tools::SIGKILL)
    ids
  }
  err <- expect_error(suppressWarnings(
    kmaha:::plan_chunks(1:2, die, NULL, list(NULL, NULL), NULL)), class = "kmaha_lost_job")
  expect_s3_class(err, "kmaha_plan_error")
  msg <- conditionMessage(err)
  expect_match(msg, "ended without a result: it was cancelled, killed", fixed = TRUE)
  log <- regmatches(msg, regexec("The end of its log \\(([^)]*)\\):\n", msg))[[1]][2]
  expect_false(is.na(log))
  expect_true(file.exists(log))
  expect_match(msg, "kmaha test: this job is about to be killed", fixed = TRUE)
  kept <- regmatches(msg, regexec("Its batchtools registry \\(job script and log\\) is kept in (.*); delete it when you have read it\\.", msg))[[1]][2]
  expect_true(dir.exists(kept))
  expect_true(startsWith(log, kept))
  expect_identical(normalizePath(dirname(dirname(kept))), normalizePath(file.path(dir, ".future")))
})
