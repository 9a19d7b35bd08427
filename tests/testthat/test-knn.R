# k-nearest-neighbour classification: agreement with class::knn and a
# plain-R brute force, the documented tie rule, blocking over > 512 query
# rows, leave-one-out, target neighbours and the error messages.

# Plain-R brute force with the documented rule: neighbours ordered by
# (distance, row), the largest vote wins, ties go to the class of the
# nearest neighbour among the tied classes.
brute_knn <- function(x, y, q, k, self = FALSE) {
  y <- as.factor(y)
  out <- character(nrow(q))
  for (i in seq_len(nrow(q))) {
    d <- colSums((t(x) - q[i, ])^2)
    cand <- seq_len(nrow(x))
    if (self) cand <- cand[cand != i]
    nb <- cand[order(d[cand], cand)][seq_len(k)]
    votes <- table(factor(y[nb], levels = levels(y)))
    tied <- names(votes)[votes == max(votes)]
    out[i] <- as.character(y[nb][as.character(y[nb]) %in% tied][1])
  }
  factor(out, levels = levels(y))
}

set.seed(7)
n_tr <- 120
xtr <- matrix(rnorm(n_tr * 3), n_tr, 3)
y3 <- factor(sample(c("a", "b", "c"), n_tr, replace = TRUE))
y2 <- factor(ifelse(xtr[, 1] + rnorm(n_tr, sd = 0.8) > 0, "pos", "neg"))
xte <- matrix(rnorm(90 * 3), 90, 3)

test_that("knn_classify agrees exactly with class::knn without ties", {
  skip_if_not_installed("class")
  # k = 1: continuous data, no distance ties
  expect_identical(knn_classify(xtr, y3, xte, k = 1)$class,
                   class::knn(xtr, xte, y3, k = 1))
  # k = 3 with two classes: no vote ties
  expect_identical(knn_classify(xtr, y2, xte, k = 3)$class,
                   class::knn(xtr, xte, y2, k = 3))
  # k = 3 with three classes: agree wherever the vote has a strict winner
  ours <- knn_classify(xtr, y3, xte, k = 3)
  ref <- class::knn(xtr, xte, y3, k = 3, prob = TRUE)
  strict <- apply(ours$prob, 1, function(p) sum(p == max(p)) == 1)
  expect_gt(sum(strict), 40)
  expect_identical(ours$class[strict], ref[strict])
  expect_equal(unname(apply(ours$prob, 1, max))[strict], attr(ref, "prob")[strict])
})

test_that("vote fractions are returned per class", {
  res <- knn_classify(xtr, y3, xte, k = 5)
  expect_identical(colnames(res$prob), levels(y3))
  expect_equal(unname(rowSums(res$prob)), rep(1, nrow(xte)))
  expect_true(all(res$prob * 5 == round(res$prob * 5)))
  expect_identical(res$class, brute_knn(xtr, y3, xte, 5))
})

test_that("ties follow the documented rule", {
  # equal distances: the lower training row comes first
  x <- matrix(c(1, -1), ncol = 1)
  q <- matrix(0, 1, 1)
  expect_identical(as.character(knn_classify(x, factor(c("B", "A")), q, 1)$class), "B")
  expect_identical(as.character(knn_classify(x, factor(c("A", "B")), q, 1)$class), "A")
  # tied votes: the class of the nearest neighbour among the tied classes
  x <- matrix(c(0.1, 0.2, 0.3, 0.4), ncol = 1)
  y <- factor(c("z", "y", "y", "z"))
  expect_identical(as.character(knn_classify(x, y, q, 2)$class), "z")
  expect_identical(as.character(knn_classify(x, y, q, 4)$class), "z")
  y <- factor(c("y", "z", "z", "y"))
  expect_identical(as.character(knn_classify(x, y, q, 4)$class), "y")
  # three-way vote tie: nearest of the three wins
  x <- matrix(c(0.3, 0.1, 0.2), ncol = 1)
  y <- factor(c("p", "q", "r"))
  expect_identical(as.character(knn_classify(x, y, q, 3)$class), "q")
  # on many tied grids the rule matches the brute force
  set.seed(2)
  xg <- matrix(sample(0:3, 200, replace = TRUE), 100, 2)
  yg <- factor(sample(letters[1:3], 100, replace = TRUE))
  qg <- matrix(sample(0:3, 60, replace = TRUE), 30, 2)
  for (k in c(1, 2, 4, 7)) {
    expect_identical(knn_classify(xg, yg, qg, k)$class, brute_knn(xg, yg, qg, k))
  }
})

