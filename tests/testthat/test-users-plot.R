# plot() of cross-validation results (issue 27): it draws whether or not the
# fast strategy dropped kernels, for cv_kernel(), kernel = "cv" and the
# default "auto", and its legend explains the chosen candidate's red mark.

# The text drawn by `code` on a null device: the strings of its display
# list (titles, axis labels, legend entries).
drawn_text <- function(code) {
  grDevices::pdf(NULL, width = 7, height = 5)
  dev <- grDevices::dev.cur()
  on.exit(grDevices::dev.off(dev), add = TRUE)
  grDevices::dev.control("enable")
  force(code)
  strings <- function(x) {
    if (is.character(x)) return(unname(x))
    if (is.list(x) || is.pairlist(x)) return(unlist(lapply(as.list(x), strings)))
    NULL
  }
  strings(grDevices::recordPlot()[[1]])
}

small_kernels <- function() lapply(c(0.01, 0.5, 1, 5), rbf_kernel)

test_that("plot() of a fast CV that dropped kernels draws, with a legend for the choice", {
  cv <- cv_kernel(scale(iris[, 1:4]), iris$Species, "dne", kernels = small_kernels(),
                  folds = 3, seed = 1)
  expect_true(any(cv$curve$dropped))
  txt <- drawn_text(expect_identical(plot(cv), cv))
  expect_true(paste("chosen:", cv$curve$label[cv$best]) %in% txt)
  # the legend names the crosses only when one is drawn: kernels the screen
  # dropped were never scored (no mean, no cross)
  drawn_cross <- any(cv$curve$dropped & cv$curve$kind == "kernel" & !is.na(cv$curve$mean))
  expect_identical("not scored by the learner (screened out)" %in% txt, drawn_cross)
})

test_that("plot() of an exhaustive CV (nothing dropped) draws and names the choice", {
  cv <- cv_kernel(scale(iris[, 1:4]), iris$Species, "dne", kernels = small_kernels(),
                  folds = 3, seed = 1, strategy = "exhaustive")
  expect_false(any(cv$curve$dropped))
  txt <- drawn_text(plot(cv))
  expect_true(paste("chosen:", cv$curve$label[cv$best]) %in% txt)
  expect_false("not scored by the learner (screened out)" %in% txt)
})

test_that("the default cv_kernel() example of the issue plots", {
  cv <- cv_kernel(scale(iris[, 1:4]), iris$Species, seed = 1)
  expect_true(any(cv$curve$dropped))
  txt <- drawn_text(plot(cv))
  expect_true(paste("chosen:", cv$curve$label[cv$best]) %in% txt)
})

test_that("plot(which = \"kernel\") of kmaha() fits with kernel = \"cv\" and \"auto\" draws", {
  fcv <- kmaha(Species ~ ., iris, learner = "dne", kernel = "cv",
               kernels = small_kernels(), cv_folds = 3, seed = 1)
  txt <- drawn_text(plot(fcv, which = "kernel"))
  cv <- fcv$kernel_choice$cv
  expect_true(paste("chosen:", cv$curve$label[cv$best]) %in% txt)

  fauto <- kmaha(Species ~ ., iris, learner = "dne", kernels = small_kernels(),
                 cv_folds = 3, seed = 1)
  cv <- fauto$kernel_choice$cv
  expect_identical(cv$rule, "auto")
  txt <- drawn_text(plot(fauto, which = "kernel"))
  # the chosen candidate and every candidate drawn as a reference line
  # (those without a sigma) are in the legend
  expect_true(paste("chosen:", cv$curve$label[cv$best]) %in% txt)
  lines <- cv$curve$label[cv$curve$kind != "kernel"]
  expect_true(length(lines) > 0L)
  expect_true(all(lines %in% txt))
})

test_that("a chosen candidate without a sigma gets a red line in the legend", {
  cv <- cv_kernel(scale(iris[, 1:4]), iris$Species, "dne", kernels = small_kernels(),
                  folds = 3, seed = 1)
  # the same result as if a reference line had won (plot reads only the
  # curve, the accuracy matrix, best and learner)
  cu <- cv$curve
  cu <- rbind(cu, data.frame(candidate = nrow(cu) + 1L, kind = "linear",
                             label = "linear (no kernel)", learner = "dne", sigma = NA_real_,
                             k = 1L, mean = 0.99, sd = 0.01, n_ok = 3L, dropped = FALSE,
                             degenerate = FALSE, screen = NA_real_))
  fake <- structure(list(curve = cu, accuracy = rbind(cv$accuracy, c(1, 1, 0.97)),
                         best = nrow(cu), learner = cv$learner), class = "kmaha_cv")
  txt <- drawn_text(plot(fake))
  expect_true("chosen: linear (no kernel)" %in% txt)
  expect_true("linear (no kernel)" %in% txt)
})

test_that("legend_outside() takes entries whose line types are all NA", {
  txt <- drawn_text({
    plot(1:3)
    legend_outside(c("a", "b"), pch = c(4, 19), lty = c(NA, NA))
  })
  expect_true(all(c("a", "b") %in% txt))
})

test_that("plot() of a reproduction keeps its title on the device, over the panels", {
  res <- reproduce_paper(datasets = "iris", learners = c("nca", "dne"),
                         kernels = c("linear", "unweighted"), splits = 2)
  cells <- kmaha:::reproduction_cells(res)
  for (w in c(4, 5, 7.3, 9)) {
    grDevices::pdf(NULL, width = w, height = 4.5)
    r <- kmaha:::plot_reproduction(cells, kmaha:::repro_kernel_colours)
    grDevices::dev.off()
    # the title is within the device and left of the legend's margin
    expect_gte(r$title[["left"]], 0)
    expect_lte(r$title[["right"]], r$legend[["left"]])
    # and centred over the panels
    mid <- mean(c(r$panels[[1]][["left"]], r$panels[[length(r$panels)]][["right"]]))
    expect_lt(abs(mean(r$title) - mid), 0.1)
  }
})
