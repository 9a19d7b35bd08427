# Numerically degenerate kernels: a kernel whose Gram matrix on the
# training points is numerically the identity (every point equally far from
# every other in feature space) or a constant (all points on top of each
# other) decides nearest neighbours by ties.  The verdict is the core's
# (kmaha/degeneracy.hpp): every KPCA returns it with its fit, and
# gram_verdict() / kernel_verdict() ask for it where no KPCA runs (the
# kernel trick, the aligned kernel).  Here: those two, and the warning.

# The verdict on a Gram matrix K of the rows of x (x NULL: a precomputed
# Gram matrix): NULL, "constant" or "identity".
gram_verdict <- function(K, x, ctx) {
  v <- core_gram_degeneracy(K, x, ctx)
  if (nzchar(v)) v
}

# The verdict of `kernel` on the rows of x, from the Gram matrix of the up
# to 256 evenly spaced rows the verdict reads.
kernel_verdict <- function(kernel, x, ctx) {
  n <- nrow(x)
  if (n < 2L) return(NULL)
  idx <- unique(round(seq(1, n, length.out = min(n, 256L))))
  xs <- x[idx, , drop = FALSE]
  gram_verdict(kernel_gram(kernel, xs, NULL, ctx), xs, ctx)
}

# The warning for a kernel found degenerate (kernel_degeneracy()'s `kind`).
warn_degenerate <- function(kind, what = "The kernel", standardized = FALSE) {
  msg <- if (kind == "identity") {
    sprintf("%s is numerically the identity on these data: every point is equally far from every other in feature space, so nearest neighbours are arbitrary. %s",
            what, if (standardized) {
              "The inputs are standardized, so its bandwidth is too small for them: use a larger sigma (kmaha()'s kernel = \"auto\" and \"cv\" leave such kernels out)."
            } else {
              "The inputs are too far apart for it: standardize them (e.g. scale = TRUE, or scale(x)), or use a larger sigma."
            })
  } else {
    sprintf("%s is numerically constant on these data: all points coincide in feature space, so nearest neighbours are arbitrary. %s",
            what, if (standardized) {
              "The inputs are standardized, so its bandwidth is too large for them: use a smaller sigma (kmaha()'s kernel = \"auto\" and \"cv\" leave such kernels out)."
            } else {
              "The inputs are too close together for it: standardize them (e.g. scale = TRUE, or scale(x)), or use a smaller sigma."
            })
  }
  warning(structure(class = c("kmaha_degenerate_kernel", "warning", "condition"),
                    list(message = msg, call = NULL)))
}

