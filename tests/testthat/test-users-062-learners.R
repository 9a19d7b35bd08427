# What a user coming from the CRAN packages lfda and dml, or from Python's
# metric-learn, found in lfda(), rca(), mmc() and itml() (alone and through
# kmaha()) on data no other test uses (MASS's Pima.tr and birthwt): each
# test failed before its fix.

pima_x <- function() MASS::Pima.tr[, 1:7]
pima_y <- function() MASS::Pima.tr$type
# birthwt with a factor outcome and two missing ages (rows 3 and 10), so
# the model frame keeps 187 of the 189 rows
bwt <- function() {
  d <- MASS::birthwt
  d$low <- factor(d$low, labels = c("normal", "low"))
  d$age[c(3, 10)] <- NA
  d
}

test_that("the default methods refuse a partial argument name, as the formula methods do", {
  x <- pima_x()
  y <- pima_y()
  # lfda::lfda()'s dimension is `r`; R took it as `reg = 2` without a word
  expect_error(lfda(x, y, r = 2),
               "`r` is not an argument of lfda(); it is only the start of `reg`. Write argument names in full (see ?lfda).",
               fixed = TRUE)
  expect_error(rca(x, y, d = 2),
               "`d` is not an argument of rca(); it is only the start of `dim`. Write argument names in full (see ?rca).",
               fixed = TRUE)
  expect_error(mmc(x, y, diag = TRUE),
               "`diag` is not an argument of mmc(); it is only the start of `diagonal`. Write argument names in full (see ?mmc).",
               fixed = TRUE)
  expect_error(itml(x, y, g = 2),
               "`g` is not an argument of itml(); it is only the start of `gamma`. Write argument names in full (see ?itml).",
               fixed = TRUE)
  # names passed on through a wrapper's `...` are read as typed too
  wrap <- function(...) lfda(...)
  expect_error(wrap(x, y, r = 2), "`r` is not an argument of lfda()", fixed = TRUE)
  # full names, and the formula methods' calls of the default methods, still work
  expect_identical(wrap(x, y, reg = 0.01, dim = 2)$L, lfda(x, y, reg = 0.01, dim = 2)$L)
  f <- lfda(type ~ ., data = MASS::Pima.tr, dim = 2)
  expect_equal(unname(f$L), unname(lfda(x, y, dim = 2)$L))
})

test_that("pairs of the wrong shape are described in plain words", {
  x <- pima_x()
  # (was: "... not a integer matrix with 1 column(s).")
  expect_error(mmc(x, pairs = matrix(1:4, ncol = 1), similar = c(1, -1, 1, -1)),
               "`pairs` must be a two-column numeric matrix of row indices of `x`, one pair per row, not an integer matrix with 1 column.",
               fixed = TRUE)
  # one pair as a plain vector, as metric-learn users write it (was: "... not a numeric.")
  expect_error(itml(x, pima_y(), pairs = c(1, 5), similar = 1),
               "`pairs` must be a two-column numeric matrix of row indices of `x`, one pair per row, not a double vector of length 2 (one pair is the one-row matrix rbind(c(i, j))).",
               fixed = TRUE)
})
