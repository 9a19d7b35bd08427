# What lies behind the cells of Tables 1-3 that differ from the paper by more
# than 0.05: for each such cell of the shipped reproduction (or of the file
# in KMAHA_REPRO_FILE), the same splits are re-run with variants that isolate
# one choice the paper leaves open or that kmaha makes:
#
#   oracle sigma     (CV cells) the test accuracy of each single base kernel,
#                    best sigma on average over the splits: an upper bound
#                    for any choice by cross-validation;
#   dim = classes-1  (DNE cells) DNE's output dimension fixed to the number
#                    of classes minus one instead of the number of negative
#                    eigenvalues (the paper does not state its choice);
#   max_iter = 20    (NCA cells) NCA stopped early, as a gradient method with
#                    a fixed budget would;
#   lambda = 0       (kernel LMNN cells) plain KLMNN instead of the RKLMNN
#                    default;
#   input targets    (CV and aligned LMNN/DNE cells) target neighbours from
#                    the input space instead of the feature space.
#
# Writes the mean and standard deviation per cell and variant to
# inst/extdata/paper_investigations.csv, read by vignette("reproduction").
#
# Usage (from the package root, with the package installed):
#   Rscript data-raw/investigate-differences.R
# Environment: KMAHA_DATA_DIR (yeast, musk2), KMAHA_REPRO_WORKERS (default 2),
#   KMAHA_INVESTIGATE_SPLITS (default 10: the first splits of the run),
#   KMAHA_REPRO_FILE (default: the shipped results),
#   KMAHA_INVESTIGATE_OUT (default inst/extdata/paper_investigations.csv).
suppressPackageStartupMessages(library(kmaha))
`%||%` <- function(a, b) if (is.null(a)) b else a
workers <- as.integer(Sys.getenv("KMAHA_REPRO_WORKERS", "2"))
n_splits <- as.integer(Sys.getenv("KMAHA_INVESTIGATE_SPLITS", "10"))
file <- Sys.getenv("KMAHA_REPRO_FILE")
out <- Sys.getenv("KMAHA_INVESTIGATE_OUT", file.path("inst", "extdata", "paper_investigations.csv"))
res <- if (nzchar(file)) paper_reproduction(file) else paper_reproduction()
info <- attr(res, "run_info")
cells <- paper_differences(res, threshold = 0.05)
cat(sprintf("%d cells differ from the paper by more than 0.05\n", nrow(cells)))
splits_run <- sort(unique(res$split))
split_ids <- head(splits_run, n_splits)
seed <- as.integer(info$seed %||% 1L)
path <- Sys.getenv("KMAHA_DATA_DIR")

# One variant of one cell on one split: train/test as reproduce_paper() does.
variant_fit <- function(task) {
  d <- kmaha_data(task$dataset, download = !nzchar(Sys.getenv("KMAHA_DATA_DIR")))
  x <- as.matrix(d[, -ncol(d)])
  n_train <- paper_datasets()$n_train[paper_datasets()$name == task$dataset]
  tr <- kmaha:::split_rows(task$seed, task$dataset, task$split, nrow(x), n_train)
  keep <- apply(x[tr, , drop = FALSE], 2L, function(v) max(v) > min(v))
  xtr <- x[tr, keep, drop = FALSE]
  ytr <- droplevels(d$class[tr])
  xte <- x[-tr, keep, drop = FALSE]
  yte <- d$class[-tr]
  kmaha:::set_cell_seed(kmaha:::key_seed("kmaha-cell", task$seed, task$dataset, task$split,
                                         task$learner, task$kernel))
  kern <- switch(task$kernel, aligned = "align", task$kernel)
  if (!is.null(task$sigma)) kern <- rbf_kernel(task$sigma)
  nb <- if (task$kernel == "unweighted" || isTRUE(task$input_targets)) "input" else "feature"
  acc <- tryCatch({
    fit <- suppressWarnings(kmaha(xtr, ytr, learner = task$learner, kernel = kern, k = 1,
                                  learner_args = task$learner_args, neighbors = nb))
    mean(as.character(predict(fit, xte)) == as.character(yte))
  }, error = function(e) NA_real_)
  data.frame(dataset = task$dataset, learner = task$learner, kernel = task$kernel,
             variant = task$variant, split = task$split, accuracy = acc)
}

