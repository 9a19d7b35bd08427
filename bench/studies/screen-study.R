# Which cheap score predicts the learner's cross-validated choice of kernel?
# A study on the development sets (the paper's nine and
# bench/studies/auto-external-data.R's seventeen), used to design the screen of
# kernel = "auto" (issue 25).  For every set and split, on the standardized
# training split:
#
# * gold: the learner's 5-fold CV of every candidate of kernel = "auto"
#   (exhaustive strategy: every candidate on every fold, exact KPCA per fold,
#   every component), NCA and DNE, with the held-out correctness of every
#   point (kmaha(kernel = "auto", cv_strategy = "exhaustive"));
# * truth: the test accuracy of every candidate fitted on the whole training
#   split, with every KPCA component and with the top 32 (NCA, DNE);
# * screens, on the same folds, for every kernel candidate: held-out 1-NN in
#   the fold's KPCA coordinates cut to the top q components (q = 4 ... 64, and
#   the components carrying 99% of the trace), DNE on the top 32, and the same
#   with the KPCA fitted once on the whole training split (transductive).
#
# One cache file per set and split (bench/studies/results/screen-study-cache/, not
# committed); `Rscript bench/studies/screen-study.R [splits] [sets]`, then
# `Rscript bench/studies/screen-analyse.R` summarises.  Runs on kmaha 0.4.0's API.
suppressMessages(library(kmaha))
source("bench/studies/auto-external-data.R")
args <- commandArgs(TRUE)
splits <- if (length(args) >= 1) eval(parse(text = args[1])) else 1:2
paper_sets <- paper_datasets()$name
sets <- if (length(args) >= 2) strsplit(args[2], ",")[[1]] else c(paper_sets, SETS)
cache_dir <- "bench/studies/results/screen-study-cache"
dir.create(cache_dir, showWarnings = FALSE, recursive = TRUE)
options(kmaha.num_threads = 1)
ks <- paper_kernels()
sig <- vapply(ks, function(k) k$sigma, 0)
QS <- c(4, 8, 16, 32, 64)

acc1 <- function(ztr, ytr, zte, yte) {
  as.character(knn_classify(ztr, ytr, zte, k = 1)$class) == as.character(yte)
}
fit_acc <- function(f, xt, yt) {
  if (is.null(f)) return(NA_real_)
  mean(as.character(predict(f, xt)) == as.character(yt))
}
quiet <- function(expr) tryCatch(suppressWarnings(expr), error = function(e) NULL)

# screens of one kernel on one fold split: tr, te logical over rows of xs
screen_fold <- function(kern, xs, y, tr, te, Kfull = NULL) {
  out <- list()
  kp <- quiet(kpca(xs[tr, , drop = FALSE], kern))
  if (is.null(kp)) return(NULL)
  ztr <- kp$coords
  zte <- predict(kp, xs[te, , drop = FALSE])
  ytr <- droplevels(y[tr])
  r <- ncol(ztr)
  share <- cumsum(kp$eigenvalues) / kp$trace
  r99 <- which(share >= 0.99)[1]; if (is.na(r99)) r99 <- r
  for (q in QS) {
    qq <- min(q, r)
    out[[sprintf("knn_q%d", q)]] <- acc1(ztr[, 1:qq, drop = FALSE], ytr, zte[, 1:qq, drop = FALSE], y[te])
  }
  out$knn_r99 <- acc1(ztr[, 1:r99, drop = FALSE], ytr, zte[, 1:r99, drop = FALSE], y[te])
  q <- min(32, r)
  dn <- quiet(dne(ztr[, 1:q, drop = FALSE], ytr, scale = FALSE))
  out$dne_q32 <- if (is.null(dn)) rep(NA, sum(te)) else {
    acc1(predict(dn, ztr[, 1:q, drop = FALSE], type = "transform"), ytr,
         predict(dn, zte[, 1:q, drop = FALSE], type = "transform"), y[te])
  }
  out$r99 <- r99
  out$r <- r
  out
}

