# Kernel LFDA two ways (issue 34): kmaha's KPCA trick (kmaha(learner =
# "lfda", kernel = rbf_kernel(sigma)): KPCA of the training rows, then
# lfda() on the KPCA coordinates) against lfda::klfda() (the kernel trick:
# the generalized eigenproblem on the n x n kernel matrix, with its ridge
# `reg` = 0.001 on the within-class matrix), on the same kernel, in the
# paper's protocol in small: the paper's nine data sets (bench/common.R
# paper_split(): 200 random training rows, 100 for Glass and Iris, the rest
# for testing), KMAHA_BENCH_SPLITS splits (default 10), 1-NN test accuracy.
#
# Same settings on both sides: inputs standardized by the training rows;
# the scaled RBF kernel exp(-|x - y|^2 / (2 D sigma^2)) for sigma in
# KMAHA_BENCH_SIGMAS (default 0.5, 1, 2), klfda() given its Gram matrix
# (kmaha::kernel_matrix(), the same values kmaha() computes) and the test
# rows' kernel rows against the training rows; the weighted metric (both
# packages' "weighted": eigenvectors times the square roots of their
# eigenvalues); the local scale from the k-th nearest same-class neighbour
# with the same k for both (lfda's `knn` counts as our `k`: the k-th other
# point), k = 7 (Sugiyama's default and ours) lowered to the smallest
# class size - 1 when a class is smaller (klfda() stops on such a class;
# ours caps k per class); the same output dimension: `dim` "full" (ours:
# every KPCA component, kmaha's default; klfda: r = that many) and 10.
# klfda()'s errors (a class of one training row; NaN maps from the square
# roots of negative eigenvalues) are recorded (accuracy NA). Two more kmaha
# rows per split show the KPCA trick's own knobs: "kmaha tol=1e-3" (KPCA
# components above 1e-3 of the largest eigenvalue only, sigma as above,
# full dimension) and "kmaha auto" (learner = "lfda" with the kernel chosen
# by kmaha's default machinery, k chosen by its CV; one row per split,
# sigma NA). Euclidean 1-NN on the standardized inputs is the baseline.
#
# klfda()'s regularizer: its ridge reg * |alpha|^2 on the coefficients of a
# feature-space direction w = sum_i alpha_i phi(x_i) is, on the KPCA
# coordinates (u = Lambda^(1/2) V' alpha for the direction's coordinates
# u), reg * u' Lambda^(-1) u, a ridge that grows as a component's eigenvalue
# shrinks.  Since 0.6.1 lfda() has it built in: its within-class scatter is
# S_lw + rho I + reg s^2 S_t^+ (S_t the total scatter, = diag(Lambda) on
# KPCA coordinates; s = trace(S_t) / n, which makes it scale-free; for the
# RBF kernel s = 1 - mean(K) <= 1; default reg = 0.001, klfda's).  The rows:
#   "kmaha"               the package's default (reg = 0.001);
#   "kmaha reg=0"         learner_args = list(reg = 0): Sugiyama's LFDA on
#                         the KPCA coordinates (the package before 0.6.1;
#                         only the isotropic rho = 1e-8 trace(S_lw));
#   "R prototype ridge"   the R prototype that preceded it, a learner
#                         function (ridge_lfda() below) that takes lfda()'s
#                         two scatters and solves with S_lw + reg Lambda^-1
#                         (reg = 0.001 without the factor s^2, klfda's exact
#                         ridge), each v scaled to unit length in alpha
#                         (klfda's eigenvectors; the package normalizes
#                         V' S_w V = I);
#   "lfda linear", "lfda linear reg=0"   lfda() on the standardized inputs
#                         (no kernel; sigma NA), with the default and with
#                         reg = 0: what the default does to linear LFDA.
# (klfda() uses the uncentred kernel matrix, the KPCA the centred one, so
# the two are close, not equal.)
#
# CPU time (user + system) of the fitting call alone: for klfda() with its
# kernel matrix computed by kernel_matrix() (kmaha() computes its own), one
# thread throughout (the environment below).
#
# Usage:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 KMAHA_NUM_THREADS=1 \
#           KMAHA_DATA_DIR=/work/shared/data KMAHA_LIB=/tmp/lib-NAME \
#           R_LIBS=/usr/local/lib/R/kmaha-suggests Rscript bench/lfda-klfda.R
# Output: bench/results/lfda_klfda.csv (one row per data set, split, method,
#         sigma and dimension); prints the summary table of
#         bench/results/lfda-klfda.md (its prose is written by hand).
# Env:    KMAHA_BENCH_SPLITS (default 10), KMAHA_BENCH_SETS (comma list),
#         KMAHA_BENCH_SIGMAS (comma list).

lib <- Sys.getenv("KMAHA_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages({
  library(kmaha)
  requireNamespace("lfda")
})
options(kmaha.num_threads = 1L)
source("bench/common.R")

