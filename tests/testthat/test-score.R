# Kernel choice in two steps, score then select (R/score.R, R/select.R):
# the scored-candidates object, re-selection without re-scoring, fold
# scores that equal predict() of the fold's fit, the screen, the context's
# thread count reaching every call, and time limits that stop the scoring.

sc_data <- function() {
  set.seed(4)
  n <- 90
  y <- factor(rep(c("a", "b", "c"), length.out = n))
  x <- matrix(rnorm(n * 4), n) + 1.5 * cbind(as.integer(y), -as.integer(y), 0, 0)
  colnames(x) <- paste0("v", 1:4)
  list(x = x, y = y)
}
sc_kernels <- function() lapply(c(0.25, 0.5, 1, 2, 4), rbf_kernel)

test_that("re-selecting from a scored object equals a fresh fit, under either rule", {
  d <- sc_data()
  ks <- sc_kernels()
  # scored once with the "cv" rule's shortlist: both rules read it
  sc <- score_candidates(d$x, d$y, learner = "dne", kernels = ks, seed = 3, shortlist = 3)
  expect_s3_class(sc, "kmaha_scores")
  expect_false(inherits(sc, "kmaha_cv"))
  fresh_auto <- kmaha(d$x, d$y, learner = "dne", kernels = ks, seed = 3)
  fresh_cv <- kmaha(d$x, d$y, learner = "dne", kernels = ks, seed = 3, kernel = "cv")
  re_auto <- kmaha(d$x, d$y, learner = "dne", kernels = ks, kernel = sc)
  re_cv <- kmaha(d$x, d$y, learner = "dne", kernels = ks, kernel = sc, rule = "cv")
  expect_identical(re_auto$kernel_choice$cv$best, fresh_auto$kernel_choice$cv$best)
  expect_identical(re_cv$kernel_choice$cv$best, fresh_cv$kernel_choice$cv$best)
  expect_identical(re_auto$L, fresh_auto$L)
  expect_identical(re_cv$L, fresh_cv$L)
  expect_identical(predict(re_auto, d$x), predict(fresh_auto, d$x))
  # the base kernels the learner scored have the same scores in both
  a <- fresh_auto$kernel_choice$cv$curve
  s <- sc$curve
  on <- s$kind == "kernel" & !s$dropped & !a$dropped[seq_len(nrow(s))]
  expect_equal(a$mean[on], s$mean[on])
  expect_true(re_cv$kernel_choice$scored)
  expect_identical(re_cv$kernel_choice$type, "cv")
  # the formula interface: the same scores, and kmaha() reads them
  df <- data.frame(d$x, cls = d$y)
  sf <- score_candidates(cls ~ ., df, learner = "dne", kernels = ks, seed = 3, shortlist = 3)
  expect_equal(sf$curve$mean, sc$curve$mean)
  ff <- kmaha(cls ~ ., df, learner = "dne", kernels = ks, kernel = sf)
  expect_identical(unname(predict(ff, df)), unname(predict(re_auto, d$x)))
})

test_that("a fold's score is predict() of the candidate fitted on the fold", {
  d <- sc_data()
  ks <- sc_kernels()
  sc <- score_candidates(d$x, d$y, learner = "dne", kernels = ks, seed = 5,
                         strategy = "exhaustive", k = 1)
  xs <- scale(d$x)
  for (j in c(which(sc$curve$kind == "kernel")[c(1, 3)], which(sc$curve$kind == "linear"),
              which(sc$curve$kind == "unweighted"))) {
    kern <- switch(sc$curve$kind[j], linear = "linear", unweighted = kernel_sum(ks),
                   ks[[which(vapply(ks, function(k) k$sigma, 0) == sc$curve$sigma[j])]])
    for (f in 1:5) {
      te <- sc$folds == f
      fit <- kmaha(xs[!te, ], droplevels(d$y[!te]), learner = "dne", kernel = kern,
                   scale = FALSE)
      expect_identical(as.character(predict(fit, xs[te, ])) == as.character(d$y[te]),
                       sc$correct[te, j], label = paste(sc$curve$label[j], "fold", f))
    }
  }
  # Euclidean: 1-NN among the fold's training rows
  j <- which(sc$curve$kind == "euclidean")
  te <- sc$folds == 2
  nn <- knn_classify(xs[!te, ], d$y[!te], xs[te, ])$class
  expect_identical(as.character(nn) == as.character(d$y[te]), sc$correct[te, j])
})

