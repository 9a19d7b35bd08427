# Cross-validated kernel choice (cv_kernel) and its parallel/progress plumbing.

set.seed(5)
idx_cv <- sort(c(sample(1:50, 25), sample(51:100, 25), sample(101:150, 25)))
xc <- scale(as.matrix(iris[idx_cv, 1:4]))
yc <- iris$Species[idx_cv]
kc <- lapply(c(0.1, 0.5, 2, 20), rbf_kernel)
identity_learner <- function(x, y, ...) diag(ncol(x))

# Plain-R reference: 1-NN accuracy from kernel-induced feature-space
# distances d2(a, b) = k(a, a) + k(b, b) - 2 k(a, b) (no KPCA involved).
feature_1nn_acc <- function(kern, xtr, ytr, xte, yte) {
  Ktt <- kernel_matrix(kern, xte, xtr)
  dtr <- diag(kernel_matrix(kern, xtr))
  dte <- diag(kernel_matrix(kern, xte))
  D2 <- outer(dte, dtr, "+") - 2 * Ktt
  mean(ytr[apply(D2, 1, which.min)] == yte)
}

test_that("with an identity learner the CV score is feature-space 1-NN accuracy", {
  cv <- cv_kernel(xc, yc, identity_learner, kc, folds = 3, k = 1, seed = 42,
                  tol = 1e-12, strategy = "exhaustive")
  expect_s3_class(cv, "kmaha_cv")
  expect_equal(dim(cv$accuracy), c(4L, 3L))
  for (j in seq_along(kc)) {
    ref <- vapply(1:3, function(f) {
      tr <- cv$folds != f
      feature_1nn_acc(kc[[j]], xc[tr, ], yc[tr], xc[!tr, ], yc[!tr])
    }, numeric(1))
    expect_equal(unname(cv$accuracy[j, ]), ref, tolerance = 1e-12)
  }
  expect_equal(cv$curve$mean, unname(rowMeans(cv$accuracy)))
  expect_equal(cv$curve$sd, unname(apply(cv$accuracy, 1, sd)))
  expect_equal(cv$curve$sigma, c(0.1, 0.5, 2, 20))
  expect_identical(cv$best, which.max(cv$curve$mean))
  expect_identical(cv$kernel, kc[[cv$best]])
})

test_that("folds are stratified and reproducible; the global RNG is restored", {
  set.seed(1)
  before <- .Random.seed
  cv1 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5, seed = 9)
  expect_identical(.Random.seed, before)
  cv2 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5, seed = 9)
  expect_identical(cv1$folds, cv2$folds)
  expect_identical(cv1$accuracy, cv2$accuracy)
  tab <- table(cv1$folds, yc)
  expect_true(all(apply(tab, 2, function(col) max(col) - min(col)) <= 1L))
  expect_true(max(table(cv1$folds)) - min(table(cv1$folds)) <= 1L)
  set.seed(3)
  cv3 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5)
  set.seed(3)
  cv4 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5)
  expect_identical(cv3$folds, cv4$folds)
  cv5 <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = 5, seed = 10)
  expect_false(identical(cv1$folds, cv5$folds))
})

test_that("ties go to the first best kernel", {
  kk <- list(rbf_kernel(2), rbf_kernel(0.5), rbf_kernel(2))
  cv <- cv_kernel(xc, yc, identity_learner, kk, folds = 3, seed = 1,
                  strategy = "exhaustive")
  expect_identical(cv$accuracy[1, ], cv$accuracy[3, ])
  if (cv$curve$mean[1] >= cv$curve$mean[2]) expect_identical(cv$best, 1L)
  kk2 <- list(rbf_kernel(0.5), rbf_kernel(0.5))
  cv2 <- cv_kernel(xc, yc, identity_learner, kk2, folds = 3, seed = 1)
  expect_identical(cv2$best, 1L)
})

test_that("user-supplied fold labels are used as given", {
  f <- rep(1:3, length.out = nrow(xc))
  cv <- cv_kernel(xc, yc, identity_learner, kc[1:2], folds = f)
  expect_identical(cv$folds, f)
})

