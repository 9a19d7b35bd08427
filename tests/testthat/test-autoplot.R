# Pictures: what autoplot() draws is the result it is given, legends are
# outside the data, and they fit the device with many classes.  Base plots
# report where their plot regions and legends are (internal helpers).

iris_x <- scale(as.matrix(iris[, 1:4]))

# Fifty classes of eight points each, in three dimensions.
many_classes <- function(p = 50, n = 400) {
  set.seed(1)
  y <- factor(sprintf("class_%02d", rep(seq_len(p), length.out = n)))
  x <- matrix(rnorm(n * 3), n, 3) + as.integer(y) / 5
  dne(x, y, k = 2, dim = 2)
}

# One small reproduction, shared by the tests below.
small_repro <- local({
  res <- NULL
  function() {
    if (is.null(res)) {
      res <<- reproduce_paper(datasets = "iris", learners = c("dne", "lmnn"),
                              kernels = c("linear", "unweighted"), splits = 2)
    }
    res
  }
})

# Evaluates `code` with a null device of the given size (inches) open.
with_device <- function(code, width = 7, height = 5) {
  grDevices::pdf(NULL, width = width, height = height)
  dev <- grDevices::dev.cur()
  on.exit(grDevices::dev.off(dev), add = TRUE)
  code
}

# The box of the legend of a built ggplot and of its panels, in inches
# from the bottom left of the device.
gg_boxes <- function(p, width = 7, height = 5) {
  grDevices::pdf(NULL, width = width, height = height)
  dev <- grDevices::dev.cur()
  on.exit(grDevices::dev.off(dev), add = TRUE)
  g <- ggplot2::ggplotGrob(p)
  widths <- grid::convertWidth(g$widths, "in", valueOnly = TRUE)
  heights <- grid::convertHeight(g$heights, "in", valueOnly = TRUE)
  # null units (the panels) share what is left
  null_w <- grid::unitType(g$widths) == "null"
  null_h <- grid::unitType(g$heights) == "null"
  widths[null_w] <- (width - sum(widths[!null_w])) / sum(null_w)
  heights[null_h] <- (height - sum(heights[!null_h])) / sum(null_h)
  box <- function(name) {
    lay <- g$layout[grepl(name, g$layout$name), , drop = FALSE]
    c(left = sum(widths[seq_len(min(lay$l) - 1L)]), right = sum(widths[seq_len(max(lay$r))]),
      top = height - sum(heights[seq_len(min(lay$t) - 1L)]),
      bottom = height - sum(heights[seq_len(max(lay$b))]))
  }
  gb <- g$grobs[[which(g$layout$name == "guide-box")]]
  list(panel = box("^panel"), legend_cell = box("^guide-box$"),
       legend_w = grid::convertWidth(grid::grobWidth(gb), "in", valueOnly = TRUE),
       legend_h = grid::convertHeight(grid::grobHeight(gb), "in", valueOnly = TRUE))
}

test_that("autoplot() of a model draws the embedding with equal scales, coloured by class", {
  skip_if_not_installed("ggplot2")
  fit <- kdne(Species ~ ., data = iris, kernel = rbf_kernel(1), dim = 2)
  p <- ggplot2::autoplot(fit)
  expect_s3_class(p, "ggplot")
  expect_s3_class(p$coordinates, "CoordFixed")
  expect_identical(p$coordinates$ratio, 1)
  b <- ggplot2::ggplot_build(p)
  d <- b$data[[1]]
  expect_equal(d$x, unname(fit$embedding[, 1]))
  expect_equal(d$y, unname(fit$embedding[, 2]))
  expect_identical(length(unique(d$colour)), 3L)
  expect_identical(p$labels$title, "KDNE embedding")
  # the legend is beside the panel, not on it
  boxes <- gg_boxes(p)
  expect_gte(boxes$legend_cell["left"], boxes$panel["right"])
  # other coordinates, and a one-dimensional map as strips
  fit3 <- dne(iris_x, iris$Species, dim = 3)
  d2 <- ggplot2::ggplot_build(ggplot2::autoplot(fit3, dims = c(3, 1)))$data[[1]]
  expect_equal(d2$x, unname(fit3$embedding[, 3]))
  fit1 <- dne(iris_x, iris$Species, dim = 1)
  d1 <- ggplot2::ggplot_build(ggplot2::autoplot(fit1))$data[[1]]
  expect_equal(d1$x, unname(fit1$embedding[, 1]))
  expect_error(ggplot2::autoplot(fit3, dims = c(1, 4)),
               "`dims` must be two coordinates between 1 and 3.", fixed = TRUE)
  expect_error(ggplot2::autoplot(fit3, which = "kernel"),
               "`which = \"kernel\"` needs a kmaha() fit whose kernel was chosen by alignment or cross-validation (this one: no kernel choice).",
               fixed = TRUE)
})

test_that("autoplot()'s class legend stays on the device and off the panel with 50 classes", {
  skip_if_not_installed("ggplot2")
  fit <- many_classes()
  p <- ggplot2::autoplot(fit)
  expect_equal(p$guides$colour$ncol, 3)
  for (size in list(c(7, 5), c(6, 4))) {
    boxes <- gg_boxes(p, size[1], size[2])
    expect_gte(boxes$legend_cell["left"], boxes$panel["right"])
    expect_lte(boxes$legend_h, size[2])
    expect_lte(boxes$legend_cell["right"], size[1])
    expect_lt(boxes$legend_w, size[1] / 2)
  }
})

