# summary() for KPCA fits and kernel alignments.

#' Summaries of KPCA fits and kernel alignments
#'
#' `summary()` methods for [kpca()] fits (kernel, components kept, share of
#' the feature-space variance they carry) and for [align_kernels()] results
#' (the base kernels with non-zero weight and their alignments). Fitted
#' models have theirs: see [kmaha-model].
#'
#' @param object A fitted object.
#' @param ... Unused.
#' @return An object with a `print()` method.
#' @examples
#' idx <- c(1:20, 51:70, 101:120)
#' summary(kpca(iris[idx, 1:4], rbf_kernel(1)))
#' summary(align_kernels(iris[idx, 1:4], iris$Species[idx]))
#' @name kmaha-summaries
NULL

#' @rdname kmaha-summaries
#' @export
summary.kmaha_kpca <- function(object, ...) {
  ev <- object$eigenvalues
  out <- list(kernel = format(object$kernel), n = nrow(object$coords),
              rank = ncol(object$coords), method = object$method,
              eigenvalues = utils::head(ev, 10L),
              variance_kept = if (is.null(object$trace) || object$trace <= 0) NA_real_
                              else sum(ev) / object$trace)
  class(out) <- "summary.kmaha_kpca"
  out
}

#' @export
print.summary.kmaha_kpca <- function(x, ...) {
  cat(wrap_lines(sprintf("Kernel PCA of %d points with the %s", x$n, x$kernel), first = ""))
  cat(wrap_lines(sprintf("Components kept: %d (%s solver)%s", x$rank, x$method,
                         if (!is.na(x$variance_kept)) {
                           sprintf(", carrying %.4f of the feature-space variance", x$variance_kept)
                         } else ""), first = ""))
  cat("Leading eigenvalues of the centred Gram matrix:\n")
  print(signif(x$eigenvalues, 4))
  invisible(x)
}

#' @rdname kmaha-summaries
#' @export
summary.kmaha_alignment <- function(object, ...) {
  keep <- object$weights > 0
  tab <- data.frame(kernel = vapply(object$kernels[keep], short_kernel_label, ""),
                    weight = object$weights[keep],
                    alignment = object$base_alignment[keep])
  out <- list(method = object$method, alignment = object$alignment,
              kernels = tab, n_kernels = length(object$weights),
              ridge = object$ridge %||% 0)
  class(out) <- "summary.kmaha_alignment"
  out
}

#' @export
print.summary.kmaha_alignment <- function(x, ...) {
  cat(wrap_lines(sprintf("Kernel alignment (%s): %d of %d base kernels with non-zero weight",
                         toupper(x$method), nrow(x$kernels), x$n_kernels), first = ""))
  cat(wrap_lines(sprintf("Alignment of the combined kernel with the ideal kernel: %.4f",
                         x$alignment), first = ""))
  print(x$kernels, row.names = FALSE, digits = 4)
  if (!is.null(x$ridge) && x$ridge > 0) {
    cat(wrap_lines(sprintf("Ridge added to the normalised Gram inner products S' to make the QP strictly convex: %.3g",
                           x$ridge), first = ""))
  }
  invisible(x)
}
