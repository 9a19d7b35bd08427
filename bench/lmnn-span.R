# LMNN at p >> n, in the span of the centred training points, and how soon
# a time limit or an interrupt stops the kernel-trick learners.
#
#   Rscript bench/lmnn-span.R [part ...]     parts: span khan klmnn latency
#                                             (default: all four)
#
#   span     lmnn() on 60 x 2300 against 60 x 59 (target: at most 10x),
#            Khan-like data (below), default settings, one thread; the two
#            shapes timed alternately in one process, median of the reps;
#   khan     lmnn() on ISLR-Khan-like shapes (63 and 83 rows x 2308
#            genes, 4 classes of Khan's proportions), default and
#            lambda = 1, and on ISLR's Khan itself when the ISLR package is
#            installed (training rows; training + test rows);
#   klmnn    klmnn() on 1200 rows (10 columns, 3 classes, rbf_kernel(1)):
#            fit time and objective;
#   latency  setTimeLimit(elapsed = t) and SIGINT after t seconds around
#            klmnn(), knca() and kdne() on those 1200 rows, for several t:
#            the seconds from the limit (or the signal) until the call
#            returned, and the largest of them per learner.
#
# Every measurement runs in a fresh R process (callr) with one thread.
# Environment:
#   KMAHA_LIB          library holding the kmaha to measure (default: the
#                      first with kmaha on .libPaths())
#   KMAHA_LIB_BEFORE   library holding a kmaha to compare with (e.g. 0.4.0);
#                      its numbers are printed and written as "before"
#   KMAHA_BENCH_REPS   repetitions of each timing (median; default 11)
#   KMAHA_BENCH_OUT    CSV of the results (default
#                      bench/results/lmnn-span.csv)
parts <- commandArgs(TRUE)
if (!length(parts)) parts <- c("span", "khan", "klmnn", "latency")
bench_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
reps <- as.integer(Sys.getenv("KMAHA_BENCH_REPS", "11"))
out_file <- Sys.getenv("KMAHA_BENCH_OUT", file.path(bench_dir, "results", "lmnn-span.csv"))
dir.create(dirname(out_file), showWarnings = FALSE, recursive = TRUE)
lib_after <- Sys.getenv("KMAHA_LIB", dirname(find.package("kmaha")))
lib_before <- Sys.getenv("KMAHA_LIB_BEFORE")
libs <- c(after = lib_after, if (nzchar(lib_before)) c(before = lib_before))

loadavg <- function() tryCatch(strsplit(readLines("/proc/loadavg"), " ")[[1]][1],
                               error = function(e) NA_character_)
cat("BLAS:", extSoftVersion()["BLAS"], "\n")
for (v in names(libs)) {
  cat(v, ": kmaha", format(packageVersion("kmaha", lib.loc = libs[[v]])), "from", libs[[v]], "\n")
}

# fun(...) in a fresh R process with kmaha from `lib`, one thread.
in_child <- function(lib, fun, args = list(), timeout = 3600) {
  callr::r(fun, args = args, libpath = c(lib, .libPaths()), timeout = timeout,
           env = c(callr::rcmd_safe_env(), KMAHA_NUM_THREADS = "1",
                   OMP_NUM_THREADS = "1", OPENBLAS_NUM_THREADS = "1"))
}

# Khan-like expression data, defined in the child processes: n rows in 4
# classes of the proportions of ISLR's Khan training set (8, 23, 12, 20 of
# 63), p genes driven by 10 latent factors plus noise, 5% of the genes
# shifted by class.
khan_like <- function(n, p, seed = 1) {
  set.seed(seed)
  sizes <- round(n * c(8, 23, 12, 20) / 63)
  sizes[2] <- n - sum(sizes[-2])
  y <- factor(rep(c("EWS", "BL", "NB", "RMS"), sizes))
  f <- matrix(rnorm(n * 10), n) %*% matrix(rnorm(10 * p, sd = 0.6), 10)
  shift <- matrix(0, 4, p)
  genes <- sample(p, ceiling(0.05 * p))
  shift[, genes] <- rnorm(4 * length(genes))
  list(x = f + shift[as.integer(y), ] + matrix(rnorm(n * p), n), y = y)
}