for (rep in splits) for (s in sets) {
  file <- sprintf("%s/%s_%02d.rds", cache_dir, s, rep)
  if (file.exists(file)) next
  d <- load_dev_set(s)
  seed <- 7000L + 37L * match(s, sets) + rep
  sp <- split_standardized(d, seed)
  xs <- sp$xs; xt <- sp$xt; ytr <- sp$ytr; yte <- sp$yte
  t0 <- proc.time()[[3]]
  gold <- list()
  for (lr in c("nca", "dne")) {
    f <- quiet(kmaha(xs, ytr, learner = lr, kernel = "auto", cv_strategy = "exhaustive",
                     seed = seed, scale = FALSE))
    cv <- f$kernel_choice$cv
    gold[[lr]] <- list(curve = cv$curve, correct = cv$correct, folds = cv$folds,
                       best = cv$best, test_auto = fit_acc(f, xt, yte))
  }
  folds <- gold$nca$folds
  # the kernels of the candidates, in the curve's order (21 sigma, euclid,
  # linear, aligned, unweighted); the aligned kernel fitted on the whole split
  al <- align_kernels(xs, ytr, ks)
  kern_of <- list()
  for (i in seq_along(ks)) kern_of[[i]] <- ks[[i]]
  kern_of[[24]] <- al$kernel
  kern_of[[25]] <- kernel_sum(ks)
  truth <- matrix(NA_real_, 25, 6, dimnames = list(NULL, c("nca_full", "nca_r32", "nca_r99",
                                                            "dne_full", "dne_r32", "dne_r99")))
  for (j in c(1:21, 24, 25)) {
    kp <- quiet(kpca(xs, kern_of[[j]]))
    r99 <- if (is.null(kp)) NA else { sh <- cumsum(kp$eigenvalues) / kp$trace; which(sh >= 0.99)[1] }
    for (lr in c("nca", "dne")) {
      truth[j, paste0(lr, "_full")] <- fit_acc(quiet(kmaha(xs, ytr, learner = lr, kernel = kern_of[[j]], scale = FALSE,
                                                          neighbors = if (j == 25) "input" else "feature")), xt, yte)
      truth[j, paste0(lr, "_r32")] <- fit_acc(quiet(kmaha(xs, ytr, learner = lr, kernel = kern_of[[j]], scale = FALSE,
                                                         rank = min(32, nrow(xs) - 1),
                                                         neighbors = if (j == 25) "input" else "feature")), xt, yte)
      if (!is.na(r99)) truth[j, paste0(lr, "_r99")] <- fit_acc(quiet(kmaha(xs, ytr, learner = lr, kernel = kern_of[[j]], scale = FALSE,
                                                         rank = r99,
                                                         neighbors = if (j == 25) "input" else "feature")), xt, yte)
    }
  }
  eu <- mean(acc1(xs, ytr, xt, yte))
  truth[22, ] <- eu
  truth[23, c("nca_full", "nca_r32", "nca_r99")] <- fit_acc(quiet(nca(xs, ytr, scale = FALSE)), xt, yte)
  truth[23, c("dne_full", "dne_r32", "dne_r99")] <- fit_acc(quiet(dne(xs, ytr, scale = FALSE)), xt, yte)
  # screens, per fold (exact per-fold KPCA) and transductive (one KPCA)
  screens <- list(); trans <- list()
  for (j in c(1:21, 24, 25)) {
    per <- list()
    for (f in 1:5) {
      te <- folds == f; tr <- !te
      sf <- screen_fold(kern_of[[j]], xs, ytr, tr, te)
      if (is.null(sf)) next
      for (nm in setdiff(names(sf), c("r", "r99"))) {
        if (is.null(per[[nm]])) per[[nm]] <- rep(NA, nrow(xs))
        per[[nm]][te] <- sf[[nm]]
      }
      per$r99[f] <- sf$r99
    }
    screens[[j]] <- per
    kp <- quiet(kpca(xs, kern_of[[j]]))
    if (!is.null(kp)) {
      z <- kp$coords
      sh <- cumsum(kp$eigenvalues) / kp$trace
      tt <- list()
      for (q in c(16, 32)) {
        qq <- min(q, ncol(z)); v <- rep(NA, nrow(xs))
        for (f in 1:5) { te <- folds == f
          v[te] <- acc1(z[!te, 1:qq, drop = FALSE], droplevels(ytr[!te]), z[te, 1:qq, drop = FALSE], ytr[te]) }
        tt[[sprintf("knn_q%d", q)]] <- v
      }
      trans[[j]] <- tt
    }
  }
  # the linear candidate's screen: DNE on the inputs; Euclidean: 1-NN
  lin <- list(eu = rep(NA, nrow(xs)), dne = rep(NA, nrow(xs)))
  for (f in 1:5) {
    te <- folds == f; tr <- !te
    lin$eu[te] <- acc1(xs[tr, , drop = FALSE], droplevels(ytr[tr]), xs[te, , drop = FALSE], ytr[te])
    dn <- quiet(dne(xs[tr, , drop = FALSE], droplevels(ytr[tr]), scale = FALSE))
    if (!is.null(dn)) lin$dne[te] <- acc1(predict(dn, xs[tr, , drop = FALSE], type = "transform"),
                                          droplevels(ytr[tr]), predict(dn, xs[te, , drop = FALSE], type = "transform"), ytr[te])
  }
  saveRDS(list(set = s, split = rep, seed = seed, n = nrow(xs), p = ncol(xs), classes = nlevels(ytr),
               gold = gold, truth = truth, screens = screens, trans = trans, lin = lin,
               sigma = sig, seconds = proc.time()[[3]] - t0), file)
  cat(sprintf("%s %d: n=%d p=%d  gold nca auto %.3f dne auto %.3f  %.0f s\n", s, rep, nrow(xs), ncol(xs),
              gold$nca$test_auto, gold$dne$test_auto, proc.time()[[3]] - t0))
}
