# Step 2 of 2 of the kernel-choice investigation (issue 18): evaluates
# selection rules offline on the per-point fold correctness recorded by
# data-raw/investigate-cv.R (no fitting here).
#
# A *candidate* is a fitted pipeline (Euclidean 1-NN, the linear learner, one
# of the 21 scaled RBF kernels, the aligned or the unweighted kernel) in one
# variant (KPCA rank, DNE output dimension).  A *rule* is
#   a candidate set   "cv"   the 21 kernels (the paper's CV column),
#                     "auto" linear + 21 kernels + aligned + unweighted,
#                     "auto_e" auto + Euclidean 1-NN,
#                     and for the variants: kernels x {full, r99},
#                     kernels with a DNE dimension rule, ...;
#   a score source    cv5 (the shipped folds), cv10, rep (cv5 + two more
#                     5-fold draws, pooled), each scored on the held-out
#                     points ("held") or by leave-one-out on the fold fits
#                     ("loo"; see investigate-cv.R);
#   a selection       first   argmax of the mean fold accuracy, first on
#                             ties (today's rule),
#                     middle  argmax, ties to the middle of the longest run
#                             of tied neighbouring candidates,
#                     smooth  kernel scores smoothed over neighbouring
#                             sigmas with weights 1-2-1 (the end points
#                             2-1, renormalised) before argmax (middle ties),
#                     1se_*   the simplest candidate whose (raw or smoothed)
#                             score is within z = 1 standard error of the
#                             best: SE "paired" = sd of the per-point
#                             differences to the best / sqrt(points), or
#                             "fold" = sd of the best's fold accuracies /
#                             sqrt(folds); "simplest" by order "sigma"
#                             (Euclidean < linear < kernels from the largest
#                             sigma to the smallest < aligned < unweighted) or
#                             "effdim" (fewest KPCA components carrying 99%
#                             of the variance on the training split; the
#                             linear learner counts its input columns,
#                             Euclidean 0);
#   halving           "fast": every candidate on the first fold, then only
#                     those kept by today's cv_keep() (within one paired SE
#                     of that fold's best), "fast2": the same with two SE
#                     (cv_keep(z = 2)), "fastA": z = 1 when the first fold
#                     holds at least 40 points, else z = 2, or "exh": every
#                     candidate on every fold.
# For each rule and unit (dataset, split, learner): the candidate chosen, its
# test accuracy (fitted on the whole training split), the learner fits the
# rule needs (the final fit excluded) and the recorded seconds of those
# fits.
#
# Writes inst/extdata/cv_investigation.csv (selected rules per dataset x
# learner, with the oracle, best-fixed and fixed-column rows) and prints the
# summaries quoted in bench/studies/auto.md; the full per-rule summary goes
# to bench/studies/results/cv_rules_summary.csv.
# Usage: Rscript data-raw/analyse-cv.R   (KMAHA_CVINV_CACHE as in step 1)
suppressPackageStartupMessages(library(kmaha))

# kmaha 0.4.0's successive halving after the first fold (cv_keep(), since
# replaced by the screen of score_candidates()), kept here to replay the
# rules the investigation compared: a candidate is kept unless the best one
# beats it on that fold by more than z paired standard errors,
# w_best - w_j > z * sqrt(w_best + w_j + 1); failed ones (NULL) are dropped
# unless every one failed.
cv_keep <- function(correct, z = 1) {
  ok <- !vapply(correct, is.null, NA)
  if (!any(ok)) return(rep(TRUE, length(correct)))
  score <- vapply(correct, function(cc) if (is.null(cc)) -1 else sum(cc), 0)
  b <- correct[[which.max(score)]]
  vapply(seq_along(correct), function(j) {
    cj <- correct[[j]]
    if (is.null(cj)) return(FALSE)
    wb <- sum(b & !cj)
    wj <- sum(cj & !b)
    wb - wj <= z * sqrt(wb + wj + 1)
  }, NA)
}
`%||%` <- function(a, b) if (is.null(a)) b else a
cache_dir <- Sys.getenv("KMAHA_CVINV_CACHE", file.path("data-raw", "cache", "cv_investigation"))
out_csv <- Sys.getenv("KMAHA_CVINV_OUT", file.path("inst", "extdata", "cv_investigation.csv"))
out_all <- Sys.getenv("KMAHA_CVINV_SUMMARY", file.path("bench", "studies", "results", "cv_rules_summary.csv"))
options(width = 200)

