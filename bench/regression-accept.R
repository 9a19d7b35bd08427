# The regression default kmaha(x, y) (numeric y: MLKR pipelines chosen by
# cross-validated RMSE) on 12 regression sets nobody tuned it on, 3 random
# splits each (75% training, 25% test), against, on the same rows:
#   - Euclidean k-NN on the standardized inputs with k chosen the same way
#     (the default's own cross-validation of 1, 3, 5, 7, 9, 12, 15, 20
#     neighbours with 1 / distance weights: its Euclidean candidate's k);
#   - kknn::kknn() at its defaults (k = 7, "optimal" kernel, scaled inputs);
#   - ranger::ranger() with 500 trees (its defaults otherwise);
#   - linear mlkr() at its defaults (k = 10, distance weights);
# and the CPU time of the classification default kmaha(x, cut(y)) on the
# same training rows (y cut at its quartiles into 4 classes).
#
#   Rscript bench/regression-accept.R
#
# Needs mlbench, modeldata, MASS, ranger and kknn.  Writes
# bench/results/regression_accept.csv (one row per set, split and method)
# and bench/results/regression-accept.md.  At most 600 rows of a set are
# used (drawn once per set, seed 1), so that the run takes minutes.

suppressPackageStartupMessages({
  library(kmaha)
  library(ranger)
  library(kknn)
})

max_rows <- 600L
`%||%` <- function(a, b) if (is.null(a)) b else a

# One set: a numeric matrix x (factors as indicator columns) and numeric y,
# complete rows only.
as_set <- function(d, target) {
  d <- d[stats::complete.cases(d), , drop = FALSE]
  y <- as.numeric(d[[target]])
  d[[target]] <- NULL
  for (j in names(d)) if (is.character(d[[j]]) || is.logical(d[[j]])) d[[j]] <- factor(d[[j]])
  x <- stats::model.matrix(~ ., d)[, -1L, drop = FALSE]
  # constant columns carry nothing (and some learners refuse them)
  x <- x[, apply(x, 2L, function(v) length(unique(v)) > 1L), drop = FALSE]
  colnames(x) <- make.names(colnames(x), unique = TRUE)
  if (nrow(x) > max_rows) {
    set.seed(1)
    keep <- sort(sample.int(nrow(x), max_rows))
    x <- x[keep, , drop = FALSE]
    y <- y[keep]
  }
  list(x = x, y = y)
}

md <- function(name, pkg) {
  e <- new.env()
  utils::data(list = name, package = pkg, envir = e)
  as.data.frame(get(name, envir = e))
}

sets <- function() {
  bio <- md("biomass", "modeldata")
  meats <- md("meats", "modeldata")
  pen <- md("penguins", "modeldata")
  servo <- md("Servo", "mlbench")
  oz <- md("Ozone", "mlbench")
  for (j in c("V1", "V2", "V3")) oz[[j]] <- as.numeric(oz[[j]])
  cpus <- md("cpus", "MASS")
  bwt <- md("birthwt", "MASS")
  sac <- md("Sacramento", "modeldata")
  list(
    concrete = as_set(md("concrete", "modeldata"), "compressive_strength"),
    biomass = as_set(bio[, c("carbon", "hydrogen", "oxygen", "nitrogen", "sulfur", "HHV")], "HHV"),
    meats_protein = as_set(meats[, c(paste0("x_", sprintf("%03d", 1:100)), "protein")], "protein"),
    car_prices = as_set(md("car_prices", "modeldata"), "Price"),
    penguins = as_set(pen, "body_mass_g"),
    servo = as_set(servo, "Class"),
    ozone = as_set(oz, "V4"),
    cpus = as_set(data.frame(cpus[, c("syct", "mmin", "mmax", "cach", "chmin", "chmax")],
                             perf = log(cpus$perf)), "perf"),
    birthwt = as_set(bwt[, setdiff(names(bwt), "low")], "bwt"),
    quakes = as_set(md("quakes", "datasets"), "mag"),
    airquality = as_set(md("airquality", "datasets"), "Ozone"),
    sacramento = as_set(sac[, c("beds", "baths", "sqft", "type", "latitude", "longitude", "price")],
                        "price"))
}

cpu <- function(expr) {
  t0 <- proc.time()
  value <- force(expr)
  t <- proc.time() - t0
  list(value = value, cpu = unname(t[["user.self"]] + t[["sys.self"]]))
}

