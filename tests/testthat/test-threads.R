# The package thread setting: its precedence, its error messages, and that
# every threaded loop of the core gives the same result on 1 and 2 threads.

test_that("thread count: argument > option > environment > default", {
  old <- options(kmaha.num_threads = NULL)
  on.exit(options(old), add = TRUE)
  with_thread_env(NA, {
    expect_identical(kmaha_threads(), min(2L, as.integer(future::availableCores())))
    expect_identical(kmaha:::resolve_threads(NULL), kmaha_threads())
  })
  with_thread_env("3", {
    expect_identical(kmaha_threads(), 3L)
    options(kmaha.num_threads = 1)
    expect_identical(kmaha_threads(), 1L)
    expect_identical(kmaha:::resolve_threads(4), 4L)
    expect_identical(kmaha:::resolve_threads(NULL), 1L)
    # nca() records the count it used
    fit <- suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5, num_threads = 2))
    expect_identical(fit$settings$num_threads, 2L)
    fit <- suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5))
    expect_identical(fit$settings$num_threads, 1L)
  })
  options(kmaha.num_threads = NULL)
  expect_identical(kmaha_threads(2), min(2L, as.integer(future::availableCores())))
  expect_identical(getOption("kmaha.num_threads"), 2L)
  expect_identical(kmaha_threads(), 2L)
})

test_that("the machine's CPUs are read as future reads them, nproc once per session", {
  expect_identical(kmaha:::available_cores(), as.integer(future::availableCores()))
  # after the first reading, a PATH without the nproc program changes
  # nothing: it is not run again
  old_path <- Sys.getenv("PATH")
  on.exit(Sys.setenv(PATH = old_path), add = TRUE)
  first <- kmaha:::available_cores()
  expect_false(is.null(kmaha:::kmaha_session$nproc))
  Sys.setenv(PATH = "")
  expect_identical(kmaha:::available_cores(), first)
  # an option future reads still counts on every call
  old <- options(mc.cores = 1L, kmaha.num_threads = NULL)
  on.exit(options(old), add = TRUE)
  Sys.setenv(PATH = old_path)
  with_thread_env(NA, expect_identical(kmaha_threads(), 1L))
})

test_that("bad thread settings give clear errors", {
  old <- options(kmaha.num_threads = 0)
  on.exit(options(old), add = TRUE)
  expect_error(kmaha_threads(),
               "Option `kmaha.num_threads` must be a single whole number >= 1, not 0; reset it with options(kmaha.num_threads = NULL).",
               fixed = TRUE)
  options(kmaha.num_threads = NULL)
  with_thread_env("many", {
    expect_error(kmaha_threads(),
                 "Environment variable KMAHA_NUM_THREADS must be a whole number >= 1, not \"many\".",
                 fixed = TRUE)
    # a broken setting stops the C++ calls too, with the same message
    expect_error(kernel_matrix(rbf_kernel(1), diag(3)),
                 "KMAHA_NUM_THREADS must be a whole number", fixed = TRUE)
  })
  expect_error(kmaha_threads(1.5), "`n` must be a single whole number >= 1.",
               fixed = TRUE)
  expect_error(nca(iris[, 1:4], iris$Species, num_threads = 0),
               "`num_threads` must be a single whole number >= 1.", fixed = TRUE)
})

test_that("threaded loops give identical results on 1 and 2 threads", {
  d <- scale_data()
  x <- d$x
  y <- d$y
  run <- function() {
    set.seed(5)
    list(
      gram = kernel_matrix(kernel_sum(list(rbf_kernel(0.5), poly_kernel(2))), x),
      cross = kernel_matrix(laplace_kernel(2), x, x[1:37, ]),
      kpca = kpca(x, rbf_kernel(1), rank = 20)$coords,
      proj = predict(kpca(x[1:300, ], rbf_kernel(1)), x[301:600, ]),
      nys = kpca(x, rbf_kernel(1), landmarks = 80)$coords,
      nyspp = kpca(x, rbf_kernel(1), landmarks = 40,
                   landmark_method = "kmeans++")$landmark_index,
      knn = knn_classify(x[1:400, ], y[1:400], x[401:600, ], k = 3),
      loo = knn_classify(x, y, k = 5)$class,
      same = target_neighbors(x, y, k = 3),
      other = target_neighbors(x, y, k = 2, type = "other"),
      dne = dne(x, y, k = 3)$L,
      align = align_kernels(x, y, lapply(c(0.5, 1, 4), rbf_kernel))$S)
  }
  one <- with_threads(1, run())
  two <- with_threads(2, run())
  for (nm in names(one)) expect_identical(two[[nm]], one[[nm]], label = nm)
  # NCA sums per thread, so only rounding may differ
  f1 <- suppressWarnings(nca(x, y, max_iter = 20, num_threads = 1))
  f2 <- suppressWarnings(nca(x, y, max_iter = 20, num_threads = 2))
  expect_equal(f2$L, f1$L, tolerance = 1e-8)
})