test_that("autoplot() of a cross-validation draws the curve, the reference lines and the choice", {
  skip_if_not_installed("ggplot2")
  kern <- lapply(10^c(-1.5, -1, -0.5, 0, 0.5), rbf_kernel)
  fit <- kmaha(iris_x, iris$Species, learner = "dne", kernel = "auto", kernels = kern,
               cv_folds = 3, seed = 2, cv_strategy = "exhaustive")
  cv <- fit$kernel_choice$cv
  p <- ggplot2::autoplot(fit, which = "kernel")
  b <- ggplot2::ggplot_build(p)
  geoms <- vapply(p$layers, function(l) class(l$geom)[1], "")
  pts <- b$data[[which(geoms == "GeomPoint")[1]]]
  ker <- cv$curve$kind == "kernel"
  expect_equal(pts$x, log10(cv$curve$sigma[ker]))
  expect_equal(pts$y, cv$curve$mean[ker])
  bars <- b$data[[which(geoms == "GeomErrorbar")]]
  sdv <- ifelse(is.na(cv$curve$sd[ker]), 0, cv$curve$sd[ker])
  expect_equal(bars$ymax - bars$ymin, 2 * sdv)
  # the linear learner, the unweighted sum and the aligned kernel as lines
  hl <- do.call(rbind, b$data[which(geoms == "GeomHline")])
  expect_true(all(cv$curve$mean[!ker] %in% hl$yintercept))
  # the chosen candidate is marked in red
  red <- do.call(rbind, lapply(b$data, function(d) d[d$colour %in% "red", c("x", "y")[c("x", "y") %in% names(d)], drop = FALSE]))
  chosen <- cv$curve[cv$best, ]
  if (chosen$kind == "kernel") {
    expect_equal(red$x, log10(chosen$sigma))
  } else {
    expect_equal(hl$yintercept[hl$colour == "red"], chosen$mean)
  }
  # only bandwidth-free candidates: a discrete axis
  cvp <- cv_kernel(iris_x, iris$Species, "dne", list(poly_kernel(2), poly_kernel(3)),
                   folds = 3, seed = 1)
  bp <- ggplot2::ggplot_build(ggplot2::autoplot(cvp))
  expect_identical(nrow(bp$data[[2]]), 2L)
})

test_that("autoplot() of an alignment draws each kernel's share", {
  skip_if_not_installed("ggplot2")
  al <- align_kernels(iris_x, iris$Species, lapply(c(0.3, 1, 3), rbf_kernel))
  d <- ggplot2::ggplot_build(ggplot2::autoplot(al))$data[[1]]
  expect_equal(d$ymax, al$gamma / sum(al$gamma))
})

test_that("autoplot() of a reproduction puts each cell at the paper's and kmaha's accuracy", {
  skip_if_not_installed("ggplot2")
  res <- small_repro()
  s <- summary(res)
  p <- ggplot2::autoplot(res)
  b <- ggplot2::ggplot_build(p)
  geoms <- vapply(p$layers, function(l) class(l$geom)[1], "")
  pts <- b$data[[which(geoms == "GeomPoint")]]
  expect_identical(nrow(pts), 4L)
  expect_setequal(paste(round(pts$x, 6), round(pts$y, 6)),
                  paste(round(s$paper_mean, 6), round(s$mean, 6)))
  expect_identical(levels(b$layout$layout$learner), c("LMNN", "DNE"))
  boxes <- gg_boxes(p, 8, 4)
  expect_gte(boxes$legend_cell["left"], boxes$panel["right"])
})

test_that("base plots keep their legends outside the data and on the device", {
  fit <- many_classes()
  for (size in list(c(7, 5), c(5, 4))) {
    r <- with_device(kmaha:::plot_embedding(fit$embedding, fit$y), size[1], size[2])
    expect_gte(r$legend[["left"]], r$plot[["right"]])
    expect_true(all(r$legend >= 0 & r$legend <= 1))
  }
  kd <- kdne(Species ~ ., data = iris, kernel = rbf_kernel(1), dim = 2)
  r <- with_device(kmaha:::plot_embedding(kd$embedding, kd$y))
  expect_gte(r$legend[["left"]], r$plot[["right"]])
  expect_identical(with_device(plot(kd)), kd)
})

test_that("plot() of a reproduction draws kmaha against the paper, legend apart", {
  res <- small_repro()
  expect_identical(with_device(plot(res), 9, 4), res)
  r <- with_device(kmaha:::plot_reproduction(kmaha:::reproduction_cells(res),
                                             kmaha:::repro_kernel_colours), 9, 4)
  expect_identical(names(r$panels), c("LMNN", "DNE"))
  for (pan in r$panels) expect_gte(r$legend[["left"]], pan[["right"]])
  expect_true(all(r$legend >= 0 & r$legend <= 1))
  expect_error(with_device(plot(res, col = c(linear = "black"))),
               "`col` must name a colour for each kernel column: linear, unweighted.",
               fixed = TRUE)
  shipped <- system.file("extdata", "paper_reproduction.csv", package = "kmaha")
  skip_if_not(nzchar(shipped), "the shipped reproduction is not installed")
  expect_s3_class(with_device(plot(paper_reproduction()), 9, 4), "kmaha_reproduction")
})
