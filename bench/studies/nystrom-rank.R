# Nystrom KPCA's default rank: how much test accuracy each rank rule costs
# against keeping every component (rank = m, the number of landmarks), for
# the KPCA trick with a user's landmark count.
#
# For each dataset, RBF bandwidth, landmark count m and split (2 splits),
# m training rows are drawn as landmarks and given to kmaha() as a matrix
# (learner = "dne" and "nca", kernel = rbf_kernel(sigma), scale = TRUE).
# The spectrum of the landmark span (kpca() with rank = m on the
# standardized training rows) gives the rank of every rule:
#   all        every component above `tol` (rank = m): the reference
#   share95    the leading components carrying 95% of the landmark-span
#              variance, at most 200 (kmaha 0.4.0's default)
#   share99, share999   the leading components carrying 99% and 99.9% of
#              that variance (no cap)
#   cap200     every component above `tol`, at most 200
#   all_perm   `all` again with the training rows in another order: the
#              same information, so its difference from `all` is the noise
#              of the learner's fit (NCA's optimum moves with rounding),
#              against which the rules' losses are to be read (not run on
#              Satellite and Letter, whose NCA fits are slow)
#   default    what kpca()/kmaha() do with rank = NULL in the installed
#              kmaha (its rank read from kpca(), and fitted with rank =
#              NULL unless a rule above has the same rank)
# and kmaha() is fitted once per distinct rank (rank = r), scored on the
# test rows.  NCA is fitted for all rules but share99 (it costs much more
# than DNE).
#
# Data: kernel-friendly synthetic sets (two thin concentric rings of radii
# 1 and 1.15 with noise sd 0.06, mlbench's spirals and ringnorm), the
# paper's datasets with enough rows for landmarks to matter (Satellite,
# Yeast, Pima, Balance, Breast cancer, Ionosphere; KMAHA_DATA_DIR or the
# package's sources), training sizes below, and Letter (16 000 training
# rows, 1000 landmarks, NCA, one split: the case behind 0.4.0's rule).
#
# Results are appended to bench/studies/results/nystrom_rank.csv as they come (a
# re-run computes only the rules missing there, reusing a fit of the same
# rank; delete the `default` rows to measure a changed default, or the
# file to start over);
# the summary (per dataset, sigma, m and learner: the accuracy of each rule
# minus that of `all`, mean over the splits) is printed and written to
# bench/studies/results/nystrom_rank.txt.
#
# The seconds are those of each fit where it ran, on a 2-core machine
# shared with other jobs (load 2 to 10): indicative only.
#
# Usage: Rscript bench/studies/nystrom-rank.R   (about three hours on two loaded cores)
#   NYSTROM_SETS=rings,spirals  to run some datasets only
suppressPackageStartupMessages({ library(kmaha); library(mlbench) })
`%||%` <- function(a, b) if (is.null(a)) b else a

out_csv <- "bench/studies/results/nystrom_rank.csv"
out_txt <- "bench/studies/results/nystrom_rank.txt"

rings <- function(n, sd = 0.06) {
  t <- runif(n, 0, 2 * pi)
  cls <- rep(1:2, length.out = n)
  r <- c(1, 1.15)[cls]
  list(x = cbind(r * cos(t), r * sin(t)) + matrix(rnorm(2 * n, sd = sd), n, 2),
       y = factor(c("inner", "outer")[cls]))
}

paper_set <- function(name) {
  d <- kmaha_data(name)
  x <- as.matrix(d[, setdiff(names(d), "class")])
  list(x = x, y = droplevels(d$class))
}

