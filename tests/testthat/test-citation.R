# citation("kmaha"): the paper and the package, without warnings.

test_that("citation() cites the paper and the package without warnings", {
  w <- collect_warnings(utils::citation("kmaha"))
  expect_identical(w$warnings, character())
  cit <- w$value
  expect_length(cit, 2L)
  paper <- cit[[1]]
  expect_identical(tolower(attr(unclass(paper)[[1]], "bibtype")), "article")
  expect_identical(paper$doi, "10.1016/j.neucom.2010.05.020")
  expect_identical(paper$journal, "Neurocomputing")
  expect_identical(paper$volume, "73")
  expect_identical(paper$pages, "1570--1579")
  expect_identical(paper$year, "2010")
  expect_identical(vapply(unclass(paper$author), `[[`, "", "family"),
                   c("Chatpatanasiri", "Korsrilabutr", "Tangchanachaianan", "Kijsirikul"))
  pkg <- cit[[2]]
  expect_match(pkg$note, as.character(utils::packageVersion("kmaha")), fixed = TRUE)
  expect_match(pkg$year, "^(19|20)[0-9]{2}$")
  # the text and BibTeX forms render
  expect_match(paste(format(cit, style = "text"), collapse = " "), "Neurocomputing")
  expect_true(any(grepl("doi = \\{10.1016/j.neucom.2010.05.020\\}", utils::toBibtex(cit))))
})
