#' Reproduce the paper's Tables 1-3
#'
#' Runs the experimental protocol of the paper: for each dataset, random
#' training/test splits (200 training points, 100 for Glass and Iris, the
#' rest for testing), features standardized on the training split, and a
#' 1-NN classifier in the metric learned by each learner with each kernel
#' choice:
#'
#' * `"linear"`: the original learner (no kernel);
#' * `"cv"`: KPCA trick with the base kernel chosen by `cv_folds`-fold
#'   cross-validation;
#' * `"aligned"`: KPCA trick with the kernel-alignment QP combination;
#' * `"unweighted"`: KPCA trick with the plain sum of the base kernels (target
#'   neighbours of LMNN/DNE from the input space, as in the paper).
#'
#' The base kernels are the paper's 21 scaled RBF kernels
#' ([paper_kernels()]). Each *cell* — one dataset, split, learner and kernel
#' choice — is one fit by [kmaha()] with its defaults (see there for the
#' regularized KLMNN default).
#'
#' **Reproducibility.** The training rows of a split depend only on `seed`,
#' the dataset and the split index; the random state of a cell (the
#' cross-validation folds, random starts) is set right before its fit from a
#' seed derived from `seed`, the dataset, the split, the learner and the
#' kernel choice. So any single cell can be re-run on its own (`datasets`,
#' `learners`, `kernels` and `split_ids` of one element) and gives the same
#' accuracy as in a full run, whatever else is run beside it and whatever
#' the [future::plan()]. Each fit runs on one thread (sums in a fixed
#' order; `num_threads` changes it); the cells run in parallel as futures, so
#' `future::plan(multisession)` uses several cores and
#' `future::plan(future.batchtools::batchtools_slurm, ...)` a Slurm cluster.
#' How many tasks (a split, learner and kernel choice; `"cv"` and `"auto"`
#' together) each future carries depends on the plan: 8 on local workers,
#' and on a scheduler `n %/% 40` futures, at most 50, for `n` tasks (the full
#' run: 50 jobs); `chunk_size` or the option `kmaha.chunk_size` sets it (see
#' [kmaha-plans]). No result depends on it. Progress is reported through
#' progressr: wrap the call in [progressr::with_progress()] to see a
#' progress bar. A cell whose fit fails
#' gets accuracy `NA` and the error message in column `error` (and `print()`
#' shows the first messages). The caller's random state is restored on exit.
#'
#' **Checkpoint.** A full run takes about an hour on two cores. With
#' `checkpoint = dir`, each cell is written to its own small file in the
#' directory `dir` (created if needed) as soon as it finishes, by the worker
#' that ran it: first to a temporary file in `dir`, then renamed, so that a
#' file is either complete or absent even when the run is killed mid-write.
#' A run with the same `checkpoint` computes only the cells that have no file
#' there yet (or whose fit failed, which is tried again) and reads the
#' others, so an interrupted run (an interrupt, a killed session, a dead
#' worker) resumes where it stopped and returns the same rows as an
#' uninterrupted run (apart from `seconds`, which keeps the time each cell
#' took when it was computed). The directory records the settings that
#' determine a cell's result (`seed`, `base_kernels`, `cv_folds`,
#' `learner_args`, `path`, `download` and the kmaha version); a run with
#' other settings stops with an error naming them, so cells of different
#' runs never mix. The cell selection (`datasets`, `learners`, `kernels`,
#' `splits`, `split_ids`) may differ between runs: a checkpoint can be
#' extended, for example by more splits. `run_info` records the number of
#' cells read from the checkpoint (`cells_from_checkpoint`). On a cluster
#' the directory must be on a file system that the workers share.
#'
#' **A failed or lost future** (a worker or job that died, was cancelled or
#' ran out of time) stops the run with an error (class `kmaha_plan_error`)
#' that gives the cause, the cells of the failed futures and of those still
#' running, and how to resume: with a `checkpoint`, running the same call
#' again computes only the cells missing from it (the futures still running
#' go on writing theirs); without one, it says to use one.
#'
#' @param datasets Dataset names, see [paper_datasets()]. Yeast and Musk2 need
#'   local files or `download = TRUE` (see [kmaha_data()]).
#' @param learners Any of `"nca"`, `"lmnn"`, `"dne"`.
#' @param kernels Any of `"linear"`, `"cv"`, `"aligned"`, `"unweighted"`.
#' @param splits Number of random splits per dataset (the paper used 40).
#' @param split_ids `NULL` (all of `1:splits`) or the split indices to run,
#'   whole numbers between 1 and `splits`: split `i` is the same training set
#'   whichever other splits are run.
#' @param seed Seed from which the splits and the cells' random states are
#'   derived.
#' @param base_kernels The base kernels for `"cv"`, `"aligned"` and
#'   `"unweighted"`.
#' @param cv_folds Folds for the `"cv"` kernel choice.
#' @param path,download Passed to [kmaha_data()].
#' @param learner_args Named list of per-learner argument lists, e.g.
#'   `list(nca = list(max_iter = 200))`. The names are checked against the
#'   arguments of [nca()], [lmnn()] and [dne()] before anything runs.
#' @param checkpoint `NULL`, or a directory where each finished cell is
#'   saved and from which a re-run resumes (see Checkpoint).
#' @param chunk_size `NULL` (the option `kmaha.chunk_size`, else the plan's
#'   default, see [kmaha-plans]), or the number of tasks each future carries:
#'   a whole number >= 1. Results do not depend on it.
#' @param num_threads The number of threads of each fit's compiled code: 1
#'   (the default), with which NCA's and LMNN's sums run in a fixed order and
#'   the accuracies are those shipped, or more to speed up the fits of a
#'   sequential plan (results may then differ in the last digits of those
#'   sums, so in a few test points). Cross-validation folds run one thread
#'   each in any case.
#' @return A data frame of class `kmaha_reproduction` with one row per
#'   dataset, split, learner and kernel choice: `dataset`, `split`, `learner`,
#'   `kernel`, `accuracy` (test accuracy of 1-NN), `seconds` (elapsed time of
#'   the cell's fit and prediction), `sigma` (the \eqn{\sigma} chosen by
#'   cross-validation, else `NA`), `weights` (the aligned combination as
#'   `"sigma:weight"` pairs with weights summing to 1, else `NA`),
#'   `components` (KPCA components kept, `NA` for `"linear"`), `error`
#'   (`NA`, or the message of a failed fit) and `warning` (`NA`, or the
#'   warnings of the fit, which are not re-signalled). The attribute `run_info` records
#'   the settings, the machine and the total run time. [summary()] compares
#'   the cells with the paper (see [summary.kmaha_reproduction()]);
#'   `print()` shows that summary. Results of different cells (for example
#'   different kernel choices or split indices) combine with `rbind()`, which
#'   sums their run times.
#' @seealso [paper_reproduction()] for the shipped results of the full run,
#'   [paper_results()] for the paper's values.
#' @examples
#' res <- reproduce_paper(datasets = "iris", learners = "dne",
#'                        kernels = c("linear", "unweighted"), splits = 2)
#' res
#' # one cell on its own gives the same accuracy
#' one <- reproduce_paper(datasets = "iris", learners = "dne",
#'                        kernels = "unweighted", splits = 2, split_ids = 2)
#' one$accuracy == res$accuracy[res$split == 2 & res$kernel == "unweighted"]
#'
#' # a resumable run: the second call reads every cell from the checkpoint
#' dir <- file.path(tempdir(), "kmaha-checkpoint")
#' a <- reproduce_paper(datasets = "iris", learners = "dne", kernels = "linear",
#'                      splits = 2, checkpoint = dir)
#' b <- reproduce_paper(datasets = "iris", learners = "dne", kernels = "linear",
#'                      splits = 2, checkpoint = dir)
#' attr(b, "run_info")$cells_from_checkpoint
#' identical(a$accuracy, b$accuracy)
#' unlink(dir, recursive = TRUE)
#' @export
reproduce_paper <- function(datasets = paper_datasets()$name,
                            learners = c("nca", "lmnn", "dne"),
                            kernels = c("linear", "cv", "aligned", "unweighted"),
                            splits = 40, split_ids = NULL, seed = 1,
                            base_kernels = paper_kernels(), cv_folds = 5,
                            path = NULL, download = FALSE,
                            learner_args = list(), checkpoint = NULL,
                            chunk_size = NULL, num_threads = 1L) {
  info <- paper_datasets()
  if (!is.character(datasets) || !length(datasets) || anyNA(datasets)) {
    stopf("`datasets` must be a character vector of names from paper_datasets()$name.")
  }
  bad <- setdiff(datasets, info$name)
  if (length(bad)) {
    stopf("`datasets` has unknown name(s) %s; see paper_datasets().",
          paste(sQuote(bad, FALSE), collapse = ", "))
  }
  datasets <- unique(datasets)
  learners <- match_choices(learners, repro_learners, "learners")
  kernels <- match_choices(kernels, repro_kernels, "kernels")
  splits <- check_count(splits, "splits")
  split_ids <- check_split_ids(split_ids, splits)
  seed <- check_count(seed, "seed", lower = 0L)
  if (any(kernels != "linear")) {
    base_kernels <- check_kernel_list(base_kernels, "base_kernels")
  }
  cv_folds <- check_count(cv_folds, "cv_folds", lower = 2L)
  learner_args <- check_repro_learner_args(learner_args)
  if (!is.null(chunk_size)) chunk_size <- check_count(chunk_size, "chunk_size")
  num_threads <- check_count(num_threads, "num_threads")
  # Load every dataset here first, so that a missing one fails now with
  # kmaha_data()'s message; the workers load (and keep) their own copies.
  source <- list(path = path, download = download)
  for (nm in datasets) repro_data(nm, source)
  on.exit(rm(list = ls(repro_cache), envir = repro_cache), add = TRUE)
  cells <- expand.grid(kernel = kernels, learner = learners, split = split_ids,
                       dataset = datasets, stringsAsFactors = FALSE)
  cells <- cells[, c("dataset", "split", "learner", "kernel")]
  rownames(cells) <- NULL
  # The "cv" and "auto" cells of a split and learner share their
  # cross-validation: one task fits both (each as it would be alone).
  group <- ifelse(cells$kernel %in% repro_shared, "cv", cells$kernel)
  task <- match(paste(cells$dataset, cells$split, cells$learner, group),
                unique(paste(cells$dataset, cells$split, cells$learner, group)))
  if (!is.null(checkpoint)) {
    checkpoint <- checkpoint_open(checkpoint, list(
      kmaha_version = as.character(utils::packageVersion("kmaha")),
      seed = seed, base_kernels = base_kernels, cv_folds = cv_folds,
      learner_args = learner_args, path = path, download = download,
      # (absent for one thread, as in the checkpoints of 0.5.2 and earlier)
      num_threads = if (num_threads != 1L) num_threads))
  }
  job <- list(cells = cells, task = task, source = source, seed = seed,
              base_kernels = base_kernels, cv_folds = cv_folds,
              learner_args = learner_args, checkpoint = checkpoint,
              num_threads = num_threads, settings = worker_settings())
  if (!plan_is_local()) {
    shipped <- ship_closures(job[c("base_kernels", "learner_args")])
    job[c("base_kernels", "learner_args")] <- shipped
    job$packages <- attr(shipped, "packages")
  }
  # Tasks whose cells are all in the checkpoint are not run again.
  n <- max(task)
  saved <- if (is.null(checkpoint)) vector("list", nrow(cells)) else checkpoint_read(checkpoint, cells)
  have <- !vapply(saved, is.null, NA)
  done <- vapply(seq_len(n), function(t) all(have[task == t]), NA)
  out <- vector("list", n)
  for (t in which(done)) out[[t]] <- do.call(rbind, saved[task == t])
  todo <- which(!done)
  # The cells seed R's generator; the caller's random state is put back.
  restore <- save_rng()
  on.exit(restore(), add = TRUE)
  t0 <- proc.time()[["elapsed"]]
  p <- progressr::progressor(steps = sum(task %in% todo))
  # Tasks differ a lot in cost (cross-validated LMNN against linear DNE):
  # they go to the workers in chunks sized for the plan (plan_split(): small
  # ones on local workers, so that a free worker takes the next; large ones
  # on a scheduler, where each future is a job), in a fixed low-discrepancy
  # order that mixes every kind of task into every chunk.  Neither changes
  # any result: each task sets its own random state.
  perm <- todo[order((todo * 0.6180339887498949) %% 1)]
  if (length(perm)) {
    out[perm] <- tryCatch(
      plan_lapply(perm, repro_cell_call, job = job, progress = p, seed = TRUE,
                  chunk_size = chunk_size, packages = job$packages, label = "kmaha-repro"),
      kmaha_plan_error = function(e) {
        stop(repro_plan_error(e, perm, cells, task, checkpoint, sum(task %in% which(done))))
      })
  }
  res <- do.call(rbind, out)
  res <- res[order(match(paste(res$dataset, res$split, res$learner, res$kernel),
                         paste(cells$dataset, cells$split, cells$learner, cells$kernel))), ]
  rownames(res) <- NULL
  info <- repro_run_info(
    seed = seed, splits = splits, split_ids = split_ids, cv_folds = cv_folds,
    elapsed = proc.time()[["elapsed"]] - t0)
  if (!is.null(checkpoint)) {
    info$checkpoint <- checkpoint
    info$cells_from_checkpoint <- sum(task %in% which(done))
  }
  new_reproduction(res, info)
}

