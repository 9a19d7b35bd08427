# Words in printed output (issue 27): the reproduction's win/draw/lose row
# gives the paper no row for kmaha's default (the paper has no "auto"
# column), and a mini-batch NCA fit does not claim to have converged.

test_that("the Win/Draw/Lose row shows no paper row for the auto column", {
  res <- reproduce_paper(datasets = "iris", learners = "dne",
                         kernels = c("linear", "unweighted", "auto"), splits = 2)
  out <- utils::capture.output(print(res))
  row <- grep("^Win/Draw/Lose +[0-9n]", out, value = TRUE)
  expect_length(row, 1L)
  w <- win_draw_lose(res)
  paper_uw <- w[w$kernel == "unweighted" & w$rule == "paper, as printed", ]
  ours_auto <- w[w$kernel == "auto" & w$rule == "kmaha", ]
  # unweighted: ours and the paper's printed row; auto: ours and "-"
  expect_match(row, sprintf("[%d/%d/%d]", paper_uw$win, paper_uw$draw, paper_uw$lose),
               fixed = TRUE)
  expect_match(row, sprintf("%d/%d/%d [-]", ours_auto$win, ours_auto$draw, ours_auto$lose),
               fixed = TRUE)
  expect_false(grepl("[0/0/0]", row, fixed = TRUE))
  expect_identical(w$datasets[w$kernel == "auto" & w$rule == "paper, as printed"], 0L)
})

test_that("a mini-batch NCA fit reports its fixed number of steps, not convergence", {
  set.seed(1)
  fit <- nca(iris[, 1:4], iris$Species, method = "minibatch", batch_size = 50,
             max_iter = 20)
  out <- paste(utils::capture.output(print(fit)), collapse = "\n")
  expect_match(out, "optimizer: 20 Adam steps on batches of 50 rows (no convergence test)",
               fixed = TRUE)
  expect_false(grepl("converged", out, fixed = TRUE))
  s <- paste(utils::capture.output(print(summary(fit))), collapse = "\n")
  expect_false(grepl("converged after", s, fixed = TRUE))
  # the full-batch fit still reports convergence
  full <- paste(utils::capture.output(print(nca(iris[, 1:4], iris$Species))), collapse = "\n")
  expect_match(full, "optimizer: converged after", fixed = TRUE)
})
