# Run `expr` and return its value with every warning message it gave (the
# warnings are muffled), so a test can check that exactly the expected
# warnings appear, and each only once.
collect_warnings <- function(expr) {
  msgs <- character()
  value <- withCallingHandlers(expr, warning = function(w) {
    msgs <<- c(msgs, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = msgs)
}
