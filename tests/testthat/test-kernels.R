# Kernels: kernel_matrix() against plain-R formulas for every kernel type,
# within x and between x and y, kernel sums and their weights, and every
# bad-parameter message.

set.seed(42)
kx <- matrix(rnorm(40), 10, 4, dimnames = list(paste0("r", 1:10), NULL))
ky <- matrix(rnorm(24), 6, 4, dimnames = list(paste0("q", 1:6), NULL))

# Plain R, pair by pair through outer() on row indices.
plain_d2 <- function(a, b) {
  outer(seq_len(nrow(a)), seq_len(nrow(b)),
        Vectorize(function(i, j) sum((a[i, ] - b[j, ])^2)))
}
plain_ip <- function(a, b) {
  outer(seq_len(nrow(a)), seq_len(nrow(b)),
        Vectorize(function(i, j) sum(a[i, ] * b[j, ])))
}
plain_kernel <- function(k, a, b) {
  D <- ncol(a)
  switch(k$type,
    linear = plain_ip(a, b),
    rbf = exp(-plain_d2(a, b) / (2 * D * k$sigma^2)),
    gaussian = exp(-plain_d2(a, b) / (2 * k$sigma^2)),
    laplace = exp(-sqrt(plain_d2(a, b)) / k$sigma),
    poly = (k$scale * plain_ip(a, b) + k$offset)^k$degree,
    sum = Reduce(`+`, Map(function(kk, w) w * plain_kernel(kk, a, b),
                          k$kernels, k$weights)))
}

parts_within <- function(k) kernel_matrix(k, kx)

all_kernels <- list(
  linear_kernel(), rbf_kernel(0.7), rbf_kernel(10), gaussian_kernel(1.5),
  laplace_kernel(2), poly_kernel(1), poly_kernel(2, scale = 0.5, offset = 1),
  poly_kernel(3, scale = 2, offset = 0.25), poly_kernel(5),
  kernel_sum(list(rbf_kernel(0.5), laplace_kernel(1), poly_kernel(2)),
             c(0.2, 1, 3)))

test_that("kernel_matrix() within x matches plain R for every kernel type", {
  for (k in all_kernels) {
    K <- kernel_matrix(k, kx)
    expect_equal(unname(K), plain_kernel(k, kx, kx), tolerance = 1e-10,
                 info = format(k))
    expect_identical(K, t(K))
    expect_identical(dimnames(K), list(rownames(kx), rownames(kx)))
  }
})

test_that("kernel_matrix() between x and y matches plain R", {
  for (k in all_kernels) {
    K <- kernel_matrix(k, kx, ky)
    expect_identical(dim(K), c(10L, 6L))
    expect_equal(unname(K), plain_kernel(k, kx, ky), tolerance = 1e-10,
                 info = format(k))
    expect_identical(dimnames(K), list(rownames(kx), rownames(ky)))
  }
  # a data frame works like the matrix
  expect_equal(kernel_matrix(rbf_kernel(1), as.data.frame(kx), as.data.frame(ky)),
               kernel_matrix(rbf_kernel(1), kx, ky))
})

test_that("the scaled RBF kernel uses the input dimension", {
  x1 <- matrix(c(0, 0, 0), 1)
  x2 <- matrix(c(1, 1, 1), 1)
  expect_equal(kernel_matrix(rbf_kernel(2), x1, x2)[1, 1], exp(-3 / (2 * 3 * 4)))
  expect_equal(kernel_matrix(gaussian_kernel(2), x1, x2)[1, 1], exp(-3 / 8))
  expect_equal(kernel_matrix(laplace_kernel(2), x1, x2)[1, 1], exp(-sqrt(3) / 2))
  expect_equal(diag(kernel_matrix(rbf_kernel(0.01), kx)), rep(1, 10),
               ignore_attr = TRUE)
})

test_that("kernel_sum() weights combine the base Gram matrices", {
  ks <- list(rbf_kernel(0.5), rbf_kernel(5), poly_kernel(2, offset = 1))
  w <- c(0.3, 0, 2)
  K <- kernel_matrix(kernel_sum(ks, w), kx, ky)
  parts <- lapply(ks, kernel_matrix, x = kx, y = ky)
  expect_equal(K, 0.3 * parts[[1]] + 2 * parts[[3]], tolerance = 1e-12)
  # default weights are all 1 (the unweighted kernel)
  expect_equal(kernel_matrix(kernel_sum(ks), kx),
               Reduce(`+`, lapply(ks, kernel_matrix, x = kx)), tolerance = 1e-12)
  # nested sums multiply their weights
  inner <- kernel_sum(ks[1:2], c(1, 3))
  outer_k <- kernel_sum(list(inner, ks[[3]]), c(2, 0.5))
  expect_equal(kernel_matrix(outer_k, kx),
               2 * parts_within(ks[[1]]) + 6 * parts_within(ks[[2]]) +
                 0.5 * parts_within(ks[[3]]), tolerance = 1e-12)
  expect_identical(kernel_sum(ks, w)$weights, w)
  expect_output(print(kernel_sum(ks, w)), "sum of 3 kernels (2 with non-zero weight)",
                fixed = TRUE)
})