# The error of a run whose future failed or was lost (a kmaha_plan_error
# from plan_lapply(), whose task positions index `perm`): the cause and the
# futures' states, which cells were in the failed futures and in those
# still running, and how to resume.
repro_plan_error <- function(e, perm, cells, task, checkpoint, from_checkpoint) {
  describe <- function(pos) {
    ts <- perm[pos]
    if (!length(ts)) return("")
    shown <- vapply(utils::head(ts, 4L), function(t) {
      cc <- cells[task == t, , drop = FALSE]
      sprintf("%s split %d %s %s", cc$dataset[1], cc$split[1], cc$learner[1],
              paste(cc$kernel, collapse = "+"))
    }, "")
    sprintf(": %s%s", paste(shown, collapse = ", "),
            if (length(ts) > 4L) sprintf(", and %d more tasks", length(ts) - 4L) else "")
  }
  ncells <- function(pos) sum(task %in% perm[pos])
  lines <- c(
    sprintf("reproduce_paper() stopped: a future of the plan failed. %s", conditionMessage(e)),
    sprintf("Cells: %d in the failed future(s)%s.", ncells(e$failed), describe(e$failed)),
    if (length(e$running)) sprintf("%d in futures still running%s.", ncells(e$running),
                                   describe(e$running)),
    sprintf("%d finished%s, %d not started.", ncells(e$finished),
            if (from_checkpoint) sprintf(" (besides %d read from the checkpoint)", from_checkpoint) else "",
            ncells(e$not_started)),
    if (!is.null(checkpoint)) {
      sprintf("To resume, run the same reproduce_paper() call again with checkpoint = \"%s\": it reads the cells saved there (those finished%s) and computes only the others.",
              checkpoint,
              if (length(e$running)) ", and those of the futures still running as they finish" else "")
    } else {
      "The cells computed so far are lost: run reproduce_paper() with `checkpoint = \"<directory>\"` (on a file system the workers share), so that a run that stops can be resumed by running it again."
    })
  errorCondition(paste(lines, collapse = "\n"),
                 class = setdiff(class(e), c("error", "condition")), call = NULL,
                 cause = e$cause, checkpoint = checkpoint,
                 failed_cells = cells[task %in% perm[e$failed], , drop = FALSE],
                 running_cells = cells[task %in% perm[e$running], , drop = FALSE])
}

