# The core's matrix product (kmaha/gemm.hpp) against R's own %*%, for every
# instruction set this build and CPU can run, on shapes that exercise full
# register tiles, edge tiles, several depth panels (k > 256) and several
# column panels (more than 2048 columns of the transposed product).

test_that("the product kernels agree with R's matrix product", {
  set.seed(31)
  shapes <- list(c(1, 1, 1), c(5, 3, 2), c(13, 7, 9), c(64, 36, 36),
                 c(97, 301, 11), c(2100, 300, 7), c(40, 600, 130))
  for (isa in kernel_isas()) {
    for (sh in shapes) {
      x <- matrix(rnorm(sh[1] * sh[2]), sh[1], sh[2])
      L <- matrix(rnorm(sh[3] * sh[2]), sh[3], sh[2])
      ref <- x %*% t(L)
      got <- withr_isa(isa, cpp_apply_map(x, L, test_ctx()))
      expect_equal(got, ref, tolerance = 1e-13, label = paste(isa, toString(sh)))
    }
    # Empty inner dimension: a zero matrix of the right shape.
    expect_identical(withr_isa(isa, cpp_apply_map(matrix(0, 3, 0), matrix(0, 2, 0), test_ctx())),
                     matrix(0, 3, 2))
  }
})