test_that("more than 512 query rows are processed in blocks correctly", {
  set.seed(5)
  q <- matrix(rnorm(1300 * 3), 1300, 3)
  res <- knn_classify(xtr, y3, q, k = 1)
  expect_length(res$class, 1300L)
  expect_identical(res$class, brute_knn(xtr, y3, q, 1))
  skip_if_not_installed("class")
  expect_identical(knn_classify(xtr, y2, q, k = 3)$class,
                   class::knn(xtr, q, y2, k = 3))
})

test_that("leave-one-out excludes each point from its own neighbours", {
  loo1 <- knn_classify(xtr, y3, k = 1)$class
  expect_identical(loo1, brute_knn(xtr, y3, xtr, 1, self = TRUE))
  expect_identical(knn_classify(xtr, y3, k = 4)$class,
                   brute_knn(xtr, y3, xtr, 4, self = TRUE))
  skip_if_not_installed("class")
  expect_identical(loo1, class::knn.cv(xtr, y3, k = 1))
  expect_identical(knn_classify(xtr, y2, k = 3)$class, class::knn.cv(xtr, y2, k = 3))
  # with duplicated rows the copy (not the point itself) is the neighbour
  xd <- rbind(xtr[1:5, ], xtr[1:5, ])
  yd <- factor(rep(c("u", "v", "u", "v", "u"), 2))
  expect_identical(knn_classify(xd, yd, k = 1)$class, yd)
})

test_that("target_neighbors finds same- and other-class neighbours", {
  brute_targets <- function(x, y, k, same) {
    t(vapply(seq_len(nrow(x)), function(i) {
      d <- colSums((t(x) - x[i, ])^2)
      cand <- which(seq_len(nrow(x)) != i & ((y == y[i]) == same))
      nb <- cand[order(d[cand], cand)][seq_len(k)]
      as.integer(nb)
    }, integer(k)))
  }
  expect_identical(target_neighbors(xtr, y3, k = 3, type = "same"),
                   brute_targets(xtr, y3, 3, TRUE))
  expect_identical(target_neighbors(xtr, y3, k = 2, type = "other"),
                   brute_targets(xtr, y3, 2, FALSE))
  # a class too small to supply k neighbours leaves NA
  y <- factor(c(rep("big", 10), "solo", "pair", "pair"))
  tn <- target_neighbors(xtr[1:13, ], y, k = 2)
  expect_true(all(is.na(tn[11, ])))
  expect_identical(is.na(tn[12, ]), c(FALSE, TRUE))
  expect_identical(tn[12, 1], 13L)
})

test_that("knn_classify rejects bad input with clear messages", {
  expect_error(knn_classify(xtr, y3, xte, k = 121),
               "`k` (121) must not exceed the number of training rows (120).",
               fixed = TRUE)
  expect_error(knn_classify(xtr, y3, k = 120),
               "`k` (120) must not exceed the number of training rows minus one (119).",
               fixed = TRUE)
  expect_error(knn_classify(xtr, y3, xte, k = 0),
               "`k` must be a single whole number >= 1.", fixed = TRUE)
  expect_error(knn_classify(xtr, y3, xte, k = 1.5),
               "`k` must be a single whole number >= 1.", fixed = TRUE)
  expect_error(knn_classify(xtr, y3[-1], xte),
               "`y` has length 119 but `x` has 120 rows; they must match.",
               fixed = TRUE)
  expect_error(knn_classify(xtr, y3, xte[, 1:2]),
               "`newdata` has 2 columns but the model was trained on 3.",
               fixed = TRUE)
  # a row with a missing value is classified as NA (the others as usual)
  bad <- xte
  bad[4, 2] <- NA
  res_na <- knn_classify(xtr, y3, bad)
  expect_identical(which(is.na(res_na$class)), 4L)
  expect_true(all(is.na(res_na$prob[4, ])))
  expect_identical(res_na$class[-4], knn_classify(xtr, y3, xte[-4, ])$class)
  yna <- y3
  yna[3] <- NA
  expect_error(knn_classify(xtr, yna, xte), "`y` contains missing labels.",
               fixed = TRUE)
  expect_error(knn_classify(xtr, rnorm(120), xte),
               "`y` must hold class labels (a factor), but it is continuous.",
               fixed = TRUE)
})

