# Kernel alignment (paper section "Kernel Alignment", eqs. align0-align4):
# learn non-negative weights of base kernels so that the combined Gram matrix
# is maximally aligned with the ideal kernel of the training labels.

#' Learn a kernel by kernel alignment
#'
#' Finds non-negative weights \eqn{\alpha_i} such that the kernel
#' \eqn{k = \sum_i \alpha_i k_i} of the given base kernels is maximally
#' aligned with the *ideal kernel* of the training labels,
#' \eqn{Y_{ab} = 1} if \eqn{y_a = y_b} and \eqn{-1/(p-1)} otherwise
#' (\eqn{p} classes), where
#' \eqn{\mathrm{align}(K, Y) = \langle K, Y\rangle_F / (\|K\|_F \|Y\|_F)}.
#'
#' **`method = "qp"`** solves the quadratic program of the paper (its
#' eq. align3): with the Frobenius-normalised base Grams
#' \eqn{K'_i = K_i / \|K_i\|_F}, \eqn{S'_{ij} = \langle K'_i, K'_j\rangle_F}
#' and \eqn{b'_i = \langle K'_i, Y\rangle_F},
#' \deqn{\min_\gamma \gamma^\top S' \gamma \quad \mathrm{s.t.}\quad
#'   \gamma \ge 0,\ \gamma^\top b' = 1,}
#' by [quadprog::solve.QP()]. Fixing \eqn{\langle K, Y\rangle_F = 1} turns the
#' maximal alignment into the minimal \eqn{\|K\|_F}. The weights on the raw
#' base kernels are \eqn{\alpha_i = \gamma_i / \|K_i\|_F}. \eqn{S'} is only
#' positive *semi*-definite (near-identical base kernels, such as RBF kernels
#' with very large \eqn{\sigma}, make it numerically singular), whereas
#' `solve.QP()` needs a strictly positive definite matrix: when the smallest
#' eigenvalue of \eqn{S'} is below \eqn{10^{-9}} times the largest, the
#' smallest ridge \eqn{r I} that lifts it to that level is added, and `r` is
#' reported in the result (it is zero for well-conditioned problems).
#'
#' **`method = "lp"`** minimises the upper bound \eqn{\|\mathrm{vec}(K)\|_1}
#' of \eqn{\|K\|_F} instead (the paper's eq. align4), a linear program solved
#' by [lpSolve::lp()], which gives sparser weights. When every base Gram
#' matrix is entrywise non-negative (always true for RBF, Gaussian and Laplace
#' kernels, and for polynomial kernels of even degree) the objective is
#' exactly linear, \eqn{\sum_i \alpha_i \|\mathrm{vec}(K_i)\|_1}, and the LP
#' has one variable per base kernel. Otherwise the standard absolute-value
#' reformulation adds one variable \eqn{t_{ab} \ge |K_{ab}|} for each pair
#' \eqn{a \le b} on which the base Grams differ in sign; that LP grows with
#' \eqn{n^2} and is practical for a few hundred training points.
#' Note a property of this bound: for entrywise non-negative base Grams,
#' \eqn{\langle K_i, Y\rangle_F \le \|\mathrm{vec}(K_i)\|_1} with equality
#' for a (near-)identity Gram matrix, so over a bandwidth grid the LP tends to
#' put all weight on the smallest bandwidth, whose KPCA coordinates carry
#' little information; prefer `"qp"` for classification.
#'
#' The heavy part, the Frobenius products of all base Grams, is computed in
#' the package's C++ core in blocks of rows: the distances of a block are
#' computed once and shared by all base kernels, and at most a few tens of
#' megabytes of Gram slices are held at any time.
#'
#' **Kernels from elsewhere** ([kernel-sources]). Base kernels evaluated in
#' R (R functions, kernlab kernels without a built-in equivalent) are
#' evaluated on the same blocks of rows, and the products accumulated in R
#' (every base kernel in the list then goes through R's block loop, the
#' built-in ones still computed by the core). A function of two points costs
#' \eqn{n^2} calls per kernel here. With `kernels = "precomputed"`, `x` is a
#' list of Gram matrices of the training points (names, if any, label them);
#' the result then has no combined kernel object (`kernel` is `NULL`) but
#' the combined Gram matrix `gram` = \eqn{\sum_i \alpha_i K_i} on all the
#' rows given, to fit with `kernel = "precomputed"`; combine the kernel rows
#' of new points with the same `weights` (see the examples).
#'
#' @param x Training inputs: a numeric matrix or data frame (used as given;
#'   [kmaha()] passes the standardized inputs). With
#'   `kernels = "precomputed"`, a list of n x n Gram matrices of the training
#'   points.
#' @param y Class labels, one per row of `x` (at least two classes).
#' @param kernels A non-empty list of kernel objects (see [kernels]; kernlab
#'   kernels and R functions too, see [kernel-sources]); the paper's 21
#'   scaled RBF kernels by default. Or `"precomputed"`: `x` holds the Gram
#'   matrices.
#' @param method `"qp"` (exact alignment) or `"lp"` (its \eqn{\ell_1} upper
#'   bound).
#' `align_kernels()` warns when the aligned kernel is numerically degenerate
#' on `x` (its Gram matrix numerically the identity or constant, as for
#' unscaled inputs of extreme magnitude; see [kpca()]).
#'
#' @param landmarks `NULL` (use every row), or a number m: the alignment is
#'   computed on m rows drawn at random within the classes (in proportion to
#'   the class sizes; [set.seed()] reproduces the draw). On these landmark
#'   rows the Nystrom approximation of every base Gram matrix is exact, and
#'   the alignment, a ratio of averages over pairs of points, is estimated
#'   at O(m^2) instead of O(n^2) cost, the way [kmaha()] with `landmarks`
#'   uses it for large n.
#' @param num_threads `NULL` (the package setting, see [kmaha_threads()]:
#'   option `kmaha.num_threads`, then the environment variable
#'   `KMAHA_NUM_THREADS`, then 2) or the number of threads of the compiled
#'   code for this call.
#' @return An object of class `kmaha_alignment`: a list with `weights`
#'   (\eqn{\alpha}, on the raw base kernels), `gamma` (weights on the
#'   normalised kernels), `kernel` (the combined kernel,
#'   `kernel_sum(kernels, weights)`; `NULL` for precomputed Gram matrices),
#'   `gram` (precomputed Gram matrices only: their combination
#'   \eqn{\sum_i \alpha_i K_i}), `alignment` (of the combined kernel on
#'   the training data), `base_alignment` (of each base kernel), `method`,
#'   `objective`, `ridge`, `frobenius` (\eqn{\|K_i\|_F}), `l1`
#'   (\eqn{\|\mathrm{vec}(K_i)\|_1}), `S`, `b` (the normalised \eqn{S'},
#'   \eqn{b'}), `multipliers` (QP Lagrange multipliers: the equality first),
#'   `kernels`, `sigma` (each base kernel's \eqn{\sigma}, `NA` if none) and
#'   `rows` (the rows used with `landmarks`, else `NULL`).
#' @seealso [kmaha()], which uses it for `kernel = "align"`.
#' @examples
#' x <- scale(iris[, 1:4])
#' al <- align_kernels(x, iris$Species)
#' al
#' # the LP bound puts all its weight on the kernel closest to the identity,
#' # and warns that this kernel classifies new points no better than chance
#' al_lp <- suppressWarnings(align_kernels(x, iris$Species, method = "lp"))
#' al_lp$weights
#'
#' # Precomputed Gram matrices: align them, fit the combination, and
#' # combine the kernel rows of new points with the same weights.
#' tr <- c(1:40, 51:90, 101:140)
#' ks <- list(narrow = rbf_kernel(0.3), wide = rbf_kernel(3), quad = poly_kernel(2))
#' grams <- lapply(ks, kernel_matrix, x = x[tr, ])
#' al_g <- align_kernels(grams, iris$Species[tr], kernels = "precomputed")
#' al_g
#' fit <- kmaha(al_g$gram, iris$Species[tr], learner = "dne",
#'              kernel = "precomputed")
#' rows <- lapply(ks, kernel_matrix, x = x[-tr, ], y = x[tr, ])
#' new_rows <- Reduce(`+`, Map(`*`, al_g$weights, rows))
#' mean(predict(fit, new_rows) == iris$Species[-tr])
#' @export
align_kernels <- function(x, y, kernels = paper_kernels(),
                          method = c("qp", "lp"), landmarks = NULL, num_threads = NULL) {
  method <- match_choice(method, c("qp", "lp"), "method")
  ctx <- kmaha_context(num_threads)
  pre <- identical(kernels, "precomputed")
  if (pre) {
    grams <- check_gram_list(x, y)
    kernels <- lapply(seq_along(grams), function(i) precomputed_kernel(
      if (!is.null(names(grams)) && nzchar(names(grams)[i])) sQuote(names(grams)[i], FALSE)
      else sprintf("x[[%d]]", i)))
    n_all <- nrow(grams[[1]])
  } else {
    x <- check_x(x, "x")
    n_all <- nrow(x)
  }
  y <- check_y(y, n_all, "y")
  if (!pre) kernels <- check_kernel_list(kernels)
  rows <- NULL
  if (!is.null(landmarks)) {
    if (!is_count(landmarks) || landmarks < 2) {
      stopf("`landmarks` must be NULL or a number of rows (a whole number >= 2) on which to compute the alignment.")
    }
    if (landmarks < n_all) {
      rows <- stratified_rows(y, as.integer(landmarks))
      y <- droplevels(y[rows])
      if (nlevels(y) < 2L) {
        stopf("The %d rows drawn for `landmarks` hold only one class; use more landmarks.",
              length(rows))
      }
    }
  }
  align_fit(if (pre) grams else x, y, kernels, method, rows, ctx, precomputed = pre)
}

