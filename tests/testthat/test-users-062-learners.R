# What a user coming from the CRAN packages lfda and dml, or from Python's
# metric-learn, found in lfda(), rca(), mmc() and itml() (alone and through
# kmaha()) on data no other test uses (MASS's Pima.tr and birthwt): each
# test failed before its fix.

skip_without("MASS")

pima_x <- function() MASS::Pima.tr[, 1:7]
pima_y <- function() MASS::Pima.tr$type
# birthwt with a factor outcome and two missing ages (rows 3 and 10), so
# the model frame keeps 187 of the 189 rows
bwt <- function() {
  d <- MASS::birthwt
  d$low <- factor(d$low, labels = c("normal", "low"))
  d$age[c(3, 10)] <- NA
  d
}

test_that("the default methods refuse a partial argument name, as the formula methods do", {
  x <- pima_x()
  y <- pima_y()
  # lfda::lfda()'s dimension is `r`; R took it as `reg = 2` without a word
  expect_error(lfda(x, y, r = 2),
               "`r` is not an argument of lfda(); it is only the start of `reg`. Write argument names in full (see ?lfda).",
               fixed = TRUE)
  expect_error(rca(x, y, d = 2),
               "`d` is not an argument of rca(); it is only the start of `dim`. Write argument names in full (see ?rca).",
               fixed = TRUE)
  expect_error(mmc(x, y, diag = TRUE),
               "`diag` is not an argument of mmc(); it is only the start of `diagonal`. Write argument names in full (see ?mmc).",
               fixed = TRUE)
  expect_error(itml(x, y, g = 2),
               "`g` is not an argument of itml(); it is only the start of `gamma`. Write argument names in full (see ?itml).",
               fixed = TRUE)
  # names passed on through a wrapper's `...` are read as typed too
  wrap <- function(...) lfda(...)
  expect_error(wrap(x, y, r = 2), "`r` is not an argument of lfda()", fixed = TRUE)
  # full names, and the formula methods' calls of the default methods, still work
  expect_identical(wrap(x, y, reg = 0.01, dim = 2)$L, lfda(x, y, reg = 0.01, dim = 2)$L)
  f <- lfda(type ~ ., data = MASS::Pima.tr, dim = 2)
  expect_equal(unname(f$L), unname(lfda(x, y, dim = 2)$L))
})

test_that("pairs of the wrong shape are described in plain words", {
  x <- pima_x()
  # (was: "... not a integer matrix with 1 column(s).")
  expect_error(mmc(x, pairs = matrix(1:4, ncol = 1), similar = c(1, -1, 1, -1)),
               "`pairs` must be a two-column numeric matrix of row indices of `x`, one pair per row, not an integer matrix with 1 column.",
               fixed = TRUE)
  # one pair as a plain vector, as metric-learn users write it (was: "... not a numeric.")
  expect_error(itml(x, pima_y(), pairs = c(1, 5), similar = 1),
               "`pairs` must be a two-column numeric matrix of row indices of `x`, one pair per row, not a double vector of length 2 (one pair is the one-row matrix rbind(c(i, j))).",
               fixed = TRUE)
})

