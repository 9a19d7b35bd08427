# ggplot2 pictures of the package's results (autoplot(), registered for
# ggplot2's generic when ggplot2 is loaded; ggplot2 is only suggested), and
# the base-graphics picture of a reproduction against the paper.  Legends
# go outside the data: ggplot2 puts them beside the panel; with many
# classes they get several columns and smaller keys.

utils::globalVariables(".data")

need_ggplot2 <- function() {
  if (!requireNamespace("ggplot2", quietly = TRUE)) {
    stopf("autoplot() needs the ggplot2 package: install.packages(\"ggplot2\"). Without it, use plot().")
  }
}

# One colour per class: evenly spaced hues of HCL's "Dark 3" palette.
class_colours <- function(p) grDevices::hcl.colors(max(p, 2L), "Dark 3")[seq_len(p)]

# A colour legend readable with many classes: up to 20 entries per column,
# smaller keys and text beyond 12 classes.
class_legend <- function(p, title = "class") {
  list(ggplot2::guides(colour = ggplot2::guide_legend(
         title = title, ncol = max(1L, ceiling(p / 20)),
         override.aes = list(size = if (p > 12L) 1.8 else 2.5))),
       if (p > 12L) ggplot2::theme(legend.key.size = ggplot2::unit(0.32, "cm"),
                                   legend.text = ggplot2::element_text(size = 7)))
}

#' Plot kmaha results with ggplot2
#'
#' `autoplot()` methods (for [ggplot2::autoplot()]; they are registered when
#' \pkg{ggplot2} is loaded) that return a `ggplot` object, so a plot can be
#' changed with the usual `+` layers:
#'
#' * a fitted model (see [kmaha-model]), `which = "embedding"`: the training
#'   points in two learned coordinates, coloured by class, with equal scales
#'   on both axes (distances on the plot are the learned distances); a
#'   one-dimensional map gives a jittered strip per class. A regression
#'   model's points are coloured by the response (a continuous scale), a
#'   model fitted from pairs or chunklets without class labels draws its
#'   points in one colour.
#'   `which = "kernel"`: how [kmaha()] chose the kernel (the
#'   cross-validation curve or the alignment weights, below).
#' * a cross-validation ([cv_kernel()], or `kernel_choice$cv` of a fit):
#'   the mean CV accuracy against \eqn{\log_{10}\sigma}{log10(sigma)} with bars of one
#'   standard deviation over the folds; kernels the screen of the fast
#'   strategy did not pass to the learner are triangles at their screen
#'   accuracy (see [score_candidates()]; a regression's screen score, the
#'   held-out \eqn{R^2} of kernel ridge regression, is not on the RMSE axis,
#'   so a regression draws only the kernels MLKR scored), candidates without a bandwidth
#'   (Euclidean k-NN, the linear learner, the unweighted sum of `kernel =
#'   "auto"`) are horizontal reference lines, and the chosen candidate, when
#'   there is one, is circled in red (a thick red line for a reference
#'   line). Without any bandwidth the candidates are on a discrete axis. A
#'   scored-candidates object ([score_candidates()]) is drawn the same way.
#' * an alignment ([align_kernels()]): each base kernel's share of the
#'   normalised weight over \eqn{\log_{10}\sigma}{log10(sigma)}.
#' * a reproduction ([reproduce_paper()], [paper_reproduction()]): per cell
#'   (dataset and kernel column), kmaha's mean test accuracy against the
#'   paper's, with error bars of one standard deviation over the splits in
#'   both directions, coloured by kernel column and faceted by learner; the
#'   dashed diagonal is agreement with the paper.
#'
#' Legends are outside the panel, never over the data: beside it for
#' classes and kernel columns (with many classes in several columns, 20
#' classes each, with smaller keys), below it for a cross-validation, whose
#' labels are long.
#'
#' @param object The result to plot.
#' @param which For a model: `"embedding"` or `"kernel"`.
#' @param dims For a model's embedding: the two learned coordinates drawn.
#' @param ... Unused.
#' @return A `ggplot` object.
#' @seealso [plot()][kmaha-model] and [plot.kmaha_reproduction()] for base
#'   graphics, [tidy.kmaha_model()] for the data behind the plots.
#' @examplesIf requireNamespace("ggplot2", quietly = TRUE)
#' library(ggplot2)
#' fit <- kmaha(Species ~ ., data = iris, learner = "dne",
#'              kernel = "cv", kernels = lapply(c(0.3, 1, 3, 10), rbf_kernel),
#'              cv_folds = 3, seed = 1)
#' autoplot(fit)
#' autoplot(fit, which = "kernel")
#' autoplot(align_kernels(scale(iris[, 1:4]), iris$Species))
#' res <- reproduce_paper(datasets = "iris", learners = "dne",
#'                        kernels = c("linear", "unweighted"), splits = 2)
#' autoplot(res)
#' @name autoplot.kmaha_model
NULL

