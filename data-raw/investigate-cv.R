# Why is the cross-validated kernel choice below the paper's CV column, and
# what should kernel = "auto" do?  (Issue 18, items 1 and 2.)
#
# Step 1 of 2 (this script, slow, resumable): records everything a kernel
# selection rule needs, so that any rule can be evaluated afterwards without
# refitting (data-raw/analyse-cv.R does that).  One *unit* is a dataset, a
# split and a learner.  Per unit:
#
# * the training split of the shipped reproduction: split i here is split i
#   of reproduce_paper() (split_rows(), seed 1, 200 training rows, 100 for
#   Glass and Iris, columns constant on the training rows dropped, inputs
#   standardized on the training rows);
# * the candidates: "euclidean" (1-NN on the standardized inputs, no
#   learning), "linear" (the learner on the inputs), the 21 scaled RBF
#   kernels of paper_kernels() (the KPCA trick, as kmaha(kernel = <that
#   kernel>)), "aligned" (the QP alignment of the 21, computed on the rows
#   the candidate is fitted on) and "unweighted" (their plain sum; LMNN/DNE
#   target neighbours from the inputs, as the paper and reproduce_paper());
# * variants of a candidate (see `variants_for()`): "full" is kmaha()'s
#   default (every KPCA component above tol = 1e-8; DNE's automatic output
#   dimension); "r99" keeps the leading KPCA components that carry 99% of
#   the trace of the centred Gram matrix; for DNE, the output dimension by
#   several rules (`dne_dims()`);
# * the TEST accuracy of every candidate and variant fitted on the whole
#   training split (gives the per-split oracle and the best fixed sigma);
# * four fold schemes, each candidate fitted on the training part of every
#   fold:  "cv5"   the 5 stratified folds the shipped CV column used (the
#                  cell seed of reproduce_paper() for kernel "cv", then
#                  make_folds(y, 5), exactly as kmaha(kernel = "cv") draws
#                  them), so replaying today's rule on cv5 reproduces the
#                  shipped CV column;
#          "cv10"  10 stratified folds; "rep2", "rep3": two more 5-fold
#                  draws (with cv5, a 3 x repeated 5-fold CV);
#   and for every fold fit two correctness records of the held-out points:
#   `held`  1-NN among the fold's training part (the usual CV score, as
#           cv_task() computes it: training part on its KPCA coordinates,
#           held-out part projected by the same KPCA and map);
#   `loo`   "leave-one-out on the fold fits": all n training rows are mapped
#           by the fold's fitted KPCA and map, and each held-out point is
#           classified by 1-NN among the other n - 1 rows (the fold's
#           training part and the other held-out points, with their true
#           labels), so the reference set has n - 1 points like the final
#           model's; the metric itself is still learned without the point.
#   Every training row is held out once per scheme, so `held[[scheme]]` and
#   `loo[[scheme]]` are candidate x variant x n logical arrays (NA where the
#   variant was not fitted on that scheme or the fit failed).  To save time
#   on a shared machine, the variants are fitted on cv5 only (the other
#   schemes have the default variant), and LMNN (about ten times slower)
#   has the cv5 scheme only;
# * the time (seconds, including KPCA and alignment) and number of learner
#   fits per candidate and scheme, and the KPCA ranks of the final fits.
#
# A second part ("ext") runs NCA on data sets the project never tuned to
# (mlbench Sonar, Vehicle, Vowel; kernlab spam; MASS crabs): random splits
# with 100-200 training rows, the same candidates and schemes.
#
# Seeds: the training rows from split_rows(1, dataset, split) (for "ext":
# dataset "ext-<name>"); the cv5 folds from the reproduction's cell seed;
# the other schemes from key_seed("kmaha-cvinv", 1, dataset, split, learner,
# scheme).  The fits themselves are deterministic (NCA starts at the
# identity, DNE is an eigenproblem, LMNN's solver draws nothing).
#
# Cache: one .rds per unit under data-raw/cache/cv_investigation/ (git
# ignored); a unit already there is not fitted again, so a killed run
# resumes.  Run with one thread on one core:
#   nice Rscript data-raw/investigate-cv.R
# Environment: KMAHA_DATA_DIR (the paper's CSV files; default
#   /work/shared/data), KMAHA_CVINV_SPLITS (NCA and DNE splits, default 10),
#   KMAHA_CVINV_LMNN_SPLITS (default 2), KMAHA_CVINV_EXT_SPLITS (default 3),
#   KMAHA_CVINV_PARTS (comma-separated, in order; default
#   "dne:1-5,nca:1-5,ext,lmnn,dne:6-10,nca:6-10", see below; the shipped
#   run used "dne:1-5,nca:1-3,ext:1-3,lmnn:1-1,nca:4-5,lmnn:2-2,dne:6-10,
#   nca:6-10" with a deadline), KMAHA_CVINV_CACHE (the cache folder),
#   KMAHA_CVINV_DEADLINE (Unix time after which no new unit starts).
suppressPackageStartupMessages(library(kmaha))
options(kmaha.num_threads = 1L)   # one thread per fit, as in cross-validation
`%||%` <- function(a, b) if (is.null(a)) b else a
env_int <- function(v, d) as.integer(Sys.getenv(v, d))
data_dir <- Sys.getenv("KMAHA_DATA_DIR", "/work/shared/data")
cache_dir <- Sys.getenv("KMAHA_CVINV_CACHE", file.path("data-raw", "cache", "cv_investigation"))
dir.create(cache_dir, showWarnings = FALSE, recursive = TRUE)
n_splits <- env_int("KMAHA_CVINV_SPLITS", "10")
n_lmnn <- env_int("KMAHA_CVINV_LMNN_SPLITS", "2")
n_ext <- env_int("KMAHA_CVINV_EXT_SPLITS", "3")
parts <- strsplit(Sys.getenv("KMAHA_CVINV_PARTS",
                            "dne:1-5,nca:1-5,ext,lmnn,dne:6-10,nca:6-10"), ",")[[1]]
