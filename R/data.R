#' The paper's benchmark datasets
#'
#' `paper_datasets()` lists the nine UCI datasets of the paper's experiments
#' with the labels used in its tables and the training-set sizes of its
#' random splits (200 points, 100 for Glass and Iris; the rest is the test
#' set).
#'
#' @return A data frame with columns `name` (for [kmaha_data()]), `label`,
#'   `n_train` and `source` (where [kmaha_data()] gets the data).
#' @seealso [kmaha_data()]
#' @examples
#' paper_datasets()
#' @export
paper_datasets <- function() {
  data.frame(
    name = c("balance", "breast_cancer", "glass", "ionosphere", "iris",
             "musk2", "pima", "satellite", "yeast"),
    label = c("Balance", "Breast Cancer", "Glass", "Ionosphere", "Iris",
              "Musk2", "Pima", "Satellite", "Yeast"),
    n_train = c(200L, 200L, 100L, 200L, 100L, 200L, 200L, 200L, 200L),
    source = c("generated", "mlbench", "mlbench", "mlbench", "datasets",
               "file or UCI download", "mlbench", "mlbench",
               "file or UCI download"),
    stringsAsFactors = FALSE)
}

#' Load one of the paper's datasets
#'
#' Returns one of the nine datasets of the paper's experiments as a data
#' frame of numeric (double) feature columns followed by a factor `class`.
#' The values are exactly those of the CSV files described in the data
#' README of the project (rows in source order, nothing scaled).
#'
#' * `"iris"`: [datasets::iris].
#' * `"balance"`: generated. UCI Balance Scale is exactly the 625
#'   combinations of left weight, left distance, right weight and right
#'   distance in 1..5 (the right distance changing fastest), labelled `L`,
#'   `B` or `R` as the left torque is larger, equal or smaller.
#' * `"breast_cancer"`, `"glass"`, `"ionosphere"`, `"pima"`, `"satellite"`:
#'   from the \pkg{mlbench} package (which must be installed), with the
#'   preprocessing of the README: Breast Cancer without `Id`, scores as
#'   integers and the 16 incomplete rows dropped; Ionosphere with `V1` as a
#'   number and the constant `V2` dropped; Satellite labels with spaces
#'   replaced by underscores. Without \pkg{mlbench}, or for `"pima"` with
#'   \pkg{mlbench} 2.1-11 or later (which no longer ships the Pima Indians
#'   data), the CSV file in `path` is read instead, when present.
#' * `"yeast"` and `"musk2"` (not in any R package): read from the CSV file
#'   (`yeast.csv`, `musk2.csv`) in the directory `path`, or from the cache,
#'   or, with `download = TRUE`, downloaded from the UCI repository
#'   (`yeast.data`; `clean2.data.Z`, which needs the `gzip` or `uncompress`
#'   program), converted to the same form and, with `cache = TRUE`, stored
#'   as a CSV file in `tools::R_user_dir("kmaha", "cache")` for later calls.
#'
#' @param name A dataset name from `paper_datasets()$name`.
#' @param path Directory of the project's CSV files (`balance_scale.csv`,
#'   `yeast.csv`, ...). Defaults to the option `kmaha.data_path`, else the
#'   environment variable `KMAHA_DATA_DIR`.
#' @param cache Use (and fill) the per-user cache directory for downloaded
#'   datasets.
#' @param download Allow downloading `"yeast"` or `"musk2"` from the UCI
#'   repository when no local copy is found.
#' @return A data frame: numeric features, then the factor `class`.
#' @seealso [paper_datasets()]
#' @examples
#' bal <- kmaha_data("balance")
#' table(bal$class)
#' head(kmaha_data("iris"))
#' @export
kmaha_data <- function(name, path = kmaha_data_path(), cache = TRUE,
                       download = FALSE) {
  known <- paper_datasets()$name
  if (!is.character(name) || length(name) != 1L || is.na(name) ||
      !name %in% known) {
    stopf("`name` must be one of %s.", paste(sQuote(known, FALSE), collapse = ", "))
  }
  if (!is.null(path) && (!is.character(path) || length(path) != 1L || is.na(path))) {
    stopf("`path` must be NULL or a single directory name.")
  }
  cache <- check_flag(cache, "cache")
  download <- check_flag(download, "download")
  switch(name,
    iris = data_iris(),
    balance = data_balance(),
    yeast = ,
    musk2 = data_uci(name, path, cache, download),
    data_mlbench(name, path))
}

# Default directory of the CSV files: option, then environment variable.
kmaha_data_path <- function() {
  p <- getOption("kmaha.data_path")
  if (is.null(p)) p <- Sys.getenv("KMAHA_DATA_DIR")
  if (!nzchar(p)) NULL else p
}