files <- list.files(cache_dir, pattern = "\\.rds$", full.names = TRUE)
U <- lapply(files, readRDS)
cat(sprintf("%d units read from %s\n", length(U), cache_dir))
sig <- paper_sigmas()
cand_names <- dimnames(U[[1]]$test)[[1]]
KER <- 3:23   # the RBF kernels in cand_names, sigma ascending
IDX <- c(euclidean = 1L, linear = 2L, aligned = 24L, unweighted = 25L)

# ---------------------------------------------------------------------------
# Candidate lists: data frames (ci = row of cand_names, var = variant).

default_var <- function(u) dimnames(u$test)[[2]][1]
cl_make <- function(ci, var) data.frame(ci = ci, var = var, stringsAsFactors = FALSE)
cand_set <- function(u, set) {
  v0 <- default_var(u)
  vars <- dimnames(u$test)[[2]]
  switch(set,
    cv = cl_make(KER, v0),
    auto = cl_make(c(IDX[["linear"]], KER, IDX[["aligned"]], IDX[["unweighted"]]), v0),
    auto_e = cl_make(c(IDX[["euclidean"]], IDX[["linear"]], KER, IDX[["aligned"]],
                       IDX[["unweighted"]]), v0),
    {
      # "cv@<variant>": the kernels in one variant; "cv@a|b": both variants
      # (grid order within each variant); "auto@..." likewise with linear,
      # aligned, unweighted.
      what <- sub("@.*$", "", set)
      vv <- strsplit(sub("^.*@", "", set), "|", fixed = TRUE)[[1]]
      if (!all(vv %in% vars)) return(NULL)
      ci <- if (what == "cv") KER else c(IDX[["linear"]], KER, IDX[["aligned"]], IDX[["unweighted"]])
      do.call(rbind, lapply(vv, function(v) cl_make(ci, v)))
    })
}

# ---------------------------------------------------------------------------
# Scores.

# Correctness (candidates x points) of a source; NULL when not recorded.
corr_mat <- function(u, cl, scheme, type) {
  A <- u[[type]][[scheme]]
  if (is.null(A)) return(NULL)
  M <- matrix(NA, nrow(cl), dim(A)[3])
  for (i in seq_len(nrow(cl))) M[i, ] <- A[cl$ci[i], cl$var[i], ]
  M
}
fold_acc <- function(M, fid) {
  vapply(seq_len(max(fid)), function(f) rowMeans(M[, fid == f, drop = FALSE]),
         numeric(nrow(M)))
}
source_schemes <- function(src) switch(src, cv5 = "cv5", cv10 = "cv10",
                                       rep = c("cv5", "rep2", "rep3"))

# The learner fit behind a candidate: DNE dimension variants share one fit
# per KPCA rank; Euclidean needs none.
fit_key <- function(u, cl) {
  key <- paste(cl$ci, sub(":.*$", "", cl$var))
  key[cl$ci == IDX[["euclidean"]]] <- NA
  key
}

# Longest run of consecutive TRUE in `tied` (candidate positions); its
# middle (lower middle for even lengths).
middle_of_ties <- function(tied) {
  w <- which(tied)
  if (length(w) == 1L) return(w)
  runs <- split(w, cumsum(c(1L, diff(w) != 1L)))
  r <- runs[[which.max(lengths(runs))]]
  r[(length(r) + 1L) %/% 2L]
}

