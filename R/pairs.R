# Pairwise constraints, shared by the pair learners mmc() and itml(): the
# checks of pairs given by the user, and the pairs drawn from class labels.

# `pairs` (an m x 2 matrix of row indices of x) and `similar` (+1 similar,
# -1 dissimilar) checked against n rows; `fun` names the learner ("mmc()"),
# `argname` renders the two arguments' names in messages (kmaha():
# "learner_args$pairs").  Returns list(pairs = integer matrix, similar =
# double vector).
check_pairs <- function(pairs, similar, n, fun, argname = function(a) a) {
  P <- argname("pairs")
  S <- argname("similar")
  if (is.data.frame(pairs)) pairs <- as.matrix(pairs)
  if (!is.matrix(pairs) || ncol(pairs) != 2L || !(is.numeric(pairs) || is.logical(pairs) && all(is.na(pairs)))) {
    an <- function(w) paste(if (grepl("^[aeiou]", w)) "an" else "a", w)
    stopf("`%s` must be a two-column numeric matrix of row indices of `x`, one pair per row, not %s.", P,
          if (is.matrix(pairs)) sprintf("%s matrix with %d column%s", an(typeof(pairs)), ncol(pairs),
                                        if (ncol(pairs) == 1L) "" else "s")
          else if (is.atomic(pairs) && is.null(dim(pairs)))
            sprintf("%s vector of length %d%s", an(typeof(pairs)), length(pairs),
                    if (length(pairs) == 2L) " (one pair is the one-row matrix rbind(c(i, j)))" else "")
          else an(class(pairs)[1]))
  }
  m <- nrow(pairs)
  if (m == 0L) stopf("`%s` has no rows: %s needs similar and dissimilar pairs.", P, fun)
  check_pair_rows(pairs, n, P)
  if (is.null(similar)) {
    stopf("`%s` is missing: give one value per row of `%s`, 1 (similar) or -1 (dissimilar).", S, P)
  }
  if (!is.numeric(similar) && !(is.logical(similar) && all(is.na(similar)))) {
    stopf("`%s` must be a numeric vector of 1 (similar) and -1 (dissimilar), not a %s.", S,
          class(similar)[1])
  }
  if (length(similar) != m) {
    stopf("`%s` has length %d but `%s` has %d rows; they must match.",
          S, length(similar), P, m)
  }
  wrong <- which(is.na(similar) | !similar %in% c(1, -1))
  if (length(wrong)) {
    stopf("`%s` must hold 1 (similar) or -1 (dissimilar) only; element %d is %s.", S,
          wrong[1], format(similar[wrong[1]]))
  }
  storage.mode(pairs) <- "integer"
  lo <- pmin(pairs[, 1], pairs[, 2])
  hi <- pmax(pairs[, 1], pairs[, 2])
  key <- (lo - 1) * as.double(n) + hi
  pos <- key[similar == 1]
  neg <- key[similar == -1]
  both <- intersect(pos, neg)
  if (length(both)) {
    k <- both[1]
    rows <- c(which(key == k & similar == 1)[1], which(key == k & similar == -1)[1])
    stopf("The pair of rows %d and %d of `x` is marked both similar and dissimilar (`%s` rows %d and %d); remove one of them.",
          lo[rows[1]], hi[rows[1]], P, min(rows), max(rows))
  }
  if (!length(neg)) {
    stopf("All pairs are similar: %s needs dissimilar pairs too (`%s` = -1).", fun, S)
  }
  if (!length(pos)) {
    stopf("All pairs are dissimilar: %s needs similar pairs too (`%s` = 1).", fun, S)
  }
  dimnames(pairs) <- NULL
  list(pairs = pairs, similar = as.double(similar))
}

