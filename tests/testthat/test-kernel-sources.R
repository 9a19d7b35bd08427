# Kernels from elsewhere: kernlab kernel objects (translated into built-in
# kernels where exact, evaluated by kernlab otherwise), R functions of two
# points or two matrices, precomputed Gram matrices; the kernlab kpca()
# masking remedy.

ks_data <- function() {
  x <- scale(as.matrix(iris[, 1:4]))
  idx <- c(1:30, 51:80, 101:130)
  list(x = x[idx, ], y = iris$Species[idx], xt = x[-idx, ], yt = iris$Species[-idx])
}

# exp(-s |a - b|^2) as a function of two points and of two matrices.
gauss_pair <- function(s) {
  force(s)
  function(a, b) exp(-s * sum((a - b)^2))
}
gauss_block <- function(s) {
  force(s)
  function(a, b) {
    d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
    exp(-s * pmax(d2, 0))
  }
}

test_that("kernlab kernels with a built-in equivalent are translated exactly", {
  skip_if_not_installed("kernlab")
  d <- ks_data()
  km <- function(k, a, b = a) matrix(as.double(kernlab::kernelMatrix(k, a, b)), nrow(a))
  cases <- list(
    list(kernlab::rbfdot(sigma = 0.3), "gaussian", gaussian_kernel(1 / sqrt(0.6))),
    list(kernlab::laplacedot(sigma = 0.7), "laplace", laplace_kernel(1 / 0.7)),
    list(kernlab::polydot(degree = 3, scale = 0.5, offset = 2), "poly",
         poly_kernel(3, 0.5, 2)),
    list(kernlab::vanilladot(), "linear", linear_kernel()))
  for (cs in cases) {
    k <- as_kmaha_kernel(cs[[1]])
    expect_identical(k$type, cs[[2]])
    expect_identical(unclass(k)[names(unclass(cs[[3]]))], unclass(cs[[3]]))
    expect_match(format(k), "[kernlab ", fixed = TRUE)
    # The same values as kernlab's own evaluation (laplacedot rounds the
    # squared distance to 9 decimals inside the square root).
    expect_equal(unname(kernel_matrix(k, d$x, d$xt)), km(cs[[1]], d$x, d$xt),
                 tolerance = 1e-7, label = cs[[2]])
  }
  # Outside the built-in domain (negative offset) the kernel stays kernlab's.
  kneg <- as_kmaha_kernel(kernlab::polydot(degree = 2, offset = -1))
  expect_identical(kneg$type, "kernlab")
  expect_equal(unname(kernel_matrix(kneg, d$x)), km(kernlab::polydot(2, 1, -1), d$x))
})

test_that("kernlab kernels without an equivalent are evaluated by kernelMatrix()", {
  skip_if_not_installed("kernlab")
  d <- ks_data()
  for (kl in list(kernlab::tanhdot(scale = 0.1), kernlab::anovadot(sigma = 0.5, degree = 2),
                  kernlab::besseldot(sigma = 0.5), kernlab::splinedot())) {
    k <- as_kmaha_kernel(kl)
    expect_identical(k$type, "kernlab")
    expect_match(format(k), "kernlab::kernelMatrix()", fixed = TRUE)
    # kernlab's kernelMatrix() of one matrix (that of two fails for tanhdot)
    ref <- matrix(as.double(kernlab::kernelMatrix(kl, rbind(d$x, d$xt))), nrow(d$x) + nrow(d$xt))
    n <- nrow(d$x)
    expect_equal(unname(kernel_matrix(kl, d$x, d$xt)), ref[1:n, -(1:n)], tolerance = 1e-12)
    expect_equal(unname(kernel_matrix(kl, d$x)), ref[1:n, 1:n], tolerance = 1e-12)
  }
  # a kernlab user kernel: a plain function of class "kernel"
  uk <- function(x, y) sum(x * y)^2
  class(uk) <- "kernel"
  expect_equal(unname(kernel_matrix(uk, d$x[1:5, ])), tcrossprod(d$x[1:5, ])^2)
  expect_error(as_kmaha_kernel(kernlab::stringdot()),
               "`kernel` is a kernlab string kernel (kernlab stringdot(", fixed = TRUE)
})

