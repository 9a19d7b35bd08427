# One split's fast kernel choice by CV (kmaha(kernel = "cv"), the paper's
# 21 kernels, 5 folds, the default fast strategy) under three plans:
# sequential, future::cluster with one local worker and with two, the
# workers started once and warm (kmaha loaded) before timing; on the
# cluster plans both with kmaha's rounds (plan_chunks(): the job inside
# one future per worker) and with the earlier future_lapply() rounds.  For every
# run it also splits the time into
#   * fits: the sum of the fold fits' own elapsed times (cv$seconds, timed
#     inside each fit, wherever it ran);
#   * critical: per round of futures, the largest chunk's fit time (the
#     chunks as plan_split() makes them: one contiguous chunk per worker of
#     the round's tasks in the order score_round() sends them; the fast
#     strategy has one round of learner fits after the screen): what the CV
#     would take with free round trips;
#   * the rest of the wall time: the final fit, the round trips of the
#     futures and waiting for a core.
# A last measurement gives the round-trip floor: one future_lapply() round
# of trivial tasks carrying the same job.  Configurations are interleaved
# (A B C A B C ...) so that a change in the machine's load hits all alike;
# the load average is printed.  The workers run in sessions of their own
# (see below).
#   KMAHA_BENCH_DATASETS  (default ionosphere,pima,balance)
#   KMAHA_BENCH_LEARNERS  (default dne,nca)
#   KMAHA_BENCH_REPS      (default 5)
#   KMAHA_BENCH_SETSID    (default yes: workers in sessions of their own)
#   KMAHA_BENCH_COMPARE   (default yes: also the future_lapply() rounds)
# Usage: Rscript bench/cluster.R  (writes bench/results/cluster.csv)
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
suppressPackageStartupMessages(library(kmaha))
source(file.path(bench_dir, "common.R"))
datasets <- env_list("KMAHA_BENCH_DATASETS", c("ionosphere", "pima", "balance"))
learners <- env_list("KMAHA_BENCH_LEARNERS", c("dne", "nca"))
reps <- as.integer(Sys.getenv("KMAHA_BENCH_REPS", "5"))
loadavg <- function() strsplit(readLines("/proc/loadavg"), " ")[[1]][1]
cat("cores:", parallel::detectCores(), " load:", readLines("/proc/loadavg"), "\n")

# Linux's autogroup scheduling gives each session one share of the CPUs,
# however many processes it runs: on a busy machine, workers started in
# this session would split this session's share instead of adding theirs.
# Workers on other machines, or started by a scheduler, run in sessions of
# their own; so do these, unless KMAHA_BENCH_SETSID=no.
own_session <- Sys.getenv("KMAHA_BENCH_SETSID", "yes") != "no" && nzchar(Sys.which("setsid"))
rscript <- file.path(R.home("bin"), "Rscript")
worker_cmd <- if (own_session) c("setsid", rscript) else rscript
cat("autogroup scheduling:", tryCatch(readLines("/proc/sys/kernel/sched_autogroup_enabled"),
                                      error = function(e) "unknown"),
    " workers in sessions of their own:", own_session, "\n")
cl1 <- parallelly::makeClusterPSOCK(1L, rscript = worker_cmd)
cl2 <- parallelly::makeClusterPSOCK(2L, rscript = worker_cmd)
plans <- list(
  sequential = function() future::plan(future::sequential),
  cluster1 = function() future::plan(future::cluster, workers = cl1),
  cluster2 = function() future::plan(future::cluster, workers = cl2))
invisible(parallel::clusterEvalQ(cl1, suppressPackageStartupMessages(library(kmaha))))
invisible(parallel::clusterEvalQ(cl2, suppressPackageStartupMessages(library(kmaha))))

# The chunks' fit times of the round of learner fits of a CV on W workers.
critical_path <- function(cv, W) {
  v <- ncol(cv$accuracy)
  nc <- nrow(cv$accuracy)
  tasks <- expand.grid(fold = seq_len(v), cand = seq_len(nc))
  secs <- cv$seconds[cbind(tasks$cand, tasks$fold)]
  ran <- which(!cv$curve$dropped[tasks$cand])
  round_time <- function(ids) {
    if (!length(ids)) return(0)
    perm <- order((seq_along(ids) * 0.6180339887498949) %% 1)
    chunks <- kmaha:::split_even(length(ids), min(W, length(ids)))
    max(vapply(chunks, function(ch) sum(secs[ids[perm][ch]], na.rm = TRUE), 0))
  }
  round_time(ran)
}

