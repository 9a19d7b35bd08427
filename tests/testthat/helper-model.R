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
