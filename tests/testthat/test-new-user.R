# What a new user hits (issue 13): every case with the exact message or
# result expected.

xi <- as.matrix(iris[, 1:4])
yi <- iris$Species

# ---------------------------------------------------------------------------
# Formula interface

test_that("kmaha(formula = ...) works like nca(formula = ...)", {
  f1 <- kmaha(formula = Species ~ ., data = iris, learner = "dne",
              kernel = rbf_kernel(1))
  f2 <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = rbf_kernel(1))
  expect_identical(f1$embedding, f2$embedding)
  expect_identical(predict(f1, iris[c(1, 51, 101), ]),
                   predict(f2, iris[c(1, 51, 101), ]))
  n1 <- suppressWarnings(nca(formula = Species ~ ., data = iris, max_iter = 5))
  n2 <- suppressWarnings(nca(Species ~ ., data = iris, max_iter = 5))
  expect_identical(n1$L, n2$L)
  expect_error(dne(x = Species ~ ., data = iris),
               "`formula` is missing: give the model formula first (or as `formula =`)",
               fixed = TRUE)
})

# ---------------------------------------------------------------------------
# Labels: unused levels

test_that("an unused level of y is named at fit time and kept in predictions", {
  y4 <- factor(yi, levels = c(levels(yi), "zzz"))
  msg <- "`y` has level(s) 'zzz' with no rows; they stay levels of the predictions (with probability 0) but can never be predicted. Use droplevels() to remove them."
  expect_warning(fit <- dne(xi, y4), msg, fixed = TRUE)
  expect_identical(levels(fit$y), levels(y4))
  pc <- predict(fit, xi[c(1, 51, 101), ])
  expect_identical(levels(pc), levels(y4))
  # comparisons with the labels work
  expect_identical(as.vector(pc == y4[c(1, 51, 101)]), c(TRUE, TRUE, TRUE))
  pp <- predict(fit, xi[c(1, 51, 101), ], type = "prob", k = 5)
  expect_identical(colnames(pp), levels(y4))
  expect_identical(unname(pp[, "zzz"]), c(0, 0, 0))
  # the fit itself equals the fit without the unused level
  fit3 <- dne(xi, yi)
  expect_identical(fit$L, fit3$L)
  expect_identical(levels(predict(fit)), levels(y4))
  # the same for kmaha(), knn_classify() and a formula fit
  expect_warning(kf <- kmaha(xi, y4, learner = "dne", kernel = rbf_kernel(1)),
                 msg, fixed = TRUE)
  expect_identical(levels(predict(kf, xi[1:2, ])), levels(y4))
  expect_warning(kn <- knn_classify(xi, y4, xi[1:2, ]), msg, fixed = TRUE)
  expect_identical(levels(kn$class), levels(y4))
  df <- data.frame(iris[, 1:4], Species = y4)
  expect_warning(ff <- dne(Species ~ ., data = df), msg, fixed = TRUE)
  expect_identical(levels(predict(ff, df[1:2, ])), levels(y4))
})

# ---------------------------------------------------------------------------
# New data: missing values, no rows, column names

test_that("predict() gives NA for rows with missing values, for every type", {
  fits <- list(
    linear = dne(xi, yi),
    kernel_trick = kdne(xi[c(1:20, 51:70, 101:120), ], yi[c(1:20, 51:70, 101:120)],
                        dim = 2),
    kmaha = kmaha(xi, yi, learner = "dne", kernel = rbf_kernel(1)))
  new <- xi[c(3, 77, 140), ]
  new_na <- new
  new_na[2, 3] <- NA
  for (nm in names(fits)) {
    fit <- fits[[nm]]
    cls <- predict(fit, new_na)
    expect_identical(as.character(cls),
                     c(as.character(predict(fit, new[1, , drop = FALSE])), NA,
                       as.character(predict(fit, new[3, , drop = FALSE]))),
                     info = nm)
    expect_identical(levels(cls), levels(yi), info = nm)
    pr <- predict(fit, new_na, type = "prob", k = 3)
    expect_true(all(is.na(pr[2, ])), info = nm)
    expect_equal(pr[-2, ], predict(fit, new[-2, ], type = "prob", k = 3), info = nm)
    tr <- predict(fit, new_na, type = "transform")
    expect_true(all(is.na(tr[2, ])), info = nm)
    expect_equal(tr[-2, ], predict(fit, new[-2, ], type = "transform"), info = nm)
  }
  # formula fits: a missing value in the data frame row
  ff <- dne(Species ~ ., data = iris)
  dfn <- iris[c(3, 77, 140), ]
  dfn$Petal.Length[2] <- NA
  expect_identical(as.character(predict(ff, dfn)),
                   c("setosa", NA, "virginica"))
})

