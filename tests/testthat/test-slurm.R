# kmaha on a real Slurm cluster through future.batchtools, set up exactly as
# vignette("scaling") writes it (the section "One Slurm job per future"):
# the package's template, all three resources, USER set, the registry in
# the working directory.  The cluster is the single-node one of
# tools/slurm-up.sh (.ci/run starts it); without it the tests skip and say
# why.  Checked: a kernel choice and a small reproduction equal their
# sequential results and are submitted as at most 2 and 1 jobs; a job
# cancelled with scancel stops reproduce_paper() with an error that names
# the checkpoint, and running the call again resumes to the sequential rows.

slurm_state <- new.env()

# The recipe of vignette("scaling") ("One Slurm job per future"), line for
# line: the tests below run it as it stands, and the first test checks
# that the vignette still says exactly this.
slurm_recipe <- c(
  "# batchtools lists your jobs with squeue --user=$USER: USER must be set",
  "if (!nzchar(Sys.getenv(\"USER\"))) Sys.setenv(USER = Sys.info()[[\"user\"]])",
  "future::plan(future.batchtools::batchtools_slurm,",
  "             template = system.file(\"templates\", \"slurm.tmpl\", package = \"kmaha\"),",
  "             resources = list(ncpus = 1, walltime = 3600, memory = 2048))")

test_that("the tests run the vignette's Slurm recipe as it stands", {
  rmd <- c(system.file("doc", "scaling.Rmd", package = "kmaha"),
           test_path("..", "..", "vignettes", "scaling.Rmd"))
  rmd <- rmd[nzchar(rmd) & file.exists(rmd)]
  skip_if(!length(rmd), "the source of vignette(\"scaling\") is not at hand")
  lines <- readLines(rmd[1], warn = FALSE)
  at <- which(lines == slurm_recipe[1])
  expect_length(at, 1L)
  expect_identical(lines[at + seq_along(slurm_recipe) - 1L], slurm_recipe)
  # and the template it names is shipped
  expect_true(nzchar(system.file("templates", "slurm.tmpl", package = "kmaha")))
})

# Why the Slurm tests cannot run here, or NULL when they can.
slurm_unavailable <- function() {
  if (!is.null(slurm_state$why)) return(if (nzchar(slurm_state$why)) slurm_state$why)
  why <- if (!requireNamespace("future.batchtools", quietly = TRUE)) {
    "future.batchtools is not installed (tools/install-suggests.sh installs it)"
  } else if (!nzchar(Sys.which("sinfo")) || !nzchar(Sys.which("sbatch"))) {
    "Slurm's commands (sinfo, sbatch) are not installed: start a cluster with tools/slurm-up.sh"
  } else {
    st <- suppressWarnings(tryCatch(
      system2("sinfo", c("-h", "-o", shQuote("%T")), stdout = TRUE, stderr = TRUE),
      error = function(e) character()))
    if (!length(st) || !any(grepl("^(idle|mixed|allocated|completing)", st))) {
      sprintf("no Slurm cluster answers with a node ready (sinfo says: %s): start one with tools/slurm-up.sh",
              paste(utils::head(st, 2L), collapse = " "))
    } else if (!nzchar(system.file("templates", "slurm.tmpl", package = "kmaha"))) {
      "the installed kmaha has no templates/slurm.tmpl"
    } else {
      ""
    }
  }
  slurm_state$why <- why
  if (nzchar(why)) why
}

skip_without_slurm <- function() {
  skip_on_cran()
  why <- slurm_unavailable()
  if (!is.null(why)) skip(paste("Slurm tests:", why))
}

