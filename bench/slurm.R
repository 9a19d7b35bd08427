# kmaha on a Slurm cluster through future.batchtools, as vignette("scaling")
# sets it up (the package's template, ncpus = 1, walltime, memory), on the
# single-node cluster of tools/slurm-up.sh (start it first, as root).
#
# 1. A job's own cost: a trivial future, submitted and collected (median of
#    KMAHA_BENCH_REPS).
# 2. kmaha(x, y, kernel = "cv", seed = 1) on all of Ionosphere (351 rows,
#    NCA, the paper's 21 kernels, 5 folds, the fast strategy): sequential,
#    on the Slurm plan as kmaha now sends it (one job per round), and as
#    before (one future per worker and round: kmaha.scheduler = FALSE with
#    workers = 8, the 16 jobs of issue 28), and the whole call as one job
#    (a future around kmaha(), what the engine can do on a scheduler).
#    Interleaved, KMAHA_BENCH_REPS times; jobs counted with squeue; the
#    choices compared.
# 3. The full reproduce_paper() (9 datasets x 40 splits x 3 learners x the
#    five kernel columns of data-raw/reproduce-paper.R: 4320 tasks): the
#    jobs it submits on a scheduler (plan_split()) against 8 tasks per
#    future before, each job's work estimated from the per-task seconds of
#    the shipped run (extdata/paper_reproduction.csv, two local workers);
#    then KMAHA_BENCH_SAMPLE of those jobs (default 2; the ones nearest the
#    median estimate) are run on the cluster: each job runs its chunk's
#    tasks with reproduce_paper() and reports their seconds.
#
#   KMAHA_BENCH_REPS     (default 3)
#   KMAHA_BENCH_SAMPLE   (default 2; 0 skips the sample)
# Usage: Rscript bench/slurm.R  (writes bench/results/slurm.csv and
# bench/results/slurm_repro_jobs.csv; KMAHA_DATA_DIR must hold the paper's
# datasets, e.g. ../shared/data)
suppressPackageStartupMessages(library(kmaha))
if (!requireNamespace("future.batchtools", quietly = TRUE)) {
  stop("bench/slurm.R needs future.batchtools (tools/install-suggests.sh installs it)")
}
st <- suppressWarnings(tryCatch(system2("sinfo", c("-h", "-o", shQuote("%T")), stdout = TRUE),
                                error = function(e) character()))
if (!any(grepl("^(idle|mixed|allocated)", st))) {
  stop("no Slurm cluster is up (sinfo says: ", paste(st, collapse = " "),
       "); start one with tools/slurm-up.sh")
}
bench_dir <- normalizePath(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                                            value = TRUE)[1])))
out_dir <- file.path(bench_dir, "results")
reps <- as.integer(Sys.getenv("KMAHA_BENCH_REPS", "3"))
n_sample <- as.integer(Sys.getenv("KMAHA_BENCH_SAMPLE", "2"))
loadavg <- function() as.numeric(strsplit(readLines("/proc/loadavg"), " ")[[1]][1])
cat("cores:", parallel::detectCores(), " load:", readLines("/proc/loadavg"), "\n")

# The registries go to .future/ in a directory of their own (shared by the
# one node); USER must be set for batchtools' squeue --user=$USER.
work <- tempfile("kmaha-bench-slurm-")
dir.create(work)
setwd(work)
if (!nzchar(Sys.getenv("USER"))) Sys.setenv(USER = Sys.info()[["user"]])
template <- system.file("templates", "slurm.tmpl", package = "kmaha")
slurm_plan <- function(workers = NULL) {
  future::plan(future.batchtools::batchtools_slurm, template = template, workers = workers,
               resources = list(ncpus = 1, walltime = 3600, memory = 2048))
}
last_job_id <- function() {
  out <- system2("squeue", c("-h", "--states=all", "-o", shQuote("%i")), stdout = TRUE)
  max(c(0L, suppressWarnings(as.integer(out))), na.rm = TRUE)
}
jobs_after <- function(id) {
  out <- system2("squeue", c("-h", "--states=all", "-o", shQuote("%i")), stdout = TRUE)
  sum(suppressWarnings(as.integer(out)) > id, na.rm = TRUE)
}
rows <- list()
record <- function(...) rows[[length(rows) + 1L]] <<- data.frame(..., load = loadavg())