test_that("predict() on zero rows returns an empty result of the right type", {
  fit <- dne(Species ~ ., data = iris, dim = 2)
  cls <- predict(fit, iris[0, ])
  expect_identical(cls, factor(character(0), levels = levels(yi)))
  pr <- predict(fit, iris[0, ], type = "prob")
  expect_identical(dim(pr), c(0L, 3L))
  expect_identical(colnames(pr), levels(yi))
  tr <- predict(fit, iris[0, ], type = "transform")
  expect_identical(dim(tr), c(0L, 2L))
  kf <- kmaha(xi, yi, learner = "dne", kernel = rbf_kernel(1))
  expect_identical(predict(kf, xi[0, ]), factor(character(0), levels = levels(yi)))
  expect_identical(ncol(predict(kf, xi[0, ], type = "transform")), ncol(kf$embedding))
})

test_that("newdata columns are matched by name; unnamed newdata is refused", {
  fit <- dne(xi, yi)
  # reordered named columns give the same predictions
  expect_identical(predict(fit, xi[, 4:1]), predict(fit, xi))
  expect_identical(predict(fit, iris[, c(5, 4, 2, 3, 1)]), predict(fit, xi))
  msg <- "`newdata` has no column names, but the model was trained on named columns ('Sepal.Length', 'Sepal.Width', 'Petal.Length', 'Petal.Width'). Columns are matched by name: set them first, with colnames(newdata) <- the training names in the order of your columns."
  expect_error(predict(fit, unname(xi[, 4:1])), msg, fixed = TRUE)
  kf <- kmaha(xi, yi, learner = "dne", kernel = rbf_kernel(1))
  expect_error(predict(kf, unname(xi[, 4:1])), msg, fixed = TRUE)
  ff <- dne(Species ~ ., data = iris)
  expect_error(predict(ff, unname(xi)), msg, fixed = TRUE)
  # a model trained without names matches by position
  fu <- dne(unname(xi), yi)
  expect_identical(predict(fu, unname(xi[1:5, ])), predict(fit, xi[1:5, ]))
})

# ---------------------------------------------------------------------------
# Column types: one rule for everything that is not a number

test_that("Date, POSIXct and difftime columns are refused with the conversion to use", {
  df <- data.frame(a = rnorm(6), d = as.Date("2020-01-01") + 0:5)
  yy <- factor(rep(c("u", "v"), 3))
  expect_error(dne(df, yy, k = 1),
               "`x` must have numeric columns only; column 'd' is Date: convert it to days with as.numeric(d) (days since 1970-01-01), or drop it.",
               fixed = TRUE)
  expect_error(dne(yy ~ a + d, data = cbind(df, yy = yy), k = 1),
               "`data` must have numeric columns only; column 'd' is Date: convert it to days with as.numeric(d) (days since 1970-01-01), or drop it.",
               fixed = TRUE)
  dp <- data.frame(a = rnorm(6),
                   t = as.POSIXct("2020-01-01", tz = "UTC") + 3600 * (0:5))
  expect_error(nca(dp, yy),
               "`x` must have numeric columns only; column 't' is POSIXct: convert it to seconds with as.numeric(t) (seconds since 1970-01-01 UTC), or drop it.",
               fixed = TRUE)
  dd <- data.frame(a = rnorm(6), w = as.difftime(1:6, units = "mins"))
  expect_error(nca(yy ~ ., data = cbind(dd, yy = yy)),
               "`data` must have numeric columns only; column 'w' is difftime: convert it with as.numeric(w, units = \"secs\") (or another unit), or drop it.",
               fixed = TRUE)
  # factors: refused by the matrix interface, expanded by the formula one
  dfac <- data.frame(a = c(1, 2, 3, 4, 5, 7), f = factor(c("p", "q", "p", "q", "q", "p")))
  expect_error(dne(dfac, yy, k = 1),
               "`x` must have numeric columns only; column 'f' is factor: convert it to numbers, drop it, or use the formula interface, which expands factors into indicator columns.",
               fixed = TRUE)
  expect_identical(dne(yy ~ ., data = cbind(dfac, yy = yy), k = 1)$feature_names,
                   c("a", "fq"))
  # logical columns are 0/1
  dl <- data.frame(a = c(1, 2, 3, 4, 5, 7), l = c(TRUE, FALSE, TRUE, TRUE, FALSE, FALSE))
  expect_identical(dne(dl, yy, k = 1)$L,
                   dne(data.frame(a = dl$a, l = as.numeric(dl$l)), yy, k = 1)$L)
})

