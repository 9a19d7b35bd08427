# kmaha() at its defaults on Letter (mlbench LetterRecognition: 16 000
# training rows, 16 columns, 26 classes; the last 4 000 rows for testing):
# the large-n path of kernel = "auto" (choice on a 1000-row subsample, final
# fit with Nystrom KPCA).  Run under /usr/bin/time -v for the peak memory:
#   /usr/bin/time -v Rscript bench/auto-large.R
suppressPackageStartupMessages({ library(kmaha); library(mlbench) })
data(LetterRecognition, envir = e <- new.env())
d <- e$LetterRecognition
x <- as.matrix(d[, -1])
y <- d$lettr
tr <- 1:16000
t0 <- proc.time()[["elapsed"]]
fit <- kmaha(x[tr, ], y[tr], seed = 1)
secs <- proc.time()[["elapsed"]] - t0
acc <- mean(predict(fit, x[-tr, ]) == y[-tr])
print(fit)
cat(sprintf("kmaha %s: %.1f s, test accuracy %.4f; load %s\n", packageVersion("kmaha"), secs,
            acc, readLines("/proc/loadavg")))
