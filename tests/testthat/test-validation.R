test_that("check_x names the argument and the fix", {
  expect_error(kmaha:::check_x(matrix(c(1, NA, 3, 4), 2)),
               "`x` contains missing values (NA/NaN)", fixed = TRUE)
  expect_error(kmaha:::check_x(matrix(c(1, Inf, 3, 4), 2)),
               "`x` contains infinite values", fixed = TRUE)
  expect_error(kmaha:::check_x(data.frame(a = 1:3, b = letters[1:3])),
               "`x` must have numeric columns only; column 'b' is character",
               fixed = TRUE)
  expect_error(kmaha:::check_x(matrix(letters[1:4], 2)),
               "`x` must be numeric, not a character matrix", fixed = TRUE)
  expect_error(kmaha:::check_x(matrix(numeric(0), 0, 3)),
               "`x` has no rows.", fixed = TRUE)
  x <- kmaha:::check_x(data.frame(a = 1:3, b = c(TRUE, FALSE, TRUE)))
  expect_identical(dim(x), c(3L, 2L))
  expect_type(x, "double")
})

test_that("check_y checks length, missing labels and the number of classes", {
  expect_error(kmaha:::check_y(factor(c("a", "b")), 3),
               "`y` has length 2 but `x` has 3 rows; they must match.",
               fixed = TRUE)
  expect_error(kmaha:::check_y(factor(c("a", "a", "a")), 3),
               "`y` has only 1 class", fixed = TRUE)
  expect_error(kmaha:::check_y(c(0.5, 1.2, 2), 3),
               "but it is continuous", fixed = TRUE)
  expect_error(kmaha:::check_y(c("a", NA, "b"), 3),
               "`y` contains missing labels", fixed = TRUE)
  # an unused level is dropped for fitting, named in a warning, and
  # remembered for the fitted object (full_levels())
  expect_warning(
    y <- kmaha:::check_y(factor(c("a", "b", "b"), levels = c("a", "b", "z")), 3),
    "`y` has level(s) 'z' with no rows; they stay levels of the predictions (with probability 0) but can never be predicted.",
    fixed = TRUE)
  expect_identical(levels(y), c("a", "b"))
  expect_identical(levels(kmaha:::full_levels(y)), c("a", "b", "z"))
  expect_identical(as.character(kmaha:::full_levels(y)), c("a", "b", "b"))
})

test_that("fit_scaling standardizes and rejects constant columns", {
  x <- cbind(a = c(1, 2, 3, 4), b = c(2, 4, 6, 9))
  prep <- kmaha:::fit_scaling(x)
  z <- kmaha:::apply_scaling(x, prep)
  expect_equal(unname(colMeans(z)), c(0, 0))
  expect_equal(unname(apply(z, 2, sd)), c(1, 1))
  expect_equal(unname(z), unname(scale(x)), ignore_attr = TRUE)
  expect_error(kmaha:::fit_scaling(cbind(x, c = 5)),
               "`x` has constant column(s) 'c'", fixed = TRUE)
})

test_that("check_y's labels are droplevels(as.factor(y)); codes_factor() is factor(lev[codes])", {
  # check_y() skips droplevels() for a plain factor that uses every level
  ys <- list(c("b", "a", "b"), factor(c("b", "a"), levels = c("b", "a")),
             c(u = "x", v = "y", w = "x"), ordered(c("lo", "hi", "lo")), c(3, 1, 3),
             structure(factor(c("a", "b", "a")), contrasts = "c"),
             structure(factor(c("a", "b", "a")), note = "kept?"))
  for (y in ys) {
    expect_identical(kmaha:::check_y(y, length(y)), droplevels(as.factor(y)))
  }
  y <- factor(c("a", "c", "a"), levels = c("a", "b", "c"))
  expect_warning(out <- kmaha:::check_y(y, 3), "level(s) 'b' with no rows", fixed = TRUE)
  expect_identical(levels(out), c("a", "c"))
  expect_identical(attr(out, "levels_all"), c("a", "b", "c"))
  lev <- c("u", "v", "w")
  for (codes in list(c(3L, 1L, 1L, 2L), c(2L, NA, 3L), integer(), c(1, 3))) {
    expect_identical(kmaha:::codes_factor(codes, lev), factor(lev[codes], levels = lev))
  }
})

test_that("formula data: factors are expanded, subset and na.action honoured", {
  df <- data.frame(y = factor(rep(c("u", "v"), each = 5)),
                   a = c(1:9, NA), f = factor(rep(c("p", "q", "r", "p", "q"), 2)))
  md <- kmaha:::model_data(quote(fn(y ~ ., data = df)), environment())
  expect_identical(nrow(md$x), 9L)
  expect_identical(colnames(md$x), c("a", "fq", "fr"))
  md2 <- kmaha:::model_data(quote(fn(y ~ a, data = df, subset = a > 2)),
                            environment())
  expect_identical(nrow(md2$x), 7L)
  expect_error(kmaha:::model_data(quote(fn(y ~ ., data = df, na.action = na.fail)),
                                  environment()),
               "missing values in object")
})