# Evaluate expr with the environment variables `vars` (a named character
# vector; NA: unset) set, restoring them afterwards.
with_env <- function(vars, expr) {
  old <- Sys.getenv(names(vars), unset = NA, names = TRUE)
  on.exit({
    for (nm in names(old)) {
      if (is.na(old[[nm]])) Sys.unsetenv(nm) else do.call(Sys.setenv, as.list(old[nm]))
    }
  }, add = TRUE)
  for (nm in names(vars)) {
    if (is.na(vars[[nm]])) Sys.unsetenv(nm) else do.call(Sys.setenv, as.list(vars[nm]))
  }
  force(expr)
}

# Every variable by which parallelly or kmaha could see a scheduler's job.
no_job <- c(SLURM_JOB_ID = NA, SLURM_CPUS_PER_TASK = NA, SLURM_CPUS_ON_NODE = NA,
            SLURM_JOB_NUM_NODES = NA, SLURM_NNODES = NA, SLURM_TASKS_PER_NODE = NA,
            PBS_JOBID = NA, PBS_NUM_PPN = NA, NCPUS = NA, LSB_JOBID = NA,
            LSB_DJOB_NUMPROC = NA, LSB_MAX_NUM_PROCESSORS = NA, JOB_ID = NA, NSLOTS = NA,
            KMAHA_NUM_THREADS = NA)

test_that("inside a scheduler's job the thread count follows the allocation and never exceeds it", {
  old <- options(kmaha.num_threads = NULL)
  on.exit(options(old), add = TRUE)
  cores <- with_env(no_job, as.integer(future::availableCores()))
  slurm <- function(cpus) {
    v <- no_job
    v[c("SLURM_JOB_ID", "SLURM_CPUS_PER_TASK")] <- c("42", cpus)
    v
  }
  # outside a job: 2 at most by default, a setting as it is
  with_env(no_job, {
    expect_null(kmaha:::job_allocation())
    expect_identical(kmaha_threads(), min(2L, cores))
    options(kmaha.num_threads = 4)
    expect_identical(kmaha_threads(), 4L)
    options(kmaha.num_threads = NULL)
  })
  # a Slurm job given one CPU: one thread, whatever the option or variable
  with_env(slurm("1"), {
    expect_identical(kmaha:::job_allocation(), 1L)
    expect_identical(kmaha_threads(), 1L)
    options(kmaha.num_threads = 2)
    expect_identical(kmaha_threads(), 1L)
    expect_identical(kmaha:::resolve_threads(NULL), 1L)
    # an explicit argument is taken as it is
    expect_identical(kmaha:::resolve_threads(2), 2L)
    fit <- suppressWarnings(nca(iris[, 1:4], iris$Species, max_iter = 5))
    expect_identical(fit$settings$num_threads, 1L)
    options(kmaha.num_threads = NULL)
    with_thread_env("2", expect_identical(kmaha_threads(), 1L))
  })
  # a job given all of the machine's CPUs: all of them by default (not 2)
  with_env(slurm(as.character(cores)), {
    expect_identical(kmaha_threads(), cores)
    options(kmaha.num_threads = cores + 3)
    expect_identical(kmaha_threads(), cores)
    options(kmaha.num_threads = NULL)
  })
  # SGE's job (JOB_ID with NSLOTS)
  v <- no_job
  v[c("JOB_ID", "NSLOTS")] <- c("7", "1")
  with_env(v, {
    expect_identical(kmaha:::job_allocation(), 1L)
    expect_identical(kmaha_threads(), 1L)
  })
})
