# kernel = "auto", kmaha()'s default (R/select.R): the candidates, the
# smoothing of the base kernels' scores, the tie rule, the baseline guard,
# and what it chooses on data where no kernel helps and where one clearly
# does.

# Held-out correctness `v` with the points `right` made right and `wrong`
# made wrong.
with_points <- function(v, right = integer(), wrong = integer()) {
  v[right] <- TRUE
  v[wrong] <- FALSE
  v
}

# A curve as new_scores() builds it: one row per candidate.
auto_curve <- function(kind, sigma, mean) {
  data.frame(kind = kind, sigma = sigma, mean = mean, n_ok = 5L, dropped = FALSE,
             label = ifelse(kind == "kernel", paste("RBF sigma =", sigma), kind),
             stringsAsFactors = FALSE)
}

test_that("the candidates are the base kernels, Euclidean, linear and unweighted; never an alignment", {
  ks <- list(rbf_kernel(0.5), rbf_kernel(1), rbf_kernel(2))
  cands <- kmaha:::candidate_set("auto", ks)
  kinds <- vapply(cands, function(cd) cd$kind, "")
  expect_identical(kinds, c("kernel", "kernel", "kernel", "euclidean", "linear", "unweighted"))
  expect_identical(vapply(kmaha:::candidate_set("kernels", ks), `[[`, "", "kind"),
                   rep("kernel", 3))
  fit <- kmaha(iris[, 1:4], iris$Species, learner = "dne", kernels = ks, seed = 1)
  cu <- fit$kernel_choice$cv$curve
  expect_identical(cu$kind, kinds)
  expect_identical(fit$kernel_choice$type, "auto")
  expect_false(any(c("align", "align_lp") %in% cu$kind))
})

test_that("smoothing borrows from neighbouring bandwidths: a lone spike loses to a plateau", {
  sig <- c(0.25, 0.5, 1, 2, 4, 8)
  cu <- auto_curve(c(rep("kernel", 6), "euclidean", "linear"), c(sig, NA, NA),
                   c(0.70, 0.90, 0.70, 0.84, 0.86, 0.84, 0.60, 0.60))
  sm <- kmaha:::smooth_scores(cu)
  # 1-2-1 weights inside, 2-1 at the ends; other candidates unchanged
  expect_equal(sm[2], (0.70 + 2 * 0.90 + 0.70) / 4)
  expect_equal(sm[1], (2 * 0.70 + 0.90) / 3)
  expect_equal(sm[6], (0.86 + 2 * 0.84) / 3)
  expect_identical(sm[7:8], cu$mean[7:8])
  # the spike at sigma = 0.5 has the best raw score, the plateau's middle
  # the best smoothed one
  correct <- matrix(TRUE, 100, nrow(cu))
  correct[1:40, 7:8] <- FALSE
  sel <- kmaha:::auto_select(cu, correct, 5L)
  expect_identical(cu$sigma[sel$best], 4)
  expect_match(sel$reason, "smoothed over neighbouring bandwidths", fixed = TRUE)
})

test_that("ties go to the middle of the plateau, in order of simplicity", {
  sig <- c(0.5, 1, 2, 4, 8)
  cu <- auto_curve(rep("kernel", 5), sig, rep(0.8, 5))
  sel <- kmaha:::auto_select(cu, matrix(TRUE, 50, 5), 5L)
  expect_identical(cu$sigma[sel$best], 2)
})

test_that("a learned candidate must beat the better baseline by more than the margin", {
  cu <- auto_curve(c("kernel", "kernel", "kernel", "euclidean", "linear"),
                   c(1, 2, 4, NA, NA), c(0.80, 0.80, 0.80, 0.70, 0.78))
  n <- 200
  base <- rep(c(TRUE, FALSE), c(156, 44))        # linear: 0.78
  # the kernels get 20 points right that linear misses and miss 18 that it
  # gets: +0.01, below half a paired standard error (about 0.03)
  small <- with_points(base, right = 157:176, wrong = 1:18)
  correct <- cbind(small, small, small, rep(c(TRUE, FALSE), c(140, 60)), base)
  cu$mean <- colMeans(correct)
  sel <- kmaha:::auto_select(cu, correct, 5L)
  expect_identical(cu$kind[sel$best], "linear")
  expect_match(sel$reason, sprintf("did not beat it by more than %s",
                                   kmaha:::margin_words(kmaha:::auto_margin)), fixed = TRUE)
  # a gain of 30 points is many standard errors: the kernel stays
  big <- with_points(base, right = 157:186)
  correct <- cbind(big, big, big, correct[, 4], base)
  cu$mean <- colMeans(correct)
  sel <- kmaha:::auto_select(cu, correct, 5L)
  expect_identical(cu$kind[sel$best], "kernel")
  expect_match(sel$reason, "beats the better baseline, linear", fixed = TRUE)
})