test_that("with the formula interface, bad pairs are reported as rows of `data`", {
  d <- bwt()
  # (was: "`pairs` row 3 refers to row 300 of `x`, which has 187 rows.")
  expect_error(mmc(low ~ age + lwt, data = d, pairs = cbind(c(1, 2, 4), c(5, 6, 300)),
                   similar = c(1, -1, 1)),
               "`pairs` row 3 refers to row 300 of `data`, which has 189 rows.", fixed = TRUE)
  # (was: "`pairs` row 3 pairs row 3 of `x` with itself; ...": row 4 of
  # data is row 3 of the model frame)
  expect_error(itml(low ~ age + lwt, data = d, pairs = cbind(c(1, 2, 4), c(5, 6, 4)),
                    similar = c(1, -1, 1)),
               "`pairs` row 3 pairs row 4 of `data` with itself; a pair needs two different rows.",
               fixed = TRUE)
  expect_error(mmc(low ~ age + lwt, data = d, pairs = cbind(c(1, 2, 4), c(5, 6, 7.5)),
                   similar = c(1, -1, 1)),
               "`pairs` must hold whole numbers (row indices of `data`); row 3 has 7.5.", fixed = TRUE)
  # also when no row is left out (was: "... of `x`, which has 189 rows.")
  d$age[c(3, 10)] <- 20
  expect_error(mmc(low ~ age + lwt, data = d, pairs = cbind(c(1, 2), c(5, 190)), similar = c(1, -1)),
               "`pairs` row 2 refers to row 190 of `data`, which has 189 rows.", fixed = TRUE)
  # and through kmaha()
  expect_error(kmaha(low ~ age + lwt, data = bwt(), learner = "mmc", kernel = "linear",
                     learner_args = list(pairs = cbind(c(1, 2), c(5, 300)), similar = c(1, -1))),
               "`learner_args$pairs` row 2 refers to row 300 of `data`, which has 189 rows.",
               fixed = TRUE)
  # good pairs are still renumbered into the rows kept: the default method
  # on those rows gives the same metric
  pr <- cbind(c(1, 2, 4, 5, 20), c(6, 7, 8, 9, 21))
  s <- c(1, 1, -1, -1, 1)
  fit <- mmc(low ~ age + lwt, data = bwt(), pairs = pr, similar = s)
  keep <- setdiff(seq_len(189), c(3, 10))
  ref <- mmc(as.matrix(bwt()[keep, c("age", "lwt")]), bwt()$low[keep],
             pairs = matrix(match(pr, keep), ncol = 2), similar = s)
  expect_equal(unname(fit$L), unname(ref$L))
})

test_that("with the formula interface, chunks of the wrong length are counted against `data`", {
  d <- bwt()
  # (was: "`chunks` has length 100 but `x` has 187 rows; they must match.")
  expect_error(rca(low ~ age + lwt, data = d, chunks = rep(1:10, length.out = 100)),
               "`chunks` has length 100 but `data` has 189 rows; with the formula interface chunks give one chunklet id per row of `data` (NA for a row in no chunklet).",
               fixed = TRUE)
  # (was: "RCA on the 2 standardized input columns (its `x`): `chunks` has length 100 but `x` has 187 rows; ...")
  expect_error(kmaha(low ~ age + lwt, data = d, learner = "rca", kernel = "linear",
                     learner_args = list(chunks = rep(1:10, length.out = 100))),
               "`learner_args$chunks` has length 100 but `data` has 189 rows; with the formula interface chunks give one chunklet id per row of `data` (NA for a row in no chunklet).",
               fixed = TRUE)
  # one id per row of data: the rows left out drop their ids
  ch <- rep(NA, 189)
  ch[c(1, 2, 3, 4, 11:20)] <- rep(1:7, each = 2)
  fit <- rca(low ~ age + lwt, data = d, chunks = ch)
  expect_identical(c(fit$n_chunklets, fit$n_chunklet_points), c(6L, 12L))
})

test_that("chunks given to kmaha() are checked up front and named as learner_args$chunks", {
  x <- as.matrix(pima_x())
  y <- pima_y()
  # (was: "RCA on the KPCA components (its `x`): `chunks` has length 10 but `x` has 200 rows; they must match.")
  expect_error(kmaha(x, y, learner = "rca", kernel = rbf_kernel(0.1),
                     learner_args = list(chunks = 1:10)),
               "`learner_args$chunks` has length 10 but `x` has 200 rows; they must match.",
               fixed = TRUE)
  expect_error(kmaha(x, y, learner = "rca", kernel = rbf_kernel(0.1),
                     learner_args = list(chunks = as.list(1:200))),
               "`learner_args$chunks` must be a vector of chunklet ids, one per row of `x`, not a list.",
               fixed = TRUE)
  expect_error(kmaha(x, y, learner = "rca", kernel = "linear",
                     learner_args = list(chunks = rep(NA, 200))),
               "`learner_args$chunks` has no chunklet with 2 or more rows: a chunklet says which points belong together, so it needs at least two.",
               fixed = TRUE)
})

test_that("RCA's singular-covariance warning names kmaha()'s arguments", {
  x <- as.matrix(pima_x())
  y <- pima_y()
  ch <- rep(NA, 200)
  ch[1:10] <- rep(1:5, each = 2)
  # (was: "... Set `ridge` to choose it, or `dim` <= 5 ...")
  expect_warning(kmaha(x, y, learner = "rca", kernel = "linear", learner_args = list(chunks = ch)),
                 "Set `learner_args$ridge` to choose it, or `learner_args$dim` <= 5 to reduce to the directions the chunklets vary in.",
                 fixed = TRUE)
  # rca() itself names its own arguments
  expect_warning(rca(x, chunks = ch),
                 "Set `ridge` to choose it, or `dim` <= 5 to reduce", fixed = TRUE)
})

