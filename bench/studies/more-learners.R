# Should the default (learner = "auto") choose among more learners?  Issue
# 34 added LFDA and RCA (closed forms, cheap); today "auto" scores NCA, LMNN
# and DNE.  On the development splits (the paper's nine sets first, then
# bench/studies/auto-external-data.R's seventeen, two splits each, as
# default-study.R) the candidates are scored once with the extended set of
# learners (NCA, LMNN, DNE, LFDA, RCA: the registry's `auto` field set for
# LFDA and RCA in this script's session only), at the package's defaults
# otherwise (k chosen among 1-9, the screen's shortlist, the 0.5 SE
# margin); each policy reads those scores restricted to its learners
# (default-study.R's restrict()), and the pipeline it picks is fitted by
# kmaha() on the training rows and scored on the test rows.  The policies
# thus differ only in which learners they may choose, on the same folds.
#
# CPU: the scoring is timed twice, once with today's three learners (a
# separate score_candidates() call, whose curve must equal the restricted
# one: checked) and once with all five; the cost of LFDA and RCA is the
# difference (the screen, Gram matrices and KPCA are shared).
#
#   Rscript bench/studies/more-learners.R [out.csv] [sets]
# (KMAHA_DATA_DIR for the paper's sets; one thread.)
suppressMessages(library(kmaha))
source("bench/studies/auto-external-data.R")
args <- commandArgs(TRUE)
out <- if (length(args) >= 1) args[1] else "bench/studies/results/more_learners.csv"
paper_sets <- paper_datasets()$name
dev_sets <- c(paper_sets, SETS)
sets <- if (length(args) >= 2 && nzchar(args[2])) strsplit(args[2], ",")[[1]] else dev_sets
options(kmaha.num_threads = 1)

# The extended auto set, for this session: the registry's `auto` field.
reg <- kmaha:::learner_registry
set_auto <- function(names) {
  tab <- kmaha:::learner_table()
  for (nm in names(tab)) tab[[nm]]$auto <- nm %in% names
  reg$table <- tab
  invisible(kmaha:::auto_learners())
}
all3 <- c("nca", "lmnn", "dne")
all5 <- c(all3, "lfda", "rca")

# default-study.R's restrict(): the scores as a policy reads them (the rows
# of `learners` and Euclidean k-NN, each at its best k).
restrict <- function(sc, learners) {
  rows <- which(sc$curve$learner %in% c("euclidean", learners))
  acc_k <- sc$accuracy_k[rows, , , drop = FALSE]
  cor_k <- sc$correct_k[, rows, , drop = FALSE]
  at <- kmaha:::scores_at_best_k(acc_k, cor_k)
  cu <- sc$curve[rows, , drop = FALSE]
  cu$k <- sc$k[at$k_index]
  cu$mean <- at$mean
  cu$sd <- at$sd
  cu$n_ok <- at$n_ok
  sc$curve <- cu
  sc$accuracy <- at$accuracy
  sc$correct <- at$correct
  sc$accuracy_k <- acc_k
  sc$correct_k <- cor_k
  sc
}

policies <- list(all3 = all3, all3_lfda = c(all3, "lfda"), all3_rca = c(all3, "rca"),
                 all5 = all5)

