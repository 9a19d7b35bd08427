# A learner is one record (R/learner-<name>.R) in one table
# (learner_records() in R/learners.R): every record complete, the lists of
# learners and the adapters' lists derived from the registry, and a learner
# added as one record fitted linearly, through the KPCA trick and through
# kernel choice, without touching the generic code.

records <- function() kmaha:::learner_table()

test_that("every learner's record is complete and its defaults pass its own checker", {
  tab <- records()
  expect_identical(names(tab), vapply(kmaha:::learner_records(), `[[`, "", "name"))
  expect_identical(names(tab), c("nca", "lmnn", "dne", "knca", "klmnn", "kdne",
                                 "lfda", "rca", "mmc", "itml", "mlkr"))
  fields <- c("name", "label", "fun", "task", "options", "fit", "kernel_trick", "linear",
              "auto", "start", "targets", "kpca", "choice_dim", "fold_tol", "settings",
              "convergence", "objective", "caret", "pairs", "row_options",
              "model_options", "description")
  for (nm in names(tab)) {
    r <- tab[[nm]]
    expect_identical(names(r), fields, info = nm)
    expect_identical(r$name, nm)
    expect_true(r$task %in% c("classification", "regression"), info = nm)
    if (!r$kernel_trick) {
      expect_true(nm %in% kmaha:::builtin_learners(r$task), info = nm)
    }
    # a model option is an argument of the public function, not a learner option
    expect_true(all(r$model_options %in% names(formals(kmaha:::learner_fun(nm)))), info = nm)
    expect_false(any(r$model_options %in% kmaha:::learner_option_names(nm)), info = nm)
    # the public function exists, and its arguments are the options
    f <- kmaha:::learner_fun(nm)
    expect_true(is.function(f), info = nm)
    expect_true(all(c("x", "y") %in% names(formals(f))), info = nm)
    # every built-in learner has a public function that records its settings
    expect_true(is.function(r$settings), info = nm)
    # a kernel-trick learner kernelizes a linear one kmaha() takes by name
    if (r$kernel_trick) {
      expect_true(r$linear %in% kmaha:::builtin_learners(), info = nm)
      expect_identical(r$label, paste0("K", tab[[r$linear]]$label), info = nm)
    }
    # the options at their defaults are valid, and the spec says whether the
    # learner wants target neighbours
    spec <- kmaha:::builtin_spec(nm, list())
    expect_true(is.list(spec$opts), info = nm)
    expect_identical(spec$wants_targets, !is.null(r$targets), info = nm)
    if (!is.null(r$targets)) expect_true(is.numeric(spec$target_k), info = nm)
    # the words print() and summary() use
    expect_true(r$convergence$unit %in% c("iterations", "objective evaluations"), info = nm)
    if (!is.null(r$objective)) {
      expect_identical(names(r$objective), c("short", "long"), info = nm)
    }
    # a learner that names rows of x in its options says so
    expect_true(all(r$row_options %in% kmaha:::learner_option_names(nm)), info = nm)
    if (r$pairs) expect_true(all(c("pairs", "similar") %in% r$row_options), info = nm)
  }
})

test_that("a record missing a field, or with a malformed one, is refused", {
  expect_error(kmaha:::register_learner(list(name = "toy")),
               "A learner record needs 'label', 'fun', 'task', 'options', 'fit'.",
               fixed = TRUE)
  good <- list(name = "toy", label = "Toy", fun = function(x, y) NULL,
               task = "classification", options = function(args, argname) list(),
               fit = function(...) NULL)
  expect_error(kmaha:::register_learner(c(good, list(colour = "red"))),
               "A learner record has no field(s) 'colour'.", fixed = TRUE)
  expect_error(kmaha:::register_learner(utils::modifyList(good, list(kernel_trick = TRUE))),
               "The learner record \"toy\" is malformed.", fixed = TRUE)
  expect_error(kmaha:::register_learner(utils::modifyList(good, list(name = "auto"))),
               "A learner may not be named \"auto\".", fixed = TRUE)
  expect_false("toy" %in% names(records()))
})