test_that("an ITML prior of the wrong size through kmaha() is named learner_args$prior", {
  x <- as.matrix(pima_x())
  # (was: "ITML on the 7 standardized input columns (its `x`): `prior` is 2 x 2 but ...")
  expect_error(kmaha(x, pima_y(), learner = "itml", kernel = "linear",
                     learner_args = list(prior = diag(2))),
               "`learner_args$prior` is 2 x 2 but the learner receives 7 coordinates; they must match.",
               fixed = TRUE)
})

test_that("chunks as dml::rca()'s list of row indices is an error that shows the conversion", {
  x <- pima_x()
  ch <- list(c(1, 5, 9), c(2, 7), c(3, 4, 8))
  # (was: "`chunks` must be a vector of chunklet ids, one per row of `x`.")
  expect_error(rca(x, chunks = ch),
               "`chunks` must be a vector of chunklet ids, one per row of `x`, not a list. For a list of row indices, one element per chunklet, give ids <- rep(NA, nrow(x)); ids[unlist(chunks)] <- rep(seq_along(chunks), lengths(chunks)).",
               fixed = TRUE)
  # the conversion it shows gives the chunklets meant
  ids <- rep(NA, nrow(x))
  ids[unlist(ch)] <- rep(seq_along(ch), lengths(ch))
  fit <- suppressWarnings(rca(x, chunks = ids))
  expect_identical(c(fit$n_chunklets, fit$n_chunklet_points), c(3L, 8L))
})

test_that("chunk id -1 (metric-learn's and RECA's 'in no chunklet') is warned about", {
  x <- pima_x()
  y <- pima_y()
  ch <- rep(-1, 200)
  ch[1:12] <- rep(1:6, each = 2)
  # (was: silent; the 188 rows with -1 made one chunklet)
  expect_warning(fit <- rca(x, y, chunks = ch),
                 "`chunks` has 188 rows with id -1, which RCA takes as one chunklet. If -1 marks rows in no chunklet (as in metric-learn and the RECA package), set those ids to NA (ids[ids == -1] <- NA).",
                 fixed = TRUE)
  # the fit is unchanged: the ids are taken as given
  expect_identical(c(fit$n_chunklets, fit$n_chunklet_points), c(7L, 200L))
  # once through kmaha(), by its argument name
  w <- character()
  withCallingHandlers(kmaha(x, y, learner = "rca", kernel = "linear", learner_args = list(chunks = ch)),
                      warning = function(cnd) {
                        w <<- c(w, conditionMessage(cnd))
                        invokeRestart("muffleWarning")
                      })
  expect_identical(sum(startsWith(w, "`learner_args$chunks` has 188 rows with id -1")), 1L)
  # NA, the documented mark, warns of nothing
  ch[ch == -1] <- NA
  expect_silent(rca(x, y, chunks = ch, ridge = 0.01))
})

test_that("summary() of a model fitted without labels says so instead of printing empty class sizes", {
  x <- pima_x()
  fit <- mmc(x, pairs = cbind(1:4, 5:8), similar = c(1, 1, -1, -1))
  out <- capture.output(summary(fit))
  # (was: "Class sizes:", "< table of extent 0 >" and "Training accuracy: NA (...)")
  expect_true("Class labels: none (fitted from pairs or chunklets; transform only)" %in% out)
  expect_false(any(grepl("table of extent 0|Class sizes|Training accuracy", out)))
  # a labelled fit still shows both
  out <- capture.output(summary(rca(x, pima_y())))
  expect_true("Class sizes:" %in% out)
  expect_true(any(startsWith(out, "Training accuracy: ")))
})

