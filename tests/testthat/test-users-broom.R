# broom verbs added for issue 27: tidy() of a model is a summary by default
# (the whole map on request), and augment() of cross-validations,
# alignments and reproductions, each checked against an independent
# computation.

iris_xs <- scale(as.matrix(iris[, 1:4]))

test_that("tidy() of a model gives one row per learned dimension by default", {
  kfit <- kmaha(iris_xs, iris$Species, learner = "nca", kernel = rbf_kernel(1),
                learner_args = list(max_iter = 20))
  L <- coef(kfit)
  expect_gt(length(L), 1000L)           # the map: dimensions x KPCA components
  t <- tidy(kfit)
  expect_identical(t, tidy(kfit, matrix = "dimensions"))
  expect_identical(nrow(t), nrow(L))
  expect_equal(t$norm, unname(sqrt(rowSums(L^2))))
  expect_identical(nrow(tidy(kfit, matrix = "map")), length(L))
  fit <- dne(iris_xs, iris$Species, dim = 2)
  expect_identical(names(tidy(fit)), c("dimension", "std.dev", "percent", "cumulative", "norm"))
})

test_that("augment() of a cross-validation gives each row's fold and held-out correctness", {
  cv <- cv_kernel(iris_xs, iris$Species, "dne",
                  kernels = lapply(c(0.01, 0.5, 1, 5), rbf_kernel), folds = 3, seed = 1)
  expect_true(any(cv$curve$dropped))
  a <- augment(cv, data = iris)
  expect_identical(nrow(a), 150L)
  expect_s3_class(a, "tbl_df")
  expect_identical(as.data.frame(a[, 1:5]), iris)
  expect_identical(a$.fold, as.integer(cv$folds))
  # within a fold, the mean correctness is the fold accuracy of the choice
  expect_equal(as.vector(tapply(a$.correct, a$.fold, mean)), unname(cv$accuracy[cv$best, ]))
  all <- augment(cv, candidates = "all")
  expect_identical(names(all), c(".row", ".fold", paste0(".correct_", seq_len(nrow(cv$curve)))))
  for (j in seq_len(nrow(cv$curve))) {
    acc <- vapply(1:3, function(f) mean(all[[paste0(".correct_", j)]][all$.fold == f]), 0)
    expect_equal(acc, unname(cv$accuracy[j, ]), info = cv$curve$label[j])
  }
  # a dropped candidate was only fitted on the first fold
  d <- which(cv$curve$dropped)[1]
  expect_true(all(is.na(all[[paste0(".correct_", d)]][all$.fold != 1])))
  two <- augment(cv, candidates = c(3, 2))
  expect_identical(names(two), c(".row", ".fold", ".correct_3", ".correct_2"))
  expect_error(augment(cv, candidates = 9),
               "`candidates` must be NULL (the chosen one), \"all\", or candidate numbers between 1 and 4 (the rows of tidy()).",
               fixed = TRUE)
  expect_error(augment(cv, data = iris[1:10, ]),
               "`data` must be the training data of the cross-validation (150 rows, in order), not 10 rows.",
               fixed = TRUE)
  expect_error(augment(cv, newdata = iris), "Unknown argument(s) to augment(): 'newdata'.",
               fixed = TRUE)
})

test_that("augment() of a kmaha() fit's kernel choice works on its cross-validation", {
  fit <- kmaha(Species ~ ., iris, learner = "dne", kernels = lapply(c(0.5, 2), rbf_kernel),
               cv_folds = 3, seed = 2)
  cv <- fit$kernel_choice$cv
  a <- augment(cv)
  expect_equal(as.vector(tapply(a$.correct, a$.fold, mean)), unname(cv$accuracy[cv$best, ]))
})

# The alignment with the labels and the kernel's leave-one-out 1-NN,
# computed from the whole Gram matrix and the ideal kernel.
alignment_by_hand <- function(K, y) {
  y <- factor(y)
  p <- nlevels(y)
  Y <- ifelse(outer(y, y, "=="), 1, -1 / (p - 1))
  share <- rowSums(K * Y) / (norm(K, "F") * norm(Y, "F"))
  D <- outer(diag(K), diag(K), "+") - 2 * K
  diag(D) <- Inf
  list(share = share, pred = y[apply(D, 1, which.min)])
}

