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