# Smoothing over the sigma grid: candidates that are kernels with the same
# variant and neighbouring sigma; others keep their score.
smooth_scores <- function(cl, mu) {
  out <- mu
  for (i in which(cl$ci %in% KER)) {
    nb <- which(cl$var == cl$var[i] & abs(cl$ci - cl$ci[i]) == 1L & cl$ci %in% KER & !is.na(mu))
    w <- c(2, rep(1, length(nb)))
    out[i] <- sum(w * c(mu[i], mu[nb])) / sum(w)
  }
  out
}

simplicity <- function(u, cl, order) {
  if (order == "sigma") {
    base <- c(0, 1, 24 - seq_along(KER), 30, 31)[cl$ci]   # large sigma first
  } else {
    r <- u$ranks[, "r99"]
    r[IDX[["linear"]]] <- u$meta$D
    r[IDX[["euclidean"]]] <- 0
    base <- r[cl$ci]
  }
  base
}

# Applies every selection x halving of a rule family (set, source,
# scoring) to one unit: the scores are computed once.  Returns a list named
# "<select>/<halving>" of (chosen row, test accuracy, fits, seconds).
apply_family <- function(u, fam, selects, halvings) {
  cl <- cand_set(u, fam$set)
  if (is.null(cl)) return(NULL)
  sch <- source_schemes(fam$src)
  if (!all(sch %in% names(u[[fam$type]]))) return(NULL)
  Ms <- lapply(sch, function(s) corr_mat(u, cl, s, fam$type))
  if (any(vapply(Ms, function(M) all(is.na(M)), NA))) return(NULL)
  fids <- lapply(sch, function(s) u$folds[[s]])
  F <- do.call(cbind, mapply(fold_acc, Ms, fids, SIMPLIFY = FALSE))
  P <- do.call(cbind, Ms)
  storage.mode(P) <- "double"
  nf <- ncol(F)
  avail <- rowSums(is.na(F)) == 0L
  if (!any(avail)) avail <- rowSums(!is.na(F)) > 0L
  f1 <- fids[[1]] == 1L
  key <- fit_key(u, cl)
  first <- !duplicated(key) & !is.na(key)
  simp <- list(sigma = simplicity(u, cl, "sigma"), effdim = simplicity(u, cl, "effdim"))
  out <- list()
  for (h in halvings) {
    keep <- if (h != "exh") {
      cv_keep(lapply(seq_len(nrow(cl)), function(i) {
        v <- Ms[[1]][i, f1]
        if (anyNA(v)) NULL else v
      }), z = switch(h, fast2 = 2, fastA = if (sum(f1) >= 40L) 1 else 2, 1))
    } else rep(TRUE, nrow(cl))
    mu <- ifelse(keep, rowMeans(F, na.rm = TRUE), F[, 1])   # dropped: first fold only
    elig <- keep & avail
    mu_s <- smooth_scores(cl, mu)
    runs <- if (h != "exh") ifelse(keep, nf, 1L) else rep(nf, nrow(cl))
    fits <- sum(tapply(runs, key, max))
    secs <- 0
    for (k in seq_along(sch)) {
      v <- max(fids[[k]])
      per <- u$secs[cbind(cl$ci, match(sch[k], colnames(u$secs)))] / v
      nrun <- if (h != "exh") ifelse(keep, v, if (k == 1L) 1L else 0L) else rep(v, nrow(cl))
      secs <- secs + sum((per * nrun)[first])
    }
    for (sel in selects) {
      score <- if (sel == "smooth" || grepl("_smooth$", sel)) mu_s else mu
      s_el <- ifelse(elig, score, -Inf)
      if (sel == "first") {
        b <- which.max(s_el)
      } else if (sel %in% c("middle", "smooth")) {
        b <- middle_of_ties(s_el >= max(s_el) - 1e-12)
      } else {
        # 1se_<se>_<order>[_smooth]
        parts <- strsplit(sel, "_")[[1]]
        b0 <- middle_of_ties(s_el >= max(s_el) - 1e-12)
        se <- if (parts[2] == "paired") {
          D <- sweep(-P, 2L, P[b0, ], "+")   # per-point differences to the best
          nn <- rowSums(!is.na(D))
          m <- rowMeans(D, na.rm = TRUE)
          v <- (rowSums(D^2, na.rm = TRUE) - nn * m^2) / pmax(nn - 1, 1)
          ifelse(nn >= 2, sqrt(pmax(v, 0) / nn), Inf)
        } else {
          rep(stats::sd(F[b0, ]) / sqrt(nf), nrow(cl))
        }
        ok <- which(elig & s_el >= s_el[b0] - se)
        sp <- simp[[parts[3]]]
        b <- ok[order(sp[ok], -s_el[ok])][1]
      }
      out[[paste(sel, h, sep = "/")]] <- list(ci = cl$ci[b], var = cl$var[b],
                                              acc = u$test[cl$ci[b], cl$var[b]],
                                              fits = fits, secs = secs)
    }
  }
  out
}

