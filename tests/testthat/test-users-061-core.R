# What a demanding user of the core API (kmaha(), the learners, kpca(),
# the formula interface, predict() and the model methods) found on data no
# other test uses (warpbreaks, esoph, ChickWeight, faithful, USArrests):
# each test failed before its fix.

test_that("predict() of a formula fit uses the contrasts of the fit, not the session's", {
  old <- options(contrasts = c("contr.sum", "contr.poly"))
  fit <- nca(tension ~ breaks + wool, data = warpbreaks)
  expected <- predict(fit, warpbreaks, type = "transform")
  options(old)
  expect_identical(fit$contrasts, list(wool = "contr.sum"))
  # (was: "`newdata` lacks column(s) used in training: 'wool1'.")
  expect_identical(predict(fit, warpbreaks, type = "transform"), expected)
  # contr.helmert names its column wool1 too: the same names, other numbers
  options(contrasts = c("contr.helmert", "contr.poly"))
  got <- predict(fit, warpbreaks, type = "transform")
  options(old)
  expect_identical(got, expected)
  # the same through a saved model
  f <- tempfile(fileext = ".rds")
  on.exit(unlink(f), add = TRUE)
  saveRDS(fit, f)
  expect_identical(predict(readRDS(f), warpbreaks, type = "transform"), expected)
})

test_that("an ordered factor predictor may come as a plain factor or text at predict time", {
  d <- esoph[, c("agegp", "alcgp", "ncontrols")]
  d$case <- factor(esoph$ncases > 1, labels = c("few", "many"))
  fit <- kmaha(case ~ alcgp + ncontrols, data = d, learner = "nca", kernel = "linear")
  expected <- predict(fit, d, type = "prob")
  plain <- d
  plain$alcgp <- factor(as.character(d$alcgp))
  # (was: "`newdata` lacks column(s) used in training: 'alcgp.L', 'alcgp.Q', 'alcgp.C'.")
  expect_identical(predict(fit, plain, type = "prob"), expected)
  text <- d
  text$alcgp <- as.character(d$alcgp)
  expect_identical(predict(fit, text, type = "prob"), expected)
})

test_that("a logical predictor given as 0/1 numbers, or numbers given as logical, at predict time", {
  d <- warpbreaks
  d$woolA <- d$wool == "A"
  fit <- nca(tension ~ breaks + woolA, data = d)
  bad <- d
  bad$woolA <- as.numeric(bad$woolA)
  # (was: "`newdata` lacks column(s) used in training: 'woolATRUE'.")
  expect_error(predict(fit, bad),
               "`newdata` column 'woolA' is numeric, but the model was trained on TRUE/FALSE there; convert it (e.g. as.logical(newdata$woolA)) before predicting.",
               fixed = TRUE)
  # numbers in training, TRUE/FALSE (their values 1/0) in newdata
  d$woolA <- as.numeric(d$woolA)
  fit2 <- nca(tension ~ breaks + woolA, data = d)
  lg <- d
  lg$woolA <- lg$woolA == 1
  # (was: "`newdata` lacks column(s) used in training: 'woolA'.")
  expect_identical(predict(fit2, lg, type = "prob"), predict(fit2, d, type = "prob"))
})

test_that("a factor predictor with a single level in the rows used is a clear error", {
  cw <- as.data.frame(ChickWeight)
  cw <- cw[cw$Diet == "1" & cw$Time <= 10, ]
  # (was: "contrasts can be applied only to factors with 2 or more levels")
  expect_error(kmaha(weight ~ Time + Diet, data = cw),
               "`data` column 'Diet' has a single level ('1') in the rows used (after `subset` and `na.action`): a constant predictor carries no distance information. Remove it from the formula.",
               fixed = TRUE)
  cw$who <- "chick"
  expect_error(mlkr(weight ~ Time + who, data = cw),
               "`data` column 'who' has a single level ('chick')", fixed = TRUE)
  # the rows `subset` keeps decide
  expect_error(nca(tension ~ breaks + wool, data = warpbreaks, subset = wool == "A"),
               "`data` column 'wool' has a single level ('A')", fixed = TRUE)
})

