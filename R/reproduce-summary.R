# Comparing a reproduction with the paper: per-cell summaries, the
# win/draw/lose rows of Tables 1-3, and their printing.

#' Summarize a reproduction beside the paper
#'
#' One row per dataset, learner and kernel choice: the mean and standard
#' deviation of the test accuracy over the splits, the mean run time, the
#' paper's mean and standard deviation (Tables 1-3, [paper_results()]) and
#' the difference, and how each kernel column compares with its linear
#' learner on the same splits.
#'
#' **Win/draw/lose rule.** A kernel cell *wins* (loses) against the linear
#' learner of the same dataset when a two-sided paired t-test over the splits
#' both ran (paired by split) rejects equal means at level `alpha` and its
#' mean accuracy is higher (lower); otherwise it is a *draw*. With one split
#' the test is undefined and the outcome `NA`; when all paired differences
#' are equal the outcome is their sign (a draw when they are all zero). The
#' paper's own cells are compared by the same rule where possible: a Welch
#' two-sample t-test from the reported means and standard deviations with 40
#' splits each (the paper does not report the paired differences; rounded
#' values of 0.00 are used as given). [win_draw_lose()] counts the outcomes
#' per column, beside the paper's printed rows, which follow from comparing
#' the printed (two-decimal) means.
#'
#' @param object A `kmaha_reproduction` from [reproduce_paper()] or
#'   [paper_reproduction()].
#' @param alpha Level of the t-tests.
#' @param ... Unused.
#' @return A data frame of class `summary.kmaha_reproduction` with columns
#'   `dataset`, `learner`, `kernel`, `splits` (splits with an accuracy),
#'   `failed` (cells that failed), `mean`, `sd` (`NA` for one split),
#'   `seconds` (mean per cell), `paper_mean`, `paper_sd`, `difference`
#'   (`mean - paper_mean`), `p_value` and `versus_linear` (`"win"`, `"draw"`,
#'   `"lose"` or `NA`; `NA` for the linear column), and `paper_p_value` and
#'   `paper_versus_linear` (the same rule applied to the paper's values). Its
#'   `print()` method shows Tables 1-3 side by side with the paper's values,
#'   marks the cells more than 0.05 away from the paper, and adds the
#'   win/draw/lose rows.
#' @seealso [win_draw_lose()], [reproduce_paper()], [paper_results()].
#' @examples
#' res <- reproduce_paper(datasets = "iris", learners = "dne",
#'                        kernels = c("linear", "aligned"), splits = 3)
#' s <- summary(res)
#' s[, c("dataset", "kernel", "mean", "sd", "paper_mean", "versus_linear")]
#' @export
summary.kmaha_reproduction <- function(object, alpha = 0.05, ...) {
  alpha <- check_number(alpha, "alpha", positive = TRUE)
  if (alpha >= 1) stopf("`alpha` must be below 1, not %s.", format(alpha))
  df <- as.data.frame(unclass(object), stringsAsFactors = FALSE)
  key <- paste(df$dataset, df$learner, df$kernel, sep = "\r")
  agg <- lapply(split(df, factor(key, unique(key))), function(d) {
    a <- d$accuracy[!is.na(d$accuracy)]
    data.frame(dataset = d$dataset[1], learner = d$learner[1],
               kernel = d$kernel[1], splits = length(a),
               failed = sum(is.na(d$accuracy)),
               mean = if (length(a)) mean(a) else NA_real_,
               sd = if (length(a) > 1L) stats::sd(a) else NA_real_,
               seconds = mean(d$seconds), stringsAsFactors = FALSE)
  })
  agg <- do.call(rbind, agg)
  paper <- paper_results()
  info <- paper_datasets()
  label <- info$label[match(agg$dataset, info$name)]
  m <- match(paste(label, toupper(agg$learner), agg$kernel),
             paste(paper$dataset, paper$learner, paper$kernel))
  agg$paper_mean <- paper$mean_accuracy[m]
  agg$paper_sd <- paper$sd_accuracy[m]
  agg$difference <- agg$mean - agg$paper_mean

  # Each kernel cell against the linear cell of its dataset and learner.
  agg$p_value <- NA_real_
  agg$versus_linear <- NA_character_
  agg$paper_p_value <- NA_real_
  agg$paper_versus_linear <- NA_character_
  lin <- match(paste(agg$dataset, agg$learner, "linear"),
               paste(agg$dataset, agg$learner, agg$kernel))
  for (i in which(agg$kernel != "linear" & !is.na(lin))) {
    j <- lin[i]
    a <- df[df$dataset == agg$dataset[i] & df$learner == agg$learner[i], ]
    ker <- a[a$kernel == agg$kernel[i], c("split", "accuracy")]
    ref <- a[a$kernel == "linear", c("split", "accuracy")]
    both <- merge(ker, ref, by = "split")
    both <- both[stats::complete.cases(both), ]
    t <- paired_outcome(both$accuracy.x - both$accuracy.y, alpha)
    agg$p_value[i] <- t$p
    agg$versus_linear[i] <- t$outcome
    t <- welch_outcome(agg$paper_mean[i], agg$paper_sd[i], agg$paper_mean[j],
                       agg$paper_sd[j], 40L, alpha)
    agg$paper_p_value[i] <- t$p
    agg$paper_versus_linear[i] <- t$outcome
  }
  ord <- order(match(agg$learner, repro_learners), agg$dataset,
               match(agg$kernel, repro_kernels))
  agg <- agg[ord, ]
  rownames(agg) <- NULL
  attr(agg, "alpha") <- alpha
  attr(agg, "run_info") <- attr(object, "run_info")
  bad <- is.na(df$accuracy)
  attr(agg, "errors") <- df[bad, c("dataset", "split", "learner", "kernel", "error"), drop = FALSE]
  class(agg) <- c("summary.kmaha_reproduction", "data.frame")
  agg
}