test_that("NCA and LMNN folds score as predict() of the kernel candidate fitted on the fold", {
  d <- sc_data()
  ks <- sc_kernels()
  xs <- scale(d$x)
  args <- list(dim = 3, tol = 1e-4)
  for (l in c("nca", "lmnn")) {
    sc <- score_candidates(d$x, d$y, learner = l, candidates = "kernels", kernels = ks[2:3],
                           seed = 2, strategy = "exhaustive", learner_args = args, k = 1)
    for (j in 1:2) for (f in c(1, 4)) {
      te <- sc$folds == f
      fit <- kmaha(xs[!te, ], droplevels(d$y[!te]), learner = l, kernel = ks[[j + 1]],
                   scale = FALSE, learner_args = args)
      expect_identical(as.character(predict(fit, xs[te, ])) == as.character(d$y[te]),
                       sc$correct[te, j], label = paste(l, sc$curve$label[j], "fold", f))
    }
  }
})

# The calls of the compiled code (cpp_*()) that `expr` makes, in order.
core_calls <- function(expr) {
  ns <- asNamespace("kmaha")
  calls <- character()
  nms <- grep("^cpp_", ls(ns), value = TRUE)
  orig <- mget(nms, envir = ns)
  put <- function(nm, f) {
    unlockBinding(nm, ns)
    assign(nm, f, envir = ns)
    lockBinding(nm, ns)
  }
  on.exit(for (nm in nms) put(nm, orig[[nm]]))
  for (nm in nms) local({
    f <- orig[[nm]]
    n <- nm
    put(n, function(...) {
      calls <<- c(calls, n)
      f(...)
    })
  })
  force(expr)
  calls
}

test_that("a fold is fit, then score: two calls of the core, one Gram matrix per kernel", {
  # (every call fits: none takes the fits of an earlier one)
  withr::local_options(kmaha.reuse_fits = FALSE)
  d <- sc_data()
  ks <- sc_kernels()[2:3]
  fit_call <- c(nca = "cpp_nca_fit", lmnn = "cpp_lmnn_fit", dne = "cpp_dne_fit")
  for (l in names(fit_call)) {
    calls <- core_calls(score_candidates(d$x, d$y, learner = l, candidates = "kernels",
                                         kernels = ks, folds = 3, seed = 1,
                                         strategy = "exhaustive"))
    # 2 kernels x 3 folds: per fold the KPCA (projecting the held-out rows)
    # and the learner (voting them); one Gram matrix per kernel
    expect_identical(sort(unique(calls)),
                     sort(c("cpp_kernel_matrix", "cpp_kpca_gram", fit_call[[l]])), label = l)
    expect_identical(c(sum(calls == "cpp_kernel_matrix"), sum(calls == "cpp_kpca_gram"),
                       sum(calls == fit_call[[l]])), c(2L, 6L, 6L), label = l)
    # "auto" adds the unweighted sum (as a kernel), the linear learner (one
    # call per fold) and Euclidean k-NN (one)
    calls <- core_calls(score_candidates(d$x, d$y, learner = l, kernels = ks, folds = 3,
                                         seed = 1, strategy = "exhaustive"))
    expect_identical(sum(calls == fit_call[[l]]), 12L, label = l)
    expect_identical(sum(calls == "cpp_knn_votes"), 3L, label = l)
    expect_identical(sum(calls == "cpp_kpca_gram"), 9L, label = l)
    expect_identical(sum(calls == "cpp_kernel_matrix"), 3L, label = l)
    expect_false(any(c("cpp_pipeline_apply", "cpp_class_neighbors", "cpp_dne_neighbors",
                       "cpp_kpca_kernel") %in% calls), label = l)
  }
})

