# The regression sets of bench/mlkr.R and bench/studies/mlkr-defaults.R
# (sourced by both; needs mlbench): BostonHousing, Friedman 1 and 2 (500
# rows each), and Friedman 1 with 40 more uniform noise columns (400 rows,
# D = 50).
datasets <- function() {
  e <- new.env()
  utils::data("BostonHousing", package = "mlbench", envir = e)
  bh <- e$BostonHousing
  bh$chas <- as.numeric(as.character(bh$chas))
  set.seed(1)
  f1 <- mlbench::mlbench.friedman1(500, sd = 1)
  set.seed(2)
  f2 <- mlbench::mlbench.friedman2(500, sd = 125)
  # Friedman 1 with 40 more uniform noise columns (D = 50)
  set.seed(3)
  f1n <- mlbench::mlbench.friedman1(400, sd = 1)
  list(
    BostonHousing = list(x = as.matrix(bh[, names(bh) != "medv"]), y = bh$medv),
    friedman1 = list(x = f1$x, y = f1$y),
    friedman2 = list(x = f2$x, y = f2$y),
    friedman1_noise40 = list(x = cbind(f1n$x, matrix(stats::runif(400 * 40), 400, 40)),
                             y = f1n$y))
}


# The development sets of the regression default (bench/studies/
# regression-margin.R, regression-screen.R and regression-kgrid.R): the
# four above, plus Friedman 3 and mlbench's "peak" (D = 10), at most 400
# rows each (drawn once, seed 1).
dev_datasets <- function() {
  dev <- datasets()
  set.seed(4)
  f3 <- mlbench::mlbench.friedman3(400, sd = 0.1)
  set.seed(5)
  pk <- mlbench::mlbench.peak(400, d = 10)
  dev$friedman3 <- list(x = f3$x, y = f3$y)
  dev$peak <- list(x = pk$x, y = pk$y)
  lapply(dev, function(s) {
    if (nrow(s$x) > 400L) {
      set.seed(1)
      i <- sort(sample.int(nrow(s$x), 400L))
      s$x <- s$x[i, , drop = FALSE]
      s$y <- s$y[i]
    }
    s
  })
}

# Split `sp` of a development set: 75% of the rows for training, drawn with
# seed 50 + sp.
dev_split <- function(s, sp) {
  set.seed(50 + sp)
  sort(sample.int(nrow(s$x), round(0.75 * nrow(s$x))))
}

# f(name, set, split, training rows) for every development set and splits
# 1-3, its data frames bound by rows.
each_dev_split <- function(f) {
  dev <- dev_datasets()
  out <- list()
  for (nm in names(dev)) for (sp in 1:3) {
    out[[length(out) + 1L]] <- f(nm, dev[[nm]], sp, dev_split(dev[[nm]], sp))
  }
  do.call(rbind, out)
}