rows <- list()
record <- function(...) rows[[length(rows) + 1L]] <<- data.frame(..., load = loadavg())

# --------------------------------------------------------------------------
if ("span" %in% parts) {
  cat("\n== lmnn() on 60 x 2300 against 60 x 59 (Khan-like data, defaults)\n")
  for (v in names(libs)) {
    r <- in_child(libs[[v]], function(reps, khan_like) {
      library(kmaha)
      options(kmaha.num_threads = 1L)
      big <- khan_like(60, 2300)
      small <- list(x = big$x[, 1:59], y = big$y)
      fit <- function(d) lmnn(d$x, d$y)
      fit(big); fit(small)  # warm-up
      tt <- matrix(NA_real_, reps, 4)
      for (i in seq_len(reps)) {
        a <- system.time(fa <- fit(big)); b <- system.time(fb <- fit(small))
        tt[i, ] <- c(a[["elapsed"]], b[["elapsed"]], a[["user.self"]] + a[["sys.self"]],
                     b[["user.self"]] + b[["sys.self"]])
      }
      m <- apply(tt, 2, stats::median)
      list(t_big = m[1], t_small = m[2], cpu_big = m[3], cpu_small = m[4],
           obj_big = fa$convergence$objective, obj_small = fb$convergence$objective,
           rows_big = nrow(fa$L), cols_big = ncol(fa$L))
    }, list(reps = reps, khan_like = khan_like))
    cat(sprintf("%-6s 60 x 2300: %.3f s (CPU %.3f)  60 x 59: %.3f s (CPU %.3f)  ratio %.1f (CPU %.1f)  map %d x %d\n",
                v, r$t_big, r$cpu_big, r$t_small, r$cpu_small, r$t_big / r$t_small,
                r$cpu_big / r$cpu_small, r$rows_big, r$cols_big))
    record(part = "span", version = v, case = "60x2300 vs 60x59", seconds = r$t_big,
           cpu = r$cpu_big, ref_seconds = r$t_small, ref_cpu = r$cpu_small,
           ratio = r$t_big / r$t_small, objective = r$obj_big)
  }
}

# --------------------------------------------------------------------------
if ("khan" %in% parts) {
  cat("\n== lmnn() on Khan-like shapes (p = 2308)\n")
  for (v in names(libs)) {
    r <- in_child(libs[[v]], function(reps, khan_like) {
      library(kmaha)
      options(kmaha.num_threads = 1L)
      sets <- list(`khan-like 63` = khan_like(63, 2308, 2), `khan-like 83` = khan_like(83, 2308, 3))
      if (requireNamespace("ISLR", quietly = TRUE)) {
        e <- new.env()
        utils::data("Khan", package = "ISLR", envir = e)
        kh <- e$Khan
        sets$`ISLR Khan train 63` <- list(x = kh$xtrain, y = factor(kh$ytrain))
        sets$`ISLR Khan all 83` <- list(x = rbind(kh$xtrain, kh$xtest),
                                        y = factor(c(kh$ytrain, kh$ytest)))
      }
      out <- list()
      for (nm in names(sets)) for (lambda in c(0, 1)) {
        d <- sets[[nm]]
        f <- suppressWarnings(lmnn(d$x, d$y, lambda = lambda))
        tt <- replicate(max(3L, reps %/% 3L), {
          st <- system.time(f <- suppressWarnings(lmnn(d$x, d$y, lambda = lambda)))
          c(st[["elapsed"]], st[["user.self"]] + st[["sys.self"]])
        })
        out[[length(out) + 1L]] <- data.frame(
          case = sprintf("%s x %d, lambda %g", nm, ncol(d$x), lambda),
          seconds = stats::median(tt[1, ]), cpu = stats::median(tt[2, ]),
          objective = f$convergence$objective, evaluations = f$convergence$iterations,
          loo = f$train_accuracy)
      }
      do.call(rbind, out)
    }, list(reps = reps, khan_like = khan_like))
    for (i in seq_len(nrow(r))) {
      cat(sprintf("%-6s %-40s %7.3f s (CPU %6.3f)  objective %.6g  evaluations %d  loo 1-NN %.3f\n",
                  v, r$case[i], r$seconds[i], r$cpu[i], r$objective[i], r$evaluations[i], r$loo[i]))
      record(part = "khan", version = v, case = r$case[i], seconds = r$seconds[i],
             cpu = r$cpu[i], ref_seconds = NA, ref_cpu = NA, ratio = NA,
             objective = r$objective[i])
    }
  }
}

