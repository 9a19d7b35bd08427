# The default kmaha(x, y) on the hold-out sets of bench/holdout-data.R
# (never used to design or tune anything), beside Euclidean 1-NN and the
# linear learner on the same standardized splits: test accuracy per set and
# split.  Runs on any kmaha version with kmaha(), nca(), lmnn(), dne() and
# knn_classify() (0.4.0 too): point R_LIBS at the library that holds the
# version to measure; the version is recorded.
#   Rscript bench/studies/default-holdout.R [learner] [splits] [out.csv] [sets] [cv_folds]
# (cv_folds: kmaha()'s folds, default its own, for comparing fold counts)
suppressMessages(library(kmaha))
source("bench/holdout-data.R")
args <- commandArgs(TRUE)
learner <- if (length(args) >= 1) args[1] else "nca"
splits <- if (length(args) >= 2) eval(parse(text = args[2])) else 1:3
out <- if (length(args) >= 3) args[3] else
  sprintf("bench/studies/results/default_holdout_%s_%s.csv", learner, packageVersion("kmaha"))
sets <- if (length(args) >= 4 && nzchar(args[4])) strsplit(args[4], ",")[[1]] else HOLDOUT_SETS
fold_arg <- if (length(args) >= 5) list(cv_folds = as.integer(args[5])) else list()
options(kmaha.num_threads = 1)
linear_fit <- switch(learner, nca = nca, lmnn = lmnn, dne = dne)
acc <- function(pred, y) mean(as.character(pred) == as.character(y))
rows <- list()
for (s in sets) {
  d <- tryCatch(holdout_load(s), error = function(e) NULL)
  if (is.null(d)) next
  for (r in splits) {
    sp <- holdout_split_data(d, seed = 1000 * match(s, HOLDOUT_SETS) + r)
    xs <- scale(sp$xtr)
    xt <- scale(sp$xte, attr(xs, "scaled:center"), attr(xs, "scaled:scale"))
    t0 <- proc.time()
    fit <- suppressWarnings(do.call(kmaha, c(list(sp$xtr, sp$ytr, learner = learner, seed = r),
                                             fold_arg)))
    t <- proc.time() - t0
    cv <- fit$kernel_choice$cv
    lin <- suppressWarnings(linear_fit(sp$xtr, sp$ytr))
    row <- data.frame(set = s, split = r, n_train = nrow(sp$xtr), p = ncol(sp$xtr),
                      learner = learner, version = as.character(packageVersion("kmaha")),
                      default = acc(predict(fit, sp$xte), sp$yte),
                      euclidean = acc(knn_classify(xs, sp$ytr, xt)$class, sp$yte),
                      linear = acc(predict(lin, sp$xte), sp$yte),
                      chosen = cv$curve$label[cv$best],
                      cpu = t[["user.self"]] + t[["sys.self"]])
    print(row, row.names = FALSE)
    rows[[length(rows) + 1L]] <- row
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, out, row.names = FALSE)
ps <- aggregate(cbind(default, euclidean, linear) ~ set, res, mean)
ps$margin <- ps$default - pmax(ps$euclidean, ps$linear)
print(ps, row.names = FALSE, digits = 3)
cat(sprintf("\n%s %s: default %.4f, Euclidean %.4f, linear %.4f; worst set margin %.4f (%s)\n",
            learner, packageVersion("kmaha"), mean(res$default), mean(res$euclidean),
            mean(res$linear), min(ps$margin), ps$set[which.min(ps$margin)]))
