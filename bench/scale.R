# kmaha on larger data: fit time, peak memory and test accuracy against the
# training size n for NCA, LMNN, DNE and KNCA with Nystrom KPCA, beside
# scikit-learn's NCA and Nystroem + PCA + NCA, on mlbench::LetterRecognition
# (20 000 x 16, 26 classes: train on up to 16 000, test on the last 4 000)
# and the full mlbench::Satellite set (6 435 x 36, 6 classes: a fixed random
# 1 435 rows for testing, up to 5 000 for training).
#
#   Rscript bench/scale.R                     # the installed kmaha
#   KMAHA_LIB=/tmp/lib Rscript bench/scale.R  # a private library
#
# Every fit runs in a fresh child process (Rscript or python3) under
# `ulimit -v` (KMAHA_BENCH_MEM_GB, default 16) and `timeout`
# (KMAHA_BENCH_TIMEOUT seconds, default 600); the child reports its wall
# time, its peak resident memory (VmHWM / ru_maxrss) and its peak before
# fitting (interpreter, packages and data), and the 1-NN test accuracy.
# Methods are interleaved at each n, so every ratio comes from one run.
# A scikit-learn method that fails (time or memory) at some n is not run at
# larger n. Environment:
#   KMAHA_BENCH_DATA     letter,satellite
#   KMAHA_BENCH_N        training sizes (default 1000,2000,4000,8000,16000;
#                        sizes above a data set's training pool are skipped)
#   KMAHA_BENCH_METHODS  subset of: euclid,nca,nca_lbfgs,lmnn,dne,knca_nys,
#                        sk_nca,sk_nys_nca
#   KMAHA_BENCH_THREADS  kmaha threads (default 2)
#   KMAHA_BENCH_OUT      CSV of all rows (default bench/results/scale.csv)
#   KMAHA_BENCH_REPORT   CSVs of earlier runs: print their tables, run nothing
# Settings: kmaha defaults (nca(): "auto", i.e. L-BFGS up to 5 000 rows and
# mini-batches above; lmnn(): k = 3; dne(): k = 3); KNCA = kmaha(learner =
# "nca", kernel = rbf_kernel(2), landmarks = 1000, rank = 100,
# learner_args = list(dim = 26, method = "minibatch")), the mini-batch NCA at
# every n (on 100 KPCA coordinates full-batch L-BFGS overfits small training
# sets); scikit-learn: defaults
# (NeighborhoodComponentsAnalysis(max_iter = 50)), one BLAS thread, on the
# same standardized inputs; Nystroem(1000 components, the same kernel) +
# PCA(100) + NCA(26 components).

lib <- Sys.getenv("KMAHA_LIB", "")
lib_arg <- if (nzchar(lib)) lib else NULL
suppressPackageStartupMessages(library(kmaha, lib.loc = lib_arg))

env_list <- function(name, default) strsplit(Sys.getenv(name, default), ",")[[1]]
datasets <- env_list("KMAHA_BENCH_DATA", "letter,satellite")
sizes <- as.integer(env_list("KMAHA_BENCH_N", "1000,2000,4000,8000,16000"))
methods <- env_list("KMAHA_BENCH_METHODS",
                    "euclid,nca,nca_lbfgs,lmnn,dne,knca_nys,sk_nca,sk_nys_nca")
threads <- as.integer(Sys.getenv("KMAHA_BENCH_THREADS", "2"))
timeout_s <- as.integer(Sys.getenv("KMAHA_BENCH_TIMEOUT", "600"))
mem_gb <- as.numeric(Sys.getenv("KMAHA_BENCH_MEM_GB", "16"))
out_csv <- Sys.getenv("KMAHA_BENCH_OUT", file.path("bench", "results", "scale.csv"))
knca_cfg <- list(sigma = 2, landmarks = 1000L, rank = 100L, dim = 26L)