# Paired differences d (kernel - linear) -> p-value and outcome.
paired_outcome <- function(d, alpha) {
  n <- length(d)
  if (n < 2L) return(list(p = NA_real_, outcome = NA_character_))
  m <- mean(d)
  s <- stats::sd(d)
  if (!(s > 0)) {
    # All differences equal: the t statistic is 0/0 (a draw) or infinite.
    return(list(p = if (m == 0) 1 else 0, outcome = sign_outcome(m)))
  }
  p <- 2 * stats::pt(-abs(m / (s / sqrt(n))), df = n - 1L)
  list(p = p, outcome = if (p < alpha) sign_outcome(m) else "draw")
}

# Welch's two-sample t-test from means and standard deviations, n each.
welch_outcome <- function(m1, s1, m2, s2, n, alpha) {
  if (anyNA(c(m1, s1, m2, s2))) return(list(p = NA_real_, outcome = NA_character_))
  v1 <- s1^2 / n
  v2 <- s2^2 / n
  if (v1 + v2 == 0) {
    return(list(p = if (m1 == m2) 1 else 0, outcome = sign_outcome(m1 - m2)))
  }
  t <- (m1 - m2) / sqrt(v1 + v2)
  df <- (v1 + v2)^2 / (v1^2 / (n - 1) + v2^2 / (n - 1))
  p <- 2 * stats::pt(-abs(t), df = df)
  list(p = p, outcome = if (p < alpha) sign_outcome(m1 - m2) else "draw")
}

sign_outcome <- function(d) if (d > 0) "win" else if (d < 0) "lose" else "draw"

