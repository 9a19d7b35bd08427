# Plain-R retention of points (rows of x): each point replaced by its
# orthogonal projection onto the affine span of the other points (by QR),
# then the spread of these leave-one-out positions about the mean of x over
# the spread of x.  The reference for the dimension rule of dne() and kdne().
ref_retention <- function(x) {
  n <- nrow(x)
  xc <- scale(x, scale = FALSE)
  loo <- t(vapply(seq_len(n), function(i) {
    o <- x[-i, , drop = FALSE]
    m <- colMeans(o)
    B <- t(o) - m  # directions of the affine span of the others
    q <- qr(B)
    m + qr.fitted(q, x[i, ] - m)
  }, numeric(ncol(x))))
  sum(sweep(loo, 2, colMeans(x))^2) / sum(xc^2)
}

