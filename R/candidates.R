# Candidates of kernel choice.  A *candidate* is one pipeline a choice can
# pick: Euclidean k-NN on the scaled inputs (no learned metric), the linear
# learner on the inputs (no kernel), the KPCA trick with one base kernel,
# with the unweighted sum of the base kernels, or with their aligned
# combination.  Scoring (R/score.R) rates candidates on cross-validation
# folds; selection (R/select.R) picks one; kmaha() fits it.

cand_linear <- function() list(kind = "linear", label = "linear (no kernel)", sigma = NA_real_)

cand_euclidean <- function() {
  list(kind = "euclidean", label = "Euclidean (no metric learning)", sigma = NA_real_)
}

cand_kernel <- function(kernel, index = NA_integer_) {
  list(kind = "kernel", kernel = kernel, index = index,
       sigma = kernel$sigma %||% NA_real_, label = short_kernel_label(kernel))
}

cand_align <- function(kernels, method = "qp") {
  list(kind = "align", kernels = kernels, method = method, sigma = NA_real_,
       label = sprintf("aligned combination (%s) of %d kernels", toupper(method),
                       length(kernels)))
}

cand_unweighted <- function(kernels) {
  list(kind = "unweighted", kernel = kernel_sum(kernels), sigma = NA_real_,
       label = sprintf("unweighted sum of %d kernels", length(kernels)))
}

# A kernel in a few words (for tables of candidates).
short_kernel_label <- function(kernel) {
  switch(kernel$type,
    rbf = sprintf("RBF sigma = %s", format(kernel$sigma)),
    gaussian = sprintf("Gaussian sigma = %s", format(kernel$sigma)),
    laplace = sprintf("Laplace sigma = %s", format(kernel$sigma)),
    poly = sprintf("polynomial degree %s", format(kernel$degree)),
    format(kernel))
}

# The candidate sets of the kernel choices:
#  "kernels" (kernel = "cv"): each base kernel;
#  "auto": each base kernel (first, in the order of "kernels", so that both
#    sets share their scores), then Euclidean k-NN, the linear learner and
#    the unweighted sum.  The aligned combination is not among them: on the
#    development data it was never better than the unweighted sum when both
#    were scored (bench/studies/screen-study.R), and the LP alignment is degenerate.
#  "fixed": the one candidate `cand` (a kernel given to kmaha(), or none),
#    scored when the learner or k is chosen.
candidate_set <- function(type, kernels, cand = NULL) {
  if (type == "fixed") {
    # fitted as given (no cap on the map's rows, see candidate_spec())
    cand$fixed <- TRUE
    return(list(cand))
  }
  base <- lapply(seq_along(kernels), function(i) cand_kernel(kernels[[i]], i))
  switch(type,
    kernels = base,
    auto = c(base, list(cand_euclidean(), cand_linear(), cand_unweighted(kernels))))
}

# The feature map of a candidate fitted on training inputs xs (a fold's or
# all of them), with the alignment it computed (or NULL).
candidate_feature <- function(cand, xs, y, base, ctx) {
  kpca_of <- function(kernel) {
    feature_kpca(kernel, base$rank, base$tol, base$landmarks, base$landmark_method,
                 base$kpca_method %||% "auto")
  }
  switch(cand$kind,
    linear = , euclidean = list(fspec = feature_identity()),
    kernel = , unweighted = list(fspec = kpca_of(cand$kernel)),
    align = {
      lm <- base$landmarks
      m <- if (is.matrix(lm)) nrow(lm) else lm
      rows <- if (!is.null(m) && m < nrow(xs)) stratified_rows(y, as.integer(m))
      # the KPCA of the combined kernel says whether it is degenerate
      al <- align_fit(xs, if (is.null(rows)) y else droplevels(y[rows]), cand$kernels,
                      cand$method, rows, ctx, warn = FALSE)
      list(fspec = kpca_of(al$kernel), alignment = al)
    })
}

