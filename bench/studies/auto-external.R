# kmaha() at its defaults (kernel = "auto") on data sets the project never
# tuned to (mlbench, MASS, kernlab; bench/studies/auto-external-data.R), against
# Euclidean 1-NN and linear NCA on the same standardized splits, plus every
# candidate of the automatic choice fitted on the whole training split (what
# an oracle could have picked).  One split of one set per cache file
# (resumable), in bench/studies/results/auto-external-cache/.  Usage, from the
# package root:
#   Rscript bench/studies/auto-external.R [splits (e.g. 1:7)] [sets (comma list)]
# Summary: bench/studies/auto.md ("External data"); per-split accuracies of
# auto / euclidean / nca_linear in bench/studies/results/auto_external.csv.
suppressMessages(library(kmaha))
source("bench/studies/auto-external-data.R")
args <- commandArgs(TRUE)
splits <- if (length(args) >= 1) eval(parse(text = args[1])) else 1:10
sets <- if (length(args) >= 2) strsplit(args[2], ",")[[1]] else SETS
cache_dir <- "bench/studies/results/auto-external-cache"
dir.create(cache_dir, showWarnings = FALSE, recursive = TRUE)
stamp <- list(packaged = packageDescription("kmaha")$Packaged,
              version = format(packageVersion("kmaha")),
              head = tryCatch(system("git rev-parse HEAD", intern = TRUE), error = function(e) NA),
              default_kernel = formals(kmaha:::kmaha.default)$kernel,
              fun_md5 = local({ tf <- tempfile()
                writeLines(unlist(lapply(c("auto_select", "smooth_scores", "simplicity_order",
                  "cv_keep", "cv_run", "auto_candidates", "cv_result"),
                  function(f) deparse(get(f, asNamespace("kmaha"))))), tf)
                unname(tools::md5sum(tf)) }))
stopifnot(identical(stamp$default_kernel, "auto"))
ks <- paper_kernels()
sig <- vapply(ks, function(k) k$sigma, 0)
acc_of <- function(fit, xt, yt) mean(as.character(predict(fit, xt)) == as.character(yt))
timed <- function(expr) { t0 <- proc.time()[[3]]; v <- expr; list(v = v, s = proc.time()[[3]] - t0) }

for (r in splits) for (s in sets) {
  file <- sprintf("%s/%s_%02d.rds", cache_dir, s, r)
  if (file.exists(file)) next
  d <- load_set(s)
  seed <- 1000L * match(s, SETS) + r
  sp <- split_standardized(d, seed)
  xs <- sp$xs; xt <- sp$xt; ytr <- sp$ytr; yte <- sp$yte
  rows <- list()
  add <- function(method, acc, secs, kind = NA, label = NA) {
    rows[[length(rows) + 1]] <<- data.frame(set = s, split = r, seed = seed,
      n_train = nrow(xs), n_test = nrow(xt), p = ncol(xs), classes = nlevels(ytr),
      method = method, acc = acc, secs = secs, chosen_kind = kind, chosen_label = label,
      stringsAsFactors = FALSE)
  }
  # kmaha() at its defaults
  auto_warn <- character()
  a <- timed(withCallingHandlers(kmaha(xs, ytr, seed = seed), warning = function(w) {
    auto_warn <<- c(auto_warn, conditionMessage(w)); invokeRestart("muffleWarning") }))
  cv <- a$v$kernel_choice$cv
  add("auto", acc_of(a$v, xt, yte), a$s, cv$curve$kind[cv$best], cv$curve$label[cv$best])
  # baselines
  e <- timed(knn_classify(xs, ytr, xt)$class)
  add("euclidean", mean(as.character(e$v) == as.character(yte)), e$s)
  n <- timed(suppressWarnings(nca(xs, ytr)))
  add("nca_linear", acc_of(n$v, xt, yte), n$s)
  # every candidate of auto fitted on the whole training split
  cand_acc <- rep(NA_real_, nrow(cv$curve)); cand_sec <- cand_acc
  for (j in seq_len(nrow(cv$curve))) {
    kind <- cv$curve$kind[j]
    if (kind == "euclidean") { cand_acc[j] <- mean(as.character(e$v) == as.character(yte)); cand_sec[j] <- e$s; next }
    kern <- switch(kind, kernel = ks[[which(sig == cv$curve$sigma[j])]], kind)
    f <- timed(tryCatch(suppressWarnings(kmaha(xs, ytr, kernel = kern, seed = seed)),
                        error = function(err) NULL))
    cand_acc[j] <- if (is.null(f$v)) NA else acc_of(f$v, xt, yte); cand_sec[j] <- f$s
  }
  for (j in seq_along(cand_acc)) {
    m <- switch(cv$curve$kind[j], kernel = sprintf("cand_rbf%g", cv$curve$sigma[j]),
                paste0("cand_", cv$curve$kind[j]))
    add(m, cand_acc[j], cand_sec[j])
  }
  res <- do.call(rbind, rows)
  cvk <- cv[c("curve", "accuracy", "correct", "best", "reason", "folds", "strategy", "n_fits", "k", "errors", "warnings")]
  saveRDS(list(res = res, cv = cvk, cand_acc = cand_acc, auto_warn = auto_warn,
               stamp = stamp, train = sp$train, test = sp$test, load = readLines("/proc/loadavg")), file)
  cat(sprintf("%s r=%d auto=%.3f (%s, %.1fs) eu=%.3f nca=%.3f best-cand=%.3f cand-secs=%.1f load=%s\n",
              s, r, res$acc[1], res$chosen_kind[1], res$secs[1], res$acc[2], res$acc[3],
              max(cand_acc, na.rm = TRUE), sum(cand_sec), readLines("/proc/loadavg")))
}
