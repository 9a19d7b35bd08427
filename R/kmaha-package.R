#' kmaha: kernelized Mahalanobis distance learning
#'
#' Linear Mahalanobis distance learners (NCA, LMNN, DNE), their kernel
#' versions through the KPCA trick and through the kernel trick, kernel
#' choice by cross-validation, kernel alignment or an unweighted sum of base
#' kernels, and nearest-neighbour classification in the learned metric.
#'
#' The package implements Chatpatanasiri, Korsrilabutr, Tangchanachaianan
#' and Kijsirikul, "On Kernelizing Mahalanobis Distance Learning Algorithms"
#' (Neurocomputing, 2010).
#'
#' @section Instruction sets:
#' The core's matrix products and the NCA softmax run in small kernels of
#' the package's own, compiled for the x86-64 baseline and, on x86-64 with
#' GCC or clang (not on Windows), also for AVX2 with FMA, which is about
#' twice as fast. The AVX2 kernels are used when the CPU has AVX2 and FMA;
#' this is the one switch: `options(kmaha.isa = "default")` forces the
#' baseline kernels, `"avx2"` insists on the AVX2 ones (an error where they
#' are unavailable) and `"auto"` (the default) chooses. When the option is
#' unset, the environment variable `KMAHA_ISA` (inherited by worker
#' processes) is read instead. Both compute the
#' same values up to rounding; [nca()] and [knca()] fits record the kernels
#' used in `convergence$isa`. To build without the AVX2 kernels, compile
#' with `-DKMAHA_NO_AVX2` (e.g. in `PKG_CPPFLAGS`). The option
#' `kmaha.nca_isa` of version 0.2.0 is still read when `kmaha.isa` is unset.
#'
#' @name kmaha-package
#' @aliases kmaha-package
#' @docType package
#' @keywords internal
#' @useDynLib kmaha, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom stats predict nobs coef fitted formula terms model.frame
NULL