#' @rdname autoplot.kmaha_model
#' @exportS3Method ggplot2::autoplot
autoplot.kmaha_model <- function(object, which = c("embedding", "kernel"),
                                 dims = c(1, 2), ...) {
  check_dots_empty("autoplot()", ...)
  need_ggplot2()
  which <- match_choice(which, c("embedding", "kernel"), "which")
  if (which == "kernel") {
    ch <- object$kernel_choice
    if (!is.null(ch$alignment)) return(autoplot.kmaha_alignment(ch$alignment))
    if (!is.null(ch$cv)) return(autoplot.kmaha_cv(ch$cv))
    stopf("`which = \"kernel\"` needs a kmaha() fit whose kernel was chosen by alignment or cross-validation (this one: %s).",
          kernel_choice_words(ch))
  }
  embedding_ggplot(object$embedding, object$y, dims,
                   sprintf("%s embedding", model_label(object)))
}

embedding_ggplot <- function(z, y, dims, title) {
  # a regression's numeric response, or no labels (a model fitted from pairs
  # or chunklets alone)
  if (is.numeric(y) || is.null(y)) return(embedding_ggplot_unlabelled(z, y, dims, title))
  p <- nlevels(y)
  cols <- stats::setNames(class_colours(p), levels(y))
  if (ncol(z) < 2L) {
    d <- data.frame(x = z[, 1], class = y)
    return(ggplot2::ggplot(d, ggplot2::aes(x = .data$x, y = .data$class,
                                           colour = .data$class)) +
      ggplot2::geom_jitter(width = 0, height = 0.2) +
      ggplot2::scale_colour_manual(values = cols, drop = FALSE) +
      ggplot2::labs(x = colnames(z)[1] %||% "dim1", y = NULL, title = title) +
      class_legend(p))
  }
  dims <- as.integer(dims)
  if (length(dims) != 2L || anyNA(dims) || any(dims < 1L) || any(dims > ncol(z))) {
    stopf("`dims` must be two coordinates between 1 and %d.", ncol(z))
  }
  d <- data.frame(x = z[, dims[1]], y = z[, dims[2]], class = y)
  ggplot2::ggplot(d, ggplot2::aes(x = .data$x, y = .data$y, colour = .data$class)) +
    ggplot2::geom_point() +
    ggplot2::coord_equal() +
    ggplot2::scale_colour_manual(values = cols, drop = FALSE) +
    ggplot2::labs(x = colnames(z)[dims[1]] %||% paste0("dim", dims[1]),
                  y = colnames(z)[dims[2]] %||% paste0("dim", dims[2]), title = title) +
    class_legend(p)
}

