# Kernel alignment (paper eqs. align0-align4).

# Plain-R reference: Gram matrices and alignment with the ideal kernel.
ideal_kernel <- function(y) {
  y <- as.integer(factor(y))
  p <- max(y)
  Y <- outer(y, y, "==") * 1
  Y[Y == 0] <- -1 / (p - 1)
  Y
}
alignment_ref <- function(K, Y) sum(K * Y) / (norm(K, "F") * norm(Y, "F"))

set.seed(11)
idx <- sort(c(sample(1:50, 20), sample(51:100, 20), sample(101:150, 20)))
xa <- scale(as.matrix(iris[idx, 1:4]))
ya <- iris$Species[idx]
Ya <- ideal_kernel(ya)
ks <- lapply(c(0.1, 0.5, 1, 5, 50), rbf_kernel)

test_that("S', b' and the alignments match a plain-R computation", {
  al <- align_kernels(xa, ya, ks)
  Ks <- lapply(ks, kernel_matrix, x = xa)
  fro <- vapply(Ks, norm, numeric(1), type = "F")
  Sref <- outer(seq_along(Ks), seq_along(Ks),
                Vectorize(function(i, j) sum(Ks[[i]] * Ks[[j]]))) / tcrossprod(fro)
  bref <- vapply(Ks, function(K) sum(K * Ya), numeric(1)) / fro
  expect_equal(al$S, Sref, tolerance = 1e-10)
  expect_equal(al$b, bref, tolerance = 1e-10)
  expect_equal(al$frobenius, fro, tolerance = 1e-10)
  expect_equal(al$l1, vapply(Ks, function(K) sum(abs(K)), numeric(1)), tolerance = 1e-10)
  expect_equal(al$base_alignment,
               vapply(Ks, alignment_ref, numeric(1), Y = Ya), tolerance = 1e-10)
  Kc <- Reduce(`+`, Map(`*`, Ks, al$weights))
  expect_equal(al$alignment, alignment_ref(Kc, Ya), tolerance = 1e-8)
  expect_equal(kernel_matrix(al$kernel, xa), Kc, tolerance = 1e-10,
               ignore_attr = TRUE)
  expect_lte(al$alignment, 1 + 1e-12)
  expect_gte(al$alignment, max(al$base_alignment) - 1e-8)
})

test_that("the QP solution satisfies the KKT conditions", {
  al <- align_kernels(xa, ya, ks)
  g <- al$gamma
  S <- al$S + diag(al$ridge, length(g))
  lam <- al$multipliers          # equality first, then gamma >= 0
  mu <- lam[1]
  nu <- lam[-1]
  # Stationarity of gamma' S gamma: 2 S gamma = mu b' + nu
  expect_equal(drop(2 * S %*% g), mu * al$b + nu, tolerance = 1e-7)
  # Primal and dual feasibility, complementary slackness
  expect_equal(sum(g * al$b), 1, tolerance = 1e-10)
  expect_true(all(g >= 0))
  expect_true(all(nu >= -1e-10))
  expect_lt(max(abs(nu * g)), 1e-8)
  # The multiplier of the equality is twice the optimal value
  expect_equal(mu, 2 * al$objective, tolerance = 1e-6)
})

test_that("the result does not change when a base kernel is rescaled", {
  al <- align_kernels(xa, ya, ks)
  ks2 <- ks
  ks2[[2]] <- kernel_sum(list(ks[[2]]), 7.5)
  ks2[[4]] <- kernel_sum(list(ks[[4]]), 0.01)
  al2 <- align_kernels(xa, ya, ks2)
  expect_equal(al2$gamma, al$gamma, tolerance = 1e-6)
  expect_equal(al2$alignment, al$alignment, tolerance = 1e-10)
  expect_equal(al2$weights[c(2, 4)], al$weights[c(2, 4)] / c(7.5, 0.01),
               tolerance = 1e-6)
  expect_equal(kernel_matrix(al2$kernel, xa), kernel_matrix(al$kernel, xa),
               tolerance = 1e-8)
})