# The learner of a candidate: Euclidean k-NN learns nothing; kernelized
# LMNN gets the RKLMNN default weight unless the user set `lambda` (see
# kmaha()); linear LMNN none.  With chosen = TRUE (the candidates of kernel
# choice, scored and fitted), kernelized NCA and LMNN learn a map of at most
# `nca_choice_dim` / `lmnn_choice_dim` rows unless the user set `dim`; NCA
# at least p rows (the linear learner's map on the p inputs, which the
# kernel candidates compete with).
candidate_spec <- function(spec, cand, chosen = FALSE, p = 0L) {
  if (cand$kind == "euclidean") return(euclidean_spec())
  kernelized <- !cand$kind %in% c("linear", "euclidean")
  if (isTRUE(spec$builtin) && spec$name == "lmnn" && kernelized &&
      !"lambda" %in% names(spec$args)) {
    spec$opts$lambda <- klmnn_lambda
  }
  if (chosen && isTRUE(spec$builtin) && kernelized && !"dim" %in% names(spec$args)) {
    cap <- switch(spec$name, nca = nca_choice_dim, lmnn = lmnn_choice_dim, mlkr = mlkr_choice_dim)
    if (spec$name %in% c("nca", "mlkr")) cap <- max(cap, p)
    if (!is.null(cap)) spec$opts$dim_cap <- cap
  }
  spec
}

# The rows of the map kernelized NCA and LMNN learn for kernel choice
# (kmaha()'s "auto", "cv", scored candidates): on the development data a
# map of 16 rows on every KPCA component was as accurate as the full map
# (mean test accuracy of kernel = "auto" over 26 sets x 2 splits: NCA 0.8555
# against 0.8543, bench/studies/rank-study.R; LMNN 0.8622 against 0.8620,
# bench/studies/default-dev.R) at a third (NCA) to a half (LMNN) of the cost;
# capping the KPCA components instead cost accuracy.  NCA's cap is the
# input count when there are more than 16 inputs: on the hold-out set
# ad_data (134 inputs) 16 rows cost the unweighted sum 0.07 of CV accuracy
# against the linear learner's 134 x 134 map; mean test accuracy of the
# default on the 18 hold-out sets 0.8457 -> 0.8490 and on the development
# sets 0.8541 -> 0.8548, at 5% more CPU (bench/studies/default-holdout.R,
# bench/studies/default-dev.R).  The same rule for LMNN: hold-out 0.8536 -> 0.8528
# at 17% more CPU, so LMNN keeps 16.
nca_choice_dim <- 16L
lmnn_choice_dim <- 16L

# The learner's settings when it scores a candidate on a fold (not when the
# chosen candidate is fitted): NCA and LMNN stop at the relative tolerance
# 1e-3 instead of their 1e-5, unless the user set `tol` (in `learner_args`).
# The folds only rank candidates; on the development data (26 sets x 2
# splits, bench/studies/default-dev.R, variants tol1e3/tol1e4) the default's mean
# test accuracy was NCA 0.8568 (1e-4: 0.8553; 1e-5: 0.8548) and LMNN
# 0.8619 (0.8620; 0.8622) at 74 % (NCA) and 60 % (LMNN) of the CPU time.
# NULL: the learner's own tolerance.
score_tol <- 1e-3

# The spec a candidate is scored with on the folds (see score_tol).
scoring_spec <- function(spec) {
  if (!is.null(score_tol) && isTRUE(spec$builtin) && spec$name %in% c("nca", "lmnn", "mlkr") &&
      !"tol" %in% names(spec$args)) {
    spec$opts$tol <- max(spec$opts$tol, score_tol)
  }
  spec
}

# Which candidates the core evaluates without R: base kernels and sums of
# them (the screen runs on those only).
candidate_in_core <- function(cand) {
  cand$kind %in% c("kernel", "unweighted") && kernel_in_core(cand$kernel)
}
