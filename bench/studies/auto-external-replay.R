# Replays kernel = "auto"'s selection (kmaha:::auto_select(), the installed
# version) on the cross-validation records that bench/studies/auto-external.R keeps
# per split (its cache), and looks up the test accuracy of the candidate it
# picks (every candidate was also fitted on the whole training split there).
# No refit: a change of the selection rule is evaluated in seconds.
# Usage: Rscript bench/studies/auto-external-replay.R [cache dir]
suppressPackageStartupMessages(library(kmaha))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "bench/studies/results/auto-external-cache"
fs <- list.files(dir, pattern = "\\.rds$", full.names = TRUE)
rows <- lapply(fs, function(f) {
  o <- readRDS(f)
  cv <- o$cv
  sel <- kmaha:::auto_select(cv$curve, cv$correct, length(unique(cv$folds)))
  r <- o$res
  data.frame(set = r$set[1], split = r$split[1], recorded = r$acc[r$method == "auto"],
             replayed = o$cand_acc[sel$best], euclidean = r$acc[r$method == "euclidean"],
             nca_linear = r$acc[r$method == "nca_linear"])
})
res <- do.call(rbind, rows)
agg <- aggregate(cbind(recorded, replayed, euclidean, nca_linear) ~ set, res, mean)
agg$margin <- agg$replayed - pmax(agg$euclidean, agg$nca_linear)
print(agg, digits = 3, row.names = FALSE)
cat(sprintf("%d splits; mean recorded %.4f, replayed %.4f; sets below -0.01: %d\n",
            nrow(res), mean(agg$recorded), mean(agg$replayed), sum(agg$margin < -0.01)))
