# bench/studies/default-holdout.R with the aligned (QP) combination put back among
# kernel = "auto"'s candidates (as in 0.4.0), to measure what leaving it out
# in 0.5.0 costs on the hold-out sets.  The installed package is not
# changed: candidate_set() is replaced in the loaded namespace only.
#   Rscript bench/studies/default-holdout-align.R [learner] [splits] [out.csv] [sets]
suppressMessages(library(kmaha))
ns <- asNamespace("kmaha")
without_align <- get("candidate_set", ns)
unlockBinding("candidate_set", ns)
assign("candidate_set", function(type, kernels) {
  out <- without_align(type, kernels)
  if (type == "auto") out <- c(out, list(get("cand_align", ns)(kernels, "qp")))
  out
}, envir = ns)
args <- commandArgs(TRUE)
if (length(args) < 3) {
  learner <- if (length(args) >= 1) args[1] else "nca"
  args <- c(learner, if (length(args) >= 2) args[2] else "1:3",
            sprintf("bench/studies/results/default_holdout_%s_%s_with_align.csv", learner,
                    packageVersion("kmaha")))
}
# default-holdout.R reads its arguments with commandArgs(TRUE)
commandArgs <- function(trailingOnly = FALSE) args
source("bench/studies/default-holdout.R")
