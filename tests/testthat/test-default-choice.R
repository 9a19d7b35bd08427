# The default kmaha(x, y): the learner and k chosen with the kernel
# (learner = "auto", k = NULL), and the better baseline kept.

test_that("one neighbour search votes every k as separate searches do", {
  set.seed(1)
  x <- matrix(rnorm(120), 60)
  y <- factor(sample(c("a", "b", "c"), 60, TRUE))
  q <- matrix(rnorm(40), 20)
  ctx <- kmaha:::kmaha_context(1)
  ks <- c(1L, 3L, 4L, 7L)
  votes <- kmaha:::core_knn_votes(x, as.integer(y), 3L, q, ks, ctx)
  expect_identical(dim(votes), c(20L, 4L))
  for (j in seq_along(ks)) {
    expect_identical(votes[, j], kmaha:::core_knn_classify(x, as.integer(y), 3L, q, ks[j],
                                                           FALSE, ctx)$class)
  }
})

test_that("scores at every k equal scoring with that k alone", {
  x <- as.matrix(iris[, 1:4])
  grid <- score_candidates(x, iris$Species, learner = "dne", seed = 3)
  expect_identical(grid$k, c(1L, 3L, 5L, 7L, 9L, 11L, 13L, 15L))
  for (kk in c(1L, 5L)) {
    one <- score_candidates(x, iris$Species, learner = "dne", k = kk, seed = 3)
    expect_equal(unname(grid$accuracy_k[, , paste0("k", kk)]), unname(one$accuracy))
  }
  # each row at its best k: the highest mean, the smallest k on ties
  m <- apply(grid$accuracy_k, c(1, 3), mean)
  ok <- !is.na(m[, 1])
  best <- apply(m[ok, , drop = FALSE], 1, which.max)
  expect_identical(grid$curve$k[ok], grid$k[best])
  # a row no fold scored (a kernel the screen left out) has no best k
  # (was: k = 1, the first of the grid, in print(), summary() and tidy())
  expect_true(any(!ok))
  expect_identical(grid$curve$k[!ok], rep(NA_integer_, sum(!ok)))
  expect_equal(grid$curve$mean[ok], m[ok, , drop = FALSE][cbind(seq_along(best), best)])
})

test_that("on overlapping classes k beyond 9 is considered and can win", {
  # two classes 0.8 standard deviations apart: held-out rows are voted
  # best by many neighbours (0.6.0 stopped at k = 9)
  set.seed(5)
  n <- 300
  y <- factor(rep(c("a", "b"), each = n / 2))
  x <- matrix(rnorm(n * 2), n)
  x[y == "b", 1] <- x[y == "b", 1] + 0.8
  sc <- kmaha(x, y, kernel = "linear", seed = 1)$kernel_choice$cv
  expect_identical(max(sc$k), 15L)
  expect_true(any(sc$curve$k > 9L))
  m <- apply(sc$accuracy_k, c(1, 3), mean)
  expect_identical(sc$curve$k, sc$k[apply(m, 1, which.max)])
})

test_that("learner = \"auto\" scores each learner as it would be scored alone", {
  x <- as.matrix(iris[, 1:4])
  auto <- score_candidates(x, iris$Species, k = 1, seed = 2)
  expect_setequal(unique(auto$curve$learner), c("nca", "lmnn", "dne", "euclidean"))
  for (lr in c("lmnn", "dne")) {
    one <- score_candidates(x, iris$Species, learner = lr, k = 1, seed = 2)
    rows <- auto$curve$learner %in% c(lr, "euclidean")
    expect_identical(auto$curve$candidate[rows], one$curve$candidate)
    expect_equal(auto$accuracy[rows, ], one$accuracy, tolerance = 1e-12)
  }
})

test_that("the default's fit is the pipeline its scores chose, with that learner and k", {
  fit <- kmaha(Species ~ ., iris, seed = 1)
  ch <- fit$kernel_choice
  row <- ch$cv$curve[ch$index, ]
  expect_identical(fit$k, as.integer(row$k))
  expect_identical(ch$k, fit$k)
  expect_identical(ch$learner, if (row$learner == "euclidean") "euclidean" else row$learner)
  expect_identical(fit$learner, ch$learner)
  expect_output(print(fit), sprintf("k = %d", fit$k), fixed = TRUE)
  # a given k is kept, and scored alone
  fit3 <- kmaha(Species ~ ., iris, k = 3, seed = 1)
  expect_identical(fit3$k, 3L)
  expect_identical(fit3$kernel_choice$cv$k, 3L)
})

test_that("a named learner with a given kernel fits without cross-validation, k = 1", {
  fit <- kmaha(Species ~ ., iris, learner = "dne", kernel = rbf_kernel(1))
  expect_null(fit$kernel_choice$cv)
  expect_identical(fit$k, 1L)
  # the learner chosen on a given kernel: its three learners scored
  auto <- kmaha(Species ~ ., iris, kernel = rbf_kernel(1), seed = 1)
  cu <- auto$kernel_choice$cv$curve
  expect_identical(cu$learner, c("nca", "lmnn", "dne"))
  expect_identical(auto$learner, cu$learner[auto$kernel_choice$index])
  expect_identical(auto$feature_map$kernel$sigma, 1)
})

