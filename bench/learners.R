# The learners' speed benchmark of the issue "NCA, LMNN and DNE in C++":
# runs learners-nca.R (NCA against scikit-learn in the same run, when
# /usr/bin/python3 has it), learners-lmnn.R and learners-dne.R one after the
# other, each in its own Rscript, with the environment passed through
# (KMAHA_DATA_DIR, KMAHA_LIB, KMAHA_BENCH_*). Results: bench/README.md.
#   Rscript bench/learners.R
args <- commandArgs(FALSE)
me <- sub("^--file=", "", grep("^--file=", args, value = TRUE)[1])
bench_dir <- if (is.na(me)) "bench" else dirname(me)
rscript <- file.path(R.home("bin"), "Rscript")
for (f in c("learners-nca.R", "learners-lmnn.R", "learners-dne.R")) {
  cat(sprintf("\n===== %s =====\n", f))
  status <- system2(rscript, shQuote(file.path(bench_dir, f)))
  if (status != 0L) stop(sprintf("%s failed (status %d)", f, status))
}