test_that("the call ?lfda gives for the CRAN package lfda's subspace gives it", {
  skip_without("lfda")
  skip_without("mlbench")
  e <- new.env()
  utils::data("Vehicle", package = "mlbench", envir = e)
  x <- as.matrix(e$Vehicle[, 1:18])
  y <- e$Vehicle$Class
  theirs <- lfda::lfda(x, y, r = 4, knn = 5, metric = "orthonormalized")
  # the call the help page names (it named the one without reg = 0 and
  # scale = FALSE, whose subspace is far from lfda's: cosines down to 0.64)
  rd <- paste(capture.output(tools::Rd2txt(tools::Rd_db("kmaha")[["lfda.Rd"]],
                                           options = list(underline_titles = FALSE))),
              collapse = " ")
  expect_true(grepl('lfda(x, y, k = 5, metric = "orthonormalized", reg = 0, scale = FALSE)',
                    gsub("\\s+", " ", rd), fixed = TRUE))
  ours <- lfda(x, y, dim = 4, k = 5, metric = "orthonormalized", reg = 0, scale = FALSE)
  cosines <- svd(crossprod(qr.Q(qr(theirs$T)), qr.Q(qr(t(ours$L)))))$d
  expect_equal(cosines, rep(1, 4), tolerance = 1e-6)
})

test_that("the pairs' +1/-1 given as `y` (metric-learn's fit(pairs, y)) points to `similar`", {
  x <- pima_x()
  pr <- cbind(c(1, 2, 3), c(4, 5, 6))
  # (was: "`y` has length 3 but `x` has 200 rows; they must match.")
  expect_error(mmc(x, y = c(1, -1, 1), pairs = pr),
               "`y` has one value of 1 or -1 per pair and `similar` is missing: give the pairs' labels as `similar` (mmc(x, pairs = , similar = )); `y` is for class labels of the rows of `x`.",
               fixed = TRUE)
  expect_error(itml(x, c(1, -1, 1), pr), "give the pairs' labels as `similar` (itml(x, pairs = , similar = ))",
               fixed = TRUE)
  # as `similar` they fit
  expect_s3_class(mmc(x, pairs = pr, similar = c(1, -1, 1)), "kmaha_mmc")
  # the same through kmaha() (was: "`y` has length 3 but `x` has 200 rows; they must match.")
  expect_error(kmaha(as.matrix(x), c(1, -1, 1), learner = "itml", kernel = rbf_kernel(1),
                     learner_args = list(pairs = pr)),
               "`y` has one value of 1 or -1 per pair and `learner_args$similar` is missing: give the pairs' labels as `learner_args$similar`; `y` is for class labels of the rows of `x` (and may be left out).",
               fixed = TRUE)
})

test_that("an option named twice in learner_args is an error, not the first one silently", {
  x <- as.matrix(pima_x())
  # (was: fitted with gamma = 2, the second gamma ignored)
  expect_error(kmaha(x, pima_y(), learner = "itml", kernel = "linear",
                     learner_args = list(gamma = 2, gamma = 3)),
               "`learner_args` names 'gamma' more than once (only the first would be used): give each option once.",
               fixed = TRUE)
})

test_that("pair options given with learner = \"auto\" are reported in plain grammar", {
  x <- as.matrix(pima_x())
  # (was: "'learner_args$pairs', 'learner_args$similar' is an option of none of ...")
  expect_error(kmaha(x, pima_y(), learner = "auto", kernel = "linear",
                     learner_args = list(pairs = cbind(1:2, 3:4), similar = c(1, -1))),
               "With learner = \"auto\", 'learner_args$pairs', 'learner_args$similar' are options of none of the learners (NCA, LMNN, DNE)",
               fixed = TRUE)
})

test_that("LFDA on repeated rows says why the local scatter is zero and which `k` helps", {
  # UCBAdmissions as one row per applicant: 12 distinct rows of indicator
  # columns, each repeated 8 to 512 times within its class
  u <- as.data.frame(UCBAdmissions)
  d <- u[rep(seq_len(nrow(u)), u$Freq), ]
  x <- model.matrix(~ Gender + Dept, d)[, -1]
  y <- d$Admit
  # (was: a fit whose local scales were rounding noise, 2e-8 for copies of
  # a point, and whose eigenvalues were 1e9: the distances of repeated rows
  # came out as noise rather than 0)
  expect_error(lfda(x, y, scale = FALSE),
               "LFDA's local within-class scatter is zero: every point's local scale (the distance to its k-th nearest point of its class, `k` = 7) is 0, because rows repeat (up to 512 copies of a point in a class). Give a larger `k` (with `k` = 512 every point has a positive scale), or remove the repeated rows.",
               fixed = TRUE, class = "kmaha_degenerate_error")
  # the `k` it names fits, every scale the distance to another point
  fit <- lfda(x, y, k = 512, scale = FALSE)
  expect_true(all(fit$local_scale > 1 - 1e-8))
  expect_lt(max(fit$eigenvalues), 10)
  # through kmaha(), by its argument name
  expect_error(kmaha(x, y, learner = "lfda", kernel = "linear"),
               "`learner_args$k` = 7) is 0", fixed = TRUE)
})

