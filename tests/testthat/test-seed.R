# `seed =` gives the same fit whatever the session's RNGkind() (tune and the
# future-based frameworks run under L'Ecuyer-CMRG), and leaves the caller's
# random state and kind as they were.

# The fold of every training row and the kernel chosen, for one RNG kind.
seeded_choice <- function(kind, fun) {
  old <- RNGkind()
  on.exit(suppressWarnings(RNGkind(old[1], old[2], old[3])), add = TRUE)
  suppressWarnings(RNGkind(kind[1], kind[2], kind[3]))
  set.seed(99)
  before <- list(seed = .Random.seed, kind = RNGkind())
  out <- fun()
  after <- list(seed = .Random.seed, kind = RNGkind())
  list(out = out, before = before, after = after)
}

kinds <- list(c("Mersenne-Twister", "Inversion", "Rejection"),
              c("L'Ecuyer-CMRG", "Inversion", "Rejection"),
              c("Wichmann-Hill", "Box-Muller", "Rounding"),
              c("Knuth-TAOCP-2002", "Inversion", "Rejection"))

test_that("kmaha(seed = ) draws the same folds and fit under any RNGkind()", {
  d <- balance_sample()
  x <- d[, 1:4]
  fit_once <- function() {
    fit <- kmaha(x, d$class, learner = "dne", kernels = paper_kernels()[c(7, 11, 15)],
                 cv_folds = 3, seed = 1)
    list(folds = fit$kernel_choice$cv$folds, curve = fit$kernel_choice$cv$curve$mean,
         pred = predict(fit, x))
  }
  runs <- lapply(kinds, seeded_choice, fun = fit_once)
  for (r in runs[-1]) {
    expect_identical(r$out$folds, runs[[1]]$out$folds)
    expect_identical(r$out$curve, runs[[1]]$out$curve)
    expect_identical(r$out$pred, runs[[1]]$out$pred)
  }
  # the folds are those of set.seed(1) under R's default generator
  expect_false(is.null(runs[[1]]$out$folds))
  # the caller's generator, kind and state, untouched
  for (r in runs) {
    expect_identical(r$after$kind, r$before$kind)
    expect_identical(r$after$seed, r$before$seed)
  }
})

test_that("score_candidates(seed = ) and cv_kernel(seed = ) do not depend on RNGkind()", {
  ks <- paper_kernels()[c(9, 13)]
  sc <- lapply(kinds[1:2], seeded_choice, fun = function() {
    score_candidates(Species ~ ., iris, learner = "dne", candidates = "kernels",
                     kernels = ks, folds = 3, seed = 5)$folds
  })
  expect_identical(sc[[2]]$out, sc[[1]]$out)
  cv <- lapply(kinds[1:2], seeded_choice, fun = function() {
    cv_kernel(iris[, 1:4], iris$Species, learner = "dne", kernels = ks, folds = 3,
              seed = 5)$folds
  })
  expect_identical(cv[[2]]$out, cv[[1]]$out)
  expect_identical(cv[[2]]$after$seed, cv[[2]]$before$seed)
})

test_that("a seeded fit in a session that has not drawn yet leaves no seed and the kind", {
  # a fresh process: no .Random.seed, L'Ecuyer-CMRG set by the user
  res <- run_in_child(function() {
    RNGkind("L'Ecuyer-CMRG")
    if (exists(".Random.seed", globalenv())) rm(".Random.seed", envir = globalenv())
    fit <- kmaha::kmaha(iris[, 1:4], iris$Species, learner = "dne",
                        kernels = kmaha::paper_kernels()[c(9, 13)], cv_folds = 3, seed = 1)
    list(kind = RNGkind(), seeded = exists(".Random.seed", globalenv()),
         folds = fit$kernel_choice$cv$folds)
  })
  expect_identical(res$kind[1], "L'Ecuyer-CMRG")
  expect_false(res$seeded)
  here <- kmaha(iris[, 1:4], iris$Species, learner = "dne",
                kernels = paper_kernels()[c(9, 13)], cv_folds = 3, seed = 1)
  expect_identical(res$folds, here$kernel_choice$cv$folds)
})