test_that("no kernel where none helps; a kernel on the concentric rings", {
  # two Gaussian classes apart along one axis, plus noise columns: the
  # linear learner (or plain 1-NN) is as good as any kernel
  set.seed(3)
  n <- 120
  y <- factor(rep(c("a", "b"), each = n / 2))
  x <- cbind(ifelse(y == "a", -1.5, 1.5) + rnorm(n), matrix(rnorm(n * 3), n))
  lin <- kmaha(x, y, learner = "nca", seed = 2)
  expect_true(lin$kernel_choice$cv$curve$kind[lin$kernel_choice$cv$best] %in%
                c("linear", "euclidean"))
  expect_s3_class(lin, "kmaha_linear")
  # the paper's thin rings (radius 1 and 1.05): Euclidean 1-NN and every
  # linear metric confuse them
  # the thin rings of make_rings() (helper-model.R)
  tr <- make_rings(100, 1)
  te <- make_rings(200, 2)
  fit <- kmaha(tr$x, tr$y, learner = "dne", seed = 1)
  kind <- fit$kernel_choice$cv$curve$kind[fit$kernel_choice$cv$best]
  expect_true(kind %in% c("kernel", "align", "unweighted"))
  expect_s3_class(fit, "kmaha_kpca_trick")
  acc <- mean(predict(fit, te$x) == te$y)
  acc_lin <- mean(predict(kmaha(tr$x, tr$y, learner = "dne", kernel = "linear"), te$x) == te$y)
  acc_eu <- mean(knn_classify(scale(tr$x), tr$y, scale(te$x, attr(scale(tr$x), "scaled:center"),
                                                       attr(scale(tr$x), "scaled:scale")))$class == te$y)
  expect_gt(acc, 0.9)
  expect_gt(acc, max(acc_lin, acc_eu) + 0.05)
  expect_match(fit$kernel_choice$cv$reason, "beats the better baseline", fixed = TRUE)
  # print() says what was chosen and why
  expect_output(print(fit), "chosen by 5-fold CV", fixed = TRUE)
})

test_that("the default is auto, and cv and auto share one cross-validation", {
  expect_identical(formals(kmaha:::kmaha.default)$kernel, "auto")
  ks <- list(rbf_kernel(0.5), rbf_kernel(1), rbf_kernel(2))
  a <- kmaha(iris[, 1:4], iris$Species, learner = "dne", kernels = ks, seed = 5)
  cv <- kmaha(iris[, 1:4], iris$Species, learner = "dne", kernel = "cv", kernels = ks,
              seed = 5)
  # the base kernels' fold scores are the same in both where both scored
  # them (the screen passes one kernel to the learner for auto, three for cv)
  ca <- a$kernel_choice$cv$curve
  cc <- cv$kernel_choice$cv$curve
  both <- !ca$dropped[ca$kind == "kernel"] & !cc$dropped
  expect_true(any(both))
  expect_equal(ca$mean[ca$kind == "kernel"][both], cc$mean[both])
})

