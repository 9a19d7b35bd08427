# The pair learners MMC and ITML through kmaha() with given pairs: the KPCA
# trick with the KPCA fitted on the rows that appear in a pair (R/pairs.R).
# Checked against kpca() and mmc()/itml() run independently on the paired
# rows' KPCA coordinates; rows in no pair leave the fit unchanged; pairs
# alone (no `y`) give a transform-only model; bad pairs and impossible
# combinations are errors with exact messages.

pairs_data <- function() {
  set.seed(11)
  n <- 60
  t <- runif(n, 0, 2 * pi)
  r <- rep(c(1, 2), length.out = n)
  x <- cbind(r * cos(t), r * sin(t), rnorm(n, sd = 0.3))
  y <- factor(r)
  # 14 similar and 14 dissimilar pairs among the first 40 rows (rows 41-60
  # are in no pair)
  i <- sample(40, 28, replace = TRUE)
  j <- vapply(seq_along(i), function(a) {
    same <- a <= 14
    cand <- setdiff(which((y[seq_len(40)] == y[i[a]]) == same), i[a])
    cand[sample.int(length(cand), 1)]
  }, 1L)
  pairs <- cbind(i, j, deparse.level = 0)
  key <- paste(pmin(i, j), pmax(i, j))
  keep <- !duplicated(key)
  list(x = x, y = y, pairs = pairs[keep, ], similar = ifelse(seq_along(i) <= 14, 1, -1)[keep])
}

# The paired rows' KPCA coordinates by kpca() on the scaled inputs, all rows
# projected, and the pairs renumbered into the paired rows.
independent_kpca <- function(xs, pairs, kernel) {
  rows <- sort(unique(as.vector(pairs)))
  kp <- kpca(xs[rows, ], kernel)
  list(rows = rows, z = kp$coords, all = predict(kp, xs),
       pairs = matrix(match(pairs, rows), ncol = 2))
}

test_that("the KPCA-trick fit equals mmc() and itml() on kpca() of the paired rows", {
  d <- pairs_data()
  kern <- rbf_kernel(0.7)
  xs <- scale(d$x)
  ind <- independent_kpca(xs, d$pairs, kern)
  expect_lt(length(ind$rows), nrow(d$x))
  for (name in c("mmc", "itml")) {
    fit <- kmaha(d$x, d$y, learner = name, kernel = kern,
                 learner_args = list(pairs = d$pairs, similar = d$similar))
    lin <- get(name)(ind$z, pairs = ind$pairs, similar = d$similar, scale = FALSE)
    # the KPCA is that of the paired rows
    expect_identical(nrow(fit$feature_map$x), length(ind$rows))
    expect_equal(ncol(fit$L), ncol(ind$z))
    expect_identical(fit$paired_rows, ind$rows)
    # the same metric: every pairwise distance of all rows' embeddings
    # (invariant to the signs of KPCA components and to rotations of L)
    emb_lin <- ind$all %*% t(lin$L)
    expect_equal(as.matrix(dist(fit$embedding)), as.matrix(dist(emb_lin)),
                 tolerance = 1e-6, ignore_attr = TRUE, info = name)
    expect_equal(fit$convergence$objective, lin$convergence$objective, tolerance = 1e-8,
                 info = name)
    # new points: the same distances too
    new <- d$x[1:5, ] + 0.1
    expect_equal(as.matrix(dist(predict(fit, new, type = "transform"))),
                 as.matrix(dist(predict(lin, predict(kpca(xs[ind$rows, ], kern),
                   scale(new, attr(xs, "scaled:center"), attr(xs, "scaled:scale"))),
                   type = "transform"))),
                 tolerance = 1e-6, ignore_attr = TRUE, info = name)
    # the pairs reported are numbered as the rows of x
    expect_identical(fit$pairs$pairs, unname(d$pairs))
    expect_identical(fit$pairs$similar, d$similar)
  }
})

test_that("rows in no pair do not change the fit (without scaling by them)", {
  d <- pairs_data()
  kern <- rbf_kernel(0.7)
  out <- setdiff(seq_len(nrow(d$x)), unique(as.vector(d$pairs)))
  x2 <- d$x
  set.seed(2)
  x2[out, ] <- matrix(rnorm(length(out) * 3, sd = 5), ncol = 3)
  x3 <- rbind(d$x, matrix(rnorm(30), ncol = 3))  # 10 more rows in no pair
  new <- d$x[1:6, ] * 1.1
  for (name in c("mmc", "itml")) {
    fits <- lapply(list(d$x, x2, x3), function(x) {
      kmaha(x, learner = name, kernel = kern, scale = FALSE,
            learner_args = list(pairs = d$pairs, similar = d$similar))
    })
    paired <- sort(unique(as.vector(d$pairs)))
    ref <- fits[[1]]
    # the learned distances among the paired rows and new points (the
    # coordinates themselves are defined up to a rotation: the KPCA's
    # eigenvectors of nearly equal eigenvalues)
    dists <- function(f) {
      as.matrix(dist(rbind(f$embedding[paired, ], predict(f, new, type = "transform"))))
    }
    for (f in fits[-1]) {
      expect_identical(nrow(f$feature_map$x), length(paired))
      expect_equal(dists(f), dists(ref), tolerance = 1e-6, ignore_attr = TRUE, info = name)
    }
    # without labels the model only transforms, every row embedded
    expect_null(ref$y)
    expect_identical(nrow(fits[[3]]$embedding), nrow(x3))
    expect_identical(nobs(fits[[3]]), nrow(x3))
    expect_identical(summary(ref)$n, nrow(d$x))
    expect_error(predict(ref, new),
                 "This model was fitted without class labels (from pairs or chunklets only), so it cannot classify: use type = \"transform\", or refit with `y`.",
                 fixed = TRUE)
  }
})