test_that("a learner failing on some kernels is recorded, others still win", {
  picky <- function(x, y, ...) {
    if (ncol(x) > 20) stop("too many KPCA components")
    diag(ncol(x))
  }
  # sigma = 0.1 keeps (almost) every component, sigma = 20 only a few
  expect_warning(
    cv <- cv_kernel(xc, yc, picky, list(rbf_kernel(0.1), rbf_kernel(20)),
                    folds = 3, seed = 2),
    "^3 of the 6 cross-validation fits \\(candidate x fold\\) failed and were left out of the choice; the first error: too many KPCA components")
  expect_true(all(is.na(cv$accuracy[1, ])))
  expect_identical(cv$best, 2L)
  expect_true(all(cv$errors$candidate == 1L))
  expect_output(print(cv), "3 fit(s) failed and were left out; first error: too many KPCA components",
                fixed = TRUE)
  expect_match(cv$errors$message[1], "too many KPCA components", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, function(x, y) stop("boom"), kc[1:2], folds = 3),
               "Cross-validation failed for every candidate; first error: boom",
               fixed = TRUE)
})

test_that("progress is signalled once per kernel and fold", {
  old <- options(progressr.enable = TRUE)
  on.exit(options(old), add = TRUE)
  n_updates <- 0L
  withCallingHandlers(
    cv_kernel(xc, yc, identity_learner, kc[1:3], folds = 4, seed = 1,
              strategy = "exhaustive"),
    progression = function(cond) {
      if (identical(cond$type, "update")) n_updates <<- n_updates + 1L
    })
  expect_identical(n_updates, 12L)
  # fast strategy: one update per fit the learner runs (the screen is one
  # call of the compiled code, before them)
  n_updates <- 0L
  amount <- 0
  cv <- withCallingHandlers(
    cv_kernel(xc, yc, "dne", lapply(c(0.01, 0.02, 0.5, 1), rbf_kernel),
              folds = 3, seed = 1),
    progression = function(cond) {
      if (identical(cond$type, "update")) {
        n_updates <<- n_updates + 1L
        amount <<- amount + cond$amount
      }
    })
  expect_true(any(cv$curve$dropped))
  expect_identical(n_updates, cv$n_fits)
  expect_equal(amount, cv$n_fits)
})

test_that("CV runs through the future plan: sequential equals multisession", {
  skip_on_cran()
  skip_if_not_installed("future")
  skip_if_not(nzchar(Sys.getenv("KMAHA_SLOW_TESTS")), "set KMAHA_SLOW_TESTS=1")
  skip_if_not(nzchar(find.package("kmaha", lib.loc = .libPaths(), quiet = TRUE)[1] %||% ""),
              "kmaha must be installed for multisession workers")
  # a learner that uses random numbers: the result must not depend on the plan
  noisy <- function(x, y, ...) diag(ncol(x)) + matrix(stats::rnorm(ncol(x)^2, sd = 0.01), ncol(x))
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  for (st in c("fast", "exhaustive")) {
    future::plan(future::sequential)
    cv_seq <- cv_kernel(xc, yc, noisy, kc, folds = 3, seed = 7, strategy = st)
    future::plan(future::multisession, workers = 2)
    cv_par <- cv_kernel(xc, yc, noisy, kc, folds = 3, seed = 7, strategy = st)
    expect_identical(cv_par$accuracy, cv_seq$accuracy)
    expect_identical(cv_par$best, cv_seq$best)
  }
})

