# Stale-script check: parses every R script in bench/ and data-raw/ and
# reports each call of a function that nothing provides any more, so that
# a script behind a shipped number cannot silently stop running when the
# package changes.  Also checks that every file under inst/extdata/ names,
# in inst/extdata/README.md, the script that produced it, and that this
# script exists (and so is checked too).
#
# Usage (from anywhere; paths are relative to the package's top directory):
#   Rscript tools/check-scripts.R              # bench/, data-raw/, inst/extdata/
#   Rscript tools/check-scripts.R FILE_OR_DIR...   # only these scripts
#   Rscript tools/check-scripts.R --self-test  # the check finds stale calls
#   Rscript tools/check-scripts.R --defer-suggests [FILE_OR_DIR...]
#       scripts that use a package `make suggests` installs (DESCRIPTION's Suggests
#       and the benchmarks' references listed in tools/install-suggests.R) which is not
#       installed are listed as deferred, not checked (.ci/run checks
#       before the suggested frameworks are installed, then again after)
# Prints one line per unresolved call, "file:line: name(): reason", and
# exits with status 1 when there is one; else prints a one-line summary and
# exits with status 0.  Needs only base R: it reads the package's own R/
# and NAMESPACE, not an installed kmaha, so it checks the scripts against
# the sources as they are now.
#
# A call resolves when the name is
# * defined in the script itself (assigned anywhere, a function's argument,
#   a loop variable, assign("name", ...)) or in a file it source()s
#   (followed recursively; the path is taken relative to the top directory,
#   then to the script's directory);
# * exported by a package on R's default search path (base, stats, utils,
#   methods, graphics, grDevices, datasets) or by a package the script or
#   a file it sources attaches with library() or require() (kmaha: its
#   NAMESPACE exports);
# * written pkg::name and exported by pkg, or pkg:::name and defined in
#   pkg (kmaha: at the top level of a file in R/).
# References pkg::name and pkg:::name that are not called (a function
# passed to lapply(), say) are checked the same way, and so are the
# function names given as strings to do.call() and match.fun().  This is a
# parse-and-resolve check: it does not run the scripts, and a name that
# the script only builds at run time (get(paste0(...))) is not seen.

default_packages <- c("base", "stats", "utils", "methods", "graphics",
                      "grDevices", "datasets")

# The package's top directory: the parent of this script's directory.
top_dir <- function() {
  args <- commandArgs(trailingOnly = FALSE)
  file <- sub("^--file=", "", args[startsWith(args, "--file=")])
  if (length(file) == 1L) return(normalizePath(file.path(dirname(file), "..")))
  normalizePath(".")
}

# The names kmaha defines at the top level of R/*.R and those it exports.
kmaha_names <- function(top) {
  defined <- character()
  for (f in list.files(file.path(top, "R"), pattern = "\\.[Rr]$", full.names = TRUE)) {
    for (e in parse(f, keep.source = FALSE)) {
      if (is.call(e) && as.character(e[[1]])[1] %in% c("<-", "=", "<<-") &&
          (is.name(e[[2]]) || is.character(e[[2]]))) {
        defined <- c(defined, as.character(e[[2]]))
      }
    }
  }
  ns <- readLines(file.path(top, "NAMESPACE"), warn = FALSE)
  exported <- sub("^export\\((.*)\\)$", "\\1", grep("^export\\(", ns, value = TRUE))
  exported <- gsub("^[\"`]|[\"`]$", "", exported)
  list(defined = unique(c(defined, exported)), exported = exported)
}

# The exports of an installed package (NULL when it is not installed).
package_exports <- local({
  cache <- list()
  function(pkg) {
    if (!is.null(cache[[pkg]])) return(cache[[pkg]])
    out <- if (pkg %in% c("base")) ls(baseenv(), all.names = TRUE) else
      tryCatch(getNamespaceExports(loadNamespace(pkg)), error = function(e) NULL)
    if (!is.null(out)) cache[[pkg]] <<- out
    out
  }
})

package_defines <- function(pkg, name) {
  ns <- tryCatch(asNamespace(loadNamespace(pkg)), error = function(e) NULL)
  !is.null(ns) && exists(name, envir = ns, inherits = FALSE)
}

