# Kernel-trick NCA: the paper's representer theorem (kernel-trick distances
# equal KPCA-trick distances), gradient of the RKNCA objective against
# central finite differences, prediction and input validation.

knca_objective_r <- function(U, K, y, lambda = 0) {
  z <- K %*% t(U)
  d2 <- as.matrix(stats::dist(z))^2
  e <- exp(-d2)
  diag(e) <- 0
  p <- e / rowSums(e)
  -sum(p[outer(y, y, "==")]) + lambda * sum(diag(U %*% K %*% t(U)))
}

# KPCA with base eigen(): coordinates V Lambda^(1/2) of the centred Gram
# matrix and the coefficients alpha = V Lambda^(-1/2).
kpca_by_eigen <- function(K, rel_tol = 1e-12) {
  n <- nrow(K)
  H <- diag(n) - 1 / n
  e <- eigen(H %*% K %*% H, symmetric = TRUE)
  keep <- e$values > rel_tol * e$values[1]
  V <- e$vectors[, keep, drop = FALSE]
  lam <- e$values[keep]
  list(coords = sweep(V, 2L, sqrt(lam), "*"), alpha = sweep(V, 2L, sqrt(lam), "/"),
       H = H)
}

# ||U (k_i - k_j)|| versus ||A' (phi_i - phi_j)|| with A' = U K H alpha.
expect_representer_identity <- function(U, K, tolerance) {
  kp <- kpca_by_eigen(K)
  A_kpca <- U %*% K %*% kp$H %*% kp$alpha
  d_kernel <- dist(K %*% t(U))
  d_kpca <- dist(kp$coords %*% t(A_kpca))
  expect_equal(as.vector(d_kpca), as.vector(d_kernel), tolerance = tolerance)
}

test_that("kernel-trick distances equal KPCA-trick distances (representer theorem)", {
  set.seed(21)
  idx <- sample(150, 40)
  x <- as.matrix(iris[idx, 1:4])
  y <- iris$Species[idx]
  # A fitted U with an RBF kernel.
  fit <- knca(x, y, kernel = rbf_kernel(0.5), dim = 3, max_iter = 40)
  K <- kernel_matrix(rbf_kernel(0.5), fit$feature_map$x)
  expect_equal(unname(fit$embedding), unname(K %*% t(fit$L)), tolerance = 1e-12)
  expect_representer_identity(fit$L, K, tolerance = 1e-6)
  # Any U, with a rank-deficient (linear) kernel and a polynomial kernel.
  for (kern in list(linear_kernel(), poly_kernel(2, scale = 0.2, offset = 1))) {
    Kl <- kernel_matrix(kern, fit$feature_map$x)
    U <- matrix(rnorm(3 * 40), 3, 40)
    expect_representer_identity(U, Kl, tolerance = 1e-6)
  }
})

test_that("the RKNCA gradient matches central finite differences", {
  set.seed(22)
  x <- matrix(rnorm(30 * 3), 30, 3)
  y <- sample(1:3, 30, replace = TRUE)
  K <- kernel_matrix(rbf_kernel(1), x)
  for (d in c(2L, 30L)) {
    for (lambda in c(0, 0.2)) {
      U <- matrix(rnorm(d * 30, sd = 0.3), d, 30)
      res <- cpp_nca_objective(K, as.integer(factor(y)), U, lambda, K, 0L, -1, test_ctx(2L))
      expect_equal(res$value, knca_objective_r(U, K, y, lambda), tolerance = 1e-12)
      g_fd <- U
      h <- 1e-5
      for (k in seq_along(U)) {
        Up <- U; Um <- U
        Up[k] <- Up[k] + h
        Um[k] <- Um[k] - h
        g_fd[k] <- (knca_objective_r(Up, K, y, lambda) -
                      knca_objective_r(Um, K, y, lambda)) / (2 * h)
      }
      expect_lt(max(abs(res$gradient - g_fd)) / max(abs(g_fd)), 1e-6)
    }
  }
})

