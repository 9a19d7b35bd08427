# Installs the suggested frameworks that kmaha's adapters plug into
# (tidymodels: parsnip, recipes, workflows, tune, dials, yardstick, rsample;
# mlr3: mlr3, paradox, mlr3tuning, bbotk, mlr3misc), batchtools and
# future.batchtools for the Slurm tests, the reference implementations lfda
# and dml (tests and bench/learners-new.R), and kknn, ranger and glmnet,
# the references of the benchmarks (which CI's script check needs), into the
# R library LIB, so that their tests run (CI does this; `make test` does
# not).
#
#   Rscript tools/install-suggests.R LIB
#
# What Debian ships at a recent enough version is installed with apt-get
# by tools/install-suggests.sh first; this script installs from CRAN only
# the packages that are missing or older than some package in the closure
# requires (install.packages() alone would not upgrade an installed
# dependency that is too old), into LIB, which must come first in
# .libPaths() when the tests run.  It stops before installing anything
# when a package in the closure needs a newer R than this one.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1L || !nzchar(args[1])) {
  stop("usage: Rscript tools/install-suggests.R LIB", call. = FALSE)
}
lib <- normalizePath(args[1], mustWork = FALSE)
dir.create(lib, recursive = TRUE, showWarnings = FALSE)
.libPaths(c(lib, .libPaths()))
ncpus <- as.integer(Sys.getenv("KMAHA_INSTALL_NCPUS", parallel::detectCores()))

targets <- c("parsnip", "recipes", "workflows", "tune", "dials", "yardstick",
             "rsample", "mlr3", "paradox", "mlr3tuning", "bbotk", "mlr3misc",
             "batchtools", "future.batchtools",
             # references of the tests and bench/learners-new.R for LFDA, RCA and MMC
             "lfda", "dml",
             # references of bench/tune-grid.R, bench/default-accept.R and
             # bench/regression-accept.R
             "kknn", "ranger", "glmnet")
# Dependencies taken at CRAN's current version even where an older one
# meets every declared requirement, because some package uses functions
# newer than its declared minimum: mlr3measures calls
# checkmate::assert_permutation() (checkmate >= 2.2), Debian 12 has 2.1.0.
always_current <- c("checkmate")

repos <- getOption("repos")
if (is.null(repos) || identical(unname(repos["CRAN"]), "@CRAN@")) {
  repos <- c(CRAN = "https://cloud.r-project.org")
}
av <- utils::available.packages(repos = repos)

# The version of each package that library(p) would load: the first library
# on .libPaths() that has it.
ip <- utils::installed.packages(lib.loc = .libPaths())
ip <- ip[!duplicated(ip[, "Package"]), , drop = FALSE]
installed <- stats::setNames(ip[, "Version"], ip[, "Package"])
base_pkgs <- ip[ip[, "Priority"] %in% "base", "Package"]

requirements <- function(p) {
  fields <- av[p, c("Depends", "Imports", "LinkingTo")]
  s <- paste(fields[!is.na(fields)], collapse = ",")
  parts <- trimws(strsplit(gsub("\\s+", " ", s), ",")[[1]])
  parts <- parts[nzchar(parts)]
  data.frame(pkg = sub("\\s*\\(.*", "", parts),
             ver = ifelse(grepl("\\(\\s*>=", parts),
                          sub(".*\\(\\s*>=\\s*([^)]*)\\).*", "\\1", parts), NA),
             stringsAsFactors = FALSE)
}
satisfied <- function(p, ver) {
  if (p %in% always_current) ver <- av[p, "Version"]
  !is.na(installed[p]) && (is.na(ver) || package_version(installed[p]) >= package_version(ver))
}

need <- character()
too_new <- character()
# Adds the packages in `queue`, and what they need that is missing or too
# old, to `need`.
add_closure <- function(queue) {
  while (length(queue)) {
    p <- queue[1]
    queue <- queue[-1]
    if (p %in% need) next
    if (!p %in% rownames(av)) stop(sprintf("%s is not on CRAN (%s)", p, repos["CRAN"]), call. = FALSE)
    need <<- c(need, p)
    req <- requirements(p)
    for (i in seq_len(nrow(req))) {
      q <- req$pkg[i]
      if (q == "R") {
        if (!is.na(req$ver[i]) && package_version(req$ver[i]) > getRversion()) {
          too_new <<- c(too_new, sprintf("%s %s needs R >= %s", p, av[p, "Version"], req$ver[i]))
        }
      } else if (!q %in% base_pkgs && !satisfied(q, req$ver[i]) && !q %in% c(need, queue)) {
        queue <- c(queue, q)
      }
    }
  }
}
add_closure(targets[!vapply(targets, satisfied, NA, ver = NA)])
# future.batchtools builds on future's internals: when the closure brings a
# newer future into LIB, future.batchtools (and batchtools) come from CRAN
# too, at versions made for it, instead of the installed ones.
if ("future" %in% need) add_closure(setdiff(c("batchtools", "future.batchtools"), need))
if (length(too_new)) {
  stop("CRAN's current versions need a newer R than ", getRversion(), ":\n  ",
       paste(too_new, collapse = "\n  "), call. = FALSE)
}

t0 <- proc.time()[["elapsed"]]
if (length(need)) {
  cat(sprintf("Installing %d packages from CRAN into %s (Ncpus = %d):\n  %s\n",
              length(need), lib, ncpus, paste(need, collapse = " ")))
  utils::install.packages(need, lib = lib, repos = repos, available = av,
                          dependencies = FALSE, Ncpus = ncpus, quiet = TRUE)
} else {
  cat("All suggested frameworks are installed and recent enough.\n")
}
# Check in a fresh R that every target loads from this library path.
check <- sprintf("for (p in c(%s)) loadNamespace(p)",
                 paste(sprintf("'%s'", targets), collapse = ", "))
status <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(check)),
                  env = sprintf("R_LIBS=%s", paste(.libPaths(), collapse = ":")))
if (status != 0L) stop("some suggested frameworks do not load; see above", call. = FALSE)
ip <- utils::installed.packages(lib.loc = .libPaths())
ip <- ip[!duplicated(ip[, "Package"]), , drop = FALSE]
cat(sprintf("Installed in %.0f s; versions: %s\n", proc.time()[["elapsed"]] - t0,
            paste(sprintf("%s %s", targets, ip[targets, "Version"]), collapse = ", ")))
