# What the modelling frameworks (parsnip and tune, mlr3, caret) need to know
# of a kmaha fit.

# Whether the fit's learned metric depends on its k: true when something
# was chosen by cross-validation (the kernel, and whatever else kmaha()
# chooses that way), whose held-out kNN votes use k.  A framework may then
# not predict another k from the fit (tune's submodels, mlr3's memory of
# fits, multi_predict()): that would be a model nobody fitted.
metric_uses_k <- function(fit) !is.null(fit$kernel_choice$cv)

# What such a fit chose by its cross-validated votes, for the frameworks'
# errors: some of "kernel" (several kernel candidates were scored),
# "learner" (several learners were: learner = "auto", also with a kernel
# given) and "k" (k was left to the votes).
cv_choices <- function(fit) {
  ch <- fit$kernel_choice
  if (is.null(ch$cv)) return(character())
  out <- c(if (length(ch$cv$candidates) > 1L) "kernel",
           if (length(ch$cv$learners) > 1L) "learner",
           if (isTRUE(ch$k_chosen)) "k")
  # (one candidate and one learner scored: the kernel choice of "cv" or
  # "auto" with a single kernel)
  if (!length(out)) "kernel" else out
}

# Words in a list: "a", "a and b", "a, b and c".
and_list <- function(x) {
  if (length(x) < 2L) return(x)
  paste(paste(x[-length(x)], collapse = ", "), "and", x[length(x)])
}

# Calls the fitting function `fun` (named `name` in the recorded call) with
# the named arguments `args` (the data among them) bound to variables of
# their own names, so that the model records the call a user would have
# written, e.g. kmaha(x = x, y = y, seed = seed), rather than one carrying
# the data (do.call() inlines every value: the training data were stored
# twice, once in the model's call).
call_by_name <- function(fun, name, args) {
  if (is.null(names(args)) || any(!nzchar(names(args)))) {
    stop("internal error: call_by_name() needs named arguments", call. = FALSE)
  }
  env <- list2env(args, parent = environment(fun) %||% baseenv())
  assign(name, fun, envir = env)
  cl <- as.call(c(list(as.name(name)),
                  stats::setNames(lapply(names(args), as.name), names(args))))
  eval(cl, env)
}
