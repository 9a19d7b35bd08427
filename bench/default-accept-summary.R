# Puts together the two runs of bench/default-accept.R (the current
# version's methods and the 0.5.2 defaults, run in the same session) into
# the acceptance table: mean test accuracy and average rank per method over
# the sets (each set's mean over its splits; ranks within each split), the
# sets where the default falls more than 0.01 below the best of Euclidean
# 1-NN and the three linear learners, and the default's CPU seconds against
# ranger's fit and the 0.5.2 LMNN default's (medians over the sets).
#   Rscript bench/default-accept-summary.R [new.csv] [old.csv]
args <- commandArgs(TRUE)
new <- utils::read.csv(if (length(args) >= 1) args[1] else "bench/results/default_accept_new.csv")
old <- if (length(args) >= 2 || file.exists("bench/results/default_accept_old.csv"))
  utils::read.csv(if (length(args) >= 2) args[2] else "bench/results/default_accept_old.csv")
res <- rbind(new[c("set", "split", "method", "acc", "cpu")],
             if (!is.null(old)) old[c("set", "split", "method", "acc", "cpu")])
res <- res[res$set %in% unique(new$set), ]
peers <- setdiff(unique(res$method), c("nca", "lmnn", "dne"))
ranked <- res[res$method %in% c(peers, "nca", "lmnn", "dne"), ]
rk <- do.call(rbind, lapply(split(ranked, paste(ranked$set, ranked$split)), function(b)
  data.frame(set = b$set, method = b$method, rank = rank(-b$acc, ties.method = "average"))))
per_set <- aggregate(acc ~ set + method, res, mean)
tab <- data.frame(method = unique(res$method))
tab$mean_acc <- tapply(per_set$acc, per_set$method, mean)[tab$method]
tab$mean_rank <- tapply(rk$rank, rk$method, mean)[tab$method]
tab$median_cpu <- tapply(res$cpu, res$method, stats::median, na.rm = TRUE)[tab$method]
cat(sprintf("%d sets, %d splits\n", length(unique(res$set)), nrow(unique(res[c("set", "split")]))))
print(tab[order(tab$mean_rank), ], row.names = FALSE, digits = 4)
w <- reshape(per_set, idvar = "set", timevar = "method", direction = "wide")
names(w) <- sub("^acc\\.", "", names(w))
w$best_base <- pmax(w$euclid, w$nca, w$lmnn, w$dne)
w$short <- w$default - w$best_base
cat("\nsets where the default is more than 0.01 below the best of Euclidean 1-NN and the linear learners:\n")
print(w[w$short < -0.01, c("set", "default", "euclid", "nca", "lmnn", "dne", "short")], row.names = FALSE, digits = 3)
cs <- aggregate(cpu ~ set + method, res, mean)
cw <- reshape(cs, idvar = "set", timevar = "method", direction = "wide")
names(cw) <- sub("^cpu\\.", "", names(cw))
cat(sprintf("\ndefault CPU / ranger CPU: median %.2f (range %.2f-%.2f)\n", stats::median(cw$default / cw$ranger),
            min(cw$default / cw$ranger), max(cw$default / cw$ranger)))
if ("default_lmnn_052" %in% names(cw)) {
  # (sets where a 0.5.2 default failed are left out of its ratios)
  r052 <- cw$default / cw$default_lmnn_052
  cat(sprintf("default CPU / 0.5.2 LMNN default CPU: median %.2f (range %.2f-%.2f)%s\n",
              stats::median(r052, na.rm = TRUE), min(r052, na.rm = TRUE), max(r052, na.rm = TRUE),
              if (anyNA(r052)) sprintf(", %d set(s) where 0.5.2 failed left out", sum(is.na(r052))) else ""))
  cat(sprintf("median CPU seconds: default %.2f, 0.5.2 LMNN default %.2f, ranger %.2f\n",
              stats::median(cw$default), stats::median(cw$default_lmnn_052, na.rm = TRUE),
              stats::median(cw$ranger)))
}