# Walks an expression: the names it defines, the packages it attaches, the
# files it sources, and the strings it gives do.call()/match.fun().
walk <- function(e, acc) {
  if (!is.call(e)) return(acc)
  fn <- e[[1]]
  args <- as.list(e)[-1]
  # pkg::f(...) as f(...)
  if (is.call(fn) && length(fn) == 3L && is.name(fn[[1]]) &&
      as.character(fn[[1]]) %in% c("::", ":::")) {
    fn <- fn[[3]]
  }
  if (is.name(fn)) {
    f <- as.character(fn)
    if (f %in% c("<-", "=", "<<-") && length(args) >= 2L) {
      target <- args[[1]]
      # environment(g) <- <kmaha's namespace>: g's body sees kmaha's internals
      if (is.call(target) && identical(target[[1]], as.name("environment")) &&
          is.name(target[[2]]) && is_kmaha_ns(args[[2]], acc$ns_syms)) {
        acc$in_ns <- c(acc$in_ns, as.character(target[[2]]))
      }
      # f(x) <- value and x$a <- value assign to x
      while (is.call(target) && length(target) >= 2L) target <- target[[2]]
      if (is.name(target) || is.character(target)) {
        acc$defs <- c(acc$defs, as.character(target))
        if (is_kmaha_ns(args[[2]], character())) {
          acc$ns_syms <- c(acc$ns_syms, as.character(target))
        }
      }
    } else if (f %in% c("assign", "delayedAssign", "makeActiveBinding") &&
               length(args) >= 1L && is.character(args[[1]])) {
      acc$defs <- c(acc$defs, args[[1]])
    } else if (f == "for" && is.name(args[[1]])) {
      acc$defs <- c(acc$defs, as.character(args[[1]]))
    } else if (f == "function") {
      acc$defs <- c(acc$defs, names(args[[1]]))
    } else if (f %in% c("library", "require") && length(args) >= 1L) {
      named <- names(args) %||% rep("", length(args))
      pkg <- args[[if ("package" %in% named) which(named == "package") else 1L]]
      only <- isTRUE(args[["character.only"]])
      if (is.name(pkg) && !only) acc$attached <- c(acc$attached, as.character(pkg))
      if (is.character(pkg)) acc$attached <- c(acc$attached, pkg)
    } else if (f == "source" && length(args) >= 1L) {
      path <- tryCatch(constant_string(args[[1]]), error = function(err) {
        # file.path(some_dir, "name.R"): the name, beside the script
        s <- Filter(is.character, as.list(args[[1]]))
        if (length(s)) paste0("./", s[[length(s)]]) else NULL
      })
      if (!is.null(path)) acc$sourced <- c(acc$sourced, path)
    } else if (f %in% c("get", "get0", "exists", "unlockBinding", "lockBinding") &&
               length(args) >= 2L && is.character(args[[1]]) &&
               is_kmaha_ns(args[[2]], acc$ns_syms)) {
      acc$ns_strings <- c(acc$ns_strings, args[[1]])
    } else if (f %in% c("getFromNamespace", "assignInNamespace") && length(args) >= 2L &&
               is.character(args[[1]]) && identical(args[[length(args)]], "kmaha")) {
      acc$ns_strings <- c(acc$ns_strings, args[[1]])
    } else if (f %in% c("sourceCpp", "cppFunction")) {
      acc$cpp <- TRUE
    } else if (f %in% c("do.call", "match.fun") && length(args) >= 1L &&
               is.character(args[[1]]) && length(args[[1]]) == 1L) {
      acc$strings <- c(acc$strings, args[[1]])
    }
  }
  parts <- as.list(e)
  for (i in seq_along(parts)) {
    if (is.call(parts[[i]])) acc <- walk(parts[[i]], acc)
  }
  acc
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# TRUE for asNamespace("kmaha"), getNamespace("kmaha") and for a symbol
# the script assigned one of them to.
is_kmaha_ns <- function(e, ns_syms) {
  if (is.name(e)) return(as.character(e) %in% ns_syms)
  is.call(e) && is.name(e[[1]]) &&
    as.character(e[[1]]) %in% c("asNamespace", "getNamespace", "loadNamespace") &&
    length(e) >= 2L && identical(e[[2]], "kmaha")
}

# The functions that C++ code in the script's strings exports to R (Rcpp's
# sourceCpp(): after "// [[Rcpp::export]]"; cppFunction(): the first
# function of the string).
cpp_exports <- function(strings) {
  out <- character()
  for (s in strings) {
    m <- regmatches(s, gregexpr("\\[\\[Rcpp::export\\]\\][^(]*?([A-Za-z_][A-Za-z0-9_.]*)\\s*\\(", s, perl = TRUE))[[1]]
    out <- c(out, vapply(regmatches(m, regexec("([A-Za-z_][A-Za-z0-9_.]*)\\s*\\($", m)),
                         function(r) r[2], ""))
    if (!grepl("Rcpp::export", s, fixed = TRUE) && grepl("{", s, fixed = TRUE)) {
      first <- regmatches(s, regexpr("[A-Za-z_][A-Za-z0-9_]*\\s*\\(", s))
      out <- c(out, sub("\\s*\\($", "", first))
    }
  }
  out
}

# A path written with string constants, file.path() and paste0().
constant_string <- function(e) {
  if (is.character(e) && length(e) == 1L) return(e)
  if (is.call(e) && is.name(e[[1]]) &&
      as.character(e[[1]]) %in% c("file.path", "paste0", "paste")) {
    parts <- lapply(as.list(e)[-1], constant_string)
    return(do.call(as.character(e[[1]]), parts))
  }
  stop("not a constant")
}

# Every constant in an expression.
all_constants <- function(e) {
  if (is.call(e)) {
    parts <- as.list(e)
    return(unlist(lapply(seq_along(parts), function(i) {
      if (is.call(parts[[i]]) || is.character(parts[[i]])) all_constants(parts[[i]])
    }), recursive = FALSE))
  }
  if (is.character(e)) list(e) else list()
}

# The definitions, attached packages and sourced files of a script and of
# the files it sources (recursively).
script_scope <- function(file, top, seen = character()) {
  file <- normalizePath(file)
  acc <- list(defs = character(), attached = character(), sourced = character(),
              strings = character(), missing_sources = character(),
              ns_syms = character(), in_ns = character(), ns_strings = character(),
              cpp = FALSE)
  if (file %in% seen) return(acc)
  exprs <- parse(file, keep.source = FALSE)
  for (e in exprs) acc <- walk(e, acc)
  if (acc$cpp) {
    strings <- Filter(is.character, unlist(lapply(exprs, all_constants)))
    acc$defs <- c(acc$defs, cpp_exports(strings))
  }
  for (s in unique(acc$sourced)) {
    cand <- if (startsWith(s, "./")) file.path(dirname(file), substring(s, 3L)) else
      c(file.path(top, s), file.path(dirname(file), s))
    hit <- cand[file.exists(cand)][1]
    if (is.na(hit)) {
      acc$missing_sources <- c(acc$missing_sources, s)
      next
    }
    sub <- script_scope(hit, top, c(seen, file))
    acc$defs <- c(acc$defs, sub$defs)
    acc$attached <- c(acc$attached, sub$attached)
    acc$missing_sources <- c(acc$missing_sources, sub$missing_sources)
  }
  acc
}

# The unresolved calls of one script: a data frame file, line, name, reason.
check_script <- function(file, top, kmaha, sourcers = character()) {
  rel <- normalizePath(file)
  if (startsWith(rel, paste0(top, "/"))) rel <- substring(rel, nchar(top) + 2L)
  pd <- tryCatch(utils::getParseData(parse(file, keep.source = TRUE), includeText = TRUE),
                 error = function(e) e)
  if (inherits(pd, "error")) {
    return(data.frame(file = rel, line = NA_integer_, name = "",
                      reason = paste("does not parse:", conditionMessage(pd))))
  }
  scope <- script_scope(file, top)
  # a file that other scripts source sees what they attach and define
  for (by in sourcers) {
    outer <- script_scope(by, top)
    scope$attached <- c(scope$attached, outer$attached)
    scope$defs <- c(scope$defs, outer$defs)
  }
  attached <- unique(c(default_packages, scope$attached))
  defs <- unique(scope$defs)
  # the lines of the top-level functions whose environment the script sets
  # to kmaha's namespace: kmaha's internals resolve there
  ns_lines <- integer()
  if (length(scope$in_ns)) {
    exprs <- parse(file, keep.source = TRUE)
    refs <- attr(exprs, "srcref")
    for (i in seq_along(exprs)) {
      e <- exprs[[i]]
      if (is.call(e) && as.character(e[[1]])[1] %in% c("<-", "=") && is.name(e[[2]]) &&
          as.character(e[[2]]) %in% scope$in_ns) {
        ns_lines <- c(ns_lines, seq(refs[[i]][1], refs[[i]][3]))
      }
    }
  }
  out <- list()
  add <- function(line, name, reason) {
    out[[length(out) + 1L]] <<- data.frame(file = rel, line = line, name = name,
                                           reason = reason)
  }
  for (s in unique(scope$missing_sources)) {
    add(NA_integer_, "source", sprintf("sources '%s', which does not exist", s))
  }
  for (p in setdiff(scope$attached, c(default_packages, "kmaha"))) {
    if (is.null(package_exports(p))) {
      add(NA_integer_, "library", sprintf("attaches package %s, which is not installed", p))
    }
  }
  pd <- pd[pd$terminal, ]
  pd <- pd[order(pd$line1, pd$col1), ]
  tok <- pd$token
  txt <- pd$text
  for (i in seq_along(tok)) {
    if (!tok[i] %in% c("SYMBOL_FUNCTION_CALL", "SYMBOL")) next
    qualified <- i > 2L && tok[i - 1L] %in% c("NS_GET", "NS_GET_INT") &&
      tok[i - 2L] == "SYMBOL_PACKAGE"
    name <- txt[i]
    if (qualified) {
      pkg <- txt[i - 2L]
      internal <- tok[i - 1L] == "NS_GET_INT"
      ok <- if (pkg == "kmaha") {
        name %in% if (internal) kmaha$defined else kmaha$exported
      } else if (is.null(package_exports(pkg))) {
        FALSE
      } else if (internal) {
        package_defines(pkg, name)
      } else {
        name %in% package_exports(pkg)
      }
      if (!ok) {
        why <- if (pkg != "kmaha" && is.null(package_exports(pkg))) {
          sprintf("package %s is not installed", pkg)
        } else if (internal) {
          sprintf("%s has no object '%s'", pkg, name)
        } else {
          sprintf("%s exports no '%s'", pkg, name)
        }
        add(pd$line1[i], paste0(pkg, txt[i - 1L], name,
                                if (tok[i] == "SYMBOL_FUNCTION_CALL") "()" else ""), why)
      }
      next
    }
    if (tok[i] != "SYMBOL_FUNCTION_CALL") next
    if (i > 1L && tok[i - 1L] %in% c("'$'", "'@'")) next
    if (resolves(name, defs, attached, kmaha)) next
    if (pd$line1[i] %in% ns_lines && name %in% kmaha$defined) next
    add(pd$line1[i], paste0(name, "()"), "defined neither in the script nor in a file it sources, nor exported by an attached package")
  }
  str_line <- function(s) {
    pd$line1[pd$token == "STR_CONST" & pd$text %in% c(sprintf('"%s"', s), sprintf("'%s'", s))][1]
  }
  for (s in unique(scope$ns_strings)) {
    if (!s %in% kmaha$defined) {
      add(str_line(s), sprintf('"%s"', s), "looked up in kmaha's namespace, which has no such object")
    }
  }
  for (s in unique(scope$strings)) {
    if (!resolves(s, defs, attached, kmaha)) {
      add(str_line(s), sprintf('"%s"', s), "named as a string to do.call()/match.fun(), but defined nowhere the script can see")
    }
  }
  if (!length(out)) {
    return(data.frame(file = character(), line = integer(), name = character(),
                      reason = character()))
  }
  out <- do.call(rbind, out)
  out[order(out$line, na.last = FALSE), , drop = FALSE]
}

resolves <- function(name, defs, attached, kmaha) {
  if (name %in% defs) return(TRUE)
  for (p in attached) {
    ex <- if (p == "kmaha") kmaha$exported else package_exports(p)
    if (name %in% ex) return(TRUE)
  }
  FALSE
}

# inst/extdata/: every file has an entry in inst/extdata/README.md, a list
# item that starts with the file's name in backquotes and names the script
# that produced it ("- `file`: ... `data-raw/<script>.R`"), and the script
# exists (it is then checked with the others).
check_extdata <- function(top) {
  dir <- file.path(top, "inst", "extdata")
  files <- setdiff(list.files(dir), c("README.md"))
  if (!length(files)) return(character())
  readme <- file.path(dir, "README.md")
  if (!file.exists(readme)) {
    return("inst/extdata/README.md: missing; it must name the script behind each file")
  }
  lines <- readLines(readme, warn = FALSE)
  # list items: a line "- ..." and the indented lines that follow it
  item <- cumsum(grepl("^- ", lines) | !nzchar(trimws(lines)) | !grepl("^\\s", lines))
  items <- vapply(split(lines, item), paste, "", collapse = " ")
  problems <- character()
  for (f in files) {
    entry <- items[startsWith(items, sprintf("- `%s`", f))]
    named <- gsub("`", "", unlist(regmatches(entry, gregexpr("`(bench|data-raw)/[^`]+\\.R`", entry))))
    if (!length(named)) {
      problems <- c(problems, sprintf("inst/extdata/README.md: no entry names the script behind %s (write - `%s`: ... `data-raw/<script>.R`)", f, f))
      next
    }
    for (s in named) {
      if (!file.exists(file.path(top, s))) {
        problems <- c(problems, sprintf("inst/extdata/README.md: %s is said to come from %s, which does not exist", f, s))
      }
    }
  }
  for (e in items[grepl("^- `[^`]+`", items)]) {
    f <- sub("^- `([^`]+)`.*$", "\\1", e)
    if (!f %in% files) {
      problems <- c(problems, sprintf("inst/extdata/README.md: describes %s, which is not in inst/extdata/", f))
    }
  }
  problems
}

# --self-test: the check must find the stale calls of a script written for
# the purpose (a removed internal, an unexported function called bare, a
# removed internal looked up by name) and pass a sound one beside it.
self_test <- function(top, kmaha) {
  dir <- tempfile("check-scripts-")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE))
  writeLines("helper <- function(x) x + 1", file.path(dir, "helper.R"))
  writeLines(c("library(kmaha)",
               "source(file.path(dirname('.'), 'helper.R'))",
               "fit <- nca(iris[, 1:4], iris$Species)",
               "z <- kmaha:::kmaha_transform(fit, iris[, 1:4])",
               "k <- helper(fold_map(1))",
               "ns <- asNamespace('kmaha')",
               "f <- get('resolve_learner', ns)",
               "ok <- kmaha:::apply_map(z, fit$L)"), file.path(dir, "stale.R"))
  writeLines(c("library(kmaha)", "source(file.path(dirname('.'), 'helper.R'))",
               "ctx <- kmaha:::kmaha_context()", "g <- function(cb) cb(helper(1))",
               "nca(iris[, 1:4], iris$Species)"), file.path(dir, "sound.R"))
  bad <- check_script(file.path(dir, "stale.R"), top, kmaha)
  good <- check_script(file.path(dir, "sound.R"), top, kmaha)
  want <- c("4 kmaha:::kmaha_transform()", "5 fold_map()", "7 \"resolve_learner\"")
  got <- paste(bad$line, bad$name)
  if (!identical(got, want) || nrow(good)) {
    cat("check-scripts self-test FAILED\n  expected:", want, "\n  found:", got,
        "\n  on the sound script:", paste(good$line, good$name), "\n")
    quit(status = 1)
  }
  cat("check-scripts self-test: the three stale calls found, the sound script passes\n")
}