# ---------------------------------------------------------------------------
# The rules evaluated.

fams <- list()
add_fam <- function(set, src, type, selects) {
  fams[[length(fams) + 1L]] <<- list(set = set, src = src, type = type, selects = selects)
}
selects_all <- c("first", "middle", "smooth", "1se_paired_sigma", "1se_paired_effdim",
                 "1se_fold_sigma", "1se_paired_sigma_smooth", "1se_paired_effdim_smooth")
for (set in c("cv", "auto", "auto_e")) for (src in c("cv5", "cv10", "rep"))
  for (type in c("held", "loo")) add_fam(set, src, type, selects_all)
# Variants (cv5 only, both scorings): KPCA rank, DNE output dimension.
sel_var <- c("first", "smooth", "1se_paired_sigma")
for (type in c("held", "loo")) {
  for (set in c("cv@r99", "cv@full|r99", "auto@r99", "auto@full|r99"))
    add_fam(set, "cv5", type, sel_var)
  for (d in c("c1", "c1x2", "neg90", "neg99", "capD", "cap10", "d5", "d10")) {
    add_fam(sprintf("cv@full:%s", d), "cv5", type, sel_var)
    add_fam(sprintf("auto@full:%s", d), "cv5", type, sel_var)
  }
  for (set in c("cv@full:auto|full:c1", "cv@full:auto|full:neg90",
                "cv@full:auto|full:c1|full:neg90|full:capD",
                "auto@full:auto|full:c1", "auto@full:auto|full:c1|full:neg90|full:capD",
                "cv@r99:auto", "cv@r99:c1", "auto@r99:c1", "cv@full:auto|r99:auto"))
    add_fam(set, "cv5", type, sel_var)
}
halvings <- c("fast", "fast2", "fastA", "exh")
cat(sprintf("%d rule families\n", length(fams)))

meta <- do.call(rbind, lapply(U, function(u) data.frame(
  dataset = u$meta$dataset, split = u$meta$split, learner = u$meta$learner,
  ext = u$meta$ext, stringsAsFactors = FALSE)))

res <- list()
for (fam in fams) {
  fname <- sprintf("%s/%s-%s", fam$set, fam$src, fam$type)
  rows <- lapply(seq_along(U), function(i) {
    a <- apply_family(U[[i]], fam, fam$selects, halvings)
    if (is.null(a)) return(NULL)
    data.frame(meta[rep(i, length(a)), ], rule = paste(fname, names(a), sep = "/"),
               chosen = cand_names[vapply(a, `[[`, 0L, "ci")],
               variant = vapply(a, `[[`, "", "var"),
               accuracy = vapply(a, `[[`, 0, "acc"), fits = vapply(a, `[[`, 0, "fits"),
               seconds = vapply(a, `[[`, 0, "secs"), row.names = NULL,
               stringsAsFactors = FALSE)
  })
  res[[fname]] <- do.call(rbind, rows)
}
res <- do.call(rbind, res)
rownames(res) <- NULL