# The embedding of a regression model, its points coloured by the response
# (a continuous scale), or of a model without labels (one colour).
embedding_ggplot_unlabelled <- function(z, y, dims, title) {
  d <- data.frame(x = z[, 1])
  if (!is.null(y)) d$response <- y
  aes_colour <- if (!is.null(y)) ggplot2::aes(colour = .data$response)
  colour_scale <- if (!is.null(y)) ggplot2::scale_colour_viridis_c(name = "response")
  point_colour <- if (is.null(y)) class_colours(1L) else NULL
  point <- function(layer) {
    if (is.null(point_colour)) layer() else layer(colour = point_colour)
  }
  if (ncol(z) < 2L) {
    d$y <- 0
    return(ggplot2::ggplot(d, ggplot2::aes(x = .data$x, y = .data$y)) + aes_colour +
      point(function(...) ggplot2::geom_jitter(width = 0, height = 0.2, ...)) +
      colour_scale +
      ggplot2::scale_y_continuous(breaks = NULL, limits = c(-1, 1)) +
      ggplot2::labs(x = colnames(z)[1] %||% "dim1", y = NULL, title = title))
  }
  dims <- as.integer(dims)
  if (length(dims) != 2L || anyNA(dims) || any(dims < 1L) || any(dims > ncol(z))) {
    stopf("`dims` must be two coordinates between 1 and %d.", ncol(z))
  }
  d$x <- z[, dims[1]]
  d$y <- z[, dims[2]]
  ggplot2::ggplot(d, ggplot2::aes(x = .data$x, y = .data$y)) + aes_colour +
    point(function(...) ggplot2::geom_point(...)) +
    ggplot2::coord_equal() +
    colour_scale +
    ggplot2::labs(x = colnames(z)[dims[1]] %||% paste0("dim", dims[1]),
                  y = colnames(z)[dims[2]] %||% paste0("dim", dims[2]), title = title)
}

#' @rdname autoplot.kmaha_model
#' @exportS3Method ggplot2::autoplot
autoplot.kmaha_cv <- function(object, ...) {
  check_dots_empty("autoplot()", ...)
  need_ggplot2()
  d <- tidy.kmaha_cv(object)
  d$lo <- d$mean - ifelse(is.na(d$sd), 0, d$sd)
  d$hi <- d$mean + ifelse(is.na(d$sd), 0, d$sd)
  # a base kernel the screen did not pass to the learner: its screen score
  # (a classification's, an accuracy on the axis's scale; a regression's
  # screen score is a held-out R^2 of kernel ridge regression, not an RMSE,
  # so those kernels are not drawn)
  screened_out <- d$kind == "kernel" & is.na(d$mean) & !is.na(d$screen) &
    !is_regression_scores(object)
  d$status <- ifelse(screened_out, "screen only (DNE on 32 KPCA components)",
                     "scored by the learner")
  d$y <- ifelse(screened_out, d$screen, d$mean)
  shapes <- c("scored by the learner" = 19, "screen only (DNE on 32 KPCA components)" = 2)
  ker <- d[d$kind == "kernel" & !is.na(d$sigma) & !is.na(d$y), ]
  other <- d[!(d$kind == "kernel" & !is.na(d$sigma)) & !is.na(d$mean), ]
  title <- sprintf("%d-fold CV of %s", ncol(object$accuracy), object$learner)
  ylab <- sprintf("CV %s (mean +/- sd)", score_metric_words(object))
  best <- d[d$chosen, ]
  subtitle <- if (nrow(best)) sprintf("chosen: %s", best$candidate) else NULL
  if (!nrow(ker)) {
    d <- d[!is.na(d$y), ]
    d$candidate <- factor(d$candidate, levels = d$candidate)
    g <- ggplot2::ggplot(d, ggplot2::aes(x = .data$candidate, y = .data$y)) +
      ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$lo, ymax = .data$hi), width = 0.2) +
      ggplot2::geom_point(ggplot2::aes(shape = .data$status), size = 2) +
      ggplot2::scale_shape_manual(values = shapes, name = NULL) +
      ggplot2::labs(x = "candidate", y = ylab, title = title, subtitle = subtitle) +
      ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 30, hjust = 1)) +
      cv_legend_below()
    if (nrow(best)) g <- g + ggplot2::geom_point(data = d[d$chosen, ], shape = 1, size = 5,
                                                 colour = "red")
    return(g)
  }
  ker$log_sigma <- log10(ker$sigma)
  scored <- ker[ker$status == "scored by the learner", ]
  # (a line joins two or more scored kernels: the fast strategy may score
  # one, and ggplot2 complains of a line through a single point)
  g <- ggplot2::ggplot(ker, ggplot2::aes(x = .data$log_sigma, y = .data$y)) +
    if (nrow(scored) > 1L) ggplot2::geom_line(data = scored, colour = "grey30")
  g <- g +
    ggplot2::geom_errorbar(data = scored, ggplot2::aes(ymin = .data$lo, ymax = .data$hi),
                           width = 0.04, colour = "grey30") +
    ggplot2::geom_point(ggplot2::aes(shape = .data$status), size = 2) +
    ggplot2::scale_shape_manual(values = shapes, name = NULL)
  if (nrow(other)) {
    g <- g + ggplot2::geom_hline(data = other,
                                 ggplot2::aes(yintercept = .data$mean, linetype = .data$candidate),
                                 colour = "grey40") +
      ggplot2::scale_linetype_discrete(name = "other candidates")
  }
  if (nrow(best)) {
    if (best$kind == "kernel" && !is.na(best$sigma)) {
      best$log_sigma <- log10(best$sigma)
      g <- g + ggplot2::geom_point(data = best, shape = 1, size = 5, colour = "red")
    } else {
      g <- g + ggplot2::geom_hline(data = best, ggplot2::aes(yintercept = .data$mean),
                                   colour = "red", linewidth = 1)
    }
  }
  g + ggplot2::labs(x = expression(log[10] ~ sigma), y = ylab, title = title,
                    subtitle = subtitle) +
    cv_legend_below()
}

