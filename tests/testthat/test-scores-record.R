# Scores that cannot lie (issue 37, item 1): a scored-candidates object
# records every setting that shaped it and a hash of the data; kmaha(kernel
# = <scores>) takes the recorded value of every argument the call leaves
# out, refuses one set to another value (naming it and the scores' value),
# refuses other data, and fits exactly the candidate print() names.

rec_data <- function() {
  set.seed(4)
  n <- 60
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- matrix(rnorm(n * 3), n) + 1.5 * cbind(as.integer(y), -as.integer(y), 0)
  list(x = x, y = y)
}
rec_kernels <- function() lapply(c(0.25, 1, 4, 16), rbf_kernel)

test_that("an argument set to another value than the scores' is an error naming both", {
  d <- rec_data()
  sc <- score_candidates(d$x, d$y, learner = "dne", kernels = rec_kernels(), seed = 2)
  # the case of the issue: each of seed, cv_folds, cv_strategy alone
  expect_error(kmaha(d$x, d$y, kernel = sc, seed = 1),
               "`kernel` holds scores computed with seed = 2, but this call sets seed = 1; leave `seed` out to fit with the scores' value, or score again with this value.",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, cv_folds = 10),
               "computed with cv_folds = 5, but this call sets cv_folds = 10", fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, cv_strategy = "exhaustive"),
               "computed with cv_strategy = \"fast\", but this call sets cv_strategy = \"exhaustive\"",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, seed = 1, cv_folds = 10,
                     cv_strategy = "exhaustive"),
               "`kernel` holds scores computed with", fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, learner_args = list(k = 2)),
               "computed with learner_args = list(), but this call sets learner_args = list(k = 2)",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, neighbors = "input"),
               "computed with neighbors = \"feature\", but this call sets neighbors = \"input\"",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, scale = FALSE),
               "computed with scale = TRUE, but this call sets scale = FALSE", fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, tol = 1e-6),
               "computed with tol = 1e-08, but this call sets tol = 1e-06", fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, rank = 5),
               "computed with rank = NULL, but this call sets rank = 5", fixed = TRUE)
  # scores made with the global random state: a seed now would be untrue
  sg <- score_candidates(d$x, d$y, learner = "dne", kernels = rec_kernels())
  expect_error(kmaha(d$x, d$y, kernel = sg, seed = 2),
               "computed with seed = NULL, but this call sets seed = 2", fixed = TRUE)
  # the scores' own values may be repeated
  f <- kmaha(d$x, d$y, kernel = sc, seed = 2, cv_folds = 5, cv_strategy = "fast",
             learner = "dne", kernels = rec_kernels())
  expect_s3_class(f, "kmaha_fit")
})

test_that("arguments left out take the scores' values, and the model says so", {
  d <- rec_data()
  ks <- rec_kernels()
  sc <- score_candidates(d$x, d$y, learner = "dne", kernels = ks, seed = 2, folds = 3,
                         strategy = "exhaustive")
  f <- kmaha(d$x, d$y, kernel = sc)
  fresh <- kmaha(d$x, d$y, learner = "dne", kernels = ks, seed = 2, cv_folds = 3,
                 cv_strategy = "exhaustive")
  expect_identical(f$learner, fresh$learner)
  expect_identical(f$kernel_choice$cv$best, fresh$kernel_choice$cv$best)
  expect_identical(f$L, fresh$L)
  # summary() reports the settings the scores were made with
  set <- summary(f)$settings
  expect_identical(set$seed, 2)
  expect_identical(set$cv_folds, 3L)
  expect_identical(set$cv_strategy, "exhaustive")
  out <- gsub("\\s+", " ", paste(capture.output(print(f)), collapse = " "))
  expect_match(out, "Selected from the scores given as `kernel`, without scoring again",
               fixed = TRUE)
  expect_match(out,
               "taken from them (seed = 2, cv_folds = 3, cv_strategy = \"exhaustive\", learner = \"dne\"",
               fixed = TRUE)
})

test_that("another kernel list is refused, and the fit is the kernel print() names", {
  d <- rec_data()
  ks <- rec_kernels()
  # scored on the list in reverse order; the fit leaves `kernels` out
  sc <- score_candidates(d$x, d$y, learner = "dne", candidates = "kernels",
                         kernels = rev(ks), seed = 1, folds = 3, strategy = "exhaustive")
  f <- kmaha(d$x, d$y, kernel = sc)
  best <- f$kernel_choice$cv$best
  expect_identical(f$feature_map$kernel, rev(ks)[[best]])
  expect_match(gsub("\\s+", " ", paste(capture.output(print(f)), collapse = " ")),
               sprintf("kernel: %s, chosen by", sc$curve$label[best]), fixed = TRUE)
  # a list in another order or a shorter one: an error naming `kernels`
  expect_error(kmaha(d$x, d$y, kernel = sc, kernels = ks),
               "`kernel` holds scores computed with kernels = 4 kernels (RBF sigma = 16, RBF sigma = 4, ..., RBF sigma = 0.25), but this call sets kernels = 4 kernels (RBF sigma = 0.25",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, kernels = ks[1:2]),
               "but this call sets kernels = list(RBF sigma = 0.25; RBF sigma = 1)", fixed = TRUE)
  # the paper's list against scores of the paper's list reversed: the case
  # of the issue (0.5.2 fitted sigma 50 and printed sigma 0.5)
  expect_error(kmaha(d$x, d$y, kernel = sc, kernels = paper_kernels()),
               "but this call sets kernels = 21 kernels", fixed = TRUE)
})