data_files <- c(balance = "balance_scale.csv", breast_cancer = "breast_cancer.csv",
                glass = "glass.csv", ionosphere = "ionosphere.csv",
                iris = "iris.csv", musk2 = "musk2.csv", pima = "pima.csv",
                satellite = "satellite.csv", yeast = "yeast.csv")

# Features (as doubles) then the class factor; row names 1..n.
finish_data <- function(features, class, levels = sort(unique(class))) {
  features <- as.data.frame(lapply(features, as.double), optional = TRUE)
  out <- features
  out$class <- factor(as.character(class), levels = levels)
  rownames(out) <- NULL
  out
}

data_iris <- function() {
  ir <- datasets::iris
  finish_data(ir[, 1:4], ir$Species, levels(ir$Species))
}

data_balance <- function() {
  # expand.grid varies its first argument fastest: right distance fastest,
  # left weight slowest, as in the UCI file.
  g <- expand.grid(right_distance = 1:5, right_weight = 1:5,
                   left_distance = 1:5, left_weight = 1:5)
  g <- g[, c("left_weight", "left_distance", "right_weight", "right_distance")]
  left <- g$left_weight * g$left_distance
  right <- g$right_weight * g$right_distance
  class <- ifelse(left > right, "L", ifelse(left < right, "R", "B"))
  finish_data(g, class, c("B", "L", "R"))
}

data_mlbench <- function(name, path) {
  file <- if (!is.null(path)) file.path(path, data_files[[name]])
  has_file <- !is.null(file) && file.exists(file)
  if (!requireNamespace("mlbench", quietly = TRUE)) {
    if (has_file) return(read_data_csv(name, file))
    stopf("dataset %s comes from the 'mlbench' package, which is not installed. Install it with install.packages(\"mlbench\"), or point `path` (option \"kmaha.data_path\" or KMAHA_DATA_DIR) to a directory holding %s.",
          sQuote(name, FALSE), data_files[[name]])
  }
  src <- switch(name, breast_cancer = "BreastCancer", glass = "Glass",
                ionosphere = "Ionosphere", pima = "PimaIndiansDiabetes",
                satellite = "Satellite")
  # mlbench 2.1-11 dropped PimaIndiansDiabetes: then the CSV file is the
  # only source.
  if (!src %in% utils::data(package = "mlbench")$results[, "Item"]) {
    if (has_file) return(read_data_csv(name, file))
    stopf("dataset %s is not in the installed 'mlbench' %s (%s was dropped in version 2.1-11). Point `path` (option \"kmaha.data_path\" or KMAHA_DATA_DIR) to a directory holding %s.",
          sQuote(name, FALSE), format(utils::packageVersion("mlbench")), src,
          data_files[[name]])
  }
  env <- new.env()
  utils::data(list = src, package = "mlbench", envir = env)
  d <- get(src, envir = env)
  factor_number <- function(f) as.numeric(as.character(f))
  switch(name,
    breast_cancer = {
      d <- d[, names(d) != "Id"]
      d <- d[stats::complete.cases(d), ]
      feats <- as.data.frame(lapply(d[, 1:9], factor_number))
      finish_data(feats, d$Class, levels(d$Class))
    },
    glass = finish_data(d[, 1:9], d$Type, levels(d$Type)),
    ionosphere = {
      feats <- d[, setdiff(names(d), c("V2", "Class"))]
      feats$V1 <- factor_number(feats$V1)
      finish_data(feats, d$Class, levels(d$Class))
    },
    pima = finish_data(d[, 1:8], d$diabetes, levels(d$diabetes)),
    satellite = {
      lev <- gsub(" ", "_", levels(d$classes), fixed = TRUE)
      finish_data(d[, 1:36], gsub(" ", "_", as.character(d$classes), fixed = TRUE), lev)
    })
}

# Expected shape of the datasets read from files (a guard against pointing
# `path` at the wrong directory).
data_shapes <- list(yeast = c(1484L, 8L), musk2 = c(6598L, 166L),
                    balance = c(625L, 4L), breast_cancer = c(683L, 9L),
                    glass = c(214L, 9L), ionosphere = c(351L, 33L),
                    iris = c(150L, 4L), pima = c(768L, 8L),
                    satellite = c(6435L, 36L))

data_levels <- list(musk2 = c("musk", "non-musk"),
                    yeast = c("CYT", "ERL", "EXC", "ME1", "ME2", "ME3", "MIT",
                              "NUC", "POX", "VAC"))

# A CSV file in the project's format: features, then `class`.
read_data_csv <- function(name, file) {
  d <- utils::read.csv(file, header = TRUE, check.names = FALSE,
                       stringsAsFactors = FALSE, strip.white = FALSE)
  shape <- data_shapes[[name]]
  if (!identical(names(d)[ncol(d)], "class") ||
      !identical(dim(d), c(shape[1], shape[2] + 1L)) ||
      !all(vapply(d[-ncol(d)], is.numeric, NA))) {
    stopf("%s is not the %s dataset: expected %d rows of %d numeric features and a last column `class`.",
          file, sQuote(name, FALSE), shape[1], shape[2])
  }
  lev <- data_levels[[name]] %||% sort(unique(d$class))
  finish_data(d[-ncol(d)], d$class, lev)
}