# learner_args: a named list with elements among repro_learners, each a
# named list of arguments of that learner's default method (the inputs, the
# labels and `scale` are the protocol's).
check_repro_learner_args <- function(learner_args) {
  if (!is.list(learner_args) || (length(learner_args) &&
      (is.null(names(learner_args)) || !all(names(learner_args) %in% repro_learners)))) {
    stopf("`learner_args` must be a named list with elements among \"nca\", \"lmnn\", \"dne\", each a list of learner arguments.")
  }
  for (lr in names(learner_args)) {
    a <- learner_args[[lr]]
    arg <- sprintf("learner_args$%s", lr)
    if (!is.list(a) || (length(a) && (is.null(names(a)) || any(!nzchar(names(a)))))) {
      stopf("`%s` must be a named list of %s() arguments, e.g. list(lambda = 0.1).", arg, lr)
    }
    fun <- switch(lr, nca = nca.default, lmnn = lmnn.default, dne = dne.default)
    known <- setdiff(names(formals(fun)), c("...", "num_threads"))
    if ("num_threads" %in% names(a)) {
      stopf("`%s` must not set `num_threads`: the threads of every fit are reproduce_paper()'s own `num_threads`.", arg)
    }
    reserved <- intersect(names(a), c("x", "y", "scale"))
    if (length(reserved)) {
      stopf("`%s` must not set %s: reproduce_paper() supplies it (the training split, standardized).",
            arg, paste(sQuote(reserved, FALSE), collapse = ", "))
    }
    bad <- setdiff(names(a), known)
    if (length(bad)) {
      valid <- setdiff(known, c("x", "y", "scale"))
      near <- valid[which.min(utils::adist(bad[1], valid))]
      hint <- if (utils::adist(bad[1], near) <= 2) sprintf(" (did you mean %s?)", sQuote(near, FALSE)) else ""
      stopf("`%s` sets %s, not an argument of %s()%s; its arguments are %s.",
            arg, paste(sQuote(bad, FALSE), collapse = ", "), lr, hint,
            paste(valid, collapse = ", "))
    }
  }
  learner_args
}

