# What the modelling frameworks (parsnip and tune, mlr3, caret) need to know
# of a kmaha fit.

# Whether the fit's learned metric depends on its k: true when something
# was chosen by cross-validation (the kernel, and whatever else kmaha()
# chooses that way), whose held-out kNN votes use k.  A framework may then
# not predict another k from the fit (tune's submodels, mlr3's memory of
# fits, multi_predict()): that would be a model nobody fitted.
metric_uses_k <- function(fit) !is.null(fit$kernel_choice$cv)