# The row indices of a two-column numeric matrix `pairs` (argument name P)
# checked against the n rows of `of` ("x"; "data" for the rows of a formula's
# data, see pairs_to_frame()): present, whole, in range, two different rows.
check_pair_rows <- function(pairs, n, P, of = "x") {
  m <- nrow(pairs)
  if (anyNA(pairs)) {
    stopf("`%s` contains missing values (row %d): every pair needs two row indices of `%s`.", P,
          which(rowSums(is.na(pairs)) > 0L)[1], of)
  }
  bad <- which(!is.finite(pairs) | pairs != round(pairs))
  if (length(bad)) {
    r <- (bad[1] - 1L) %% m + 1L
    stopf("`%s` must hold whole numbers (row indices of `%s`); row %d has %s.", P, of,
          r, format(pairs[bad[1]]))
  }
  out <- which(pairs < 1 | pairs > n)
  if (length(out)) {
    r <- (out[1] - 1L) %% m + 1L
    stopf("`%s` row %d refers to row %s of `%s`, which has %d rows.", P, r,
          format(pairs[out[1]]), of, n)
  }
  self <- which(pairs[, 1] == pairs[, 2])
  if (length(self)) {
    stopf("`%s` row %d pairs row %d of `%s` with itself; a pair needs two different rows.", P,
          self[1], as.integer(pairs[self[1], 1]), of)
  }
  invisible(NULL)
}

# The default number of pairs drawn from c classes: 20 c^2 similar and as
# many dissimilar ones (metric-learn's num_constraints for each kind).
default_n_pairs <- function(y) as.integer(40L * nlevels(droplevels(y))^2)

# Pairs drawn from class labels y with R's random number generator: half of
# n_pairs (rounded up) similar pairs, uniform over the distinct unordered
# pairs of rows of the same class, the rest dissimilar, uniform over the
# pairs of rows of different classes; without repeats (so fewer when fewer
# exist), in random order.
draw_pairs <- function(y, n_pairs) {
  yi <- as.integer(droplevels(y))
  n_sim <- ceiling(n_pairs / 2)
  sim <- sample_class_pairs(yi, n_sim, same = TRUE)
  dis <- sample_class_pairs(yi, n_pairs - n_sim, same = FALSE)
  if (!nrow(sim)) {
    stopf("`y` has no class with 2 or more members, so no similar pair can be drawn from it.")
  }
  pairs <- rbind(sim, dis)
  similar <- rep(c(1, -1), c(nrow(sim), nrow(dis)))
  perm <- sample.int(nrow(pairs))
  list(pairs = pairs[perm, , drop = FALSE], similar = similar[perm])
}

# m distinct unordered pairs of rows of the same class (same = TRUE) or of
# different classes, uniform among all such pairs: row i drawn with weight
# the number of its partners, then a partner uniformly; repeats rejected.
sample_class_pairs <- function(yi, m, same) {
  n <- length(yi)
  sizes <- tabulate(yi, nbins = max(yi))
  w <- if (same) sizes[yi] - 1 else n - sizes[yi]
  avail <- sum(as.double(w)) / 2
  m <- min(m, avail)
  if (m <= 0) return(matrix(integer(), 0L, 2L))
  ord <- order(yi)
  start <- cumsum(c(0L, sizes))[yi]  # rows before the class of each row, in ord
  pos <- integer(n)
  pos[ord] <- seq_len(n) - start[ord]  # position of a row within its class
  keys <- numeric()
  out_i <- out_j <- integer()
  while (length(keys) < m) {
    k <- max(2L * (m - length(keys)), 16L)
    i <- sample.int(n, k, replace = TRUE, prob = w)
    r <- pmin(as.integer(floor(stats::runif(k) * w[i])) + 1L, w[i])
    j <- if (same) {
      ord[start[i] + r + (r >= pos[i])]
    } else {
      ord[ifelse(r <= start[i], r, r + sizes[yi[i]])]
    }
    key <- (pmin(i, j) - 1) * as.double(n) + pmax(i, j)
    keep <- !duplicated(key) & !key %in% keys
    keys <- c(keys, key[keep])
    out_i <- c(out_i, i[keep])
    out_j <- c(out_j, j[keep])
  }
  cbind(out_i, out_j, deparse.level = 0)[seq_len(m), , drop = FALSE]
}

# TRUE when `y` looks like metric-learn's fit(pairs, y): one 1 or -1 per
# given pair (not one label per row of the n rows), with `similar` missing.
y_holds_pair_labels <- function(y, pairs, similar, n) {
  !is.null(pairs) && is.null(similar) && is.numeric(y) && is.null(dim(y)) &&
    NROW(pairs) != n && length(y) == NROW(pairs) && all(y %in% c(1, -1))
}