# The way kmaha 0.3.0 and the first pipeline sent a round: one
# future_lapply() call, the job a global of each future (see plan_chunks()
# in R/parallel.R).  Swapped into the namespace for the "future_lapply"
# rows; the workers' code is the same either way.
ns <- asNamespace("kmaha")
round_chunks <- get("score_round", ns)
round_lapply <- function(ids, job, seeds, progress) {
  perm <- order((seq_along(ids) * 0.6180339887498949) %% 1)
  out <- vector("list", length(ids))
  out[perm] <- future.apply::future_lapply(
    ids[perm], function(t, job, progress) kmaha:::score_task(t, job, progress), job = job,
    progress = progress, future.seed = seeds[ids[perm]], future.globals = FALSE,
    future.packages = "kmaha")
  out
}
environment(round_lapply) <- ns
set_round <- function(f) {
  unlockBinding("score_round", ns)
  assign("score_round", f, envir = ns)
  lockBinding("score_round", ns)
}
ways <- list(chunks = round_chunks, future_lapply = round_lapply)
if (Sys.getenv("KMAHA_BENCH_COMPARE", "yes") == "no") ways <- ways["chunks"]

rows <- list()
for (ds in datasets) {
  sp <- paper_split(ds, 1)
  if (is.null(sp)) next
  for (l in learners) {
    for (r in seq_len(reps)) {
      for (pl in names(plans)) {
        for (way in names(ways)) {
          if (pl == "sequential" && way != "chunks") next
          set_round(ways[[way]])
          plans[[pl]]()
          W <- future::nbrOfWorkers()
          t <- system.time(f <- suppressWarnings(
            kmaha(sp$x, sp$y, learner = l, kernel = "cv", seed = 1)))[["elapsed"]]
          cv <- f$kernel_choice$cv
          rows[[length(rows) + 1L]] <- data.frame(
            dataset = ds, learner = l, plan = pl, rounds = way, workers = W, rep = r,
            wall = t, fits = sum(cv$seconds, na.rm = TRUE),
            critical = critical_path(cv, W), n_fits = cv$n_fits,
            chosen = cv$curve$sigma[cv$best], load = loadavg())
        }
      }
    }
    set_round(round_chunks)
    d <- do.call(rbind, rows)
    d <- d[d$dataset == ds & d$learner == l, ]
    for (key in unique(paste(d$plan, d$rounds))) {
      e <- d[paste(d$plan, d$rounds) == key, ]
      cat(sprintf("%-11s %-4s %-10s %-13s wall %5.2f s  fits %5.2f s  critical %5.2f s  (median of %d; chosen sigma %s)\n",
                  ds, l, e$plan[1], e$rounds[1], median(e$wall), median(e$fits),
                  median(e$critical), nrow(e), paste(unique(e$chosen), collapse = ",")))
    }
  }
}

# The round-trip floor: one round of trivial tasks with a job of the same
# size (the training inputs of the last split) on each plan.
# Both ways of sending a round: future_lapply() (the job a global of each
# future) and kmaha's plan_chunks() (the job inside each future's
# expression).
job <- list(x = sp$x, y = sp$y, kernels = paper_kernels())
noop <- function(i, job) i
noop_chunk <- function(ids, job, seeds, progress) ids
floor_rows <- list()
for (r in seq_len(reps)) {
  for (pl in names(plans)) {
    plans[[pl]]()
    t1 <- system.time(future.apply::future_lapply(seq_len(21), noop, job = job,
                                                  future.globals = FALSE,
                                                  future.packages = "kmaha"))[["elapsed"]]
    t2 <- system.time(kmaha:::plan_chunks(seq_len(21), noop_chunk, job, vector("list", 21),
                                          NULL))[["elapsed"]]
    floor_rows[[length(floor_rows) + 1L]] <- data.frame(plan = pl, future_lapply = t1,
                                                        plan_chunks = t2)
  }
}
fl <- do.call(rbind, floor_rows)
for (pl in names(plans)) {
  cat(sprintf("one round of 21 trivial tasks, %-10s future_lapply() %5.3f s, plan_chunks() %5.3f s (medians of %d)\n",
              pl, median(fl$future_lapply[fl$plan == pl]), median(fl$plan_chunks[fl$plan == pl]),
              reps))
}
future::plan(future::sequential)
parallel::stopCluster(cl1)
parallel::stopCluster(cl2)
res <- do.call(rbind, rows)
cat("load at the end:", readLines("/proc/loadavg"), "\n")
out <- file.path(bench_dir, "results", "cluster.csv")
utils::write.csv(res, out, row.names = FALSE)
cat("wrote", out, "\n")
