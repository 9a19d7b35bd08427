# The two choices in lfda()'s ridge `reg` (0.6.1), measured against the
# variant that is klfda()'s exactly: LFDA on the KPCA coordinates of the
# scaled RBF kernel (sigma 0.5, 1, 2; all components) with the ridge
#   "unscaled"  reg * S_t^+            (klfda's: reg * |alpha|^2)
#   "free"      reg * s^2 * S_t^+      (lfda()'s, s = trace(S_t) / n:
#                                       scale-free; s = 1 - mean(K) here)
# and the eigenvectors normalized
#   "alpha"     to unit |alpha| = sqrt(v' S_t^+ v)   (klfda's)
#   "B"         to v' S_w v = 1                      (lfda()'s),
# reg = 0.001, weighted metric, k = 7 (or the smallest class size - 1);
# "free B" is what kmaha(learner = "lfda") computes (its numbers equal the
# "kmaha" rows of bench/lfda-klfda.R), "unscaled alpha" the R prototype
# there.  Also linear LFDA (no kernel) on the standardized inputs with
# reg = 0 and 0.001 ("free B").  Protocol of bench/lfda-klfda.R (the
# paper's nine sets, bench/common.R paper_split(), inputs standardized by
# the training rows, 1-NN test accuracy); the rows "s" hold s itself.
#
# Usage:  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 KMAHA_NUM_THREADS=1 \
#           KMAHA_DATA_DIR=/work/shared/data KMAHA_LIB=/tmp/lib-NAME \
#           Rscript bench/lfda-reg-variants.R
# Output: bench/results/lfda_reg_variants.csv; prints the table in
#         bench/results/lfda-klfda.md.  Env: KMAHA_BENCH_SPLITS (default 10).

lib <- Sys.getenv("KMAHA_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(kmaha))
options(kmaha.num_threads = 1L)
source("bench/common.R")
n_splits <- as.integer(Sys.getenv("KMAHA_BENCH_SPLITS", "10"))

# LFDA on coordinates x from lfda()'s scatters, with the ridge and
# normalization above.
ridge_variant <- function(x, y, k = 7L, reg = 1e-3, free = FALSE, norm = "B") {
  lf <- kmaha::lfda(x, y, k = k, scale = FALSE)
  xc <- sweep(x, 2, colMeans(x))
  e0 <- eigen(crossprod(xc), symmetric = TRUE)
  keep <- e0$values > 1e-10 * e0$values[1]
  Stp <- e0$vectors[, keep, drop = FALSE] %*%
    (t(e0$vectors[, keep, drop = FALSE]) / e0$values[keep])
  f <- if (free) (sum(xc^2) / nrow(x))^2 else 1
  Sw <- lf$scatter$within
  B <- Sw + 1e-8 * sum(diag(Sw)) * diag(ncol(x)) + reg * f * Stp
  Ri <- backsolve(chol((B + t(B)) / 2), diag(ncol(B)))
  e <- eigen(crossprod(Ri, lf$scatter$between %*% Ri), symmetric = TRUE)
  V <- Ri %*% e$vectors
  if (norm == "alpha") V <- sweep(V, 2, sqrt(colSums(V * (Stp %*% V))), "/")
  t(sweep(V, 2, sqrt(pmax(e$values, 0)), "*"))
}
acc <- function(z, y, zt, yt) {
  mean(as.character(knn_classify(z, droplevels(y), zt, k = 1)$class) == as.character(yt))
}
out <- list()
add <- function(...) out[[length(out) + 1L]] <<- data.frame(..., stringsAsFactors = FALSE)
for (ds in paper_datasets()$name) for (s in seq_len(n_splits)) {
  sp <- paper_split(ds, s)
  if (is.null(sp)) next
  mu <- colMeans(sp$x)
  sdv <- apply(sp$x, 2, stats::sd)
  xs <- unname(scale(sp$x, mu, sdv))
  xte <- unname(scale(sp$xte, mu, sdv))
  attributes(xs)[c("scaled:center", "scaled:scale")] <- NULL
  attributes(xte)[c("scaled:center", "scaled:scale")] <- NULL
  y <- sp$y
  kk <- max(1L, min(7L, min(table(y)) - 1L))
  for (rg in c(0, 1e-3)) {
    L <- ridge_variant(xs, y, kk, rg, TRUE, "B")
    add(dataset = ds, split = s, sigma = NA, variant = sprintf("linear reg=%g", rg),
        value = acc(xs %*% t(L), y, xte %*% t(L), sp$yte))
  }
  for (sg in c(0.5, 1, 2)) {
    kern <- rbf_kernel(sg)
    for (v in c("unscaled alpha", "unscaled B", "free alpha", "free B")) {
      pr <- strsplit(v, " ")[[1]]
      lf <- function(x, y, k) ridge_variant(x, y, k, 1e-3, pr[1] == "free", pr[2])
      m <- kmaha(xs, y, learner = lf, kernel = kern, scale = FALSE, learner_args = list(k = kk))
      add(dataset = ds, split = s, sigma = sg, variant = v,
          value = acc(m$embedding, y, predict(m, xte, type = "transform"), sp$yte))
    }
    K <- kernel_matrix(kern, xs)
    add(dataset = ds, split = s, sigma = sg, variant = "s", value = mean(diag(K)) - mean(K))
  }
  cat(ds, s, "done\n")
}
res <- do.call(rbind, out)
dir.create("bench/results", showWarnings = FALSE)
utils::write.csv(res, "bench/results/lfda_reg_variants.csv", row.names = FALSE)
res$key <- paste0(res$variant, ifelse(is.na(res$sigma), "", paste0(" sigma=", res$sigma)))
tab <- tapply(res$value, list(res$key, res$dataset), mean)
tab <- cbind(tab, mean = rowMeans(tab))
cat(paste0("| variant | ", paste(colnames(tab), collapse = " | "), " |"),
    paste0("|---|", paste(rep("---:", ncol(tab)), collapse = "|"), "|"),
    paste0("| ", rownames(tab), " | ",
           apply(tab, 1, function(r) paste(formatC(r, format = "f", digits = 3), collapse = " | ")),
           " |"), sep = "\n")