# The Slurm jobs named "kmaha-..." with ids above `after` (finished jobs
# stay listed for MinJobAge, an hour on the cluster of tools/slurm-up.sh).
slurm_jobs <- function(after = 0L) {
  out <- system2("squeue", c("-h", "--states=all", "-o", shQuote("%i|%j|%T")), stdout = TRUE)
  parts <- strsplit(out, "|", fixed = TRUE)
  jobs <- data.frame(id = as.integer(vapply(parts, `[`, "", 1L)),
                     name = vapply(parts, `[`, "", 2L),
                     state = vapply(parts, `[`, "", 3L), stringsAsFactors = FALSE)
  jobs[!is.na(jobs$id) & jobs$id > after & startsWith(jobs$name, "kmaha-"), , drop = FALSE]
}
last_job_id <- function() {
  out <- system2("squeue", c("-h", "--states=all", "-o", shQuote("%i")), stdout = TRUE)
  max(c(0L, suppressWarnings(as.integer(out))), na.rm = TRUE)
}

# Runs `code` under the vignette's Slurm plan, in a fresh directory (a
# registry on a file system the nodes share: here the one node's), with
# USER set; returns its value and the jobs it submitted.
under_slurm <- function(code) {
  code <- substitute(code)
  env <- parent.frame()
  dir <- tempfile("kmaha-slurm-")
  dir.create(dir)
  old_wd <- setwd(dir)
  on.exit(setwd(old_wd), add = TRUE)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  old_user <- Sys.getenv("USER", unset = NA)
  on.exit(if (is.na(old_user)) Sys.unsetenv("USER") else Sys.setenv(USER = old_user), add = TRUE)
  old_plan <- future::plan()
  on.exit(future::plan(old_plan), add = TRUE)
  before <- last_job_id()
  # vignette("scaling"), "One Slurm job per future"
  eval(parse(text = slurm_recipe), envir = new.env())
  value <- eval(code, env)
  # the registry folders left: .future/<session>/<registry>
  sessions <- list.dirs(".future", recursive = FALSE)
  registries <- unlist(lapply(sessions, list.dirs, recursive = FALSE))
  list(value = value, jobs = slurm_jobs(before), registries = registries)
}

rows_of <- function(r) {
  df <- as.data.frame(unclass(r), stringsAsFactors = FALSE)
  df$seconds <- NULL
  rownames(df) <- NULL
  df
}

test_that("a kernel choice under the Slurm plan equals the sequential one, in at most 2 jobs", {
  skip_without_slurm()
  # The second call must compute on the cluster, not take the first call's
  # fold fits from the session (see "Reuse" in ?score_candidates).
  withr::local_options(kmaha.reuse_fits = FALSE)
  run <- function() {
    fit <- kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = "cv", seed = 1)
    list(cv = fit$kernel_choice$cv[c("accuracy", "best", "folds")], L = coef(fit))
  }
  seq_res <- run()
  s <- under_slurm(run())
  expect_identical(s$value, seq_res)
  # the fast strategy's two rounds, one job each
  expect_lte(nrow(s$jobs), 2L)
  expect_gte(nrow(s$jobs), 1L)
  expect_true(all(s$jobs$state == "COMPLETED"))
  # the registries of finished jobs are removed
  expect_length(s$registries, 0L)
})

test_that("a reproduction under the Slurm plan equals the sequential one, in one job", {
  skip_without_slurm()
  args <- list(datasets = "iris", learners = "dne", kernels = c("linear", "unweighted"),
               splits = 3, base_kernels = lapply(c(0.5, 2), rbf_kernel))
  seq_res <- do.call(reproduce_paper, args)
  s <- under_slurm(do.call(reproduce_paper, args))
  expect_identical(rows_of(s$value), rows_of(seq_res))
  expect_true(all(is.na(s$value$error)))
  expect_identical(attr(s$value, "run_info")$plan, "batchtools_slurm")
  # 6 tasks: one job on a scheduler (at least 40 tasks per job)
  expect_identical(nrow(s$jobs), 1L)
})