rmse <- function(p, y) sqrt(mean((p - y)^2))

# Distance-weighted k-NN regression on inputs standardized by the training
# rows (the weights of kmaha's regression: 1 / distance, all weight to
# neighbours at distance 0).
knn_euclidean <- function(xtr, ytr, xte, k) {
  ctr <- colMeans(xtr)
  sds <- apply(xtr, 2L, stats::sd)
  sds[sds == 0] <- 1
  a <- scale(xtr, ctr, sds)
  b <- scale(xte, ctr, sds)
  d2 <- outer(rowSums(b^2), rowSums(a^2), "+") - 2 * b %*% t(a)
  d2[d2 < 0] <- 0
  vapply(seq_len(nrow(b)), function(i) {
    nb <- order(d2[i, ])[seq_len(k)]
    d <- sqrt(d2[i, nb])
    w <- if (any(d == 0)) as.numeric(d == 0) else 1 / d
    sum(w * ytr[nb]) / sum(w)
  }, 0)
}

# Split `sp` of a set: 75% of the rows for training, drawn with seed
# 100 * sp + 7 (also read by bench/studies/regression-kgrid.R).
accept_split <- function(s, sp) {
  n <- nrow(s$x)
  set.seed(100 * sp + 7)
  tr <- sort(sample.int(n, round(0.75 * n)))
  list(xtr = s$x[tr, , drop = FALSE], xte = s$x[-tr, , drop = FALSE],
       ytr = s$y[tr], yte = s$y[-tr])
}

splits <- 3L
rows <- list()
all_sets <- sets()
for (nm in names(all_sets)) {
  s <- all_sets[[nm]]
  n <- nrow(s$x)
  for (sp in seq_len(splits)) {
    d <- accept_split(s, sp)
    xtr <- d$xtr
    xte <- d$xte
    ytr <- d$ytr
    yte <- d$yte
    add <- function(method, r, extra = list()) {
      rows[[length(rows) + 1L]] <<- data.frame(
        set = nm, n = n, p = ncol(s$x), split = sp, method = method,
        rmse = if (is.null(r$value)) NA_real_ else rmse(r$value, yte), cpu = r$cpu,
        chosen = extra$chosen %||% NA_character_, k = extra$k %||% NA_integer_,
        stringsAsFactors = FALSE)
    }
    fit <- NULL
    r <- cpu({
      fit <- kmaha(xtr, ytr, seed = sp)
      predict(fit, xte)
    })
    cv <- fit$kernel_choice$cv
    add("kmaha default", r, list(chosen = cv$curve$label[cv$best], k = fit$k))
    eu <- which(cv$curve$kind == "euclidean")
    k_eu <- cv$curve$k[eu]
    add("Euclidean k-NN (k by CV)", cpu(knn_euclidean(xtr, ytr, xte, k_eu)), list(k = k_eu))
    dtr <- data.frame(xtr, .y = ytr)
    dte <- data.frame(xte, .y = yte)
    add("kknn defaults", cpu(kknn::kknn(.y ~ ., dtr, dte)$fitted.values), list(k = 7L))
    add("ranger 500 trees",
        cpu(predict(ranger::ranger(x = xtr, y = ytr, num.trees = 500, seed = sp),
                    data = xte)$predictions))
    add("mlkr() linear", cpu(suppressWarnings(predict(mlkr(xtr, ytr), xte))), list(k = 10L))
    ycl <- cut(ytr, unique(stats::quantile(ytr, 0:4 / 4)), include.lowest = TRUE)
    rc <- cpu(kmaha(xtr, ycl, seed = sp))
    rc$value <- NULL
    add("classification default (CPU only)", rc)
    cat(sprintf("%-14s split %d: default %.4g (%s), Euclidean %.4g, kknn %.4g, ranger %.4g, mlkr %.4g; CPU %.1fs vs classification %.1fs\n",
                nm, sp, rows[[length(rows) - 5L]]$rmse, cv$curve$label[cv$best],
                rows[[length(rows) - 4L]]$rmse, rows[[length(rows) - 3L]]$rmse,
                rows[[length(rows) - 2L]]$rmse, rows[[length(rows) - 1L]]$rmse,
                rows[[length(rows) - 5L]]$cpu, rc$cpu))
  }
}
res <- do.call(rbind, rows)
dir.create("bench/results", showWarnings = FALSE)
utils::write.csv(res, "bench/results/regression_accept.csv", row.names = FALSE)

