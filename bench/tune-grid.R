# tidymodels' tune_grid() of the kmaha engine at its defaults against the
# kknn engine of nearest_neighbor() and ranger's rand_forest(), on the same
# folds of several data sets: CPU seconds of each tune_grid() and the best
# cross-validated accuracy it found.  Then what kmaha's loop spends its
# time on: the same fits made directly (kmaha() on each fold's analysis
# rows), split into the kernel choice (score_candidates(), the cross-
# validation inside every fit) and the fit of the chosen pipeline, and
# tune's own overhead (the rest).
#
#   Rscript bench/tune-grid.R [out.csv] [rows]
#
# Every model is tuned over three values of its main parameter, 5-fold CV
# stratified by class (the same folds for all): kmaha and kknn over
# neighbors = 1, 5, 10 (kknn with its default kernel-weighted vote), ranger
# over min_n = 2, 10, 20 (500 trees).  kmaha at its defaults: set_engine()
# with seed = 1 only; also kmaha with kernel = "linear" (no kernel choice),
# for the cost of the choice.  One thread everywhere; at most `rows` rows
# per set (default 500, stratified).  Writes one row per set and model to
# out.csv (default bench/results/tune_grid.csv) and prints the ratios.
suppressPackageStartupMessages({
  library(kmaha); library(parsnip); library(workflows); library(tune)
  library(mlbench)
})
args <- commandArgs(TRUE)
out <- if (length(args) >= 1) args[1] else "bench/results/tune_grid.csv"
max_rows <- if (length(args) >= 2) as.integer(args[2]) else 500L
options(kmaha.num_threads = 1)
Sys.setenv(OMP_NUM_THREADS = "1")

sets <- list(
  waveform = function() { set.seed(42); d <- mlbench.waveform(max_rows)
    data.frame(d$x, class = d$classes) },
  threenorm = function() { set.seed(43); d <- mlbench.threenorm(max_rows, d = 20)
    data.frame(d$x, class = d$classes) },
  glass = function() { data("Glass", package = "mlbench", envir = environment())
    d <- Glass; names(d)[names(d) == "Type"] <- "class"; d },
  sonar = function() { data("Sonar", package = "mlbench", envir = environment())
    d <- Sonar; names(d)[names(d) == "Class"] <- "class"; d },
  ionosphere = function() { data("Ionosphere", package = "mlbench", envir = environment())
    d <- Ionosphere[, -2]; d$V1 <- as.numeric(as.character(d$V1))
    names(d)[names(d) == "Class"] <- "class"; d },
  vehicle = function() { data("Vehicle", package = "mlbench", envir = environment())
    d <- Vehicle; names(d)[names(d) == "Class"] <- "class"; d }
)

# At most max_rows rows, stratified by class.
subsample <- function(d) {
  if (nrow(d) <= max_rows) return(d)
  set.seed(7)
  idx <- unlist(lapply(split(seq_len(nrow(d)), d$class), function(i) {
    i[sample.int(length(i), round(max_rows * length(i) / nrow(d)))]
  }))
  d[sort(idx), ]
}

cpu <- function() { t <- proc.time(); t[["user.self"]] + t[["sys.self"]] }
timed <- function(expr) { t0 <- cpu(); value <- expr; list(value = value, cpu = cpu() - t0) }

models <- list(
  # (first with the reuse of fold fits between calls turned off, as kmaha
  # 0.6.0 ran; then as the package runs by default, see "Reuse" in
  # ?score_candidates: the fits of one fold serve every value of neighbors)
  kmaha_noreuse = list(spec = nearest_neighbor(neighbors = tune()) |>
                         set_engine("kmaha", seed = 1) |> set_mode("classification"),
                       grid = data.frame(neighbors = c(1, 5, 10)), reuse = FALSE),
  kmaha = list(spec = nearest_neighbor(neighbors = tune()) |>
                 set_engine("kmaha", seed = 1) |> set_mode("classification"),
               grid = data.frame(neighbors = c(1, 5, 10))),
  kmaha_linear = list(spec = nearest_neighbor(neighbors = tune()) |>
                        set_engine("kmaha", kernel = "linear") |> set_mode("classification"),
                      grid = data.frame(neighbors = c(1, 5, 10))),
  kknn = list(spec = nearest_neighbor(neighbors = tune()) |>
                set_engine("kknn") |> set_mode("classification"),
              grid = data.frame(neighbors = c(1, 5, 10))),
  ranger = list(spec = rand_forest(trees = 500, min_n = tune()) |>
                  set_engine("ranger", num.threads = 1, seed = 1) |> set_mode("classification"),
                grid = data.frame(min_n = c(2, 10, 20)))
)