# The 1200-row problem of the kernel-trick parts, defined in the children.
kernel_data <- function() {
  set.seed(1)
  n <- 1200
  y <- factor(rep(1:3, length.out = n))
  list(x = matrix(rnorm(n * 10), n) + 0.7 * as.integer(y), y = y)
}

# --------------------------------------------------------------------------
if ("klmnn" %in% parts) {
  cat("\n== klmnn() on 1200 rows\n")
  for (v in names(libs)) {
    r <- in_child(libs[[v]], function(kernel_data) {
      library(kmaha)
      options(kmaha.num_threads = 1L)
      d <- kernel_data()
      st <- system.time(f <- klmnn(d$x, d$y, kernel = rbf_kernel(1)))
      list(t = st[["elapsed"]], cpu = st[["user.self"]] + st[["sys.self"]],
           obj = f$convergence$objective, it = f$convergence$iterations, d = nrow(f$L))
    }, list(kernel_data = kernel_data))
    cat(sprintf("%-6s %.1f s (CPU %.1f)  objective %.8g  evaluations %d  map rows %d\n",
                v, r$t, r$cpu, r$obj, r$it, r$d))
    record(part = "klmnn", version = v, case = "klmnn 1200 x 10", seconds = r$t, cpu = r$cpu,
           ref_seconds = NA, ref_cpu = NA, ratio = NA, objective = r$obj)
  }
}

# --------------------------------------------------------------------------
if ("latency" %in% parts) {
  cat("\n== seconds from a time limit / SIGINT to the return of the call (1200 rows)\n")
  delays <- c(1, 3, 6)
  for (v in names(libs)) for (learner in c("klmnn", "knca", "kdne")) for (mode in c("limit", "interrupt")) {
    lat <- vapply(delays, function(t) {
      r <- in_child(libs[[v]], function(kernel_data, learner, mode, t) {
        library(kmaha)
        options(kmaha.num_threads = 1L)
        d <- kernel_data()
        call <- switch(learner,
          klmnn = quote(klmnn(d$x, d$y, kernel = rbf_kernel(1), max_iter = 1e5, tol = 1e-12)),
          knca = quote(knca(d$x, d$y, kernel = rbf_kernel(1), max_iter = 1e5, tol = 1e-300)),
          kdne = quote(kdne(d$x, d$y, kernel = rbf_kernel(1))))
        t0 <- Sys.time()
        if (mode == "limit") setTimeLimit(elapsed = t, transient = TRUE)
        else system(sprintf("(sleep %g; kill -INT %d) >/dev/null 2>&1 &", t, Sys.getpid()))
        out <- tryCatch({ eval(call); "finished" },
                        error = function(e) conditionMessage(e), interrupt = function(e) "interrupt")
        setTimeLimit()
        list(out = out, seconds = as.numeric(difftime(Sys.time(), t0, units = "secs")))
      }, list(kernel_data = kernel_data, learner = learner, mode = mode, t = t))
      if (identical(r$out, "finished")) NA_real_ else r$seconds - t
    }, numeric(1))
    cat(sprintf("%-6s %-6s %-9s latency at t = %s: %s  max %.2f s\n", v, learner, mode,
                paste(delays, collapse = ", "), paste(sprintf("%.2f", lat), collapse = ", "),
                max(lat, na.rm = TRUE)))
    record(part = "latency", version = v, case = paste(learner, mode), seconds = max(lat, na.rm = TRUE),
           cpu = NA, ref_seconds = NA, ref_cpu = NA, ratio = NA, objective = NA)
  }
}

res <- do.call(rbind, rows)
utils::write.csv(res, out_file, row.names = FALSE)
cat("\nwritten:", out_file, "\n")