acc <- function(pred, y) mean(as.character(pred) == as.character(y))
cpu_of <- function(expr) {
  t0 <- proc.time()
  v <- expr
  list(value = v, cpu = sum((proc.time() - t0)[c("user.self", "sys.self")]))
}
rows <- list()
for (s in sets) {
  d <- tryCatch(load_dev_set(s), error = function(e) NULL)
  if (is.null(d)) next
  for (r in 1:2) {
    sp <- split_standardized(d, 100 * match(s, dev_sets) + r)
    set_auto(all3)
    sc3 <- cpu_of(suppressWarnings(score_candidates(sp$xtr, sp$ytr, seed = r)))
    set_auto(all5)
    sc5 <- cpu_of(suppressWarnings(score_candidates(sp$xtr, sp$ytr, seed = r)))
    # the restricted scores are today's scores
    same <- isTRUE(all.equal(restrict(sc5$value, all3)$curve[, c("label", "learner", "mean", "k")],
                             sc3$value$curve[, c("label", "learner", "mean", "k")],
                             check.attributes = FALSE))
    base <- c(euclid = acc(knn_classify(sp$xs, sp$ytr, sp$xt)$class, sp$yte),
              vapply(list(nca = nca, lmnn = lmnn, dne = dne, lfda = lfda, rca = rca), function(f)
                acc(predict(suppressWarnings(f(sp$xtr, sp$ytr)), sp$xte), sp$yte), 0))
    for (pn in names(policies)) {
      scv <- restrict(sc5$value, policies[[pn]])
      fit <- suppressWarnings(kmaha(sp$xtr, sp$ytr, kernel = scv, seed = r))
      ch <- fit$kernel_choice
      rows[[length(rows) + 1L]] <- data.frame(
        set = s, split = r, n_train = nrow(sp$xtr), p = ncol(sp$xtr), policy = pn,
        acc = acc(predict(fit, sp$xte), sp$yte), chosen = ch$cv$curve$label[ch$index],
        learner = ch$learner, k = ch$k, score_cpu_all3 = sc3$cpu, score_cpu_all5 = sc5$cpu,
        restricted_equal = same,
        euclid = base[["euclid"]], lin_nca = base[["nca"]], lin_lmnn = base[["lmnn"]],
        lin_dne = base[["dne"]], lin_lfda = base[["lfda"]], lin_rca = base[["rca"]],
        stringsAsFactors = FALSE)
    }
    set_auto(all3)
    cat(sprintf("%s split %d (cpu %.1f / %.1f s, same %s): %s\n", s, r, sc3$cpu, sc5$cpu, same,
                paste(sprintf("%s %.3f (%s)", names(policies),
                              vapply(rows[length(rows) - rev(seq_along(policies)) + 1L], `[[`, 0, "acc"),
                              vapply(rows[length(rows) - rev(seq_along(policies)) + 1L], `[[`, "", "learner")),
                      collapse = ", ")))
    res <- do.call(rbind, rows)
    utils::write.csv(res, out, row.names = FALSE)  # after every split
  }
}
res <- do.call(rbind, rows)
utils::write.csv(res, out, row.names = FALSE)

# Summary: per policy, the mean test accuracy over the sets (each set's two
# splits averaged), the sets where it falls short of the better baseline
# (Euclidean 1-NN or the best linear NCA/LMNN/DNE, as default-study.R) by
# more than 0.01, the worst shortfall, the mean rank, and the scoring CPU
# (the three learners' run for all3, the five learners' run for the others:
# all3_lfda and all3_rca pay for LFDA or RCA alone, about half the
# difference, not measured separately).
res$best_base <- pmax(res$euclid, res$lin_nca, res$lin_lmnn, res$lin_dne)
agg <- aggregate(cbind(acc, best_base) ~ set + policy, res, mean)
agg$short <- agg$acc - agg$best_base
summ <- do.call(rbind, lapply(split(agg, agg$policy), function(a)
  data.frame(policy = a$policy[1], sets = nrow(a), mean_acc = mean(a$acc),
             sets_short_001 = sum(a$short < -0.01), worst = min(a$short))))
rk <- do.call(rbind, lapply(split(res, paste(res$set, res$split)), function(b)
  data.frame(policy = b$policy, rank = rank(-b$acc))))
summ$mean_rank <- tapply(rk$rank, rk$policy, mean)[summ$policy]
one <- res[res$policy == "all3", ]
summ$score_cpu_s <- ifelse(summ$policy == "all3", sum(one$score_cpu_all3),
                           sum(one$score_cpu_all5))
summ$wins_vs_all3 <- vapply(summ$policy, function(p) {
  a <- res$acc[res$policy == p]
  sum(a > one$acc + 1e-12)
}, 0)
summ$losses_vs_all3 <- vapply(summ$policy, function(p) {
  a <- res$acc[res$policy == p]
  sum(a < one$acc - 1e-12)
}, 0)
print(summ[match(names(policies), summ$policy), ], row.names = FALSE, digits = 4)
cat(sprintf("restricted scores equal today's: %d of %d splits\n",
            sum(one$restricted_equal), nrow(one)))
tab <- table(res$policy, res$learner)
print(tab[names(policies), , drop = FALSE])