test_that("glance() and augment() of a regression return tibbles, as for every other model", {
  skip_without("tibble")
  fit <- kmaha(eruptions ~ waiting, data = faithful[1:120, ], seed = 1)
  # (was: a plain data.frame)
  expect_s3_class(glance(fit), "tbl_df")
  expect_s3_class(augment(fit), "tbl_df")
  a <- augment(fit, newdata = faithful[121:125, ])
  expect_s3_class(a, "tbl_df")
  # row names that are not 1..n become `.rownames`, as for classifiers
  expect_identical(a$.rownames, as.character(121:125))
  expect_equal(a$.fitted, unname(predict(fit, faithful[121:125, ])))
  expect_identical(glance(fit)$loo_rmse, fit$loo_rmse)
})

test_that("summary() of a regression fits getOption(\"width\")", {
  fits <- list(kmaha(Murder ~ ., data = USArrests, seed = 1),
               mlkr(Murder ~ ., data = USArrests))
  old <- options(width = 60)
  on.exit(options(old), add = TRUE)
  for (fit in fits) {
    out <- utils::capture.output(print(summary(fit)))
    # (was: lines of up to 240 characters: Settings, Start, the objective's meaning)
    expect_lte(max(nchar(out)), 60L, label = out[which.max(nchar(out))])
    expect_true(any(grepl("^Training fit: RMSE", out)))
  }
})

test_that("a map shrunk to exactly zero is reported without 'Inf times'", {
  # wool says nothing about tension in this balanced design: NCA's best map is zero
  w <- collect_warnings(nca(tension ~ wool, data = warpbreaks))
  expect_identical(unname(w$value$L[1, 1]), 0)
  # (was: "the optimizer shrank its start Inf times")
  expect_identical(w$warnings,
                   "The learned map is numerically zero: the optimizer shrank its start to zero, so every learned distance is rounding noise and nearest neighbours are arbitrary.")
})

test_that("kpca() of a single row says that `x` needs two rows", {
  x <- as.matrix(USArrests)
  # (was: "`kernel` on `x`: kpca: at least 2 points are needed")
  expect_error(kpca(x[1, , drop = FALSE]),
               "`x` has 1 row; kernel PCA needs at least 2.", fixed = TRUE)
  expect_error(kpca(x[1, , drop = FALSE], landmarks = 2),
               "`x` has 1 row; kernel PCA needs at least 2.", fixed = TRUE)
})

test_that("the small-class warning names a few classes, not every one", {
  # whole numbers are class labels for nca(): UrbanPop is 36 classes, 26 of one row
  x <- as.matrix(USArrests[, -3])
  y <- USArrests$UrbanPop
  w <- collect_warnings(nca(x, y, max_iter = 5))$warnings
  small <- grep("fewer than", w, value = TRUE)
  expect_length(small, 1L)
  # (was: a warning of 572 characters naming all 26 classes)
  expect_lt(nchar(small), 400L)
  expect_match(small, "`y`: 26 classes have fewer than 2 members ('32' (1 member), '39' (1 member), '50' (1 member), '51' (1 member), '52' (1 member) and 21 more)",
               fixed = TRUE)
  # most classes that small: perhaps a response meant for a regression
  expect_match(small, "if `y` is a numeric response, fit a regression (mlkr(), or kmaha() with numbers)", fixed = TRUE)
  # a few small classes: named, as before, without the hint
  w2 <- collect_warnings(nca(as.matrix(USArrests[, -1]), round(USArrests$Murder), max_iter = 5))$warnings
  expect_true("`y`: classes '1' (1 member), '14' (1 member), '16' (1 member), '17' (1 member) have fewer than 2 members; their points use as many same-class neighbours as each class allows (none for a singleton)." %in% w2)
})

test_that("a newdata column of nothing but NA gives NA predictions, whatever the column's type", {
  fit <- kmaha(breaks ~ tension + wool, data = warpbreaks, kernel = "linear")
  nd <- data.frame(tension = c(NA, NA), wool = c("A", "B"))
  # (was: "`newdata` column 'tension' is logical, but the model was trained on a factor")
  expect_identical(unname(predict(fit, nd)), c(NA_real_, NA_real_))
  cls <- nca(tension ~ breaks + wool, data = warpbreaks)
  nd2 <- data.frame(breaks = c(20, 30), wool = c(NA, NA))
  expect_identical(predict(cls, nd2), factor(c(NA, NA), levels = c("L", "M", "H")))
  expect_identical(dim(predict(cls, nd2, type = "transform")), c(2L, nrow(coef(cls))))
})