test_that("a kernlab kernel gives the same fit as the equal built-in kernel", {
  skip_if_not_installed("kernlab")
  d <- ks_data()
  kl <- kernlab::rbfdot(sigma = 0.2)
  kb <- gaussian_kernel(1 / sqrt(0.4))
  f1 <- kmaha(d$x, d$y, learner = "dne", kernel = kl)
  f2 <- kmaha(d$x, d$y, learner = "dne", kernel = kb)
  expect_identical(f1$L, f2$L)
  expect_identical(f1$embedding, f2$embedding)
  expect_identical(predict(f1, d$xt), predict(f2, d$xt))
  expect_identical(predict(f1, d$xt, type = "transform"), predict(f2, d$xt, type = "transform"))
  g1 <- knca(d$x, d$y, kernel = kernlab::laplacedot(sigma = 0.5), max_iter = 30)
  g2 <- knca(d$x, d$y, kernel = laplace_kernel(2), max_iter = 30)
  expect_identical(g1$L, g2$L)
  expect_identical(predict(g1, d$xt), predict(g2, d$xt))
  kp1 <- kpca(d$x, kernlab::polydot(degree = 2), rank = 5)
  kp2 <- kpca(d$x, poly_kernel(2, 1, 1), rank = 5)
  expect_identical(kp1$coords, kp2$coords)
  expect_identical(predict(kp1, d$xt), predict(kp2, d$xt))
  # kernlab kernels among the base kernels of the kernel choices
  a1 <- kmaha(d$x, d$y, learner = "dne", kernel = "align",
              kernels = list(kernlab::rbfdot(0.1), kernlab::rbfdot(2)))
  a2 <- kmaha(d$x, d$y, learner = "dne", kernel = "align",
              kernels = list(gaussian_kernel(1 / sqrt(0.2)), gaussian_kernel(0.5)))
  expect_identical(a1$kernel_choice$alignment$weights, a2$kernel_choice$alignment$weights)
  expect_identical(predict(a1, d$xt), predict(a2, d$xt))
})

test_that("the R evaluation of a kernel agrees with the core's (KPCA trick)", {
  skip_if_not_installed("kernlab")
  d <- ks_data()
  # The same kernel evaluated in R, by kernlab, and in the core.
  k_r <- kmaha:::new_kernel("kernlab", kernel = kernlab::rbfdot(0.25),
                            origin = "kernlab rbfdot(sigma = 0.25)")
  k_c <- gaussian_kernel(sqrt(2))
  f_r <- kmaha(d$x, d$y, learner = "dne", kernel = k_r)
  f_c <- kmaha(d$x, d$y, learner = "dne", kernel = k_c)
  expect_identical(predict(f_r, d$xt), predict(f_c, d$xt))
  expect_equal(f_r$embedding, f_c$embedding, tolerance = 1e-8)
  expect_equal(predict(f_r, d$xt, type = "transform"),
               predict(f_c, d$xt, type = "transform"), tolerance = 1e-8)
})

test_that("custom kernels of two points and of two matrices equal the built-in kernel", {
  d <- ks_data()
  kb <- gaussian_kernel(1 / sqrt(2 * 0.3))
  kv <- custom_kernel(gauss_pair(0.3), name = "pair")
  km <- custom_kernel(gauss_block(0.3), matrix = TRUE, name = "block")
  expect_s3_class(kv, "kmaha_kernel")
  expect_identical(kv$type, "r")
  expect_match(format(kv), "R function kernel 'pair' (of two points, called once per pair", fixed = TRUE)
  expect_match(format(km), "R function kernel 'block' (of two matrices", fixed = TRUE)
  Kb <- kernel_matrix(kb, d$x, d$xt)
  expect_equal(kernel_matrix(kv, d$x, d$xt), Kb, tolerance = 1e-13)
  expect_equal(kernel_matrix(km, d$x, d$xt), Kb, tolerance = 1e-13)
  expect_equal(kernel_matrix(kv, d$x), kernel_matrix(kb, d$x), tolerance = 1e-13)
  # a plain function is a kernel of two points
  expect_equal(kernel_matrix(gauss_pair(0.3), d$x[1:10, ]), kernel_matrix(kb, d$x[1:10, ]),
               tolerance = 1e-13)
  for (k in list(kv, km)) {
    f <- kmaha(d$x, d$y, learner = "dne", kernel = k)
    fb <- kmaha(d$x, d$y, learner = "dne", kernel = kb)
    expect_identical(predict(f, d$xt), predict(fb, d$xt))
    # Coordinates are compared on the leading components: with all of them
    # kept, the smallest (eigenvalues near 1e-8 of the largest) amplify the
    # rounding differences of the two evaluations.
    f <- kmaha(d$x, d$y, learner = "dne", kernel = k, rank = 10)
    fb <- kmaha(d$x, d$y, learner = "dne", kernel = kb, rank = 10)
    expect_equal(predict(f, d$xt, type = "transform"), predict(fb, d$xt, type = "transform"),
                 tolerance = 1e-8)
    kp <- kpca(d$x, k)
    kpb <- kpca(d$x, kb)
    expect_equal(kp$coords[, 1:10], kpb$coords[, 1:10], tolerance = 1e-8)
    expect_equal(predict(kp, d$xt)[, 1:10], predict(kpb, d$xt)[, 1:10], tolerance = 1e-8)
  }
})