#' Win/draw/lose rows of Tables 1-3
#'
#' Counts, for every learner and kernel column, the datasets on which the
#' kernel version wins, draws or loses against the linear learner, as in the
#' bottom rows of the paper's Tables 1-3, under three rules:
#'
#' * `"kmaha"`: our splits, paired t-test at level `alpha` (see
#'   [summary.kmaha_reproduction()]);
#' * `"paper, t-test"`: the paper's means and standard deviations, Welch
#'   t-test with 40 splits each;
#' * `"paper, as printed"`: the paper's means as printed (two decimals),
#'   higher is a win, equal a draw, lower a loss. This rule reproduces every
#'   win/draw/lose row printed in the paper.
#'
#' Only datasets present in `object` (with both columns) are counted.
#'
#' @param object A `kmaha_reproduction` or its [summary()].
#' @param alpha Level of the t-tests (ignored for a summary, which has its
#'   own).
#' @return A data frame with columns `learner`, `kernel`, `rule`, `win`,
#'   `draw`, `lose` and `datasets` (the number compared).
#' @examples
#' res <- reproduce_paper(datasets = "iris", learners = "dne",
#'                        kernels = c("linear", "aligned"), splits = 3)
#' win_draw_lose(res)
#' @export
win_draw_lose <- function(object, alpha = 0.05) {
  s <- if (inherits(object, "summary.kmaha_reproduction")) object else
    if (inherits(object, "kmaha_reproduction")) summary(object, alpha = alpha) else
      stopf("`object` must be a kmaha_reproduction (from reproduce_paper() or paper_reproduction()) or its summary().")
  s <- as.data.frame(unclass(s), stringsAsFactors = FALSE)
  has_lin <- paste(s$dataset, s$learner) %in%
    paste(s$dataset, s$learner)[s$kernel == "linear"]
  s <- s[s$kernel != "linear" & has_lin, ]
  lin <- paper_results()
  lin <- lin[lin$kernel == "linear", ]
  label <- paper_datasets()$label[match(s$dataset, paper_datasets()$name)]
  lin_mean <- lin$mean_accuracy[match(paste(label, toupper(s$learner)),
                                      paste(lin$dataset, lin$learner))]
  printed <- ifelse(is.na(s$paper_mean) | is.na(lin_mean), NA_character_,
                    vapply(round(s$paper_mean, 2) - round(lin_mean, 2),
                           function(d) if (is.na(d)) NA_character_ else
                             sign_outcome(round(d, 2)), character(1)))
  rules <- list("kmaha" = s$versus_linear, "paper, t-test" = s$paper_versus_linear,
                "paper, as printed" = printed)
  grid <- unique(s[, c("learner", "kernel")])
  grid <- grid[order(match(grid$learner, repro_learners),
                     match(grid$kernel, repro_kernels)), ]
  out <- list()
  for (g in seq_len(nrow(grid))) {
    rows <- s$learner == grid$learner[g] & s$kernel == grid$kernel[g]
    for (r in names(rules)) {
      o <- rules[[r]][rows]
      out[[length(out) + 1L]] <- data.frame(
        learner = grid$learner[g], kernel = grid$kernel[g], rule = r,
        win = sum(o == "win", na.rm = TRUE), draw = sum(o == "draw", na.rm = TRUE),
        lose = sum(o == "lose", na.rm = TRUE), datasets = sum(!is.na(o)),
        stringsAsFactors = FALSE)
    }
  }
  out <- if (length(out)) do.call(rbind, out) else
    data.frame(learner = character(), kernel = character(), rule = character(),
               win = integer(), draw = integer(), lose = integer(),
               datasets = integer())
  rownames(out) <- NULL
  out
}

# "0.92 +- 0.01", "0.92 +- n/a" (one split), "-" (no value).
format_mean_sd <- function(m, s) {
  ifelse(is.na(m), "-",
         sprintf("%.2f +- %s", m, ifelse(is.na(s), "n/a", sprintf("%.2f", s))))
}

#' @export
print.summary.kmaha_reproduction <- function(x, threshold = 0.05, ...) {
  # A subset of the columns (e.g. s[, c("dataset", "mean")]) prints as the
  # data frame it is.
  needed <- c("dataset", "learner", "kernel", "mean", "sd", "splits", "failed",
              "paper_mean", "difference", "versus_linear", "paper_versus_linear")
  if (!all(needed %in% names(x))) {
    class(x) <- "data.frame"
    print(x, ...)
    return(invisible(x))
  }
  df <- as.data.frame(unclass(x), stringsAsFactors = FALSE)
  info <- paper_datasets()
  wdl <- win_draw_lose(x)
  ktitle <- c(linear = "linear", cv = "CV", aligned = "aligned",
              unweighted = "unweighted", auto = "auto")
  # The notes wrap at the console width (a web page or a narrow console
  # would cut a long line).
  note <- function(text) cat(strwrap(text, width = max(40L, getOption("width", 80L) - 2L)),
                             sep = "\n")
  for (lr in unique(df$learner)) {
    d <- df[df$learner == lr, ]
    cat("\n")
    note(sprintf("%s: mean +- sd test accuracy of 1-NN [paper]; * = more than %.2f from the paper",
                 learner_label(lr), threshold))
    flag <- !is.na(d$difference) & abs(d$difference) > threshold
    val <- sprintf("%s [%s]%s", format_mean_sd(d$mean, d$sd),
                   ifelse(is.na(d$paper_mean), "-", sprintf("%.2f", d$paper_mean)),
                   ifelse(flag, "*", " "))
    kern <- intersect(repro_kernels, d$kernel)
    sets <- unique(d$dataset)
    tab <- matrix("", length(sets), length(kern),
                  dimnames = list(info$label[match(sets, info$name)], ktitle[kern]))
    tab[cbind(match(d$dataset, sets), match(d$kernel, kern))] <- val
    w <- wdl[wdl$learner == lr, ]
    if (nrow(w)) {
      row <- vapply(kern, function(k) {
        a <- w[w$kernel == k & w$rule == "kmaha", ]
        b <- w[w$kernel == k & w$rule == "paper, as printed", ]
        if (!nrow(a)) return("")
        # the paper has no column for kmaha's default ("auto")
        sprintf("%s [%s]",
                if (a$datasets == 0L) "n/a" else sprintf("%d/%d/%d", a$win, a$draw, a$lose),
                if (!nrow(b) || b$datasets == 0L) "-" else
                  sprintf("%d/%d/%d", b$win, b$draw, b$lose))
      }, character(1))
      tab <- rbind(tab, "Win/Draw/Lose" = row)
    }
    print(noquote(tab), right = FALSE)
  }
  ok <- !is.na(df$difference)
  cat("\n")
  note(sprintf("Splits per cell: %s. Mean |difference| from the paper: %s over %d cells; %d cell(s) differ by more than %.2f.",
               paste(sort(unique(df$splits)), collapse = ", "),
               if (any(ok)) sprintf("%.3f", mean(abs(df$difference[ok]))) else "n/a",
               sum(ok), sum(abs(df$difference[ok]) > threshold), threshold))
  if (any(df$kernel != "linear")) {
    note(sprintf("Win/Draw/Lose against the linear learner: ours by a paired t-test over the splits at the %g level [the paper's printed rows].",
                 attr(x, "alpha") %||% 0.05))
  }
  if (sum(df$failed)) {
    cat(sprintf("%d cell fit(s) failed (accuracy NA).\n", sum(df$failed)))
    print_cell_errors(attr(x, "errors"))
  }
  invisible(x)
}

