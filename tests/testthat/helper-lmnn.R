# Shared by the LMNN tests: an independent plain-R LMNN objective and toy data.

# Plain-R LMNN objective (the paper's formula with the (1 - mu) pull + mu push
# weighting and lambda tr(M R), R = I unless given), its M-gradient and all
# hinge arguments.
lmnn_plain <- function(x, y, targets, M, mu, lambda = 0, R = diag(ncol(x))) {
  n <- nrow(x)
  pull <- 0
  push <- 0
  G <- matrix(0, ncol(x), ncol(x))
  hinge_args <- numeric(0)
  for (i in seq_len(n)) {
    for (j in targets[i, !is.na(targets[i, ])]) {
      vij <- x[i, ] - x[j, ]
      dij <- sum(vij * (M %*% vij))
      pull <- pull + dij
      G <- G + (1 - mu) * tcrossprod(vij)
      for (l in which(y != y[i])) {
        vil <- x[i, ] - x[l, ]
        h <- 1 + dij - sum(vil * (M %*% vil))
        hinge_args <- c(hinge_args, h)
        if (h > 0) {
          push <- push + h
          G <- G + mu * (tcrossprod(vij) - tcrossprod(vil))
        }
      }
    }
  }
  list(value = (1 - mu) * pull + mu * push + lambda * sum(M * R),
       pull = pull, push = push, gradient = G + lambda * R,
       hinge_args = hinge_args)
}

toy_data <- function(n = 30, D = 3, p = 3, seed = 1) {
  set.seed(seed)
  y <- factor(rep(letters[seq_len(p)], length.out = n))
  x <- matrix(rnorm(n * D), n, D) + 1.2 * as.integer(y)
  list(x = x, y = y)
}