test_that("on two and three kernels the QP matches a grid search over the simplex", {
  for (kk in list(ks[c(2, 4)], ks[c(1, 3, 5)], list(rbf_kernel(0.3), linear_kernel(),
                                                    poly_kernel(2, offset = 1)))) {
    al <- align_kernels(xa, ya, kk)
    Ks <- lapply(kk, kernel_matrix, x = xa)
    Ks <- lapply(Ks, function(K) K / norm(K, "F"))
    step <- if (length(kk) == 2L) 1 / 2000 else 1 / 200
    grid <- if (length(kk) == 2L) {
      cbind(seq(0, 1, by = step), 1 - seq(0, 1, by = step))
    } else {
      g <- expand.grid(a = seq(0, 1, by = step), b = seq(0, 1, by = step))
      g <- g[g$a + g$b <= 1 + 1e-12, ]
      cbind(g$a, g$b, pmax(1 - g$a - g$b, 0))
    }
    # alignment is linear-fractional in the weights: quadratic forms suffice
    S <- outer(seq_along(Ks), seq_along(Ks),
               Vectorize(function(i, j) sum(Ks[[i]] * Ks[[j]])))
    b <- vapply(Ks, function(K) sum(K * Ya), numeric(1))
    val <- drop(grid %*% b) / (sqrt(rowSums((grid %*% S) * grid)) * norm(Ya, "F"))
    best <- which.max(val)
    expect_lte(max(val), al$alignment + 1e-9)
    expect_lt(al$alignment - max(val), 1e-4)
    share <- al$gamma / sum(al$gamma)
    expect_lt(max(abs(share - grid[best, ])), 2 * step + 1e-3)
  }
})

test_that("the LP solution is feasible and bounds the l1 norm at the QP direction", {
  for (kk in list(ks, list(linear_kernel(), poly_kernel(3), rbf_kernel(1)))) {
    qp <- align_kernels(xa, ya, kk, method = "qp")
    lp <- align_kernels(xa, ya, kk, method = "lp")
    Ks <- lapply(kk, kernel_matrix, x = xa)
    l1_of <- function(w) sum(abs(Reduce(`+`, Map(`*`, Ks, w))))
    inner_of <- function(w) sum(Reduce(`+`, Map(`*`, Ks, w)) * Ya)
    expect_true(all(lp$weights >= 0))
    expect_equal(inner_of(lp$weights), 1, tolerance = 1e-8)
    # QP weights satisfy <K, Y> = 1 already: the same feasible set
    expect_equal(inner_of(qp$weights), 1, tolerance = 1e-8)
    expect_equal(lp$objective, l1_of(lp$weights), tolerance = 1e-6)
    expect_lte(l1_of(lp$weights), l1_of(qp$weights) * (1 + 1e-8))
    # ... and ||K||_F <= ||vec(K)||_1 at the LP solution (the upper bound)
    Klp <- Reduce(`+`, Map(`*`, Ks, lp$weights))
    expect_lte(norm(Klp, "F"), lp$objective + 1e-10)
    expect_lte(lp$alignment, qp$alignment + 1e-8)
  }
})

test_that("the mixed-sign LP agrees with a brute-force l1 search", {
  kk <- list(linear_kernel(), rbf_kernel(1))
  lp <- align_kernels(xa, ya, kk, method = "lp")
  Ks <- lapply(kk, kernel_matrix, x = xa)
  b <- vapply(Ks, function(K) sum(K * Ya), numeric(1))
  # feasible directions on the simplex, scaled so that <K, Y> = 1
  t <- seq(0, 1, by = 1 / 4000)
  vals <- vapply(t, function(s) {
    w <- c(s, 1 - s)
    if (sum(w * b) <= 0) return(Inf)
    w <- w / sum(w * b)
    sum(abs(w[1] * Ks[[1]] + w[2] * Ks[[2]]))
  }, numeric(1))
  expect_lte(lp$objective, min(vals) + 1e-9)
  expect_lt(min(vals) - lp$objective, 1e-3 * lp$objective)
})

test_that("print and plot work", {
  al <- align_kernels(xa, ya)
  expect_output(print(al), "alignment of the combined kernel")
  expect_s3_class(al$kernel, "kmaha_kernel")
  expect_length(al$weights, 21L)
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(al))
})

test_that("bad input gives clear errors", {
  expect_error(align_kernels(xa, ya, kernels = rbf_kernel(1)),
               "`kernels` must be a non-empty list of kernel objects", fixed = TRUE)
  expect_error(align_kernels(xa, ya, kernels = list()),
               "`kernels` must be a non-empty list", fixed = TRUE)
  expect_error(align_kernels(xa, ya, kernels = list(rbf_kernel(1), "a")),
               "`kernels[[2]]` must be a kernel object", fixed = TRUE)
  expect_error(align_kernels(xa, ya[-1]), "`y` has length 59 but `x` has 60 rows",
               fixed = TRUE)
  expect_error(align_kernels(xa, rep("a", 60)), "`y` has only 1 class", fixed = TRUE)
  expect_error(align_kernels(xa, ya, method = "sdp"),
               "`method` must be one of \"qp\", \"lp\".", fixed = TRUE)
  xn <- xa
  xn[1, 1] <- NA
  expect_error(align_kernels(xn, ya), "`x` contains missing values", fixed = TRUE)
  # a kernel negatively aligned with the labels only
  xs <- cbind(c(-1, 1, -2, 2))
  expect_error(align_kernels(xs, c(1, 1, 2, 2), list(linear_kernel())),
               "No kernel in `kernels` is positively aligned", fixed = TRUE)
})
