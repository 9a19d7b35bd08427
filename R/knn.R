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
#' @param newdata Query coordinates with the same columns as `x`; `NULL`
#'   classifies the training rows by leave-one-out (each row excluded from
#'   its own neighbours).
#' @param k Number of neighbours, a whole number between 1 and the number of
#'   training rows (minus one for leave-one-out).
#' @return A list with `class`, a factor with the levels of `y`, and `prob`, a
#'   matrix of vote fractions with one column per class.
#' @examples
#' idx <- c(1:25, 51:75, 101:125)
#' fit <- knn_classify(iris[idx, 1:4], iris$Species[idx], iris[-idx, 1:4], k = 3)
#' mean(fit$class == iris$Species[-idx])
#' head(fit$prob)
#' @export
knn_classify <- function(x, y, newdata = NULL, k = 1) {
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y", min_classes = 1L)
  k <- check_count(k, "k")
  self <- is.null(newdata)
  q <- if (self) x else check_newdata(newdata, colnames(x), ncol(x))
  knn_vote(x, y, q, k, self)
}

# Internal: inputs already validated; y a factor.
knn_vote <- function(x, y, q, k, self = FALSE) {
  n_max <- nrow(x) - as.integer(self)
  if (k > n_max) {
    stopf("`k` (%d) must not exceed the number of training rows%s (%d).",
          k, if (self) " minus one" else "", n_max)
  }
  res <- cpp_knn_classify(x, as.integer(y), nlevels(y), q, k, self)
  lev <- levels(y)
  prob <- res$prob
  colnames(prob) <- lev
  rownames(prob) <- rownames(q)
  list(class = factor(lev[res$class], levels = lev), prob = prob)
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
#' @param k Number of neighbours per row.
#' @param type `"same"` or `"other"`.
#' @return An `nrow(x)` by `k` integer matrix of row indices.
#' @examples
#' head(target_neighbors(iris[, 1:4], iris$Species, k = 2))
#' @export
target_neighbors <- function(x, y, k = 3, type = c("same", "other")) {
  type <- match.arg(type)
  x <- check_x(x, "x")
  y <- check_y(y, nrow(x), "y", min_classes = 1L)
  k <- check_count(k, "k")
  cpp_class_neighbors(x, as.integer(y), k, type == "same")
}