# ---------------------------------------------------------------------------
# Checkpoints: a directory with one file per finished cell
# ("cell_<dataset>_<split>_<learner>_<kernel>.rds", the cell's row) and
# "settings.rds", the settings that determine a cell's result.  Every file is
# written to a temporary file in the same directory and renamed into place,
# so that a reader sees it complete or not at all.

checkpoint_settings_file <- "settings.rds"

# Creates or opens the checkpoint directory; stops when it holds cells of a
# run with other settings.  Returns the directory's absolute path.
checkpoint_open <- function(dir, settings) {
  if (!is.character(dir) || length(dir) != 1L || is.na(dir) || !nzchar(dir)) {
    stopf("`checkpoint` must be NULL or the name of a directory.")
  }
  if (file.exists(dir) && !dir.exists(dir)) {
    stopf("`checkpoint` must name a directory (one file per finished cell is written there), but %s is a file.",
          sQuote(dir, FALSE))
  }
  if (!dir.exists(dir) && !dir.create(dir, recursive = TRUE, showWarnings = FALSE)) {
    stopf("Could not create the checkpoint directory %s.", sQuote(dir, FALSE))
  }
  dir <- normalizePath(dir, mustWork = TRUE)
  file <- file.path(dir, checkpoint_settings_file)
  if (file.exists(file)) {
    old <- try_step(readRDS(file), function(e) NULL)
    if (!is.list(old)) {
      stopf("%s is not a kmaha checkpoint directory: its %s cannot be read. Use another directory.",
            sQuote(dir, FALSE), checkpoint_settings_file)
    }
    keys <- union(names(old), names(settings))
    differ <- keys[!vapply(keys, function(k) identical(old[[k]], settings[[k]]), NA)]
    if (length(differ)) {
      stopf("The checkpoint %s was written by a run with different %s; its cells would not match this run. Use another directory, or the settings of that run.",
            sQuote(dir, FALSE), paste(sQuote(differ, FALSE), collapse = ", "))
    }
  } else {
    write_rds_atomic(settings, file)
  }
  dir
}