test_that("a function of two points is called once per pair i <= j for the training Gram", {
  d <- ks_data()
  calls <- 0L
  k <- custom_kernel(function(a, b) {
    calls <<- calls + 1L
    sum(a * b)
  })
  n <- 12L
  K <- kernel_matrix(k, d$x[1:n, ])
  expect_identical(calls, as.integer(n * (n + 1L) / 2L))
  expect_equal(unname(K), unname(tcrossprod(d$x[1:n, ])), tolerance = 1e-14)
  calls <- 0L
  kernel_matrix(k, d$x[1:n, ], d$x[1:5, ])
  expect_identical(calls, n * 5L)
})

test_that("kernel rows and projections in blocks equal the one-block results", {
  d <- ks_data()
  f <- gauss_block(0.3)
  whole <- kmaha:::kernel_rows_blocks(d$xt, d$x, f)
  expect_equal(kmaha:::kernel_rows_blocks(d$xt, d$x, f, block = 7L), whole)
  expect_equal(kmaha:::kernel_rows_blocks(d$x, NULL, f, block = 7L), f(d$x, d$x))
  k <- custom_kernel(f, matrix = TRUE)
  kp <- kpca(d$x, k)
  # new rows of an R kernel reach the core as kernel rows, a block at a time:
  # the projection equals that of the precomputed Gram matrix, for one row,
  # many (several blocks) and none
  kg <- kpca(f(d$x, d$x), "precomputed")
  expect_equal(unname(predict(kp, d$xt)), unname(predict(kg, f(d$xt, d$x))), tolerance = 1e-10)
  many <- d$xt[rep(seq_len(nrow(d$xt)), length.out = 3 * kmaha:::kernel_block_rows(nrow(d$x)) + 5), ]
  expect_equal(unname(predict(kp, many)), unname(predict(kg, f(many, d$x))), tolerance = 1e-10)
  expect_identical(dim(predict(kp, d$xt[0, ])), c(0L, ncol(kp$coords)))
})

test_that("kernel-trick learners with an R kernel equal the precomputed fit of its Gram matrix", {
  d <- ks_data()
  k <- custom_kernel(gauss_block(0.3), matrix = TRUE)
  K <- kernel_matrix(k, d$x)
  Kt <- kernel_matrix(k, d$xt, d$x)
  pairs <- list(
    kdne = list(kdne(d$x, d$y, kernel = k, dim = 2, scale = FALSE),
                kdne(K, d$y, kernel = "precomputed", dim = 2)),
    knca = list(knca(d$x, d$y, kernel = k, max_iter = 40, scale = FALSE),
                knca(K, d$y, kernel = "precomputed", max_iter = 40)))
  for (nm in names(pairs)) {
    a <- pairs[[nm]][[1]]
    b <- pairs[[nm]][[2]]
    expect_identical(unname(a$L), unname(b$L), label = nm)
    expect_identical(unname(a$embedding), unname(b$embedding), label = nm)
    expect_identical(predict(a, d$xt), predict(b, Kt), label = nm)
    expect_identical(unname(predict(a, d$xt, type = "transform")),
                     unname(predict(b, Kt, type = "transform")), label = nm)
  }
})

