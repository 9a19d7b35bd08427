# Dataset loaders: every dataset equals the project's CSV file exactly (when
# KMAHA_DATA_DIR points to them), balance is generated right without any
# file, and the UCI parsers and error messages.

# mlbench 2.1-11 (which mlr3 needs) dropped PimaIndiansDiabetes.
mlbench_has_pima <- function() {
  "PimaIndiansDiabetes" %in% utils::data(package = "mlbench")$results[, "Item"]
}

data_dir <- function() {
  d <- Sys.getenv("KMAHA_DATA_DIR")
  if (!nzchar(d) || !dir.exists(d) ||
      !file.exists(file.path(d, "balance_scale.csv"))) {
    return(NULL)
  }
  d
}

read_shared <- function(dir, file) {
  utils::read.csv(file.path(dir, file), check.names = FALSE,
                  stringsAsFactors = FALSE)
}

expect_same_as_csv <- function(d, f) {
  expect_s3_class(d, "data.frame")
  expect_identical(names(d), names(f))
  expect_identical(nrow(d), nrow(f))
  expect_true(is.factor(d$class))
  expect_true(all(vapply(d[-ncol(d)], is.double, NA)))
  fm <- as.matrix(f[-ncol(f)])
  storage.mode(fm) <- "double"
  expect_identical(unname(as.matrix(d[-ncol(d)])), unname(fm))
  expect_identical(as.character(d$class), as.character(f$class))
}

test_that("paper_datasets() lists the nine datasets with the paper's sizes", {
  p <- paper_datasets()
  expect_identical(nrow(p), 9L)
  expect_setequal(p$label, c("Balance", "Breast Cancer", "Glass", "Ionosphere",
                             "Iris", "Musk2", "Pima", "Satellite", "Yeast"))
  expect_identical(p$n_train[p$name %in% c("glass", "iris")], c(100L, 100L))
  expect_true(all(p$n_train[!p$name %in% c("glass", "iris")] == 200L))
})

test_that("balance is generated exactly as the UCI file, without any file", {
  b <- kmaha_data("balance", path = NULL)
  expect_identical(dim(b), c(625L, 5L))
  expect_identical(names(b), c("left_weight", "left_distance", "right_weight",
                               "right_distance", "class"))
  expect_identical(as.vector(table(b$class)[c("L", "R", "B")]), c(288L, 288L, 49L))
  expect_identical(unname(unlist(b[1, 1:4])), c(1, 1, 1, 1))
  expect_identical(unname(unlist(b[2, 1:4])), c(1, 1, 1, 2))
  expect_identical(unname(unlist(b[625, 1:4])), c(5, 5, 5, 5))
  expect_identical(as.character(b$class[1:3]), c("B", "R", "R"))
  # right distance changes fastest, left weight slowest
  expect_identical(b$right_distance, rep(rep(1:5, 125), 1) + 0)
  expect_identical(b$left_weight, rep(1:5, each = 125) + 0)
  # label rule, row by row, against an independent comparison
  torque <- sign(b$left_weight * b$left_distance - b$right_weight * b$right_distance)
  expect_identical(as.character(b$class), c("R", "B", "L")[torque + 2])
  expect_identical(anyDuplicated(b[, 1:4]), 0L)
})

test_that("iris is datasets::iris with the class last", {
  d <- kmaha_data("iris", path = NULL)
  expect_identical(unname(as.matrix(d[, 1:4])), unname(as.matrix(iris[, 1:4])))
  expect_identical(d$class, iris$Species)
})

test_that("every dataset equals the shared CSV file exactly", {
  dir <- data_dir()
  skip_if(is.null(dir), "KMAHA_DATA_DIR does not point to the data files")
  for (nm in c("balance", "iris", "yeast", "musk2")) {
    f <- read_shared(dir, kmaha:::data_files[[nm]])
    expect_same_as_csv(kmaha_data(nm, path = dir, cache = FALSE), f)
  }
  skip_if_not_installed("mlbench")
  for (nm in c("breast_cancer", "glass", "ionosphere", "satellite",
               if (mlbench_has_pima()) "pima")) {
    f <- read_shared(dir, kmaha:::data_files[[nm]])
    expect_same_as_csv(kmaha_data(nm, path = NULL), f)
  }
})

test_that("pima comes from the CSV file when mlbench no longer ships it", {
  skip_if_not_installed("mlbench")
  skip_if(mlbench_has_pima(), "the installed mlbench still ships PimaIndiansDiabetes")
  expect_error(kmaha_data("pima", path = NULL),
               "dataset 'pima' is not in the installed 'mlbench' .*dropped in version 2.1-11.*pima.csv")
  dir <- data_dir()
  skip_if(is.null(dir), "KMAHA_DATA_DIR does not point to the data files")
  expect_same_as_csv(kmaha_data("pima", path = dir), read_shared(dir, "pima.csv"))
})

