# Fitted models are plain lists: saved and read back in a fresh R session
# they predict exactly as before.

fits_to_save <- function() {
  set.seed(11)
  idx <- c(sample(1:50, 20), sample(51:100, 20), sample(101:150, 20))
  tr <- iris[idx, ]
  list(
    nca = nca(Species ~ ., data = tr, max_iter = 50),
    lmnn = lmnn(Species ~ ., data = tr, k = 2),
    dne = dne(as.matrix(tr[, 1:4]), tr$Species, k = 2),
    kmaha_align = kmaha(Species ~ ., data = tr, learner = "dne",
                        kernel = "align"),
    kmaha_rbf = kmaha(as.matrix(tr[, 1:4]), tr$Species, learner = "nca",
                      kernel = rbf_kernel(1), learner_args = list(max_iter = 30)),
    kpca = kpca(as.matrix(tr[, 1:4]), rbf_kernel(1)),
    knca = knca(as.matrix(tr[, 1:4]), tr$Species, kernel = rbf_kernel(1),
                max_iter = 30),
    kdne = kdne(as.matrix(tr[, 1:4]), tr$Species, kernel = rbf_kernel(1),
                eps = 1e-6)
  )
}

test_that("fitted objects hold no external pointers", {
  fits <- fits_to_save()
  has_ptr <- function(obj) {
    if (typeof(obj) == "externalptr") return(TRUE)
    if (is.environment(obj)) return(FALSE)
    if (is.list(obj)) return(any(vapply(obj, has_ptr, logical(1))))
    FALSE
  }
  for (nm in names(fits)) expect_false(has_ptr(unclass(fits[[nm]])), label = nm)
})

test_that("saveRDS/readRDS in a fresh R session gives identical predictions", {
  skip_if_not_installed("callr")
  skip_on_cran()
  fits <- fits_to_save()
  newx <- iris[c(3, 60, 77, 120, 149), ]
  path <- tempfile(fileext = ".rds")
  on.exit(unlink(path))
  saveRDS(list(fits = fits, newx = newx), path)
  here <- lapply(fits, function(f) {
    if (inherits(f, "kmaha_kpca")) return(predict(f, as.matrix(newx[, 1:4])))
    nd <- if (is.null(f$terms)) as.matrix(newx[, 1:4]) else newx
    list(cls = predict(f, nd, type = "class"),
         tr = predict(f, nd, type = "transform"))
  })
  there <- callr::r(function(path) {
    library(kmaha)
    obj <- readRDS(path)
    lapply(obj$fits, function(f) {
      if (inherits(f, "kmaha_kpca")) return(predict(f, as.matrix(obj$newx[, 1:4])))
      nd <- if (is.null(f$terms)) as.matrix(obj$newx[, 1:4]) else obj$newx
      list(cls = predict(f, nd, type = "class"),
           tr = predict(f, nd, type = "transform"))
    })
  }, args = list(path = path))
  for (nm in names(here)) expect_identical(there[[nm]], here[[nm]], label = nm)
})
