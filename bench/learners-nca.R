# NCA speed, peak memory and accuracy on the satellite data (D = 36), against
# scikit-learn's NeighborhoodComponentsAnalysis on the same data in the same
# run (when /usr/bin/python3 has scikit-learn).
#
#   Rscript bench/learners-nca.R            # uses the installed kmaha
#   KMAHA_LIB=/tmp/lib Rscript bench/learners-nca.R   # a private library
#
# Each fit runs in a fresh child process (Rscript or python3) so that its peak
# resident memory (VmHWM from /proc/self/status) is its own; the same child
# first records its peak before fitting (interpreter, package and data
# loaded), so the increment caused by the fit is reported too.
# Environment: KMAHA_DATA_DIR (satellite.csv; else mlbench::Satellite),
# KMAHA_BENCH_N (comma-separated training sizes), KMAHA_BENCH_REPS (fits per
# size, the median time is reported), KMAHA_BENCH_OUT (results CSV).

lib <- Sys.getenv("KMAHA_LIB", "")
lib_arg <- if (nzchar(lib)) lib else NULL
suppressPackageStartupMessages(library(kmaha, lib.loc = lib_arg))

sizes <- as.integer(strsplit(Sys.getenv("KMAHA_BENCH_N", "200,500,1000,2000,4000"), ",")[[1]])
reps <- as.integer(Sys.getenv("KMAHA_BENCH_REPS", "3"))
n_test <- 1000L
out_csv <- Sys.getenv("KMAHA_BENCH_OUT", "")

cat("kmaha NCA benchmark\n")
cat("R:", R.version.string, "\n")
cat("BLAS (sessionInfo):", sessionInfo()$BLAS, "\n")
cat("BLAS (extSoftVersion):", extSoftVersion()[["BLAS"]], "\n")
cat("LAPACK:", La_library(), "\n")
cat("cores:", parallel::detectCores(), "  load average:",
    tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n")
cat("kmaha threads (default):", getOption("kmaha.num_threads", Sys.getenv("KMAHA_NUM_THREADS", "2")), "\n\n")

# Data ---------------------------------------------------------------------
data_dir <- Sys.getenv("KMAHA_DATA_DIR", "")
csv <- file.path(data_dir, "satellite.csv")
if (nzchar(data_dir) && file.exists(csv)) {
  d <- utils::read.csv(csv)
  x_all <- as.matrix(d[, setdiff(names(d), "class")])
  y_all <- factor(d$class)
  src <- csv
} else {
  data("Satellite", package = "mlbench", envir = environment())
  x_all <- as.matrix(Satellite[, -37])
  y_all <- Satellite$classes
  src <- "mlbench::Satellite"
}
storage.mode(x_all) <- "double"
cat(sprintf("data: %s (%d x %d, %d classes)\n\n", src, nrow(x_all), ncol(x_all), nlevels(y_all)))

work <- tempfile("nca-bench-")
dir.create(work)

# Child runners ------------------------------------------------------------
r_child <- '
args <- commandArgs(TRUE)
lib <- if (nzchar(args[3])) args[3] else NULL
suppressPackageStartupMessages(library(kmaha, lib.loc = lib))
hwm <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(sub("[^0-9]*([0-9]+).*", "\\\\1", s[startsWith(s, "VmHWM")])) / 1024
}
dat <- readRDS(args[1])
threads <- as.integer(args[4])
options(kmaha.isa = args[5])
base <- hwm()
t0 <- proc.time()
fit <- suppressWarnings(nca(dat$x_train, dat$y_train, num_threads = threads))
el <- proc.time() - t0
acc <- mean(predict(fit, dat$x_test) == dat$y_test)
write.csv(data.frame(seconds = el[["elapsed"]], cpu = el[["user.self"]] + el[["sys.self"]],
                     peak_mb = hwm(), base_mb = base, accuracy = acc,
                     evaluations = fit$convergence$iterations,
                     converged = fit$convergence$converged,
                     isa = fit$convergence$isa,
                     objective = fit$convergence$objective), args[2], row.names = FALSE)
'
py_child <- '
import sys, time, resource
import numpy as np
from sklearn.neighbors import NeighborhoodComponentsAnalysis, KNeighborsClassifier
prefix, out, max_iter = sys.argv[1], sys.argv[2], int(sys.argv[3])
def load(name):
    return np.loadtxt(prefix + name, delimiter=",", dtype=str)
xtr = load("xtr.csv").astype(float); xte = load("xte.csv").astype(float)
ytr = load("ytr.csv"); yte = load("yte.csv")
mu = xtr.mean(0); sd = xtr.std(0, ddof=1)
xtr = (xtr - mu) / sd; xte = (xte - mu) / sd
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
w0 = time.perf_counter(); c0 = time.process_time()
nca = NeighborhoodComponentsAnalysis(init="identity", max_iter=max_iter, random_state=0).fit(xtr, ytr)
sec = time.perf_counter() - w0; cpu = time.process_time() - c0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
knn = KNeighborsClassifier(n_neighbors=1).fit(nca.transform(xtr), ytr)
acc = float(np.mean(knn.predict(nca.transform(xte)) == yte))
with open(out, "w") as f:
    f.write("seconds,cpu,peak_mb,base_mb,accuracy,evaluations,converged,isa,objective\\n")
    f.write("%f,%f,%f,%f,%f,%d,%s,NA,NA\\n" % (sec, cpu, peak, base, acc, nca.n_iter_, nca.n_iter_ < max_iter))
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