checkpoint_cell_file <- function(dir, cell) {
  file.path(dir, sprintf("cell_%s_%d_%s_%s.rds", cell$dataset, as.integer(cell$split),
                         cell$learner, cell$kernel))
}

# The rows of the cells saved in the checkpoint (NULL for a cell without a
# readable file, or whose fit failed: those are computed again).
checkpoint_read <- function(dir, cells) {
  lapply(seq_len(nrow(cells)), function(i) {
    f <- checkpoint_cell_file(dir, cells[i, ])
    if (!file.exists(f)) return(NULL)
    row <- try_step(readRDS(f), function(e) NULL)
    keys <- c("dataset", "split", "learner", "kernel")
    ok <- is.data.frame(row) && nrow(row) == 1L &&
      identical(names(row), repro_columns) &&
      identical(as.list(row[keys]), as.list(cells[i, keys])) &&
      is.na(row$error)
    if (ok) row else NULL
  })
}

# saveRDS() to a temporary file beside `file`, then rename: `file` is never
# seen half-written.
write_rds_atomic <- function(object, file) {
  tmp <- tempfile(paste0(".", basename(file), "-"), tmpdir = dirname(file),
                  fileext = ".tmp")
  on.exit(if (file.exists(tmp)) unlink(tmp), add = TRUE)
  saveRDS(object, tmp)
  if (!file.rename(tmp, file)) {
    stopf("Could not write the checkpoint file %s.", sQuote(file, FALSE))
  }
  invisible(file)
}

repro_learners <- c("nca", "lmnn", "dne")
repro_kernels <- c("linear", "cv", "aligned", "unweighted", "auto")
# Kernel columns computed together, from one cross-validation.
repro_shared <- c("cv", "auto")

check_split_ids <- function(split_ids, splits) {
  if (is.null(split_ids)) return(seq_len(splits))
  if (!is.numeric(split_ids) || !length(split_ids) || anyNA(split_ids) ||
      any(split_ids != round(split_ids)) || any(split_ids < 1) ||
      any(split_ids > splits)) {
    stopf("`split_ids` must be NULL or whole numbers between 1 and `splits` (%d).",
          splits)
  }
  sort(unique(as.integer(split_ids)))
}

# Datasets as matrices, loaded once per R process (the main one and each
# worker) and kept for the cells that follow.
repro_cache <- new.env(parent = emptyenv())

repro_data <- function(name, source) {
  key <- paste(name, source$path %||% "", source$download)
  if (is.null(repro_cache[[key]])) {
    args <- list(name, download = source$download)
    if (!is.null(source$path)) args$path <- source$path
    d <- do.call(kmaha_data, args)
    info <- paper_datasets()
    repro_cache[[key]] <- list(x = as.matrix(d[, -ncol(d), drop = FALSE]),
                               y = d$class,
                               n_train = info$n_train[info$name == name])
  }
  repro_cache[[key]]
}

# A seed from a key string: a polynomial hash of its bytes modulo 2^31 - 1
# (exact in double arithmetic), the same on every platform and R version.
key_seed <- function(...) {
  h <- 0
  for (b in utf8ToInt(paste(..., sep = "|"))) h <- (h * 31 + b) %% 2147483647
  as.integer(h)
}

# Seeds R's default generators (whatever the session's RNG kinds are).
set_cell_seed <- function(s) {
  set.seed(s, kind = "Mersenne-Twister", normal.kind = "Inversion",
           sample.kind = "Rejection")
}

# Training rows of one split: depend on the seed, the dataset and the split
# index only.
split_rows <- function(seed, dataset, split, n, n_train) {
  set_cell_seed(key_seed("kmaha-split", seed, dataset, split))
  sample.int(n, n_train)
}

# The task function the workers receive (small to send; repro_cell() comes
# from the worker's own copy of the namespace): checks the worker's kmaha
# version (written out, see R/parallel.R), runs the cell with the session's kmaha options, and says where
# an error (such as a data directory missing on another machine) happened.
repro_cell_call <- function(i, job, progress) {
  if (!is.null(job$settings) &&
      !identical(as.character(getNamespaceVersion("kmaha")), job$settings$version)) {
    stop(sprintf(job$settings$version_error, getNamespaceVersion("kmaha")), call. = FALSE)
  }
  old <- worker_enter(job$settings)
  on.exit(options(old), add = TRUE)
  if (is.null(job$settings) || Sys.getpid() == job$settings$pid) {
    return(repro_cell(i, job, progress))
  }
  withCallingHandlers(repro_cell(i, job, progress), error = function(e) {
    stop(sprintf("On a worker of the future plan (host %s, process %d): %s (this session's kmaha options reach the workers; a data path must also exist on the worker's machine)",
                 Sys.info()[["nodename"]], Sys.getpid(), conditionMessage(e)), call. = FALSE)
  })
}