test_that("other data of the same dimensions and class sizes are recognised", {
  d <- rec_data()
  sc <- score_candidates(d$x, d$y, learner = "dne", kernels = rec_kernels(), seed = 1)
  other <- "`kernel` holds scores of other data: `x` and `y` have the scored dimensions and class sizes, but other values or another order of the rows or labels"
  # permuted labels (two rows of different classes swap labels)
  y2 <- d$y
  y2[1:2] <- d$y[2:1]
  expect_error(kmaha(d$x, y2, kernel = sc), other, fixed = TRUE)
  # two values of a column swapped: the column sums are unchanged
  x2 <- d$x
  x2[1:2, 1] <- d$x[2:1, 1]
  expect_error(kmaha(x2, d$y, kernel = sc), other, fixed = TRUE)
  # the rows in another order
  o <- c(2:60, 1)
  expect_error(kmaha(d$x[o, ], d$y[o], kernel = sc), other, fixed = TRUE)
  # one value changed in its last bits
  x3 <- d$x
  x3[5, 2] <- x3[5, 2] * (1 + 1e-15)
  expect_error(kmaha(x3, d$y, kernel = sc), other, fixed = TRUE)
  # other class sizes, other dimensions
  expect_error(kmaha(d$x, factor(rep(c("a", "b"), 30)), kernel = sc),
               "`kernel` holds scores of other labels (classes a: 20, b: 20, c: 20), but `y` has classes a: 30, b: 30",
               fixed = TRUE)
  # the same values in a copy, and as a data frame: accepted
  expect_s3_class(kmaha(d$x + 0, d$y, kernel = sc), "kmaha_fit")
  expect_s3_class(kmaha(as.data.frame(d$x), d$y, kernel = sc), "kmaha_fit")
  # scores of cv_kernel() (inputs as given) cannot be a kmaha() fit's
  cvk <- cv_kernel(d$x, d$y, "dne", kernels = rec_kernels(), seed = 1)
  expect_error(kmaha(d$x, d$y, kernel = cvk),
               "`kernel` holds scores of cv_kernel(), which scores `x` as given", fixed = TRUE)
  # scores of 0.5.2 and earlier kept only sums: refused
  old <- sc
  old$fingerprint$hash <- NULL
  expect_error(kmaha(d$x, d$y, kernel = old),
               "`kernel` holds scores without a record of the data and settings they were computed with",
               fixed = TRUE)
})

test_that("rule = \"auto\" needs the baselines among the scores", {
  d <- rec_data()
  sk <- score_candidates(d$x, d$y, learner = "dne", candidates = "kernels",
                         kernels = rec_kernels(), seed = 1)
  expect_error(kmaha(d$x, d$y, kernel = sk, rule = "auto"),
               "`rule = \"auto\"` keeps a kernel only when it beats the baselines (Euclidean k-NN and the linear learner), but the scores given as `kernel` hold base kernels only",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, learner = "dne", kernel = "cv", kernels = rec_kernels(),
                     rule = "auto"),
               "but kernel = \"cv\" scores the base kernels only; use rule = \"cv\"", fixed = TRUE)
  # the default rule of such scores is the paper's
  expect_identical(kmaha(d$x, d$y, kernel = sk)$kernel_choice$type, "cv")
})

test_that("a learner function and fold labels are recorded too", {
  d <- rec_data()
  ks <- rec_kernels()[2:3]
  lf <- function(x, y, ...) diag(ncol(x))
  sc <- score_candidates(d$x, d$y, learner = lf, candidates = "kernels", kernels = ks,
                         seed = 1, folds = 3)
  f <- kmaha(d$x, d$y, kernel = sc)
  expect_identical(f$learner, "custom")
  expect_error(kmaha(d$x, d$y, kernel = sc, learner = "dne"),
               "computed with learner = a learner function, but this call sets learner = \"dne\"",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = sc, learner = function(x, y, ...) 2 * diag(ncol(x))),
               "computed with learner = a learner function, but this call sets learner = a learner function",
               fixed = TRUE)
  folds <- rep(1:4, length.out = 60)
  sl <- score_candidates(d$x, d$y, learner = "dne", candidates = "kernels", kernels = ks,
                         folds = folds)
  fl <- kmaha(d$x, d$y, kernel = sl)
  expect_identical(fl$settings$cv_folds, 4L)
  expect_error(kmaha(d$x, d$y, kernel = sl, cv_folds = 4),
               "`kernel` holds scores computed with fold labels given to score_candidates() (4 folds), but this call sets cv_folds = 4",
               fixed = TRUE)
})