# The alignment fitter: checked inputs in (`x` the training rows, or the list
# of Gram matrices with precomputed = TRUE; `y` the labels of the rows used;
# `rows` the rows used, NULL for all), the kmaha_alignment object out.
# align_kernels() validates and calls it, so does kmaha(kernel = "align")
# through its candidate's feature map; warn = FALSE keeps the degenerate
# kernel warnings quiet.
align_fit <- function(x, y, kernels, method, rows, ctx, precomputed = FALSE, warn = TRUE) {
  pre <- precomputed
  grams <- if (pre) x
  # The base Gram matrices on the rows used: slices of the given ones, or
  # kernels evaluated on x (in the core when it evaluates them all).
  xa <- if (pre || is.null(rows)) x else x[rows, , drop = FALSE]
  ga <- if (pre && !is.null(rows)) lapply(grams, function(K) K[rows, rows, drop = FALSE]) else
    if (pre) grams
  gram_of <- if (pre) function(j) ga[[j]] else function(j) kernel_gram(kernels[[j]], xa, NULL, ctx)
  p <- nlevels(y)
  st <- if (pre) {
    alignment_products_r(function(j, cols) ga[[j]][, cols, drop = FALSE],
                         length(kernels), y, p)
  } else if (all(vapply(kernels, kernel_in_core, NA))) {
    core_alignment_products(kernels, xa, as.integer(y), p, ctx)
  } else {
    alignment_products_r(function(j, cols) {
      kernel_gram(kernels[[j]], xa, xa[cols, , drop = FALSE], ctx)
    }, length(kernels), y, p)
  }
  bad <- which(!is.finite(diag(st$S)) | !is.finite(st$b))
  if (length(bad)) {
    stopf("`kernels[[%d]]` has non-finite Gram values on `x` (they overflow at this scale of `x`); rescale `x` or change the kernel's parameters.",
          bad[1])
  }
  fro <- sqrt(pmax(diag(st$S), 0))
  if (any(fro <= 0)) {
    stopf("`%s[[%d]]` has an all-zero Gram matrix%s; remove it.",
          if (pre) "x" else "kernels", which(fro <= 0)[1], if (pre) "" else " on `x`")
  }
  Sn <- st$S / tcrossprod(fro)
  Sn <- (Sn + t(Sn)) / 2
  bn <- st$b / fro
  if (!any(bn > 0)) {
    stopf("No kernel in `kernels` is positively aligned with the labels `y`, so no non-negative combination can be; try other kernels.")
  }
  m <- length(kernels)
  res <- if (method == "qp") align_qp(Sn, bn) else
    align_lp(gram_of, st, fro)
  gamma <- res$gamma
  alpha <- gamma / fro
  quad <- drop(crossprod(gamma, Sn %*% gamma))
  align <- drop(crossprod(gamma, bn)) / (sqrt(quad) * st$y_norm)
  sig <- vapply(kernels, function(k) if (is.null(k$sigma)) NA_real_ else k$sigma,
                numeric(1))
  if (pre) {
    # The combined Gram matrix on all the rows given.
    combined <- NULL
    gram <- Reduce(`+`, Map(`*`, alpha, grams))
    dimnames(gram) <- dimnames(grams[[1]])
    near_identity <- function() lp_near_identity(precomputed_kernel(), gram, ctx, K = gram)
  } else {
    combined <- kernel_sum(kernels, alpha)
    gram <- NULL
    near_identity <- function() lp_near_identity(combined, xa, ctx)
  }
  lp_degenerate <- method == "lp" && near_identity()
  if (lp_degenerate && warn) {
    top <- which.max(gamma)
    warning(structure(class = c("kmaha_lp_degenerate", "warning", "condition"), list(
      message = sprintf("The LP alignment (method = \"lp\") put %.0f%% of its weight on %s, which is numerically close to the identity on these data: even nearest neighbours are almost orthogonal in its feature space, so new points have kernel values near zero with every training point and nearest neighbours carry no information. This is a property of the LP bound (with non-negative kernels it picks the kernel with the largest ratio of alignment to l1 norm, the one closest to the identity), not of the data; use the QP alignment (method = \"qp\"; kernel = \"align\" in kmaha()) instead.",
                        100 * gamma[top] / sum(gamma), format(kernels[[top]])),
      call = NULL)))
  } else if (warn) {
    kind <- if (pre) gram_verdict(gram, NULL, ctx) else kernel_verdict(combined, xa, ctx)
    if (!is.null(kind)) warn_degenerate(kind, what = "The aligned kernel")
  }
  structure(list(
    weights = alpha, gamma = gamma,
    kernel = combined, gram = gram,
    alignment = align,
    base_alignment = bn / st$y_norm,
    method = method,
    objective = res$objective,
    ridge = res$ridge %||% 0,
    multipliers = res$multipliers,
    frobenius = fro, l1 = st$l1, S = Sn, b = bn,
    kernels = kernels, sigma = sig,
    n = length(y), classes = p, rows = rows, degenerate_lp = lp_degenerate),
    class = "kmaha_alignment")
}