# ---------------------------------------------------------------------------
# Scale: the constant-column test is relative

test_that("rescaling the inputs by 1e-150 or 1e150 changes no fit", {
  # continuous data without tied distances (iris has ties, which rounding
  # may break either way)
  set.seed(2)
  xr <- matrix(rnorm(60 * 3), 60) %*% diag(c(1, 3, 0.2)) + 5
  yr <- factor(rep(c("a", "b", "c"), 20))
  emb_dist <- function(fit) as.matrix(stats::dist(fit$embedding))
  for (s in c(1e-150, 1e150)) {
    f0 <- nca(xi, yi, max_iter = 100)
    f1 <- nca(xi * s, yi, max_iter = 100)
    expect_equal(f1$L, f0$L, tolerance = 1e-6, info = format(s))
    expect_equal(dne(xr * s, yr)$embedding, dne(xr, yr)$embedding,
                 tolerance = 1e-8, info = format(s))
    expect_equal(lmnn(xr * s, yr, max_iter = 50)$L, lmnn(xr, yr, max_iter = 50)$L,
                 tolerance = 1e-6, info = format(s))
    expect_equal(emb_dist(suppressWarnings(knca(xr * s, yr, dim = 2, max_iter = 10))),
                 emb_dist(suppressWarnings(knca(xr, yr, dim = 2, max_iter = 10))),
                 tolerance = 1e-6, info = format(s))
    expect_equal(emb_dist(kdne(xr * s, yr, dim = 2)), emb_dist(kdne(xr, yr, dim = 2)),
                 tolerance = 1e-6, info = format(s))
    expect_equal(kmaha(xr * s, yr, learner = "dne", kernel = rbf_kernel(1))$embedding,
                 kmaha(xr, yr, learner = "dne", kernel = rbf_kernel(1))$embedding,
                 tolerance = 1e-6, info = format(s))
  }
  # still constant: a column whose spread is below 1e-12 of its size
  xc <- cbind(xi, flat = 1e-200, nearly = 1 + 1e-14 * (1:150))
  expect_error(nca(xc, yi),
               "`x` has constant column(s) 'flat', 'nearly' (standard deviation below 1e-12 of the largest absolute value); they carry no distance information. Remove them before fitting.",
               fixed = TRUE)
  # not constant: a tiny column that varies
  fit <- dne(cbind(xi, tiny = 1e-200 * (1:150)), yi)
  expect_true(all(is.finite(fit$L)))
})

# ---------------------------------------------------------------------------
# Small classes: one rule for every learner

test_that("a class too small for the learner: one rule, warning or error naming y", {
  expect_error(nca(xi[c(1, 51), ], droplevels(yi[c(1, 51)])),
               "`y` has no class with 2 or more members, so no point has a same-class neighbour and there is nothing to learn from. Each class needs at least 2 rows to take part.",
               fixed = TRUE)
  expect_error(knca(xi[c(1, 51), ], droplevels(yi[c(1, 51)])),
               "`y` has no class with 2 or more members", fixed = TRUE)
  big <- "`k` (60) is too large: no class has more than 50 members, so no point can have 60 same-class neighbours. Use k <= 49."
  expect_error(dne(xi, yi, k = 60), big, fixed = TRUE)
  expect_error(lmnn(xi, yi, k = 60), big, fixed = TRUE)
  expect_error(kdne(xi, yi, k = 60), big, fixed = TRUE)
  expect_error(kmaha(xi, yi, learner = "lmnn", kernel = rbf_kernel(1),
                     learner_args = list(k = 60)),
               "`learner_args$k` (60) is too large: no class has more than 50 members, so no point can have 60 same-class neighbours. Use learner_args$k <= 49.",
               fixed = TRUE)
  # a singleton class: NCA warns (its point has no same-class neighbour)
  idx <- c(1:20, 51:70, 101)
  res <- collect_warnings(nca(xi[idx, ], yi[idx], max_iter = 200))
  expect_identical(res$warnings,
                   "`y`: class 'virginica' (1 member) has fewer than 2 members; its points use as many same-class neighbours as the class allows (none for a singleton).")
})

