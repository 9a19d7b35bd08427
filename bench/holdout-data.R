# Hold-out data sets for the default's cost and accuracy (bench/default-cost.R,
# bench/studies/default-holdout.R): classification sets from mlbench, MASS, caret,
# kernlab and modeldata that no kmaha session tuned a rule or a constant on.
# (The development sets are the paper's nine and bench/studies/auto-external-data.R's
# seventeen; nothing here is shared with them.)  Each loader returns
# list(x = numeric matrix, y = factor, n_train = training rows per split,
# note = where it comes from).  modeldata (Debian's r-cran-modeldata) is
# needed for the sets marked so; missing packages make a set unavailable,
# never fail the script (holdout_available()).
suppressMessages({library(mlbench)})

# factors -> treatment dummies, logicals -> 0/1, complete rows only
holdout_numeric <- function(d) {
  for (nm in names(d)) {
    if (is.logical(d[[nm]])) d[[nm]] <- as.numeric(d[[nm]])
    if (is.character(d[[nm]])) d[[nm]] <- factor(d[[nm]])
    if (is.factor(d[[nm]])) d[[nm]] <- factor(d[[nm]], ordered = FALSE)
  }
  mm <- stats::model.matrix(~ ., data = d)
  mm[, colnames(mm) != "(Intercept)", drop = FALSE]
}

holdout_pkg_data <- function(name, pkg) {
  e <- new.env()
  utils::data(list = name, package = pkg, envir = e)
  e[[name]]
}

holdout_sim <- function(seed, expr) {
  old <- if (exists(".Random.seed", globalenv())) get(".Random.seed", globalenv())
  on.exit(if (!is.null(old)) assign(".Random.seed", old, globalenv()))
  set.seed(seed)
  expr
}