# The distinct error messages of failed cells, most frequent first (at most
# `max`), each with its number of cells and the first such cell.
print_cell_errors <- function(err, max = 3L) {
  if (is.null(err) || !nrow(err)) return(invisible())
  msg <- ifelse(is.na(err$error), "(no message)", err$error)
  counts <- table(factor(msg, unique(msg)))
  counts <- counts[order(-counts)]
  shown <- utils::head(names(counts), max)
  for (m in shown) {
    i <- match(m, msg)
    cat(sprintf("  %d cell(s), e.g. %s split %d %s %s: %s\n", counts[[m]], err$dataset[i],
                as.integer(err$split[i]), err$learner[i], err$kernel[i], m))
  }
  if (length(counts) > max) {
    cat(sprintf("  and %d other error message(s); see the column `error`.\n",
                length(counts) - max))
  }
  invisible()
}

#' @export
print.kmaha_reproduction <- function(x, ...) {
  if (!all(c("dataset", "split", "learner", "kernel", "accuracy", "seconds", "error") %in% names(x))) {
    # a subset of the columns: no longer a table of cells
    print(structure(x, class = "data.frame"), ...)
    return(invisible(x))
  }
  print(summary(x), ...)
  invisible(x)
}

#' Cells that differ from the paper
#'
#' Lists the dataset, learner and kernel cells whose mean accuracy differs
#' from the paper's Tables 1-3 by more than `threshold`, largest first.
#'
#' @param object A `kmaha_reproduction` or its [summary()].
#' @param threshold Absolute difference in accuracy.
#' @return The rows of [summary.kmaha_reproduction()] beyond the threshold.
#' @examples
#' res <- reproduce_paper(datasets = "iris", learners = "dne",
#'                        kernels = "linear", splits = 2)
#' paper_differences(res, threshold = 0)
#' @export
paper_differences <- function(object, threshold = 0.05) {
  s <- if (inherits(object, "summary.kmaha_reproduction")) object else
    if (inherits(object, "kmaha_reproduction")) summary(object) else
      stopf("`object` must be a kmaha_reproduction (from reproduce_paper() or paper_reproduction()) or its summary().")
  threshold <- check_number(threshold, "threshold", nonneg = TRUE)
  d <- as.data.frame(unclass(s), stringsAsFactors = FALSE)
  d <- d[!is.na(d$difference) & abs(d$difference) > threshold, ]
  d <- d[order(-abs(d$difference)), ]
  rownames(d) <- NULL
  d
}

#' The paper's reported accuracies
#'
#' Tables 1-3 of the paper as a data frame: mean and standard deviation of
#' the test accuracy over 40 splits for each dataset, learner and kernel
#' choice, and whether the paper typeset the cell in bold.
#'
#' @return A data frame with columns `dataset`, `learner`, `kernel`,
#'   `mean_accuracy`, `sd_accuracy`, `bold_in_paper`.
#' @examples
#' head(paper_results())
#' @export
paper_results <- function() {
  utils::read.csv(system.file("extdata", "paper_tables.csv", package = "kmaha"),
                  stringsAsFactors = FALSE)
}