# Fixed columns, the per-split oracle and today's shipped columns.
fixed <- do.call(rbind, lapply(seq_along(U), function(i) {
  u <- U[[i]]
  v0 <- default_var(u)
  te <- u$test[, v0]
  data.frame(meta[i, ], rule = c("fixed:euclidean", "fixed:linear", "fixed:aligned",
                                 "fixed:unweighted", "oracle:kernel", "oracle:auto"),
             chosen = c("euclidean", "linear", "aligned", "unweighted",
                        cand_names[KER][which.max(te[KER])],
                        cand_names[c(2, KER, 24, 25)][which.max(te[c(2, KER, 24, 25)])]),
             variant = v0,
             accuracy = c(te[IDX], max(te[KER]), max(te[c(2, KER, 24, 25)])),
             fits = 0, seconds = NA_real_, row.names = NULL, stringsAsFactors = FALSE)
}))
# Best fixed sigma per dataset x learner (chosen on the test accuracy of the
# same splits: an optimistic reference, not a rule).
bf <- do.call(rbind, lapply(split(seq_along(U), paste(meta$dataset, meta$learner, meta$ext)), function(ii) {
  te <- sapply(ii, function(i) U[[i]]$test[KER, default_var(U[[i]])])
  j <- which.max(rowMeans(te))
  data.frame(meta[ii, ], rule = "bestfixed:sigma", chosen = cand_names[KER][j],
             variant = default_var(U[[ii[1]]]), accuracy = te[j, ], fits = 0,
             seconds = NA_real_, row.names = NULL, stringsAsFactors = FALSE)
}))
res <- rbind(res, fixed, bf)
saveRDS(res, file.path(dirname(out_all), "cv_rules_choices.rds"))

# ---------------------------------------------------------------------------
# Summaries.

info <- paper_datasets()
paper <- paper_results()
paper_cv <- function(ds, learner) {
  lab <- info$label[match(ds, info$name)]
  paper$mean_accuracy[match(paste(lab, toupper(learner), "cv"),
                            paste(paper$dataset, paper$learner, paper$kernel))]
}

# Per dataset x learner x rule.
cell_summary <- function(d) {
  key <- paste(d$ext, d$dataset, d$learner, d$rule, sep = "\r")
  out <- lapply(split(d, factor(key, unique(key))), function(x) {
    data.frame(part = if (x$ext[1]) "ext" else "paper", dataset = x$dataset[1],
               learner = x$learner[1], rule = x$rule[1], splits = nrow(x),
               mean = mean(x$accuracy), sd = if (nrow(x) > 1) stats::sd(x$accuracy) else NA,
               fits = mean(x$fits), seconds = mean(x$seconds), stringsAsFactors = FALSE)
  })
  do.call(rbind, out)
}
cells <- cell_summary(res)
cells$paper_cv <- ifelse(cells$part == "paper", paper_cv(cells$dataset, cells$learner), NA)
cells$diff_paper <- cells$mean - cells$paper_cv

# Win/draw/lose against the linear learner (paired t-test over the splits,
# as summary.kmaha_reproduction()) and the mean difference.
lin <- res[res$rule == "fixed:linear", c("dataset", "learner", "ext", "split", "accuracy")]
names(lin)[5] <- "linear"
eu <- res[res$rule == "fixed:euclidean", c("dataset", "learner", "ext", "split", "accuracy")]
names(eu)[5] <- "euclidean"
rl <- merge(merge(res, lin), eu)
wdl <- lapply(split(rl, paste(rl$ext, rl$dataset, rl$learner, rl$rule, sep = "\r")), function(x) {
  o <- kmaha:::paired_outcome(x$accuracy - x$linear, 0.05)
  data.frame(part = if (x$ext[1]) "ext" else "paper", dataset = x$dataset[1],
             learner = x$learner[1], rule = x$rule[1], vs_linear = o$outcome %||% NA,
             diff_linear = mean(x$accuracy - x$linear),
             diff_best_ref = mean(x$accuracy) - max(mean(x$linear), mean(x$euclidean)),
             stringsAsFactors = FALSE)
})
wdl <- do.call(rbind, wdl)
cells <- merge(cells, wdl, by = c("part", "dataset", "learner", "rule"), all.x = TRUE)

