# Reuse of candidate-by-fold fits between calls (R/score-memo.R): a call
# that takes stored fits must give exactly what a call that fits every task
# gives, and must take nothing that another fit would compute differently.

memo_data <- function() {
  set.seed(11)
  n <- 90
  x <- matrix(rnorm(n * 4), n, 4)
  y <- factor(ifelse(x[, 1]^2 + x[, 2]^2 > 1.4, "out", "in"))
  list(x = x, y = y)
}

# The scores of kmaha(x, y, ...) with reuse off (nothing stored or taken).
fresh_fit <- function(...) {
  old <- options(kmaha.reuse_fits = FALSE)
  on.exit(options(old))
  kmaha(...)
}

same_scores <- function(a, b) {
  a <- a$kernel_choice$cv
  b <- b$kernel_choice$cv
  expect_identical(b$curve, a$curve)
  expect_identical(b$accuracy_k, a$accuracy_k)
  expect_identical(b$correct_k, a$correct_k)
  expect_identical(b$best, a$best)
  expect_identical(b$k, a$k)
}

test_that("a fit at another k takes the stored fold fits and equals a fit that fits them all", {
  d <- memo_data()
  kmaha:::score_memo_clear()
  first <- kmaha(d$x, d$y, k = 1, seed = 3)
  expect_identical(first$kernel_choice$cv$reused, 0L)
  for (k in c(5L, 10L)) {
    again <- kmaha(d$x, d$y, k = k, seed = 3)
    # Euclidean k-NN, the linear learners and the unweighted sum at least
    expect_gte(again$kernel_choice$cv$reused, 15L)
    direct <- fresh_fit(d$x, d$y, k = k, seed = 3)
    expect_identical(direct$kernel_choice$cv$reused, 0L)
    same_scores(direct, again)
    expect_identical(again$k, direct$k)
    expect_identical(predict(again, d$x, type = "prob"), predict(direct, d$x, type = "prob"))
  }
  # print() says so
  printed <- function(x) gsub("\\s+", " ", paste(capture.output(print(x)), collapse = " "))
  expect_match(printed(again$kernel_choice$cv),
               sprintf("%d fits, %d of the candidate-by-fold tasks taken from an earlier call",
                       again$kernel_choice$cv$n_fits, again$kernel_choice$cv$reused),
               fixed = TRUE)
  expect_no_match(printed(first$kernel_choice$cv),
                  "earlier call", fixed = TRUE)
  # k unset (the odd k from 1 to 15 considered): read from the stored votes
  unset <- kmaha(d$x, d$y, seed = 3)
  expect_gte(unset$kernel_choice$cv$reused, 15L)
  same_scores(fresh_fit(d$x, d$y, seed = 3), unset)
})

test_that("other data, labels, folds, options or settings take nothing", {
  d <- memo_data()
  kmaha:::score_memo_clear()
  kmaha(d$x, d$y, kernel = "linear", seed = 4)
  reused <- function(fit) fit$kernel_choice$cv$reused
  expect_gt(reused(kmaha(d$x, d$y, kernel = "linear", seed = 4, k = 3)), 0L)
  x2 <- d$x
  x2[1, 1] <- x2[1, 1] + 1e-9
  expect_identical(reused(kmaha(x2, d$y, kernel = "linear", seed = 4)), 0L)
  y2 <- d$y
  y2[1:2] <- y2[2:1]
  if (!identical(y2, d$y)) {
    expect_identical(reused(kmaha(d$x, y2, kernel = "linear", seed = 4)), 0L)
  }
  expect_identical(reused(kmaha(d$x, d$y, kernel = "linear", seed = 5)), 0L)
  expect_identical(reused(kmaha(d$x, d$y, kernel = "linear", seed = 4, cv_folds = 4)), 0L)
  expect_identical(reused(kmaha(d$x, d$y, kernel = "linear", seed = 4, scale = FALSE)), 0L)
  expect_identical(reused(kmaha(d$x, d$y, kernel = "linear", seed = 4,
                                learner_args = list(nca = list(lambda = 0.1)))), 0L)
  expect_identical(reused(kmaha(d$x, d$y, kernel = "linear", seed = 4, neighbors = "input")), 0L)
  withr::with_options(list(kmaha.reuse_fits = FALSE), {
    expect_identical(reused(kmaha(d$x, d$y, kernel = "linear", seed = 4)), 0L)
  })
  # a learner given as a function is never reused
  my_learner <- function(x, y, ...) diag(ncol(x))
  score_mine <- function() {
    score_candidates(d$x, d$y, learner = my_learner, candidates = "kernels",
                     kernels = list(rbf_kernel(1), rbf_kernel(2)), seed = 4)
  }
  score_mine()
  expect_identical(score_mine()$reused, 0L)
  # (the same call with a built-in learner is reused)
  score_dne <- function() {
    score_candidates(d$x, d$y, learner = "dne", candidates = "kernels",
                     kernels = list(rbf_kernel(1), rbf_kernel(2)), seed = 4)
  }
  score_dne()
  expect_identical(score_dne()$reused, 10L)
})

