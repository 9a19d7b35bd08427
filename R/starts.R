# Starts and default weights shared by the learners' fitters (R/learners.R):
# the LMNN start on input coordinates (lmnn_init()), the kernel-trick start
# of KNCA and KLMNN (knca_init(): the map onto the leading kernel principal
# components), and the default weight of kernelized LMNN, for the KPCA trick
# (klmnn_lambda(), on the coordinates) and the kernel trick
# (klmnn_lambda_gram(), on the Gram matrix).  The public learners (lmnn.R,
# knca.R, klmnn.R) only document and check; the fitters call these.

# Starting map of LMNN (dim x D) on the preprocessed inputs xs, or NULL for
# the D x D identity: the core's default start, which is never formed here
# (at p >> n it would be the largest object of the fit, and the core solves
# in the span of the centred points, where it is the r x r identity).
# "pca": the leading principal directions; at most min(n, D) of them exist,
# and with `dim` above that the start has only those rows (further rows
# would be zero: directions in which the training points do not vary, which
# the solvers do not use; at p >> n with the default `dim` = D they would
# make a D x D matrix).
lmnn_init <- function(init, init_mat, xs, dim, principal = FALSE) {
  D <- ncol(xs)
  if (!is.null(init_mat)) return(unname(init_mat))
  if (init == "auto") init <- if (dim < D) "pca" else "identity"
  # exact KPCA coordinates are principal components already: the PCA start
  # is the first `dim` axes
  if (init == "pca" && principal) return(diag(1, dim, D))
  switch(init,
         identity = if (dim == D) NULL else diag(1, dim, D),
         pca = {
           xc <- sweep(xs, 2L, colMeans(xs))
           nv <- min(dim, dim(xs))
           v <- svd(xc, nu = 0L, nv = nv)$v
           t(v[, seq_len(nv), drop = FALSE])
         },
         random = matrix(stats::rnorm(dim * D), dim, D) / sqrt(D))
}

# Kernel PCA of the training Gram matrix for the kernel-trick start, by the
# package's KPCA core (K is centred in place, never through an n x n centring
# matrix): the eigenvalues above rel_tol times the largest and the
# coefficients alpha = V Lambda^(-1/2).  A zero centred Gram matrix gives no
# component.
knca_kpca_basis <- function(K, ctx, rel_tol = 1e-10) {
  fit <- tryCatch(core_kpca_gram(K, NULL, 0L, rel_tol, "full", ctx),
                  kmaha_degenerate_error = function(e) NULL)
  if (is.null(fit)) return(list(values = numeric(0), alpha = matrix(0, nrow(K), 0)))
  list(values = fit$eigenvalues, alpha = fit$projection)
}

# The start of KNCA and KLMNN: coefficients U (dim x n) from `init` ("auto"
# or "kpca": the map onto the leading `dim` kernel principal components,
# "random", or a dim x n matrix), with its label.
knca_init <- function(init, K, dim, ctx) {
  n <- nrow(K)
  if (!is.null(dim)) {
    dim <- check_count(dim, "dim")
    if (dim > n) {
      stopf("`dim` (%d) must not exceed the number of training points (%d).",
            dim, n)
    }
  }
  if (is.numeric(init) && is.matrix(init)) {
    if (is.null(dim)) dim <- nrow(init)
    if (nrow(init) != dim || ncol(init) != n) {
      stopf("`init` must be a %d x %d matrix (dim x number of training points), not %d x %d.",
            dim, n, nrow(init), ncol(init))
    }
    if (anyNA(init) || any(!is.finite(init))) {
      stopf("`init` must contain finite numbers only.")
    }
    storage.mode(init) <- "double"
    return(list(U = unname(init), label = "matrix"))
  }
  if (!is.character(init) || length(init) != 1L || is.na(init) ||
      !init %in% c("auto", "kpca", "random")) {
    stopf("`init` must be \"auto\", \"kpca\", \"random\" or a numeric dim x %d matrix.", n)
  }
  if (init == "random" && !is.null(dim)) {
    return(list(U = matrix(stats::rnorm(dim * n), dim, n) / sqrt(n),
                label = "random"))
  }
  basis <- knca_kpca_basis(K, ctx)
  r <- length(basis$values)
  if (r == 0L) {
    stopf("`kernel` sees no differences between the rows of `x`: their centred Gram matrix is zero; use a kernel whose parameters suit the scale of `x`.")
  }
  if (is.null(dim)) dim <- r
  if (init == "random") {
    return(list(U = matrix(stats::rnorm(dim * n), dim, n) / sqrt(n),
                label = "random"))
  }
  if (dim > r) {
    stopf("`dim` (%d) exceeds the rank of the centred Gram matrix (%d); use a smaller `dim` or init = \"random\".",
          dim, r)
  }
  # U = alpha' H: each coefficient row centred (H = I - 11'/n on the right).
  alpha <- basis$alpha[, seq_len(dim), drop = FALSE]
  list(U = t(sweep(alpha, 2L, colMeans(alpha))), label = "kpca")
}

# The default weight of kernelized LMNN, for the KPCA trick (from the
# coordinates z) and the kernel trick (from the Gram matrix K): lambda0
# times the total variance of the training points in feature space.
klmnn_lambda0 <- 1
klmnn_lambda <- function(z) {
  klmnn_lambda0 * sum(colMeans(sweep(z, 2L, colMeans(z))^2))
}
klmnn_lambda_gram <- function(K) {
  n <- nrow(K)
  klmnn_lambda0 * (sum(diag(K)) - sum(K) / n) / n
}