# align_kernels()'s `x` with kernels = "precomputed": a non-empty list of
# Gram matrices (one matrix is a list of one) on the same n points, with n
# matching the labels.
check_gram_list <- function(x, y) {
  if (is.matrix(x)) x <- list(x)
  if (!is.list(x) || is.data.frame(x) || length(x) == 0L) {
    stopf("With kernels = \"precomputed\", `x` must be a non-empty list of Gram matrices of the training points (one per base kernel), not %s.",
          class(x)[1])
  }
  n_y <- if (!is.null(y) && is.null(dim(y))) length(y)
  out <- lapply(seq_along(x), function(i) {
    check_precomputed_gram(x[[i]], sprintf("x[[%d]]", i), n_y, via = "kernels")
  })
  n <- vapply(out, nrow, 1L)
  if (any(n != n[1])) {
    stopf("The Gram matrices in `x` must all cover the same points: `x[[1]]` is %d x %d but `x[[%d]]` is %d x %d.",
          n[1], n[1], which(n != n[1])[1], n[n != n[1]][1], n[n != n[1]][1])
  }
  names(out) <- names(x)
  out
}

# TRUE when a kernel is numerically close to the identity on x: on up to
# 256 evenly spaced rows, the median over points of the normalized kernel
# value k(a, b) / sqrt(k(a, a) k(b, b)) with the nearest other point b is
# below 0.01 (for an RBF kernel: nearest neighbours more than three
# bandwidths apart).
lp_near_identity <- function(kernel, x, ctx, K = NULL) {
  n <- nrow(x)
  if (n < 3L) return(FALSE)
  idx <- unique(round(seq(1, n, length.out = min(n, 256L))))
  K <- if (is.null(K)) kernel_gram(kernel, x[idx, , drop = FALSE], NULL, ctx) else
    K[idx, idx, drop = FALSE]
  d <- sqrt(pmax(diag(K), .Machine$double.xmin))
  C <- K / tcrossprod(d)
  diag(C) <- -Inf
  stats::median(apply(C, 1L, max)) < 0.01
}