# Over the cells of the paper's data: one row per rule and learner set.
rule_summary <- function(cells, part = "paper") {
  x <- cells[cells$part == part, ]
  out <- lapply(split(x, x$rule), function(r) {
    data.frame(rule = r$rule[1], cells = nrow(r), mean = mean(r$mean),
               diff_paper = mean(r$diff_paper), below_001 = sum(r$diff_paper < -0.01),
               win = sum(r$vs_linear == "win", na.rm = TRUE),
               draw = sum(r$vs_linear == "draw", na.rm = TRUE),
               lose = sum(r$vs_linear == "lose", na.rm = TRUE),
               lower_mean = sum(r$diff_linear < 0), worst_vs_linear = min(r$diff_linear),
               worst_vs_ref = min(r$diff_best_ref),
               fits = mean(r$fits), seconds = mean(r$seconds), stringsAsFactors = FALSE)
  })
  do.call(rbind, out)
}
learners_all <- unique(cells$learner[cells$part == "paper"])
summ <- do.call(rbind, c(
  list(cbind(learners = "all", rule_summary(cells)),
       cbind(learners = "nca+dne", rule_summary(cells[cells$learner %in% c("nca", "dne"), ]))),
  lapply(learners_all, function(l) cbind(learners = l,
                                         rule_summary(cells[cells$learner == l, ])))))
summ$part <- "paper"
summ_ext <- NULL
if (any(cells$part == "ext")) {
  summ_ext <- cbind(learners = "nca", rule_summary(cells, "ext"))
  summ_ext$part <- "ext"
}
dir.create(dirname(out_all), showWarnings = FALSE, recursive = TRUE)
utils::write.csv(rbind(summ, summ_ext), out_all, row.names = FALSE)

show <- function(x, n = 200) print(utils::head(x, n), row.names = FALSE, digits = 4)

# Splits per learner.
cat("\nUnits per learner and part:\n")
print(table(meta$learner, ifelse(meta$ext, "ext", "paper")))

# The reference: the rule of today's CV column on the shipped folds must
# give the shipped CV accuracy on every split recorded.
shipped <- paper_reproduction()
today <- res[res$rule == "cv/cv5-held/first/fast" & !res$ext, ]
m <- merge(today, shipped[shipped$kernel == "cv", c("dataset", "split", "learner", "accuracy")],
           by = c("dataset", "split", "learner"))
cat(sprintf("\nToday's rule replayed: %d of %d units equal the shipped CV column (max |diff| %.2g)\n",
            sum(abs(m$accuracy.x - m$accuracy.y) < 1e-12), nrow(m), max(abs(m$accuracy.x - m$accuracy.y))))
for (k in c("linear", "aligned", "unweighted")) {
  m <- merge(res[res$rule == paste0("fixed:", k) & !res$ext, ],
             shipped[shipped$kernel == k, c("dataset", "split", "learner", "accuracy")],
             by = c("dataset", "split", "learner"))
  cat(sprintf("  fixed %-10s: %d of %d units equal the shipped column\n", k,
              sum(abs(m$accuracy.x - m$accuracy.y) < 1e-12), nrow(m)))
}

# CSV of the selected rules (per dataset x learner).
# The rules shipped in the CSV (every rule is in the summary file under
# bench/studies/results/).
keep_rules <- c(
  "fixed:euclidean", "fixed:linear", "fixed:aligned", "fixed:unweighted",
  "oracle:kernel", "oracle:auto", "bestfixed:sigma",
  sprintf("cv/cv5-held/first/%s", c("fast", "fastA", "fast2", "exh")),
  sprintf("cv/cv5-held/smooth/%s", c("fastA", "exh")),
  "cv/cv5-held/1se_paired_sigma/fastA", "cv/cv10-held/first/exh", "cv/rep-held/first/exh",
  "cv/cv5-loo/first/exh",
  sprintf("auto/cv5-held/first/%s", c("fast", "fastA", "fast2", "exh")),
  sprintf("auto/cv5-held/smooth/%s", c("fast", "fastA", "fast2", "exh")),
  sprintf("auto/cv5-held/1se_paired_sigma_smooth/%s", c("fastA", "exh")),
  "auto/cv5-held/1se_paired_effdim_smooth/fastA", "auto/cv10-held/smooth/exh",
  sprintf("auto/rep-held/smooth/%s", c("fastA", "exh")), "auto/cv5-loo/smooth/exh",
  sprintf("auto_e/cv5-held/smooth/%s", c("fastA", "exh")),
  "auto_e/cv5-held/1se_paired_sigma_smooth/fastA",
  sprintf("%s/cv5-held/first/fast",
          c("cv@r99", "cv@full|r99", "cv@r99:auto", "cv@full:c1", "cv@full:neg90",
            "cv@full:capD", "cv@full:cap10", "cv@full:auto|full:c1|full:neg90|full:capD",
            "auto@full|r99", "auto@full:auto|full:c1|full:neg90|full:capD")))
