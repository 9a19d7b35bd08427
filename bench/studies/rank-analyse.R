# Replays kernel = "auto"'s rule on the records of bench/studies/screen-study.R
# with the kernel candidates (the screen's base kernel and the unweighted
# sum) scored and fitted under each rank policy of bench/studies/rank-study.R: mean
# test accuracy, worst set against max(Euclidean 1-NN, linear learner), and
# the seconds of the kernel candidates' fold fits and final fits.
#   Rscript bench/studies/rank-analyse.R
suppressMessages(library(kmaha))
sel_auto <- getFromNamespace("auto_select", "kmaha")
files <- c(list.files("bench/studies/results/rank-study-cache", full.names = TRUE, pattern = "_[0-9]+\\.rds$"), list.files("bench/studies/results/rank-study-cache2", full.names = TRUE, pattern = "_[0-9]+\\.rds$"))
rows <- list()
for (f in files) {
  rk <- readRDS(f)
  rec <- readRDS(file.path("bench/studies/results/screen-study-cache", basename(f)))
  for (lr in unique(vapply(rk$res, `[[`, "", "learner"))) {
    g <- rec$gold[[lr]]
    tr <- rec$truth
    for (pn in unique(vapply(rk$res, `[[`, "", "policy"))) {
      pick <- Filter(function(r) r$learner == lr && r$policy == pn, rk$res)
      sg <- pick[[which(vapply(pick, `[[`, "", "cand") == "sigma")]]
      uw <- pick[[which(vapply(pick, `[[`, "", "cand") == "unweighted")]]
      # curve: euclid (22), linear (23) from gold; the sigma and unweighted
      # candidates from this policy
      cu <- g$curve[c(22, 23, 1, 25), ]
      j <- which(abs(rec$sigma - sg$sigma) < 1e-12)
      cu[3, ] <- g$curve[j, ]
      cc <- cbind(g$correct[, 22], g$correct[, 23], sg$correct, uw$correct)
      fm <- function(v) {
        a <- tapply(v, g$folds, mean)
        c(mean = mean(a), sd = sd(a), n_ok = sum(!is.na(a)))
      }
      for (i in 3:4) {
        s <- fm(cc[, i])
        cu$mean[i] <- s[["mean"]]; cu$sd[i] <- s[["sd"]]; cu$n_ok[i] <- s[["n_ok"]]
        cu$dropped[i] <- FALSE
        cu$degenerate[i] <- anyNA(cc[, i])
      }
      cu$candidate <- 1:4
      best <- sel_auto(cu, cc, 5L)$best
      acc <- switch(best, tr[22, paste0(lr, "_full")], tr[23, paste0(lr, "_full")], sg$test, uw$test)
      rows[[length(rows) + 1]] <- data.frame(learner = lr, policy = pn, set = rk$set, split = rk$split,
        acc = acc, base = max(tr[22, paste0(lr, "_full")], tr[23, paste0(lr, "_full")]),
        kernel = best >= 3, cv_s = sg$cv_seconds + uw$cv_seconds,
        fit_s = if (best == 3) sg$fit_seconds else if (best == 4) uw$fit_seconds else 0,
        r_sigma = sg$r, r_unw = uw$r)
    }
  }
}
res <- do.call(rbind, rows)
summ <- do.call(rbind, lapply(split(res, list(res$learner, res$policy), drop = TRUE), function(d) {
  ps <- aggregate(cbind(acc, base) ~ set, d, mean)
  data.frame(learner = d$learner[1], policy = d$policy[1], n = nrow(d), mean = mean(d$acc),
             worst = min(ps$acc - ps$base), kernels = mean(d$kernel),
             cv_s = mean(d$cv_s), fit_s = mean(d$fit_s),
             r_sigma = median(d$r_sigma, na.rm = TRUE), r_unw = median(d$r_unw, na.rm = TRUE))
}))
print(summ[order(summ$learner, -summ$mean), ], row.names = FALSE, digits = 4)