# m row indices drawn at random within the classes of y, in proportion to
# the class sizes (largest remainders get the leftover rows), sorted.
stratified_rows <- function(y, m) {
  counts <- tabulate(as.integer(y), nlevels(y))
  exact <- m * counts / length(y)
  alloc <- floor(exact)
  left <- m - sum(alloc)
  if (left > 0) {
    extra <- order(exact - alloc, decreasing = TRUE)[seq_len(left)]
    alloc[extra] <- alloc[extra] + 1
  }
  rows <- lapply(seq_along(counts), function(c) {
    r <- which(as.integer(y) == c)
    r[sample.int(length(r), alloc[c])]
  })
  sort(unlist(rows, use.names = FALSE))
}

check_kernel_list <- function(kernels, arg = "kernels") {
  if (inherits(kernels, "kmaha_kernel") || !is.list(kernels) ||
      length(kernels) == 0L) {
    stopf("`%s` must be a non-empty list of kernel objects, e.g. paper_kernels() or lapply(c(0.5, 1, 2), rbf_kernel).",
          arg)
  }
  if (all(vapply(kernels, is.matrix, NA))) {
    stopf("`%s` is a list of matrices: Gram matrices are aligned by align_kernels(x = <list of Gram matrices>, y, kernels = \"precomputed\"), and fitted with kernel = \"precomputed\".",
          arg)
  }
  for (i in seq_along(kernels)) kernels[[i]] <- check_kernel(kernels[[i]], sprintf("%s[[%d]]", arg, i))
  unname(kernels)
}