test_that("paper_sigmas() and paper_kernels() give the paper's 21 kernels", {
  s <- paper_sigmas()
  expect_length(s, 21L)
  expect_identical(range(s), c(0.01, 1000))
  expect_true(all(diff(s) > 0))
  ks <- paper_kernels()
  expect_identical(vapply(ks, `[[`, 0, "sigma"), s)
  expect_true(all(vapply(ks, function(k) identical(k$type, "rbf"), NA)))
})

test_that("kernel constructors reject bad parameters", {
  for (f in list(rbf_kernel, gaussian_kernel, laplace_kernel)) {
    expect_error(f(0), "`sigma` must be positive, not 0.", fixed = TRUE)
    expect_error(f(-1), "`sigma` must be positive, not -1.", fixed = TRUE)
    expect_error(f(NA), "`sigma` must be a single finite number.", fixed = TRUE)
    expect_error(f(Inf), "`sigma` must be a single finite number.", fixed = TRUE)
    expect_error(f(c(1, 2)), "`sigma` must be a single finite number.", fixed = TRUE)
    expect_error(f("1"), "`sigma` must be a single finite number.", fixed = TRUE)
  }
  expect_error(poly_kernel(2.5), "`degree` must be a single whole number >= 1, not 2.5.",
               fixed = TRUE)
  expect_error(poly_kernel(0), "`degree` must be a single whole number >= 1, not 0.",
               fixed = TRUE)
  expect_error(poly_kernel(Inf), "`degree` must be a single whole number >= 1",
               fixed = TRUE)
  expect_error(poly_kernel(NA), "`degree` must be a single whole number >= 1",
               fixed = TRUE)
  expect_error(poly_kernel(2, scale = 0), "`scale` must be positive, not 0.",
               fixed = TRUE)
  expect_error(poly_kernel(2, offset = -1), "`offset` must be non-negative, not -1.",
               fixed = TRUE)
  expect_error(poly_kernel(2, offset = NA), "`offset` must be a single finite number.",
               fixed = TRUE)
})

test_that("kernel_sum() rejects bad kernels and weights", {
  ks <- list(rbf_kernel(1), rbf_kernel(2))
  expect_error(kernel_sum(ks, c(1, -1)),
               "`weights` must be non-negative (a negative weight can make the kernel indefinite); got -1.",
               fixed = TRUE)
  expect_error(kernel_sum(ks, c(0, 0)), "`weights` must not all be zero.", fixed = TRUE)
  expect_error(kernel_sum(ks, 1), "`weights` must be 2 finite numbers, one per kernel.",
               fixed = TRUE)
  expect_error(kernel_sum(ks, c(1, NA)), "`weights` must be 2 finite numbers",
               fixed = TRUE)
  expect_error(kernel_sum(ks, c(1, Inf)), "`weights` must be 2 finite numbers",
               fixed = TRUE)
  expect_error(kernel_sum(rbf_kernel(1)), "`kernels` must be a non-empty list",
               fixed = TRUE)
  expect_error(kernel_sum(list()), "`kernels` must be a non-empty list", fixed = TRUE)
  expect_error(kernel_sum(list(rbf_kernel(1), "rbf")),
               "`kernels[[2]]` must be a kernel object", fixed = TRUE)
})

test_that("kernel_matrix() rejects bad data with clear messages", {
  expect_error(kernel_matrix("rbf", kx), "`kernel` must be a kernel object",
               fixed = TRUE)
  xn <- kx
  xn[2, 3] <- NA
  expect_error(kernel_matrix(rbf_kernel(1), xn), "`x` contains missing values",
               fixed = TRUE)
  xi <- kx
  xi[1, 1] <- Inf
  expect_error(kernel_matrix(rbf_kernel(1), xi), "`x` contains infinite values.",
               fixed = TRUE)
  df <- data.frame(a = 1:3, b = c("u", "v", "w"))
  expect_error(kernel_matrix(rbf_kernel(1), df),
               "`x` must have numeric columns only; column 'b' is character: convert it to numbers, drop it, or use the formula interface",
               fixed = TRUE)
  expect_error(kernel_matrix(rbf_kernel(1), matrix(letters[1:4], 2)),
               "`x` must be numeric, not a character matrix.", fixed = TRUE)
  expect_error(kernel_matrix(rbf_kernel(1), kx, ky[, 1:3]),
               "`y` has 3 columns but `x` has 4; they must match.", fixed = TRUE)
  yn <- ky
  yn[1, 1] <- NaN
  expect_error(kernel_matrix(rbf_kernel(1), kx, yn), "`y` contains missing values",
               fixed = TRUE)
  expect_error(kernel_matrix(rbf_kernel(1), kx[0, ]), "`x` has no rows.",
               fixed = TRUE)
})
