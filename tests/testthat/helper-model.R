# The KPCA coordinates of the training points of a kmaha() fit with exact
# KPCA, recomputed by kpca() from what the model stores (the model keeps
# what prediction needs, not these coordinates).
fit_coords <- function(fit) {
  fm <- fit$feature_map
  kpca(fm$x, fm$kernel, rank = fit$settings$rank, tol = fit$settings$tol %||% 1e-8)$coords
}
`%||%` <- function(a, b) if (is.null(a)) b else a

# What print() shows, its wrapped lines joined (print() wraps long lines at
# the console width; a continuation line is indented further).
printed_flat <- function(x) {
  gsub("[[:space:]]+", " ", paste(capture.output(print(x)), collapse = " "))
}

# The same for print(summary(x)), whose lines wrap at the console width too.
summary_flat <- function(x) printed_flat(summary(x))

# The paper's synthetic example: two thin concentric rings whose radial gap
# (0.05) is smaller than the typical spacing of points along a ring
# (2 pi / 100 ~ 0.063), so Euclidean kNN confuses them and no linear metric
# helps, while x -> (x.y)^2 makes the radius a linear feature.
make_rings <- function(n_per, seed) {
  set.seed(seed)
  t1 <- runif(n_per, 0, 2 * pi)
  t2 <- runif(n_per, 0, 2 * pi)
  x <- rbind(cbind(cos(t1), sin(t1)), 1.05 * cbind(cos(t2), sin(t2)))
  list(x = x, y = factor(rep(c("inner", "outer"), each = n_per)))
}