# The table: per set, the mean test RMSE over the splits of each method,
# the default's ratios, and its CPU against the classification default.
m <- function(set, method, col = "rmse") mean(res[res$set == set & res$method == method, col])
tab <- do.call(rbind, lapply(names(all_sets), function(nm) {
  data.frame(set = nm, n = res$n[res$set == nm][1], p = res$p[res$set == nm][1],
             default = m(nm, "kmaha default"), euclidean = m(nm, "Euclidean k-NN (k by CV)"),
             kknn = m(nm, "kknn defaults"), ranger = m(nm, "ranger 500 trees"),
             mlkr = m(nm, "mlkr() linear"),
             cpu_default = m(nm, "kmaha default", "cpu"),
             cpu_classif = m(nm, "classification default (CPU only)", "cpu"),
             chosen = paste(unique(res$chosen[res$set == nm & res$method == "kmaha default"]),
                            collapse = "; "),
             stringsAsFactors = FALSE)
}))
tab$vs_euclidean <- tab$default / tab$euclidean
tab$vs_kknn <- tab$default / tab$kknn
tab$vs_ranger <- tab$default / tab$ranger
# (the default's Euclidean candidate and the script's k-NN agree to the
# last bits, not always exactly)
above <- function(r) r > 1 + 1e-9
fmt <- function(v, d = 4) formatC(v, digits = d, format = "g")
lines <- c(
  "# The regression default against Euclidean k-NN, kknn, ranger and linear MLKR",
  "",
  sprintf("`bench/regression-accept.R`, run %s on the project machine (2 cores, shared). %d sets, %d random splits each (75%% training, 25%% test), at most %d rows per set. Test RMSE is the mean over the splits; ratios are the default's mean RMSE over the other method's (below 1: the default is better). CPU is user + system seconds of the fit and prediction (kmaha with its default 2 threads).",
          format(Sys.Date()), length(all_sets), splits, max_rows),
  "",
  "| set | n | p | default | Euclidean k-NN | kknn | ranger | mlkr() | default / Euclidean | default / kknn | default / ranger | CPU default (s) | CPU classification default (s) | chosen |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  sprintf("| %s | %d | %d | %s | %s | %s | %s | %s | %.3f | %.3f | %.3f | %.1f | %.1f | %s |",
          tab$set, tab$n, tab$p, fmt(tab$default), fmt(tab$euclidean), fmt(tab$kknn),
          fmt(tab$ranger), fmt(tab$mlkr), tab$vs_euclidean, tab$vs_kknn, tab$vs_ranger,
          tab$cpu_default, tab$cpu_classif, tab$chosen),
  "",
  sprintf("- Default RMSE <= Euclidean k-NN's on %d of %d sets (per split: %d of %d); <= kknn's on %d of %d sets.",
          sum(!above(tab$vs_euclidean)), nrow(tab),
          sum(!above(res$rmse[res$method == "kmaha default"] /
                       res$rmse[res$method == "Euclidean k-NN (k by CV)"])),
          sum(res$method == "kmaha default"),
          sum(!above(tab$vs_kknn)), nrow(tab)),
  sprintf("- Sets where the default's RMSE is above Euclidean k-NN's: %s; above kknn's: %s.",
          paste(sprintf("%s (%+.1f%%)", tab$set, 100 * (tab$vs_euclidean - 1))[above(tab$vs_euclidean)],
                collapse = ", "),
          paste(sprintf("%s (%+.1f%%)", tab$set, 100 * (tab$vs_kknn - 1))[above(tab$vs_kknn)],
                collapse = ", ")),
  sprintf("- Mean over the sets of default / ranger: %.3f (geometric mean %.3f); default / Euclidean: %.3f; default / kknn: %.3f.",
          mean(tab$vs_ranger), exp(mean(log(tab$vs_ranger))), mean(tab$vs_euclidean),
          mean(tab$vs_kknn)),
  sprintf("- CPU: the regression default took %.1f s in all, the classification default on the same rows %.1f s (ratio %.2f; per set %.2f-%.2f).",
          sum(tab$cpu_default), sum(tab$cpu_classif), sum(tab$cpu_default) / sum(tab$cpu_classif),
          min(tab$cpu_default / tab$cpu_classif), max(tab$cpu_default / tab$cpu_classif)))
writeLines(lines, "bench/results/regression-accept.md")
cat(lines, sep = "\n")