# 1. A job's own cost.
slurm_plan()
for (r in seq_len(reps)) {
  t <- system.time(future::value(future::future(NULL, label = "kmaha-bench-empty")))[["elapsed"]]
  record(part = "empty job", config = "slurm", rep = r, seconds = t, jobs = 1L,
         sigma = NA_real_)
  cat(sprintf("empty job: %.2f s\n", t))
}

# 2. One kernel choice on Ionosphere.
d <- kmaha_data("ionosphere")
x <- as.matrix(d[, setdiff(names(d), "class")])
y <- d$class
configs <- list(
  sequential = function() {
    options(kmaha.scheduler = NULL)
    future::plan(future::sequential)
  },
  slurm_now = function() {
    options(kmaha.scheduler = NULL)
    slurm_plan()
  },
  slurm_before = function() {
    options(kmaha.scheduler = FALSE)
    slurm_plan(workers = 8)
  },
  # the whole kernel choice as one future (one job), as the engine can send
  # it on a scheduler (plan_is_scheduler()); here sent by hand
  slurm_one_job = function() {
    options(kmaha.scheduler = NULL)
    slurm_plan()
  })
one_job <- function() {
  future::value(future::future(kmaha::kmaha(x, y, kernel = "cv", seed = 1),
                               globals = list(x = x, y = y), packages = "kmaha",
                               label = "kmaha-bench-cv"))
}
choices <- list()
for (r in seq_len(reps)) {
  for (cfg in names(configs)) {
    configs[[cfg]]()
    id <- last_job_id()
    t <- system.time(fit <- if (cfg == "slurm_one_job") one_job() else
      kmaha(x, y, kernel = "cv", seed = 1))[["elapsed"]]
    n_jobs <- if (cfg == "sequential") 0L else jobs_after(id)
    cv <- fit$kernel_choice$cv
    choices[[cfg]] <- cv$accuracy
    record(part = "ionosphere kmaha(kernel = \"cv\")", config = cfg, rep = r, seconds = t,
           jobs = n_jobs, sigma = cv$curve$sigma[cv$best])
    cat(sprintf("ionosphere cv, %-12s %6.1f s, %2d jobs (load %.1f)\n", cfg, t, n_jobs, loadavg()))
  }
}
options(kmaha.scheduler = NULL)
stopifnot(identical(choices$slurm_now, choices$sequential),
          identical(choices$slurm_before, choices$sequential),
          identical(choices$slurm_one_job, choices$sequential))
cat("the kernel choice is identical under the four configurations\n")

# 3. The full reproduction: tasks as reproduce_paper() numbers and orders
# them, cut as on a scheduler.
shipped <- paper_reproduction()
kernels <- c("linear", "cv", "aligned", "unweighted", "auto")
learners <- c("nca", "lmnn", "dne")
datasets <- paper_datasets()$name
cells <- expand.grid(kernel = kernels, learner = learners, split = 1:40,
                     dataset = datasets, stringsAsFactors = FALSE)
group <- ifelse(cells$kernel %in% c("cv", "auto"), "cv", cells$kernel)
key <- paste(cells$dataset, cells$split, cells$learner, group)
task <- match(key, unique(key))
n <- max(task)
perm <- seq_len(n)[order((seq_len(n) * 0.6180339887498949) %% 1)]
# a task's seconds in the shipped run (cv and auto share theirs)
skey <- paste(shipped$dataset, shipped$split, shipped$learner, shipped$kernel)
task_sec <- vapply(seq_len(n), function(t) {
  cc <- cells[task == t, ]
  max(shipped$seconds[match(paste(cc$dataset, cc$split, cc$learner, cc$kernel), skey)])
}, 0)
future::plan(future::sequential)
now <- kmaha:::plan_split(n, "cells", local = FALSE, scheduler = TRUE)
before <- kmaha:::split_even(n, ceiling(n / 8))
job_work <- function(chunks) vapply(chunks, function(ch) sum(task_sec[perm[ch]]), 0)
w_now <- job_work(now)
w_before <- job_work(before)
cat(sprintf("full reproduction: %d tasks, %.0f s of work in the shipped run\n", n, sum(task_sec)))
cat(sprintf("  before: %d jobs of 8 tasks, work per job min %.1f / median %.1f / max %.1f s\n",
            length(before), min(w_before), median(w_before), max(w_before)))
