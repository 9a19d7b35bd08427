# DNE's automatic dimension and the p >> n solver: test accuracy of 1-NN
# before and after, on the paper's datasets (protocol of reproduce_paper():
# 200 training points, 100 for Glass and Iris, standardized, 1-NN, splits of
# kmaha:::split_rows() with seed 1) and on generated p >> n problems.
#
# Run it once per installed version and compare the two outputs:
#   KMAHA_LIB=/path/to/old/lib Rscript bench/studies/dne-dimension.R 10 > old.txt
#   KMAHA_LIB=/path/to/new/lib Rscript bench/studies/dne-dimension.R 10 > new.txt
# Argument: number of splits (default 10). Needs KMAHA_DATA_DIR (yeast, musk2).
#
# Columns: euclid = 1-NN on the standardized inputs; linear = dne(x, y);
# kpca_s = kmaha(x, y, learner = "dne", kernel = rbf_kernel(s)); kdne_s =
# kdne(x, y, kernel = rbf_kernel(s)); d_* the mean dimension chosen; the
# p >> n block adds the fit time of dne() (elapsed, median of the splits).
lib <- Sys.getenv("KMAHA_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressPackageStartupMessages(library(kmaha))
args <- commandArgs(trailingOnly = TRUE)
n_splits <- if (length(args)) as.integer(args[1]) else 10L
sigmas_kpca <- c(0.25, 0.5, 1, 2)
sigmas_kdne <- c(0.5, 1)
acc <- function(pred, y) mean(as.character(pred) == as.character(y))

one_split <- function(xtr, ytr, xte, yte) {
  sc <- scale(xtr)
  xts <- scale(xte, attr(sc, "scaled:center"), attr(sc, "scaled:scale"))
  out <- c(euclid = acc(knn_classify(unclass(sc), ytr, xts)$class, yte))
  t0 <- proc.time()[["elapsed"]]
  f <- suppressWarnings(dne(xtr, ytr))
  out["seconds"] <- proc.time()[["elapsed"]] - t0
  out["linear"] <- acc(predict(f, xte), yte)
  out["d_linear"] <- nrow(f$L)
  for (s in sigmas_kpca) {
    f <- suppressWarnings(kmaha(xtr, ytr, learner = "dne", kernel = rbf_kernel(s)))
    out[paste0("kpca_", s)] <- acc(predict(f, xte), yte)
    out[paste0("d_kpca_", s)] <- nrow(f$L)
  }
  for (s in sigmas_kdne) {
    f <- suppressWarnings(kdne(xtr, ytr, kernel = rbf_kernel(s)))
    out[paste0("kdne_", s)] <- acc(predict(f, xte), yte)
    out[paste0("d_kdne_", s)] <- nrow(if (is.null(f$U)) f$L else f$U)
  }
  out
}

rows <- list()
for (ds in paper_datasets()$name) {
  d <- kmaha_data(ds)
  x <- as.matrix(d[, -ncol(d)])
  n_train <- paper_datasets()$n_train[paper_datasets()$name == ds]
  for (s in seq_len(n_splits)) {
    tr <- kmaha:::split_rows(1, ds, s, nrow(x), n_train)
    keep <- apply(x[tr, , drop = FALSE], 2L, function(v) max(v) > min(v))
    r <- one_split(x[tr, keep, drop = FALSE], droplevels(d$class[tr]),
                   x[-tr, keep, drop = FALSE], d$class[-tr])
    rows[[length(rows) + 1L]] <- data.frame(dataset = ds, split = s, t(r))
  }
}

# p >> n: n = 40 training and 400 test points, D = 3000 standard normal
# columns, the first `inf` shifted by +-delta/2 (two classes) or by class
# means drawn with sd delta (C classes).
gen <- function(n, p, C, inf, delta, mseed, sseed) {
  set.seed(mseed)
  mu <- if (C == 2) rbind(rep(-delta / 2, inf), rep(delta / 2, inf)) else
    matrix(rnorm(C * inf, sd = delta), C, inf)
  set.seed(sseed)
  y <- factor(rep(letters[seq_len(C)], length.out = n))
  x <- matrix(rnorm(n * p), n)
  x[, seq_len(inf)] <- x[, seq_len(inf)] + mu[as.integer(y), ]
  list(x = x, y = y)
}
problems <- list(pn2 = c(C = 2, inf = 20, delta = 1.6), pn2_weak = c(C = 2, inf = 20, delta = 1.0),
                 pn3 = c(C = 3, inf = 20, delta = 1.0), pn4 = c(C = 4, inf = 30, delta = 0.8))
for (nm in names(problems)) {
  pr <- problems[[nm]]
  for (s in seq_len(n_splits)) {
    tr <- gen(40, 3000, pr[["C"]], pr[["inf"]], pr[["delta"]], s, 1000 + s)
    te <- gen(400, 3000, pr[["C"]], pr[["inf"]], pr[["delta"]], s, 2000 + s)
    r <- one_split(tr$x, tr$y, te$x, te$y)
    rows[[length(rows) + 1L]] <- data.frame(dataset = nm, split = s, t(r))
  }
}
res <- do.call(rbind, rows)
agg <- aggregate(. ~ dataset, res[, setdiff(names(res), "split")], mean)
med <- tapply(res$seconds, res$dataset, stats::median)
agg$seconds <- as.numeric(med[agg$dataset])
agg <- agg[match(unique(res$dataset), agg$dataset), ]
cat(sprintf("kmaha %s, %d splits per dataset\n", utils::packageVersion("kmaha"), n_splits))
options(width = 250)
print(agg, digits = 3, row.names = FALSE)
acc_cols <- grep("^(euclid|linear|kpca_|kdne_)", names(agg), value = TRUE)
paper <- agg$dataset %in% paper_datasets()$name
cat("\nMean over the nine paper datasets:\n")
print(round(colMeans(agg[paper, acc_cols]), 4))