test_that("with labels, the rows in no pair are the classifier's reference points", {
  d <- pairs_data()
  fit <- kmaha(d$x, d$y, learner = "mmc", kernel = rbf_kernel(0.7),
               learner_args = list(pairs = d$pairs, similar = d$similar))
  expect_identical(nrow(fit$embedding), nrow(d$x))
  # the leave-one-out accuracy over all rows, by an independent 1-NN
  D <- as.matrix(dist(fit$embedding))
  diag(D) <- Inf
  expect_equal(fit$train_accuracy, mean(d$y[apply(D, 1, which.min)] == d$y))
  # every row paired: the usual KPCA trick on all rows
  all_rows <- rbind(d$pairs, cbind(1:59, 2:60))
  sim <- c(d$similar, ifelse(d$y[1:59] == d$y[2:60], 1, -1))
  full <- kmaha(d$x, d$y, learner = "mmc", kernel = rbf_kernel(0.7),
                learner_args = list(pairs = all_rows, similar = sim))
  expect_identical(nrow(full$feature_map$x), nrow(d$x))
  expect_null(full$paired_rows)
})

test_that("bad pairs through kmaha() are errors with exact messages", {
  d <- pairs_data()
  fitp <- function(pairs, similar, ...) {
    kmaha(d$x, d$y, learner = "itml", kernel = rbf_kernel(1),
          learner_args = list(pairs = pairs, similar = similar), ...)
  }
  expect_error(fitp(rbind(c(1, 2), c(3, 61)), c(1, -1)),
               "`learner_args$pairs` row 2 refers to row 61 of `x`, which has 60 rows.",
               fixed = TRUE)
  expect_error(fitp(rbind(c(1, 2), c(2, 1)), c(1, -1)),
               "The pair of rows 1 and 2 of `x` is marked both similar and dissimilar (`learner_args$pairs` rows 1 and 2); remove one of them.",
               fixed = TRUE)
  expect_error(fitp(rbind(c(1, 3), c(2, 4)), c(1, 1)),
               "All pairs are similar: itml() needs dissimilar pairs too (`learner_args$similar` = -1).",
               fixed = TRUE)
  expect_error(fitp(rbind(c(1, 2), c(2, 3)), c(-1, -1)),
               "All pairs are dissimilar: itml() needs similar pairs too (`learner_args$similar` = 1).",
               fixed = TRUE)
  expect_error(fitp(rbind(c(1, 2), c(2, 3)), c(1, -1, 1)),
               "`learner_args$similar` has length 3 but `learner_args$pairs` has 2 rows; they must match.",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, learner = "mmc", kernel = rbf_kernel(1),
                     learner_args = list(similar = c(1, -1))),
               "`learner_args$similar` is given without `learner_args$pairs`: give both, or neither (pairs are then drawn from `y`).",
               fixed = TRUE)
})

test_that("pairs with kernel choice, alignment or a precomputed kernel are clear errors", {
  d <- pairs_data()
  la <- list(pairs = d$pairs, similar = d$similar)
  expect_error(kmaha(d$x, learner = "mmc", learner_args = la),
               "Kernel choice (kernel = \"auto\") scores each candidate by how well it classifies held-out class labels, but `y` is absent: mmc() learns from `learner_args$pairs` alone. Give a kernel (e.g. kernel = rbf_kernel(1)) or kernel = \"linear\", or give `y`.",
               fixed = TRUE)
  expect_error(kmaha(d$x, learner = "itml", kernel = "cv", learner_args = la),
               "Kernel choice (kernel = \"cv\") scores each candidate by how well it classifies held-out class labels, but `y` is absent: itml() learns from `learner_args$pairs` alone.",
               fixed = TRUE)
  expect_error(kmaha(d$x, d$y, learner = "mmc", kernel = "cv", learner_args = la),
               "`learner_args$pairs` names rows of `x`, but kernel choice (kernel = \"cv\") refits the learner on subsets of the rows; let the learner draw them from the labels, or give a kernel.",
               fixed = TRUE)
  expect_error(kmaha(d$x, learner = "mmc", kernel = "align", learner_args = la),
               "`kernel = \"align\"` aligns the kernels with the class labels, but `y` is absent: mmc() learns from `learner_args$pairs` alone. Give a kernel (e.g. kernel = rbf_kernel(1)) or kernel = \"unweighted\", or give `y`.",
               fixed = TRUE)
  K <- kernel_matrix(rbf_kernel(1), scale(d$x))
  expect_error(kmaha(K, d$y, learner = "mmc", kernel = "precomputed", learner_args = la),
               "With given pairs kmaha() fits the KPCA on the rows that appear in a pair, but new points of a precomputed kernel come as kernel values against all the training rows. Pass the Gram matrix of the paired rows alone as `x` (and `learner_args$pairs` renumbered into them).",
               fixed = TRUE)
  # no labels and no pairs: labels are needed
  expect_error(kmaha(d$x, learner = "mmc", kernel = rbf_kernel(1)),
               "`y` is missing: supply the class labels.", fixed = TRUE)
  # pairs only, no kernel: the linear learner, as mmc() fits it
  lin <- kmaha(d$x, learner = "mmc", kernel = "linear", learner_args = la)
  ref <- mmc(d$x, pairs = d$pairs, similar = d$similar)
  expect_equal(lin$L, ref$L, ignore_attr = TRUE)
})