# One task: the cells of one split and learner that are fitted together
# (one kernel column, or "cv" and "auto", which share their
# cross-validation): split, standardize, fit, predict. One thread per fit,
# so that sums run in a fixed order and the result does not depend on the
# plan.
repro_cell <- function(i, job, progress) {
  cells <- job$cells[job$task == i, , drop = FALSE]
  cell <- cells[1L, ]
  d <- repro_data(cell$dataset, job$source)
  tr <- split_rows(job$seed, cell$dataset, cell$split, nrow(d$x), d$n_train)
  # "cv" and "auto" start from the same random state (that of "cv"), so
  # that each equals its cell run alone.
  set_cell_seed(key_seed("kmaha-cell", job$seed, cell$dataset, cell$split,
                         cell$learner,
                         if (cell$kernel %in% repro_shared) "cv" else cell$kernel))
  t0 <- proc.time()[["elapsed"]]
  warns <- character()
  r <- tryCatch(withCallingHandlers(
    repro_fit(d$x[tr, , drop = FALSE], d$y[tr], d$x[-tr, , drop = FALSE],
              d$y[-tr], cell$learner, cells$kernel, job$base_kernels,
              job$cv_folds, job$learner_args[[cell$learner]] %||% list(),
              job$num_threads %||% 1L),
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    }),
    error = function(e) {
      # a time limit stops the run, it does not fail the cell
      if (is_stop_condition(e)) stop(e)
      lapply(cells$kernel, function(k) {
        list(accuracy = NA_real_, sigma = NA_real_, weights = NA_character_,
             components = NA_integer_, choice = NA_character_,
             error = conditionMessage(e))
      })
    })
  warns <- unique(gsub("[\r\n]+", " ", warns))
  secs <- proc.time()[["elapsed"]] - t0
  rows <- do.call(rbind, lapply(seq_len(nrow(cells)), function(j) {
    rj <- r[[j]]
    data.frame(cells[j, ], accuracy = rj$accuracy, seconds = secs, sigma = rj$sigma,
               weights = rj$weights, components = rj$components, choice = rj$choice,
               error = rj$error,
               warning = if (length(warns)) paste(warns, collapse = " | ") else NA_character_,
               stringsAsFactors = FALSE)
  }))
  rownames(rows) <- NULL
  if (!is.null(job$checkpoint)) {
    for (j in seq_len(nrow(rows))) {
      write_rds_atomic(rows[j, ], checkpoint_cell_file(job$checkpoint, rows[j, ]))
    }
  }
  progress(sprintf("%s split %d %s %s", cell$dataset, cell$split, cell$learner,
                   paste(cells$kernel, collapse = "+")), amount = nrow(cells))
  rows
}

# The fits of one task: one result per kernel column in `kernels`, each a
# kmaha() fit with the protocol's settings.  The "cv" and "auto" columns
# read one scoring of the candidates (score_candidates(), with the
# screen's shortlist the "cv" rule uses): kmaha() fits the candidate each
# rule selects from it, both from the random state after the scoring, so
# each equals the fit kmaha(kernel = "cv") or kmaha(kernel = "auto") would
# make alone.
repro_fit <- function(xtr, ytr, xte, yte, learner, kernels, base_kernels, folds,
                      largs, num_threads = 1L) {
  ytr <- droplevels(factor(ytr))
  # A column constant on a small training split carries no information
  # there; drop it for this split (the paper's standardization needs sd > 0).
  keep <- apply(xtr, 2L, function(v) max(v) > min(v))
  xtr <- xtr[, keep, drop = FALSE]
  xte <- xte[, keep, drop = FALSE]
  fit_one <- function(kernel, rule = NULL) {
    kmaha(xtr, ytr, learner = learner, kernel = kernel, k = 1, rule = rule,
          learner_args = largs, kernels = base_kernels, cv_folds = folds,
          neighbors = if (identical(kernel, "unweighted")) "input" else "feature",
          num_threads = num_threads)
  }
  fits <- if (all(kernels %in% repro_shared)) {
    scores <- score_candidates(xtr, ytr, learner = learner,
                               candidates = if ("auto" %in% kernels) "auto" else "kernels",
                               kernels = base_kernels, folds = folds, k = 1,
                               learner_args = largs, num_threads = num_threads,
                               shortlist = default_shortlist(if ("cv" %in% kernels) "kernels" else "auto"))
    restore <- save_rng()
    lapply(kernels, function(kernel) {
      restore()
      fit_one(scores, rule = kernel)
    })
  } else {
    lapply(kernels, function(kernel) fit_one(if (kernel == "aligned") "align" else kernel))
  }
  lapply(seq_along(kernels), function(j) {
    fit <- fits[[j]]
    kernel <- kernels[j]
    pred <- stats::predict(fit, xte, type = "class", num_threads = num_threads)
    # A test class unseen in training can never be predicted correctly; it
    # still counts as an error, as in the paper's protocol.
    ch <- fit$kernel_choice
    cu <- ch$cv$curve
    list(accuracy = sum(as.character(pred) == as.character(yte)) / length(yte),
         sigma = if (kernel %in% repro_shared) cu$sigma[ch$cv$best] else NA_real_,
         weights = if (kernel == "aligned" || identical(ch$alignment$method, "qp"))
           format_weights(ch$alignment) else NA_character_,
         components = if (fit$feature_map$type == "identity") NA_integer_ else ncol(fit$L),
         choice = if (kernel %in% repro_shared) cu$label[ch$cv$best] else NA_character_,
         error = NA_character_)
  })
}

