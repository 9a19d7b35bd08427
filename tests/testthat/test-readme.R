# The README's R blocks run as they stand, each in a fresh session, and
# print only what they mean to: no framework's progress log lines (mlr3
# used to print 54 INFO lines), no warnings.

readme_blocks <- function() {
  file <- test_path("..", "..", "README.md")
  if (!file.exists(file)) return(NULL)
  lines <- readLines(file, warn = FALSE)
  starts <- which(lines == "```r")
  lapply(starts, function(i) {
    end <- i + which(lines[-seq_len(i)] == "```")[1]
    lines[seq(i + 1L, end - 1L)]
  })
}

test_that("the README's R blocks run in a fresh session and print no log lines", {
  blocks <- readme_blocks()
  skip_if(is.null(blocks), "the README is not at hand")
  expect_gte(length(blocks), 2L)
  for (code in blocks) {
    pkgs <- unique(c(sub("library\\(([A-Za-z0-9.]+)\\).*", "\\1",
                         unlist(regmatches(code, gregexpr("library\\([A-Za-z0-9.]+\\)", code)))),
                     sub("::.*", "", unlist(regmatches(code, gregexpr("[A-Za-z0-9.]+::", code))))))
    pkgs <- setdiff(pkgs, "kmaha")
    if (length(pkgs)) skip_without(pkgs)
    res <- run_in_child(function(code) {
      grDevices::pdf(NULL)
      out <- character()
      warned <- character()
      con <- textConnection("out", "w", local = TRUE)
      sink(con)
      sink(con, type = "message")
      err <- withCallingHandlers(
        tryCatch({
          exprs <- parse(text = code)
          for (e in exprs) {
            v <- withVisible(eval(e, globalenv()))
            if (v$visible) print(v$value)
          }
          NULL
        }, error = function(e) conditionMessage(e)),
        warning = function(w) {
          warned <<- c(warned, conditionMessage(w))
          invokeRestart("muffleWarning")
        })
      sink(type = "message")
      sink()
      close(con)
      list(out = out, error = err, warnings = warned)
    }, args = list(code = code))
    label <- sprintf("the README block starting \"%s\"", code[1])
    expect_null(res$error, label = label)
    expect_identical(res$warnings, character(), label = label)
    logs <- grep("^(INFO|WARN|DEBUG|TRACE) +\\[", res$out, value = TRUE)
    expect_identical(logs, character(), label = label)
  }
})
