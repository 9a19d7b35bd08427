# kmaha() at its defaults on Letter (mlbench LetterRecognition: 16 000
# training rows, 16 columns, 26 classes; the last 4 000 rows for testing):
# the large-n path of kernel = "auto" (choice on a 1000-row subsample, final
# fit with Nystrom KPCA).  One thread unless KMAHA_BENCH_THREADS says
# otherwise; elapsed and CPU seconds of the fit.  Run under /usr/bin/time -v
# for the peak memory:
#   /usr/bin/time -v Rscript bench/auto-large.R
suppressPackageStartupMessages({ library(kmaha); library(mlbench) })
data(LetterRecognition, envir = e <- new.env())
d <- e$LetterRecognition
x <- as.matrix(d[, -1])
y <- d$lettr
tr <- 1:16000
threads <- as.integer(Sys.getenv("KMAHA_BENCH_THREADS", "1"))
options(kmaha.num_threads = threads)
t0 <- proc.time()
fit <- kmaha(x[tr, ], y[tr], seed = 1)
t1 <- proc.time()
secs <- t1[["elapsed"]] - t0[["elapsed"]]
cpu <- sum((t1 - t0)[c("user.self", "sys.self")])
acc <- mean(predict(fit, x[-tr, ]) == y[-tr])
print(fit)
cat(sprintf("kmaha %s, %d thread(s): %.1f s elapsed, %.1f s CPU, test accuracy %.4f; load %s\n",
            packageVersion("kmaha"), threads, secs, cpu, acc, readLines("/proc/loadavg")))
