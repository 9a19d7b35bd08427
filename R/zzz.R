# Attach and detach hooks.

# kmaha and kernlab both export kpca().  Whichever is attached last masks
# the other's; say which one `kpca()` now calls and how to reach the other
# (see kernlab_attach_note() in R/kernel-sources.R for kernlab attached
# after kmaha).
.onAttach <- function(libname, pkgname) {
  kernlab_hook_set()
  if ("package:kernlab" %in% search()) {
    packageStartupMessage("kmaha: kmaha's kpca() masks kernlab's kpca(). Use kernlab::kpca() for kernlab's; kmaha's is also available as kernel_pca().")
  }
}

.onDetach <- function(libpath) {
  kernlab_hook_clear()
}