test_that("kmaha() passes on the small-class warning of every learner", {
  idx <- c(1:20, 51:70, 101:102)
  x <- xi[idx, ]
  y <- yi[idx]
  msg <- "`y`: class 'virginica' (2 members) has fewer than learner_args$k + 1 = 4 members; its points use as many same-class neighbours as the class allows (none for a singleton)."
  for (l in c("lmnn", "dne")) {
    res <- collect_warnings(kmaha(x, y, learner = l, kernel = rbf_kernel(1)))
    expect_identical(res$warnings, msg, info = l)
  }
  idx1 <- c(1:20, 51:70, 101)
  res <- collect_warnings(kmaha(xi[idx1, ], yi[idx1], learner = "nca",
                                kernel = rbf_kernel(1)))
  expect_identical(res$warnings,
                   "`y`: class 'virginica' (1 member) has fewer than 2 members; its points use as many same-class neighbours as the class allows (none for a singleton).")
})

# ---------------------------------------------------------------------------
# kmaha(): errors in terms of what the learner receives

test_that("kmaha() errors speak of KPCA components, not columns of x", {
  r <- ncol(kpca(scale(xi), rbf_kernel(1))$coords)
  expect_error(kmaha(xi, yi, kernel = rbf_kernel(1), learner_args = list(dim = 500)),
               sprintf("`learner_args$dim` (500) must not exceed the number of coordinates the learner receives: %d KPCA components (keep more with a smaller `tol` or a larger `rank`, or lower `dim`).", r),
               fixed = TRUE)
  expect_error(kmaha(xi, yi, kernel = "linear", learner_args = list(dim = 5)),
               "`learner_args$dim` (5) must not exceed the number of coordinates the learner receives: 4 standardized input columns.",
               fixed = TRUE)
  expect_error(kmaha(xi, yi, kernel = rbf_kernel(1),
                     learner_args = list(dim = 2, init = matrix(1, 2, 3))),
               "`learner_args$init` as a matrix starts one learner on its coordinates, but learner = \"auto\" fits several",
               fixed = TRUE)
  expect_error(kmaha(xi, yi, learner = "nca", kernel = rbf_kernel(1),
                     learner_args = list(dim = 2, init = matrix(1, 2, 3))),
               sprintf("NCA on the %d KPCA components (its `x`): `init` must be a 2 x %d matrix", r, r),
               fixed = TRUE)
})

test_that("a custom learner with the wrong signature is named, without the data", {
  msg <- "`learner` must be a function f(x, y, ...) taking the coordinates and the class labels as its first two arguments (plus the names in `learner_args`) and returning a d x D map; this one takes (x)."
  expect_error(kmaha(xi, yi, learner = function(x) diag(ncol(x)), kernel = rbf_kernel(1)),
               msg, fixed = TRUE)
  expect_error(cv_kernel(scale(xi), yi, function(x) diag(ncol(x)), list(rbf_kernel(1))),
               msg, fixed = TRUE)
  expect_error(kmaha(xi, yi, learner = function(x, y) diag(ncol(x)),
                     kernel = rbf_kernel(1), learner_args = list(ridge = 1)),
               "`learner_args` sets 'ridge', but `learner` takes only (x, y); add the argument(s) or `...` to the function, or remove them from `learner_args`.",
               fixed = TRUE)
  # any other error of a custom learner is reported without the data
  err <- tryCatch(kmaha(xi, yi, learner = function(x, y) sqrt(x, y),
                        kernel = rbf_kernel(1)),
                  error = function(e) conditionMessage(e))
  expect_lt(nchar(err), 300)
  expect_match(err, "^custom learner on the [0-9]+ KPCA components \\(its `x`\\): ")
})

# ---------------------------------------------------------------------------
# caret: fixed arguments checked when the model is built