cat("kmaha scaling benchmark\n")
cat("R:", R.version.string, "  kmaha", format(utils::packageVersion("kmaha", lib.loc = lib_arg)), "\n")
cat("BLAS:", extSoftVersion()[["BLAS"]], "  LAPACK:", La_library(), "\n")
cat("cores:", parallel::detectCores(), "  kmaha threads:", threads, "  load average:",
    tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")
cat(sprintf("limits per fit: %d s, %g GB virtual memory\n\n", timeout_s, mem_gb))

# Data ---------------------------------------------------------------------
load_set <- function(name) {
  if (name == "letter") {
    e <- new.env()
    utils::data("LetterRecognition", package = "mlbench", envir = e)
    d <- e$LetterRecognition
    x <- as.matrix(d[, -1])
    storage.mode(x) <- "double"
    return(list(x = x, y = d$lettr, pool = 1:16000, test = 16001:20000))
  }
  e <- new.env()
  utils::data("Satellite", package = "mlbench", envir = e)
  d <- e$Satellite
  x <- as.matrix(d[, -37])
  storage.mode(x) <- "double"
  set.seed(6435)
  perm <- sample(nrow(x))
  list(x = x, y = d$classes, pool = perm[1:5000], test = perm[5001:6435])
}

work <- tempfile("scale-bench-")
dir.create(work)

# Children -----------------------------------------------------------------
r_child <- '
args <- commandArgs(TRUE)
lib <- if (nzchar(args[3])) args[3] else NULL
suppressPackageStartupMessages(library(kmaha, lib.loc = lib))
hwm <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\\\1", s[startsWith(s, "VmHWM")])) / 1024
}
dat <- readRDS(args[1])
method <- args[4]
kmaha_threads(as.integer(args[5]))
cfg <- dat$knca
base <- hwm()
set.seed(1)
t0 <- proc.time()
note <- ""
fit <- switch(method,
  euclid = NULL,
  nca = nca(dat$x_train, dat$y_train),
  nca_lbfgs = nca(dat$x_train, dat$y_train, method = "lbfgs"),
  lmnn = lmnn(dat$x_train, dat$y_train),
  dne = dne(dat$x_train, dat$y_train),
  knca_nys = kmaha(dat$x_train, dat$y_train, learner = "nca",
                   kernel = rbf_kernel(cfg$sigma), landmarks = cfg$landmarks,
                   rank = cfg$rank,
                   learner_args = list(dim = cfg$dim, method = "minibatch")))
fit_s <- (proc.time() - t0)[["elapsed"]]
pred <- if (method == "euclid") {
  s <- scale(dat$x_train)
  z <- scale(dat$x_test, attr(s, "scaled:center"), attr(s, "scaled:scale"))
  knn_classify(s, dat$y_train, z, k = 1)$class
} else predict(fit, dat$x_test)
acc <- mean(pred == dat$y_test)
if (method %in% c("nca", "nca_lbfgs")) note <- fit$settings$method
if (method == "knca_nys") note <- fit$learner_fit$settings$method
write.csv(data.frame(seconds = fit_s, peak_mb = hwm(), base_mb = base,
                     accuracy = acc, note = note), args[2], row.names = FALSE)
'
py_child <- '
import sys, time, resource
import numpy as np
from sklearn.neighbors import NeighborhoodComponentsAnalysis, KNeighborsClassifier
from sklearn.kernel_approximation import Nystroem
from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
prefix, out, method = sys.argv[1], sys.argv[2], sys.argv[3]
sigma, m, rank, dim = float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
def load(name):
    return np.loadtxt(prefix + name, delimiter=",", dtype=str)
xtr = load("xtr.csv").astype(float); xte = load("xte.csv").astype(float)
ytr = load("ytr.csv"); yte = load("yte.csv")
mu = xtr.mean(0); sd = xtr.std(0, ddof=1)
xtr = (xtr - mu) / sd; xte = (xte - mu) / sd
D = xtr.shape[1]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
w0 = time.perf_counter()
if method == "sk_nca":
    model = NeighborhoodComponentsAnalysis(random_state=0).fit(xtr, ytr)
else:
    model = make_pipeline(
        Nystroem(kernel="rbf", gamma=1.0 / (2.0 * D * sigma ** 2), n_components=m, random_state=0),
        PCA(n_components=rank, random_state=0),
        NeighborhoodComponentsAnalysis(n_components=dim, random_state=0)).fit(xtr, ytr)
sec = time.perf_counter() - w0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
knn = KNeighborsClassifier(n_neighbors=1).fit(model.transform(xtr), ytr)
acc = float(np.mean(knn.predict(model.transform(xte)) == yte))
with open(out, "w") as f:
    f.write("seconds,peak_mb,base_mb,accuracy,note\\n")
    f.write("%f,%f,%f,%f,\\n" % (sec, peak, base, acc))
'
r_script <- file.path(work, "child.R")
writeLines(r_child, r_script)
py_script <- file.path(work, "child.py")
writeLines(py_child, py_script)
python <- "/usr/bin/python3"
have_sklearn <- file.exists(python) &&
  identical(suppressWarnings(system2(python, c("-c", shQuote("import sklearn")),
                                     stdout = FALSE, stderr = FALSE)), 0L)
rscript <- file.path(R.home("bin"), "Rscript")

