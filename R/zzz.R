# Load, attach and detach hooks.

# Attach and detach: the kernlab note.

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

# Registration with the suggested modelling frameworks.  parsnip's engine
# and mlr3's learner live in those packages' own registries, so they are
# added when both kmaha and the framework are loaded: now, if the framework
# already is, else from a hook that runs when it loads.  (The recipes step's
# S3 methods need nothing of this: NAMESPACE registers them lazily.)

framework_registrations <- list(parsnip = "register_parsnip_engine",
                                mlr3 = "register_mlr3_learner")

.onLoad <- function(libname, pkgname) {
  for (pkg in names(framework_registrations)) {
    register <- framework_registrations[[pkg]]
    if (isNamespaceLoaded(pkg)) run_registration(pkg, register)
    hook <- local({
      p <- pkg
      r <- register
      h <- function(...) run_registration(p, r)
      attr(h, "kmaha_registration") <- TRUE
      h
    })
    setHook(packageEvent(pkg, "onLoad"), hook)
  }
}

.onUnload <- function(libpath) {
  for (pkg in names(framework_registrations)) {
    event <- packageEvent(pkg, "onLoad")
    hooks <- getHook(event)
    keep <- Filter(function(h) is.null(attr(h, "kmaha_registration")), hooks)
    setHook(event, NULL, "replace")
    for (h in keep) setHook(event, h)
  }
  if (isNamespaceLoaded("mlr3")) try(unregister_mlr3_learner(), silent = TRUE)
}

# A failed registration must not stop kmaha (or the framework) from loading:
# it becomes a warning that says what is unavailable.
run_registration <- function(pkg, register) {
  tryCatch(
    get(register, envir = asNamespace("kmaha"))(),
    error = function(e) {
      warning(sprintf("kmaha could not register itself with %s (%s %s): %s",
                      pkg, pkg, format(utils::packageVersion(pkg)),
                      conditionMessage(e)), call. = FALSE)
      invisible(FALSE)
    })
}
