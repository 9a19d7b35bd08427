# NCA at p >> n: nca() and kmaha(x, y, learner = "nca") with default
# settings on 71 training rows x 6 033 inputs (the shape of a 70 % split of
# a prostate expression set), CPU seconds and peak memory, for the kmaha to
# measure and optionally an older one.
#
#   Rscript bench/nca-span.R
#
# Data (simulated, seed 1): 102 rows (71 training, 31 test), 2 classes of
# 50 and 52 rows, 6 033 columns driven by 8 latent factors plus noise, 200
# of them shifted by 1 between the classes.  The test accuracy of each fit
# is recorded too.
#
# Every case runs in a fresh R process (Rscript) with one thread, under a
# virtual-memory cap (ulimit -v): its CPU seconds (user + system, of the
# fitting call), elapsed seconds, and peak resident memory (VmHWM of
# /proc/self/status at the end of the process, which includes R itself and
# the data: about 0.1 GB).  A process that dies (the cap, or the timeout) is
# recorded as "died" with the end of its error output ("cannot allocate":
# out of memory under the cap) or "timeout".
#
# Environment:
#   KMAHA_LIB            library holding the kmaha to measure ("after";
#                        default: the first with kmaha on .libPaths())
#   KMAHA_LIB_BEFORE     library holding a kmaha to compare with ("before",
#                        e.g. main at 9f1a1c4 before NCA worked in the span)
#   KMAHA_BENCH_VMEM_KB  the cap, kB of virtual memory (default 12000000)
#   KMAHA_BENCH_TIMEOUT  seconds per case (default 1800)
#   KMAHA_BENCH_OUT      CSV of the results (default
#                        bench/results/nca_span.csv)
#
# bench/results/nca_span.csv: "after" this change, "before" main at
# 9f1a1c4 (0.5.2), on a 2-core machine shared with other jobs (hence
# elapsed well above CPU seconds).
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
out_file <- Sys.getenv("KMAHA_BENCH_OUT", file.path(bench_dir, "results", "nca_span.csv"))
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
lib_after <- Sys.getenv("KMAHA_LIB", dirname(find.package("kmaha")))
lib_before <- Sys.getenv("KMAHA_LIB_BEFORE")
libs <- c(after = lib_after, if (nzchar(lib_before)) c(before = lib_before))
vmem <- as.numeric(Sys.getenv("KMAHA_BENCH_VMEM_KB", "12000000"))
timeout <- as.numeric(Sys.getenv("KMAHA_BENCH_TIMEOUT", "1800"))

for (v in names(libs)) {
  cat(v, ": kmaha", format(packageVersion("kmaha", lib.loc = libs[[v]])), "from", libs[[v]], "\n")
}

# The child: fits one case and saves its measurements.
child_code <- '
args <- commandArgs(TRUE)
lib <- args[1]; case <- args[2]; out <- args[3]
library(kmaha, lib.loc = lib)
options(kmaha.num_threads = 1L)
set.seed(1)
n <- 102; p <- 6033
y <- factor(rep(c("normal", "tumour"), c(50, 52)))[sample.int(n)]
f <- matrix(rnorm(n * 8), n) %*% matrix(rnorm(8 * p, sd = 0.7), 8)
x <- f + matrix(rnorm(n * p), n)
informative <- sample.int(p, 200)
x[, informative] <- x[, informative] + 1 * (y == "tumour")
train <- sort(sample.int(n, 71))
xtr <- x[train, ]; ytr <- y[train]; xte <- x[-train, ]; yte <- y[-train]
gc()
t0 <- proc.time()
fit <- switch(case,
  nca = nca(xtr, ytr),
  kmaha_nca = kmaha(xtr, ytr, learner = "nca", seed = 1))
t1 <- proc.time()
acc <- mean(predict(fit, xte) == yte)
st <- readLines("/proc/self/status")
hwm <- as.numeric(sub("[^0-9]*([0-9]+).*", "\\\\1", grep("^VmHWM", st, value = TRUE)))
saveRDS(list(cpu = unname((t1 - t0)[1] + (t1 - t0)[2]), elapsed = unname((t1 - t0)[3]),
             peak_mb = hwm / 1024, rows = nrow(fit$L), cols = ncol(fit$L),
             test_accuracy = acc,
             chosen = if (is.null(fit$kernel_choice$cv)) NA_character_ else
               fit$kernel_choice$cv$curve$label[fit$kernel_choice$cv$best],
             version = format(packageVersion("kmaha", lib.loc = lib))), out)
'
child_file <- tempfile(fileext = ".R")
writeLines(child_code, child_file)

run_case <- function(lib, case) {
  out <- tempfile(fileext = ".rds")
  cmd <- sprintf("ulimit -v %.0f; exec timeout %.0f Rscript %s %s %s %s", vmem, timeout,
                 shQuote(child_file), shQuote(lib), case, shQuote(out))
  env <- c("KMAHA_NUM_THREADS=1", "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1")
  t0 <- Sys.time()
  err <- tempfile(fileext = ".txt")
  status <- system2("bash", c("-c", shQuote(cmd)), env = env, stdout = FALSE, stderr = err)
  wall <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
  if (file.exists(out)) {
    r <- readRDS(out)
    r$status <- "ok"
    return(r)
  }
  list(cpu = NA_real_, elapsed = wall, peak_mb = NA_real_, rows = NA_integer_,
       cols = NA_integer_, test_accuracy = NA_real_, chosen = NA_character_,
       version = format(packageVersion("kmaha", lib.loc = lib)),
       status = if (status == 124) "timeout" else
         sprintf("died (exit %d): %s", status, paste(utils::tail(readLines(err), 2), collapse = " ")))
}

rows <- list()
for (case in c("nca", "kmaha_nca")) {
  for (v in names(libs)) {
    r <- run_case(libs[[v]], case)
    cat(sprintf("%-9s %-6s %-8s: CPU %8.2f s, elapsed %8.2f s, peak %8.0f MB, map %s x %s, test accuracy %s, %s%s\n",
                case, v, r$version, r$cpu, r$elapsed, r$peak_mb, r$rows, r$cols,
                format(r$test_accuracy, digits = 3), r$status,
                if (!is.na(r$chosen)) paste0(", chose ", r$chosen) else ""))
    rows[[length(rows) + 1L]] <- data.frame(
      case = case, version = v, kmaha = r$version, n_train = 71L, p = 6033L,
      cpu_seconds = r$cpu, elapsed_seconds = r$elapsed, peak_mb = r$peak_mb,
      map_rows = r$rows, map_cols = r$cols, test_accuracy = r$test_accuracy,
      chosen = r$chosen, status = r$status, vmem_cap_kb = vmem,
      load = strsplit(readLines("/proc/loadavg"), " ")[[1]][1], script = "bench/nca-span.R")
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, out_file, row.names = FALSE)
cat("written to", out_file, "\n")
