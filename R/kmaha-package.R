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
#' @name kmaha-package
#' @aliases kmaha-package
#' @docType package
#' @keywords internal
#' @useDynLib kmaha, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom stats predict
NULL