uci_urls <- c(
  yeast = "https://archive.ics.uci.edu/ml/machine-learning-databases/yeast/yeast.data",
  musk2 = "https://archive.ics.uci.edu/ml/machine-learning-databases/musk/clean2.data.Z")

data_uci <- function(name, path, cache, download) {
  csv <- data_files[[name]]
  if (!is.null(path) && file.exists(file.path(path, csv))) {
    return(read_data_csv(name, file.path(path, csv)))
  }
  cache_dir <- tools::R_user_dir("kmaha", "cache")
  if (cache && file.exists(file.path(cache_dir, csv))) {
    return(read_data_csv(name, file.path(cache_dir, csv)))
  }
  if (!download) {
    stopf("dataset %s is not in any R package and no local copy was found%s. Either point `path` (or option \"kmaha.data_path\", or the environment variable KMAHA_DATA_DIR) to a directory holding %s, or call kmaha_data(\"%s\", download = TRUE) to download it from the UCI repository%s.",
          sQuote(name, FALSE),
          if (is.null(path)) "" else sprintf(" (looked for %s)", file.path(path, csv)),
          csv, name,
          if (cache) sprintf(" into the cache %s", cache_dir) else "")
  }
  raw <- tempfile(fileext = paste0(".", tools::file_ext(uci_urls[[name]])))
  on.exit(unlink(raw), add = TRUE)
  ok <- tryCatch(utils::download.file(uci_urls[[name]], raw, mode = "wb",
                                      quiet = TRUE) == 0L,
                 error = function(e) FALSE, warning = function(w) FALSE)
  if (!ok || !file.exists(raw)) {
    stopf("could not download %s from %s. Check the network connection, or download the file yourself and convert it, or use `path` with a directory holding %s.",
          sQuote(name, FALSE), uci_urls[[name]], csv)
  }
  d <- switch(name, yeast = parse_uci_yeast(raw), musk2 = parse_uci_musk2(raw))
  if (cache) {
    dir.create(cache_dir, recursive = TRUE, showWarnings = FALSE)
    write_data_csv(d, file.path(cache_dir, csv))
  }
  d
}

# UCI yeast.data: whitespace separated sequence name, 8 numbers, class.
parse_uci_yeast <- function(file) {
  d <- utils::read.table(file, header = FALSE, stringsAsFactors = FALSE,
                         colClasses = c("character", rep("numeric", 8), "character"))
  if (nrow(d) != 1484L) {
    stopf("%s does not look like UCI yeast.data (%d rows, expected 1484).",
          file, nrow(d))
  }
  feats <- d[, 2:9]
  names(feats) <- c("mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc")
  finish_data(feats, d[[10]], data_levels$yeast)
}

# UCI clean2.data(.Z): molecule name, conformation name, f1..f166, class
# (1 = musk, 0 = non-musk), comma separated.
parse_uci_musk2 <- function(file) {
  if (grepl("\\.Z$", file)) file <- uncompress_z(file)
  d <- utils::read.csv(file, header = FALSE, stringsAsFactors = FALSE,
                       colClasses = c("character", "character", rep("numeric", 167)))
  if (nrow(d) != 6598L) {
    stopf("%s does not look like UCI clean2.data (%d rows, expected 6598).",
          file, nrow(d))
  }
  feats <- d[, 3:168]
  names(feats) <- paste0("f", 1:166)
  finish_data(feats, ifelse(d[[169]] == 1, "musk", "non-musk"),
              data_levels$musk2)
}

# Unix-compress (.Z) files: R cannot read them, gzip -d and uncompress can.
uncompress_z <- function(file) {
  out <- tempfile(fileext = ".data")
  tool <- Sys.which(c("gzip", "uncompress"))
  tool <- tool[nzchar(tool)]
  if (!length(tool)) {
    stopf("%s is compressed with Unix compress (.Z); decompressing it needs the `gzip` or `uncompress` program, neither of which was found.",
          file)
  }
  status <- system2(tool[1], c("-dc", shQuote(file)), stdout = out, stderr = FALSE)
  if (!identical(as.integer(status), 0L) || !file.exists(out)) {
    stopf("could not decompress %s with %s.", file, names(tool)[1])
  }
  out
}

# The project's CSV format: header, plain decimals, no quotes, LF endings.
write_data_csv <- function(d, file) {
  old <- options(scipen = 100)
  on.exit(options(old), add = TRUE)
  d$class <- as.character(d$class)
  utils::write.csv(d, file, row.names = FALSE, quote = FALSE)
  invisible(file)
}