test_that("the kernel-trick learners take a precomputed Gram matrix as the built-in kernel", {
  d <- ks_data()
  kb <- rbf_kernel(1)
  K <- kernel_matrix(kb, d$x)
  Kt <- kernel_matrix(kb, d$xt, d$x)
  a <- kdne(d$x, d$y, kernel = kb, scale = FALSE, eps = 1e-6)
  b <- kdne(K, d$y, kernel = "precomputed", eps = 1e-6)
  expect_identical(unname(b$L), unname(a$L))
  expect_identical(predict(b, Kt), predict(a, d$xt))
  expect_true(is.na(b$settings$scale))
  expect_null(b$feature_map$x)
  expect_identical(b$feature_map$n, nrow(K))
  out <- capture.output(print(b))
  expect_match(out[2], "kernel: precomputed kernel (Gram matrix given)", fixed = TRUE)
  expect_match(out[3], "a precomputed Gram matrix", fixed = TRUE)
  expect_output(print(summary(b)), "inputs: precomputed Gram matrix", fixed = TRUE)
  # klmnn with few iterations (both fits stop at the same limit, which may
  # warn that it was reached: the warning is the documented one, not news)
  limit_ok <- function(expr) withCallingHandlers(expr, warning = function(w) {
    if (grepl("did not converge", conditionMessage(w), fixed = TRUE)) invokeRestart("muffleWarning")
  })
  kl <- limit_ok(klmnn(K, d$y, kernel = "precomputed", max_iter = 50))
  kl2 <- limit_ok(klmnn(d$x, d$y, kernel = kb, scale = FALSE, max_iter = 50))
  expect_identical(unname(kl$L), unname(kl2$L))
  expect_identical(predict(kl, Kt), predict(kl2, d$xt))
})

test_that("kpca() and kmaha() take a precomputed Gram matrix", {
  d <- ks_data()
  kb <- rbf_kernel(0.7)
  K <- kernel_matrix(kb, d$x)
  Kt <- kernel_matrix(kb, d$xt, d$x)
  kp <- kpca(d$x, kb)
  kg <- kpca(K, "precomputed")
  expect_equal(kg$coords, kp$coords, tolerance = 1e-10)
  expect_null(kg$x)
  expect_equal(unname(predict(kg, Kt)), unname(predict(kp, d$xt)), tolerance = 1e-10)
  expect_output(print(kg), "inputs: Gram matrix", fixed = TRUE)
  # one new point as a vector of kernel values
  expect_equal(unname(predict(kg, Kt[3, ])), unname(predict(kp, d$xt[3, , drop = FALSE])))
  for (learner in c("dne", "nca")) {
    args <- if (learner == "nca") list(max_iter = 30) else list()
    fp <- kmaha(K, d$y, learner = learner, kernel = "precomputed", learner_args = args)
    fb <- kmaha(d$x, d$y, learner = learner, kernel = kb, scale = FALSE, learner_args = args)
    expect_identical(predict(fp, Kt), predict(fb, d$xt))
    # the maps agree on well-conditioned (leading) KPCA components
    fp10 <- kmaha(K, d$y, learner = learner, kernel = "precomputed", learner_args = args,
                  rank = 10)
    fb10 <- kmaha(d$x, d$y, learner = learner, kernel = kb, scale = FALSE,
                  learner_args = args, rank = 10)
    expect_equal(abs(unname(fp10$L)), abs(unname(fb10$L)), tolerance = 1e-6)
    expect_identical(unname(predict(fp, Kt, type = "prob", k = 3)),
                     unname(predict(fb, d$xt, type = "prob", k = 3)))
  }
  # a row with a missing kernel value predicts NA, as a row with a missing input
  Kna <- Kt[1:3, ]
  Kna[2, 5] <- NA
  expect_identical(is.na(predict(fp, Kna)), c(FALSE, TRUE, FALSE))
  # columns matched by name when both sides are named
  dimnames(K) <- list(paste0("p", 1:nrow(K)), paste0("p", 1:nrow(K)))
  colnames(Kt) <- colnames(K)
  fn <- kmaha(K, d$y, learner = "dne", kernel = "precomputed")
  perm <- rev(seq_len(ncol(Kt)))
  expect_identical(predict(fn, Kt[, perm]), predict(fn, Kt))
  expect_identical(predict(fn, unname(Kt)), predict(fn, Kt))
  # update() refits from the stored call
  expect_identical(update(fn, learner_args = list(dim = 2))$settings$learner_args$dim, 2)
})