test_that("the lists of learners and the adapters' lists are the registry's", {
  tab <- records()
  linear <- names(tab)[!vapply(tab, `[[`, NA, "kernel_trick")]
  task <- vapply(tab, `[[`, "", "task")
  expect_identical(kmaha:::builtin_learners(), intersect(linear, names(tab)[task == "classification"]))
  expect_identical(kmaha:::builtin_learners("regression"),
                   intersect(linear, names(tab)[task == "regression"]))
  expect_identical(kmaha:::builtin_learners(), c("nca", "lmnn", "dne", "lfda", "rca",
                                                 "mmc", "itml"))
  expect_identical(kmaha:::auto_learners(), c("nca", "lmnn", "dne"))
  expect_identical(kmaha:::builtin_learners("regression"), "mlkr")
  # caret: the documented methods (kmaha_caret()'s default) and parameters
  expect_identical(eval(formals(kmaha_caret)$method), c(kmaha:::caret_methods(), "auto"))
  params <- list(nca = c("dim", "k"), lmnn = c("targets", "k"), dne = c("targets", "k"),
                 knca = c("sigma", "k"), klmnn = c("sigma", "targets", "k"),
                 kdne = c("sigma", "targets", "k"))
  for (m in names(params)) {
    expect_identical(kmaha_caret(m)$parameters$parameter, params[[m]], info = m)
  }
  expect_identical(kmaha_caret("mlkr")$parameters$parameter, "k")
  expect_identical(kmaha_caret("kmlkr")$parameters$parameter, c("sigma", "k"))
  expect_identical(kmaha_caret("kmlkr")$type, "Regression")
  expect_error(kmaha_caret("lfda"),
               "`method` must be one of \"nca\", \"lmnn\", \"dne\", \"knca\", \"klmnn\", \"kdne\", \"mlkr\", \"kmlkr\", \"auto\".",
               fixed = TRUE)
  # parsnip/recipes: metric_learner()'s default is the learners of "auto";
  # mlr3: the learner parameter takes "auto" and the built-in names
  expect_identical(eval(formals(metric_learner)$values), kmaha:::auto_learners())
  for (nm in c("auto", kmaha:::builtin_learners(), kmaha:::builtin_learners("regression"))) {
    expect_true(kmaha:::mlr3_check_learner(nm), info = nm)
  }
  expect_identical(kmaha:::mlr3_check_learner("knca"),
                   "must be \"auto\", \"nca\", \"lmnn\", \"dne\", \"lfda\", \"rca\", \"mmc\", \"itml\", \"mlkr\" or a learner function")
  # the paper's learners are among the registry's
  expect_true(all(kmaha:::repro_learners %in% kmaha:::auto_learners()))
  expect_error(kmaha(iris[, 1:4], iris$Species, learner = "knca"),
               "`learner` must be \"auto\", \"nca\", \"lmnn\", \"dne\", \"lfda\", \"rca\", \"mmc\", \"itml\" or a function f(x, y, ...) returning a linear map, not \"knca\".",
               fixed = TRUE)
})

# A toy learner written in R: the map that whitens the coordinates, the
# symmetric inverse square root of their covariance (plus a ridge).  One
# record, registered as the built-in ones are.
whiten <- function(x, y, ridge = 0, scale = TRUE, ...) NULL
whiten_record <- list(
  name = "whiten", label = "Whiten", fun = whiten, task = "classification",
  options = function(args, argname) {
    ridge <- if ("ridge" %in% names(args)) args$ridge else formals(whiten)$ridge
    if (!is.numeric(ridge) || length(ridge) != 1L || !(ridge >= 0)) {
      stop(sprintf("`%s` must be a non-negative number.", argname("ridge")), call. = FALSE)
    }
    list(ridge = ridge)
  },
  fit = function(spec, z, y, targets, ctx, reg, coords, principal, score) {
    e <- eigen(stats::cov(z) + spec$opts$ridge * diag(ncol(z)), symmetric = TRUE)
    list(map = e$vectors %*% (t(e$vectors) / sqrt(e$values)),
         convergence = list(iterations = 1L, converged = TRUE, message = "closed form",
                            objective = sum(log(e$values))),
         details = list(ridge = spec$opts$ridge))
  },
  convergence = list(exact = TRUE),
  objective = c(short = "log-determinant of the covariance whitened",
                long = "the log-determinant of the covariance of the coordinates (plus the ridge), which the map whitens"))

