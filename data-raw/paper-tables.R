# The paper's Tables 1-3 (mean accuracy +- sd of NCA, LMNN and DNE and
# their kernel versions on nine datasets, and which cells the paper set in
# bold) read from the paper's LaTeX source into inst/extdata/paper_tables.csv,
# which paper_results() and the reproduction's summaries read.
#
# Usage: Rscript data-raw/paper-tables.R [path of kernelizing-mahalanobis.tex]
#   (default ../shared/paper/kernelizing-mahalanobis.tex, beside the
#   checkout; run from the package's top directory).  Writes
#   inst/extdata/paper_tables.csv and says whether it changed.

args <- commandArgs(trailingOnly = TRUE)
tex <- if (length(args)) args[1] else file.path("..", "shared", "paper",
                                                 "kernelizing-mahalanobis.tex")
out <- file.path("inst", "extdata", "paper_tables.csv")
lines <- readLines(tex, warn = FALSE)

# The columns of each table, in the order of the CSV's `kernel` column.
kernels <- c("linear", "cv", "aligned", "unweighted")
tables <- c(table_nca = "NCA", table_lmnn = "LMNN", table_dne = "DNE")

# The body rows of the table labelled `label`: "Name & cell & ... \\".
table_rows <- function(label) {
  at <- grep(sprintf("\\label{%s}", label), lines, fixed = TRUE)
  if (length(at) != 1L) stop("no single \\label{", label, "} in ", tex)
  start <- max(grep("\\begin{table}", lines[seq_len(at)], fixed = TRUE))
  end <- at + min(grep("\\end{table}", lines[at:length(lines)], fixed = TRUE)) - 1L
  body <- lines[start:end]
  body <- body[!startsWith(trimws(body), "%")]
  body[grepl("&", body, fixed = TRUE) & grepl("\\$\\\\pm\\$", body)]
}

# One cell: "0.89 $\pm$ 0.03" or "\textbf{0.92 $\pm$ 0.01}".
parse_cell <- function(cell) {
  cell <- trimws(cell)
  bold <- grepl("^\\\\textbf\\{", cell)
  cell <- sub("^\\\\textbf\\{(.*)\\}$", "\\1", cell)
  parts <- trimws(strsplit(cell, "$\\pm$", fixed = TRUE)[[1]])
  if (length(parts) != 2L) stop("cannot read the cell '", cell, "'")
  list(mean = parts[1], sd = parts[2], bold = if (bold) "yes" else "no")
}

rows <- list()
for (label in names(tables)) {
  for (line in table_rows(label)) {
    line <- sub("\\\\\\\\\\s*$", "", line)   # the row's closing \\
    cells <- strsplit(line, "&", fixed = TRUE)[[1]]
    if (length(cells) != 5L) stop("a row of ", label, " without five cells: ", line)
    dataset <- trimws(cells[1])
    for (j in seq_along(kernels)) {
      cell <- parse_cell(cells[j + 1L])
      rows[[length(rows) + 1L]] <- data.frame(
        dataset = dataset, learner = tables[[label]], kernel = kernels[j],
        mean_accuracy = cell$mean, sd_accuracy = cell$sd, bold_in_paper = cell$bold)
    }
  }
}
res <- do.call(rbind, rows)
stopifnot(nrow(res) == 3L * 9L * 4L)
old <- if (file.exists(out)) readLines(out) else character()
utils::write.csv(res, out, row.names = FALSE, quote = FALSE)
cat(sprintf("%s: %d rows from %s; %s\n", out, nrow(res), tex,
            if (identical(readLines(out), old)) "unchanged" else "CHANGED"))