test_that("bad precomputed Gram matrices and kernel rows get clear errors", {
  d <- ks_data()
  K <- kernel_matrix(rbf_kernel(1), d$x)
  Kt <- kernel_matrix(rbf_kernel(1), d$xt, d$x)
  expect_error(kmaha(d$x, d$y, kernel = "precomputed"),
               "With kernel = \"precomputed\", `x` must be the n x n Gram matrix of the training points; it is 90 x 4, not square. To use the rows of `x` as inputs, pass a kernel object such as rbf_kernel(1) instead.",
               fixed = TRUE)
  Ka <- K
  Ka[1, 2] <- Ka[1, 2] + 0.1
  expect_error(knca(Ka, d$y, kernel = "precomputed"),
               "The Gram matrix `x` must be symmetric: x[2, 1] = ", fixed = TRUE)
  Kn <- K
  Kn[3, 3] <- NA
  expect_error(kdne(Kn, d$y, kernel = "precomputed"),
               "The Gram matrix `x` contains missing values.", fixed = TRUE)
  Ki <- K
  Ki[3, 4] <- Ki[4, 3] <- Inf
  expect_error(kpca(Ki, "precomputed"), "The Gram matrix `x` contains infinite values.",
               fixed = TRUE)
  expect_error(kmaha(K, d$y[-1], kernel = "precomputed"),
               "`y` has 89 labels but the Gram matrix `x` covers 90 points; they must match",
               fixed = TRUE)
  expect_error(kpca(list(K), "precomputed"),
               "With kernel = \"precomputed\", `x` must be the n x n Gram matrix of the training points (a numeric matrix), not list.",
               fixed = TRUE)
  fit <- kmaha(K, d$y, learner = "dne", kernel = "precomputed")
  expect_error(predict(fit, Kt[, -1]),
               "The model was fitted on a precomputed kernel: `newdata` must have one column per training point (90), holding the kernel values of the new points against them; it has 89.",
               fixed = TRUE)
  expect_error(predict(fit, "a"),
               "`newdata` must be the m x 90 matrix of kernel values", fixed = TRUE)
  Kt2 <- Kt
  Kt2[1, 1] <- Inf
  expect_error(predict(fit, Kt2), "`newdata` contains infinite kernel values.", fixed = TRUE)
  kg <- kpca(K, "precomputed")
  expect_error(predict(kg, Kt[, 1:10]), "must have one column per training point (90)",
               fixed = TRUE)
  dimnames(K) <- list(paste0("p", 1:90), paste0("p", 1:90))
  fn <- kmaha(K, d$y, learner = "dne", kernel = "precomputed")
  colnames(Kt) <- paste0("q", 1:90)
  expect_error(predict(fn, Kt), "The column names of `newdata` are not the names of the training points",
               fixed = TRUE)
  # a training point with an empty name is matched in place only (was:
  # "subscript out of bounds" for the same names in another order)
  nm <- c("", paste0("p", 2:90))
  dimnames(K) <- list(nm, nm)
  fb <- kmaha(K, d$y, learner = "dne", kernel = "precomputed")
  colnames(Kt) <- nm
  expect_identical(predict(fb, Kt), predict(fn, unname(Kt)))
  expect_error(predict(fb, Kt[, 90:1]), "The column names of `newdata` are not the names of the training points",
               fixed = TRUE)
  expect_error(kmaha(K, d$y, kernel = "precomputed", landmarks = 10),
               "`landmarks` (the Nystrom method) needs kernel values against landmark points",
               fixed = TRUE)
  expect_error(kmaha(K, d$y, learner = "lmnn", kernel = "precomputed", neighbors = "input"),
               "`neighbors = \"input\"` finds target neighbours in the input space, which a precomputed kernel does not have",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = "cv", kernels = list(K, K)),
               "`kernels` is a list of matrices: Gram matrices are aligned by align_kernels(",
               fixed = TRUE)
  expect_error(kernel_matrix(kmaha:::precomputed_kernel(), d$x),
               "A precomputed kernel has no function to evaluate", fixed = TRUE)
})