test_that("the fast strategy keeps the clear winner and drops degenerate kernels", {
  # sigma = 0.01, 0.02: the kernel matrix is the identity to machine
  # precision, held-out points all map to the KPCA origin (chance accuracy)
  kk <- lapply(c(0.01, 0.02, 0.5, 1, 2), rbf_kernel)
  best <- list()
  for (l in c("dne", "nca")) {
    la <- if (l == "nca") list(max_iter = 100) else list()
    ex <- cv_kernel(xc, yc, l, kk, folds = 3, seed = 3, learner_args = la,
                    strategy = "exhaustive")
    fa <- cv_kernel(xc, yc, l, kk, folds = 3, seed = 3, learner_args = la)
    expect_identical(fa$strategy, "fast")
    expect_identical(fa$best, ex$best)
    expect_identical(fa$kernel, ex$kernel)
    expect_true(all(ex$accuracy[1:2, ] < 0.4))
    # the screen passes the three sensible kernels to the learner
    expect_identical(fa$curve$dropped, c(TRUE, TRUE, FALSE, FALSE, FALSE))
    expect_identical(fa$n_fits, 3L * 3L)
    expect_identical(ex$n_fits, 15L)
    # kept kernels: the same fits as the exhaustive run; dropped ones: none
    expect_identical(fa$accuracy[3:5, ], ex$accuracy[3:5, ])
    expect_true(all(is.na(fa$accuracy[1:2, ])))
    expect_equal(fa$curve$n_ok, c(0, 0, 3, 3, 3))
    expect_true(all(is.na(fa$curve$screen[1:2])))
    expect_identical(fa$folds, ex$folds)
    best[[l]] <- ex$best
  }
  fit <- kmaha(xc, yc, learner = "dne", kernel = "cv", kernels = kk,
               cv_folds = 3, seed = 3, scale = FALSE, k = 1)
  expect_identical(fit$kernel_choice$cv$best, best$dne)
  expect_identical(fit$settings$cv_strategy, "fast")
  expect_identical(kmaha(xc, yc, learner = "dne", kernel = "cv", kernels = kk,
                         cv_folds = 3, seed = 3, scale = FALSE,
                         cv_strategy = "exhaustive")$kernel_choice$cv$n_fits, 15L)
})

test_that("the kernels the screen passes on are scored as in the exhaustive run", {
  # the screen's order: most held-out rows right first, ties by position;
  # kernels without a score (passed over, degenerate) last
  scr <- list(accuracy = c(0.8, NA, 0.9, 0.8, 0.7), degenerate = matrix(FALSE, 5, 3),
              screened = c(TRUE, FALSE, TRUE, TRUE, TRUE), near_identity = rep(FALSE, 5))
  expect_identical(kmaha:::screen_order(scr)[1:4], c(3L, 1L, 4L, 5L))
  scr$degenerate[3, 2] <- TRUE
  expect_identical(kmaha:::screen_order(scr), c(1L, 4L, 5L, 2L, 3L))
  # real runs: the scored kernels equal the exhaustive run's, and the
  # choices agree whenever the exhaustive winner was scored
  for (s in 1:3) {
    ex <- cv_kernel(xc, yc, "dne", kc, folds = 3, seed = s, strategy = "exhaustive")
    fa <- cv_kernel(xc, yc, "dne", kc, folds = 3, seed = s)
    kept <- !fa$curve$dropped
    expect_identical(fa$accuracy[kept, ], ex$accuracy[kept, ])
    if (kept[ex$best]) expect_identical(fa$best, ex$best)
  }
})