test_that("apply_map() is x %*% t(L) with the same dimnames, through Eigen", {
  set.seed(41)
  x <- matrix(rnorm(37 * 5), 37, 5, dimnames = list(paste0("r", 1:37), NULL))
  L <- matrix(rnorm(3 * 5), 3, 5, dimnames = list(paste0("dim", 1:3), NULL))
  z <- apply_map(x, L, test_ctx())
  expect_equal(z, x %*% t(L), tolerance = 1e-13)
  expect_identical(dimnames(z), list(rownames(x), rownames(L)))
  # integer input, one row, and an empty inner dimension
  xi <- matrix(1:10, 2, 5)
  expect_equal(apply_map(xi, L, test_ctx()), xi %*% t(L), tolerance = 1e-13, ignore_attr = TRUE)
  expect_equal(apply_map(x[1, , drop = FALSE], L, test_ctx()), x[1, , drop = FALSE] %*% t(L),
               tolerance = 1e-13)
  expect_equal(apply_map(matrix(0, 4, 0), matrix(0, 2, 0), test_ctx()), matrix(0, 4, 2),
               ignore_attr = TRUE)
  expect_error(apply_map(x, L[, 1:4], test_ctx()), "one column per column of X")
})

test_that("target_neighbors() bounds k by the rows there are", {
  x <- as.matrix(iris[, 1:4])
  expect_error(target_neighbors(x, iris$Species, k = 1e9),
               "`k` (1000000000) must not exceed the number of rows of `x` minus one (149): a row has no more other rows to be its neighbours.",
               fixed = TRUE)
  expect_error(target_neighbors(x, iris$Species, k = 1e10),
               "`k` (1e+10) must be at most 2147483647.", fixed = TRUE)
  # the largest k allowed: every other row of the class, then NA
  tn <- target_neighbors(x, iris$Species, k = 149)
  expect_identical(dim(tn), c(150L, 149L))
  expect_identical(unname(rowSums(!is.na(tn))), rep(49, 150))
})

test_that("kNN and the neighbour searches do not depend on the scale of the inputs", {
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species
  idx <- seq(1, 150, 2)
  ref <- knn_classify(x[idx, ], y[idx], x[-idx, ], k = 3)
  ref_loo <- knn_classify(x[idx, ], y[idx], k = 3)
  ref_same <- target_neighbors(x, y, 3)
  ref_other <- target_neighbors(x, y, 3, "other")
  dne_nb <- function(z) kmaha:::core_dne_neighbors(z, as.integer(y), 2L, FALSE, kmaha:::kmaha_context())
  ref_dne <- dne_nb(x)
  expect_identical(ref_dne, dne(x, y, k = 2, dim = 2, scale = FALSE)$targets)
  # powers of two rescale exactly, so everything must be identical, including
  # ties; squared distances at 2^-700 underflow and at 2^700 overflow
  for (s in 2^c(-1000, -700, -120, 120, 700, 1000)) {
    expect_identical(knn_classify(x[idx, ] * s, y[idx], x[-idx, ] * s, k = 3), ref)
    expect_identical(knn_classify(x[idx, ] * s, y[idx], k = 3), ref_loo)
    expect_identical(target_neighbors(x * s, y, 3), ref_same)
    expect_identical(target_neighbors(x * s, y, 3, "other"), ref_other)
    expect_identical(dne_nb(x * s), ref_dne)
  }
  # the case reported: inputs scaled by 1e-200 (not a power of two)
  acc <- function(f) mean(f$class == y[-idx])
  tiny <- knn_classify(x[idx, ] * 1e-200, y[idx], x[-idx, ] * 1e-200)
  # (rounding may resolve a tie differently: at most one test point apart)
  expect_lte(abs(acc(tiny) - acc(knn_classify(x[idx, ], y[idx], x[-idx, ]))), 1 / 75 + 1e-12)
  expect_gt(acc(tiny), 0.9)
})