test_that("predict() does not ask for the columns that `.` with `- v` left out", {
  d <- USArrests
  d$state <- rownames(d)
  d$hi <- factor(d$Murder > 8, labels = c("low", "high"))
  fit <- nca(hi ~ . - Murder - state, data = d)
  expect_identical(colnames(coef(fit)), c("Assault", "UrbanPop", "Rape"))
  nd <- d[1:5, c("Assault", "UrbanPop", "Rape")]
  # (was: "`newdata` lacks column(s) used in training: 'Murder', 'state'.")
  expect_identical(predict(fit, nd, type = "prob"), predict(fit, d[1:5, ], type = "prob"))
  expect_identical(predict(fit, nd[0, ]), factor(character(), levels = c("low", "high")))
  # a column a term uses is still required, and named alone
  expect_error(predict(fit, nd[, -1]),
               "`newdata` lacks column(s) used in training: 'Assault'.", fixed = TRUE)
})

test_that("columns that `.` with `- v` leaves out are not checked as predictors", {
  d <- USArrests
  d$when <- as.Date("2020-01-01") + seq_len(nrow(d))
  d$one <- factor("x")
  d$hi <- factor(d$Murder > 8, labels = c("low", "high"))
  # (was: "`data` must have numeric columns only; column 'when' is Date: ... or drop it.")
  fit <- nca(hi ~ . - when - one, data = d)
  expect_identical(colnames(coef(fit)), c("Murder", "Assault", "UrbanPop", "Rape"))
  expect_identical(fit$L, nca(hi ~ Murder + Assault + UrbanPop + Rape, data = d)$L)
  # a used Date column is still refused
  expect_error(nca(hi ~ Murder + when, data = d), "column 'when' is Date", fixed = TRUE)
})

test_that("predict() takes the formula's own variables (knots, constants) from its environment", {
  d <- warpbreaks
  fit_in <- function(data) {
    x0 <- 20
    kn <- c(20, 30)
    nca(tension ~ I(breaks - x0) + splines::bs(breaks, knots = kn) + wool, data = data)
  }
  fit <- fit_in(d)
  expect_identical(fit$data_vars, c("breaks", "wool"))
  # the same fit with the values written into the formula
  inline <- nca(tension ~ I(breaks - 20) + splines::bs(breaks, knots = c(20, 30)) + wool, data = d)
  expect_identical(unname(fit$L), unname(inline$L))
  # (was: "`newdata` lacks column(s) used in training: 'x0', 'kn'.")
  expect_identical(predict(fit, d[1:6, c("wool", "breaks")], type = "prob"),
                   predict(inline, d[1:6, ], type = "prob"))
  expect_error(predict(fit, d[1:6, c("wool", "tension")]),
               "`newdata` lacks column(s) used in training: 'breaks'.", fixed = TRUE)
})

test_that("duplicated or empty column names are never matched to the wrong column", {
  x <- as.matrix(USArrests)
  y <- factor(USArrests$Murder > 8, labels = c("low", "high"))
  dup <- x
  colnames(dup) <- c("a", "a", "b", "c")
  fit <- nca(dup, y)
  ref <- nca(unname(x), y)
  expect_identical(unname(fit$L), unname(ref$L))
  # (was: both 'a' columns read from the first: the training data itself
  # transformed wrongly and classified differently)
  expect_equal(unname(predict(fit, dup, type = "transform")),
               unname(predict(ref, unname(x), type = "transform")))
  expect_identical(predict(fit, dup), predict(ref, unname(x)))
  expect_error(predict(fit, dup[, 4:1]),
               "The model was trained on columns with duplicated names ('a'), which cannot be matched by name",
               fixed = TRUE)
  # an empty name is matched by position too (mlbench.shapes() returns
  # colnames c("x4", ""); was: predict() of the model on its own training
  # matrix stopped with "subscript out of bounds")
  blank <- x
  colnames(blank) <- c("a", "", "b", "c")
  expect_identical(predict(nca(blank, y), blank), predict(ref, unname(x)))
  expect_identical(predict(kmaha(blank, y, kernel = "linear", learner = "nca"), blank),
                   predict(kmaha(unname(x), y, kernel = "linear", learner = "nca"), unname(x)))
  expect_error(predict(nca(blank, y), blank[, 4:1]),
               "The model was trained on columns with empty or missing names (column 2), which cannot be matched by name: `newdata` must have the training columns with the same names in the same order",
               fixed = TRUE)
  # a newdata with two columns of a training column's name
  fit2 <- nca(x, y)
  expect_error(predict(fit2, cbind(x, Murder = 0)),
               "`newdata` has several columns named 'Murder'; the model's column of that name cannot be told among them. Keep one.",
               fixed = TRUE)
})