test_that("warnings of the fold fits become one warning with their count", {
  warner <- function(x, y, ...) {
    warning("learner warning ", ncol(x) > 10)
    diag(ncol(x))
  }
  n_warn <- 0L
  msg <- NULL
  cv <- withCallingHandlers(
    cv_kernel(xc, yc, warner, kc, folds = 3, seed = 1, strategy = "exhaustive"),
    warning = function(w) {
      n_warn <<- n_warn + 1L
      msg <<- conditionMessage(w)
      invokeRestart("muffleWarning")
    })
  expect_identical(n_warn, 1L)
  first <- cv$warnings$message[1]
  expect_identical(msg, paste0("12 of the 12 cross-validation fits (candidate x fold) gave warnings; the first: ",
                               first))
  expect_match(first, "^learner warning (TRUE|FALSE)$")
  expect_identical(nrow(cv$warnings), 12L)
  expect_setequal(paste(cv$warnings$candidate, cv$warnings$fold),
                  paste(rep(1:4, each = 3), 1:3))
  # NCA stopped by max_iter: one warning from the CV, one from the final fit
  msgs <- character()
  withCallingHandlers(
    kmaha(xc, yc, learner = "nca", kernel = "cv", kernels = kc[2:3],
          cv_folds = 3, seed = 1, learner_args = list(max_iter = 2)),
    warning = function(w) {
      msgs <<- c(msgs, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_length(msgs, 2L)
  expect_match(msgs[1], "^6 of the 6 cross-validation fits \\(candidate x fold\\) gave warnings; the first: nca\\(\\) did not converge")
  expect_match(msgs[2], "^nca\\(\\) did not converge")
  # no warning at all when the fits are clean
  expect_no_warning(cv_kernel(xc, yc, identity_learner, kc, folds = 3, seed = 1))
})

test_that("fold fits go through the learners' fitters: the public learner's map, no fitted object", {
  kp <- kpca(xc, rbf_kernel(1))
  z <- kp$coords
  ctx <- kmaha:::kmaha_context()
  fit_map <- function(name, args, targets = NULL) {
    kmaha:::fit_map(kmaha:::learner_spec(name, args), z, yc, targets, ctx)$map
  }
  ref <- suppressWarnings(nca(z, yc, scale = FALSE, max_iter = 40, lambda = 0.01))
  expect_identical(suppressWarnings(fit_map("nca", list(max_iter = 40, lambda = 0.01))),
                   unname(ref$L))
  spec <- kmaha:::learner_spec("dne", list(k = 2))
  tg <- kmaha:::find_targets(spec, z, yc, ctx)
  expect_identical(fit_map("dne", list(k = 2), tg),
                   unname(dne(z, yc, scale = FALSE, targets = tg)$L))
  # input-space neighbours
  tg_in <- kmaha:::find_targets(spec, xc, yc, ctx)
  expect_identical(tg_in, list(same = target_neighbors(xc, yc, 2),
                               other = target_neighbors(xc, yc, 2, type = "other")))
  expect_identical(fit_map("dne", list(k = 2), tg_in),
                   unname(dne(z, yc, scale = FALSE, targets = tg_in)$L))
  # LMNN folds too
  spec_l <- kmaha:::learner_spec("lmnn", list(k = 2, max_iter = 50))
  tl <- kmaha:::find_targets(spec_l, z, yc, ctx)
  expect_identical(suppressWarnings(fit_map("lmnn", list(k = 2, max_iter = 50), tl)),
                   unname(suppressWarnings(lmnn(z, yc, k = 2, max_iter = 50, scale = FALSE))$L))
  expect_error(kmaha:::learner_spec("nca", list(lambda = -1)),
               "`learner_args$lambda` must be non-negative, not -1.", fixed = TRUE)
  # no fold fit builds a fitted object (embedding, leave-one-out accuracy)
  counter <- new.env()
  counter$n <- 0L
  quietly <- function(expr) suppressMessages(utils::capture.output(expr))
  quietly(trace("new_model", where = asNamespace("kmaha"), print = FALSE,
                tracer = substitute(assign("n", E$n + 1L, envir = E),
                                    list(E = counter))))
  on.exit(quietly(untrace("new_model", where = asNamespace("kmaha"))),
          add = TRUE)
  for (l in c("nca", "lmnn", "dne")) {
    for (st in c("fast", "exhaustive")) {
      suppressWarnings(cv_kernel(xc, yc, l, kc[2:4], folds = 3, seed = 1, strategy = st,
                                 learner_args = if (l == "nca") list(max_iter = 200) else list()))
    }
  }
  expect_identical(counter$n, 0L)
  suppressWarnings(nca(z, yc, scale = FALSE, max_iter = 5))
  expect_identical(counter$n, 1L)
})

test_that("bad input gives clear errors", {
  expect_error(cv_kernel(xc, yc, "svm", kc), "`learner` must be \"auto\", \"nca\", \"lmnn\", \"dne\", \"lfda\", \"rca\", \"mmc\", \"itml\" or a function",
               fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, folds = 1),
               "`folds` must be a single whole number >= 2.", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, folds = 1:3),
               "`folds` must be a single number of folds or a vector of 75 fold labels",
               fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, learner_args = list(1)),
               "`learner_args` must be a named list", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, learner_args = list(scale = TRUE)),
               "`learner_args` must not set 'scale'", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, strategy = "greedy"),
               "`strategy` must be one of \"fast\", \"exhaustive\".", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, kc, lambda = 1),
               "Unknown argument(s) to cv_kernel(): 'lambda'. Pass learner options in `learner_args`.",
               fixed = TRUE)
  expect_error(cv_kernel(xc, yc, identity_learner, rbf_kernel(1)),
               "`kernels` must be a non-empty list", fixed = TRUE)
  expect_error(cv_kernel(xc, yc, function(x, y) "a", kc[1:2], folds = 3),
               "The learner must return a numeric d x", fixed = TRUE)
})