test_that("above 1000 rows the choice is made on a subsample; above 2000 a kernel is fitted by Nystrom", {
  # the rule at a fifth of its sizes (200-row subsample above 200 rows,
  # exact KPCA up to 400, then 400 landmarks), so that the test is fast
  ns <- asNamespace("kmaha")
  old <- get("auto_large", ns)
  put <- function(v) {
    unlockBinding("auto_large", ns)
    assign("auto_large", v, envir = ns)
    lockBinding("auto_large", ns)
  }
  put(list(n = 200L, n_choose = 200L, exact_max = 400L, landmarks = 400L, max_rank = 100L,
           min_rank = 20L, min_rank_n = 3200L))
  on.exit(put(old), add = TRUE)
  set.seed(8)
  n <- 420
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- matrix(rnorm(n * 4), n) + 2 * as.integer(y)
  ks <- list(rbf_kernel(0.5), rbf_kernel(1), rbf_kernel(2))
  cv <- kmaha(x, y, learner = "dne", kernel = "cv", kernels = ks, seed = 1)
  expect_identical(cv$feature_map$type, "nystrom")
  expect_identical(nrow(cv$feature_map$landmarks), 400L)
  # rank cap 100 (400 / 420)^0.774
  expect_lte(ncol(cv$L), 96L)
  expect_match(cv$kernel_choice$cv$reason,
               "chosen on a stratified subsample of 200 of the 420 rows, and fitted on all rows with Nystrom KPCA (400 landmarks, rank <= 96)",
               fixed = TRUE)
  expect_identical(nrow(cv$embedding), 420L)
  expect_identical(length(cv$kernel_choice$cv$folds), 200L)
  # the same choice under auto, where a baseline may win: then no Nystrom
  au <- kmaha(x, y, learner = "dne", kernels = ks, seed = 1)
  kind <- au$kernel_choice$cv$curve$kind[au$kernel_choice$cv$best]
  if (kind %in% c("linear", "euclidean")) {
    expect_identical(au$feature_map$type, "identity")
    expect_match(au$kernel_choice$cv$reason, "of the 420 rows, and fitted on all rows", fixed = TRUE)
    expect_false(grepl("Nystrom", au$kernel_choice$cv$reason, fixed = TRUE))
  } else {
    expect_identical(au$feature_map$type, "nystrom")
  }
  # between the two thresholds: the subsample, and exact KPCA on all rows
  sub <- 1:300
  c3 <- kmaha(x[sub, ], y[sub], learner = "dne", kernel = "cv", kernels = ks, seed = 1)
  expect_identical(c3$feature_map$type, "kpca")
  expect_identical(nrow(c3$embedding), 300L)
  expect_identical(length(c3$kernel_choice$cv$folds), 200L)
  expect_match(c3$kernel_choice$cv$reason,
               "chosen on a stratified subsample of 200 of the 300 rows, and fitted on all rows with exact KPCA",
               fixed = TRUE)
  # a regression's subsample is a random one (no classes to stratify by)
  yr <- x[sub, 1] + sin(x[sub, 2]) + rnorm(300, sd = 0.1)
  r3 <- kmaha(x[sub, ], yr, kernel = "cv", kernels = ks, seed = 1)
  expect_identical(nrow(r3$embedding), 300L)
  expect_match(r3$kernel_choice$cv$reason,
               "chosen on a random subsample of 200 of the 300 rows, and fitted on all rows with exact KPCA",
               fixed = TRUE)
  expect_false(grepl("stratified", paste(r3$kernel_choice$cv$explain, collapse = " "), fixed = TRUE))
  # up to the first: all rows, no subsample
  c2 <- kmaha(x[1:200, ], y[1:200], learner = "dne", kernel = "cv", kernels = ks, seed = 1)
  expect_identical(length(c2$kernel_choice$cv$folds), 200L)
  expect_null(c2$kernel_choice$cv$large)
  # and the package's own sizes
  put(old)
  expect_identical(old[c("n", "n_choose", "exact_max", "landmarks", "max_rank", "min_rank",
                         "min_rank_n")],
                   list(n = 1000L, n_choose = 1000L, exact_max = 2000L, landmarks = 1250L,
                        max_rank = 500L, min_rank = 100L, min_rank_n = 16000L))
})

test_that("the large-n settings change smoothly in n", {
  ls <- kmaha:::large_settings
  # no Nystrom up to 2000 rows; just above, 1250 landmarks and at most 500
  # components; the rank cap then falls by at most one per row, to 100
  expect_null(ls(2000)$landmarks)
  expect_null(ls(2000)$fit_rank)
  expect_identical(ls(2001)$landmarks, 1250L)
  r <- vapply(2001:20000, function(n) ls(n)$fit_rank, 0L)
  expect_identical(r[1], 500L)
  expect_true(all(diff(r) <= 0L))
  expect_lte(max(-diff(r)), 1L)
  expect_identical(ls(16000)$fit_rank, 100L)
  expect_identical(ls(20000)$fit_rank, 100L)
})

test_that("the better baseline is the higher-scoring one: Euclidean k-NN over a weaker linear learner", {
  cu <- auto_curve(c("kernel", "kernel", "kernel", "euclidean", "linear"),
                   c(1, 2, 4, NA, NA), rep(0, 5))
  lin <- rep(c(TRUE, FALSE), c(150, 50))
  # Euclidean: right on 12 points the learner misses, wrong on 10 it gets;
  # 0.5.2 kept the linear learner here (Euclidean had to beat it by one
  # standard error)
  eu <- with_points(lin, right = 151:162, wrong = 1:10)
  weak <- rep(c(TRUE, FALSE), c(100, 100))
  correct <- cbind(weak, weak, weak, eu, lin)
  cu$mean <- colMeans(correct)
  sel <- kmaha:::auto_select(cu, correct, 5L)
  expect_identical(cu$kind[sel$best], "euclidean")
  # the linear learner ahead: it is kept
  correct[, 4] <- with_points(lin, right = 151:155, wrong = 1:10)
  cu$mean <- colMeans(correct)
  expect_identical(cu$kind[kmaha:::auto_select(cu, correct, 5L)$best], "linear")
})

