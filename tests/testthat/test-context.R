# The context of a call (threads and instruction set) is resolved once per
# user call in R (kmaha_context() in R/core.R) and handed to every export and
# every entry point of the core, which take it without a default.  These
# tests watch the core's product kernels: every product a computation runs
# is counted per instruction set (kmaha::gemm_calls()), so an option set by
# the user must show up in every loop, and a loop that fell back to an
# instruction set of its own would show up as a count in the other column.

isa_calls <- function(expr) {
  kmaha:::core_gemm_calls(TRUE, test_ctx())
  force(expr)
  kmaha:::core_gemm_calls(FALSE, test_ctx())
}

test_that("options(kmaha.isa) reaches every product of every computation", {
  set.seed(1)
  y <- factor(rep(1:3, length.out = 240))
  x <- matrix(rnorm(240 * 5), 240) + as.integer(y)
  xn <- matrix(rnorm(60 * 5), 60) + 2
  runs <- list(
    kernel_matrix = quote(kernel_matrix(rbf_kernel(1), x, xn)),
    kpca_exact = quote(predict(kpca(x, rbf_kernel(1)), xn)),
    kpca_truncated = quote(predict(kpca(x, rbf_kernel(1), rank = 5,
                                        method = "truncated"), xn)),
    kpca_nystrom = quote(predict(kpca(x, kernel_sum(list(rbf_kernel(1), poly_kernel(2)),
                                                    c(0.5, 0.5)),
                                      landmarks = 40), xn)),
    kpca_kmeanspp = quote(kpca(x, rbf_kernel(1), landmarks = 30,
                               landmark_method = "kmeans++")),
    knn = quote(knn_classify(x, y, xn, k = 3)),
    knn_loo = quote(knn_classify(x, y, k = 3)),
    target_neighbors = quote(target_neighbors(x, y, k = 2, type = "other")),
    alignment = quote(align_kernels(x, y, paper_kernels()[c(3, 9)])),
    nca = quote(nca(x, y, dim = 2, max_iter = 20)),
    nca_minibatch = quote(nca(x, y, dim = 2, method = "minibatch",
                              batch_size = 60, max_iter = 5)),
    knca = quote(knca(x[1:90, ], y[1:90], dim = 2, max_iter = 10)),
    dne = quote(dne(x, y)),
    kdne = quote(predict(kdne(x[1:90, ], y[1:90]), xn)),
    lmnn = quote(lmnn(x, y, dim = 2, max_iter = 30)),
    kmaha = quote(predict(kmaha(x, y, learner = "nca", kernel = rbf_kernel(1),
                                learner_args = list(max_iter = 10)), xn))
  )
  for (isa in kernel_isas()) {
    other <- setdiff(c("default", "avx2"), isa)
    for (nm in names(runs)) {
      calls <- suppressWarnings(withr_isa(isa, isa_calls(eval(runs[[nm]]))))
      expect_gt(calls[[isa]], 0, label = paste(nm, isa))
      expect_identical(calls[[other]], 0, label = paste(nm, isa, "products in", other))
    }
  }
})

test_that("the context is made once per call and checked", {
  ctx <- kmaha:::kmaha_context(3L)
  expect_s3_class(ctx, "kmaha_context")
  expect_identical(ctx$threads, 3L)
  expect_identical(withr_isa("default", kmaha:::kmaha_context()$isa), "default")
  expect_error(withr_isa("sse", kmaha:::kmaha_context()),
               "Option `kmaha.isa` must be \"auto\", \"avx2\" or \"default\".",
               fixed = TRUE)
  have <- kmaha:::cpp_isa_support()
  if (!all(have)) {
    expect_error(withr_isa("avx2", kmaha:::kmaha_context()), "Option `kmaha.isa` is \"avx2\"",
                 fixed = TRUE)
  }
  # A malformed context never reaches the core.
  expect_error(kmaha:::cpp_apply_map(diag(2), diag(2), list(threads = 0L, isa = "auto")),
               "the context's `threads` must be a whole number >= 1", fixed = TRUE)
  expect_error(kmaha:::cpp_apply_map(diag(2), diag(2), list(threads = 1L)),
               "the context must have elements `threads` and `isa`", fixed = TRUE)
})