test_that("bad R kernels get clear errors", {
  d <- ks_data()
  x <- d$x[1:10, ]
  expect_error(custom_kernel(1), "`fun` must be a function", fixed = TRUE)
  expect_error(custom_kernel(function(a) 1), "`fun` must take two arguments", fixed = TRUE)
  expect_error(custom_kernel(function(a, b) 1, matrix = NA), "`matrix` must be TRUE or FALSE",
               fixed = TRUE)
  expect_error(kernel_matrix(custom_kernel(function(a, b) c(1, 2), name = "two"), x),
               "The function of the kernel 'two' must return a single number for two points; it returned numeric of length 2. For a function of two matrices use custom_kernel(fun, matrix = TRUE).",
               fixed = TRUE)
  expect_error(kernel_matrix(custom_kernel(function(a, b) NaN, name = "nan"), x),
               "The kernel 'nan' returned missing or infinite values", fixed = TRUE)
  expect_error(kernel_matrix(custom_kernel(function(a, b) tcrossprod(a, b)[, 1],
                                           matrix = TRUE, name = "col"), x),
               "The function of the kernel 'col' must return the 10 x 10 matrix of kernel values of its two arguments (rows against rows); it returned numeric of length 10.",
               fixed = TRUE)
  expect_error(kernel_matrix(custom_kernel(function(a, b) t(tcrossprod(a, b)), matrix = TRUE,
                                           name = "t"), x, x[1:3, ]),
               "it returned a 3 x 10 matrix.", fixed = TRUE)
  asym <- custom_kernel(function(a, b) tcrossprod(a, b) + outer(seq_len(nrow(a)), rep(1, nrow(b))),
                        matrix = TRUE, name = "asym")
  expect_error(kpca(x, asym), "The kernel 'asym' is not symmetric on these points", fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = gauss_pair(1), landmarks = 10),
               "`landmarks` (the Nystrom method) needs kernels the C++ core evaluates",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, kernel = "cv", kernels = list(rbf_kernel(1), gauss_pair(1)),
                     landmarks = 10),
               "one of `kernels` is R function kernel", fixed = TRUE)
  expect_error(kpca(x, custom_kernel(gauss_pair(1)), landmarks = 5),
               "`landmarks` (the Nystrom method) needs kernels the C++ core evaluates",
               fixed = TRUE)
  expect_error(knca(x, d$y[1:10], kernel = "rbf"),
               "`kernel` must be a kernel object such as rbf_kernel(1) or poly_kernel(2), not character. Kernels from elsewhere: a kernlab kernel (e.g. kernlab::rbfdot(0.1)), an R function k(x, y) (see custom_kernel()), or \"precomputed\" with the Gram matrix as `x`.",
               fixed = TRUE)
})

test_that("sums mix built-in and R kernels", {
  d <- ks_data()
  kv <- custom_kernel(gauss_block(0.3), matrix = TRUE)
  ks <- kernel_sum(list(rbf_kernel(1), kv, poly_kernel(2)), c(2, 0.5, 0.1))
  expect_equal(kernel_matrix(ks, d$x, d$xt),
               2 * kernel_matrix(rbf_kernel(1), d$x, d$xt) +
                 0.5 * kernel_matrix(kv, d$x, d$xt) +
                 0.1 * kernel_matrix(poly_kernel(2), d$x, d$xt), tolerance = 1e-13)
  # an R kernel with zero weight is not evaluated
  boom <- custom_kernel(function(a, b) stop("evaluated"))
  expect_equal(kernel_matrix(kernel_sum(list(rbf_kernel(1), boom), c(1, 0)), d$x),
               kernel_matrix(rbf_kernel(1), d$x))
  # the unweighted sum of R kernels in kmaha() equals that of built-in ones
  fu <- kmaha(d$x, d$y, learner = "dne", kernel = "unweighted",
              kernels = list(kv, custom_kernel(gauss_block(2), matrix = TRUE)))
  fb <- kmaha(d$x, d$y, learner = "dne", kernel = "unweighted",
              kernels = list(gaussian_kernel(1 / sqrt(0.6)), gaussian_kernel(0.5)))
  expect_identical(predict(fu, d$xt), predict(fb, d$xt))
})

