library(testthat)
library(kmaha)

test_check("kmaha")