sel_rules <- Sys.getenv("KMAHA_CVINV_CSV_RULES")
sel_rules <- if (nzchar(sel_rules)) strsplit(sel_rules, ",")[[1]] else keep_rules
cells_out <- cells[cells$rule %in% sel_rules, ]
cells_out <- cells_out[order(cells_out$part, cells_out$learner, cells_out$dataset,
                             match(cells_out$rule, sel_rules)), ]
num <- c("mean", "sd", "fits", "seconds", "paper_cv", "diff_paper", "diff_linear", "diff_best_ref")
for (v in num) cells_out[[v]] <- signif(cells_out[[v]], 4)
hdr <- kmaha:::run_header(
  source = "data-raw/investigate-cv.R (records), data-raw/analyse-cv.R (rules)",
  units = length(U),
  splits = paste(sprintf("%s:%d", names(table(paste(meta$learner, ifelse(meta$ext, "ext", "paper")))),
                         as.integer(table(paste(meta$learner, ifelse(meta$ext, "ext", "paper"))))),
                 collapse = " "),
  rule_name = "set/source-scoring/selection/halving (see data-raw/analyse-cv.R)",
  columns = "mean, sd of the test accuracy over the splits; fits, seconds per split (CV only, final fit excluded; seconds indicative, loaded machine); vs_linear: paired t-test at 0.05; diff_best_ref: mean minus max(Euclidean, linear) means")
kmaha:::write_csv_header(cells_out, out_csv, hdr, quote = c("part", "dataset", "learner", "rule", "vs_linear"))
cat(sprintf("\nwrote %s (%d rows) and %s\n", out_csv, nrow(cells_out), out_all))

assign("summ", summ, globalenv())
assign("cells", cells, globalenv())
assign("summ_ext", summ_ext, globalenv())
# Markdown table of rules (rows) by learner set (columns): mean accuracy,
# difference to the paper's CV column, win/draw/lose against the linear
# learner, and fits per split.
md_table <- function(rules, sm = summ) {
  ls <- unique(sm$learners)
  cat("| rule |", paste(sprintf("%s: mean, vs paper, W/D/L", ls), collapse = " | "), "| fits |\n")
  cat("|---|", paste(rep("---", length(ls)), collapse = "|"), "|---:|\n")
  for (r in rules) {
    y <- sm[sm$rule == r, ]
    if (!nrow(y)) next
    cl <- vapply(ls, function(l) {
      z <- y[y$learners == l, ]
      if (!nrow(z)) return("")
      sprintf("%.3f, %+.3f, %d/%d/%d", z$mean, z$diff_paper, z$win, z$draw, z$lose)
    }, "")
    cat("|", r, "|", paste(cl, collapse = " | "), "|", sprintf("%.0f", y$fits[1]), "|\n")
  }
}
assign("md_table", md_table, globalenv())

if (interactive() || nzchar(Sys.getenv("KMAHA_CVINV_PRINT"))) {
  cat("\nAll rules over the paper's cells (all learners), by mean accuracy:\n")
  s <- summ[summ$learners == "all", ]
  show(s[order(-s$mean), ], 400)
  cat("\nExternal data (NCA):\n")
  show(summ_ext[order(-summ_ext$mean), ], 400)
}