test_that("ITML's zero threshold on repeated rows is explained, and names kmaha()'s argument", {
  u <- as.data.frame(UCBAdmissions)
  d <- u[rep(seq_len(nrow(u)), u$Freq), ]
  x <- model.matrix(~ Gender + Dept, d)[, -1]
  set.seed(1)
  rows <- sample(nrow(x), 300)
  # (was: "itml: a distance threshold is zero (most pairs of points coincide); give `bounds`",
  # though a fraction of the pairs coincide: 5% are enough)
  expect_error(itml(x[rows, ], d$Admit[rows], scale = FALSE),
               "ITML's distance thresholds, the 5th and 95th percentiles of the squared distances between the rows that appear in a pair, include 0: at least 5% of those pairs of rows coincide (repeated rows). Give `bounds` = c(u, l), two positive squared distances with u < l, or remove the repeated rows.",
               fixed = TRUE, class = "kmaha_degenerate_error")
  expect_error(kmaha(x[rows, ], d$Admit[rows], learner = "itml", kernel = "linear", scale = FALSE),
               "Give `learner_args$bounds` = c(u, l)", fixed = TRUE)
  # the bounds it asks for fit
  expect_s3_class(itml(x[rows, ], d$Admit[rows], scale = FALSE, bounds = c(0.5, 2)), "kmaha_itml")
})

test_that("more Nystrom landmarks than paired rows is an error about the paired rows, not `x`", {
  x <- as.matrix(pima_x())
  pr <- cbind(1:5, 6:10)
  s <- c(1, 1, -1, -1, 1)
  # (was: "`landmarks` must be a number of landmark points between 2 and the number of rows of `x` (10), ...", for a 200-row x)
  expect_error(kmaha(x, pima_y(), learner = "itml", kernel = rbf_kernel(1), landmarks = 20,
                     learner_args = list(pairs = pr, similar = s)),
               "`landmarks` (20) exceeds the 10 rows that appear in a pair: with given pairs kmaha() fits the kernel PCA on those rows alone (see Pairs in ?kmaha). Give at most 10 landmarks, or none (the exact kernel PCA of the 10 rows).",
               fixed = TRUE)
  # as many as there are paired rows fit
  fit <- kmaha(x, pima_y(), learner = "itml", kernel = rbf_kernel(1), landmarks = 8,
               learner_args = list(pairs = pr, similar = s), seed = 1)
  expect_identical(fit$paired_rows, 1:10)
})

test_that("`n_pairs` with given pairs is an error naming both (it was ignored)", {
  x <- as.matrix(pima_x())
  pr <- cbind(c(1, 2, 3, 4), c(5, 6, 7, 8))
  sim <- c(1, -1, 1, -1)
  expect_error(mmc(x, pairs = pr, similar = sim, n_pairs = 100),
               "`n_pairs` is the number of pairs to draw from the class labels, but `pairs` are given (and used as they are): leave out `n_pairs`.",
               fixed = TRUE)
  expect_error(itml(x, pairs = pr, similar = sim, n_pairs = 100),
               "`n_pairs` is the number of pairs to draw from the class labels, but `pairs` are given",
               fixed = TRUE)
  expect_error(kmaha(x, learner = "mmc", kernel = "linear",
                     learner_args = list(pairs = pr, similar = sim, n_pairs = 100)),
               "`learner_args$n_pairs` is the number of pairs to draw from the class labels, but `learner_args$pairs` are given (and used as they are): leave out `learner_args$n_pairs`.",
               fixed = TRUE)
  # drawn pairs still take n_pairs
  set.seed(1)
  expect_identical(nrow(mmc(x, pima_y(), n_pairs = 30)$pairs$pairs), 30L)
})