# `n_pairs` of a pair learner's options `args`, checked: a count of at
# least 2, or NULL; with given `pairs` it would be ignored, so it is an
# error naming both.
check_n_pairs <- function(n_pairs, args, argname) {
  if (is.null(n_pairs)) return(NULL)
  if (!is.null(args$pairs)) {
    stopf("`%s` is the number of pairs to draw from the class labels, but `%s` are given (and used as they are): leave out `%s`.",
          argname("n_pairs"), argname("pairs"), argname("n_pairs"))
  }
  check_count(n_pairs, argname("n_pairs"), lower = 2L)
}

# The pairs a pair learner fits from: given (checked against the rows of
# z), or drawn from the labels y.  `fun` names the learner.
learner_pairs <- function(o, z, y, fun) {
  if (!is.null(o$pairs)) return(check_pairs(o$pairs, o$similar, nrow(z), fun))
  if (is.null(y)) {
    stopf("%s needs class labels `y` or pairs (`pairs` and `similar`).", fun)
  }
  draw_pairs(y, o$n_pairs %||% default_n_pairs(y))
}

# The front end of the pair learners mmc() and itml(): inputs, labels and
# pairs checked, then the model.
pair_front_end <- function(name, x, y, pairs, similar, scale, call, args) {
  fun <- paste0(name, "()")
  x <- check_x(x, "x")
  if (is.null(pairs) && !is.null(similar)) {
    stopf("`similar` is given without `pairs`: give both, or neither (pairs are then drawn from `y`).")
  }
  if (is.null(y) && is.null(pairs)) {
    stopf("%s needs class labels `y` or pairs (`pairs` and `similar`).", fun)
  }
  if (y_holds_pair_labels(y, pairs, similar, nrow(x))) {
    stopf("`y` has one value of 1 or -1 per pair and `similar` is missing: give the pairs' labels as `similar` (%s(x, pairs = , similar = )); `y` is for class labels of the rows of `x`.",
          name)
  }
  if (!is.null(y)) y <- check_y(y, nrow(x), "y")
  ctx <- kmaha_context()
  spec <- public_spec(name, args)
  if (!is.null(pairs)) {
    pr <- check_pairs(pairs, similar, nrow(x), fun)
    spec$opts$pairs <- pr$pairs
    spec$opts$similar <- pr$similar
  }
  scale <- check_flag(scale, "scale")
  fit <- fit_model(x, y, feature_identity(), spec, ctx,
                   scale = if (scale) TRUE else NA, class = paste0("kmaha_", name),
                   call = model_call(call, name))
  fit$settings <- learner_settings(spec, fit, ctx, scale)
  fit
}

# The settings of a pair learner's fit: its options (the pairs themselves
# left out) and where the pairs came from.
pair_settings <- function(fit, spec, scale) {
  o <- spec$opts
  s <- c(o[setdiff(names(o), c("pairs", "similar"))],
         list(n_pairs = nrow(fit$pairs$pairs),
              pairs = if (is.null(spec$args$pairs)) "drawn from y" else "given",
              scale = scale))
  s[!vapply(s, is.null, NA)]
}

# --------------------------------------------------------------------------
# Pairs through kmaha(): the KPCA trick with the KPCA fitted on the rows
# that appear in a pair.  The metric such a learner learns depends on the
# points only through the pairs' differences, so by the representer theorem
# its optimum in feature space lies in the span of the paired rows' features
# (centred): KPCA on those rows alone loses nothing, and the rows in no pair
# are only projected (they are the reference points of the k-NN classifier
# when `y` is given).

# Whether kmaha()'s `learner` and `learner_args` name one pair learner (its
# record's `pairs`) with pairs given: then `y` may be absent.
pairs_given <- function(learner, learner_args) {
  is.character(learner) && length(learner) == 1L && !is.na(learner) &&
    isTRUE(learner_record(tolower(learner))$pairs) &&
    is.list(learner_args) && !is.null(learner_args$pairs)
}