# Each loader: list(x, y) of a pool; n_train rows are drawn per split, the
# test rows are the rest (at most 3000).
sets <- list(
  rings = list(load = function() { set.seed(11); rings(4000) }, n_train = 1000,
               m = c(50, 100, 200, 500)),
  spirals = list(load = function() { set.seed(12); d <- mlbench.spirals(4000, cycles = 1, sd = 0.05)
                   list(x = d$x, y = d$classes) }, n_train = 1000, m = c(50, 100, 200, 500)),
  ringnorm = list(load = function() { set.seed(13); d <- mlbench.ringnorm(4000, d = 20)
                    list(x = d$x, y = d$classes) }, n_train = 1000, m = c(50, 100, 200, 500)),
  satellite = list(load = function() paper_set("satellite"), n_train = 2000,
                   m = c(100, 200, 500, 1000)),
  yeast = list(load = function() paper_set("yeast"), n_train = 1000, m = c(50, 100, 200, 500)),
  pima = list(load = function() paper_set("pima"), n_train = 500, m = c(50, 100, 200)),
  balance = list(load = function() paper_set("balance"), n_train = 400, m = c(50, 100, 200)),
  breast_cancer = list(load = function() paper_set("breast_cancer"), n_train = 450,
                       m = c(50, 100, 200)),
  ionosphere = list(load = function() paper_set("ionosphere"), n_train = 250, m = c(50, 100, 200)),
  # large: Letter (mlbench), as in the UCI split sizes; NCA (mini-batch at
  # this size) on one split only
  letter = list(load = function() { e <- new.env(); data(LetterRecognition, package = "mlbench", envir = e)
                  d <- e$LetterRecognition; list(x = as.matrix(d[, -1]), y = d$lettr) },
                n_train = 16000, m = 1000, learners = "nca", splits = 1)
)
sigmas <- c(0.25, 1)
noise_skip <- c("satellite", "letter")
learners <- c("dne", "nca")
splits <- 1:2
only <- Sys.getenv("NYSTROM_SETS")
if (nzchar(only)) sets <- sets[strsplit(only, ",", fixed = TRUE)[[1]]]

# The rank of each rule from the landmark-span spectrum (eigenvalues of all
# components above tol, decreasing; trace = their total).
rule_ranks <- function(ev, trace) {
  share_rank <- function(s, cap = length(ev)) {
    min(cap, length(ev), which(cumsum(ev) / trace >= s - 1e-12)[1], na.rm = TRUE)
  }
  c(all = length(ev), share95 = share_rank(0.95, 200L), share99 = share_rank(0.99),
    share999 = share_rank(0.999), cap200 = min(200L, length(ev)))
}

done <- if (file.exists(out_csv)) utils::read.csv(out_csv, stringsAsFactors = FALSE) else NULL
key_of <- function(d) paste(d$dataset, d$sigma, d$m, d$split, d$learner)

for (nm in names(sets)) {
  st <- sets[[nm]]
  pool <- tryCatch(st$load(), error = function(e) {
    message("skipping ", nm, ": ", conditionMessage(e)); NULL })
  if (is.null(pool)) next
  for (s in st$splits %||% splits) {
    set.seed(1000 + s)
    tr <- sample(nrow(pool$x), st$n_train)
    te <- setdiff(seq_len(nrow(pool$x)), tr)
    if (length(te) > 3000) te <- sort(sample(te, 3000))
    xtr <- pool$x[tr, , drop = FALSE]
    keep <- apply(xtr, 2, stats::sd) > 0
    xtr <- xtr[, keep, drop = FALSE]
    xte <- pool$x[te, keep, drop = FALSE]
    ytr <- droplevels(pool$y[tr])
    yte <- pool$y[te]
    xs <- scale(xtr)
    for (m in st$m) {
      set.seed(2000 + s + m)
      lm_idx <- sort(sample(nrow(xtr), m))
      for (sigma in sigmas) {
        ker <- rbf_kernel(sigma)
        sp <- kpca(xs, ker, landmarks = xs[lm_idx, , drop = FALSE], rank = m)
        ranks <- rule_ranks(sp$eigenvalues, sp$trace)
        default_rank <- ncol(kpca(xs, ker, landmarks = xs[lm_idx, , drop = FALSE])$coords)
        for (lr in st$learners %||% learners) {
          setting <- paste(nm, sigma, m, s, lr)
          rules <- c(if (lr == "nca") c("all", "share95", "share999", "cap200") else names(ranks),
                     "default", if (!nm %in% noise_skip) "all_perm")
          prev <- if (is.null(done)) done else done[key_of(done) == setting, ]
          todo <- setdiff(rules, prev$rule)
          if (!length(todo)) next
          res <- list()
          for (rule in todo) {
            # the default is fitted with rank = NULL, unless a fit of this
            # setting already has its rank
            r <- if (rule == "default") default_rank else
              if (rule == "all_perm") ranks[["all"]] else ranks[[rule]]
            have <- which(prev$components == r & prev$rule != "all_perm")
            if (length(have) && rule != "all_perm") {
              fi <- list(acc = prev$accuracy[have[1]], comps = r, seconds = prev$seconds[have[1]])
            } else {
              t0 <- proc.time()[["elapsed"]]
              # all_perm: `all` on the training rows in another order, the
              # same information (the noise floor of the learner's fit)
              o <- if (rule == "all_perm") {
                set.seed(3000 + s + m)
                sample(nrow(xtr))
              } else seq_len(nrow(xtr))
              f <- suppressWarnings(kmaha(xtr[o, , drop = FALSE], ytr[o], learner = lr,
                                          kernel = ker,
                                          landmarks = xtr[lm_idx, , drop = FALSE],
                                          rank = if (rule == "default") NULL else r))
              fi <- list(acc = mean(predict(f, xte) == yte), comps = ncol(f$L),
                         seconds = proc.time()[["elapsed"]] - t0)
            }
            res[[rule]] <- data.frame(
              dataset = nm, sigma = sigma, m = m, split = s, learner = lr, rule = rule,
              components = fi$comps, accuracy = fi$acc, seconds = round(fi$seconds, 2),
              n_train = nrow(xtr), n_test = nrow(xte), stringsAsFactors = FALSE)
            prev <- rbind(prev, res[[rule]])
          }
          res <- do.call(rbind, res)
          cat(sprintf("%s sigma=%g m=%d split=%d %s: %s\n", nm, sigma, m, s, lr,
                      paste(sprintf("%s %d %.4f", res$rule, res$components, res$accuracy),
                            collapse = " | ")))
          utils::write.table(res, out_csv, sep = ",", row.names = FALSE,
                             col.names = !file.exists(out_csv), append = file.exists(out_csv))
          done <- rbind(done, res)
        }
      }
    }
  }
}

