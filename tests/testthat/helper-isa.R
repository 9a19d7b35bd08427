# The instruction sets whose kernels this build and CPU can run: the
# baseline always, AVX2+FMA on x86-64 CPUs that have both.
kernel_isas <- function() {
  have <- kmaha:::cpp_isa_support()
  c("default", if (have[["compiled"]] && have[["cpu"]]) "avx2")
}

# Evaluates expr with options(kmaha.isa = isa), restoring the option after.
withr_isa <- function(isa, expr) {
  old <- options(kmaha.isa = isa)
  on.exit(options(old), add = TRUE)
  expr
}

# The context of a call as R resolves it (threads: NULL for the package
# setting), for the tests that call the compiled functions directly.
test_ctx <- function(threads = 1L) kmaha:::kmaha_context(threads)