n_splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "10"))
sets <- env_list("KMAHA_BENCH_SETS", paper_datasets()$name)
sigmas <- as.numeric(env_list("KMAHA_BENCH_SIGMAS", c("0.5", "1", "2")))
k_lfda <- 7L

acc_1nn <- function(ztr, y, zte, yte) {
  if (anyNA(ztr) || anyNA(zte)) stop("the map has NaN entries")
  mean(as.character(knn_classify(ztr, droplevels(y), zte, k = 1)$class) == as.character(yte))
}

# The value (or error) of a fitting call and its CPU seconds.
cpu <- function(expr) {
  t <- system.time(v <- tryCatch(expr, error = function(e) e))
  list(value = v, cpu = t[["user.self"]] + t[["sys.self"]])
}

# LFDA on KPCA coordinates x with klfda()'s ridge (see above); the columns'
# sums of squares are the KPCA eigenvalues.
ridge_lfda <- function(x, y, k = 7L, reg = 1e-3, dim = NULL) {
  lf <- kmaha::lfda(x, y, k = k, scale = FALSE)
  lam <- colSums(sweep(x, 2, colMeans(x))^2)
  R <- lf$scatter$within + reg * diag(1 / lam, length(lam))
  Ri <- backsolve(chol((R + t(R)) / 2), diag(ncol(R)))
  e <- eigen(crossprod(Ri, lf$scatter$between %*% Ri), symmetric = TRUE)
  V <- Ri %*% e$vectors
  V <- sweep(V, 2, sqrt(colSums(V^2 / lam)), "/")
  d <- if (is.null(dim)) ncol(V) else dim
  t(sweep(V[, seq_len(d), drop = FALSE], 2, sqrt(pmax(e$values[seq_len(d)], 0)), "*"))
}

rows <- list()
add <- function(...) rows[[length(rows) + 1L]] <<- data.frame(..., stringsAsFactors = FALSE)

for (ds in sets) {
  for (s in seq_len(n_splits)) {
    sp <- paper_split(ds, s)
    if (is.null(sp)) next
    st <- standardize_split(sp)
    xs <- st$xs
    xte <- st$xte
    y <- sp$y
    yte <- sp$yte
    smallest <- min(table(y))
    k_use <- max(1L, min(k_lfda, smallest - 1L))
    base <- list(dataset = ds, split = s, n_train = nrow(xs), D = ncol(xs), k = k_use)
    record <- function(method, sigma, dim, d_out, res, ztr, zte) {
      v <- res$value
      err <- if (inherits(v, "error")) conditionMessage(v) else ""
      acc <- if (nzchar(err)) NA_real_ else tryCatch(acc_1nn(ztr(v), y, zte(v), yte),
                                                     error = function(e) {
                                                       err <<- conditionMessage(e)
                                                       NA_real_
                                                     })
      do.call(add, c(base, list(method = method, sigma = sigma, dim = dim, d_out = d_out,
                                accuracy = acc, cpu_s = res$cpu, error = err)))
    }
    record("euclidean", NA, "input", ncol(xs), list(value = NULL, cpu = 0),
           function(v) xs, function(v) xte)
    for (rg in c(1e-3, 0)) {
      resl <- cpu(lfda(xs, y, k = k_use, reg = rg, scale = FALSE))
      record(if (rg > 0) "lfda linear" else "lfda linear reg=0", NA, "input", ncol(xs), resl,
             function(v) v$embedding, function(v) predict(v, xte, type = "transform"))
    }
    for (sg in sigmas) {
      kern <- rbf_kernel(sg)
      Kte <- kernel_matrix(kern, xte, xs)
      ours_full <- NULL
      for (dim in c("full", "10")) {
        la <- list(k = k_use)
        if (dim != "full") la$dim <- min(as.integer(dim), ncol(ours_full$L))
        res <- cpu(kmaha(xs, y, learner = "lfda", kernel = kern, scale = FALSE,
                         learner_args = la))
        if (dim == "full") ours_full <- res$value
        r <- if (inherits(res$value, "error")) NA else nrow(res$value$L)
        record("kmaha", sg, dim, r, res, function(v) v$embedding,
               function(v) predict(v, xte, type = "transform"))
        # klfda: the same kernel, the same k and the same number of dimensions
        r_k <- if (dim == "full") ncol(ours_full$L) else la$dim
        resk <- cpu({
          K <- kernel_matrix(kern, xs)
          lfda::klfda(K, y, r = r_k, metric = "weighted", knn = k_use)
        })
        record("lfda::klfda", sg, dim, r_k, resk, function(v) v$Z,
               function(v) Kte %*% v$T)
        resr <- cpu(kmaha(xs, y, learner = ridge_lfda, kernel = kern, scale = FALSE,
                          learner_args = list(k = k_use, dim = r_k)))
        record("R prototype ridge", sg, dim, r_k, resr, function(v) v$embedding,
               function(v) predict(v, xte, type = "transform"))
        la0 <- c(la, list(reg = 0))
        res0 <- cpu(kmaha(xs, y, learner = "lfda", kernel = kern, scale = FALSE,
                          learner_args = la0))
        record("kmaha reg=0", sg, dim,
               if (inherits(res0$value, "error")) NA else nrow(res0$value$L), res0,
               function(v) v$embedding, function(v) predict(v, xte, type = "transform"))
      }
      rest <- cpu(kmaha(xs, y, learner = "lfda", kernel = kern, scale = FALSE, tol = 1e-3,
                        learner_args = list(k = k_use)))
      record("kmaha tol=1e-3", sg, "full",
             if (inherits(rest$value, "error")) NA else nrow(rest$value$L), rest,
             function(v) v$embedding, function(v) predict(v, xte, type = "transform"))
    }
    resa <- cpu(kmaha(xs, y, learner = "lfda", scale = FALSE, seed = s,
                      learner_args = list(k = k_use)))
    v <- resa$value
    acc_a <- if (inherits(v, "error")) NA_real_ else
      mean(as.character(predict(v, xte)) == as.character(yte))
    add(dataset = ds, split = s, n_train = nrow(xs), D = ncol(xs), k = k_use,
        method = "kmaha auto", sigma = if (inherits(v, "error")) NA else
          v$kernel_choice$cv$curve$sigma[v$kernel_choice$index],
        dim = "full", d_out = if (inherits(v, "error")) NA else nrow(v$L),
        accuracy = acc_a, cpu_s = resa$cpu,
        error = if (inherits(v, "error")) conditionMessage(v) else
          sprintf("chose %s, k = %d", v$kernel_choice$cv$curve$label[v$kernel_choice$index],
                  as.integer(v$k)))
    cat(sprintf("%s split %d done\n", ds, s))
  }
}
res <- do.call(rbind, rows)
dir.create("bench/results", showWarnings = FALSE)
utils::write.csv(res, "bench/results/lfda_klfda.csv", row.names = FALSE)