deadline <- as.numeric(Sys.getenv("KMAHA_CVINV_DEADLINE", "Inf"))
seed <- 1L

ks <- paper_kernels()
sig <- paper_sigmas()
cand_names <- c("euclidean", "linear", sprintf("rbf%g", sig), "aligned", "unweighted")
schemes <- c("cv5", "cv10", "rep2", "rep3")
ctx <- kmaha:::kmaha_context()

# ---------------------------------------------------------------------------
# Data.

ext_sets <- list(
  sonar = list(n_train = 150, load = function() {
    e <- new.env(); utils::data("Sonar", package = "mlbench", envir = e)
    list(x = as.matrix(e$Sonar[, 1:60]), y = e$Sonar$Class)
  }),
  vehicle = list(n_train = 200, load = function() {
    e <- new.env(); utils::data("Vehicle", package = "mlbench", envir = e)
    list(x = as.matrix(e$Vehicle[, 1:18]), y = e$Vehicle$Class)
  }),
  vowel = list(n_train = 200, load = function() {
    # V1 is the speaker group (a factor), not a measurement
    e <- new.env(); utils::data("Vowel", package = "mlbench", envir = e)
    list(x = as.matrix(e$Vowel[, 2:10]), y = e$Vowel$Class)
  }),
  spam = list(n_train = 200, load = function() {
    e <- new.env(); utils::data("spam", package = "kernlab", envir = e)
    list(x = as.matrix(e$spam[, 1:57]), y = e$spam$type)
  }),
  crabs = list(n_train = 100, load = function() {
    e <- new.env(); utils::data("crabs", package = "MASS", envir = e)
    list(x = as.matrix(e$crabs[, c("FL", "RW", "CL", "CW", "BD")]),
         y = factor(paste(e$crabs$sp, e$crabs$sex)))
  }))

data_cache <- new.env()
load_set <- function(ds, ext) {
  key <- paste(ds, ext)
  if (is.null(data_cache[[key]])) {
    data_cache[[key]] <- if (ext) {
      d <- ext_sets[[ds]]$load()
      storage.mode(d$x) <- "double"
      c(d, n_train = ext_sets[[ds]]$n_train)
    } else {
      d <- kmaha_data(ds, path = data_dir)
      info <- paper_datasets()
      list(x = as.matrix(d[, -ncol(d), drop = FALSE]), y = d$class,
           n_train = info$n_train[info$name == ds])
    }
  }
  data_cache[[key]]
}