holdout_load <- function(name) {
  switch(name,
    threenorm = holdout_sim(31, { d <- mlbench.threenorm(2200, d = 20)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.threenorm(2200, d = 20), fixed pool") }),
    waveform = holdout_sim(32, { d <- mlbench.waveform(2200)
      list(x = d$x, y = d$classes, n_train = 300, note = "mlbench.waveform(2200), fixed pool") }),
    circle = holdout_sim(33, { d <- mlbench.circle(1200, d = 2)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.circle(1200, d = 2), fixed pool") }),
    cassini = holdout_sim(34, { d <- mlbench.cassini(1200)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.cassini(1200), fixed pool") }),
    xor = holdout_sim(35, { d <- mlbench.xor(1200, d = 3)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.xor(1200, d = 3), fixed pool") }),
    smiley = holdout_sim(36, { d <- mlbench.smiley(1200, sd1 = 0.1, sd2 = 0.2)
      x <- unname(d$x)  # mlbench names its columns "x4" and ""
      list(x = x, y = d$classes, n_train = 200, note = "mlbench.smiley(1200, 0.1, 0.2), fixed pool") }),
    synth = { tr <- holdout_pkg_data("synth.tr", "MASS"); te <- holdout_pkg_data("synth.te", "MASS")
      d <- rbind(tr, te)
      list(x = as.matrix(d[, c("xs", "ys")]), y = factor(d$yc), n_train = 250,
           note = "MASS synth.tr + synth.te (Ripley's synthetic data, 1250 rows)") },
    penguins = { d <- holdout_pkg_data("penguins", "modeldata"); d <- d[stats::complete.cases(d), ]
      list(x = holdout_numeric(d[, names(d) != "species"]), y = droplevels(d$species), n_train = 200,
           note = "modeldata penguins, complete rows, island/sex dummy-coded") },
    cells = { d <- holdout_pkg_data("cells", "modeldata")
      list(x = as.matrix(d[, !names(d) %in% c("case", "class")]), y = d$class, n_train = 300,
           note = "modeldata cells (case column dropped)") },
    hpc = { d <- holdout_pkg_data("hpc_data", "modeldata")
      list(x = holdout_numeric(d[, names(d) != "class"]), y = d$class, n_train = 300,
           note = "modeldata hpc_data, protocol and day dummy-coded") },
    attrition = { d <- holdout_pkg_data("attrition", "modeldata")
      list(x = holdout_numeric(d[, names(d) != "Attrition"]), y = d$Attrition, n_train = 300,
           note = "modeldata attrition, factors dummy-coded") },
    ad = { d <- holdout_pkg_data("ad_data", "modeldata")
      list(x = holdout_numeric(d[, names(d) != "Class"]), y = d$Class, n_train = 200,
           note = "modeldata ad_data (Alzheimer's), Genotype dummy-coded") },
    pd_speech = { d <- holdout_pkg_data("pd_speech", "modeldata")
      list(x = as.matrix(d[, names(d) != "class"]), y = d$class, n_train = 150,
           note = "modeldata pd_speech (252 subjects, 751 features)") },
    two_class = { d <- holdout_pkg_data("two_class_dat", "modeldata")
      list(x = as.matrix(d[, c("A", "B")]), y = d$Class, n_train = 300, note = "modeldata two_class_dat") },
    cox2 = { e <- new.env(); utils::data(cox2, package = "caret", envir = e)
      list(x = as.matrix(e$cox2Descr), y = e$cox2Class, n_train = 300,
           note = "caret cox2 (255 descriptors)") },
    dhfr = { d <- holdout_pkg_data("dhfr", "caret")
      list(x = as.matrix(d[, names(d) != "Y"]), y = d$Y, n_train = 200, note = "caret dhfr (228 descriptors)") },
    promoter = { d <- holdout_pkg_data("promotergene", "kernlab")
      list(x = holdout_numeric(d[, names(d) != "Class"]), y = d$Class, n_train = 70,
           note = "kernlab promotergene (57 nucleotide factors dummy-coded; 106 rows: 70 train)") },
    letter = holdout_sim(37, { d <- holdout_pkg_data("LetterRecognition", "mlbench")
      i <- sort(sample.int(nrow(d), 4000))
      list(x = as.matrix(d[i, -1]), y = droplevels(d$lettr[i]), n_train = 400,
           note = "mlbench LetterRecognition, fixed random 4000 rows") }),
    stop("unknown set ", name))
}

HOLDOUT_SETS <- c("threenorm", "waveform", "circle", "cassini", "xor", "smiley", "synth",
                  "penguins", "cells", "hpc", "attrition", "ad", "pd_speech", "two_class",
                  "cox2", "dhfr", "promoter", "letter")

holdout_available <- function(name) {
  !inherits(tryCatch(holdout_load(name), error = function(e) e), "error")
}

# Stratified training rows (each class its proportional share, at least 2
# when it has 3 or more rows); test = the rest, at most `max_test` at random.
holdout_split <- function(y, n_train, max_test = 2000) {
  idx <- split(seq_along(y), y)
  nt <- lengths(idx)
  want <- round(n_train * nt / sum(nt))
  want <- pmin(pmax(want, ifelse(nt >= 3, 2, pmin(1, nt))), nt - 1L)
  tr <- unlist(lapply(seq_along(idx), function(j) {
    i <- idx[[j]]; i[sample.int(length(i), want[j])] }), use.names = FALSE)
  te <- setdiff(seq_along(y), tr)
  if (length(te) > max_test) te <- te[sample.int(length(te), max_test)]
  list(train = sort(tr), test = sort(te))
}

# One split of a set: training and test inputs with the columns that are
# constant on the training rows dropped.
holdout_split_data <- function(d, seed) {
  set.seed(seed)
  sp <- holdout_split(d$y, d$n_train)
  xtr <- d$x[sp$train, , drop = FALSE]
  keep <- apply(xtr, 2, function(v) length(unique(v)) > 1)
  list(xtr = xtr[, keep, drop = FALSE], ytr = droplevels(d$y[sp$train]),
       xte = d$x[sp$test, keep, drop = FALSE], yte = d$y[sp$test])
}