test_that("augment() of an alignment splits the alignment by row and gives the kernel's 1-NN", {
  al <- align_kernels(iris_xs, iris$Species, lapply(c(0.5, 1, 5), rbf_kernel))
  a <- augment(al, data = iris_xs, y = iris$Species)
  expect_equal(sum(a$.alignment), al$alignment, tolerance = 1e-10)
  ref <- alignment_by_hand(kernel_matrix(al$kernel, iris_xs), iris$Species)
  expect_equal(a$.alignment, unname(ref$share), tolerance = 1e-10)
  expect_identical(a$.pred_class, ref$pred)
  expect_equal(as.matrix(a[, 1:4]), iris_xs[1:150, ], ignore_attr = TRUE)
  # precomputed Gram matrices give the same values
  ks <- lapply(c(0.5, 1, 5), rbf_kernel)
  grams <- lapply(ks, kernel_matrix, x = iris_xs)
  alg <- align_kernels(grams, iris$Species, kernels = "precomputed")
  ag <- augment(alg, y = iris$Species)
  expect_identical(names(ag), c(".row", ".alignment", ".pred_class"))
  expect_equal(ag$.alignment, a$.alignment, tolerance = 1e-8)
  expect_identical(ag$.pred_class, a$.pred_class)
  expect_error(augment(al, data = iris_xs),
               "augment() of an alignment needs the training labels `y` (as given to align_kernels()).",
               fixed = TRUE)
  expect_error(augment(al, y = iris$Species),
               "augment() of an alignment needs `data`, the training inputs given to align_kernels() (rows in order).",
               fixed = TRUE)
  expect_error(augment(al, data = iris_xs, y = iris$Species[-1]),
               "`y` has length 149 but `x` has 150 rows", fixed = TRUE)
})

test_that("augment() of an alignment works in blocks of rows on more than 1000 points", {
  set.seed(5)
  n <- 1100
  x <- matrix(rnorm(n * 3), n, 3)
  y <- factor(ifelse(rowSums(x^2) > 3, "out", "in"))
  al <- align_kernels(x, y, lapply(c(0.5, 2), rbf_kernel))
  a <- augment(al, data = x, y = y)
  ref <- alignment_by_hand(kernel_matrix(al$kernel, x), y)
  expect_equal(a$.alignment, unname(ref$share), tolerance = 1e-10)
  expect_equal(sum(a$.alignment), al$alignment, tolerance = 1e-10)
  expect_identical(a$.pred_class, ref$pred)
})

test_that("augment() of a reproduction adds the paper's value and the gain over linear", {
  res <- reproduce_paper(datasets = "iris", learners = "dne",
                         kernels = c("linear", "unweighted"), splits = 2)
  a <- augment(res)
  expect_identical(nrow(a), nrow(res))
  expect_identical(a$accuracy, res$accuracy)
  s <- summary(res)
  m <- match(paste(a$learner, a$kernel), paste(s$learner, s$kernel))
  expect_identical(a$.paper_mean, s$paper_mean[m])
  expect_identical(a$.paper_sd, s$paper_sd[m])
  expect_equal(a$.difference, a$accuracy - a$.paper_mean)
  for (sp in 1:2) {
    lin <- res$accuracy[res$split == sp & res$kernel == "linear"]
    rows <- a$split == sp
    expect_identical(a$.linear_accuracy[rows], rep(lin, sum(rows)))
    expect_equal(a$.gain[rows], a$accuracy[rows] - lin)
  }
  # the mean gain per kernel column is the summary's mean difference
  uw <- a$kernel == "unweighted"
  expect_equal(mean(a$.gain[uw]), s$mean[s$kernel == "unweighted"] - s$mean[s$kernel == "linear"])
  # without a linear column there is nothing to compare with
  b <- augment(res[res$kernel == "unweighted", ])
  expect_true(all(is.na(b$.gain)))
})