# The training split as repro_fit() prepares it (standardization as kmaha()).
get_split <- function(ds, split, ext) {
  d <- load_set(ds, ext)
  tr <- kmaha:::split_rows(seed, if (ext) paste0("ext-", ds) else ds, split,
                           nrow(d$x), d$n_train)
  xtr <- d$x[tr, , drop = FALSE]
  keep <- apply(xtr, 2L, function(v) max(v) > min(v))
  prep <- kmaha:::fit_scaling(xtr[, keep, drop = FALSE], TRUE)
  list(x = kmaha:::apply_scaling(xtr[, keep, drop = FALSE], prep),
       y = droplevels(factor(d$y[tr])),
       xte = kmaha:::apply_scaling(d$x[-tr, keep, drop = FALSE], prep),
       yte = as.character(d$y[-tr]))
}

# ---------------------------------------------------------------------------
# Candidates and their variants.

# DNE output dimensions from the eigenvalues `ev` (ascending) of the DNE
# scatter and the number of them the core counts as negative (`n_neg`,
# rounding-level values excluded), C classes, D input columns, p learner
# input columns.  "auto" is dne()'s default.
dne_dims <- function(ev, n_neg, C, D, p) {
  neg <- ev[seq_len(n_neg)]
  auto <- max(1L, n_neg)
  cum <- if (length(neg)) cumsum(neg) / sum(neg) else 1
  d <- c(auto = auto,
         c1 = max(1L, C - 1L),
         c1x2 = max(2L, 2L * (C - 1L)),
         neg90 = if (length(neg)) which(cum >= 0.90)[1] else 1L,
         neg99 = if (length(neg)) which(cum >= 0.99)[1] else 1L,
         capD = min(auto, D),
         cap10 = min(auto, 10L),
         d2 = 2L, d5 = 5L, d10 = 10L, d20 = 20L)
  pmin(pmax(d, 1L), p)
}
dne_dim_names <- c("auto", "c1", "c1x2", "neg90", "neg99", "capD", "cap10",
                   "d2", "d5", "d10", "d20")

# The variant labels recorded for a learner; the first is kmaha()'s default.
variants_for <- function(learner) {
  switch(learner,
    dne = c(paste0("full:", dne_dim_names), paste0("r99:", dne_dim_names)),
    nca = c("full", "r99"),
    lmnn = "full")
}
# Variants fitted on a scheme: all of them on cv5 and for the test
# accuracy, only the default on the other schemes (to save time on a
# shared machine).
scheme_variants <- function(learner, scheme) {
  v <- variants_for(learner)
  if (scheme %in% c("cv5", "final")) v else v[1]
}
# Schemes per learner: LMNN (about ten times slower) on cv5 only.
schemes_for <- function(learner) if (learner == "lmnn") "cv5" else schemes

# Number of leading components carrying a fraction q of the trace.
rank_q <- function(kp, q) {
  ev <- kp$eigenvalues
  r <- which(cumsum(ev) >= q * kp$trace)[1]
  if (is.na(r)) length(ev) else r
}

truncate_kpca <- function(kp, r) {
  if (r >= ncol(kp$coords)) return(kp)
  kp$coords <- kp$coords[, seq_len(r), drop = FALSE]
  kp$projection <- kp$projection[, seq_len(r), drop = FALSE]
  kp$eigenvalues <- kp$eigenvalues[seq_len(r)]
  kp
}