# Runs `cmd` (a character vector) in bash under the time and memory limits;
# returns the child's CSV row, or a row saying why it has none.
run_limited <- function(cmd, out) {
  line <- sprintf("ulimit -v %d; exec timeout %d %s", as.integer(mem_gb * 1024^2),
                  timeout_s, paste(shQuote(cmd), collapse = " "))
  err <- tempfile(tmpdir = work)
  status <- suppressWarnings(system2("bash", c("-c", shQuote(line)), stdout = FALSE,
                                     stderr = err,
                                     env = c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1")))
  if (identical(status, 0L) && file.exists(out)) {
    r <- utils::read.csv(out, colClasses = c(note = "character"))
    r$note[is.na(r$note)] <- ""
    return(r)
  }
  msg <- paste(readLines(err, warn = FALSE), collapse = " ")
  why <- if (identical(status, 124L)) sprintf("timeout (%d s)", timeout_s) else
    if (grepl("MemoryError|cannot allocate|bad_alloc|std::bad_alloc", msg)) "out of memory" else
      sprintf("failed (status %s): %s", status, substr(msg, 1, 120))
  data.frame(seconds = NA_real_, peak_mb = NA_real_, base_mb = NA_real_,
             accuracy = NA_real_, note = why)
}

run_method <- function(method, dat_file, prefix) {
  out <- tempfile(tmpdir = work, fileext = ".csv")
  if (startsWith(method, "sk_")) {
    cmd <- c(python, py_script, prefix, out, method, knca_cfg$sigma,
             knca_cfg$landmarks, knca_cfg$rank, knca_cfg$dim)
  } else {
    cmd <- c(rscript, r_script, dat_file, out, lib, method, threads)
  }
  run_limited(cmd, out)
}

# Runs ---------------------------------------------------------------------
# KMAHA_BENCH_REPORT=a.csv,b.csv skips the runs and prints the tables of
# earlier runs' CSVs (a row of a later file replaces the row of an earlier
# one for the same data set, n and method).
report_only <- Sys.getenv("KMAHA_BENCH_REPORT", "")
if (nzchar(report_only)) {
  datasets <- character(0)
  res <- do.call(rbind, lapply(strsplit(report_only, ",")[[1]], function(f)
    utils::read.csv(f, stringsAsFactors = FALSE)))
  res$note[is.na(res$note)] <- ""
  res <- res[!duplicated(res[, c("data", "n", "method")], fromLast = TRUE), ]
  res <- res[order(match(res$data, unique(res$data)), res$n), ]
}
results <- list()
for (ds in datasets) {
  d <- load_set(ds)
  failed <- character(0)
  for (n in sizes[sizes <= length(d$pool)]) {
    tr <- d$pool[seq_len(n)]
    dat <- list(x_train = d$x[tr, ], y_train = droplevels(d$y[tr]),
                x_test = d$x[d$test, ], y_test = d$y[d$test], knca = knca_cfg)
    dat_file <- file.path(work, sprintf("%s-%d.rds", ds, n))
    saveRDS(dat, dat_file)
    prefix <- file.path(work, sprintf("%s-%d-", ds, n))
    if (have_sklearn && any(startsWith(methods, "sk_"))) {
      utils::write.table(dat$x_train, paste0(prefix, "xtr.csv"), sep = ",", row.names = FALSE, col.names = FALSE)
      utils::write.table(dat$x_test, paste0(prefix, "xte.csv"), sep = ",", row.names = FALSE, col.names = FALSE)
      writeLines(as.character(dat$y_train), paste0(prefix, "ytr.csv"))
      writeLines(as.character(dat$y_test), paste0(prefix, "yte.csv"))
    }
    for (m in methods) {
      if (startsWith(m, "sk_") && !have_sklearn) next
      r <- if (m %in% failed) {
        data.frame(seconds = NA_real_, peak_mb = NA_real_, base_mb = NA_real_,
                   accuracy = NA_real_, note = "not run: failed at a smaller n")
      } else run_method(m, dat_file, prefix)
      if (startsWith(m, "sk_") && is.na(r$seconds)) failed <- union(failed, m)
      results[[length(results) + 1L]] <- cbind(data = ds, n = n, method = m, r)
      cat(sprintf("%-9s n = %5d %-11s %8.2f s %7.0f MB  acc %.4f %s\n", ds, n, m,
                  r$seconds, r$peak_mb, r$accuracy, r$note))
    }
  }
}
if (!nzchar(report_only)) res <- do.call(rbind, results)
res$fit_mb <- res$peak_mb - res$base_mb
if (nzchar(out_csv)) {
  dir.create(dirname(out_csv), showWarnings = FALSE, recursive = TRUE)
  utils::write.csv(res, out_csv, row.names = FALSE)
}

# Tables and checks ----------------------------------------------------------
labels <- c(euclid = "Euclidean 1-NN", nca = "NCA", nca_lbfgs = "NCA (L-BFGS)",
            lmnn = "LMNN", dne = "DNE", knca_nys = "KNCA Nystrom",
            sk_nca = "sklearn NCA", sk_nys_nca = "sklearn Nystroem+NCA")
cell <- function(r) {
  if (is.na(r$seconds)) return(r$note)
  if (r$method == "euclid") return(sprintf("acc %.3f", r$accuracy))
  sprintf("%.1f s, %.0f MB, %.3f", r$seconds, r$peak_mb, r$accuracy)
}
for (ds in unique(res$data)) {
  sub <- res[res$data == ds, ]
  ms <- intersect(names(labels), unique(sub$method))
  cat(sprintf("\n### %s (cells: fit seconds, peak MB of the process, test accuracy)\n\n", ds))
  cat("| n |", paste(labels[ms], collapse = " | "), "|\n")
  cat("|---:|", paste(rep("---:", length(ms)), collapse = "|"), "|\n")
  for (n in unique(sub$n)) {
    cells <- vapply(ms, function(m) {
      r <- sub[sub$n == n & sub$method == m, ]
      if (nrow(r)) cell(r) else ""
    }, "")
    cat("|", n, "|", paste(cells, collapse = " | "), "|\n")
  }
  # ratios against scikit-learn's NCA and growth with n
  cat("\nRatios (kmaha / scikit-learn, same n; time < 0.2 and memory < 0.5 are the targets):\n")
  for (n in unique(sub$n)) {
    s <- sub[sub$n == n & sub$method == "sk_nca", ]
    s2 <- sub[sub$n == n & sub$method == "sk_nys_nca", ]
    k <- sub[sub$n == n & sub$method == "nca", ]
    k2 <- sub[sub$n == n & sub$method == "knca_nys", ]
    if (nrow(s) && nrow(k) && !is.na(s$seconds)) {
      cat(sprintf("  n = %5d  NCA: time %.3f, memory %.2f", n, k$seconds / s$seconds,
                  k$peak_mb / s$peak_mb))
      if (nrow(s2) && nrow(k2) && !is.na(s2$seconds)) {
        cat(sprintf("   KNCA Nystrom: time %.3f, memory %.2f", k2$seconds / s2$seconds,
                    k2$peak_mb / s2$peak_mb))
      }
      cat("\n")
    }
  }
  cat("\nGrowth exponents between consecutive n (time: log ratio / log n ratio, target <= 2; fit memory, target <= 1):\n")
  for (m in setdiff(ms, "euclid")) {
    r <- sub[sub$method == m & !is.na(sub$seconds), ]
    if (nrow(r) < 2) next
    et <- diff(log(r$seconds)) / diff(log(r$n))
    em <- diff(log(pmax(r$fit_mb, 1))) / diff(log(r$n))
    cat(sprintf("  %-22s time %s   memory %s\n", labels[m],
                paste(sprintf("%.2f", et), collapse = " "),
                paste(sprintf("%.2f", em), collapse = " ")))
  }
}

# The issue's targets at the largest Letter size.
big <- res[res$data == "letter" & res$n == max(res$n[res$data == "letter"]), ]
if (nrow(big)) {
  get <- function(m, col) { v <- big[big$method == m, col]; if (length(v)) v else NA }
  eu <- get("euclid", "accuracy")
  cat(sprintf("\nTargets, Letter n = %d (Euclidean 1-NN accuracy %.4f):\n", big$n[1], eu))
  for (t in list(c("nca", 60), c("lmnn", 60), c("dne", 10), c("knca_nys", 120))) {
    m <- t[1]
    cat(sprintf("  %-12s %7.1f s (target <= %s: %s), peak %5.0f MB (<= 1536: %s), accuracy %.4f (>= Euclidean: %s)\n",
                labels[m], get(m, "seconds"), t[2],
                if (isTRUE(get(m, "seconds") <= as.numeric(t[2]))) "met" else "MISSED",
                get(m, "peak_mb"), if (isTRUE(get(m, "peak_mb") <= 1536)) "met" else "MISSED",
                get(m, "accuracy"), if (isTRUE(get(m, "accuracy") >= eu)) "met" else "MISSED"))
  }
  cat(sprintf("  KNCA Nystrom above linear NCA: %s (%.4f vs %.4f)\n",
              if (isTRUE(get("knca_nys", "accuracy") > get("nca", "accuracy"))) "met" else "MISSED",
              get("knca_nys", "accuracy"), get("nca", "accuracy")))
}