test_that("folds that share a Gram matrix score as folds that evaluate the kernel", {
  d <- sc_data()
  ks <- sc_kernels()
  shared <- score_candidates(d$x, d$y, learner = "dne", kernels = ks, seed = 7,
                             strategy = "exhaustive")
  ns <- asNamespace("kmaha")
  old <- get("gram_share_max_rows", ns)
  unlockBinding("gram_share_max_rows", ns)
  assign("gram_share_max_rows", 0L, envir = ns)
  on.exit({
    assign("gram_share_max_rows", old, envir = ns)
    lockBinding("gram_share_max_rows", ns)
  })
  own <- score_candidates(d$x, d$y, learner = "dne", kernels = ks, seed = 7,
                          strategy = "exhaustive")
  expect_identical(shared$correct, own$correct)
  expect_identical(shared$curve$degenerate, own$curve$degenerate)
})

test_that("folds score NCA and LMNN at the scoring tolerance, unless the user sets tol", {
  d <- sc_data()
  xs <- scale(d$x)
  fold_correct <- function(tol_fit, learner_args = list()) {
    sc <- score_candidates(d$x, d$y, learner = "nca", candidates = "auto", kernels = sc_kernels(),
                           seed = 5, learner_args = learner_args, k = 1)
    j <- which(sc$curve$kind == "linear")
    te <- sc$folds == 3
    fit <- kmaha(xs[!te, ], droplevels(d$y[!te]), learner = "nca", kernel = "linear",
                 scale = FALSE, learner_args = list(tol = tol_fit))
    list(fold = sc$correct[te, j],
         refit = as.character(predict(fit, xs[te, ])) == as.character(d$y[te]),
         map = fit$L)
  }
  a <- fold_correct(1e-3)
  expect_identical(a$fold, a$refit)
  b <- fold_correct(1e-9, list(tol = 1e-9))
  expect_identical(b$fold, b$refit)
  # the tolerance is the scoring's own: the chosen candidate's fit keeps the
  # learner's, and the two tolerances give different maps here
  expect_false(isTRUE(all.equal(a$map, b$map)))
  spec <- kmaha:::learner_spec("lmnn", list())
  expect_identical(kmaha:::scoring_spec(spec)$opts$tol, 1e-3)
  expect_identical(kmaha:::scoring_spec(kmaha:::learner_spec("lmnn", list(tol = 1e-7)))$opts$tol,
                   1e-7)
  expect_identical(kmaha:::scoring_spec(kmaha:::learner_spec("dne", list())),
                   kmaha:::learner_spec("dne", list()))
})

test_that("the screen passes the shortlist to the learner and keeps its scores", {
  d <- sc_data()
  ks <- paper_kernels()
  sc <- score_candidates(d$x, d$y, learner = "dne", seed = 1)
  ker <- sc$curve$kind == "kernel"
  expect_identical(sum(ker & !sc$curve$dropped), 1L)
  # the one passed on has the best screen score (the first on ties)
  best <- which(ker)[order(-ifelse(is.na(sc$curve$screen[ker]), -Inf, sc$curve$screen[ker]),
                           which(ker))[1]]
  expect_false(sc$curve$dropped[best])
  expect_true(all(is.na(sc$curve$mean[ker & sc$curve$dropped])))
  expect_false(any(sc$curve$dropped[!ker]))
  # an ordered grid: every other bandwidth is screened, and the neighbours
  # of the best; the narrowest are passed over as near the identity
  screened <- !is.na(sc$curve$screen[ker])
  expect_lt(sum(screened), 21L)
  expect_true(all(screened[seq(1, 21, by = 2)] | is.na(sc$curve$screen[ker][seq(1, 21, by = 2)])))
  # the exhaustive strategy scores every kernel with the learner
  ex <- score_candidates(d$x, d$y, learner = "dne", seed = 1, strategy = "exhaustive")
  expect_false(any(ex$curve$dropped))
  expect_true(all(is.na(ex$curve$screen)))
})