test_that("kmaha_caret() validates fixed arguments against the learner", {
  expect_error(kmaha_caret("dne", bogus = 1),
               "Unknown argument(s) to kmaha_caret(\"dne\"): 'bogus'. It passes fixed arguments to dne(), which takes: dim, lambda, scale, num_threads.",
               fixed = TRUE)
  expect_error(kmaha_caret("kdne", scale = FALSE),
               "Unknown argument(s) to kmaha_caret(\"kdne\"): 'scale'. It passes fixed arguments to dne(), which takes: dim, lambda, num_threads.",
               fixed = TRUE)
  expect_error(kmaha_caret("nca", dim = 2),
               "kmaha_caret(\"nca\"): `dim` is tuned by caret (parameter `dim`); give its values in `tuneGrid`, not as a fixed argument.",
               fixed = TRUE)
  expect_error(kmaha_caret("lmnn", k = 2),
               "kmaha_caret(\"lmnn\"): `k` is tuned by caret (parameter `targets`); give its values in `tuneGrid`, not as a fixed argument.",
               fixed = TRUE)
  expect_error(kmaha_caret("nca", 100),
               "Unknown argument(s) to kmaha_caret(\"nca\"): <unnamed>. Fixed learner arguments must be named, e.g. max_iter = 100.",
               fixed = TRUE)
  m <- kmaha_caret("knca", max_iter = 5, dim = 2)
  expect_identical(m$label, "kmaha KNCA")
})

# ---------------------------------------------------------------------------
# Degenerate kernels

test_that("a kernel that is numerically the identity or constant on the data warns", {
  ident <- "The kernel is numerically the identity on these data: every point is equally far from every other in feature space, so nearest neighbours are arbitrary. The inputs are too far apart for it: standardize them (e.g. scale = TRUE, or scale(x)), or use a larger sigma."
  const <- "The kernel is numerically constant on these data: all points coincide in feature space, so nearest neighbours are arbitrary. The inputs are too close together for it: standardize them (e.g. scale = TRUE, or scale(x)), or use a smaller sigma."
  expect_warning(kpca(xi * 1e150), ident, fixed = TRUE)
  expect_warning(kpca(xi * 1e150), class = "kmaha_degenerate_kernel")
  expect_warning(align_kernels(xi * 1e150, yi),
                 "The aligned kernel is numerically the identity on these data",
                 fixed = TRUE)
  idx <- c(1:15, 51:65, 101:115)
  expect_warning(kdne(xi[idx, ] * 1e-150, yi[idx], scale = FALSE), const, fixed = TRUE)
  # KNCA warns, then stops: a constant kernel leaves it no start direction
  expect_error(
    expect_warning(knca(xi[idx, ] * 1e-150, yi[idx], scale = FALSE, max_iter = 2),
                   const, fixed = TRUE),
    "`kernel` sees no differences between the rows of `x`", fixed = TRUE)
  expect_warning(kpca(scale(xi), rbf_kernel(0.001)), ident, fixed = TRUE)
  # kmaha() with scale = FALSE and alignment: warned once (by kpca()), not twice
  res <- collect_warnings(
    kmaha(xi * 1e150, yi, learner = "dne", kernel = "align", scale = FALSE))
  expect_identical(res$warnings, ident)
  # standardized inputs with a sensible sigma: no warning
  expect_identical(kmaha:::kernel_verdict(rbf_kernel(1), scale(xi), test_ctx()), NULL)
  # cross-validation over a grid that holds degenerate kernels is quiet
  expect_silent(cv_kernel(scale(xi), yi, "dne",
                          kernels = list(rbf_kernel(0.001), rbf_kernel(1)),
                          folds = 2, seed = 1))
  # inputs that kmaha standardized itself: the advice is the bandwidth, not
  # the scaling (which was done)
  ident_std <- "The kernel is numerically the identity on these data: every point is equally far from every other in feature space, so nearest neighbours are arbitrary. The inputs are standardized, so its bandwidth is too small for them: use a larger sigma (kmaha()'s kernel = \"auto\" and \"cv\" leave such kernels out)."
  res <- collect_warnings(knca(xi[idx, ], yi[idx], kernel = rbf_kernel(0.001), max_iter = 2))
  expect_identical(res$warnings, ident_std)
  res <- collect_warnings(kmaha(xi[idx, ], yi[idx], learner = "dne", kernel = rbf_kernel(0.001)))
  expect_identical(res$warnings, ident_std)
  const_std <- "The kernel is numerically constant on these data: all points coincide in feature space, so nearest neighbours are arbitrary. The inputs are standardized, so its bandwidth is too large for them: use a smaller sigma (kmaha()'s kernel = \"auto\" and \"cv\" leave such kernels out)."
  res <- collect_warnings(kdne(xi[idx, ], yi[idx], kernel = rbf_kernel(1e6)))
  expect_identical(res$warnings, const_std)
})

