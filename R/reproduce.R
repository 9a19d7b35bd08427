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
#' order); the cells run in parallel through
#' [future.apply::future_lapply()], so `future::plan(multisession)` uses
#' several cores. Progress is reported through progressr: wrap the call in
#' [progressr::with_progress()] to see a progress bar. A cell whose fit fails
#' gets accuracy `NA` and the error message in column `error`. The caller's
#' random state is restored on exit.
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
#'   `list(nca = list(max_iter = 200))`.
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
#' @export
reproduce_paper <- function(datasets = paper_datasets()$name,
                            learners = c("nca", "lmnn", "dne"),
                            kernels = c("linear", "cv", "aligned", "unweighted"),
                            splits = 40, split_ids = NULL, seed = 1,
                            base_kernels = paper_kernels(), cv_folds = 5,
                            path = NULL, download = FALSE,
                            learner_args = list()) {
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
  learners <- unique(match.arg(learners, repro_learners, several.ok = TRUE))
  kernels <- unique(match.arg(kernels, repro_kernels, several.ok = TRUE))
  splits <- check_count(splits, "splits")
  split_ids <- check_split_ids(split_ids, splits)
  seed <- check_count(seed, "seed", lower = 0L)
  if (any(kernels != "linear")) {
    base_kernels <- check_kernel_list(base_kernels, "base_kernels")
  }
  cv_folds <- check_count(cv_folds, "cv_folds", lower = 2L)
  if (!is.list(learner_args) || (length(learner_args) &&
      (is.null(names(learner_args)) || !all(names(learner_args) %in% repro_learners)))) {
    stopf("`learner_args` must be a named list with elements among \"nca\", \"lmnn\", \"dne\", each a list of learner arguments.")
  }
  # Load every dataset here first, so that a missing one fails now with
  # kmaha_data()'s message; the workers load (and keep) their own copies.
  source <- list(path = path, download = download)
  for (nm in datasets) repro_data(nm, source)
  on.exit(rm(list = ls(repro_cache), envir = repro_cache), add = TRUE)
  cells <- expand.grid(kernel = kernels, learner = learners, split = split_ids,
                       dataset = datasets, stringsAsFactors = FALSE)
  cells <- cells[, c("dataset", "split", "learner", "kernel")]
  job <- list(cells = cells, source = source, seed = seed,
              base_kernels = base_kernels, cv_folds = cv_folds,
              learner_args = learner_args, settings = worker_settings())
  if (!plan_is_local()) {
    shipped <- ship_closures(job[c("base_kernels", "learner_args")])
    job[c("base_kernels", "learner_args")] <- shipped
    job$packages <- attr(shipped, "packages")
  }
  # The cells seed R's generator; the caller's random state is put back.
  restore <- save_rng()
  on.exit(restore(), add = TRUE)
  t0 <- proc.time()[["elapsed"]]
  p <- progressr::progressor(steps = nrow(cells))
  # Cells differ a lot in cost (cross-validated LMNN against linear DNE):
  # they go to the workers in small chunks (a free worker takes the next
  # one), in a fixed low-discrepancy order that mixes every kind of cell.
  # Neither changes any result: each cell sets its own random state.
  n <- nrow(cells)
  perm <- order((seq_len(n) * 0.6180339887498949) %% 1)
  out <- vector("list", n)
  out[perm] <- plan_lapply(perm, repro_cell_call, job = job, progress = p,
                           seed = TRUE, chunk_size = 8L, packages = job$packages)
  res <- do.call(rbind, out)
  rownames(res) <- NULL
  new_reproduction(res, repro_run_info(
    seed = seed, splits = splits, split_ids = split_ids, cv_folds = cv_folds,
    elapsed = proc.time()[["elapsed"]] - t0))
}

repro_learners <- c("nca", "lmnn", "dne")
repro_kernels <- c("linear", "cv", "aligned", "unweighted")

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

# One cell: split, standardize, fit, predict. One thread per fit, so that
# sums run in a fixed order and the result does not depend on the plan.
repro_cell <- function(i, job, progress) {
  cell <- job$cells[i, ]
  d <- repro_data(cell$dataset, job$source)
  tr <- split_rows(job$seed, cell$dataset, cell$split, nrow(d$x), d$n_train)
  set_cell_seed(key_seed("kmaha-cell", job$seed, cell$dataset, cell$split,
                         cell$learner, cell$kernel))
  t0 <- proc.time()[["elapsed"]]
  warns <- character()
  r <- tryCatch(withCallingHandlers(
    repro_fit(d$x[tr, , drop = FALSE], d$y[tr], d$x[-tr, , drop = FALSE],
              d$y[-tr], cell$learner, cell$kernel, job$base_kernels,
              job$cv_folds, job$learner_args[[cell$learner]] %||% list()),
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    }),
    error = function(e) list(accuracy = NA_real_, sigma = NA_real_,
                             weights = NA_character_, components = NA_integer_,
                             error = conditionMessage(e)))
  warns <- unique(gsub("[\r\n]+", " ", warns))
  progress(sprintf("%s split %d %s %s", cell$dataset, cell$split, cell$learner,
                   cell$kernel))
  data.frame(cell, accuracy = r$accuracy,
             seconds = proc.time()[["elapsed"]] - t0, sigma = r$sigma,
             weights = r$weights, components = r$components, error = r$error,
             warning = if (length(warns)) paste(warns, collapse = " | ") else NA_character_,
             stringsAsFactors = FALSE)
}

repro_fit <- function(xtr, ytr, xte, yte, learner, kernel, base_kernels, folds,
                      largs) {
  ytr <- droplevels(factor(ytr))
  # A column constant on a small training split carries no information
  # there; drop it for this split (the paper's standardization needs sd > 0).
  keep <- apply(xtr, 2L, function(v) max(v) > min(v))
  xtr <- xtr[, keep, drop = FALSE]
  xte <- xte[, keep, drop = FALSE]
  kern <- if (kernel == "aligned") "align" else kernel
  fit <- kmaha(xtr, ytr, learner = learner, kernel = kern, k = 1,
               learner_args = largs, kernels = base_kernels, cv_folds = folds,
               neighbors = if (kernel == "unweighted") "input" else "feature",
               num_threads = 1L)
  pred <- stats::predict(fit, xte, type = "class")
  # A test class unseen in training can never be predicted correctly; it
  # still counts as an error, as in the paper's protocol.
  ch <- fit$kernel_choice
  list(accuracy = sum(as.character(pred) == as.character(yte)) / length(yte),
       sigma = if (kernel == "cv") ch$cv$curve$sigma[ch$cv$best] else NA_real_,
       weights = if (kernel == "aligned") format_weights(ch$alignment) else NA_character_,
       components = if (fit$feature_map$type == "identity") NA_integer_ else ncol(fit$L),
       error = NA_character_)
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
                   "seconds", "sigma", "weights", "components", "error",
                   "warning")

new_reproduction <- function(res, run_info) {
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
                   quote = c("dataset", "learner", "kernel", "weights", "error",
                             "warning"))
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
  df <- utils::read.csv(text = lines[!grepl("^#", lines)], stringsAsFactors = FALSE,
                        colClasses = c(dataset = "character", split = "integer",
                                       learner = "character", kernel = "character",
                                       accuracy = "numeric", seconds = "numeric",
                                       sigma = "numeric", weights = "character",
                                       components = "integer", error = "character",
                                       warning = "character"),
                        na.strings = "")
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
