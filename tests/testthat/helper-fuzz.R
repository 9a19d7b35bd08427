# Property-based fuzzing of the package's entry points (tests/testthat/
# test-fuzz.R).  Each case draws a small random problem -- shapes from n = 2,
# p >> n, scales from 1e-150 to 1e150, duplicated rows, constant columns,
# classes of one point, extreme kernel parameters -- and one call:
# nca, lmnn, dne, kmaha, knca, kdne, kpca, align_kernels, then predict on
# new rows.  The property: the call either returns outputs without NaN, or
# fails with a clear R error, i.e. one whose message names an argument
# (starts with a backquoted name such as "`x`"); a crash fails the run.
#
# fuzz_run() is self-contained so that callr can run it in a child process.

fuzz_run <- function(seed, n_cases, case_seeds = NULL) {
  suppressPackageStartupMessages(library(kmaha))
  options(warn = 1)
  set.seed(seed)
  pick <- function(v) v[[sample.int(length(v), 1L)]]

  make_data <- function() {
    n <- pick(c(2L, 3L, 5L, 8L, 12L, 20L, 30L))
    p <- pick(c(1L, 2L, 3L, 5L, 10L, 40L, 120L, 1000L))
    x <- matrix(stats::rnorm(n * p), n, p, dimnames = list(NULL, paste0("v", seq_len(p))))
    sc <- 10^pick(c(-150, -20, -3, 0, 0, 0, 3, 20, 150))
    x <- x * sc
    if (n > 2 && stats::runif(1) < 0.3) x[n, ] <- x[1, ]            # duplicated row
    if (p > 1 && stats::runif(1) < 0.3) x[, p] <- 7 * sc             # constant column
    ncls <- pick(c(2L, 2L, 3L, 4L))
    y <- rep_len(letters[seq_len(ncls)], n)
    if (n > 3 && stats::runif(1) < 0.3) y[n] <- "z"                  # class of one point
    y <- factor(y)
    list(x = x, y = y, n = n, p = p, scale = sc)
  }
  kernel_draw <- function() {
    switch(pick(c("rbf", "rbf", "gauss", "poly", "linear", "laplace")),
           rbf = rbf_kernel(10^pick(c(-5, -2, 0, 2, 5))),
           gauss = gaussian_kernel(10^pick(c(-5, 0, 5))),
           poly = poly_kernel(pick(c(1, 2, 3, 7)), scale = 10^pick(c(-3, 0, 3)),
                              offset = pick(c(0, 1))),
           linear = linear_kernel(),
           laplace = laplace_kernel(10^pick(c(-3, 0, 3))))
  }
  calls <- list(
    nca = function(d) nca(d$x, d$y, dim = pick(list(NULL, 1L)),
                          lambda = pick(c(0, 0.1)), scale = pick(c(TRUE, FALSE)),
                          max_iter = 30),
    lmnn = function(d) lmnn(d$x, d$y, k = pick(1:3), dim = pick(list(NULL, 1L)),
                            max_iter = 20),
    dne = function(d) dne(d$x, d$y, k = pick(1:3)),
    knca = function(d) knca(d$x, d$y, kernel = kernel_draw(),
                            lambda = pick(c(0, 0.1)), max_iter = 20),
    kdne = function(d) kdne(d$x, d$y, kernel = kernel_draw(), k = pick(1:2)),
    klmnn = function(d) klmnn(d$x, d$y, kernel = kernel_draw(), k = pick(1:2), max_iter = 20),
    kpca = function(d) kpca(d$x, kernel_draw()),
    align = function(d) align_kernels(d$x, d$y, kernels = list(kernel_draw(), kernel_draw())),
    kmaha = function(d) {
      learner <- pick(c("nca", "dne", "lmnn"))
      kmaha(d$x, d$y, learner = learner,
            kernel = pick(list(kernel_draw(), "align", "unweighted", "linear", "cv")),
            cv_folds = 2,
            kernels = list(kernel_draw(), kernel_draw()),
            learner_args = if (learner == "dne") list() else list(max_iter = 20))
    }
  )
  # Misspelt arguments, each to an exported function with `...`.
  # The error must name the misspelt argument (or, when the data are bad
  # too, an argument the data error is about).
  typos <- list(
    maxiter = function(d) nca(d$x, d$y, maxiter = 5),
    lamda = function(d) lmnn(d$x, d$y, lamda = 0.1),
    dims = function(d) dne(d$x, d$y, dims = 1),
    kernal = function(d) knca(d$x, d$y, kernal = rbf_kernel(1)),
    epsilon = function(d) kdne(d$x, d$y, epsilon = 1),
    mu0 = function(d) klmnn(d$x, d$y, mu0 = 0.5),
    fold = function(d) kmaha(d$x, d$y, kernel = "linear", learner_args = list(max_iter = 5), fold = 2),
    fols = function(d) cv_kernel(d$x, d$y, kernels = list(rbf_kernel(1)), fols = 2),
    metod = function(d) align_kernels(d$x, d$y, kernels = list(rbf_kernel(1)), metod = "lp"),
    tpye = function(d) predict(nca(d$x, d$y, max_iter = 5), d$x, tpye = "prob"),
    typ = function(d) predict(kpca(d$x, rbf_kernel(1)), d$x, typ = "x"))
  has_nan <- function(obj) {
    if (is.numeric(obj)) return(anyNA(obj))
    if (is.list(obj)) return(any(vapply(obj, has_nan, NA)))
    FALSE
  }
  # The outputs that must be NaN-free: maps, embeddings, coordinates,
  # weights, predictions.
  outputs <- function(fit) {
    keep <- c("L", "U", "A", "embedding", "coords", "projection", "eigenvalues",
              "weights", "alignment")
    fit[intersect(names(fit), keep)]
  }
  # A clear error names an argument: a backquoted name such as `x`, `k`,
  # `learner_args$k` or `kernels[[2]]`.
  clear_error <- function(msg) grepl("`[A-Za-z.][A-Za-z0-9._]*(\\$[A-Za-z.][A-Za-z0-9._]*|\\[\\[[0-9]+\\]\\])?`", msg)

  one_case <- function(case_seed) {
    set.seed(case_seed)
    d <- make_data()
    what <- pick(c(names(calls), "typo"))
    if (what == "typo") {
      typo <- pick(names(typos))
      out <- tryCatch(suppressWarnings({
        typos[[typo]](d)
        "ok: a misspelt argument was accepted"
      }), error = function(e) {
        msg <- conditionMessage(e)
        if (grepl(typo, msg, fixed = TRUE) || clear_error(msg)) paste("clear error:", msg)
        else paste("unclear error:", msg)
      })
      if (startsWith(out, "ok")) out <- paste("wrong", out)
      return(data.frame(what = what, n = d$n, p = d$p, scale = d$scale,
                        classes = nlevels(d$y), min_class = min(table(d$y)),
                        seed = case_seed, outcome = out))
    }
    out <- tryCatch(suppressWarnings({
      fit <- calls[[what]](d)
      bad <- has_nan(outputs(fit))
      if (!bad && what != "align") {
        # New rows near the training data, and far from it.
        newx <- d$x[c(1, d$n), , drop = FALSE] * pick(c(1 + 1e-3, 1e10, -1))
        pr <- if (what == "kpca") predict(fit, newx) else
          list(predict(fit, newx), predict(fit, newx, type = "transform"),
               predict(fit, newx, type = "prob", k = 1))
        bad <- has_nan(pr)
        if (!bad && what != "kpca" && !is.null(fit$feature_names) && stats::runif(1) < 0.3) {
          # newdata as a data frame, one numeric column turned into text
          nd <- as.data.frame(newx)
          names(nd) <- fit$feature_names
          nd[[1]] <- format(nd[[1]])
          msg <- tryCatch({ predict(fit, nd); "" }, error = function(e) conditionMessage(e))
          if (!grepl("character", msg, fixed = TRUE) || !clear_error(msg)) {
            stop("character column in newdata: ", if (nzchar(msg)) msg else "accepted")
          }
        }
      }
      if (bad) "NaN in an output" else "ok"
    }), error = function(e) {
      msg <- conditionMessage(e)
      if (clear_error(msg)) paste("clear error:", msg) else paste("unclear error:", msg)
    })
    data.frame(what = what, n = d$n, p = d$p, scale = d$scale,
               classes = nlevels(d$y), min_class = min(table(d$y)),
               seed = case_seed, outcome = out)
  }
  # One seed per case: fuzz_run(seed = s, n_cases = 1, case_seeds = s2)
  # replays case s2 alone.
  seeds <- if (is.null(case_seeds)) sample.int(1e7, n_cases) else case_seeds
  do.call(rbind, lapply(seeds, one_case))
}