# The packages that `make suggests` installs: DESCRIPTION's Suggests and
# the references of the benchmarks (kknn, ranger, ...), which
# tools/install-suggests.R lists in its `targets` and which are not
# Suggests of the package because no code in the build uses them.
suggested_packages <- function(top) {
  desc <- read.dcf(file.path(top, "DESCRIPTION"), fields = "Suggests")[1, 1]
  suggests <- trimws(sub("\\(.*", "", strsplit(gsub("\n", " ", desc), ",")[[1]]))
  inst <- file.path(top, "tools", "install-suggests.R")
  if (file.exists(inst)) {
    for (e in as.list(parse(inst))) {
      if (is.call(e) && identical(e[[1]], as.name("<-")) &&
          identical(e[[2]], as.name("targets")) && is.call(e[[3]]) &&
          identical(e[[3]][[1]], as.name("c"))) {
        suggests <- c(suggests, unlist(as.list(e[[3]])[-1]))
      }
    }
  }
  unique(suggests)
}

# The packages `make suggests` installs (suggested_packages()) that script
# f attaches or names with pkg:: or pkg::: and that are not installed.
missing_suggests <- function(f, top) {
  suggests <- suggested_packages(top)
  sc <- tryCatch(script_scope(f, top), error = function(e) NULL)
  pd <- utils::getParseData(parse(f, keep.source = TRUE))
  used <- unique(c(sc$attached, pd$text[pd$token == "SYMBOL_PACKAGE"]))
  used <- intersect(used, suggests)
  used[vapply(used, function(p) is.null(package_exports(p)), NA)]
}