# Fits candidate `cand` for `learner` on (xf, yf) and scores the rows of
# xq (labels yq).  With `loo`, also the leave-one-out-on-the-fit score of
# the query rows among all rows of rbind(xf, xq).  Returns, per variant in
# `vars`, list(held, loo), and `fits` (learner fits run), `ranks`.
fit_score <- function(xf, yf, xq, yq, cand, learner, vars, loo = TRUE, C, D) {
  yall <- factor(c(as.character(yf), as.character(yq)),
                 levels = union(levels(yf), unique(as.character(yq))))
  nf <- nrow(xf)
  score <- function(zf, zq) {
    held <- kmaha:::knn_vote(zf, yf, zq, 1L)$class == yq
    lo <- NULL
    if (loo) {
      Z <- rbind(zf, zq)
      lo <- kmaha:::knn_vote(Z, yall, Z, 1L, self = TRUE)$class[-seq_len(nf)] == yq
    }
    list(held = held, loo = lo)
  }
  out <- list()
  fits <- 0L
  ranks <- c(full = NA_integer_, r99 = NA_integer_, r95 = NA_integer_)
  if (cand == "euclidean") {
    s <- score(xf, xq)
    for (v in vars) out[[v]] <- s
    return(list(res = out, fits = 0L, ranks = ranks))
  }
  # coordinates per rank variant
  coords <- list()
  if (cand == "linear") {
    coords$full <- list(zf = xf, zq = xq)
    coords$r99 <- coords$full
    ranks[] <- ncol(xf)
  } else {
    kern <- switch(cand,
      aligned = suppressWarnings(align_kernels(xf, yf, ks, method = "qp"))$kernel,
      unweighted = kernel_sum(ks),
      ks[[match(cand, cand_names) - 2L]])
    kp <- suppressWarnings(kpca(xf, kern))
    ranks <- c(full = ncol(kp$coords), r99 = rank_q(kp, 0.99), r95 = rank_q(kp, 0.95))
    zq <- predict(kp, xq)
    coords$full <- list(zf = kp$coords, zq = zq)
    r <- ranks[["r99"]]
    coords$r99 <- list(zf = kp$coords[, seq_len(r), drop = FALSE],
                       zq = zq[, seq_len(r), drop = FALSE])
  }
  input <- if (cand == "unweighted") xf   # LMNN/DNE targets from the inputs
  rank_of <- sub(":.*$", "", vars)
  for (rk in unique(rank_of)) {
    zf <- coords[[rk]]$zf
    zq <- coords[[rk]]$zq
    if (learner == "dne") {
      tg <- kmaha:::find_targets(kmaha:::learner_spec("dne", list(k = 3L)),
                                 if (is.null(input)) zf else input, yf, ctx)
      fit <- kmaha:::core_dne_fit(zf, tg$same, tg$other, ncol(zf), 0, ctx)
      fits <- fits + 1L
      dims <- dne_dims(fit$eigenvalues, fit$n_negative, C, D, ncol(zf))
      for (v in vars[rank_of == rk]) {
        d <- dims[[sub("^.*:", "", v)]]
        A <- fit$A[seq_len(d), , drop = FALSE]
        out[[v]] <- score(kmaha:::apply_map(zf, A), kmaha:::apply_map(zq, A))
      }
    } else {
      largs <- if (learner == "lmnn" && cand != "linear") list(lambda = kmaha:::klmnn_lambda) else list()
      spec <- kmaha:::learner_spec(learner, largs)
      tg <- kmaha:::find_targets(spec, if (is.null(input)) zf else input, yf, ctx)
      A <- suppressWarnings(kmaha:::fit_map(spec, zf, yf, tg, ctx))$map
      fits <- fits + 1L
      out[[rk]] <- score(kmaha:::apply_map(zf, A), kmaha:::apply_map(zq, A))
    }
  }
  list(res = out, fits = fits, ranks = ranks)
}

# ---------------------------------------------------------------------------
# One unit.

scheme_folds <- function(ds, split, learner, y, ext) {
  dsk <- if (ext) paste0("ext-", ds) else ds
  f <- list()
  kmaha:::set_cell_seed(kmaha:::key_seed("kmaha-cell", seed, dsk, split, learner, "cv"))
  f$cv5 <- kmaha:::make_folds(y, 5)
  for (s in c("cv10", "rep2", "rep3")) {
    kmaha:::set_cell_seed(kmaha:::key_seed("kmaha-cvinv", seed, dsk, split, learner, s))
    f[[s]] <- kmaha:::make_folds(y, if (s == "cv10") 10 else 5)
  }
  f
}