# The CV plots' legends (point shapes, the other candidates' lines) go
# below the panel, one under the other: their labels are long ("screen
# only (...)", "unweighted sum of 21 kernels"), and at the right they took
# the panel's width or ran off a 7-inch figure.
cv_legend_below <- function() {
  ggplot2::theme(legend.position = "bottom", legend.box = "vertical",
                 legend.direction = "vertical", legend.justification = "left",
                 legend.margin = ggplot2::margin(0, 0, 0, 0))
}

#' @rdname autoplot.kmaha_model
#' @exportS3Method ggplot2::autoplot
autoplot.kmaha_scores <- function(object, ...) autoplot.kmaha_cv(object, ...)

#' @rdname autoplot.kmaha_model
#' @exportS3Method ggplot2::autoplot
autoplot.kmaha_alignment <- function(object, ...) {
  check_dots_empty("autoplot()", ...)
  need_ggplot2()
  d <- tidy.kmaha_alignment(object)
  has_sigma <- all(!is.na(d$sigma))
  d$where <- if (has_sigma) factor(format(round(log10(d$sigma), 2)),
                                   levels = unique(format(round(log10(d$sigma), 2))))
             else factor(seq_len(nrow(d)))
  ggplot2::ggplot(d, ggplot2::aes(x = .data$where, y = .data$share)) +
    ggplot2::geom_col(fill = "grey35") +
    ggplot2::labs(x = if (has_sigma) expression(log[10] ~ sigma) else "base kernel",
                  y = "share of normalised weight",
                  title = sprintf("Kernel alignment (%s): %.3f", toupper(object$method),
                                  object$alignment)) +
    ggplot2::theme(axis.text.x = ggplot2::element_text(angle = 90, vjust = 0.5, hjust = 1))
}

# The cells of a reproduction beside the paper, for both pictures: one row
# per dataset, learner and kernel column that both report.
reproduction_cells <- function(x) {
  s <- tidy.kmaha_reproduction(x)
  s <- s[!is.na(s$mean) & !is.na(s$paper_mean), ]
  if (!nrow(s)) {
    stopf("None of the cells of this reproduction has both a mean accuracy and a value in the paper's Tables 1-3, so there is nothing to compare.")
  }
  labs <- vapply(s$learner, learner_label, "", USE.NAMES = FALSE)
  s$learner <- factor(labs, levels = intersect(vapply(repro_learners, learner_label, ""), labs))
  s$kernel <- factor(s$kernel, levels = intersect(repro_kernels, s$kernel))
  s
}