test_that("a cancelled job stops reproduce_paper() with how to resume; the re-run resumes", {
  skip_without_slurm()
  args <- list(datasets = "iris", learners = "dne", kernels = c("linear", "unweighted"),
               splits = 3, base_kernels = lapply(c(0.5, 2), rbf_kernel), chunk_size = 2)
  seq_res <- do.call(reproduce_paper, args[names(args) != "chunk_size"])
  ckpt <- tempfile("kmaha-slurm-ckpt-")
  on.exit(unlink(ckpt, recursive = TRUE), add = TRUE)
  # A watcher cancels the third job as soon as Slurm lists it: the first two
  # jobs hold the node's two CPUs, so it is still waiting (or just started:
  # the watcher polls every 0.1 s, and an R job takes seconds) and cannot
  # have finished.  (Cancelling it when the first job's result came in, as
  # this test once did, raced with that job: batchtools polls for results,
  # and in the meantime the third job could run to the end.)
  cancelled <- "kmaha-repro-3of3"
  watcher <- sprintf(paste(
    "for i in $(seq 1 1200); do",
    "id=$(squeue -h --name %s -o %%i 2>/dev/null);",
    "if [ -n \"$id\" ]; then scancel $id; exit 0; fi;",
    "sleep 0.1; done"), cancelled)
  s <- under_slurm({
    system2("sh", c("-c", shQuote(watcher)), stdout = FALSE, stderr = FALSE, wait = FALSE)
    err <- tryCatch(do.call(reproduce_paper, c(args, list(checkpoint = ckpt))),
                    error = function(e) e)
    resumed <- do.call(reproduce_paper, c(args, list(checkpoint = ckpt)))
    list(err = err, resumed = resumed)
  })
  err <- s$value$err
  expect_s3_class(err, "kmaha_plan_error")
  msg <- conditionMessage(err)
  expect_match(msg, "reproduce_paper() stopped: a future of the plan failed.", fixed = TRUE)
  expect_match(msg, "kmaha-repro-3of3", fixed = TRUE)
  expect_match(msg, "The work went to the plan (batchtools_slurm) as 3 futures: 1 failed (kmaha-repro-3of3)",
               fixed = TRUE)
  expect_match(msg, sprintf("To resume, run the same reproduce_paper() call again with checkpoint = \"%s\"",
                            normalizePath(ckpt)), fixed = TRUE)
  expect_identical(nrow(err$failed_cells), 2L)
  # the re-run computes the cancelled job's cells only, to the sequential rows
  res <- s$value$resumed
  expect_identical(rows_of(res), rows_of(seq_res))
  # the cells of the first job at least were read (the second job's too
  # when it had finished), the cancelled job's computed again
  expect_gte(attr(res, "run_info")$cells_from_checkpoint, 2L)
  expect_lte(attr(res, "run_info")$cells_from_checkpoint, 4L)
  expect_identical(sum(endsWith(s$jobs$name, "of3")), 3L)
  expect_lte(sum(!endsWith(s$jobs$name, "of3")), 2L)
  expect_identical(s$jobs$state[s$jobs$name == "kmaha-repro-3of3"], "CANCELLED")
})

test_that("the template names a missing resource before anything is submitted", {
  skip_without_slurm()
  dir <- tempfile("kmaha-slurm-")
  dir.create(dir)
  old_wd <- setwd(dir)
  on.exit(setwd(old_wd), add = TRUE)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  user <- Sys.getenv("USER", unset = NA)
  on.exit(if (is.na(user)) Sys.unsetenv("USER") else Sys.setenv(USER = user), add = TRUE)
  if (!nzchar(Sys.getenv("USER"))) Sys.setenv(USER = Sys.info()[["user"]])
  old <- future::plan(future.batchtools::batchtools_slurm,
                      template = system.file("templates", "slurm.tmpl", package = "kmaha"),
                      resources = list(ncpus = 1, walltime = 3600))
  on.exit(future::plan(old), add = TRUE)
  before <- last_job_id()
  err <- expect_error(
    kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = "cv",
          kernels = lapply(c(0.5, 2), rbf_kernel), cv_folds = 2, seed = 1),
    class = "kmaha_plan_error")
  expect_match(conditionMessage(err),
               "kmaha's Slurm template needs the resources ncpus, walltime, memory, e.g. resources = list(ncpus = 1, walltime = 3600, memory = 2048) in future::plan(future.batchtools::batchtools_slurm, ...): memory missing.",
               fixed = TRUE)
  expect_identical(nrow(slurm_jobs(before)), 0L)
})