# Summary tables (markdown): per data set, method, sigma and dimension, the
# mean 1-NN test accuracy over the splits where the method fitted, the
# number of splits it failed on, and the mean CPU seconds.
key <- paste(res$method, ifelse(is.na(res$sigma) | res$method == "kmaha auto", "",
                                paste0(" sigma=", res$sigma)),
             ifelse(res$dim %in% c("full", "input"), "", paste0(" dim=", res$dim)), sep = "")
res$variant <- key
summ <- do.call(rbind, lapply(split(res, list(res$dataset, res$variant), drop = TRUE), function(d) {
  data.frame(dataset = d$dataset[1], variant = d$variant[1],
             accuracy = mean(d$accuracy, na.rm = TRUE), failed = sum(is.na(d$accuracy)),
             splits = nrow(d), cpu_s = mean(d$cpu_s))
}))
wide_acc <- stats::reshape(summ[, c("dataset", "variant", "accuracy")], idvar = "variant",
                           timevar = "dataset", direction = "wide")
names(wide_acc) <- sub("^accuracy\\.", "", names(wide_acc))
sets_done <- intersect(sets, names(wide_acc))
wide_acc$mean <- rowMeans(wide_acc[, sets_done, drop = FALSE])
fails <- tapply(summ$failed, summ$variant, sum)
cpus <- tapply(summ$cpu_s * summ$splits, summ$variant, sum) /
  tapply(summ$splits, summ$variant, sum)
wide_acc$failed <- fails[wide_acc$variant]
wide_acc$cpu_s <- cpus[wide_acc$variant]
ord <- c("euclidean", "lfda linear reg=0", "lfda linear", "kmaha auto",
         sort(grep("^(kmaha|lfda::klfda|R prototype)", wide_acc$variant, value = TRUE)))
wide_acc <- wide_acc[match(unique(c(ord, wide_acc$variant)), wide_acc$variant), ]
wide_acc <- wide_acc[!is.na(wide_acc$variant), ]
fmt <- function(v) ifelse(is.na(v), "NA", formatC(v, format = "f", digits = 3))
md <- c(paste0("| variant | ", paste(sets_done, collapse = " | "), " | mean | failed | CPU s/fit |"),
        paste0("|---|", paste(rep("---:", length(sets_done) + 3), collapse = "|"), "|"),
        apply(wide_acc, 1, function(r) {
          paste0("| ", r[["variant"]], " | ",
                 paste(fmt(as.numeric(r[sets_done])), collapse = " | "), " | ",
                 fmt(as.numeric(r[["mean"]])), " | ", r[["failed"]], " | ",
                 formatC(as.numeric(r[["cpu_s"]]), format = "f", digits = 3), " |")
        }))
cat(md, sep = "\n")