test_that("the UCI file parsers reproduce the shared CSV files", {
  dir <- data_dir()
  skip_if(is.null(dir), "KMAHA_DATA_DIR does not point to the data files")
  # yeast.data layout: name, 8 numbers, class, separated by blanks
  y <- read_shared(dir, "yeast.csv")
  raw <- tempfile()
  on.exit(unlink(raw), add = TRUE)
  lines <- do.call(paste, c(list(sprintf("SEQ%d_YEAST", seq_len(nrow(y)))),
                            lapply(y[1:8], function(v) formatC(v, format = "f", digits = 2)),
                            list(y$class), sep = "  "))
  writeLines(lines, raw)
  expect_same_as_csv(parse_uci_yeast(raw), y)
  # clean2.data layout: two names, f1..f166, class as 1. / 0.
  m <- read_shared(dir, "musk2.csv")
  raw2 <- tempfile()
  on.exit(unlink(raw2), add = TRUE)
  body <- do.call(paste, c(list("MUSK-1", "1_1+1"), as.list(m[1:166]),
                           list(ifelse(m$class == "musk", "1.", "0.")), sep = ","))
  writeLines(body, raw2)
  expect_same_as_csv(parse_uci_musk2(raw2), m)
  # the cache format round-trips
  out <- tempfile(fileext = ".csv")
  on.exit(unlink(out), add = TRUE)
  d <- kmaha_data("yeast", path = dir, cache = FALSE)
  write_data_csv(d, out)
  expect_identical(read_data_csv("yeast", out), d)
  expect_identical(readLines(out, n = 2), readLines(file.path(dir, "yeast.csv"), n = 2))
})

test_that("kmaha_data explains what to do when a dataset is unavailable", {
  withr_cache <- tempfile()
  old <- Sys.getenv("R_USER_CACHE_DIR", NA)
  Sys.setenv(R_USER_CACHE_DIR = withr_cache)
  on.exit(if (is.na(old)) Sys.unsetenv("R_USER_CACHE_DIR") else
    Sys.setenv(R_USER_CACHE_DIR = old), add = TRUE)
  empty <- tempfile()
  dir.create(empty)
  on.exit(unlink(empty, recursive = TRUE), add = TRUE)
  expect_error(kmaha_data("yeast", path = empty),
               "dataset 'yeast' is not in any R package and no local copy was found",
               fixed = TRUE)
  expect_error(kmaha_data("musk2", path = NULL),
               "call kmaha_data(\"musk2\", download = TRUE) to download it from the UCI repository",
               fixed = TRUE)
  expect_error(kmaha_data("musk2", path = NULL),
               "KMAHA_DATA_DIR", fixed = TRUE)
  bad <- file.path(empty, "yeast.csv")
  utils::write.csv(data.frame(a = 1:3, class = "x"), bad, row.names = FALSE)
  expect_error(kmaha_data("yeast", path = empty),
               "is not the 'yeast' dataset: expected 1484 rows of 8 numeric features",
               fixed = TRUE)
  expect_error(kmaha_data("wine"), "`name` must be one of 'balance'",
               fixed = TRUE)
  expect_error(kmaha_data(c("iris", "glass")), "`name` must be one of",
               fixed = TRUE)
  expect_error(kmaha_data("iris", download = NA),
               "`download` must be TRUE or FALSE.", fixed = TRUE)
  expect_error(kmaha_data("iris", path = 3),
               "`path` must be NULL or a single directory name.", fixed = TRUE)
})

test_that("the default path comes from the option, then KMAHA_DATA_DIR", {
  old_opt <- options(kmaha.data_path = "/some/where")
  on.exit(options(old_opt), add = TRUE)
  expect_identical(kmaha_data_path(), "/some/where")
  options(kmaha.data_path = NULL)
  old <- Sys.getenv("KMAHA_DATA_DIR", NA)
  on.exit(if (is.na(old)) Sys.unsetenv("KMAHA_DATA_DIR") else
    Sys.setenv(KMAHA_DATA_DIR = old), add = TRUE)
  Sys.setenv(KMAHA_DATA_DIR = "/else/where")
  expect_identical(kmaha_data_path(), "/else/where")
  Sys.unsetenv("KMAHA_DATA_DIR")
  expect_null(kmaha_data_path())
})