# Summary: per dataset, sigma, m and learner, each rule's accuracy minus
# that of `all`, averaged over the splits; and the worst case per rule.
d <- utils::read.csv(out_csv, stringsAsFactors = FALSE)
ref <- d[d$rule == "all", ]
d$loss <- ref$accuracy[match(key_of(d), key_of(ref))] - d$accuracy
agg <- aggregate(cbind(loss, components, seconds) ~ dataset + sigma + m + learner + rule, d, mean)
wide <- reshape(agg[, c("dataset", "sigma", "m", "learner", "rule", "loss")],
                idvar = c("dataset", "sigma", "m", "learner"), timevar = "rule",
                direction = "wide")
names(wide) <- sub("^loss\\.", "", names(wide))
wide <- wide[order(wide$learner, wide$dataset, wide$sigma, wide$m), ]
comps <- reshape(agg[, c("dataset", "sigma", "m", "learner", "rule", "components")],
                 idvar = c("dataset", "sigma", "m", "learner"), timevar = "rule",
                 direction = "wide")
# Per rule and learner, over the settings (mean over splits in each): the
# mean loss, the largest, how many settings lose more than 0.01, the mean
# absolute difference from `all` and the mean seconds per fit; then the
# same on the settings that have a noise run (all_perm), beside it.
rule_summary <- function(a) {
  f <- function(fun, name, what = "loss") {
    r <- aggregate(stats::as.formula(paste(what, "~ rule + learner")), a, fun)
    names(r)[3] <- name
    r
  }
  out <- Reduce(function(x, y) merge(x, y, by = c("rule", "learner")), list(
    f(mean, "mean_loss"), f(max, "max_loss"), f(function(l) sum(l > 0.01), "over_0.01"),
    f(function(l) mean(abs(l)), "mean_abs_diff"), f(length, "settings"),
    f(mean, "seconds", "seconds")))
  out[order(out$learner, out$rule), ]
}
summ <- rule_summary(agg)
noisy <- unique(agg[agg$rule == "all_perm", c("dataset", "sigma", "m", "learner")])
agg_n <- merge(agg, noisy)
summ_n <- rule_summary(agg_n)
sink_lines <- c(
  sprintf("kmaha %s; %s; load %s", packageVersion("kmaha"), format(Sys.time(), "%Y-%m-%d"),
          paste(readLines("/proc/loadavg"), collapse = " ")),
  "Seconds: per fit, on a shared 2-core machine (load 2-10 during the runs): indicative only.",
  "Accuracy lost against keeping every component (all), mean over the splits;",
  "positive = the rule is worse. Columns: the rules (see bench/studies/nystrom-rank.R).",
  utils::capture.output(print(wide, row.names = FALSE, digits = 3)),
  "", "Mean components kept:",
  utils::capture.output(print(comps[order(comps$learner, comps$dataset, comps$sigma, comps$m), ],
                              row.names = FALSE, digits = 4)),
  "", "Per rule and learner, over all settings (each the mean over its splits):",
  utils::capture.output(print(summ, row.names = FALSE, digits = 3)),
  "", "The same on the settings with a noise run (all_perm: `all` refitted on the rows in",
  "another order; its differences from `all` are the learner's own noise):",
  utils::capture.output(print(summ_n, row.names = FALSE, digits = 3)))
writeLines(sink_lines, out_txt)
cat(sink_lines, sep = "\n")
