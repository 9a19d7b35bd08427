# The instruction sets whose kernels this build and CPU can run: the
# baseline always, AVX2+FMA on x86-64 CPUs that have both.
kernel_isas <- function() {
  avx2 <- tryCatch({
    withr_isa("avx2", cpp_nca_objective(diag(2), 1:2, diag(2), 0, NULL, 1L, 0L, -1))
    TRUE
  }, error = function(e) FALSE)
  c("default", if (avx2) "avx2")
}

# Evaluates expr with options(kmaha.isa = isa), restoring the option after.
withr_isa <- function(isa, expr) {
  old <- options(kmaha.isa = isa)
  on.exit(options(old), add = TRUE)
  expr
}
