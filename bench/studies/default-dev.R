# The default kmaha(x, y) end to end on the development splits of
# bench/studies/screen-study.R (the paper's nine sets and bench/studies/auto-external-data.R's
# seventeen, two splits each, the same training rows): test accuracy, choice
# and CPU seconds, beside the Euclidean 1-NN and linear learner accuracies
# recorded there.  Variants of the choice's settings are compared by
# changing an internal constant for one run (the `variant` argument, see
# `variants` below), never the installed package.
#   Rscript bench/studies/default-dev.R [learner] [variant] [out.csv]
suppressMessages(library(kmaha))
source("bench/studies/auto-external-data.R")
args <- commandArgs(TRUE)
learner <- if (length(args) >= 1) args[1] else "nca"
variant <- if (length(args) >= 2) args[2] else "default"
out <- if (length(args) >= 3) args[3] else sprintf("bench/studies/results/default_dev_%s_%s.csv", learner, variant)
options(kmaha.num_threads = 1)
ns <- asNamespace("kmaha")
set_const <- function(name, value) {
  unlockBinding(name, ns)
  assign(name, value, envir = ns)
}
folds <- 5
variants <- list(
  default = function() NULL,
  folds3 = function() folds <<- 3,
  dimfull = function() set_const("nca_choice_dim", 100000L),
  screen_all_rows = function() set_const("screen_max_rows", 100000L),
  screen100 = function() set_const("screen_max_rows", 100L),
  screen_q16 = function() set_const("screen_components", 16L),
  lmnn_dim16 = function() set_const("lmnn_choice_dim", 16L),
  # the learner's fold fits stop at a looser relative tolerance
  tol1e5 = function() set_const("score_tol", NULL),
  tol1e4 = function() set_const("score_tol", 1e-4),
  tol1e3 = function() set_const("score_tol", 1e-3),
  # the aligned (QP) combination back among auto's candidates
  with_align = function() {
    cs <- get("candidate_set", ns)
    set_const("candidate_set", function(type, kernels) {
      out <- cs(type, kernels)
      if (type == "auto") out <- c(out, list(get("cand_align", ns)(kernels, "qp")))
      out
    })
  })
variants[[variant]]()
paper_sets <- paper_datasets()$name
files <- list.files("bench/studies/results/screen-study-cache", full.names = TRUE, pattern = "_[0-9]+\\.rds$")
rows <- list()
for (f in files) {
  rec <- readRDS(f)
  d <- load_dev_set(rec$set)
  sp <- split_standardized(d, rec$seed)
  xtr <- sp$xtr; xte <- sp$xte; ytr <- sp$ytr; yte <- sp$yte
  t0 <- proc.time()
  fit <- suppressWarnings(kmaha(xtr, ytr, learner = learner, seed = rec$seed, cv_folds = folds))
  t <- proc.time() - t0
  acc <- mean(as.character(predict(fit, xte)) == as.character(yte))
  cv <- fit$kernel_choice$cv
  tr <- rec$truth
  rows[[length(rows) + 1]] <- data.frame(
    set = rec$set, split = rec$split, learner = learner, variant = variant, acc = acc,
    euclid = tr[22, "nca_full"],
    linear = if (paste0(learner, "_full") %in% colnames(tr)) tr[23, paste0(learner, "_full")] else {
      xs <- scale(xtr)
      lf <- suppressWarnings(switch(learner, lmnn = lmnn, nca = nca, dne = dne)(xs, ytr, scale = FALSE))
      mean(as.character(predict(lf, scale(xte, attr(xs, "scaled:center"), attr(xs, "scaled:scale")))) ==
             as.character(yte))
    },
    chosen = cv$curve$kind[cv$best], label = cv$curve$label[cv$best],
    cpu = t[["user.self"]] + t[["sys.self"]])
  cat(sprintf("%s %d: %.3f (%s) %.2f s\n", rec$set, rec$split, acc, cv$curve$label[cv$best],
              t[["user.self"]] + t[["sys.self"]]))
}
res <- do.call(rbind, rows)
utils::write.csv(res, out, row.names = FALSE)
ps <- aggregate(cbind(acc, euclid, linear) ~ set, res, mean)
cat(sprintf("\n%s %s: mean %.4f, worst set vs max(euclid, linear) %.4f, CPU %.1f s\n", learner, variant,
            mean(res$acc), min(ps$acc - pmax(ps$euclid, ps$linear)), sum(res$cpu)))