cat(sprintf("  now:    %d jobs of %d-%d tasks, work per job min %.1f / median %.1f / max %.1f s\n",
            length(now), min(lengths(now)), max(lengths(now)), min(w_now), median(w_now),
            max(w_now)))
jobs_tab <- data.frame(way = c(rep("before", length(before)), rep("now", length(now))),
                       job = c(seq_along(before), seq_along(now)),
                       tasks = c(lengths(before), lengths(now)),
                       estimated_seconds = round(c(w_before, w_now), 2))

# A sample of the jobs, run on the cluster: each job runs its chunk's
# tasks, grouped into reproduce_paper() calls by dataset, learner and kernel
# column (the cells' seconds are the fits' own times).
sample_rows <- list()
if (n_sample > 0L) {
  slurm_plan()
  pick <- order(abs(w_now - median(w_now)))[seq_len(min(n_sample, length(now)))]
  fs <- lapply(pick, function(j) {
    tk <- cells[task %in% perm[now[[j]]], ]
    tk$col <- ifelse(tk$kernel %in% c("cv", "auto"), "cv+auto", tk$kernel)
    calls <- unique(tk[, c("dataset", "learner", "col")])
    calls$splits <- lapply(seq_len(nrow(calls)), function(i) {
      sort(unique(tk$split[tk$dataset == calls$dataset[i] & tk$learner == calls$learner[i] &
                             tk$col == calls$col[i]]))
    })
    future::future({
      t0 <- proc.time()[["elapsed"]]
      secs <- 0
      for (i in seq_len(nrow(calls))) {
        k <- if (calls$col[i] == "cv+auto") c("cv", "auto") else calls$col[i]
        r <- kmaha::reproduce_paper(calls$dataset[i], learners = calls$learner[i], kernels = k,
                                    splits = 40, split_ids = calls$splits[[i]])
        secs <- secs + sum(r$seconds[r$kernel != "auto"])
      }
      c(job = proc.time()[["elapsed"]] - t0, cells = secs)
    }, globals = list(calls = calls), packages = "kmaha", label = sprintf("kmaha-bench-job%d", j))
  })
  t0 <- proc.time()[["elapsed"]]
  vals <- future::value(fs)
  wall <- proc.time()[["elapsed"]] - t0
  for (i in seq_along(pick)) {
    j <- pick[i]
    cat(sprintf("  sample job %d (%d tasks): estimated %.1f s, ran %.1f s in the job (cells' own time %.1f s)\n",
                j, length(now[[j]]), w_now[j], vals[[i]][["job"]], vals[[i]][["cells"]]))
    sample_rows[[i]] <- data.frame(job = j, tasks = length(now[[j]]), estimated_seconds = w_now[j],
                                   job_seconds = vals[[i]][["job"]],
                                   cells_seconds = vals[[i]][["cells"]])
    record(part = "reproduction sample job", config = sprintf("job %d", j), rep = 1L,
           seconds = vals[[i]][["job"]], jobs = 1L, sigma = NA_real_)
  }
  cat(sprintf("  the %d sample jobs side by side on the node's %d CPUs: %.1f s from submission to results\n",
              length(pick), parallel::detectCores(), wall))
}
future::plan(future::sequential)

res <- do.call(rbind, rows)
utils::write.csv(res, file.path(out_dir, "slurm.csv"), row.names = FALSE)
jobs_tab$sampled_job_seconds <- NA_real_
for (s in sample_rows) {
  jobs_tab$sampled_job_seconds[jobs_tab$way == "now" & jobs_tab$job == s$job] <- round(s$job_seconds, 1)
}
utils::write.csv(jobs_tab, file.path(out_dir, "slurm_repro_jobs.csv"), row.names = FALSE)
med <- aggregate(seconds ~ part + config, res, median)
print(med)
setwd(tempdir())
unlink(work, recursive = TRUE)