# "sigma:weight" pairs of the non-zero weights of an aligned combination,
# weights normalized to sum to 1.
format_weights <- function(al) {
  w <- al$weights
  on <- w > 0
  paste(sprintf("%s:%s", format(al$sigma[on], trim = TRUE, drop0trailing = TRUE),
                signif(w[on] / sum(w[on]), 3)), collapse = " ")
}

repro_columns <- c("dataset", "split", "learner", "kernel", "accuracy",
                   "seconds", "sigma", "weights", "components", "choice",
                   "error", "warning")

new_reproduction <- function(res, run_info) {
  # Files of kmaha 0.3.0 have no `choice` column.
  if (is.null(res$choice)) res$choice <- rep(NA_character_, nrow(res))
  res <- res[, repro_columns]
  res$split <- as.integer(res$split)
  res$components <- as.integer(res$components)
  attr(res, "run_info") <- run_info
  class(res) <- c("kmaha_reproduction", "data.frame")
  res
}

# The settings, software and machine of a run.
repro_run_info <- function(seed, splits, split_ids, cv_folds, elapsed) {
  plan <- setdiff(class(future::plan()),
                  c("FutureStrategy", "tweaked", "uniprocess", "multiprocess",
                    "future", "function"))[1]
  run_header(plan = plan, workers = as.integer(future::nbrOfWorkers()),
             seed = seed, splits = splits,
             split_ids = paste(compress_ids(split_ids), collapse = ","),
             cv_folds = cv_folds, elapsed_seconds = round(elapsed, 1))
}

# Date, software and machine, followed by the fields in `...`: the header of
# the results files (also used by the scripts in data-raw/).
run_header <- function(...) {
  cpu <- NA_character_
  if (file.exists("/proc/cpuinfo")) {
    m <- grep("^model name", readLines("/proc/cpuinfo", warn = FALSE), value = TRUE)
    if (length(m)) cpu <- trimws(sub("^[^:]*:", "", m[1]))
  }
  c(list(date = format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"),
         kmaha_version = as.character(utils::packageVersion("kmaha")),
         r_version = R.version.string,
         platform = R.version$platform,
         cpu = cpu,
         cores = as.integer(future::availableCores()),
         blas = unname(extSoftVersion()["BLAS"]),
         lapack = La_library()),
    list(...))
}

# 1,2,3,5 -> "1-3", "5"
compress_ids <- function(ids) {
  if (!length(ids)) return(character())
  brk <- c(0L, which(diff(ids) != 1L), length(ids))
  vapply(seq_len(length(brk) - 1L), function(j) {
    a <- ids[brk[j] + 1L]
    b <- ids[brk[j + 1L]]
    if (a == b) as.character(a) else sprintf("%d-%d", a, b)
  }, character(1))
}

#' The paper's reproduction, as shipped
#'
#' Reads the per-split results of the full run of [reproduce_paper()] (all
#' nine datasets, three learners, four kernel choices, 40 splits, default
#' seed) shipped with the package in `extdata/paper_reproduction.csv`. The
#' file is written by the script `data-raw/reproduce-paper.R` of the source
#' package; its header records the machine, BLAS, package version, date and
#' total run time (the attribute `run_info`). Any row can be re-derived with
#' [reproduce_paper()] for that one dataset, learner, kernel choice and split
#' (`split_ids`).
#'
#' @param file The results file; the shipped one by default.
#' @return A `kmaha_reproduction` data frame, as returned by
#'   [reproduce_paper()] (same class and columns).
#' @seealso [reproduce_paper()], [summary.kmaha_reproduction()],
#'   `vignette("reproduction", package = "kmaha")`.
#' @examples
#' if (nzchar(system.file("extdata", "paper_reproduction.csv", package = "kmaha"))) {
#'   res <- paper_reproduction()
#'   attr(res, "run_info")$elapsed_seconds
#'   head(summary(res))
#' }
#' @export
paper_reproduction <- function(file = system.file("extdata", "paper_reproduction.csv",
                                                  package = "kmaha")) {
  if (!is.character(file) || length(file) != 1L || is.na(file) ||
      !nzchar(file) || !file.exists(file)) {
    stopf("The shipped reproduction results (extdata/paper_reproduction.csv) are missing from this installation of kmaha. Create them with the script data-raw/reproduce-paper.R of the source package, or run reproduce_paper() yourself.")
  }
  read_reproduction(file)
}

