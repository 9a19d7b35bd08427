# The study behind the default after 0.5.2 (learner = "auto", k chosen, the better
# baseline kept): on the development splits (the paper's nine sets and
# bench/auto-external-data.R's seventeen, two splits each) the candidates
# are scored once with every learner and every k (score_candidates(),
# learner = "auto", k = NULL, the screen passing two base kernels), and each
# policy below selects from those scores (a subset of the learners and of
# the k, the margin by which a kernel must beat the better baseline, the
# screen's shortlist); the pipeline it picks is fitted on the training
# rows by kmaha() and scored on the test rows.  Policies differ only in
# what they read, so they are compared on the same folds and fits.
#   Rscript bench/default-study.R [out.csv] [sets]
suppressMessages(library(kmaha))
source("bench/studies/auto-external-data.R")
args <- commandArgs(TRUE)
out <- if (length(args) >= 1) args[1] else "bench/studies/results/default_study.csv"
paper_sets <- paper_datasets()$name
dev_sets <- c(paper_sets, SETS)
sets <- if (length(args) >= 2 && nzchar(args[2])) strsplit(args[2], ",")[[1]] else dev_sets
options(kmaha.num_threads = 1)
ns <- asNamespace("kmaha")
set_const <- function(name, value) {
  unlockBinding(name, ns)
  assign(name, value, envir = ns)
}
orig <- mget(c("auto_margin", "default_shortlist"), envir = ns)

# The scores as a policy reads them: the rows of `learners` (and Euclidean
# k-NN), each at its best k among `ks`.
restrict <- function(sc, learners, ks) {
  rows <- which(sc$curve$learner %in% c("euclidean", learners))
  kk <- match(ks, sc$k)
  acc_k <- sc$accuracy_k[rows, , kk, drop = FALSE]
  cor_k <- sc$correct_k[, rows, kk, drop = FALSE]
  at <- kmaha:::scores_at_best_k(acc_k, cor_k)
  cu <- sc$curve[rows, , drop = FALSE]
  cu$k <- ks[at$k_index]
  cu$mean <- at$mean
  cu$sd <- at$sd
  cu$n_ok <- at$n_ok
  sc$curve <- cu
  sc$accuracy <- at$accuracy
  sc$correct <- at$correct
  sc$accuracy_k <- acc_k
  sc$correct_k <- cor_k
  sc$k <- ks
  sc
}

all3 <- c("nca", "lmnn", "dne")
kgrid <- c(1L, 3L, 5L, 7L, 9L)
policies <- list(
  nca_k1_m1 = list(learners = "nca", ks = 1L, margin = 1),
  nca_k1_m05 = list(learners = "nca", ks = 1L, margin = 0.5),
  nca_k_m05 = list(learners = "nca", ks = kgrid, margin = 0.5),
  lmnn_k1_m1 = list(learners = "lmnn", ks = 1L, margin = 1),
  lmnn_k_m05 = list(learners = "lmnn", ks = kgrid, margin = 0.5),
  dne_k_m05 = list(learners = "dne", ks = kgrid, margin = 0.5),
  lmnn_dne_k_m05 = list(learners = c("lmnn", "dne"), ks = kgrid, margin = 0.5),
  all_k1_m05 = list(learners = all3, ks = 1L, margin = 0.5),
  all_k_m0 = list(learners = all3, ks = kgrid, margin = 0),
  all_k_m05 = list(learners = all3, ks = kgrid, margin = 0.5),
  all_k_m1 = list(learners = all3, ks = kgrid, margin = 1),
  all_k_m05_sl2 = list(learners = all3, ks = kgrid, margin = 0.5, shortlist = 2L))

acc <- function(pred, y) mean(as.character(pred) == as.character(y))
rows <- list()
for (s in sets) {
  d <- tryCatch(load_dev_set(s), error = function(e) NULL)
  if (is.null(d)) next
  for (r in 1:2) {
    sp <- split_standardized(d, 100 * match(s, dev_sets) + r)
    t0 <- proc.time()
    sc <- suppressWarnings(score_candidates(sp$xtr, sp$ytr, seed = r, shortlist = 2))
    cpu <- sum((proc.time() - t0)[c("user.self", "sys.self")])
    base <- c(euclid = acc(knn_classify(sp$xs, sp$ytr, sp$xt)$class, sp$yte),
              vapply(list(nca = nca, lmnn = lmnn, dne = dne), function(f)
                acc(predict(suppressWarnings(f(sp$xtr, sp$ytr)), sp$xte), sp$yte), 0))
    for (pn in names(policies)) {
      pol <- policies[[pn]]
      set_const("auto_margin", pol$margin)
      set_const("default_shortlist", if (is.null(pol$shortlist)) orig$default_shortlist else
        local({ m <- pol$shortlist; function(type) if (type == "auto") m else 3L }))
      scv <- restrict(sc, pol$learners, pol$ks)
      fit <- suppressWarnings(kmaha(sp$xtr, sp$ytr, kernel = scv, seed = r))
      ch <- fit$kernel_choice
      rows[[length(rows) + 1L]] <- data.frame(
        set = s, split = r, n_train = nrow(sp$xtr), p = ncol(sp$xtr), policy = pn,
        acc = acc(predict(fit, sp$xte), sp$yte), chosen = ch$cv$curve$label[ch$index],
        learner = ch$learner, k = ch$k, score_cpu = cpu,
        euclid = base[["euclid"]], lin_nca = base[["nca"]], lin_lmnn = base[["lmnn"]],
        lin_dne = base[["dne"]], stringsAsFactors = FALSE)
    }
    set_const("auto_margin", orig$auto_margin)
    set_const("default_shortlist", orig$default_shortlist)
    cat(sprintf("%s split %d: %s\n", s, r, paste(sprintf("%s %.3f", names(policies),
        vapply(rows[length(rows) - rev(seq_along(policies)) + 1L], `[[`, 0, "acc")), collapse = ", ")))
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, out, row.names = FALSE)
res$best_base <- pmax(res$euclid, res$lin_nca, res$lin_lmnn, res$lin_dne)
agg <- aggregate(cbind(acc, best_base) ~ set + policy, res, mean)
agg$short <- agg$acc - agg$best_base
summ <- do.call(rbind, lapply(split(agg, agg$policy), function(a)
  data.frame(policy = a$policy[1], mean_acc = mean(a$acc), sets_short_001 = sum(a$short < -0.01),
             worst = min(a$short))))
rk <- do.call(rbind, lapply(split(res, paste(res$set, res$split)), function(b)
  data.frame(policy = b$policy, rank = rank(-b$acc))))
summ$mean_rank <- tapply(rk$rank, rk$policy, mean)[summ$policy]
print(summ[order(-summ$mean_acc), ], row.names = FALSE, digits = 4)