# The pairs given to kmaha() for a pair learner's spec, checked against the
# n rows of `x` with kmaha()'s argument names, and the spec carrying them;
# the spec unchanged for other learners and for pairs drawn from the labels.
# `type` is the kernel choice; `y` NULL when absent (pairs only).
check_given_pairs <- function(spec, n, y, type, precomputed) {
  if (!isTRUE(spec$builtin) || !isTRUE(learner_record(spec$name)$pairs)) return(spec)
  o <- spec$opts
  fun <- learner_fun_label(spec$name)
  if (is.null(o$pairs)) {
    if (!is.null(o$similar)) {
      stopf("`%s` is given without `%s`: give both, or neither (pairs are then drawn from `y`).",
            spec$argname("similar"), spec$argname("pairs"))
    }
    return(spec)
  }
  pr <- check_pairs(o$pairs, o$similar, n, fun, spec$argname)
  if (is.null(y) && type %in% c("cv", "auto", "scores")) {
    stopf("Kernel choice (kernel = \"%s\") scores each candidate by how well it classifies held-out class labels, but `y` is absent: %s learns from `%s` alone. Give a kernel (e.g. kernel = rbf_kernel(1)) or kernel = \"linear\", or give `y`.",
          if (type == "scores") "auto" else type, fun, spec$argname("pairs"))
  }
  if (is.null(y) && type == "align") {
    stopf("`kernel = \"align\"` aligns the kernels with the class labels, but `y` is absent: %s learns from `%s` alone. Give a kernel (e.g. kernel = rbf_kernel(1)) or kernel = \"unweighted\", or give `y`.",
          fun, spec$argname("pairs"))
  }
  if (precomputed) {
    stopf("With given pairs kmaha() fits the KPCA on the rows that appear in a pair, but new points of a precomputed kernel come as kernel values against all the training rows. Pass the Gram matrix of the paired rows alone as `x` (and `%s` renumbered into them).",
          spec$argname("pairs"))
  }
  spec$opts$pairs <- pr$pairs
  spec$opts$similar <- pr$similar
  spec
}

# The rows the KPCA trick fits on for a spec with given pairs (the distinct
# rows of its pairs, in order) when the feature map is a KPCA of n rows;
# NULL when every row is paired, the learner draws its pairs, or there is no
# KPCA.
paired_rows <- function(spec, fspec, n) {
  pairs <- spec$opts$pairs
  if (is.null(pairs) || !isTRUE(learner_record(spec$name)$pairs) || fspec$type != "kpca") {
    return(NULL)
  }
  rows <- sort(unique(as.vector(pairs)))
  if (length(rows) == n) NULL else rows
}

# fit_pipeline() on the paired rows: the feature map fitted on xs[rows, ],
# every row projected by it, the learner fitted on the paired rows'
# coordinates with the pairs renumbered into them.  The result's
# coordinates are those of all rows, its pairs numbered as the rows of xs.
fit_paired_rows <- function(rows, xs, y, fspec, spec, ctx, neighbors = "feature",
                            warn = TRUE, label_errors = FALSE, standardized = FALSE) {
  sub <- xs[rows, , drop = FALSE]
  lm <- fspec$landmarks
  if (is.numeric(lm) && length(lm) == 1L && is.null(dim(lm)) && isTRUE(lm > length(rows))) {
    stopf("`landmarks` (%s) exceeds the %d rows that appear in a pair: with given pairs kmaha() fits the kernel PCA on those rows alone (see Pairs in ?kmaha). Give at most %d landmarks, or none (the exact kernel PCA of the %d rows).",
          format(lm), length(rows), length(rows), length(rows))
  }
  fm <- fit_feature_map(fspec, sub, ctx, warn, standardized, newdata = xs)
  coords <- fm$new_coords
  coords[rows, ] <- fm$coords
  dimnames(coords) <- list(rownames(xs), colnames(fm$coords))
  fm$new_coords <- NULL
  fm$describe <- sprintf("%s of the %d rows in a pair", fm$describe, length(rows))
  spec$opts$pairs[] <- match(spec$opts$pairs, rows)
  p <- fit_pipeline(sub, if (!is.null(y)) y[rows], fspec, spec, ctx, neighbors = neighbors,
                    warn = warn, label_errors = label_errors, standardized = standardized,
                    fm = fm)
  p$coords <- coords
  if (!is.null(p$details$pairs)) p$details$pairs$pairs[] <- rows[p$details$pairs$pairs]
  p$details$paired_rows <- rows
  p
}