test_that("the screen separates two thin rings as the learner does", {
  # the thin rings of make_rings() (helper-model.R)
  tr <- make_rings(100, 1)
  te <- make_rings(200, 2)
  for (lr in c("dne", "nca")) {
    fit <- kmaha(tr$x, tr$y, learner = lr, seed = 1)
    cv <- fit$kernel_choice$cv
    expect_identical(cv$curve$kind[cv$best], "kernel", label = lr)
    expect_gt(mean(predict(fit, te$x) == te$y), 0.9)
  }
})

test_that("scores are checked against the data and settings of the fit", {
  d <- sc_data()
  ks <- sc_kernels()
  sc <- score_candidates(d$x, d$y, learner = "dne", kernels = ks, seed = 1)
  expect_error(kmaha(d$x[-1, ], d$y[-1], learner = "dne", kernels = ks, kernel = sc),
               "`kernel` holds scores of data with 90 rows and 4 columns, but `x` has 89 rows and 4 columns",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, learner = "nca", kernels = ks, kernel = sc),
               "`kernel` holds scores computed with learner = \"dne\", but this call sets learner = \"nca\"; leave `learner` out",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, learner = "dne", kernels = ks, kernel = sc, k = 3),
               "computed with k = NULL, but this call sets k = 3", fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = rbf_kernel(1), rule = "cv"),
               "`rule` selects from scored candidates: it applies with kernel = \"auto\", \"cv\" or a scored-candidates object, not with kernel = a kernel object.",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, learner = "dne", kernels = ks, kernel = sc, rule = "best"),
               "`rule` must be \"auto\" or \"cv\".", fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = "align_lp"), "is no longer a kernel choice",
               fixed = TRUE)
})

test_that("print, summary, tidy and autoplot show scores with and without a choice", {
  d <- sc_data()
  sc <- score_candidates(d$x, d$y, learner = "dne", kernels = sc_kernels(), seed = 1)
  out <- capture.output(print(sc))
  expect_match(out[1], "<kmaha scores> 5-fold CV of DNE, 8 candidate pipelines", fixed = TRUE)
  expect_true(any(grepl("best scores:", out, fixed = TRUE)))
  expect_true(all(nchar(out) <= 80L))
  fit <- kmaha(d$x, d$y, learner = "dne", kernels = sc_kernels(), kernel = sc)
  out <- capture.output(print(fit))
  expect_true(all(nchar(out) <= 80L))
  expect_true(any(grepl("why:", out, fixed = TRUE)))
  s <- capture.output(print(summary(sc)))
  expect_true(any(grepl("screen", s, fixed = TRUE)))
  if (requireNamespace("generics", quietly = TRUE)) {
    td <- generics::tidy(fit$kernel_choice$cv)
    expect_identical(nrow(td), nrow(sc$curve))
  }
})

test_that("print() names what the choice chose: Euclidean, the linear learner or a kernel", {
  d <- sc_data()
  sc <- score_candidates(d$x, d$y, learner = "dne", kernels = sc_kernels(), seed = 1)
  eu <- which(sc$curve$kind == "euclidean")
  # Euclidean made to win clearly on the held-out points
  sc$correct[, eu] <- TRUE
  sc$accuracy[eu, ] <- 1
  sc$curve$mean[eu] <- 1
  fit <- kmaha(d$x, d$y, learner = "dne", kernels = sc_kernels(), kernel = sc)
  expect_identical(fit$learner, "euclidean")
  out <- paste(capture.output(print(fit)), collapse = " ")
  expect_match(out, "none: Euclidean k-NN on the inputs (no metric learned)", fixed = TRUE)
  expect_false(grepl("the linear learner,", out, fixed = TRUE))
  expect_s3_class(fit, "kmaha_linear")
  expect_identical(predict(fit, d$x), knn_classify(scale(d$x), d$y, scale(d$x), k = fit$k)$class)
})