# ---------------------------------------------------------------------------
# Outputs that explain themselves

test_that("print() says the outcome in words; summary() keeps the solver's message", {
  fit <- nca(xi, yi, max_iter = 200)
  out <- capture.output(print(fit))
  expect_false(any(grepl(fit$convergence$message, out, fixed = TRUE)))
  expect_true(any(grepl(sprintf("optimizer: converged after %d objective evaluations",
                                fit$convergence$iterations), out, fixed = TRUE)))
  # print() wraps long lines at the console width: read them joined
  flat <- printed_flat(fit)
  expect_match(flat, "objective: -[0-9.]+ \\(minus the expected number of points classified correctly\\)")
  expect_match(flat, "training accuracy: [0-9.]+ \\(leave-one-out 1-NN on the training points: optimistic\\)")
  sout <- capture.output(print(summary(fit)))
  # the solver's own message is not repeated; the stopping rule is said in words
  expect_false(any(grepl(fit$convergence$message, sout, fixed = TRUE)))
  # (summary() wraps its lines at the console width too: read them joined)
  expect_match(summary_flat(fit), sprintf("Optimizer: converged after %d objective evaluations (stopped by the %s rule)",
                                          fit$convergence$iterations, fit$convergence$stop), fixed = TRUE)
  expect_match(summary_flat(fit), "not an estimate of the accuracy on new data", fixed = TRUE)
  # not converged: said in words
  nc <- suppressWarnings(nca(xi, yi, max_iter = 2))
  expect_match(printed_flat(nc), sprintf("optimizer: stopped after %d objective evaluations before converging (iteration limit; raise `max_iter`; see summary())",
                                         nc$convergence$iterations), fixed = TRUE)
  # DNE: no scatter-matrix jargon in print(), the details in summary()
  d <- dne(xi, yi)
  dout <- capture.output(print(d))
  expect_false(any(grepl("X'(D - W)X", dout, fixed = TRUE)))
  expect_true(any(dout == "  optimizer: solved exactly by an eigen-decomposition (no iterations)"))
  expect_true(any(grepl("(same-class minus other-class neighbour distances)", dout, fixed = TRUE)))
  expect_output(print(summary(d)), "X'(D - W)X", fixed = TRUE)
  # the alignment ridge: in words in print(), the number in summary()
  al <- suppressWarnings(align_kernels(xi * 1e150, yi))
  expect_gt(al$ridge, 0)
  aout <- capture.output(print(al))
  expect_false(any(grepl("S'", aout, fixed = TRUE)))
  expect_match(printed_flat(al), "a tiny ridge was added", fixed = TRUE)
  expect_match(summary_flat(al),
               sprintf("Ridge added to the normalised Gram inner products S' to make the QP strictly convex: %.3g",
                       al$ridge), fixed = TRUE)
})

test_that("each learner says what its objective is", {
  idx <- c(1:20, 51:70)
  y2 <- droplevels(yi[idx])
  expect_output(print(kdne(xi[idx, ], y2, dim = 2)),
                "(same-class minus other-class neighbour distances)", fixed = TRUE)
  lm <- lmnn(xi[idx, ], y2)
  expect_output(print(lm), "(target-neighbour distances + impostor hinge losses)",
                fixed = TRUE)
  kn <- suppressWarnings(knca(xi[idx, ], y2, dim = 2, max_iter = 20))
  expect_match(printed_flat(kn), "(minus the expected number of points classified correctly)",
               fixed = TRUE)
  expect_match(summary_flat(kn), "plus lambda * trace(U K U'); lower is better",
               fixed = TRUE)
})

