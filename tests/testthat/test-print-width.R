# Printing wraps at getOption("width"): no line of print() or summary()
# of any result is wider than the console (summary() lines once reached
# 150 characters).

test_that("print() and summary() of every result fit getOption(\"width\")", {
  x <- scale(iris[, 1:4])
  ks <- lapply(c(0.5, 1, 2), rbf_kernel)
  objs <- list(
    nca = nca(Species ~ ., iris), lmnn = lmnn(Species ~ ., iris, k = 3),
    dne = dne(Species ~ ., iris, k = 3),
    auto = kmaha(Species ~ ., iris, learner = "dne", kernels = ks, cv_folds = 3, seed = 1),
    align = kmaha(Species ~ ., iris, learner = "dne", kernel = "align", kernels = ks),
    linear = kmaha(Species ~ ., iris, kernel = "linear"),
    knca = knca(x, iris$Species, rbf_kernel(1), max_iter = 20),
    kpca = kpca(x, rbf_kernel(1)),
    nystrom = kpca(x, rbf_kernel(1), landmarks = 20),
    alignment = align_kernels(x, iris$Species, ks),
    cv = cv_kernel(x, iris$Species, "dne", kernels = ks, folds = 3, seed = 1),
    scores = score_candidates(x, iris$Species, learner = "dne", kernels = ks, folds = 3, seed = 1),
    reproduction = reproduce_paper(datasets = "iris", learners = "dne",
                                   kernels = c("linear", "unweighted"), splits = 2,
                                   base_kernels = ks))
  for (w in c(50L, 80L, 120L)) {
    old <- options(width = w)
    for (nm in names(objs)) {
      for (what in c("print", "summary")) {
        out <- utils::capture.output(if (what == "print") print(objs[[nm]]) else print(summary(objs[[nm]])))
        widest <- out[which.max(nchar(out))]
        expect_lte(max(nchar(out)), w, label = sprintf("%s(%s) at width %d: \"%s\"", what, nm, w, widest))
      }
    }
    options(old)
  }
})
