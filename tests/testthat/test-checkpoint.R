# reproduce_paper(checkpoint = dir): every finished cell saved at once and
# atomically, a re-run computes only what is missing, a checkpoint of other
# settings is refused, and a run killed part-way (a child R process with two
# multisession workers, SIGKILL) resumes to the rows of an uninterrupted run.

ckpt_cells <- function(dir) list.files(dir, pattern = "^cell_.*\\.rds$")

# The rows of a reproduction without the timing column, for identical().
ckpt_rows <- function(r) {
  df <- as.data.frame(unclass(r), stringsAsFactors = FALSE)
  df$seconds <- NULL
  rownames(df) <- NULL
  df
}

ckpt_args <- list(datasets = "iris", learners = "dne",
                  kernels = c("linear", "unweighted"), splits = 3,
                  base_kernels = lapply(c(0.5, 2), rbf_kernel))

test_that("a checkpointed run equals a plain one; a re-run reads its cells", {
  plain <- do.call(reproduce_paper, ckpt_args)
  dir <- tempfile("kmaha-ckpt-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  a <- do.call(reproduce_paper, c(ckpt_args, list(checkpoint = dir)))
  expect_identical(ckpt_rows(a), ckpt_rows(plain))
  expect_identical(length(ckpt_cells(dir)), 6L)
  expect_identical(attr(a, "run_info")$cells_from_checkpoint, 0L)
  expect_identical(attr(a, "run_info")$checkpoint, normalizePath(dir))
  # no temporary file is left behind
  expect_identical(sort(list.files(dir, all.files = TRUE, no.. = TRUE)),
                   sort(c(ckpt_cells(dir), "settings.rds")))
  # each file holds its cell's row
  one <- readRDS(file.path(dir, "cell_iris_2_dne_unweighted.rds"))
  expect_identical(ckpt_rows(one), ckpt_rows(a[a$split == 2 & a$kernel == "unweighted", ]))

  # two cells lost: only they are computed again
  unlink(file.path(dir, c("cell_iris_1_dne_linear.rds", "cell_iris_3_dne_unweighted.rds")))
  b <- do.call(reproduce_paper, c(ckpt_args, list(checkpoint = dir)))
  expect_identical(attr(b, "run_info")$cells_from_checkpoint, 4L)
  expect_identical(ckpt_rows(b), ckpt_rows(plain))
  kept <- !(b$split == 1 & b$kernel == "linear") & !(b$split == 3 & b$kernel == "unweighted")
  expect_identical(b$seconds[kept], a$seconds[kept])  # read, not recomputed

  # a cell recorded as failed is tried again
  f <- file.path(dir, "cell_iris_2_dne_linear.rds")
  row <- readRDS(f)
  row$accuracy <- NA_real_
  row$error <- "killed by the operating system"
  saveRDS(row, f)
  c2 <- do.call(reproduce_paper, c(ckpt_args, list(checkpoint = dir)))
  expect_identical(attr(c2, "run_info")$cells_from_checkpoint, 5L)
  expect_identical(ckpt_rows(c2), ckpt_rows(plain))

  # the cell selection may change: more splits extend the checkpoint
  more <- utils::modifyList(ckpt_args, list(splits = 4))
  d <- do.call(reproduce_paper, c(more, list(checkpoint = dir)))
  expect_identical(attr(d, "run_info")$cells_from_checkpoint, 6L)
  expect_identical(nrow(d), 8L)
  m <- match(paste(plain$split, plain$kernel), paste(d$split, d$kernel))
  expect_identical(ckpt_rows(d[m, ]), ckpt_rows(plain))
})

test_that("a checkpoint written with other settings is refused", {
  dir <- tempfile("kmaha-ckpt-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  small <- list(datasets = "iris", learners = "dne", kernels = "linear", splits = 1)
  do.call(reproduce_paper, c(small, list(checkpoint = dir)))
  msg <- function(what) {
    sprintf("The checkpoint '%s' was written by a run with different %s; its cells would not match this run. Use another directory, or the settings of that run.",
            normalizePath(dir), what)
  }
  expect_error(do.call(reproduce_paper, c(small, list(checkpoint = dir, seed = 2))),
               msg("'seed'"), fixed = TRUE)
  expect_error(do.call(reproduce_paper, c(small, list(
    checkpoint = dir, cv_folds = 3, learner_args = list(dne = list(k = 2))))),
    msg("'cv_folds', 'learner_args'"), fixed = TRUE)
  file <- tempfile()
  writeLines("x", file)
  on.exit(unlink(file), add = TRUE)
  expect_error(do.call(reproduce_paper, c(small, list(checkpoint = file))),
               sprintf("`checkpoint` must name a directory (one file per finished cell is written there), but '%s' is a file.",
                       file), fixed = TRUE)
  expect_error(do.call(reproduce_paper, c(small, list(checkpoint = c("a", "b")))),
               "`checkpoint` must be NULL or the name of a directory.", fixed = TRUE)
})

test_that("a run killed part-way resumes to the rows of an uninterrupted run", {
  skip_on_cran()
  skip_if_not_installed("callr")
  skip_if_not_installed("processx")
  skip_if(!nzchar(Sys.which("mkfifo")), "no mkfifo")
  # One base kernel is an R function that, in the killed run only (where
  # KMAHA_TEST_HOLD_DIR names the checkpoint), holds every fit that
  # evaluates it once two cells are in the checkpoint: it says so on one
  # FIFO (`signal`, which this test reads), then waits on another that
  # nobody writes (`gate`).  That run cannot finish, and the test kills it
  # when a fit says it is held: events, not a clock, decide, whatever the
  # machine's speed or load.  Elsewhere (the resumed and the uninterrupted
  # runs of this process) it is an ordinary kernel, the same object, so the
  # checkpoint's settings match (without source references, whose srcfile
  # environments would differ between the processes).
  held <- function(a, b) {
    dir <- Sys.getenv("KMAHA_TEST_HOLD_DIR")
    if (nzchar(dir) && length(list.files(dir, pattern = "^cell_.*\\.rds$")) >= 2L) {
      out <- fifo(Sys.getenv("KMAHA_TEST_HOLD_SIGNAL"), "w", blocking = TRUE)
      writeLines("held", out)
      close(out)
      readLines(fifo(Sys.getenv("KMAHA_TEST_HOLD_GATE"), "r", blocking = TRUE))
    }
    d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
    exp(-pmax(d2, 0) / (2 * ncol(a)))
  }
  environment(held) <- globalenv()
  held <- utils::removeSource(held)
  args <- list(datasets = "iris", learners = "dne",
               kernels = c("linear", "unweighted", "aligned"), splits = 8,
               base_kernels = c(lapply(c(0.5, 2, 5), rbf_kernel),
                                list(custom_kernel(held, matrix = TRUE, name = "held"))))
  total <- 3L * 8L
  dir <- tempfile("kmaha-ckpt-")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  fifos <- tempfile("kmaha-hold-")
  dir.create(fifos)
  on.exit(unlink(fifos, recursive = TRUE), add = TRUE)
  gate <- file.path(fifos, "gate")
  expect_identical(system2("mkfifo", shQuote(gate)), 0L)
  signal <- processx::conn_create_fifo(file.path(fifos, "signal"), read = TRUE)
  on.exit(close(signal), add = TRUE)
  # a child R process with two multisession workers, killed (SIGKILL to the
  # child and its workers) once a fit says it is held
  child <- callr::r_bg(function(args, dir, libs, signal, gate) {
    Sys.setenv(R_LIBS = paste(libs, collapse = .Platform$path.sep),
               KMAHA_TEST_HOLD_DIR = dir, KMAHA_TEST_HOLD_SIGNAL = signal,
               KMAHA_TEST_HOLD_GATE = gate)
    future::plan(future::multisession, workers = 2)
    do.call(kmaha::reproduce_paper, c(args, list(checkpoint = dir)))
  }, args = list(args = args, dir = dir, libs = .libPaths(),
                 signal = file.path(fifos, "signal"), gate = gate),
  libpath = .libPaths(), env = c(callr::rcmd_safe_env(), KMAHA_NUM_THREADS = "1"))
  on.exit(if (child$is_alive()) child$kill_tree(), add = TRUE)
  # wait for the signal (or the child's end, if it failed): no timeout, no
  # polling interval
  held_now <- FALSE
  repeat {
    ready <- processx::poll(list(child, signal), -1)
    if (identical(ready[[2]], "ready")) {
      held_now <- identical(processx::conn_read_lines(signal, 1L), "held")
      if (held_now) break
    }
    if (identical(ready[[1]][["process"]], "ready") || !child$is_alive()) break
    if (identical(ready[[1]][["output"]], "ready")) child$read_output()
    if (identical(ready[[1]][["error"]], "ready")) child$read_error()
  }
  # held (it cannot finish); if not, it failed:
  expect_true(held_now && child$is_alive(), label = paste(
    "the run to kill is held;", if (!child$is_alive()) {
      paste(utils::tail(child$read_all_error_lines(), 5), collapse = " ")
    }))
  child$kill_tree()
  child$wait()
  expect_false(child$is_alive())
  written <- ckpt_cells(dir)
  expect_gte(length(written), 2L)
  expect_lt(length(written), total)
  # every cell file is complete (written to a temporary file, then renamed)
  for (f in written) expect_s3_class(readRDS(file.path(dir, f)), "data.frame")

  # (a worker killed while it renamed a finished cell into place may add
  # that one cell after the count: the resumed run reads it too)
  resumed <- do.call(reproduce_paper, c(args, list(checkpoint = dir)))
  expect_gte(attr(resumed, "run_info")$cells_from_checkpoint, length(written))
  expect_lt(attr(resumed, "run_info")$cells_from_checkpoint, total)
  expect_identical(length(ckpt_cells(dir)), total)
  uninterrupted <- do.call(reproduce_paper, args)
  expect_identical(ckpt_rows(resumed), ckpt_rows(uninterrupted))
  expect_true(all(is.na(resumed$error)))
})