#' @rdname autoplot.kmaha_model
#' @exportS3Method ggplot2::autoplot
autoplot.kmaha_reproduction <- function(object, ...) {
  check_dots_empty("autoplot()", ...)
  need_ggplot2()
  s <- reproduction_cells(object)
  cols <- repro_kernel_colours[levels(s$kernel)]
  lim <- range(c(s$mean - ifelse(is.na(s$sd), 0, s$sd),
                 s$mean + ifelse(is.na(s$sd), 0, s$sd),
                 s$paper_mean - s$paper_sd, s$paper_mean + s$paper_sd), na.rm = TRUE)
  lim <- c(max(0, lim[1]), min(1, lim[2]))
  sd_ok <- s[!is.na(s$sd), ]
  ggplot2::ggplot(s, ggplot2::aes(x = .data$paper_mean, y = .data$mean,
                                  colour = .data$kernel)) +
    ggplot2::geom_abline(slope = 1, intercept = 0, linetype = 2, colour = "grey50") +
    ggplot2::geom_errorbar(data = sd_ok, ggplot2::aes(ymin = .data$mean - .data$sd,
                                                      ymax = .data$mean + .data$sd),
                           width = 0, alpha = 0.6) +
    ggplot2::geom_errorbarh(ggplot2::aes(xmin = .data$paper_mean - .data$paper_sd,
                                         xmax = .data$paper_mean + .data$paper_sd),
                            height = 0, alpha = 0.6) +
    ggplot2::geom_point(size = 2) +
    ggplot2::facet_wrap(~learner) +
    ggplot2::coord_equal(xlim = lim, ylim = lim) +
    ggplot2::scale_colour_manual(values = cols, name = "kernel column") +
    ggplot2::labs(x = "paper: mean test accuracy (+/- sd)",
                  y = "kmaha: mean test accuracy (+/- sd)",
                  title = "kmaha against the paper's Tables 1-3",
                  subtitle = sprintf("%d cells; splits per cell: %s", nrow(s),
                                     paste(sort(unique(s$splits)), collapse = ", ")))
}

repro_kernel_colours <- c(linear = "#4D4D4D", cv = "#D55E00", aligned = "#0072B2",
                          unweighted = "#009E73")

#' Plot a reproduction against the paper
#'
#' Base-graphics picture of [autoplot()][autoplot.kmaha_model]'s view of a
#' reproduction: one panel per learner, each cell (dataset and kernel
#' column) at the paper's mean test accuracy (x) and kmaha's (y), with
#' segments of one standard deviation over the splits in both directions,
#' coloured by kernel column; the dashed diagonal is agreement with the
#' paper. The legend is in a margin of its own, outside every panel.
#'
#' @param x A `kmaha_reproduction` from [reproduce_paper()] or
#'   [paper_reproduction()].
#' @param col Colours of the kernel columns, named `linear`, `cv`,
#'   `aligned`, `unweighted`.
#' @param ... Passed to [graphics::plot()] for each panel.
#' @return `x`, invisibly.
#' @examples
#' res <- reproduce_paper(datasets = "iris", learners = "dne",
#'                        kernels = c("linear", "unweighted"), splits = 2)
#' plot(res)
#' @export
plot.kmaha_reproduction <- function(x, col = repro_kernel_colours, ...) {
  s <- reproduction_cells(x)
  if (is.null(names(col)) || !all(levels(s$kernel) %in% names(col))) {
    stopf("`col` must name a colour for each kernel column: %s.",
          paste(levels(s$kernel), collapse = ", "))
  }
  plot_reproduction(s, col, ...)
  invisible(x)
}