test_that("alignment of R kernels and of Gram matrices equals the core's alignment", {
  d <- ks_data()
  s <- c(0.05, 0.3, 2)
  kb <- lapply(s, function(v) gaussian_kernel(1 / sqrt(2 * v)))
  kr <- lapply(s, function(v) custom_kernel(gauss_block(v), matrix = TRUE))
  mixed <- list(kb[[1]], kr[[2]], kb[[3]])
  grams <- lapply(kb, kernel_matrix, x = d$x)
  names(grams) <- c("a", "b", "c")
  ref <- align_kernels(d$x, d$y, kb)
  for (method in c("qp", "lp")) {
    ref <- align_kernels(d$x, d$y, kb, method = method)
    for (al in list(align_kernels(d$x, d$y, kr, method = method),
                    align_kernels(d$x, d$y, mixed, method = method),
                    align_kernels(grams, d$y, kernels = "precomputed", method = method))) {
      expect_equal(al$S, ref$S, tolerance = 1e-10)
      expect_equal(al$b, ref$b, tolerance = 1e-10)
      expect_equal(al$l1, ref$l1, tolerance = 1e-10)
      expect_equal(al$weights, ref$weights, tolerance = 1e-6)
      expect_equal(al$alignment, ref$alignment, tolerance = 1e-8)
    }
  }
  # the LP's general case (base Grams of both signs) with Gram matrices
  # (its LP grows with n^2: 45 points)
  sub <- c(1:15, 31:45, 61:75)
  lin <- list(linear_kernel(), poly_kernel(2, 1, 0), gaussian_kernel(1))
  ref_lin <- align_kernels(d$x[sub, ], d$y[sub], lin, method = "lp")
  al_lin <- align_kernels(lapply(lin, kernel_matrix, x = d$x[sub, ]), d$y[sub],
                          kernels = "precomputed", method = "lp")
  expect_equal(al_lin$weights, ref_lin$weights, tolerance = 1e-6)
  ag <- align_kernels(grams, d$y, kernels = "precomputed")
  expect_null(ag$kernel)
  expect_equal(ag$gram, Reduce(`+`, Map(`*`, ag$weights, grams)))
  expect_output(print(ag), "precomputed kernel: Gram matrix 'b'", fixed = TRUE)
  # with landmarks the same rows are drawn for kernels and Gram matrices
  set.seed(3)
  l1 <- align_kernels(d$x, d$y, kb, landmarks = 40)
  set.seed(3)
  l2 <- align_kernels(grams, d$y, kernels = "precomputed", landmarks = 40)
  expect_identical(l2$rows, l1$rows)
  expect_equal(l2$weights, l1$weights, tolerance = 1e-6)
  expect_identical(dim(l2$gram), dim(grams[[1]]))
  # the aligned combination fitted as a precomputed kernel equals kmaha()'s
  # aligned kernel on the same kernels
  fa <- kmaha(d$x, d$y, learner = "dne", kernel = "align", kernels = kb, scale = FALSE)
  fp <- kmaha(ag$gram, d$y, learner = "dne", kernel = "precomputed")
  Kt <- Reduce(`+`, Map(`*`, ag$weights, lapply(kb, kernel_matrix, x = d$xt, y = d$x)))
  expect_identical(predict(fp, Kt), predict(fa, d$xt))
  # bad lists of Gram matrices
  expect_error(align_kernels(list(grams[[1]], grams[[2]][1:10, 1:10]), d$y,
                             kernels = "precomputed"),
               "`y` has 90 labels but the Gram matrix `x[[2]]` covers 10 points", fixed = TRUE)
  expect_error(align_kernels(d$x, d$y, kernels = "precomputed"),
               "With kernels = \"precomputed\", `x[[1]]` must be the n x n Gram matrix of the training points; it is 90 x 4, not square.",
               fixed = TRUE)
  expect_error(align_kernels(list(), d$y, kernels = "precomputed"),
               "With kernels = \"precomputed\", `x` must be a non-empty list of Gram matrices",
               fixed = TRUE)
})

test_that("cross-validation over R kernels equals that over the built-in kernels", {
  d <- ks_data()
  s <- c(0.02, 0.2, 1)
  kr <- lapply(s, function(v) custom_kernel(gauss_block(v), matrix = TRUE))
  kb <- lapply(s, function(v) gaussian_kernel(1 / sqrt(2 * v)))
  cv_r <- cv_kernel(d$x, d$y, "dne", kernels = kr, folds = 3, seed = 2, rank = 8,
                    strategy = "exhaustive")
  cv_b <- cv_kernel(d$x, d$y, "dne", kernels = kb, folds = 3, seed = 2, rank = 8,
                    strategy = "exhaustive")
  expect_identical(cv_r$accuracy, cv_b$accuracy)
  expect_identical(cv_r$best, cv_b$best)
  expect_identical(nrow(cv_r$errors), 0L)
  fr <- kmaha(d$x, d$y, learner = "dne", kernel = "cv", kernels = kr, seed = 2,
              cv_folds = 3, rank = 8, cv_strategy = "exhaustive")
  expect_identical(fr$kernel_choice$index, cv_b$best)
})