test_that("learner_args reach the learners that take them", {
  specs <- kmaha:::learner_specs("auto", list(k = 5, mu = 0.3))
  expect_identical(specs$lmnn$opts$k, 5L)
  expect_identical(specs$lmnn$opts$mu, 0.3)
  expect_identical(specs$dne$opts$k, 5L)
  expect_null(specs$nca$opts$k)
  own <- kmaha:::learner_specs("auto", list(lmnn = list(k = 2), k = 4))
  expect_identical(own$lmnn$opts$k, 2L)
  expect_identical(own$dne$opts$k, 4L)
  expect_error(kmaha(iris[, 1:4], iris$Species, learner_args = list(foo = 1)),
               "'learner_args$foo' is an option of none of the learners (NCA, LMNN, DNE)",
               fixed = TRUE)
  expect_error(kmaha(iris[, 1:4], iris$Species, learner_args = list(lmnn = 3)),
               "`learner_args$lmnn` must be a named list of options for LMNN alone",
               fixed = TRUE)
})

# A curve and held-out correctness made up for the rule: Euclidean k-NN,
# the linear learner and a kernel, on 200 held-out points; the kernel is
# right where Euclidean k-NN is, except on `won` points Euclidean misses
# and `lost` points it gets.
made_up <- function(eu, lin, won = 0L, lost = 0L, ker = NULL) {
  n <- 200L
  e <- seq_len(n) <= eu
  k <- ker %||% {
    k <- e
    k[which(!e)[seq_len(won)]] <- TRUE
    k[which(e)[seq_len(lost)]] <- FALSE
    k
  }
  correct <- cbind(e, seq_len(n) <= lin, k)
  curve <- data.frame(candidate = 1:3, kind = c("euclidean", "linear", "kernel"),
                      label = c("Euclidean", "linear", "RBF"), learner = c("euclidean", "nca", "nca"),
                      sigma = c(NA, NA, 1), k = 1L, mean = colMeans(correct), sd = 0.01,
                      n_ok = 5L, dropped = FALSE, degenerate = FALSE, screen = NA_real_,
                      stringsAsFactors = FALSE)
  list(curve = curve, correct = correct)
}
`%||%` <- function(a, b) if (is.null(a)) b else a
chosen_kind <- function(m) m$curve$kind[kmaha:::auto_select(m$curve, m$correct, 5L)$best]

test_that("the better baseline is kept, whichever it is", {
  # Euclidean better than the linear learner, a kernel that beats Euclidean
  # on 6 points and loses on 5 (gain 0.005, standard error 0.017): Euclidean
  # is kept (0.5.2 kept the linear learner here)
  m <- made_up(eu = 170, lin = 150, won = 6, lost = 5)
  sel <- kmaha:::auto_select(m$curve, m$correct, 5L)
  expect_identical(m$curve$kind[sel$best], "euclidean")
  expect_match(sel$reason, "the better baseline, Euclidean")
  # no kernel worth it: the better baseline wins outright
  expect_identical(chosen_kind(made_up(eu = 170, lin = 150, ker = rep(c(TRUE, FALSE), 100))),
                   "euclidean")
  # a tie between the baselines goes to the simpler one
  expect_identical(chosen_kind(made_up(eu = 160, lin = 160, ker = rep(c(TRUE, FALSE), 100))),
                   "euclidean")
  # the linear learner better: it is the baseline a kernel must beat
  m4 <- made_up(eu = 140, lin = 170, ker = c(rep(TRUE, 171), rep(FALSE, 29)))
  m4$correct[, 3] <- m4$correct[, 2]
  m4$correct[171, 3] <- TRUE
  m4$correct[c(1:5), 3] <- FALSE
  m4$correct[172:176, 3] <- TRUE
  m4$curve$mean <- colMeans(m4$correct)
  expect_identical(chosen_kind(m4), "linear")
  # a kernel that wins by more than the margin is kept: 12 points won, 0
  # lost (gain 0.06, standard error 0.017)
  expect_identical(chosen_kind(made_up(eu = 170, lin = 150, won = 12)), "kernel")
})

test_that("the margin is counted in standard errors of the paired difference", {
  n <- 100L
  # the kernel right on 10 points the baseline misses, wrong on 4 it gets
  a <- c(rep(TRUE, 10), rep(FALSE, 4), rep(TRUE, 50), rep(FALSE, 36))
  b <- c(rep(FALSE, 10), rep(TRUE, 4), rep(TRUE, 50), rep(FALSE, 36))
  d <- as.numeric(a) - as.numeric(b)
  se <- sd(d) / sqrt(n)
  pg <- kmaha:::paired_gain(cbind(a, b), 1, 2, margin = 0.5)
  expect_equal(pg$gain, 0.06)
  expect_equal(pg$se, se)
  expect_identical(pg$beats, 0.06 - 0.5 * se > 0)
  expect_identical(kmaha:::paired_gain(cbind(a, b), 1, 2, margin = 3)$beats, 0.06 - 3 * se > 0)
})

test_that("kmaha() kernelizes the new learners by name: LFDA on the KPCA coordinates", {
  x <- scale(as.matrix(iris[, 1:4]))
  kfit <- kmaha(x, iris$Species, learner = "lfda", kernel = rbf_kernel(1), scale = FALSE)
  expect_identical(kfit$learner, "lfda")
  z <- kpca(x, rbf_kernel(1))$coords
  lin <- lfda(z, iris$Species, scale = FALSE)
  # the same metric on the training points (maps equal up to the signs of
  # their eigenvectors)
  expect_equal(as.matrix(dist(kfit$embedding)), as.matrix(dist(lin$embedding)),
               tolerance = 1e-6, ignore_attr = TRUE)
  expect_error(kmaha(x, iris$Species, learner = "mmc",
                     learner_args = list(pairs = rbind(c(1, 2), c(1, 51)), similar = c(1, -1))),
               "`learner_args$pairs` names rows of `x`, but kernel choice (kernel = \"auto\") refits the learner on subsets of the rows",
               fixed = TRUE)
})
