# Dangling-pointer check: every path into the repository that a tracked file
# names (R/..., src/..., inst/..., bench/..., data-raw/..., tools/...,
# tests/..., vignettes/..., man/..., .ci/...) exists, so that comments,
# docs and READMEs never point at a file that was moved or removed.
#
#   Rscript tools/check-pointers.R
#
# Prints one line per dangling path, "file: path", and exits with status 1
# when there is one.  Not checked: patterns and templates (paths with *, %,
# <, {, $ or ending in _ or -), the folders that scripts create (caches,
# checkpoints, inst/doc), and the files a script of bench/ or data-raw/
# writes (a path named there whose folder exists).  A file that was removed
# on purpose is named without its folder ("nca_avx2.cpp, since removed").
# Needs base R and git.

top <- local({
  args <- commandArgs(trailingOnly = FALSE)
  file <- sub("^--file=", "", args[startsWith(args, "--file=")])
  if (length(file) == 1L) normalizePath(file.path(dirname(file), "..")) else normalizePath(".")
})
setwd(top)
files <- system2("git", c("ls-files"), stdout = TRUE)
files <- files[file.exists(files) & !grepl("\\.(rds|png|pdf|gz|o|so)$", files) &
                 !startsWith(files, "man/") &
                 !grepl("^(bench/results|bench/studies/results|inst/extdata)/.*\\.(csv|txt)$", files)]
pattern <- "(?<![A-Za-z0-9_./-])((R|src|inst|bench|data-raw|tools|tests|vignettes|man|\\.ci)/[A-Za-z0-9_./*%<>{}$+-]*[A-Za-z0-9_*%>}+-])"
created <- "cache|checkpoints|^inst/doc$|\\.tmp$|\\.dll$"
dangling <- character()
for (f in files) {
  text <- tryCatch(readLines(f, warn = FALSE, encoding = "UTF-8"), error = function(e) NULL)
  if (is.null(text)) next
  hits <- unique(unlist(regmatches(text, gregexpr(pattern, text, perl = TRUE))))
  for (p in sub("\\.$", "", hits)) {
    if (grepl("[*%<>{}$]|[_-]$", p) || grepl(created, p) || file.exists(p)) next
    script <- grepl("^(bench|data-raw)/.*\\.R$", f)
    if (script && dir.exists(dirname(p))) next
    dangling <- c(dangling, sprintf("%s: %s", f, p))
  }
}
if (length(dangling)) {
  cat(dangling, sep = "\n")
  cat(sprintf("check-pointers: %d path(s) to files that do not exist\n", length(dangling)))
  quit(status = 1)
}
cat(sprintf("check-pointers: %d files read, every path they name exists\n", length(files)))