test_that("knca fits, reports its objective and predicts new points", {
  set.seed(23)
  tr <- c(sample(1:50, 25), sample(51:100, 25), sample(101:150, 25))
  x <- iris[tr, 1:4]
  fit <- knca(x, iris$Species[tr], kernel = rbf_kernel(1), lambda = 0.01)
  expect_s3_class(fit, c("kmaha_knca", "kmaha_kernel_trick"))
  expect_true(fit$convergence$converged)
  K <- kernel_matrix(rbf_kernel(1), fit$feature_map$x)
  expect_equal(fit$convergence$objective,
               knca_objective_r(fit$L, K, iris$Species[tr], 0.01), tolerance = 1e-10)
  expect_lt(fit$convergence$objective, fit$convergence$trace[1])
  newx <- iris[-tr, 1:4]
  z <- predict(fit, newx, type = "transform")
  Kx <- kernel_matrix(rbf_kernel(1), apply_scaling(as.matrix(newx), fit$prep), fit$feature_map$x)
  expect_equal(unname(z), unname(Kx %*% t(fit$L)), tolerance = 1e-12)
  expect_equal(unname(predict(fit, x, type = "transform")), unname(fit$embedding),
               tolerance = 1e-10)
  acc <- mean(predict(fit, newx) == iris$Species[-tr])
  expect_gt(acc, 0.9)
  pr <- predict(fit, newx, type = "prob", k = 3)
  expect_equal(unname(rowSums(pr)), rep(1, nrow(newx)))
  expect_output(print(fit), "KNCA by the kernel trick (NCA on kernel rows", fixed = TRUE)
  ff <- knca(Species ~ ., data = iris[tr, ], dim = 2, max_iter = 200)
  expect_equal(levels(predict(ff, iris[1:3, ])), levels(iris$Species))
})

test_that("the KPCA start embeds the training points at their KPCA coordinates", {
  set.seed(24)
  x <- matrix(rnorm(20 * 3), 20, 3)
  K <- kernel_matrix(rbf_kernel(1), x)
  st <- knca_init("kpca", K, 4, test_ctx())
  kp <- kpca_by_eigen(K)
  expect_equal(as.vector(dist(K %*% t(st$U))), as.vector(dist(kp$coords[, 1:4])),
               tolerance = 1e-8)
})

test_that("knca with a kernel handles a problem linear NCA cannot", {
  set.seed(25)
  n <- 80
  r <- c(runif(n / 2, 0, 1), runif(n / 2, 2, 3))
  th <- runif(n, 0, 2 * pi)
  x <- cbind(r * cos(th), r * sin(th), rnorm(n, sd = 2))
  y <- factor(rep(c("inner", "outer"), each = n / 2))
  fit_k <- knca(x, y, kernel = rbf_kernel(0.5), dim = 2, max_iter = 200)
  fit_l <- nca(x, y, dim = 1, max_iter = 200)
  expect_gt(fit_k$train_accuracy, 0.95)
  expect_gt(fit_k$train_accuracy, fit_l$train_accuracy)
})

test_that("knca rejects bad input", {
  x <- as.matrix(iris[1:30, 1:4])
  y <- iris$Species[c(1:10, 51:60, 101:110)]
  expect_error(knca(x, y, dim = 31),
               "`dim` (31) must not exceed the number of training points (30).",
               fixed = TRUE)
  expect_error(knca(x, y, kernel = "rbf"),
               "`kernel` must be a kernel object such as rbf_kernel(1) or poly_kernel(2), not character.",
               fixed = TRUE)
  expect_error(knca(x, y, dim = 2, init = matrix(0, 2, 5)),
               "`init` must be a 2 x 30 matrix (dim x number of training points), not 2 x 5.",
               fixed = TRUE)
  expect_error(knca(x, y, lambda = -0.5), "`lambda` must be non-negative, not -0.5.",
               fixed = TRUE)
  expect_error(knca(x, y, init = "pca"),
               "`init` must be \"auto\", \"kpca\", \"random\" or a numeric matrix.",
               fixed = TRUE)
  expect_error(knca(x, y, kernel = linear_kernel(), dim = 5),
               "`dim` (5) exceeds the rank of the centred Gram matrix (4); use a smaller `dim` or init = \"random\".",
               fixed = TRUE)
})

test_that("?knca documents knca()'s own arguments only", {
  skip_if(!nzchar(system.file("help", package = "kmaha")), "help pages not installed")
  rd <- tools::Rd_db("kmaha")
  args_of <- function(page) {
    items <- Filter(function(e) identical(attr(e, "Rd_tag"), "\\arguments"), page)
    out <- list()
    for (blk in items) for (it in blk) if (identical(attr(it, "Rd_tag"), "\\item")) {
      out[[paste(unlist(it[[1]]), collapse = "")]] <- gsub("\\s+", " ", trimws(paste(unlist(it[[2]]), collapse = "")))
    }
    out
  }
  a <- args_of(rd[["knca.Rd"]])
  expect_identical(a$max_iter, "Maximum number of L-BFGS-B iterations.")
  # an argument is said to act for the mini-batch method only where the
  # function has that method
  for (nm in names(rd)) {
    txt <- paste(unlist(args_of(rd[[nm]])), collapse = " ")
    if (grepl("minibatch", txt, fixed = TRUE)) {
      usage <- paste(unlist(Filter(function(e) identical(attr(e, "Rd_tag"), "\\usage"), rd[[nm]])),
                     collapse = "")
      expect_true(grepl("batch_size", usage, fixed = TRUE), label = nm)
    }
  }
})