test_that("a regression takes the stored fold fits and equals a fit that fits them all", {
  set.seed(12)
  x <- matrix(rnorm(80 * 3), 80, 3)
  y <- sin(2 * x[, 1]) + 0.1 * rnorm(80)
  kmaha:::score_memo_clear()
  kmaha(x, y, k = 3, seed = 6)
  again <- kmaha(x, y, k = 7, seed = 6)
  expect_gt(again$kernel_choice$cv$reused, 0L)
  direct <- fresh_fit(x, y, k = 7, seed = 6)
  same_scores(direct, again)
  expect_identical(predict(again, x), predict(direct, x))
})

test_that("score_candidates() with stored fits equals scoring them all", {
  d <- memo_data()
  kmaha:::score_memo_clear()
  a <- score_candidates(d$x, d$y, k = 2, seed = 8, learner = "dne")
  b <- score_candidates(d$x, d$y, seed = 8, learner = "dne")
  expect_gt(b$reused, 0L)
  c0 <- withr::with_options(list(kmaha.reuse_fits = FALSE),
                            score_candidates(d$x, d$y, seed = 8, learner = "dne"))
  expect_identical(b$curve, c0$curve)
  expect_identical(b$correct_k, c0$correct_k)
  expect_identical(dimnames(b$accuracy_k)[[3]], paste0("k", seq(1, 15, by = 2)))
})

test_that("the store keeps at most memo_max_tasks results, the oldest going first", {
  kmaha:::score_memo_clear()
  on.exit(kmaha:::score_memo_clear())
  m <- kmaha:::memo_max_tasks
  keys <- sprintf("key%d", seq_len(m + 5L))
  kmaha:::score_memo_put(keys, as.list(seq_along(keys)))
  got <- kmaha:::score_memo_get(c("key1", "key5", "key6", sprintf("key%d", m + 5L), NA))
  expect_null(got[[1]])
  expect_null(got[[2]])
  expect_identical(got[[3]], 6L)
  expect_identical(got[[4]], m + 5L)
  expect_null(got[[5]])
})

test_that("a fit that failed is not kept", {
  kmaha:::score_memo_clear()
  on.exit(kmaha:::score_memo_clear())
  ok <- list(slots = list(list(correct = matrix(TRUE, 2, 1), error = NA_character_)))
  failed <- list(slots = list(list(correct = NULL, error = "out of memory")))
  kmaha:::score_memo_put(c("ok", "failed"), list(ok, failed))
  got <- kmaha:::score_memo_get(c("ok", "failed"))
  expect_identical(got[[1]], ok)
  expect_null(got[[2]])
})

test_that("the store keeps at most memo_max_bytes of results, the newest always", {
  kmaha:::score_memo_clear()
  on.exit(kmaha:::score_memo_clear())
  big <- function(i) rep(as.double(i), floor(0.4 * kmaha:::memo_max_bytes / 8))
  kmaha:::score_memo_put(c("a", "b"), list(big(1), big(2)))
  expect_identical(kmaha:::score_memo_get(c("a", "b"))[[1]][1], 1)
  # three of 0.4 of the limit each exceed it: the oldest goes
  kmaha:::score_memo_put("c", list(big(3)))
  got <- kmaha:::score_memo_get(c("a", "b", "c"))
  expect_null(got[[1]])
  expect_identical(c(got[[2]][1], got[[3]][1]), c(2, 3))
  expect_lte(sum(kmaha:::score_memo$bytes), kmaha:::memo_max_bytes)
  # one result above the limit is kept alone
  kmaha:::score_memo_put("d", list(c(big(4), big(4), big(4))))
  got <- kmaha:::score_memo_get(c("b", "c", "d"))
  expect_null(got[[1]])
  expect_null(got[[2]])
  expect_identical(got[[3]][1], 4)
})

test_that("equal values hash equally, whatever their R representation", {
  expect_identical(kmaha:::md5_of(1:10), kmaha:::md5_of(sort(unique(c(5L, 1:10)))))
  expect_false(identical(kmaha:::md5_of(1:10), kmaha:::md5_of(c(1:9, 11L))))
})