test_that("plot(which = \"kernel\") of a fit with a given kernel says so in words", {
  d <- USArrests
  d$hi <- factor(d$Murder > 8)
  fit <- kmaha(hi ~ ., data = d, kernel = rbf_kernel(1), learner = "dne")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  # (was: "... (this one: kernel).")
  expect_error(plot(fit, which = "kernel"),
               "`which = \"kernel\"` needs a kmaha() fit whose kernel was chosen by alignment or cross-validation (this one: a kernel given as `kernel`).",
               fixed = TRUE)
  lin <- kmaha(Murder ~ ., data = USArrests, kernel = "linear")
  expect_error(plot(lin, which = "kernel"), "(this one: kernel = \"linear\", no kernel).", fixed = TRUE)
  expect_error(plot(mlkr(Murder ~ ., data = USArrests), which = "kernel"),
               "(this one: no kernel choice).", fixed = TRUE)
})

test_that("a formula fit with no rows left says why, not that `x` has no rows", {
  d <- USArrests
  d$hi <- factor(d$Murder > 8)
  msg <- "No rows of `data` are left to fit: `subset` and `na.action` (which by default drops the rows with a missing value in a variable of the formula) left out every row."
  # (was: "`x` has no rows.")
  expect_error(nca(hi ~ Assault, data = d, subset = Assault > 1e6), msg, fixed = TRUE)
  d$Rape <- NA
  expect_error(kmaha(hi ~ Assault + Rape, data = d), msg, fixed = TRUE)
})

test_that("model.frame() and augment() of a fit whose `.` left a variable out have its rows", {
  d <- USArrests
  d$hi <- factor(d$Murder > 8)
  d$id <- seq_len(nrow(d))
  d$id[5] <- NA
  fit <- nca(hi ~ . - id, data = d)
  expect_identical(nobs(fit), 50L)
  # (was: 49 rows, the row with a missing id dropped: augment() failed with
  # "replacement has 50 rows, data has 49")
  expect_identical(nrow(model.frame(fit)), 50L)
  expect_identical(nrow(augment(fit)), 50L)
  reg <- mlkr(Murder ~ . - id - hi, data = d)
  expect_identical(nrow(augment(reg)), 50L)
  expect_equal(augment(reg)$.fitted, unname(fitted(reg)))
})

test_that("an offset() in the formula is an error, not ignored", {
  # (was: model.matrix() left the offset out and the fit ignored it silently)
  msg <- "`formula` has an offset() term, which a nearest-neighbour model cannot use: remove it (or subtract it from a numeric response yourself)."
  expect_error(kmaha(Sepal.Length ~ Sepal.Width + offset(Petal.Length), data = iris,
                     kernel = "linear", learner = "mlkr"), msg, fixed = TRUE)
  expect_error(nca(Species ~ Sepal.Width + offset(Petal.Length), data = iris), msg, fixed = TRUE)
})

test_that("a formula written as a string points to the formula method", {
  # (was: "Unknown argument(s) to kmaha(): 'data'. Pass learner options in
  # `learner_args`.", about an argument the formula method takes)
  expect_error(kmaha("Species ~ .", data = iris),
               "Unknown argument(s) to kmaha(): 'data'. `data` goes with a formula: give the formula itself first, unquoted (or through as.formula() if you have it as a string), e.g. kmaha(Species ~ ., data = iris).",
               fixed = TRUE)
  expect_error(nca("Species ~ Sepal.Width", data = iris), "e.g. nca(Species ~ ., data = iris).",
               fixed = TRUE)
  # functions without a formula method keep their message
  fit <- nca(as.matrix(iris[, 1:4]), iris$Species)
  err <- tryCatch(tidy(fit, data = iris), error = conditionMessage)
  expect_identical(err, "Unknown argument(s) to tidy(): 'data'.")
  # and the way it names works
  expect_s3_class(kmaha(stats::as.formula("Species ~ ."), data = iris, kernel = "linear",
                        learner = "nca", k = 1), "kmaha_model")
})