run_r <- function(dat_file, threads, isa = "auto") {
  out <- tempfile(tmpdir = work, fileext = ".csv")
  status <- system2(rscript, c(shQuote(r_script), shQuote(dat_file), shQuote(out),
                               shQuote(lib), threads, isa))
  if (status != 0L || !file.exists(out)) stop("R child failed")
  utils::read.csv(out)
}
run_py <- function(prefix, max_iter) {
  out <- tempfile(tmpdir = work, fileext = ".csv")
  status <- system2(python, c(shQuote(py_script), shQuote(prefix), shQuote(out), max_iter),
                    env = c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1"))
  if (status != 0L || !file.exists(out)) stop("python child failed")
  utils::read.csv(out)
}
summarise <- function(runs, label, n) {
  data.frame(n = n, method = label, seconds = stats::median(runs$seconds),
             cpu = stats::median(runs$cpu), peak_mb = max(runs$peak_mb),
             base_mb = stats::median(runs$base_mb),
             accuracy = runs$accuracy[1], evaluations = runs$evaluations[1],
             converged = all(as.logical(runs$converged)), isa = runs$isa[1])
}

# Runs ---------------------------------------------------------------------
results <- list()
for (n in sizes) {
  set.seed(20100 + n)
  idx <- sample(nrow(x_all), n + n_test)
  tr <- idx[seq_len(n)]
  te <- idx[n + seq_len(n_test)]
  dat <- list(x_train = x_all[tr, ], y_train = y_all[tr],
              x_test = x_all[te, ], y_test = y_all[te])
  dat_file <- file.path(work, sprintf("dat-%d.rds", n))
  saveRDS(dat, dat_file)
  # The default build (AVX2+FMA copy where the CPU has it) on 2 and 1
  # threads, and the baseline copy on 2 threads for comparison.
  for (cfg in list(list(2L, "auto"), list(1L, "auto"), list(2L, "default"))) {
    runs <- do.call(rbind, lapply(seq_len(reps), function(r) run_r(dat_file, cfg[[1]], cfg[[2]])))
    label <- sprintf("kmaha nca (%d thr%s)", cfg[[1]], if (cfg[[2]] == "default") ", baseline ISA" else "")
    results[[length(results) + 1L]] <- summarise(runs, label, n)
  }
  # Euclidean 1-NN on the standardised inputs, for reference.
  prep_c <- colMeans(dat$x_train)
  prep_s <- apply(dat$x_train, 2, stats::sd)
  z_tr <- scale(dat$x_train, prep_c, prep_s)
  z_te <- scale(dat$x_test, prep_c, prep_s)
  acc_e <- mean(knn_classify(z_tr, dat$y_train, z_te, k = 1)$class == dat$y_test)
  results[[length(results) + 1L]] <- data.frame(
    n = n, method = "Euclidean 1-NN", seconds = NA, cpu = NA, peak_mb = NA,
    base_mb = NA, accuracy = acc_e, evaluations = NA, converged = NA, isa = NA)
  if (have_sklearn) {
    prefix <- file.path(work, sprintf("n%d-", n))
    utils::write.table(dat$x_train, paste0(prefix, "xtr.csv"), sep = ",", row.names = FALSE, col.names = FALSE)
    utils::write.table(dat$x_test, paste0(prefix, "xte.csv"), sep = ",", row.names = FALSE, col.names = FALSE)
    writeLines(as.character(dat$y_train), paste0(prefix, "ytr.csv"))
    writeLines(as.character(dat$y_test), paste0(prefix, "yte.csv"))
    for (mi in c(50L, 500L)) {
      py_reps <- if (n >= 2000) 1L else reps
      runs <- do.call(rbind, lapply(seq_len(py_reps), function(r) run_py(prefix, mi)))
      results[[length(results) + 1L]] <- summarise(runs, sprintf("sklearn NCA (max_iter=%d)", mi), n)
    }
  }
  cat(sprintf("n = %d done\n", n))
}
res <- do.call(rbind, results)
res$fit_mb <- res$peak_mb - res$base_mb
res$sec_per_eval <- res$seconds / res$evaluations

cat("\nResults (seconds: median wall time of the fit; cpu: user+system; peak_mb: VmHWM of the child;\n")
cat("fit_mb: peak minus the child's peak before fitting; accuracy: 1-NN on", n_test, "held-out points)\n\n")
print(res, digits = 4, row.names = FALSE)

if (have_sklearn) {
  cat("\nRatios against scikit-learn (max_iter = 500, i.e. run to its own convergence):\n")
  for (n in sizes) {
    k <- res[res$n == n & res$method == "kmaha nca (2 thr)", ]
    s <- res[res$n == n & res$method == "sklearn NCA (max_iter=500)", ]
    s50 <- res[res$n == n & res$method == "sklearn NCA (max_iter=50)", ]
    cat(sprintf("  n = %4d: time sklearn/kmaha %.1fx (vs max_iter=50: %.1fx; per evaluation %.1fx), peak memory kmaha/sklearn %.2f, accuracy kmaha %.3f vs sklearn %.3f\n",
                n, s$seconds / k$seconds, s50$seconds / k$seconds,
                s$sec_per_eval / k$sec_per_eval, k$peak_mb / s$peak_mb,
                k$accuracy, s$accuracy))
  }
} else {
  cat("\nscikit-learn not available (apt-get install -y python3-sklearn); no comparison.\n")
}
if (nzchar(out_csv)) utils::write.csv(res, out_csv, row.names = FALSE)