rows <- list()
for (set in names(sets)) {
  d <- subsample(sets[[set]]())
  d$class <- droplevels(factor(d$class))
  set.seed(1)
  folds <- rsample::vfold_cv(d, v = 5, strata = class)
  for (m in names(models)) {
    options(kmaha.reuse_fits = !identical(models[[m]]$reuse, FALSE))
    r <- timed(tune_grid(workflow(class ~ ., models[[m]]$spec), resamples = folds,
                         grid = models[[m]]$grid,
                         metrics = yardstick::metric_set(yardstick::accuracy),
                         control = control_grid(allow_par = FALSE)))
    best <- show_best(r$value, metric = "accuracy", n = 1)
    row <- data.frame(set = set, rows = nrow(d), inputs = ncol(d) - 1L,
                      classes = nlevels(d$class), model = m, tune_cpu_s = r$cpu,
                      best_accuracy = best$mean,
                      best_param = as.numeric(best[[names(models[[m]]$grid)[1]]]),
                      notes = nrow(collect_notes(r$value)),
                      fits_cpu_s = NA_real_, choice_cpu_s = NA_real_,
                      same_as_noreuse = NA)
    if (m == "kmaha") {
      # reuse changes the cost, not the results: the same fold metrics
      same <- identical(collect_metrics(r$value, summarize = FALSE)$.estimate,
                        collect_metrics(noreuse, summarize = FALSE)$.estimate)
      if (!same) stop("tune_grid() with reuse gave other fold accuracies than without")
      row$same_as_noreuse <- same
    }
    if (m == "kmaha_noreuse") noreuse <- r$value
    if (m %in% c("kmaha_noreuse", "kknn")) {
      # the fits tune made, made directly (without reuse): one per fold and
      # grid value (kknn: one per fold, its submodels predict the others)
      fits <- choice <- 0
      for (split in folds$splits) {
        tr <- rsample::analysis(split)
        x <- tr[, setdiff(names(tr), "class")]
        if (m == "kmaha_noreuse") {
          x <- stats::model.matrix(~ . - 1, x)
          for (k in models[[m]]$grid$neighbors) {
            s <- timed(score_candidates(x, tr$class, k = k, seed = 1))
            f <- timed(kmaha(x, tr$class, k = k, kernel = s$value, seed = 1))
            choice <- choice + s$cpu
            fits <- fits + s$cpu + f$cpu
          }
        } else {
          f <- timed(kknn::train.kknn(class ~ ., tr, ks = max(models[[m]]$grid$neighbors)))
          fits <- fits + f$cpu
        }
      }
      row$fits_cpu_s <- fits
      row$choice_cpu_s <- if (m == "kmaha_noreuse") choice else NA_real_
    }
    print(row, row.names = FALSE)
    rows[[length(rows) + 1L]] <- row
  }
}
res <- do.call(rbind, rows)
res$kmaha_version <- as.character(packageVersion("kmaha"))
utils::write.csv(res, out, row.names = FALSE)

# Summary: each model's tune_grid() CPU over kknn's on the same set, and
# where kmaha's time went.
wide <- reshape(res[, c("set", "model", "tune_cpu_s")], idvar = "set", timevar = "model",
                direction = "wide")
names(wide) <- sub("^tune_cpu_s\\.", "", names(wide))
ratio <- data.frame(set = wide$set, kmaha_over_kknn = wide$kmaha / wide$kknn,
                    noreuse_over_kknn = wide$kmaha_noreuse / wide$kknn,
                    kmaha_linear_over_kknn = wide$kmaha_linear / wide$kknn,
                    ranger_over_kknn = wide$ranger / wide$kknn)
print(ratio, digits = 3, row.names = FALSE)
km <- res[res$model == "kmaha_noreuse", ]
cat(sprintf("kmaha: kernel choice %.0f%% of the direct fits' CPU, direct fits %.0f%% of tune_grid()'s (median over the sets)\n",
            100 * stats::median(km$choice_cpu_s / km$fits_cpu_s),
            100 * stats::median(km$fits_cpu_s / km$tune_cpu_s)))
