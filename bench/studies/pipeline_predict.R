# predict() of a KPCA-trick model in one call of the compiled code
# (pipeline_apply(), kmaha/pipeline.hpp, the path predict() takes) against
# the separate steps of 0.3.0's R path (input scaling -> kernel rows ->
# KPCA centring and projection -> linear map -> kNN vote, each a call of
# its own, written here with the package's public kernel_matrix() and
# knn_classify() and base R), on 5 000 new points with a model
# fitted on 200 training points (Satellite, the paper's protocol: 200
# training rows, scaled RBF kernel, NCA on the KPCA coordinates, 1-NN;
# synthetic data when the paper's data are missing).  Both paths start from the validated numeric matrix of
# new points; the full predict() (which also validates the data frame) is
# timed for reference.  One thread; median of 21 runs each.
#
#   Rscript bench/studies/pipeline_predict.R
suppressMessages(library(kmaha))
kmaha_threads(1)
d <- tryCatch(kmaha_data("satellite"), error = function(e) NULL)
set.seed(1)
if (is.null(d)) {
  cat("Satellite not found (KMAHA_DATA_DIR): synthetic data, 36 columns, 6 classes\n")
  y_all <- factor(sample(1:6, 6200, replace = TRUE))
  x_all <- matrix(rnorm(6200 * 36), 6200) + as.integer(y_all)
} else {
  x_all <- as.matrix(d[, setdiff(names(d), "class")])
  y_all <- d$class
}
tr <- sample(nrow(x_all), 200)
te <- sample(setdiff(seq_len(nrow(x_all)), tr), 5000, replace = length(y_all) - 200 < 5000)
fit <- kmaha(x_all[tr, ], y_all[tr], learner = "nca", kernel = rbf_kernel(1),
             learner_args = list(max_iter = 100))
xn <- x_all[te, ]
xm <- kmaha:::check_newdata(xn, fit$feature_names, fit$n_features)
stopifnot(identical(fit$feature_map$type, "kpca"))
ctx <- kmaha:::kmaha_context(1L)
fm <- fit$feature_map

r_path <- function() {
  xs <- sweep(sweep(xm, 2, fit$prep$center), 2, fit$prep$scale, "/")
  K <- kernel_matrix(fm$kernel, xs, fm$x)
  Kc <- K - rowMeans(K) - rep(fm$col_means, each = nrow(K)) + fm$grand_mean
  z <- (Kc %*% fm$projection) %*% t(fit$L)
  knn_classify(fit$embedding, fit$y, z, k = fit$k)
}
core_path <- function() kmaha:::pipeline_apply(fit, xm, "prob", fit$k, ctx)
full_predict <- function() predict(fit, xn, type = "prob")

med_time <- function(f, reps = 21) {
  f()
  stats::median(vapply(seq_len(reps), function(i) system.time(f())[["elapsed"]], 0))
}
a <- r_path()
b <- core_path()
same <- identical(unname(a$prob), unname(b))
za <- {
  xs <- sweep(sweep(xm, 2, fit$prep$center), 2, fit$prep$scale, "/")
  K <- kernel_matrix(fm$kernel, xs, fm$x)
  (K - rowMeans(K) - rep(fm$col_means, each = nrow(K)) + fm$grand_mean) %*% fm$projection %*% t(fit$L)
}
zb <- kmaha:::pipeline_apply(fit, xm, "transform", fit$k, ctx)
rel <- max(abs(zb - unname(za))) / max(abs(za))
t_r <- med_time(r_path)
t_core <- med_time(core_path)
t_full <- med_time(full_predict)
cat(sprintf("BLAS: %s\n", extSoftVersion()[["BLAS"]]))
cat(sprintf("KPCA-trick NCA, %d training points, %d KPCA components, %d new points\n",
            length(fit$y), ncol(fit$feature_map$projection), nrow(xm)))
cat(sprintf("separate steps (0.3.0's path): %.4f s   one call: %.4f s   speed-up %.2fx\n",
            t_r, t_core, t_r / t_core))
cat(sprintf("same classes and votes: %s   coordinates: largest difference %.1e of the largest entry\n",
            same, rel))
cat(sprintf("predict(fit, data frame, type = \"prob\") today, with validation: %.4f s\n", t_full))
