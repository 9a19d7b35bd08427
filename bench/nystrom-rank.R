# Nystrom KPCA's default rank (95% of the landmark-span variance, at most
# 200) against keeping every landmark component (rank = m): fit time and
# test accuracy of kmaha(learner = "nca", kernel = rbf_kernel(1), landmarks
# = 1000) on Letter (16 000 training rows, 4 000 test) and Satellite (4 435 /
# 2 000, the UCI split sizes), from mlbench.  One run each, threads as the
# session's default.  Usage: Rscript bench/nystrom-rank.R
suppressPackageStartupMessages({ library(kmaha); library(mlbench) })
sets <- list(
  letter = function() { data(LetterRecognition, envir = e <- new.env())
    d <- e$LetterRecognition; list(x = as.matrix(d[, -1]), y = d$lettr, n_train = 16000) },
  satellite = function() { data(Satellite, envir = e <- new.env())
    d <- e$Satellite; list(x = as.matrix(d[, -37]), y = d$classes, n_train = 4435) })
rows <- list()
for (nm in names(sets)) {
  d <- sets[[nm]]()
  tr <- seq_len(d$n_train)
  for (rank in list(NULL, 1000L)) {
    set.seed(1)
    t0 <- proc.time()[["elapsed"]]
    f <- kmaha(d$x[tr, ], d$y[tr], learner = "nca", kernel = rbf_kernel(1),
               landmarks = 1000, rank = rank)
    secs <- proc.time()[["elapsed"]] - t0
    acc <- mean(predict(f, d$x[-tr, ]) == d$y[-tr])
    rows[[length(rows) + 1L]] <- data.frame(
      dataset = nm, rank = if (is.null(rank)) "default" else "all (1000)",
      components = ncol(f$L), seconds = round(secs, 1), accuracy = round(acc, 4))
    print(rows[[length(rows)]])
  }
}
res <- do.call(rbind, rows)
cat(sprintf("kmaha %s; load %s\n", packageVersion("kmaha"), readLines("/proc/loadavg")))
print(res, row.names = FALSE)