test_that("the training accuracy is labelled optimistic: on noise it is far above the truth", {
  set.seed(1)
  x <- matrix(rnorm(40 * 200), 40)
  y <- factor(rep(1:2, 20))
  fit <- dne(x, y, k = 2)
  # held-out accuracy on fresh noise is near 0.5; the resubstitution figure
  # is what print() shows, with its label
  expect_match(printed_flat(fit), sprintf("training accuracy: %.3f (leave-one-out 1-NN on the training points: optimistic)",
                                          fit$train_accuracy), fixed = TRUE)
  expect_gt(fit$train_accuracy, 0.75)
})

test_that("kmaha(kernel = 'linear') and NCA fits print what they are", {
  lin <- kmaha(xi, yi, learner = "nca", kernel = "linear",
               learner_args = list(max_iter = 50))
  out <- capture.output(print(lin), print(summary(lin)))
  expect_false(any(grepl("KPCA trick", out, fixed = TRUE)))
  expect_false(any(grepl("kernel: none", out, fixed = TRUE)))
  expect_identical(out[1], "<kmaha NCA> NCA: a linear Mahalanobis metric on the standardized inputs")
  # an NCA fit has no target neighbours to speak of; a DNE fit has
  expect_false(any(grepl("arget neighbour", out, fixed = TRUE)))
  kd <- kmaha(xi, yi, learner = "dne", kernel = rbf_kernel(1))
  expect_output(print(summary(kd)), "Target neighbours found in: feature space",
                fixed = TRUE)
  expect_output(print(kd), "<kmaha KDNE> KDNE by the KPCA trick (DNE on kernel PCA coordinates)",
                fixed = TRUE)
})

test_that("print() and summary() agree on a map with fewer rows than `dim`", {
  fit <- nca(xi, yi, max_iter = 100)
  # a map with fewer rows than the `dim` it was asked for, as LMNN returns
  # when M has negligible eigenvalues
  fit$L <- fit$L[1:3, ]
  note <- "(rank 3: the learned metric has 1 negligible eigenvalue(s), so the map has fewer rows than `dim` = 4)"
  expect_output(print(fit), "map: 3 x 4", fixed = TRUE)
  # print() wraps its lines to the console: the note spans two
  flat <- function(obj) gsub("\\s+", " ", paste(capture.output(print(obj)), collapse = " "))
  expect_match(flat(fit), note, fixed = TRUE)
  expect_match(summary_flat(fit), "map: 3 x 4", fixed = TRUE)
  expect_match(summary_flat(fit), note, fixed = TRUE)
  lm <- lmnn(xi, yi, max_iter = 100)
  shown <- capture.output(print(lm), print(summary(lm)))
  has_note <- any(grepl("negligible eigenvalue", shown, fixed = TRUE))
  expect_identical(has_note, nrow(lm$L) < lm$settings$dim)
})

test_that("embeddings are drawn with equal axis scales; plots restore par()", {
  pdf(NULL)
  on.exit(grDevices::dev.off())
  fit <- dne(Species ~ ., data = iris, dim = 2)
  plot(fit, legend = FALSE)
  usr <- graphics::par("usr")
  pin <- graphics::par("pin")
  expect_equal(diff(usr[1:2]) / pin[1], diff(usr[3:4]) / pin[2], tolerance = 1e-6)
  kf <- kmaha(xi, yi, learner = "dne", kernel = rbf_kernel(1))
  plot(kf, legend = FALSE)
  usr <- graphics::par("usr")
  pin <- graphics::par("pin")
  expect_equal(diff(usr[1:2]) / pin[1], diff(usr[3:4]) / pin[2], tolerance = 1e-6)
  # asp can be overridden
  plot(fit, asp = NA)
  # the legend widens the right margin while the plot is drawn, never after
  mar <- graphics::par("mar")
  plot(fit)
  expect_identical(graphics::par("mar"), mar)
  al <- align_kernels(scale(xi), yi)
  expect_invisible(plot(al))
  expect_identical(graphics::par("mar"), mar)
})

test_that("type = 'prob' with k = 1 is 0 or 1", {
  fit <- dne(xi, yi)
  p1 <- predict(fit, xi[c(1, 60, 120, 135), ], type = "prob")
  expect_true(all(p1 %in% c(0, 1)))
  expect_equal(unname(rowSums(p1)), rep(1, 4))
  p5 <- predict(fit, xi[c(1, 60, 120, 135), ], type = "prob", k = 5)
  expect_true(all(p5 * 5 == round(p5 * 5)))
})