# QP of eq. align3 with quadprog; a minimal ridge only when S' is not
# numerically positive definite.
align_qp <- function(Sn, bn) {
  m <- length(bn)
  ev <- eigen(Sn, symmetric = TRUE, only.values = TRUE)$values
  floor_ev <- 1e-9 * max(ev[1], 1e-300)
  ridge <- max(0, floor_ev - ev[m])
  Amat <- cbind(bn, diag(m))
  bvec <- c(1, rep(0, m))
  sol <- NULL
  for (attempt in 1:6) {
    Dmat <- 2 * (Sn + diag(ridge, m))
    sol <- try_step(quadprog::solve.QP(Dmat, rep(0, m), Amat, bvec, meq = 1L),
                    function(e) NULL)
    if (!is.null(sol)) break
    ridge <- max(ridge * 100, floor_ev)
  }
  if (is.null(sol)) {
    stopf("The alignment QP could not be solved: the Gram matrices of `kernels` are numerically degenerate.")
  }
  # Round-off leaves tiny positive weights on inactive kernels: zero those
  # below 1e-9 of the largest, then restore gamma'b' = 1 exactly.
  gamma <- pmax(sol$solution, 0)
  gamma[gamma < 1e-9 * max(gamma)] <- 0
  gamma <- gamma / sum(gamma * bn)
  list(gamma = gamma, objective = drop(crossprod(gamma, Sn %*% gamma)),
       ridge = ridge, multipliers = sol$Lagrangian)
}

