# What a reader pastes: the code the vignettes show, chunk after chunk,
# runs in a fresh session; no shown chunk needs an object that only a
# hidden chunk (echo = FALSE, include = FALSE) makes.

# The vignettes' sources: the checkout's vignettes/ (the tests run from
# it), else the installed package's doc/ (an installation from the
# tarball); NULL when neither is at hand.
vignette_sources <- function() {
  dir <- test_path("..", "..", "vignettes")
  files <- if (dir.exists(dir)) list.files(dir, "\\.Rmd$", full.names = TRUE)
  if (!length(files)) {
    doc <- system.file("doc", package = "kmaha")
    files <- if (nzchar(doc)) list.files(doc, "\\.Rmd$", full.names = TRUE)
  }
  if (length(files)) files
}

# The R chunks of an R Markdown file: their code, and whether they are
# shown (neither echo = FALSE nor include = FALSE) and evaluated by knitr
# (eval not FALSE; a condition such as `eval = has_res` counts as TRUE).
rmd_chunks <- function(file) {
  lines <- readLines(file, warn = FALSE)
  starts <- grep("^```\\{r", lines)
  lapply(starts, function(i) {
    end <- i + which(grepl("^```\\s*$", lines[-seq_len(i)]))[1]
    header <- sub("^```\\{r[ ,]*", "", sub("\\}\\s*$", "", lines[i]))
    # the label (a first unnamed word) dropped; the options parsed, not run
    header <- sub("^[A-Za-z0-9_.-]+\\s*(,|$)\\s*", "", header)
    opts <- as.list(str2lang(sprintf("list(%s)", header)))[-1]
    is_false <- function(o) identical(opts[[o]], FALSE)
    list(code = lines[seq(i + 1L, length.out = end - i - 1L)],
         shown = !is_false("echo") && !is_false("include"),
         evaluated = !is_false("eval"), line = i)
  })
}

# `e` without the arguments evaluated among a data frame's columns
# (with(), subset(), rsample's `strata`): their names are columns, not
# objects of the session.
drop_column_args <- function(e) {
  if (!is.call(e)) return(e)
  op <- if (is.name(e[[1]])) as.character(e[[1]]) else ""
  if (op %in% c("with", "within", "subset", "transform") && length(e) >= 2L) {
    return(drop_column_args(e[[2]]))
  }
  if (op == "data") return(quote(NULL))
  if (!is.null(names(e))) {
    for (nm in intersect(names(e), "strata")) e[[nm]] <- NULL
  }
  for (i in seq_along(e)[-1]) {
    if (is.call(e[[i]])) e[[i]] <- drop_column_args(e[[i]])
  }
  e
}

# The names a chunk uses but does not define itself.
chunk_needs <- function(code) {
  exprs <- lapply(parse(text = code, keep.source = FALSE), drop_column_args)
  f <- function() NULL
  body(f) <- as.call(c(as.name("{"), exprs))
  g <- codetools::findGlobals(f, merge = FALSE)
  unique(c(g$variables, g$functions))
}

# The names a chunk assigns at its top level (and in its loops).
chunk_defines <- function(code) {
  exprs <- parse(text = code, keep.source = FALSE)
  found <- character()
  walk <- function(e) {
    if (is.call(e)) {
      op <- if (is.name(e[[1]])) as.character(e[[1]]) else ""
      if (op %in% c("<-", "=", "<<-") && is.name(e[[2]])) found <<- c(found, as.character(e[[2]]))
      if (op %in% c("<-", "=", "<<-") && is.call(e[[2]])) {
        target <- e[[2]]
        while (is.call(target)) target <- target[[2]]
        if (is.name(target)) found <<- c(found, as.character(target))
      }
      if (op == "for") found <<- c(found, as.character(e[[2]]))
      if (op == "data" && length(e) >= 2L) found <<- c(found, as.character(e[[2]]))
      for (a in as.list(e)[-1]) if (!missing(a)) walk(a)
    }
  }
  for (e in exprs) walk(e)
  unique(found)
}

# The packages a chunk attaches with library().
chunk_attaches <- function(code) {
  m <- regmatches(code, regexpr("library\\(([A-Za-z0-9.]+)\\)", code))
  sub("library\\((.*)\\)", "\\1", m)
}

test_that("the shown chunks of every vignette need no object of a hidden chunk", {
  files <- vignette_sources()
  skip_if(is.null(files), "the vignettes' sources are not at hand")
  skip_if_not_installed("codetools")
  base_pkgs <- c("base", "stats", "graphics", "grDevices", "utils", "datasets", "methods")
  for (file in files) {
    defined <- character()
    attached <- base_pkgs
    for (ch in rmd_chunks(file)) {
      if (!ch$shown) next
      attached <- c(attached, chunk_attaches(ch$code))
      # (a chunk that attaches a package not installed here cannot be
      # checked: its names are that package's)
      if (!all(vapply(attached, requireNamespace, NA, quietly = TRUE))) next
      needs <- setdiff(chunk_needs(ch$code), chunk_defines(ch$code))
      known <- function(nm) {
        nm %in% defined ||
          any(vapply(attached, function(p) {
            requireNamespace(p, quietly = TRUE) && exists(nm, envir = asNamespace(p)) &&
              nm %in% getNamespaceExports(p) ||
              (p %in% base_pkgs && exists(nm, envir = asNamespace(p)))
          }, NA))
      }
      missing <- Filter(Negate(known), needs)
      expect_identical(missing, character(),
                       label = sprintf("%s, chunk at line %d: objects it does not make or load",
                                       basename(file), ch$line))
      defined <- c(defined, chunk_defines(ch$code))
    }
    # the first shown chunk that uses kmaha loads it
    expect_true("kmaha" %in% attached, label = sprintf("%s loads kmaha in a shown chunk", basename(file)))
  }
})

test_that("vignette(\"reproduction\")'s shown chunks run in order in a fresh session", {
  files <- vignette_sources()
  file <- files[basename(files) == "reproduction.Rmd"]
  skip_if(!length(file), "the source of vignette(\"reproduction\") is not at hand")
  skip_if(!nzchar(system.file("extdata", "paper_reproduction.csv", package = "kmaha")),
          "this installation has no shipped reproduction results")
  # (knitr's eval = FALSE chunks are shown too; the one here re-runs a
  # cell of the reproduction, tested elsewhere)
  chunks <- Filter(function(ch) ch$shown && ch$evaluated, rmd_chunks(file))
  code <- unlist(lapply(chunks, `[[`, "code"))
  res <- run_in_child(function(code) {
    grDevices::pdf(NULL)
    out <- utils::capture.output(
      err <- tryCatch({ eval(parse(text = code), envir = globalenv()); NULL },
                      error = function(e) conditionMessage(e)))
    err
  }, args = list(code = code))
  expect_null(res)
})
