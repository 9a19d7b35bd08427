# kernlab kernels: translated into the built-in kernel that equals them
# (evaluated in the core), or evaluated in R through kernlab::kernelMatrix();
# and the note that kernlab's kpca() masks kmaha's when kernlab is attached
# after kmaha.

is_kernlab_kernel <- function(kernel) {
  is.function(kernel) && inherits(kernel, "kernel")
}

# A kernlab kernel as a kmaha_kernel: its exact built-in equivalent, else a
# kernel of type "kernlab" evaluated by kernlab::kernelMatrix().
kernlab_kernel <- function(k, arg = "kernel") {
  cls <- class(k)[1]
  par <- attr(k, "kpar") %||% list()
  origin <- sprintf("kernlab %s(%s)", sub("kernel$", "dot", cls),
                    paste(names(par), vapply(par, function(v) format(v), ""),
                          sep = " = ", collapse = ", "))
  ok <- function(v, lower = 0) is.numeric(v) && length(v) == 1L && is.finite(v) && v > lower
  out <- switch(cls,
    rbfkernel = if (ok(par$sigma)) gaussian_kernel(1 / sqrt(2 * par$sigma)),
    laplacekernel = if (ok(par$sigma)) laplace_kernel(1 / par$sigma),
    vanillakernel = linear_kernel(),
    polykernel = if (ok(par$degree, 0.5) && par$degree == round(par$degree) &&
                     ok(par$scale) && ok(par$offset, -1) && par$offset >= 0) {
      poly_kernel(par$degree, par$scale, par$offset)
    },
    stringkernel = stopf("`%s` is a kernlab string kernel (%s), which compares character strings; kmaha works on numeric matrices.",
                         arg, origin),
    NULL)
  if (is.null(out)) return(new_kernel("kernlab", kernel = k, origin = origin))
  out$origin <- origin
  out
}

kernlab_gram <- function(kernel, x, y = NULL) {
  if (!requireNamespace("kernlab", quietly = TRUE)) {
    stopf("The kernel (%s) is evaluated by kernlab::kernelMatrix(), but kernlab is not installed; install it with install.packages(\"kernlab\").",
          kernel$origin)
  }
  if (inherits(kernel$kernel, "tanhkernel")) {
    # kernlab's kernelMatrix() of a tanh kernel fails for two matrices (its
    # method looks up `scale` and `offset` only for one): kernlab's formula.
    par <- attr(kernel$kernel, "kpar")
    return(tanh(par$scale * tcrossprod(x, if (is.null(y)) x else y) + par$offset))
  }
  km <- if (is.null(y)) kernlab::kernelMatrix(kernel$kernel, x) else
    kernlab::kernelMatrix(kernel$kernel, x, y)
  matrix(as.double(km), nrow(x), if (is.null(y)) nrow(x) else nrow(y))
}

# kernlab's kpca() and kmaha's kpca().  Attached after kmaha, kernlab masks
# kmaha's kpca(); kernlab_attach_note() says so when it happens (a hook on
# kernlab's attach event, set while kmaha is attached), and names the
# unmasked alias kernel_pca().

kernlab_attach_note <- structure(function(...) {
  if ("package:kmaha" %in% search()) {
    packageStartupMessage("kmaha: kernlab's kpca() now masks kmaha's kpca(). Use kmaha::kpca() or its alias kernel_pca() for kmaha's, and kernlab::kpca() for kernlab's. kmaha accepts kernlab kernels such as rbfdot(sigma = 0.1).")
  }
}, kmaha_hook = TRUE)

kernlab_hook_set <- function() {
  kernlab_hook_clear()
  setHook(packageEvent("kernlab", "attach"), kernlab_attach_note)
}

kernlab_hook_clear <- function() {
  hook <- packageEvent("kernlab", "attach")
  kept <- Filter(function(h) !isTRUE(attr(h, "kmaha_hook")), getHook(hook))
  setHook(hook, if (length(kept)) kept else NULL, "replace")
}