main <- function() {
  top <- top_dir()
  args <- commandArgs(trailingOnly = TRUE)
  if (identical(args, "--self-test")) return(self_test(top, kmaha_names(top)))
  defer <- "--defer-suggests" %in% args
  args <- setdiff(args, "--defer-suggests")
  kmaha <- kmaha_names(top)
  targets <- if (length(args)) args else file.path(top, c("bench", "data-raw"))
  files <- unlist(lapply(targets, function(t) {
    if (dir.exists(t)) list.files(t, pattern = "\\.[Rr]$", full.names = TRUE) else t
  }))
  problems <- character()
  if (!length(args)) {
    problems <- check_extdata(top)
  }
  # which scripts source which file
  pool <- unique(c(files[file.exists(files)],
                   list.files(file.path(top, c("bench", "data-raw")), pattern = "\\.[Rr]$",
                              full.names = TRUE)))
  sourced_by <- list()
  for (g in pool) {
    sc <- tryCatch(script_scope(g, top), error = function(e) NULL)
    for (s in sc$sourced) {
      cand <- if (startsWith(s, "./")) file.path(dirname(g), substring(s, 3L)) else
        c(file.path(top, s), file.path(dirname(g), s))
      hit <- cand[file.exists(cand)][1]
      if (!is.na(hit)) {
        key <- normalizePath(hit)
        sourced_by[[key]] <- c(sourced_by[[key]], g)
      }
    }
  }
  deferred <- character()
  for (f in files) {
    if (!file.exists(f)) {
      problems <- c(problems, sprintf("%s: no such file", f))
      next
    }
    if (defer && length(miss <- missing_suggests(f, top))) {
      cat(sprintf("%s: deferred (uses %s, suggested and not installed)\n",
                  sub(paste0("^", top, "/"), "", normalizePath(f)), paste(miss, collapse = ", ")))
      deferred <- c(deferred, f)
      next
    }
    bad <- check_script(f, top, kmaha, sourced_by[[normalizePath(f)]] %||% character())
    for (i in seq_len(nrow(bad))) {
      problems <- c(problems, sprintf("%s:%s: %s: %s", bad$file[i],
                                      if (is.na(bad$line[i])) "" else bad$line[i],
                                      bad$name[i], bad$reason[i]))
    }
  }
  if (length(problems)) {
    writeLines(problems)
    cat(sprintf("check-scripts: %d problem(s) in %d script(s) checked\n", length(problems),
                length(files)))
    quit(status = 1)
  }
  cat(sprintf("check-scripts: %d scripts checked, every call resolves%s%s\n",
              length(files) - length(deferred),
              if (!length(args)) "; every file in inst/extdata/ names its script" else "",
              if (length(deferred)) sprintf("; %d deferred until the suggested packages are installed",
                                            length(deferred)) else ""))
}

# Run as a script (Rscript tools/check-scripts.R); source() only defines.
if (any(grepl("check-scripts\\.R$", sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))))) {
  main()
}