tasks <- list()
add <- function(cell, variant, ...) {
  for (s in split_ids) {
    tasks[[length(tasks) + 1L]] <<- utils::modifyList(
      list(dataset = cell$dataset, learner = cell$learner, kernel = cell$kernel,
           variant = variant, split = s, seed = seed, learner_args = list()),
      list(...))
  }
}
for (i in seq_len(nrow(cells))) {
  cl <- cells[i, ]
  n_class <- nlevels(kmaha_data(cl$dataset, download = !nzchar(path))$class)
  if (cl$kernel == "cv") {
    for (sg in paper_sigmas()) add(cl, sprintf("sigma = %s", format(sg)), sigma = sg)
  }
  if (cl$learner == "dne") add(cl, "dim = classes - 1", learner_args = list(dim = n_class - 1L))
  if (cl$learner == "nca") add(cl, "max_iter = 20", learner_args = list(max_iter = 20L))
  if (cl$learner == "lmnn" && cl$kernel != "linear") add(cl, "lambda = 0", learner_args = list(lambda = 0))
  if (cl$learner != "nca" && cl$kernel %in% c("cv", "aligned")) add(cl, "input targets", input_targets = TRUE)
}
cat(sprintf("%d fits on splits %s\n", length(tasks), paste(range(split_ids), collapse = "-")))
future::plan(future::multisession, workers = workers)
t0 <- proc.time()[["elapsed"]]
perm <- order((seq_along(tasks) * 0.6180339887498949) %% 1)
fits <- vector("list", length(tasks))
fits[perm] <- future.apply::future_lapply(tasks[perm], variant_fit, future.seed = TRUE,
                                          future.chunk.size = 4L)
future::plan(future::sequential)
fits <- do.call(rbind, fits)

# The shipped cells on the same splits, and the oracle sigma per CV cell.
base <- as.data.frame(unclass(res))
base <- base[base$split %in% split_ids, ]
rows <- list()
for (i in seq_len(nrow(cells))) {
  cl <- cells[i, ]
  b <- base[base$dataset == cl$dataset & base$learner == cl$learner & base$kernel == cl$kernel, ]
  rows[[length(rows) + 1L]] <- data.frame(cl[c("dataset", "learner", "kernel")], variant = "as shipped",
                                          splits = nrow(b), mean = mean(b$accuracy), sd = stats::sd(b$accuracy))
  f <- fits[fits$dataset == cl$dataset & fits$learner == cl$learner & fits$kernel == cl$kernel, ]
  sig <- grepl("^sigma = ", f$variant)
  if (any(sig)) {
    m <- tapply(f$accuracy[sig], f$variant[sig], mean)
    best <- names(m)[which.max(m)]
    a <- f$accuracy[f$variant == best]
    rows[[length(rows) + 1L]] <- data.frame(cl[c("dataset", "learner", "kernel")],
                                            variant = sprintf("oracle %s", best),
                                            splits = length(a), mean = mean(a), sd = stats::sd(a))
  }
  for (v in unique(f$variant[!sig])) {
    a <- f$accuracy[f$variant == v]
    rows[[length(rows) + 1L]] <- data.frame(cl[c("dataset", "learner", "kernel")], variant = v,
                                            splits = sum(!is.na(a)), mean = mean(a, na.rm = TRUE),
                                            sd = stats::sd(a, na.rm = TRUE))
  }
}
tab <- do.call(rbind, rows)
tab$paper_mean <- cells$paper_mean[match(paste(tab$dataset, tab$learner, tab$kernel),
                                         paste(cells$dataset, cells$learner, cells$kernel))]
rownames(tab) <- NULL
elapsed <- proc.time()[["elapsed"]] - t0
dir.create(dirname(out), showWarnings = FALSE, recursive = TRUE)
num <- vapply(tab, is.double, NA)
tab[num] <- lapply(tab[num], signif, 5)
kmaha:::write_csv_header(
  tab, out,
  kmaha:::run_header(results = sprintf("%s (run of %s)", if (nzchar(file)) basename(file) else "shipped",
                                       info$date %||% "?"),
                     splits = paste(kmaha:::compress_ids(split_ids), collapse = ","),
                     workers = workers, elapsed_seconds = round(elapsed, 1)),
  quote = c("dataset", "learner", "kernel", "variant"))
options(width = 160)
print(tab, digits = 3)
cat(sprintf("Wrote %s in %.1f min\n", out, elapsed / 60))