# The panels of plot.kmaha_reproduction() from its cells; returns where the
# panels' plot regions, the title and the legend are on the device (NDC).
plot_reproduction <- function(s, col, ...) {
  learners <- levels(droplevels(s$learner))
  lo <- function(m, v) m - ifelse(is.na(v), 0, v)
  hi <- function(m, v) m + ifelse(is.na(v), 0, v)
  lim <- range(c(lo(s$mean, s$sd), hi(s$mean, s$sd), lo(s$paper_mean, s$paper_sd),
                 hi(s$paper_mean, s$paper_sd)))
  lim <- c(max(0, lim[1]), min(1, lim[2]))
  kern <- levels(s$kernel)
  # The legend gets the right outer margin, as wide as it is: its longest
  # entry after the symbol (a line of 2 characters and a point, with
  # legend()'s spacing) or its title, and a small inset on either side.
  xchar <- 0.8 * graphics::par("cin")[1]
  leg_w <- max(max(graphics::strwidth(kern, units = "inches", cex = 0.8)) + 4.5 * xchar,
               graphics::strwidth("kernel column", units = "inches", cex = 0.8) + 2 * xchar) + 0.4
  op <- graphics::par(mfrow = c(1L, length(learners)),
                      oma = c(0, 0, 2.4, leg_w / graphics::par("csi")),
                      mar = c(4.1, 4.1, 2.1, 1.1))
  on.exit(graphics::par(op))
  panels <- list()
  for (lr in learners) {
    d <- s[s$learner == lr, ]
    graphics::plot(d$paper_mean, d$mean, type = "n", xlim = lim, ylim = lim, asp = 1,
                   xlab = "paper: mean accuracy", ylab = "kmaha: mean accuracy",
                   main = lr, ...)
    graphics::abline(0, 1, lty = 2, col = "grey50")
    cc <- col[as.character(d$kernel)]
    ok <- !is.na(d$sd)
    graphics::segments(d$paper_mean[ok], lo(d$mean, d$sd)[ok], d$paper_mean[ok],
                       hi(d$mean, d$sd)[ok], col = cc[ok])
    graphics::segments(lo(d$paper_mean, d$paper_sd), d$mean, hi(d$paper_mean, d$paper_sd),
                       d$mean, col = cc)
    graphics::points(d$paper_mean, d$mean, pch = 19, col = cc)
    panels[[lr]] <- plot_region_ndc()
  }
  # The title, on two lines, is centred over the panels (the inner region,
  # without the legend's margin), each line shrunk to their width when the
  # device is narrow.
  panel_w <- graphics::par("din")[1] - leg_w
  fit_cex <- function(text, cex, font) {
    width <- function(cx) graphics::strwidth(text, units = "inches", cex = cx, font = font)
    # text widths do not scale exactly with cex (font sizes are rounded)
    while (cex > 0.3 && width(cex) > 0.95 * panel_w) cex <- cex * 0.95
    cex
  }
  title <- c("kmaha against the paper's Tables 1-3",
             "mean +/- sd over the splits; dashed: equal to the paper")
  graphics::mtext(title[1], outer = TRUE, line = 1.1, font = 2,
                  cex = fit_cex(title[1], 1, 2))
  graphics::mtext(title[2], outer = TRUE, line = 0.1, font = 1,
                  cex = fit_cex(title[2], 0.8, 1))
  # Where the title lines are on the device (NDC), as drawn: centred on the
  # inner region, which ends where the legend's margin begins.
  din <- graphics::par("din")[1]
  half <- max(graphics::strwidth(title[1], units = "inches", cex = fit_cex(title[1], 1, 2), font = 2),
              graphics::strwidth(title[2], units = "inches", cex = fit_cex(title[2], 0.8, 1),
                                 font = 1)) / din / 2
  mid <- (1 - leg_w / din) / 2
  title_box <- c(left = mid - half, right = mid + half)
  # The legend in the outer margin: a plot region spanning the device.
  graphics::par(fig = c(0, 1, 0, 1), oma = c(0, 0, 0, 0), mar = c(0, 0, 0, 0), new = TRUE)
  graphics::plot.new()
  r <- graphics::legend("right", legend = kern, col = col[kern], pch = 19, lty = 1,
                        title = "kernel column", bty = "n", cex = 0.8,
                        inset = 0.1 / graphics::par("din")[1])$rect
  ndc_x <- function(v) graphics::grconvertX(v, "user", "ndc")
  ndc_y <- function(v) graphics::grconvertY(v, "user", "ndc")
  invisible(list(panels = panels, title = title_box,
                 legend = c(left = ndc_x(r$left), right = ndc_x(r$left + r$w),
                            bottom = ndc_y(r$top - r$h), top = ndc_y(r$top))))
}
