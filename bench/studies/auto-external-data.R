# Data sets the project does not tune to.  Each loader returns list(x = numeric
# matrix, y = factor, n_train = training size per split, note = text).
suppressMessages({library(mlbench)})

num_frame <- function(d) {
  # factors -> model.matrix dummies (treatment coding), logicals -> 0/1
  for (nm in names(d)) if (is.logical(d[[nm]])) d[[nm]] <- as.numeric(d[[nm]])
  mm <- model.matrix(~ ., data = d)
  mm[, colnames(mm) != "(Intercept)", drop = FALSE]
}

load_set <- function(name) {
  switch(name,
    sonar = { e <- new.env(); data(Sonar, package = "mlbench", envir = e); d <- e$Sonar
      list(x = as.matrix(d[, 1:60]), y = d$Class, n_train = 120, note = "mlbench Sonar") },
    vehicle = { e <- new.env(); data(Vehicle, package = "mlbench", envir = e); d <- e$Vehicle
      list(x = as.matrix(d[, 1:18]), y = d$Class, n_train = 200, note = "mlbench Vehicle") },
    vowel = { e <- new.env(); data(Vowel, package = "mlbench", envir = e); d <- e$Vowel
      list(x = as.matrix(d[, 2:10]), y = d$Class, n_train = 200,
           note = "mlbench Vowel, speaker column V1 dropped") },
    zoo = { e <- new.env(); data(Zoo, package = "mlbench", envir = e); d <- e$Zoo
      list(x = num_frame(d[, names(d) != "type"]), y = d$type, n_train = 60,
           note = "mlbench Zoo (101 rows: 60 train, 41 test)") },
    votes = { e <- new.env(); data(HouseVotes84, package = "mlbench", envir = e); d <- e$HouseVotes84
      x <- sapply(d[, -1], function(v) ifelse(is.na(v), 0, ifelse(v == "y", 1, -1)))
      list(x = x, y = d$Class, n_train = 200,
           note = "mlbench HouseVotes84, votes recoded y = 1, n = -1, NA = 0") },
    dna = { e <- new.env(); data(DNA, package = "mlbench", envir = e); d <- e$DNA
      x <- sapply(d[, 1:180], function(v) as.numeric(as.character(v)))
      list(x = x, y = d$Class, n_train = 200, note = "mlbench DNA (180 binary columns)") },
    crabs = { e <- new.env(); data(crabs, package = "MASS", envir = e); d <- e$crabs
      list(x = as.matrix(d[, c("FL", "RW", "CL", "CW", "BD")]),
           y = interaction(d$sp, d$sex, drop = TRUE), n_train = 100,
           note = "MASS crabs, 4 classes = species x sex (100 train, 100 test)") },
    spam = { e <- new.env(); data(spam, package = "kernlab", envir = e); d <- e$spam
      list(x = as.matrix(d[, 1:57]), y = d$type, n_train = 200, note = "kernlab spam") },
    german = { e <- new.env(); data(GermanCredit, package = "caret", envir = e); d <- e$GermanCredit
      list(x = as.matrix(d[, names(d) != "Class"]), y = d$Class, n_train = 200,
           note = "caret GermanCredit (dummy-coded)") },
    segment = { e <- new.env(); data(segmentationData, package = "caret", envir = e); d <- e$segmentationData
      list(x = as.matrix(d[, !names(d) %in% c("Cell", "Case", "Class")]), y = d$Class,
           n_train = 200, note = "caret segmentationData (Cell, Case dropped)") },
    ringnorm = { set.seed(20261126); d <- mlbench.ringnorm(2200, d = 20)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.ringnorm(2200, d = 20), fixed pool") },
    spirals = { set.seed(20261127); d <- mlbench.spirals(1200, cycles = 1, sd = 0.05)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.spirals(1200, cycles = 1, sd = 0.05), fixed pool") },
    twonorm = { set.seed(20261128); d <- mlbench.twonorm(2200, d = 20)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.twonorm(2200, d = 20), fixed pool") },
    soybean = { e <- new.env(); data(Soybean, package = "mlbench", envir = e); d <- e$Soybean
      d <- d[stats::complete.cases(d), ]; d$Class <- droplevels(d$Class)
      for (nm in names(d)[-1]) d[[nm]] <- factor(d[[nm]], ordered = FALSE)
      list(x = num_frame(d[, -1]), y = d$Class, n_train = 200,
           note = "mlbench Soybean, rows with NA dropped (562 rows, 15 classes), factors dummy-coded") },
    shuttle = { e <- new.env(); data(Shuttle, package = "mlbench", envir = e); d <- e$Shuttle
      set.seed(20261129); i <- sort(sample.int(nrow(d), 5000))
      list(x = as.matrix(d[i, 1:9]), y = droplevels(d$Class[i]), n_train = 200,
           note = "mlbench Shuttle, fixed random subsample of 5000 rows") },
    mdrr = { e <- new.env(); data(mdrr, package = "caret", envir = e)
      list(x = as.matrix(e$mdrrDescr), y = e$mdrrClass, n_train = 200,
           note = "caret mdrr (342 descriptors; constant training columns dropped)") },
    oil = { e <- new.env(); data(oil, package = "caret", envir = e)
      list(x = as.matrix(e$fattyAcids), y = e$oilType, n_train = 60,
           note = "caret oil (fattyAcids, oilType; 96 rows: 60 train, 36 test)") },
    stop("unknown set ", name))
}

SETS <- c("sonar", "vehicle", "vowel", "crabs", "spam", "votes", "german",
          "segment", "dna", "zoo", "ringnorm", "spirals", "twonorm", "soybean", "shuttle", "mdrr", "oil")

# Stratified training rows: each class its proportional share (at least 2
# when it has 3 or more rows); test = the rest, at most 2000 drawn at random.
strat_split <- function(y, n_train, max_test = 2000) {
  idx <- split(seq_along(y), y)
  nt <- lengths(idx)
  want <- round(n_train * nt / sum(nt))
  want <- pmax(want, ifelse(nt >= 3, 2, pmin(1, nt)))
  tr <- unlist(lapply(seq_along(idx), function(j) {
    i <- idx[[j]]; i[sample.int(length(i), want[j])] }), use.names = FALSE)
  te <- setdiff(seq_along(y), tr)
  if (length(te) > max_test) te <- te[sample.int(length(te), max_test)]
  list(train = sort(tr), test = sort(te))
}

# A set of the development collection: one of the paper's nine (read from
# KMAHA_DATA_DIR, default ../shared/data) or one of SETS above.
load_dev_set <- function(s) {
  info <- kmaha::paper_datasets()
  if (s %in% info$name) {
    d <- kmaha::kmaha_data(s, path = Sys.getenv("KMAHA_DATA_DIR", "../shared/data"))
    return(list(x = as.matrix(d[, -ncol(d)]), y = d$class, n_train = info$n_train[info$name == s]))
  }
  load_set(s)
}

# One split of a loaded set d, drawn by strat_split() after set.seed(seed);
# columns constant on the training part dropped, the rest named v1, v2, ...
# Returns the rows (train, test), the raw parts (xtr, xte), both
# standardized on the training part (xs, xt) and the labels (ytr with
# unused levels dropped, yte).
split_standardized <- function(d, seed) {
  set.seed(seed)
  sp <- strat_split(d$y, d$n_train)
  xtr <- d$x[sp$train, , drop = FALSE]
  xte <- d$x[sp$test, , drop = FALSE]
  keep <- apply(xtr, 2, function(v) length(unique(v)) > 1)
  xtr <- xtr[, keep, drop = FALSE]
  xte <- xte[, keep, drop = FALSE]
  colnames(xtr) <- colnames(xte) <- paste0("v", seq_len(ncol(xtr)))
  xs <- scale(xtr)
  xt <- scale(xte, attr(xs, "scaled:center"), attr(xs, "scaled:scale"))
  attr(xs, "scaled:center") <- attr(xs, "scaled:scale") <- NULL
  list(train = sp$train, test = sp$test, xtr = xtr, xte = xte, xs = xs, xt = xt, ytr = droplevels(d$y[sp$train]),
       yte = d$y[sp$test])
}