test_that("models with R kernels are saved and predict in a fresh session", {
  skip_if_not_installed("callr")
  skip_if_not_installed("kernlab")
  skip_on_cran()
  d <- ks_data()
  make_k <- function(s) {
    force(s)
    custom_kernel(function(a, b) {
      d2 <- outer(rowSums(a^2), rowSums(b^2), "+") - 2 * tcrossprod(a, b)
      exp(-s * pmax(d2, 0))
    }, matrix = TRUE, name = "closure")
  }
  fits <- list(
    kmaha = kmaha(d$x, d$y, learner = "dne", kernel = make_k(0.4)),
    knca = knca(d$x, d$y, kernel = make_k(0.4), max_iter = 20),
    kernlab = kmaha(d$x, d$y, learner = "dne", kernel = kernlab::tanhdot(scale = 0.05)),
    kpca = kpca(d$x, make_k(0.4), rank = 4))
  here <- lapply(fits, function(f) {
    if (inherits(f, "kmaha_kpca")) predict(f, d$xt) else predict(f, d$xt, type = "transform")
  })
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(list(fits = fits, xt = d$xt), path)
  there <- run_in_child(function(path) {
    library(kmaha)
    obj <- readRDS(path)
    lapply(obj$fits, function(f) {
      if (inherits(f, "kmaha_kpca")) predict(f, obj$xt) else predict(f, obj$xt, type = "transform")
    })
  }, args = list(path = path))
  expect_identical(there, here)
})

test_that("kernel_pca() is kpca(); kmaha's kpca() explains kernlab-style calls", {
  d <- ks_data()
  expect_identical(kernel_pca, kpca)
  expect_error(kpca(d$x, kernel = "rbfdot", kpar = list(sigma = 0.1)),
               "Unknown argument(s) to kpca(): 'kpar'. This is kmaha's kpca(); kernlab's is kernlab::kpca()",
               fixed = TRUE)
  expect_error(kpca(~., data = iris[, 1:4]),
               "Unknown argument(s) to kpca(): 'data'. This is kmaha's kpca(); kernlab's is kernlab::kpca()",
               fixed = TRUE)
  expect_error(kpca(~ Sepal.Length + Sepal.Width),
               "`x` is a formula, but kmaha's kpca() takes a numeric matrix or data frame. This is kmaha's kpca(); kernlab's is kernlab::kpca()",
               fixed = TRUE)
  expect_error(kpca(d$x, "rbfdot"),
               "`kernel` is the kernlab kernel name \"rbfdot\". kmaha's kpca() takes kernel objects, kernlab's too: e.g. kernlab::rbfdot(...) with its parameters.",
               fixed = TRUE)
})

test_that("attaching kernlab after kmaha says how to reach kmaha's kpca()", {
  skip_if_not_installed("kernlab")
  skip_if_not_installed("callr")
  skip_on_cran()
  res <- run_in_child(function() {
    grab <- function(expr) {
      msgs <- character()
      withCallingHandlers(expr, message = function(m) {
        msgs <<- c(msgs, conditionMessage(m))
        invokeRestart("muffleMessage")
      })
      paste(msgs, collapse = "")
    }
    out <- list()
    out$kmaha_then_kernlab <- grab({
      library(kmaha)
      library(kernlab)
    })
    x <- scale(iris[, 1:4])
    # kpca() is now kernlab's; the alias is kmaha's
    out$masked <- identical(kpca, kernlab::kpca)
    out$alias <- class(kernel_pca(x, rbf_kernel(1), rank = 2))
    out$alias_kernlab_kernel <- ncol(kernel_pca(x, rbfdot(sigma = 0.5), rank = 2)$coords)
    # after kmaha is detached the hook is gone
    detach("package:kernlab", unload = FALSE)
    detach("package:kmaha", unload = FALSE)
    out$after_detach <- grab(library(kernlab))
    out$kernlab_then_kmaha <- grab(library(kmaha))
    out$kmaha_kpca_first <- identical(kpca, kmaha::kpca)
    out
  })
  expect_match(res$kmaha_then_kernlab,
               "kmaha: kernlab's kpca() now masks kmaha's kpca(). Use kmaha::kpca() or its alias kernel_pca()",
               fixed = TRUE)
  expect_true(res$masked)
  expect_identical(res$alias, "kmaha_kpca")
  expect_identical(res$alias_kernlab_kernel, 2L)
  expect_false(grepl("kmaha:", res$after_detach, fixed = TRUE))
  expect_match(res$kernlab_then_kmaha,
               "kmaha: kmaha's kpca() masks kernlab's kpca(). Use kernlab::kpca() for kernlab's",
               fixed = TRUE)
  expect_true(res$kmaha_kpca_first)
})
