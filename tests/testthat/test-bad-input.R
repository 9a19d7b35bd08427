# A table of bad inputs: each must give a specific, informative error (or
# warning), never a crash or a hang.

x <- as.matrix(iris[1:60, 1:4])
y <- droplevels(iris$Species[1:60])

x_na <- x; x_na[3, 2] <- NA
x_nan <- x; x_nan[5, 1] <- NaN
x_inf <- x; x_inf[7, 4] <- Inf
df_chr <- data.frame(iris[1:60, 1:3], txt = rep(c("a", "b"), 30))
x_const <- cbind(x, const = 1)

error_cases <- list(
  list("NA in x (nca)", quote(nca(x_na, y)), "`x` contains missing values (NA/NaN)"),
  list("NaN in x (lmnn)", quote(lmnn(x_nan, y)), "`x` contains missing values (NA/NaN)"),
  list("Inf in x (dne)", quote(dne(x_inf, y)), "`x` contains infinite values"),
  list("Inf in x (kmaha)", quote(kmaha(x_inf, y, kernel = rbf_kernel(1))),
       "`x` contains infinite values"),
  list("character column, matrix method", quote(nca(df_chr, y)),
       "`x` must have numeric columns only; column 'txt' is character"),
  list("character matrix", quote(dne(matrix(letters[1:8], 4), factor(c(1, 1, 2, 2)))),
       "`x` must be numeric, not a character matrix"),
  list("y of the wrong length", quote(nca(x, y[-1])),
       "`y` has length 59 but `x` has 60 rows; they must match."),
  list("a single class", quote(lmnn(x[1:40, ], y[1:40])), "`y` has only 1 class"),
  list("a single class (kmaha)", quote(kmaha(x[1:40, ], y[1:40], kernel = "unweighted")),
       "`y` has only 1 class"),
  list("no class large enough for k target neighbours (lmnn)",
       quote(lmnn(x[c(1:3, 51:53), ], y[c(1:3, 51:53)], k = 3)),
       "`k` (3) is too large"),
  list("kNN k larger than n (predict)",
       quote(predict(dne(x, y, k = 2), x[1:2, ], k = 100)),
       "`k` (100) must not exceed the number of training rows (60)."),
  list("kNN k larger than n (kmaha)",
       quote(kmaha(x, y, kernel = rbf_kernel(1), k = 60)),
       "`k` (60) must be smaller than the number of training rows (60)."),
  list("zero-variance column", quote(nca(x_const, y)),
       "`x` has constant column(s) 'const'"),
  list("zero-variance column (kmaha)", quote(kmaha(x_const, y, kernel = "unweighted")),
       "`x` has constant column(s) 'const'"),
  list("a kernel whose Gram is all zeros",
       quote(kpca(matrix(0, 5, 2), linear_kernel())), "the kernel matrix is zero"),
  list("empty data", quote(nca(x[0, ], y[0])), "`x` has no rows."),
  list("newdata with other columns",
       quote(predict(nca(Species ~ ., data = droplevels(iris[1:60, ]), max_iter = 5),
                     data.frame(a = 1:3))),
       "`newdata` lacks column(s) used in training: 'Sepal.Length'"),
  list("newdata with too few columns (matrix method)",
       quote(predict(dne(unname(x), y), unname(x[, 1:3]))),
       "`newdata` has 3 columns but the model was trained on 4."),
  list("non-finite kernel parameter", quote(rbf_kernel(Inf)),
       "`sigma` must be a single finite number."),
  list("NA kernel parameter", quote(laplace_kernel(NA)),
       "`sigma` must be a single finite number."),
  list("non-positive sigma", quote(gaussian_kernel(0)), "`sigma` must be positive, not 0."),
  list("non-integer degree", quote(poly_kernel(2.5)),
       "`degree` must be a single whole number >= 1"),
  list("negative kernel weights", quote(kernel_sum(list(rbf_kernel(1), rbf_kernel(2)), c(1, -1))),
       "`weights` must be non-negative"),
  list("unknown kernel choice", quote(kmaha(x, y, kernel = "magic")),
       "`kernel` must be a kernel object such as rbf_kernel(1)"),
  list("mu outside (0, 1)", quote(lmnn(x, y, mu = 1)),
       "`mu` must lie strictly between 0 and 1, not 1."),
  list("dim larger than D", quote(nca(x, y, dim = 9)),
       "`dim` (9) must not exceed the number of input columns")
)

for (case in error_cases) {
  test_that(paste("bad input:", case[[1]]), {
    expect_error(eval(case[[2]]), case[[3]], fixed = TRUE)
  })
}

test_that("a class too small for k target neighbours warns once, and the fit works", {
  idx <- c(1:20, 51:70, 101:102)
  for (fun in list(lmnn, dne)) {
    w <- character()
    fit <- withCallingHandlers(
      fun(as.matrix(iris[idx, 1:4]), iris$Species[idx], k = 3),
      warning = function(cond) {
        w <<- c(w, conditionMessage(cond))
        invokeRestart("muffleWarning")
      })
    expect_length(w, 1L)
    expect_match(w, "'virginica'", fixed = TRUE)
    expect_s3_class(fit, "kmaha_linear")
    expect_true(all(is.finite(fit$L)))
  }
})

test_that("na.action: na.omit drops rows by default, na.fail gives R's error", {
  df <- iris[1:60, ]
  df$Sepal.Length[c(2, 55)] <- NA
  fit <- dne(Species ~ ., data = droplevels(df))
  expect_identical(nrow(fit$embedding), 58L)
  expect_error(dne(Species ~ ., data = droplevels(df), na.action = na.fail),
               "missing values in object")
})

test_that("new factor levels at predict time are reported", {
  df <- data.frame(y = factor(rep(c("a", "b"), each = 10)),
                   v = c(1:10, 3:12) + 0.1 * (1:20),
                   f = factor(rep(c("p", "q"), 10)))
  fit <- dne(y ~ ., data = df, k = 2)
  expect_error(predict(fit, data.frame(v = 1, f = "zz")),
               "`newdata` has new level(s) 'zz' of factor 'f' not seen in training.",
               fixed = TRUE)
})

test_that("far-apart points cannot overflow NCA's softmax", {
  set.seed(3)
  xf <- rbind(matrix(rnorm(20), 10) * 1e6, matrix(rnorm(20), 10))
  yf <- factor(rep(c("a", "b"), each = 10))
  fit <- nca(xf, yf, scale = FALSE, max_iter = 20)
  expect_true(all(is.finite(fit$L)))
  expect_true(is.finite(fit$convergence$objective))
})