run_unit <- function(ds, split, learner, ext) {
  sp <- get_split(ds, split, ext)
  x <- sp$x
  y <- sp$y
  n <- nrow(x)
  C <- nlevels(y)
  D <- ncol(x)
  vars <- variants_for(learner)
  folds <- scheme_folds(ds, split, learner, y, ext)
  nc <- length(cand_names)
  mk <- function() array(NA, c(nc, length(vars), n), dimnames = list(cand_names, vars, NULL))
  held <- list()
  loo <- list()
  secs <- matrix(0, nc, length(schemes) + 1L, dimnames = list(cand_names, c(schemes, "final")))
  fits <- secs
  ranks <- matrix(NA_integer_, nc, 3, dimnames = list(cand_names, c("full", "r99", "r95")))
  test <- matrix(NA_real_, nc, length(vars), dimnames = list(cand_names, vars))
  errors <- character()
  for (s in schemes_for(learner)) {
    held[[s]] <- mk()
    loo[[s]] <- mk()
    fid <- folds[[s]]
    sv <- scheme_variants(learner, s)
    for (ci in seq_len(nc)) for (f in seq_len(max(fid))) {
      tr <- fid != f
      t0 <- proc.time()[["elapsed"]]
      r <- tryCatch(fit_score(x[tr, , drop = FALSE], droplevels(y[tr]),
                              x[!tr, , drop = FALSE], as.character(y[!tr]),
                              cand_names[ci], learner, sv, TRUE, C, D),
                    error = function(e) {
                      errors <<- c(errors, sprintf("%s %s fold %d: %s", cand_names[ci], s, f,
                                                   conditionMessage(e)))
                      NULL
                    })
      secs[ci, s] <- secs[ci, s] + proc.time()[["elapsed"]] - t0
      if (is.null(r)) next
      fits[ci, s] <- fits[ci, s] + r$fits
      for (v in sv) {
        held[[s]][ci, v, !tr] <- r$res[[v]]$held
        loo[[s]][ci, v, !tr] <- r$res[[v]]$loo
      }
    }
  }
  sv <- scheme_variants(learner, "final")
  for (ci in seq_len(nc)) {
    t0 <- proc.time()[["elapsed"]]
    r <- tryCatch(fit_score(x, y, sp$xte, sp$yte, cand_names[ci], learner, sv, FALSE, C, D),
                  error = function(e) {
                    errors <<- c(errors, sprintf("%s final: %s", cand_names[ci], conditionMessage(e)))
                    NULL
                  })
    secs[ci, "final"] <- proc.time()[["elapsed"]] - t0
    if (is.null(r)) next
    fits[ci, "final"] <- r$fits
    ranks[ci, ] <- r$ranks
    for (v in sv) test[ci, v] <- mean(r$res[[v]]$held)
  }
  list(meta = list(dataset = ds, split = split, learner = learner, ext = ext,
                   n = n, n_test = length(sp$yte), classes = C, D = D),
       y = y, folds = folds, held = held, loo = loo, test = test, ranks = ranks,
       secs = secs, fits = fits, errors = errors)
}

# ---------------------------------------------------------------------------
# The units, in the order of `parts`.

# A part is "dne", "nca", "lmnn" or "ext" (NCA on the other data sets),
# optionally with a range of splits, "nca:6-10"; without one, splits
# 1..KMAHA_CVINV_SPLITS (NCA, DNE), 1..KMAHA_CVINV_LMNN_SPLITS,
# 1..KMAHA_CVINV_EXT_SPLITS.
paper_names <- paper_datasets()$name
units <- list()
for (p in parts) {
  nm <- sub(":.*$", "", p)
  rg <- if (grepl(":", p)) as.integer(strsplit(sub("^.*:", "", p), "-")[[1]]) else
    c(1L, switch(nm, lmnn = n_lmnn, ext = n_ext, n_splits))
  ids <- seq(rg[1], rg[length(rg)])
  sets <- if (nm == "ext") names(ext_sets) else paper_names
  for (s in ids) for (ds in sets)
    units[[length(units) + 1L]] <- list(ds = ds, split = s, ext = nm == "ext",
                                        learner = if (nm == "ext") "nca" else nm)
}

for (u in units) {
  file <- file.path(cache_dir, sprintf("%s%s_%02d_%s.rds", if (u$ext) "ext-" else "",
                                       u$ds, u$split, u$learner))
  if (file.exists(file)) next
  if (as.numeric(Sys.time()) > deadline) {
    cat("deadline reached; stopping\n")
    break
  }
  t0 <- proc.time()[["elapsed"]]
  rec <- run_unit(u$ds, u$split, u$learner, u$ext)
  rec$meta$seconds <- proc.time()[["elapsed"]] - t0
  saveRDS(rec, paste0(file, ".tmp"))
  file.rename(paste0(file, ".tmp"), file)
  cat(sprintf("%s %-14s split %2d %-4s %6.1f s%s\n", format(Sys.time(), "%H:%M:%S"),
              paste0(if (u$ext) "ext-" else "", u$ds), u$split, u$learner,
              rec$meta$seconds,
              if (length(rec$errors)) sprintf(" (%d errors: %s)", length(rec$errors), rec$errors[1]) else ""))
}
