# Choices among fixed strings, checked exactly (no partial matching of the
# value) with errors that name the argument, as every other check of the
# package does.  They replace match.arg(), whose errors name `arg` ("'arg'
# must be NULL or a character vector", "'arg' should be one of").

# One of `choices`.  The default (the whole vector `choices`, as in the
# function's signature) gives the first.  Anything but a single string among
# `choices` is an error:
#   `neighbors` must be one of "feature", "input".
match_choice <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices[1L])
  if (!is.character(x) || length(x) != 1L || is.na(x) || !x %in% choices) {
    stopf("`%s` must be one of %s.", arg, quote_choices(choices))
  }
  x
}

# Some of `choices` (one or more, duplicates dropped, in the order given).
# The default (the whole vector) gives all of them.
#   `kernels` must be some of "linear", "cv", ...; "auto2" is not.
match_choices <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices)
  if (!is.character(x) || !length(x) || anyNA(x)) {
    stopf("`%s` must be one or more of %s.", arg, quote_choices(choices))
  }
  bad <- setdiff(x, choices)
  if (length(bad)) {
    stopf("`%s` must be one or more of %s; %s %s not.", arg, quote_choices(choices),
          quote_choices(bad), if (length(bad) == 1L) "is" else "are")
  }
  unique(x)
}

# "a", "b", "c"
quote_choices <- function(x) paste0("\"", x, "\"", collapse = ", ")
