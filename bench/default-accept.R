# The default kmaha(x, y) on the acceptance sets of bench/accept-data.R
# (the eighteen hold-out sets and thirteen more; none used to choose the
# default's policy, which bench/default-study.R chose on the development
# sets), three splits each, beside its peers on the same splits: test
# accuracy and CPU seconds (one thread) per method.
#   Rscript bench/default-accept.R new [out.csv] [sets]
#     kmaha's default and named-learner fits, Euclidean 1-NN, the linear
#     learners, ranger (500 trees), ksvm (RBF, sigest) and glmnet
#   R_LIBS=<library of 0.5.2> Rscript bench/default-accept.R old [out.csv] [sets]
#     the 0.5.2 defaults kmaha(x, y, learner = "nca" | "lmnn" | "dne")
# bench/default-accept-summary.R puts the two runs together.  A fourth
# argument `fresh` runs on the fourteen fresh sets of bench/fresh-data.R
# instead (default files default_accept_fresh_<run>.csv).
suppressMessages(library(kmaha))
source("bench/fresh-data.R")
args <- commandArgs(TRUE)
which_run <- if (length(args) >= 1) args[1] else "new"
fresh <- length(args) >= 4 && args[4] == "fresh"
out <- if (length(args) >= 2 && nzchar(args[2])) args[2] else
  sprintf("bench/results/default_accept_%s%s.csv", if (fresh) "fresh_" else "", which_run)
all_sets <- if (fresh) FRESH_SETS else ACCEPT_SETS
sets <- if (length(args) >= 3 && nzchar(args[3])) strsplit(args[3], ",")[[1]] else all_sets
load_set <- if (fresh) fresh_load else accept_load
split_set <- if (fresh) fresh_split else
  function(d, s, r) holdout_split_data(d, seed = 7000 + 10 * match(s, ACCEPT_SETS) + r)
options(kmaha.num_threads = 1)
Sys.setenv(OMP_NUM_THREADS = "1")
acc <- function(pred, y) mean(as.character(pred) == as.character(y))
cpu <- function(expr) {
  t0 <- proc.time()
  val <- suppressWarnings(force(expr))
  t <- proc.time() - t0
  list(value = val, cpu = t[["user.self"]] + t[["sys.self"]])
}
methods_new <- list(
  default = function(sp, r) { f <- kmaha(sp$xtr, sp$ytr, seed = r)
    list(pred = predict(f, sp$xte), note = sprintf("%s, %s, k = %d",
         f$kernel_choice$learner, f$kernel_choice$cv$curve$label[f$kernel_choice$index], f$k)) },
  kmaha_lmnn = function(sp, r) { f <- kmaha(sp$xtr, sp$ytr, learner = "lmnn", seed = r)
    list(pred = predict(f, sp$xte)) },
  euclid = function(sp, r) {
    xs <- scale(sp$xtr)
    xt <- scale(sp$xte, attr(xs, "scaled:center"), attr(xs, "scaled:scale"))
    list(pred = knn_classify(xs, sp$ytr, xt)$class) },
  nca = function(sp, r) list(pred = predict(nca(sp$xtr, sp$ytr), sp$xte)),
  lmnn = function(sp, r) list(pred = predict(lmnn(sp$xtr, sp$ytr), sp$xte)),
  dne = function(sp, r) list(pred = predict(dne(sp$xtr, sp$ytr), sp$xte)),
  ranger = function(sp, r) {
    f <- ranger::ranger(x = as.data.frame(sp$xtr), y = sp$ytr, num.trees = 500,
                        num.threads = 1, seed = r)
    list(pred = predict(f, as.data.frame(sp$xte), num.threads = 1)$predictions) },
  ksvm = function(sp, r) {
    set.seed(r)
    f <- kernlab::ksvm(sp$xtr, sp$ytr, kernel = "rbfdot", kpar = "automatic", scaled = TRUE)
    list(pred = kernlab::predict(f, sp$xte)) },
  glmnet = function(sp, r) {
    set.seed(r)
    fam <- if (nlevels(sp$ytr) > 2) "multinomial" else "binomial"
    f <- glmnet::cv.glmnet(sp$xtr, sp$ytr, family = fam, nfolds = 5)
    list(pred = as.vector(predict(f, sp$xte, s = "lambda.min", type = "class"))) })
methods_old <- list(
  default_nca_052 = function(sp, r) list(pred = predict(kmaha(sp$xtr, sp$ytr, learner = "nca", seed = r), sp$xte)),
  default_lmnn_052 = function(sp, r) list(pred = predict(kmaha(sp$xtr, sp$ytr, learner = "lmnn", seed = r), sp$xte)),
  default_dne_052 = function(sp, r) list(pred = predict(kmaha(sp$xtr, sp$ytr, learner = "dne", seed = r), sp$xte)))
methods <- if (which_run == "old") methods_old else methods_new
rows <- list()
for (s in sets) {
  d <- tryCatch(load_set(s), error = function(e) NULL)
  if (is.null(d)) { cat("unavailable:", s, "\n"); next }
  for (r in 1:3) {
    sp <- split_set(d, s, r)
    for (m in names(methods)) {
      res <- tryCatch(cpu(methods[[m]](sp, r)), error = function(e) e)
      row <- if (inherits(res, "error")) {
        data.frame(set = s, split = r, method = m, acc = NA_real_, cpu = NA_real_,
                   note = conditionMessage(res), stringsAsFactors = FALSE)
      } else {
        data.frame(set = s, split = r, method = m, acc = acc(res$value$pred, sp$yte),
                   cpu = res$cpu, note = if (is.null(res$value$note)) "" else res$value$note, stringsAsFactors = FALSE)
      }
      row$n_train <- nrow(sp$xtr)
      row$p <- ncol(sp$xtr)
      row$version <- as.character(packageVersion("kmaha"))
      rows[[length(rows) + 1L]] <- row
    }
    cat(sprintf("%s %d: %s\n", s, r, paste(sprintf("%s %.3f", names(methods),
        vapply(rows[length(rows) - rev(seq_along(methods)) + 1L], `[[`, 0, "acc")), collapse = ", ")))
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, out, row.names = FALSE)