test_that("one discordant point is never a win, whatever the rounding; two are", {
  # With W points right only for a and none only for b the gain is W/m and
  # the standard error sqrt(W (1 - W/m) / (m - 1)) / ... = W/m exactly when
  # W = 1: the rule must not be decided by the rounding of mean() and sd()
  # (which made it go either way, depending on m and on which point).
  for (m in c(41, 60, 88, 120, 200)) {
    for (pos in c(1L, m %/% 2L, m)) {
      b <- rep(FALSE, m)
      a <- b
      a[pos] <- TRUE
      pg <- kmaha:::paired_gain(cbind(a, b), 1L, 2L)
      expect_equal(pg$gain, pg$se)
      expect_false(pg$beats)
    }
    a[c(1L, m)] <- TRUE
    expect_true(kmaha:::paired_gain(cbind(a, b), 1L, 2L)$beats)
  }
  # in auto_select(): a kernel no better than Euclidean k-NN on any point,
  # both one point ahead of the linear learner, leave Euclidean (the better
  # baseline) chosen
  m <- 60
  lin <- rep(c(TRUE, FALSE), c(50, 10))
  ker <- lin
  ker[51] <- TRUE
  cu <- auto_curve(c("kernel", "kernel", "kernel", "euclidean", "linear"),
                   c(1, 2, 4, NA, NA), rep(0, 5))
  correct <- cbind(ker, ker, ker, ker, lin)
  cu$mean <- colMeans(correct)
  cu$mean[4] <- cu$mean[4] - 1e-3   # the kernels first, Euclidean second
  sel <- kmaha:::auto_select(cu, correct, 5L)
  expect_identical(cu$kind[sel$best], "euclidean")
})

test_that("numerically degenerate kernels are scored but never chosen (auto and cv)", {
  # 20 classes of 3 random points: every candidate is near chance, and the
  # grid's smallest sigmas make the Gram matrix numerically the identity on
  # the standardized inputs, so their nearest neighbours are decided by
  # ties, which scored above the baselines before they were left out
  set.seed(2)
  x <- matrix(rnorm(60 * 4), 60)
  y <- factor(rep(1:20, 3))
  fit <- suppressWarnings(kmaha(x, y, seed = 1, cv_strategy = "exhaustive"))
  cu <- fit$kernel_choice$cv$curve
  small <- cu$kind == "kernel" & cu$sigma %in% c(0.01, 0.025)
  expect_true(all(cu$degenerate[small]))
  # the flag is the core's verdict on a fold's training rows
  tr <- fit$kernel_choice$cv$folds != 1L
  xs <- scale(x)[tr, ]
  for (j in which(cu$kind == "kernel")) {
    expect_identical(cu$degenerate[j],
                     !is.null(kmaha:::kernel_verdict(rbf_kernel(cu$sigma[j]), xs, test_ctx())))
  }
  expect_false(any(cu$degenerate[cu$kind %in% c("euclidean", "linear")]))
  expect_false(cu$degenerate[fit$kernel_choice$cv$best])
  expect_true(is.na(kmaha:::smooth_scores(cu)[which(small)[1]]))
  out <- paste(capture.output(print(fit$kernel_choice$cv)), collapse = " ")
  expect_match(gsub("\\s+", " ", out),
               "left out as numerically degenerate on these data (ties decide their neighbours): RBF sigma = 0.01, ",
               fixed = TRUE)
  cv <- suppressWarnings(kmaha(x, y, kernel = "cv", seed = 1))
  cc <- cv$kernel_choice$cv
  expect_false(cc$curve$degenerate[cc$best])
  # the paper's rule falls back to degenerate kernels only when every one is
  cu2 <- cc$curve
  cu2$degenerate <- TRUE
  expect_identical(kmaha:::best_select(cu2, 5L)$best, which.max(ifelse(cu2$n_ok == 5L & !cu2$dropped, cu2$mean, -Inf)))
})

test_that("a class too small to be in every fold's training part is a miss, not a failed fit", {
  idx <- c(1:30, 51, 101:130)           # versicolor: one member
  # (the class-size warnings are expected; no fit may fail)
  fit <- suppressWarnings(kmaha(iris[idx, 1:4], droplevels(iris$Species[idx]), seed = 1))
  cv <- fit$kernel_choice$cv
  expect_identical(nrow(cv$errors), 0L)
  # the lone versicolor point is held out once and can only be missed
  lone <- which(droplevels(iris$Species[idx]) == "versicolor")
  expect_false(any(cv$correct[lone, ], na.rm = TRUE))
})
