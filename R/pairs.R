# Pairwise constraints, shared by the pair learners mmc() and itml(): the
# checks of pairs given by the user, and the pairs drawn from class labels.

# `pairs` (an m x 2 matrix of row indices of x) and `similar` (+1 similar,
# -1 dissimilar) checked against n rows; `fun` names the learner ("mmc()").
# Returns list(pairs = integer matrix, similar = double vector).
check_pairs <- function(pairs, similar, n, fun) {
  if (is.data.frame(pairs)) pairs <- as.matrix(pairs)
  if (!is.matrix(pairs) || ncol(pairs) != 2L || !(is.numeric(pairs) || is.logical(pairs) && all(is.na(pairs)))) {
    stopf("`pairs` must be a two-column numeric matrix of row indices of `x`, one pair per row, not %s.",
          if (is.matrix(pairs)) sprintf("a %s matrix with %d column(s)", typeof(pairs), ncol(pairs))
          else sprintf("a %s", class(pairs)[1]))
  }
  m <- nrow(pairs)
  if (m == 0L) stopf("`pairs` has no rows: %s needs similar and dissimilar pairs.", fun)
  if (anyNA(pairs)) {
    stopf("`pairs` contains missing values (row %d): every pair needs two row indices of `x`.",
          which(rowSums(is.na(pairs)) > 0L)[1])
  }
  bad <- which(!is.finite(pairs) | pairs != round(pairs))
  if (length(bad)) {
    r <- (bad[1] - 1L) %% m + 1L
    stopf("`pairs` must hold whole numbers (row indices of `x`); row %d has %s.",
          r, format(pairs[bad[1]]))
  }
  out <- which(pairs < 1 | pairs > n)
  if (length(out)) {
    r <- (out[1] - 1L) %% m + 1L
    stopf("`pairs` row %d refers to row %s of `x`, which has %d rows.", r,
          format(pairs[out[1]]), n)
  }
  self <- which(pairs[, 1] == pairs[, 2])
  if (length(self)) {
    stopf("`pairs` row %d pairs row %d of `x` with itself; a pair needs two different rows.",
          self[1], as.integer(pairs[self[1], 1]))
  }
  if (is.null(similar)) {
    stopf("`similar` is missing: give one value per row of `pairs`, 1 (similar) or -1 (dissimilar).")
  }
  if (!is.numeric(similar) && !(is.logical(similar) && all(is.na(similar)))) {
    stopf("`similar` must be a numeric vector of 1 (similar) and -1 (dissimilar), not a %s.",
          class(similar)[1])
  }
  if (length(similar) != m) {
    stopf("`similar` has length %d but `pairs` has %d rows; they must match.",
          length(similar), m)
  }
  wrong <- which(is.na(similar) | !similar %in% c(1, -1))
  if (length(wrong)) {
    stopf("`similar` must hold 1 (similar) or -1 (dissimilar) only; element %d is %s.",
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
    stopf("The pair of rows %d and %d of `x` is marked both similar and dissimilar (`pairs` rows %d and %d); remove one of them.",
          lo[rows[1]], hi[rows[1]], min(rows), max(rows))
  }
  if (!length(neg)) {
    stopf("All pairs are similar: %s needs dissimilar pairs too (`similar` = -1).", fun)
  }
  if (!length(pos)) {
    stopf("All pairs are dissimilar: %s needs similar pairs too (`similar` = 1).", fun)
  }
  dimnames(pairs) <- NULL
  list(pairs = pairs, similar = as.double(similar))
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

# The pairs a pair learner fits from: given (checked against the rows of
# z), or drawn from the labels y.  `fun` names the learner.
learner_pairs <- function(o, z, y, fun) {
  if (!is.null(o$pairs)) return(check_pairs(o$pairs, o$similar, nrow(z), fun))
  if (is.null(y)) {
    stopf("%s needs class labels `y` or pairs (`pairs` and `similar`).", fun)
  }
  draw_pairs(y, o$n_pairs %||% default_n_pairs(y))
}