# LP of eq. align4 in the raw weights alpha: min ||vec(sum alpha_i K_i)||_1
# s.t. alpha >= 0, sum alpha_i <K_i, Y> = 1.  Returns gamma = alpha * ||K_i||_F.
align_lp <- function(gram_of, st, fro) {
  m <- length(fro)
  if (all(st$min_entry >= 0)) {
    sol <- lpSolve::lp("min", st$l1, matrix(st$b, 1L), "=", 1)
    if (sol$status != 0L) stopf("The alignment LP failed (lpSolve status %d).", sol$status)
    alpha <- sol$solution
    return(list(gamma = alpha * fro, objective = sum(alpha * st$l1)))
  }
  # General case: absolute values through auxiliary variables on the pairs
  # (a <= b) where the base Grams differ in sign.
  Ks <- lapply(seq_len(m), gram_of)
  up <- which(upper.tri(Ks[[1]], diag = TRUE))
  w <- ifelse(row(Ks[[1]])[up] == col(Ks[[1]])[up], 1, 2)
  V <- vapply(Ks, function(K) K[up], numeric(length(up)))
  if (!is.matrix(V)) V <- matrix(V, ncol = m)
  pos <- rowSums(V >= 0) == m
  neg <- rowSums(V <= 0) == m
  mixed <- which(!(pos | neg))
  cvec <- colSums(w[pos] * V[pos, , drop = FALSE]) -
    colSums(w[neg & !pos] * V[neg & !pos, , drop = FALSE])
  q <- length(mixed)
  obj <- c(cvec, w[mixed])
  # Constraints: t_q - V alpha >= 0, t_q + V alpha >= 0, b' alpha = 1.
  Vm <- V[mixed, , drop = FALSE]
  ij <- which(Vm != 0, arr.ind = TRUE)
  vals <- Vm[ij]
  trip <- rbind(
    cbind(seq_len(q), m + seq_len(q), 1),
    cbind(ij[, 1], ij[, 2], -vals),
    cbind(q + seq_len(q), m + seq_len(q), 1),
    cbind(q + ij[, 1], ij[, 2], vals),
    cbind(2 * q + 1, seq_len(m), st$b))
  sol <- lpSolve::lp("min", obj, const.dir = c(rep(">=", 2 * q), "="),
                     const.rhs = c(rep(0, 2 * q), 1), dense.const = trip)
  if (sol$status != 0L) stopf("The alignment LP failed (lpSolve status %d).", sol$status)
  alpha <- sol$solution[seq_len(m)]
  list(gamma = alpha * fro, objective = sol$objval)
}