# The results file: "# key: value" header lines (run_info), then a CSV of
# the per-cell rows (accuracy and sigma with 15 significant digits, or 17
# where 15 do not read back exactly).
write_reproduction <- function(res, file) {
  df <- as.data.frame(unclass(res), stringsAsFactors = FALSE)[repro_columns]
  num17 <- function(v) {
    out <- sprintf("%.15g", v)
    long <- !is.na(v)
    long[long] <- as.numeric(out[long]) != v[long]
    out[long] <- sprintf("%.17g", v[long])
    out[is.na(v)] <- NA_character_
    out
  }
  df$accuracy <- num17(df$accuracy)
  df$sigma <- num17(df$sigma)
  df$seconds <- sprintf("%.3f", df$seconds)
  df$error <- gsub("[\r\n]+", " ", df$error)
  df$warning <- gsub("[\r\n]+", " ", df$warning)
  write_csv_header(df, file, attr(res, "run_info"),
                   quote = c("dataset", "learner", "kernel", "weights", "choice",
                             "error", "warning"))
}

# A CSV file headed by "# key: value" lines (values on one line each); the
# columns named in `quote` are quoted, missing values are empty.
write_csv_header <- function(df, file, info, quote = character()) {
  con <- file(file, "w")
  on.exit(close(con), add = TRUE)
  info_val <- vapply(info, function(v) gsub("[\r\n]+", " ", paste(v, collapse = " ")),
                     character(1))
  writeLines(sprintf("# %s: %s", names(info), info_val), con)
  utils::write.csv(df, con, row.names = FALSE, na = "",
                   quote = if (length(quote)) match(quote, names(df)) else FALSE)
  invisible(file)
}

read_reproduction <- function(file) {
  lines <- readLines(file, warn = FALSE)
  head <- grep("^#", lines, value = TRUE)
  key <- sub("^# *([^:]+):.*$", "\\1", head)
  val <- sub("^# *[^:]+: ?", "", head)
  info <- as.list(stats::setNames(val, key))
  for (nm in intersect(names(info), c("cores", "workers", "seed", "splits", "cv_folds"))) {
    info[[nm]] <- as.integer(info[[nm]])
  }
  if (!is.null(info$elapsed_seconds)) info$elapsed_seconds <- as.numeric(info$elapsed_seconds)
  body <- lines[!grepl("^#", lines)]
  classes <- c(dataset = "character", split = "integer", learner = "character",
               kernel = "character", accuracy = "numeric", seconds = "numeric",
               sigma = "numeric", weights = "character", components = "integer",
               choice = "character", error = "character", warning = "character")
  present <- gsub('"', "", strsplit(body[1], ",", fixed = TRUE)[[1]])
  df <- utils::read.csv(text = body, stringsAsFactors = FALSE,
                        colClasses = classes[names(classes) %in% present],
                        na.strings = "")
  if (is.null(df$choice)) {
    df$choice <- rep(NA_character_, nrow(df))
    df <- df[, intersect(repro_columns, names(df))]
  }
  if (!identical(names(df), repro_columns)) {
    stopf("%s is not a kmaha reproduction file: expected the columns %s.",
          file, paste(repro_columns, collapse = ", "))
  }
  new_reproduction(df, info)
}

#' @export
rbind.kmaha_reproduction <- function(..., deparse.level = 1) {
  parts <- list(...)
  if (!all(vapply(parts, inherits, NA, "kmaha_reproduction"))) {
    return(do.call(rbind.data.frame, lapply(parts, as.data.frame)))
  }
  rows <- do.call(rbind.data.frame,
                  lapply(parts, function(p) as.data.frame(unclass(p), stringsAsFactors = FALSE)))
  key <- paste(rows$dataset, rows$split, rows$learner, rows$kernel)
  if (anyDuplicated(key)) {
    stopf("The results to combine share cells (e.g. %s); combine results of different cells only.",
          key[anyDuplicated(key)])
  }
  rownames(rows) <- NULL
  info <- attr(parts[[length(parts)]], "run_info")
  if (!is.null(info)) {
    secs <- vapply(parts, function(p) as.numeric(attr(p, "run_info")$elapsed_seconds %||% NA),
                   numeric(1))
    info$elapsed_seconds <- sum(secs)
    info$split_ids <- paste(compress_ids(sort(unique(rows$split))), collapse = ",")
  }
  new_reproduction(rows, info)
}
