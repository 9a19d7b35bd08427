#' k-nearest-neighbour classification
#'
#' Classifies the rows of `newdata` by a majority vote among their `k`
#' nearest rows of `x` (Euclidean distance on the coordinates given, so pass
#' transformed coordinates to classify in a learned metric). Distances are
#' computed through matrix products in blocks of 512 query rows, so memory
#' stays bounded for large test sets.
#'
#' **Tie rule.** Neighbours are ordered by distance, and equal distances by
#' their row number in `x`. When several classes share the largest vote, the
#' class of the nearest neighbour among those classes wins. The rule is
#' deterministic; without ties the result equals `class::knn()`.
#'
#' @param x Training coordinates: a numeric matrix or data frame.
#' @param y Training class labels (a factor, or a vector coerced to one).
#' @param newdata Query coordinates with the same columns as `x` (matched by
#'   name when `x` has column names); `NULL` classifies the training rows by
#'   leave-one-out (each row excluded from its own neighbours). Rows with
#'   missing values get `NA`.
#' @param k Number of neighbours, a whole number between 1 and the number of
#'   training rows (minus one for leave-one-out).
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @return A list with `class`, a factor with the levels of `y` (including
#'   levels without rows), and `prob`, a matrix of vote fractions with one
#'   column per level (only 0 and 1 when `k = 1`).
#' @examples
#' idx <- c(1:25, 51:75, 101:125)
#' fit <- knn_classify(iris[idx, 1:4], iris$Species[idx], iris[-idx, 1:4], k = 3)
#' mean(fit$class == iris$Species[-idx])
#' head(fit$prob)
#' @export
knn_classify <- function(x, y, newdata = NULL, k = 1, num_threads = NULL) {
  x <- check_x(x, "x")
  y <- full_levels(check_y(y, nrow(x), "y", min_classes = 1L))
  k <- check_count(k, "k")
  ctx <- kmaha_context(num_threads)
  if (is.null(newdata)) return(knn_vote(x, y, x, k, self = TRUE, ctx = ctx))
  knn_predict(x, y, check_newdata(newdata, colnames(x), ncol(x)), k, ctx)
}

# kNN votes for query rows q that may hold missing values (NA class and
# probabilities for those rows) or no rows at all.
knn_predict <- function(x, y, q, k, ctx) {
  check_knn_k(k, nrow(x))
  ok <- rowSums(is.na(q)) == 0L
  lev <- levels(y)
  cls <- factor(rep(NA_character_, nrow(q)), levels = lev)
  prob <- matrix(NA_real_, nrow(q), length(lev), dimnames = list(rownames(q), lev))
  if (any(ok)) {
    res <- knn_vote(x, y, q[ok, , drop = FALSE], k, ctx = ctx)
    cls[ok] <- res$class
    prob[ok, ] <- res$prob
  }
  list(class = cls, prob = prob)
}

# Internal: inputs already validated; y a factor.
knn_vote <- function(x, y, q, k, self = FALSE, ctx) {
  check_knn_k(k, nrow(x), self)
  res <- core_knn_classify(x, as.integer(y), nlevels(y), q, k, self, ctx)
  lev <- levels(y)
  prob <- res$prob
  colnames(prob) <- lev
  rownames(prob) <- rownames(q)
  list(class = codes_factor(res$class, lev), prob = prob)
}

# `k` neighbours must exist among n training rows (n - 1 for leave-one-out).
check_knn_k <- function(k, n, self = FALSE) {
  n_max <- n - as.integer(self)
  if (k > n_max) {
    stopf("`k` (%d) must not exceed the number of training rows%s (%d).",
          k, if (self) " minus one" else "", n_max)
  }
  invisible(k)
}

# The one validator of neighbour lists supplied by the user (LMNN's
# `targets`, DNE's and KDNE's `targets$same` and `targets$other`): an n x k
# matrix of row indices of other rows (NA = none), each listing rows of the
# row's own class (same = TRUE) or of other classes (same = FALSE), without
# repeats.  `k`, when given, must equal the number of columns; with
# require_any = TRUE at least one neighbour must be listed.
check_neighbor_matrix <- function(m, y, arg, same = TRUE, k = NULL,
                                  require_any = FALSE) {
  n <- length(y)
  if (is.data.frame(m)) m <- as.matrix(m)
  if (!is.matrix(m) || !(is.numeric(m) || is.logical(m))) {
    stopf("`%s` must be an integer matrix with one row per observation (n x k).", arg)
  }
  if (nrow(m) != n) {
    stopf("`%s` has %d rows but there are %d observations; they must match.",
          arg, nrow(m), n)
  }
  if (ncol(m) < 1L) stopf("`%s` must have at least one column.", arg)
  if (!is.null(k) && ncol(m) != k) {
    stopf("`%s` has %d columns but `k` is %d; they must match.", arg, ncol(m), k)
  }
  v <- m[!is.na(m)]
  if (any(!is.finite(v)) || any(v != round(v)) || any(v < 1) || any(v > n)) {
    stopf("`%s` must hold row numbers between 1 and %d (or NA).", arg, n)
  }
  m <- matrix(as.integer(m), nrow(m), ncol(m))
  rows <- row(m)
  ok <- !is.na(m)
  if (require_any && !any(ok)) stopf("`%s` lists no neighbour at all (all NA).", arg)
  self <- m[ok] == rows[ok]
  if (any(self)) {
    stopf("`%s` lists row %d as its own neighbour; neighbours must be other rows.",
          arg, rows[ok][self][1])
  }
  yi <- as.integer(y)
  bad <- (yi[m[ok]] == yi[rows[ok]]) != same
  if (any(bad)) {
    stopf("`%s` row %d lists a point of %s; it must list neighbours of %s.",
          arg, rows[ok][bad][1],
          if (same) "another class" else "the same class",
          if (same) "the row's own class" else "other classes")
  }
  dup <- apply(m, 1L, function(t) anyDuplicated(t[!is.na(t)]) > 0L)
  if (any(dup)) stopf("`%s` row %d repeats a neighbour.", arg, which(dup)[1])
  m
}

#' Target neighbours
#'
#' For each row, the `k` nearest other rows of the same class (`type =
#' "same"`, the *target neighbours* of LMNN and DNE) or of other classes
#' (`type = "other"`), by Euclidean distance on the given coordinates.
#' Classes too small to supply `k` neighbours leave `NA` in the trailing
#' columns.
#'
#' @inheritParams knn_classify
#' @param k Number of neighbours per row, at most `nrow(x) - 1`.
#' @param type `"same"` or `"other"`.
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @return An `nrow(x)` by `k` integer matrix of row indices.
#' @examples
#' head(target_neighbors(iris[, 1:4], iris$Species, k = 2))
#' @export
target_neighbors <- function(x, y, k = 3, type = c("same", "other"), num_threads = NULL) {
  type <- match_choice(type, c("same", "other"), "type")
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y", min_classes = 1L)
  k <- check_count(k, "k")
  if (k > nrow(x) - 1L) {
    stopf("`k` (%d) must not exceed the number of rows of `x` minus one (%d): a row has no more other rows to be its neighbours.",
          k, nrow(x) - 1L)
  }
  core_class_neighbors(x, as.integer(y), k, type == "same", kmaha_context(num_threads))
}