test_that("num_threads = 1 reaches every call of the compiled code", {
  d <- sc_data()
  old <- options(kmaha.num_threads = 2)
  on.exit(options(old), add = TRUE)
  kmaha:::core_threads_seen(TRUE)
  f <- kmaha(d$x, d$y, seed = 1, num_threads = 1)
  f2 <- kmaha(d$x, d$y, learner = "dne", kernel = "align", num_threads = 1)
  f3 <- suppressWarnings(kmaha(d$x, d$y, learner = "lmnn", kernel = "cv",
                              kernels = sc_kernels(), seed = 1, num_threads = 1,
                              learner_args = list(max_iter = 30)))
  sc <- score_candidates(d$x, d$y, learner = "dne", seed = 1, num_threads = 1)
  cv <- cv_kernel(scale(d$x), d$y, "dne", kernels = sc_kernels(), seed = 1, num_threads = 1)
  expect_identical(kmaha:::core_threads_seen(), 1L)
  # and the default reaches two threads (the diagnostic sees them)
  invisible(kernel_matrix(rbf_kernel(1), d$x))
  expect_identical(kmaha:::core_threads_seen(), 2L)
})

test_that("a time limit stops the whole scoring, not one fold's fit", {
  d <- sc_data()
  # a learner that works for 2 CPU seconds: a CPU-time limit of 0.3 s falls
  # due inside the first fold's fit, however loaded the machine (its own
  # work counts, not the clock)
  slow <- function(x, y, ...) {
    t0 <- proc.time()[["user.self"]]
    while (proc.time()[["user.self"]] - t0 < 2) NULL
    diag(ncol(x))
  }
  res <- withCallingHandlers(
    tryCatch({
      setTimeLimit(cpu = 0.3, transient = TRUE)
      kmaha(d$x, d$y, learner = slow, kernels = sc_kernels(), seed = 1)
    }, error = function(e) e),
    warning = function(w) stop("unexpected warning: ", conditionMessage(w)))
  setTimeLimit()
  expect_s3_class(res, "error")
  expect_match(conditionMessage(res), "time limit", fixed = TRUE)
  expect_false(grepl("cross-validation fits", conditionMessage(res), fixed = TRUE))
  # R is usable afterwards
  expect_s3_class(kmaha(d$x, d$y, learner = "dne", kernel = "linear"), "kmaha_fit")
})

test_that("a chosen kernel's map has 16 rows, NCA's at least the inputs' count, unless dim is set", {
  set.seed(3)
  x <- matrix(rnorm(90 * 20), 90, 20)
  y <- factor(ifelse(rowSums(x[, 1:3]^2) > 3, "out", "in"))
  ks <- lapply(c(2, 5), rbf_kernel)
  fit <- function(x, learner, ...) {
    suppressWarnings(kmaha(x, y, learner = learner, kernel = "cv", kernels = ks,
                           cv_folds = 3, seed = 1, ...))
  }
  # NCA: as many rows as the linear learner's map on the 20 inputs
  f <- fit(x, "nca")
  expect_s3_class(f, "kmaha_kpca_trick")
  expect_identical(nrow(f$L), 20L)
  # with 4 inputs, the cap of 16 rows
  f4 <- fit(x[, 1:4], "nca")
  expect_identical(nrow(f4$L), 16L)
  # LMNN keeps 16 rows whatever the inputs' count
  fl <- fit(x, "lmnn", learner_args = list(max_iter = 30))
  expect_identical(nrow(fl$L), 16L)
  # the user's dim wins
  fd <- fit(x, "nca", learner_args = list(dim = 5))
  expect_identical(nrow(fd$L), 5L)
})