test_that("a learner added as one record fits linearly, by the KPCA trick and through kernel choice", {
  kmaha:::register_learner(whiten_record)
  withr::defer(kmaha:::unregister_learner("whiten"))
  expect_true("whiten" %in% kmaha:::builtin_learners())
  expect_true(kmaha:::mlr3_check_learner("whiten"))
  x <- as.matrix(iris[, 1:4])
  y <- iris$Species

  # linear: W symmetric with W S W = I for the covariance S of the
  # standardized inputs, so the embedding's covariance is the identity
  fit <- kmaha(x, y, learner = "whiten", kernel = "linear")
  expect_identical(fit$learner, "whiten")
  W <- unname(fit$L)
  S <- stats::cov(scale(x))
  expect_equal(W, t(W), tolerance = 1e-12)
  expect_equal(W %*% S %*% W, diag(4), tolerance = 1e-10)
  expect_equal(unname(stats::cov(fit$embedding)), diag(4), tolerance = 1e-10)
  expect_identical(fit$ridge, 0)
  # new rows go through the same pipeline
  expect_equal(unname(predict(fit, x[1:5, ], type = "transform")),
               unname(scale(x)[1:5, ] %*% W), tolerance = 1e-10)
  out <- capture.output(print(fit))
  expect_match(out[1], "<kmaha Whiten>", fixed = TRUE)
  expect_true(any(grepl("solved exactly by an eigen-decomposition", out, fixed = TRUE)))
  # print() and summary() take their words from the record
  expect_true(any(grepl("(log-determinant of the covariance whitened)", out, fixed = TRUE)))
  expect_match(summary(fit)$objective_meaning, "which the map whitens", fixed = TRUE)
  expect_equal(summary(fit)$objective, sum(log(eigen(S, only.values = TRUE)$values)),
               tolerance = 1e-10)
  # its options are checked by its record, with kmaha()'s names
  expect_error(kmaha(x, y, learner = "whiten", kernel = "linear", learner_args = list(foo = 1)),
               "whiten() takes no option(s) 'learner_args$foo'; it takes ridge.", fixed = TRUE)
  expect_error(kmaha(x, y, learner = "whiten", kernel = "linear", learner_args = list(ridge = -1)),
               "`learner_args$ridge` must be a non-negative number.", fixed = TRUE)

  # the KPCA trick with a given kernel: the learner sees KPCA coordinates
  kfit <- kmaha(x, y, learner = "whiten", kernel = rbf_kernel(2), tol = 1e-4)
  r <- ncol(kfit$L)
  expect_identical(kfit$feature_map$type, "kpca")
  expect_equal(unname(stats::cov(kfit$embedding)), diag(r), tolerance = 1e-8)
  expect_match(capture.output(print(kfit))[1], "<kmaha KWhiten>", fixed = TRUE)

  # kernel choice: each base kernel scored with the learner on the folds,
  # the best one fitted with it
  kernels <- list(rbf_kernel(0.5), rbf_kernel(2))
  cfit <- kmaha(x, y, learner = "whiten", kernel = "cv", kernels = kernels, cv_folds = 3,
                seed = 1, tol = 1e-4)
  expect_identical(cfit$learner, "whiten")
  expect_true(cfit$feature_map$kernel$sigma %in% c(0.5, 2))
  expect_equal(unname(stats::cov(cfit$embedding)), diag(ncol(cfit$L)), tolerance = 1e-8)
  sc <- score_candidates(x, y, learner = "whiten", kernels = kernels, folds = 3, seed = 1,
                         tol = 1e-4)
  # (the screen ranks the base kernels; the learner is fitted on the
  # shortlist and the other candidates)
  fitted <- sc$curve$n_ok > 0
  expect_identical(sc$curve$learner[sc$curve$kind != "euclidean"],
                   rep("whiten", sum(sc$curve$kind != "euclidean")))
  expect_true(all(sc$curve$kind[!fitted] == "kernel"))
  expect_true(all(c("linear", "unweighted") %in% sc$curve$kind[fitted]))
  expect_true(all(sc$curve$mean[fitted] > 0.8))
  afit <- kmaha(x, y, learner = "whiten", kernel = sc)
  expect_true(afit$learner %in% c("whiten", "euclidean"))
})

test_that("an unregistered learner is gone from every list", {
  kmaha:::register_learner(whiten_record)
  kmaha:::unregister_learner("whiten")
  expect_false("whiten" %in% kmaha:::builtin_learners())
  expect_type(kmaha:::mlr3_check_learner("whiten"), "character")
  expect_error(kmaha(iris[, 1:4], iris$Species, learner = "whiten", kernel = "linear"),
               "not \"whiten\".", fixed = TRUE)
})

test_that("no code outside a learner's own functions compares with or switches on its name", {
  ns <- asNamespace("kmaha")
  learners <- names(records())
  # the learner names a call compares with (==, !=, %in%, identical) or
  # switches on (the labels of switch())
  compared <- function(e) {
    out <- character()
    walk <- function(e) {
      if (!is.call(e)) return(invisible())
      f <- if (is.symbol(e[[1]])) as.character(e[[1]]) else ""
      if (f %in% c("==", "!=", "%in%", "identical")) {
        for (a in as.list(e)[-1]) {
          if (is.call(a) && identical(a[[1]], as.symbol("c"))) a <- unlist(Filter(is.character, as.list(a)[-1]))
          if (is.character(a)) out <<- c(out, intersect(a, learners))
        }
      }
      if (f == "switch") out <<- c(out, intersect(names(e), learners))
      for (a in as.list(e)[-1]) if (!missing(a)) walk(a)
    }
    walk(e)
    unique(out)
  }
  offenders <- character()
  for (nm in ls(ns, all.names = TRUE)) {
    f <- get(nm, ns)
    if (!is.function(f) || is.primitive(f)) next
    hit <- compared(body(f))
    # a learner's own functions (dne_opts(): DNE's and KDNE's options) may
    own <- vapply(hit, function(h) startsWith(nm, paste0(h, "_")), NA)
    if (length(hit) && !all(own)) offenders <- c(offenders, sprintf("%s: %s", nm, paste(hit, collapse = ", ")))
  }
  expect_identical(offenders, character())
})