#' @export
print.kmaha_alignment <- function(x, ...) {
  cat(wrap_lines(sprintf("<kmaha alignment> %s over %d base kernels (%d training points, %d classes)",
                         if (x$method == "qp") "QP (exact alignment)" else "LP (l1 upper bound)",
                         length(x$weights), x$n, x$classes), first = ""))
  cat(wrap_lines(sprintf("alignment of the combined kernel: %.4f (best single kernel: %.4f)",
                         x$alignment, max(x$base_alignment))))
  if (x$ridge > 0) {
    cat(wrap_lines("(some base kernels are nearly identical on these data, so a tiny ridge was added to solve the problem; see summary())"))
  }
  nz <- which(x$gamma > 1e-8 * max(x$gamma))
  share <- x$gamma / sum(x$gamma)
  cat(wrap_lines(sprintf("%d kernel(s) with non-zero weight:", length(nz))))
  for (i in nz) {
    cat(wrap_lines(sprintf("%s: weight %.4g (share %.3f)", short_kernel_label(x$kernels[[i]]),
                           x$weights[i], share[i]), first = "    ", indent = "      "))
  }
  invisible(x)
}

#' Plot kernel-alignment weights
#'
#' A bar plot of the share of each base kernel in the aligned kernel
#' (\eqn{\gamma_i / \sum_j \gamma_j}, the weights on the Frobenius-normalised
#' Grams), over \eqn{\log_{10}\sigma} when the base kernels have a bandwidth.
#'
#' @param x A `kmaha_alignment` object from [align_kernels()].
#' @param ... Passed to [graphics::barplot()].
#' @return `x`, invisibly.
#' @examples
#' al <- align_kernels(scale(iris[, 1:4]), iris$Species)
#' plot(al)
#' @export
plot.kmaha_alignment <- function(x, ...) {
  share <- x$gamma / sum(x$gamma)
  has_sigma <- all(!is.na(x$sigma))
  lab <- if (has_sigma) format(round(log10(x$sigma), 2)) else
    as.character(seq_along(share))
  # The tick labels are vertical (las = 2): make the bottom margin deep
  # enough for the longest one (they start one line below the axis) and put
  # the axis title below them.
  csi <- graphics::par("csi")
  label_lines <- 1 + max(graphics::strwidth(lab, units = "inches")) / csi
  op <- graphics::par(mar = c(label_lines + 2.6, 4.1, 4.1, 1.1))
  on.exit(graphics::par(op))
  graphics::barplot(share, names.arg = lab, las = 2,
                    ylab = "share of normalised weight",
                    main = sprintf("Kernel alignment (%s): %.3f", toupper(x$method),
                                   x$alignment), ...)
  graphics::title(xlab = if (has_sigma) expression(log[10] ~ sigma) else "base kernel",
                  line = label_lines + 1)
  invisible(x)
}

# --------------------------------------------------------------------------
# Kernel alignment with kernels evaluated in R, or precomputed Gram
# matrices: the Frobenius products of core_alignment_products() (S, b, l1,
# min_entry, y_norm), accumulated over blocks of columns as the core does.
# `block_gram(j, cols)` returns the n x length(cols) slice of base Gram j.
alignment_products_r <- function(block_gram, m, y, p) {
  n <- length(y)
  yi <- as.integer(y)
  off <- -1 / (p - 1)
  counts <- tabulate(yi, p)
  same <- sum(counts^2)
  out <- list(S = matrix(0, m, m), b = numeric(m), l1 = numeric(m),
              min_entry = rep(Inf, m),
              y_norm = sqrt(same + (n * n - same) * off^2))
  b <- max(1L, min(n, as.integer(floor(4e6 / (n * m)))))
  for (s in seq(1L, n, by = b)) {
    cols <- s:min(n, s + b - 1L)
    G <- matrix(0, n * length(cols), m)
    for (j in seq_len(m)) {
      Kb <- block_gram(j, cols)
      out$l1[j] <- out$l1[j] + sum(abs(Kb))
      out$min_entry[j] <- min(out$min_entry[j], min(Kb))
      G[, j] <- Kb
    }
    yv <- ifelse(outer(yi, yi[cols], "=="), 1, off)
    out$S <- out$S + crossprod(G)
    out$b <- out$b + drop(crossprod(G, as.vector(yv)))
  }
  out$S <- (out$S + t(out$S)) / 2
  out
}
