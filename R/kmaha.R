# The KPCA trick (paper, Figure "KPCA trick"): kernel PCA on the training
# data, then any linear Mahalanobis learner on the KPCA coordinates, with the
# kernel chosen by cross-validation, kernel alignment or an unweighted sum.

#' Kernelized Mahalanobis distance learning by the KPCA trick
#'
#' Kernelizes a linear Mahalanobis distance learner without changing its
#' code: the training inputs are standardized, mapped to their kernel PCA
#' coordinates (all components whose eigenvalue exceeds `tol`, or the top
#' `rank`), and the learner is run on those coordinates. By the paper's
#' representer theorems this equals learning the metric in the kernel's
#' feature space. New points are classified by k nearest neighbours in the
#' learned space. By default (`kernel = "auto"`, `learner = "auto"`, `k`
#' unset) the kernel (or no kernel at all), the learner and the number of
#' neighbours are chosen together by one cross-validation of the whole
#' pipeline.
#'
#' **Learners.** `learner = "auto"` (the default) scores NCA, LMNN and DNE on
#' the same folds, sharing the screen of the base kernels, each kernel's Gram
#' matrix and each fold's KPCA, and fits the best pipeline (see Kernel
#' choice); `learner_args` then passes each learner the options it takes
#' (an option none of them takes is an error), and a list element named by a
#' learner passes options to it alone, e.g. `learner_args = list(lmnn =
#' list(mu = 0.3))`. With a given kernel (`kernel = "linear"`, a kernel
#' object, `"align"`, `"unweighted"`, `"precomputed"`) the three learners are
#' scored on that kernel alone. A named learner keeps its own: `"nca"`,
#' `"lmnn"` and `"dne"` run the fitters of [nca()],
#' [lmnn()] and [dne()] on the KPCA coordinates (used as given, not
#' rescaled); `learner_args` passes their options, e.g. `lambda` for the
#' regularized RKNCA/RKLMNN, `dim`, or `k` (LMNN/DNE target neighbours). Any
#' R function `f(x, y, ...)` works too: it receives the KPCA coordinates and
#' the labels (plus `learner_args`) and must return a d x D map matrix, or an
#' object with one (an element `L` or a [transform_matrix()] method). If it
#' has a `targets` argument it receives the same-class target neighbours
#' chosen by `neighbors`.
#'
#' **Regression.** A numeric `y` (not a factor) makes kmaha() fit a
#' regression: the metric is learned by MLKR ([mlkr()]; `learner = "auto"`
#' or `"mlkr"`; a classifier's name is an error, as is `"mlkr"` with class
#' labels), and new points are predicted by the k-NN regression in the
#' learned metric, the neighbours weighted by 1 / distance (a
#' `"kmaha_regression"` model, see [predict.kmaha_regression()]). Kernel
#' choice works as for classes, with these differences: the candidates are
#' Euclidean k-NN, linear MLKR, the base kernel the screen keeps and the
#' unweighted sum, scored by their cross-validated RMSE on unstratified
#' folds (lower is better), each at its best k among 1, 3, 5, 7, 9, 12, 15
#' and 20; the
#' screen of the base kernels (`cv_strategy = "fast"`) is kernel ridge
#' regression scored by its leave-one-out error (the best of five ridge
#' weights) on at most 150 rows, not DNE (on the development data it chose
#' as well as MLKR on every base kernel, at a fifth of the CPU:
#' `bench/studies/regression-screen.R`); MLKR on a kernel's KPCA coordinates learns a map of
#' at most 16 rows (or as many as there are inputs); and a kernelized
#' candidate is kept only when it beats the better baseline (the lower RMSE
#' of Euclidean k-NN and linear MLKR) by more than half a standard error of
#' the paired per-row differences in held-out squared error. With a given
#' kernel (no choice) and `k` unset, k is 10 (MLKR's default). `print()`,
#' `summary()` and [glance()][glance.kmaha_regression] say what was chosen
#' and why. On 12 regression sets nobody tuned it on (3 splits each,
#' `bench/regression-accept.R`, `bench/results/regression-accept.md`) the
#' default's mean test RMSE was 0.90 times Euclidean k-NN's (k chosen the
#' same way), 0.90 times kknn's at its defaults and 0.99 times ranger's, at
#' 0.87 times the CPU of the classification default on the same rows; it
#' was above Euclidean k-NN's on 6 sets (by at most 2.9%; on three of them
#' by less than 0.1%) and above kknn's on 5 (by at most 7.8%).
#'
#' **Pairs** (`"mmc"`, `"itml"`). Without pairs these learners draw them
#' from the labels, on the KPCA of all training rows. Give your own as
#' `learner_args = list(pairs = , similar = )`: a two-column matrix of row
#' indices of `x` and 1 (similar) or -1 (dissimilar) per pair, as for
#' [mmc()]. With a kernel (a kernel object, `"unweighted"` or `"align"`) the
#' KPCA is then fitted on the rows that appear in a pair: the learner's
#' objective sees the data only through the pairs, so its optimum lies in
#' the span of those rows' features and nothing is lost; every row of `x` is
#' projected by that KPCA, and the learner is fitted on the paired rows'
#' coordinates (the model's `paired_rows`; `pairs` are reported numbered as
#' the rows of `x`). The rows in no pair do not change the learned metric,
#' except through the input scaling, which uses every row (standardizing;
#' with `scale = FALSE` centring, which matters only to kernels that are not
#' translation-invariant). `y` may then be left out: the model only transforms
#' (`predict(type = "transform")`); with `y`, every row is a labelled
#' reference point of the k-NN classifier. Pairs name rows of `x`, so they
#' cannot be given with kernel choice (`"auto"`, `"cv"`), which refits on
#' subsets of the rows and, without `y`, has no labels to score with; nor
#' with `"precomputed"` (pass the Gram matrix of the paired rows). With the
#' formula interface, pairs (and [rca()]'s `chunks`, one per row) refer to
#' the rows of `data`: when `subset` or `na.action` leaves rows out, the
#' pairs are renumbered into the rows kept, and a pair that joins a row left
#' out is an error (the same holds for the formula methods of [mmc()],
#' [itml()] and [rca()]).
#'
#' **The number of neighbours.** With `k` unset (`NULL`, the default),
#' whenever kmaha() cross-validates (kernel choice, or `learner = "auto"`)
#' each fold votes its held-out rows with k = 1, 3, 5, ..., 15 neighbours
#' (a regression: 1, 3, 5, 7, 9, 12, 15 and 20) from one neighbour search (the k a
#' fold's training part allows), and each
#' pipeline is scored at its best k (the smallest on ties): on overlapping
#' classes more neighbours vote better. The fitted model keeps that k (its
#' `k`, and `kernel_choice$k`); `predict(k = )` can still override it. A
#' given `k` is used as it is everywhere. A named learner with a given kernel
#' (no cross-validation) uses k = 1 when `k` is unset.
#'
#' **Kernel choice.**
#' * `"auto"` (the default): kernel choice in two steps, *score, then
#'   select* ([score_candidates()]). One stratified `cv_folds`-fold
#'   cross-validation of the whole pipeline scores, on the same folds, the
#'   plain k-NN on the standardized inputs (`"Euclidean"`: no learned
#'   metric; with at least as many inputs as training points its map is the
#'   projection onto the span of the centred training points, which finds
#'   the same neighbours), the linear learner(s) (`"linear"`), the unweighted
#'   sum of `kernels`, and the base kernels of `kernels`, each with every
#'   learner scored (see Learners) and at its best k: with `cv_strategy =
#'   "fast"` a screen passes the most promising base kernel to the learner
#'   (on each fold, DNE on the 32 leading KPCA components, and k-NN of the
#'   held-out rows in its metric; see [score_candidates()]), with
#'   `"exhaustive"` every base kernel is scored with the learner. With
#'   `learner = "nca"` or `"lmnn"`, a kernel chosen this way is scored and
#'   fitted with a map of at most 16 rows (NCA: or as many as there are
#'   inputs when there are more, the rows of the linear learner's map;
#'   `learner_args$dim` overrides it): as accurate on the development data,
#'   at a third to a half of the cost. The rule
#'   (`rule = "auto"`) then takes the best score (a base kernel's score is
#'   smoothed over its neighbouring bandwidths, weights 1-2-1, when several
#'   were scored; among equal best scores the middle of the plateau), and
#'   keeps a kernelized candidate only when it beats the better baseline —
#'   the higher-scoring of Euclidean k-NN and the linear learner(s), the
#'   simpler on a tie — by more than half a standard error of their paired
#'   difference over the held-out points; otherwise that baseline is used.
#'   With more than 1000 training points (and neither `landmarks` nor `rank`
#'   given) the candidates are scored on a stratified subsample of 1000 rows,
#'   and the chosen one is fitted on all rows: a kernel with exact KPCA up to
#'   2000 rows, above with Nystrom KPCA (1250 landmarks) of at most 500
#'   components, a cap that falls smoothly to 100 at 16 000 rows, so that
#'   the cost grows smoothly in n (`bench/default-cost-n.R`). `print()` says what was
#'   chosen and why; `kernel_choice$cv` holds the scores (`$curve`: every
#'   candidate's cross-validated accuracy);
#' * `"cv"`: the best of `kernels` alone by the same cross-validation (the
#'   paper's CV column; [cv_kernel()]); with `cv_strategy = "fast"` the
#'   screen passes 3 base kernels to the learner. Above 1000 rows it scores
#'   on the subsample and fits as `"auto"` does;
#' * a scored-candidates object from [score_candidates()] (or a fit's
#'   `kernel_choice$cv`), computed on the same data: the candidate `rule`
#'   selects from it is fitted, with no scoring (`rule = "auto"` by default
#'   for scores of `candidates = "auto"`, else `"cv"`; `rule = "auto"`
#'   compares with the baselines, so it needs scores of `candidates =
#'   "auto"`), so the same scores can be read under another rule. The
#'   scores record what shaped them: a hash of the values of `x` and of the
#'   labels in row order, and the settings `learner`, `learner_args`, `k`,
#'   `neighbors`, `kernels` (each kernel with its parameters, in order),
#'   `cv_folds`, `cv_strategy`, `scale`, `rank`, `tol`, `seed`, `landmarks`
#'   and `landmark_method`. Each of these arguments that the call leaves
#'   out takes the scores' value (the model's explanation, shown by
#'   `print()`, says so, and its `settings` hold them); one the call sets
#'   to another value is an error naming the argument and the scores'
#'   value; other data are an error. So the model is always the pipeline
#'   the scores chose, with the settings `summary()` reports;
#' * a kernel object (e.g. `poly_kernel(2)`): used as given; so is a
#'   kernlab kernel (e.g. `kernlab::rbfdot(sigma = 0.1)`, translated into the
#'   equal built-in kernel where there is one) or an R function `k(x, y)` or
#'   [custom_kernel()], evaluated in R ([kernel-sources] says what is slow);
#' * `"precomputed"`: `x` is the n x n Gram matrix of the training points,
#'   used as given (`scale` does not apply, `neighbors` must be
#'   `"feature"`, no `landmarks`), and `predict()` takes the m x n kernel
#'   values of new points against the training points as `newdata`. The
#'   choices above and below choose among kernel objects only; to combine
#'   several Gram matrices, align them with [align_kernels()] (`kernels =
#'   "precomputed"`) and fit its `gram` as a precomputed kernel;
#' * `"linear"`: no KPCA at all — the original learner on the standardized
#'   inputs;
#' * `"align"` (alias `"aligned"`): the combination of `kernels` learned by
#'   the kernel-alignment QP ([align_kernels()]). The LP upper bound of the
#'   paper is available as `align_kernels(method = "lp")` for the paper's
#'   comparison, not as a kernel choice: with non-negative base kernels it
#'   puts its weight on the kernel closest to the identity, which classifies
#'   new points no better than chance (fit its `kernel` yourself if you must);
#' * `"unweighted"`: the plain sum of `kernels`.
#'
#' **Large n: Nystrom KPCA.** Exact KPCA needs the n x n Gram matrix, which
#' limits the KPCA trick to a few thousand training points. With
#' `landmarks` (a number m, or a matrix of landmark points in the units of
#' `x`) the KPCA step uses the Nystrom method of [kpca()] instead: O(n m^2)
#' time, O(n r + m^2) memory, and predictions that evaluate the kernel
#' against the m landmarks only. The learner then learns a metric in the
#' feature space restricted to the span of the landmarks (see [kpca()] for
#' what is preserved). `landmark_method` chooses m landmarks among the
#' training rows (`"random"` or kernel `"kmeans++"`). With `kernel = "cv"`
#' each fold draws its own landmarks ([cv_kernel()]); with `"align"` the
#' alignment is computed on m training rows drawn at random within classes
#' ([align_kernels()]). Combine with `rank` (e.g. 100) to keep
#' the learner's input small.
#'
#' **Regularized KLMNN (the default for `learner = "lmnn"` with a kernel).**
#' With every KPCA component kept there are \eqn{n - 1} coordinates, and LMNN
#' can map each training class onto a single point, a unit away from the
#' other classes: its objective is zero, but the map amplifies the smallest
#' kernel principal components and test points land far from their class.
#' Unless `learner_args` sets `lambda`, kernelized LMNN is therefore the
#' paper's regularized RKLMNN, \eqn{\lambda\,\mathrm{tr}(M)} added to the
#' objective, with the scale-free weight \eqn{\lambda = \lambda_0 s}: \eqn{s}
#' is the total variance of the KPCA coordinates (the mean squared
#' feature-space distance of the training points to their centroid), so that
#' the same problem is solved whatever the scale of the kernel, and
#' \eqn{\lambda_0 = 1}. `learner_args = list(lambda = 0)` gives plain KLMNN.
#' A `lambda` given as a function is called with the learner's input
#' coordinates and replaced by its value. Linear LMNN (`kernel = "linear"`)
#' is not regularized by default.
#'
#' **Small classes** (LMNN and DNE, and learner functions that take
#' `targets`): each point wants `learner_args$k` same-class target
#' neighbours (3 by default); a class with fewer than `k + 1` members is used
#' as far as it goes, with one warning, and it is an error when no class has
#' `k + 1` members. NCA follows the same rule with `k = 1` (see [nca()]).
#'
#' **Numerically degenerate kernels**, whose Gram matrix is numerically the
#' identity or a constant on the training data (e.g. an RBF kernel whose
#' `sigma` is far too small or too large for the scale of the inputs), give a
#' warning from [kpca()].
#'
#' **Target neighbours** (LMNN and DNE): `neighbors = "feature"` finds them by
#' Euclidean distance in the KPCA coordinates, which equals the distance in
#' feature space (the paper's Proposition "parseval"); `"input"` finds them in
#' the standardized input space, as the paper does with the unweighted kernel.
#'
#' @param x A numeric matrix or data frame of inputs, one row per
#'   observation (numeric or logical columns; see [nca()] for other column
#'   types). With `kernel = "precomputed"`, the n x n Gram matrix of the
#'   training points.
#' @param formula For the formula method, a formula such as `Species ~ .`
#'   (first, or named `formula =` as for the other learners).
#' @param y Class labels, one per row of `x`; or a numeric response, for a
#'   regression (see Regression); may be left out for a pair learner given
#'   its pairs (see Pairs).
#' @param learner `"auto"` (NCA, LMNN and DNE scored, the best kept),
#'   `"nca"`, `"lmnn"`, `"dne"`, `"lfda"`, `"rca"`, `"mmc"`, `"itml"`
#'   (the fitters of [lfda()], [rca()], [mmc()], [itml()], the pair learners
#'   with pairs drawn from the labels or given, see Pairs) or a learner
#'   function (see Details).
#' @param kernel A kernel object (a kernlab kernel or an R function too,
#'   see [kernel-sources]), one of `"auto"`, `"align"`, `"aligned"`,
#'   `"cv"`, `"unweighted"`, `"linear"`, `"precomputed"`, or a
#'   scored-candidates object ([score_candidates()]).
#' @param rule With `kernel = "auto"`, `"cv"` or a scored-candidates object:
#'   the selection rule, `"auto"` or `"cv"` (see Kernel choice); `NULL` for
#'   the kernel choice's own.
#' @param k Neighbours of the kNN classifier (used by `predict()`, the
#'   training accuracy and the cross-validation score); `NULL` (the default)
#'   chooses it by cross-validation among the odd k from 1 to 15 (a
#'   regression: 1, 3, 5, 7, 9, 12, 15, 20; see The number of neighbours).
#' @param learner_args A named list of further learner arguments.
#' @param neighbors `"feature"` or `"input"`: where LMNN/DNE target
#'   neighbours are found.
#' @param kernels Base kernels for `"auto"`, `"cv"`, `"align"` and `"unweighted"`
#'   (kernel objects, kernlab kernels or R functions); the paper's 21 scaled
#'   RBF kernels by default.
#' @param cv_folds Number of cross-validation folds for `kernel = "auto"`
#'   and `"cv"`.
#' @param cv_strategy `"fast"` (screen the base kernels, then the learner
#'   on the shortlist) or `"exhaustive"`: the `strategy` of
#'   [score_candidates()] for `kernel = "auto"` and `"cv"`.
#' @param scale Standardize the input columns by the training data (`TRUE`)
#'   or only centre them (`FALSE`).
#' @param rank,tol Passed to [kpca()]: number of components kept (`NULL`:
#'   all with eigenvalue above `tol` relative to the largest).
#' @param seed `NULL` or a number: the seed for the cross-validation folds
#'   and the fit's other random draws (pairs drawn from the labels, Nystrom
#'   landmarks, random starts), giving the same folds and fit under any
#'   [RNGkind()] (the session's random state and kind are restored
#'   afterwards).
#' @param landmarks `NULL` (exact KPCA), or the number of Nystrom landmarks,
#'   or a numeric matrix of landmark points with the columns of `x` (see
#'   Large n).
#' @param landmark_method `"random"` or `"kmeans++"`: how `landmarks = m`
#'   picks the landmarks (see [kpca()]).
#' @param ... For the formula method, arguments passed to the default method.
#'   Must be empty otherwise.
#' @param data,subset,na.action For the formula method: where to find the
#'   variables, which rows to use, and what to do with missing values.
#' @return A fitted model of class `kmaha_fit` (and `kmaha_model`, with
#'   `kmaha_linear` when no kernel was used and `kmaha_kpca_trick`
#'   otherwise): the stages `prep` (input scaling), `feature_map` (`type`
#'   `"identity"`, `"kpca"` or `"nystrom"`, with the kernel, projection and
#'   centring statistics), `L` (the learned map on the feature map's
#'   coordinates), the reference `embedding` and labels `y`, `k`, the
#'   `targets` (LMNN/DNE target neighbours), `convergence`, `train_accuracy`,
#'   `kernel_choice` (`type`, plus the `cv` or `alignment` object and the
#'   reason for the choice when one was made) and `settings`, plus the
#'   learner's own diagnostics. `y` keeps every level of the labels,
#'   including levels without rows (a warning names them), so predictions
#'   have the training levels. `train_accuracy` is the leave-one-out kNN
#'   accuracy on the training points in the learned space: it is optimistic,
#'   since the kernel and the metric were chosen on those same points (on
#'   pure noise it can be near 1), so estimate accuracy on held-out data or
#'   with [cv_kernel()] / caret resampling. See [kmaha-model] for
#'   `predict()`, `print()`, `summary()`, `plot()` and the other methods.
#' @param num_threads `NULL` (the option `kmaha.num_threads`, else the
#'   environment variable `KMAHA_NUM_THREADS`, else 2) or the number of
#'   threads of the compiled code for this call: the final fit, the screen
#'   and the alignment. The fold fits of kernel choice run one thread each,
#'   so that their scores depend neither on the plan nor on the thread count
#'   (see [cv_kernel()]); `learner_args` has no thread setting.
#' @seealso [kmaha-model], [cv_kernel()], [align_kernels()], [kpca()].
#' @examples
#' # Two concentric rings: no linear metric separates them, a degree-2
#' # polynomial kernel does.
#' set.seed(1)
#' t <- runif(120, 0, 2 * pi)
#' r <- rep(c(1, 2), each = 60)
#' x <- cbind(r * cos(t), r * sin(t))
#' y <- factor(r)
#' fit <- kmaha(x, y, learner = "dne", kernel = poly_kernel(2), scale = FALSE)
#' fit
#' predict(fit, rbind(c(0, 1), c(0, 2)))
#'
#' # Aligned kernel on iris, formula interface
#' fit2 <- kmaha(Species ~ ., data = iris, learner = "dne", kernel = "align")
#' summary(fit2)
#'
#' # The default: the kernel (or none) chosen by cross-validation
#' fit3 <- kmaha(Species ~ ., data = iris, learner = "dne", seed = 1)
#' fit3
#' fit3$kernel_choice$cv$curve
#' # the same scores read by the paper's cross-validation rule, no rescoring
#' fit4 <- kmaha(Species ~ ., data = iris, learner = "dne",
#'               kernel = fit3$kernel_choice$cv, rule = "cv")
#'
#' # A numeric response: a regression (MLKR), chosen the same way
#' reg <- kmaha(mpg ~ ., data = mtcars[-(1:4), ], seed = 1)
#' reg
#' predict(reg, mtcars[1:4, ])
#' @export
kmaha <- function(x, ...) UseMethod("kmaha")

#' @rdname kmaha
#' @export
kmaha.formula <- function(formula, data = NULL, subset, na.action, ...) {
  formula_method(match.call(), parent.frame(), kmaha.default, list(...), "kmaha")
}

#' @rdname kmaha
#' @export
kmaha.default <- function(x, y = NULL, learner = "auto", kernel = "auto", k = NULL,
                          learner_args = list(),
                          neighbors = c("feature", "input"),
                          kernels = paper_kernels(), cv_folds = 5,
                          scale = TRUE, rank = NULL, tol = 1e-8, seed = NULL,
                          cv_strategy = c("fast", "exhaustive"),
                          landmarks = NULL,
                          landmark_method = c("random", "kmeans++"),
                          rule = NULL, num_threads = NULL, ...) {
  call <- model_call(match.call(), "kmaha")
  check_dots_empty("kmaha()", ..., hint = "Pass learner options in `learner_args`.")
  cv_strategy <- match_choice(cv_strategy, c("fast", "exhaustive"), "cv_strategy")
  choice <- resolve_kernel_choice(kernel)
  if (choice$type == "scores") {
    if (!missing(y)) check_scores_mode(choice$scores, y)
    # arguments left out take the scores' values (R/scores-check.R)
    choice$given <- intersect(names(scores_arguments), names(match.call())[-1L])
    choice$taken <- scores_take(choice$scores, environment(), choice$given)
  }
  a <- check_choice_args(x, y, learner, k, learner_args, neighbors, kernels, scale, rank,
                         tol, seed, landmarks, landmark_method, num_threads,
                         type = choice$type, precomputed = isTRUE(choice$precomputed),
                         kernel = choice$kernel)
  cv_folds <- check_count(cv_folds, "cv_folds", lower = 2L)
  if (choice$type == "scores") {
    choice$scores <- check_scores(choice$scores, a, cv_folds, cv_strategy, choice$given)
    choice$scores$given_note <- scores_taken_note(choice$taken, a, cv_folds, cv_strategy)
  }
  if (!is.null(rule)) {
    if (!choice$type %in% c("auto", "cv", "scores")) {
      stopf("`rule` selects from scored candidates: it applies with kernel = \"auto\", \"cv\" or a scored-candidates object, not with kernel = %s.",
            if (choice$type == "kernel") "a kernel object" else dQuote(choice$type, FALSE))
    }
    if (!is.character(rule) || length(rule) != 1L || is.na(rule) || !rule %in% selection_rules) {
      stopf("`rule` must be \"auto\" or \"cv\".")
    }
    if (rule == "auto" && (choice$type == "cv" ||
                           (choice$type == "scores" && identical(choice$scores$type, "kernels")))) {
      stopf("`rule = \"auto\"` keeps a kernel only when it beats the baselines (Euclidean k-NN and the linear learner), but %s; use rule = \"cv\" (the best kernel), or score the baselines too with %s.",
            if (choice$type == "cv") "kernel = \"cv\" scores the base kernels only"
            else "the scores given as `kernel` hold base kernels only (candidates = \"kernels\")",
            if (choice$type == "cv") "kernel = \"auto\"" else "score_candidates(candidates = \"auto\")")
    }
  }
  # With a seed, every random draw of the fit comes from it (the folds, and
  # the final fit's pairs drawn from the labels, landmarks and random
  # starts), and the session's random state is left as it was.
  if (is.null(a$seed)) return(kmaha_fit(a, choice, cv_folds, cv_strategy, rule, call))
  with_kmaha_seed(a$seed, kmaha_fit(a, choice, cv_folds, cv_strategy, rule, call))
}

# The checked arguments shared by kmaha() and score_candidates(): the data,
# the learner's spec, the kernel settings and the call's context.  `type` is
# the kernel choice (resolve_kernel_choice()), `kernel` the kernel object
# of a given kernel.
check_choice_args <- function(x, y, learner, k, learner_args, neighbors, kernels, scale,
                              rank, tol, seed, landmarks, landmark_method, num_threads,
                              type, precomputed = FALSE, kernel = NULL, caller = "kmaha()") {
  neighbors <- match_choice(neighbors, c("feature", "input"), "neighbors")
  landmark_method <- match_choice(landmark_method, c("random", "kmeans++"), "landmark_method")
  x <- if (precomputed) check_precomputed_gram(x, "x", if (!is.null(y) && is.null(dim(y))) length(y)) else
    check_x(x, "x")
  if (is.data.frame(y) || (is.matrix(y) && !is.numeric(y))) {
    stopf("`y` must be a vector, one value per row of `x`: class labels (a factor) or a numeric response (a regression), not a %s%s.",
          class(y)[1], if (is.data.frame(y) && ncol(y) == 1L) "; for a one-column data frame d use d[[1]]" else "")
  }
  # a date or a duration is neither labels nor a plain number (it went the
  # classes' way: one class per date)
  if (inherits(y, c("Date", "POSIXt", "difftime"))) {
    stopf("`y` is a %s, neither class labels nor a plain number: for a regression give a number in the unit you mean (e.g. as.numeric(y)), for classes give factor(y).",
          class(y)[1])
  }
  # metric-learn's fit(pairs, y): y holding the given pairs' +1/-1
  if (pairs_given(learner, learner_args) &&
      y_holds_pair_labels(y, learner_args$pairs, learner_args$similar, nrow(x))) {
    stopf("`y` has one value of 1 or -1 per pair and `learner_args$similar` is missing: give the pairs' labels as `learner_args$similar`; `y` is for class labels of the rows of `x` (and may be left out).")
  }
  # a numeric response: a regression with MLKR (R/regression.R)
  regression <- is.numeric(y) && !is.factor(y)
  if (regression) {
    y <- check_response(y, nrow(x), "y")
    if (type == "align") {
      stopf("`kernel = \"align\"` aligns the kernels with the class labels, but `y` is a numeric response; for a regression use kernel = \"auto\", \"cv\", \"unweighted\", \"linear\" or a kernel object.")
    }
  } else {
    if (!is.null(y)) check_mlkr_classes(learner)
    # (y may be absent when a pair learner is given its pairs: R/pairs.R)
    if (!is.null(y) || !pairs_given(learner, learner_args)) y <- check_y(y, nrow(x), "y")
  }
  # NULL: chosen by cross-validation (see kmaha())
  if (!is.null(k)) {
    k <- check_count(k, "k")
    if (k > nrow(x) - 1L) {
      stopf("`k` (%d) must be smaller than the number of training rows (%d).",
            k, nrow(x))
    }
  }
  scale <- check_flag(scale, "scale")
  ctx <- kmaha_context(num_threads)
  learner_args <- check_learner_args(learner_args)
  specs <- if (regression) regression_specs(learner, learner_args, caller = caller) else
    learner_specs(learner, learner_args)
  # pairs given to a pair learner: checked against the rows of x
  if (!regression && length(specs) == 1L) {
    specs[[1]] <- check_given_pairs(specs[[1]], nrow(x), y, type, precomputed)
    specs[[1]] <- check_given_chunks(specs[[1]], nrow(x))
  }
  # learner = "auto" leaves out the learners whose target neighbours no
  # class can give (LMNN and DNE want k + 1 members); a named learner, or
  # the last one left, says what to change
  fits <- vapply(specs, function(sp) !isTRUE(sp$wants_targets) || !inherits(tryCatch(
    suppressWarnings(check_class_sizes(y, sp$target_k, sp$argname("k"))),
    error = function(e) e), "error"), NA)
  if (length(specs) > 1L && any(fits)) specs <- specs[fits]
  for (sp in specs) {
    if (isTRUE(sp$wants_targets)) check_class_sizes(y, sp$target_k, sp$argname("k"))
  }
  spec <- learner_set_spec(specs)
  if (type %in% c("cv", "align", "unweighted", "auto", "scores")) {
    kernels <- check_kernel_list(kernels)
    check_nystrom_kernels(kernels, landmarks, "kernels")
  }
  if (precomputed) {
    if (!is.null(landmarks)) {
      stopf("`landmarks` (the Nystrom method) needs kernel values against landmark points, which a precomputed Gram matrix does not give; use exact KPCA (landmarks = NULL).")
    }
    if (neighbors == "input") {
      stopf("`neighbors = \"input\"` finds target neighbours in the input space, which a precomputed kernel does not have; use neighbors = \"feature\".")
    }
  } else if (type == "kernel") {
    check_nystrom_kernels(kernel, landmarks)
  }
  if (!is.null(rank)) rank <- check_count(rank, "rank")
  tol <- check_number(tol, "tol", nonneg = TRUE)
  if (!is.null(seed)) seed <- check_number(seed, "seed")
  if (identical(learner, "auto") && is.matrix(learner_args$init)) {
    stopf("`learner_args$init` as a matrix starts one learner on its coordinates, but learner = \"auto\" fits several; name the learner (e.g. learner = \"nca\") to give it a matrix start.")
  }
  # options naming rows of x (the records' `row_options`)
  rows_args <- intersect(names(learner_args),
                         unlist(lapply(specs, function(sp) learner_record(sp$name)$row_options)))
  if (type %in% c("cv", "auto", "scores") && length(rows_args)) {
    stopf("`learner_args$%s` names rows of `x`, but kernel choice (kernel = \"%s\") refits the learner on subsets of the rows; let the learner draw them from the labels, or give a kernel.",
          rows_args[1], if (type == "scores") "auto" else type)
  }
  if (type %in% c("cv", "auto", "scores") && !is.null(learner_args$targets)) {
    stopf("`learner_args$targets` fixes the target neighbours by row, but kernel choice (kernel = \"%s\") refits the learner on subsets of the rows; let kmaha() find them (`learner_args$k`).",
          if (type == "scores") "auto" else type)
  }
  if (type %in% c("cv", "auto", "scores") && is.matrix(learner_args$init)) {
    stopf("`learner_args$init` as a matrix starts the learner on one set of coordinates, but kernel choice (%s) fits it on the coordinates of each candidate and fold, which differ; give a named start (e.g. init = \"auto\"), or a matrix with a given kernel.",
          if (type == "scores") "kernel = <scores>" else sprintf("kernel = \"%s\"", type))
  }
  list(x = x, y = y, spec = spec, specs = specs, learner_args = learner_args, k = k,
       neighbors = neighbors, kernels = kernels, scale = scale, rank = rank, tol = tol,
       seed = seed, landmarks = landmarks, landmark_method = landmark_method, ctx = ctx,
       precomputed = precomputed)
}

# The feature-map settings of a kernel choice on the scaled inputs: rank,
# tol, the landmarks (a matrix of points is scaled like x), and for kernel
# choice above the large-n threshold the subsample and Nystrom settings
# (auto_large).
choice_base <- function(a, xs, prep) {
  base <- list(rank = a$rank, tol = a$tol, landmarks = kmaha_landmarks(a$landmarks, a$x, prep),
               landmark_method = a$landmark_method)
  if (!a$precomputed && nrow(xs) > auto_large$n && is.null(a$landmarks) && is.null(a$rank)) {
    base$large <- large_settings(nrow(xs))
  }
  base
}

# The settings that determine scores (kmaha(kernel = <scores>) checks them,
# see R/scores-check.R; score_fit() adds the folds).
choice_settings <- function(a, strategy) {
  list(learner = a$spec$name, learner_label = a$spec$label,
       learner_fun = if (identical(a$spec$name, "custom")) a$spec$fun,
       learner_args = a$learner_args,
       k = a$k, neighbors = a$neighbors, scale = a$scale, rank = a$rank, tol = a$tol,
       landmarks = a$landmarks, landmark_method = a$landmark_method, strategy = strategy,
       seed = a$seed, kernels = a$kernels)
}

# kmaha()'s internal fitter: checked arguments `a` (check_choice_args()) and
# the resolved kernel choice in; the kernel chosen (scored and selected, or
# given), the pipeline fitted on all the training rows, the model out.
kmaha_fit <- function(a, choice, cv_folds, cv_strategy, rule, call) {
  ctx <- a$ctx
  pre <- a$precomputed
  prep <- if (pre) NULL else fit_scaling(a$x, a$scale)
  xs <- apply_scaling(a$x, prep)
  base <- choice_base(a, xs, prep)
  info <- list(type = choice$type)
  cand <- switch(choice$type,
    linear = cand_linear(),
    kernel = cand_kernel(choice$kernel),
    unweighted = cand_unweighted(a$kernels),
    align = cand_align(a$kernels, "qp"),
    NULL)
  spec <- a$specs[[1]]
  # (a regression with a given kernel and no choice: MLKR's own default k)
  k <- a$k %||% if (is.numeric(a$y)) min(10L, nrow(xs) - 1L) else 1L
  # A given kernel (or none) is scored only to choose the learner (and k)
  # among several; with one learner it is fitted as it is, with k = 1 unless
  # the user gave k.
  fixed <- !is.null(cand) && length(a$specs) > 1L
  if (is.null(cand) || fixed) {
    # 1. Kernel choice: score (or take the given scores), then select.
    scores <- if (choice$type == "scores") {
      choice$scores  # checked by kmaha()
    } else {
      type <- if (fixed) "fixed" else if (choice$type == "auto") "auto" else "kernels"
      tryCatch(
        score_fit(xs, a$y, a$specs, type, a$kernels, cv_folds, a$k, a$neighbors,
                  c(base, list(precomputed = pre)), a$seed, cv_strategy,
                  NULL, ctx, settings = choice_settings(a, cv_strategy),
                  fingerprint = data_fingerprint(a$x, a$y), cand = cand),
        kmaha_cv_failed_error = function(e) {
          # A given kernel on which no learner fitted on any fold: the first
          # learner on all the rows says why in terms of the whole data
          # (e.g. a `dim` above its coordinates); the CV's error otherwise.
          if (fixed) {
            f <- candidate_feature(cand, xs, a$y, base, ctx)
            fit_pipeline(xs, a$y, f$fspec, candidate_spec(a$specs[[1]], cand), ctx,
                         neighbors = a$neighbors, warn = FALSE, label_errors = TRUE)
          }
          stop(e)
        })
    }
    rule <- rule %||% if (choice$type == "cv" || identical(scores$type, "kernels")) "cv" else "auto"
    sel <- select_candidate(scores, rule)
    cv <- with_selection(scores, sel)
    cv$explain <- c(cv$explain, scores$given_note)
    row <- sel$best
    cand <- candidate_set(scores$type, a$kernels, cand)[[scores$curve$candidate[row]]]
    spec <- chosen_spec(a$specs, scores$curve$learner[row])
    k <- scores$curve[["k"]][row] %||% k
    large <- scores$large
    if (!is.null(large)) {
      # chosen on a subsample: fitted on all rows (see large_settings())
      kernelized <- !cand$kind %in% c("linear", "euclidean")
      cv <- large_choice_note(cv, large, kernelized, is_regression_scores(scores))
      base <- utils::modifyList(base, list(landmarks = large$landmarks, rank = large$fit_rank,
                                           large = NULL))
    }
    info <- list(type = if (fixed) choice$type else rule, cv = cv, index = row, seed = a$seed,
                 scored = choice$type == "scores", learner = spec$name, k = k,
                 k_chosen = is.null(a$k) && length(cv$k) > 1L)
  }
  # 2. The chosen pipeline on all the training rows.
  f <- candidate_feature(cand, xs, a$y, base, ctx)
  if (!is.null(f$alignment)) info$alignment <- f$alignment
  spec <- candidate_spec(spec, cand, chosen = !is.null(info$cv) && !fixed, p = ncol(xs))
  # (given pairs: the KPCA on the rows in a pair, R/pairs.R)
  rows <- paired_rows(spec, f$fspec, nrow(xs))
  p <- if (is.null(rows)) {
    fit_pipeline(xs, a$y, f$fspec, spec, ctx, neighbors = a$neighbors,
                 warn = TRUE, label_errors = TRUE, standardized = isTRUE(a$scale) && !pre)
  } else {
    fit_paired_rows(rows, xs, a$y, f$fspec, spec, ctx, neighbors = a$neighbors,
                    label_errors = TRUE, standardized = isTRUE(a$scale))
  }
  new_model(p, a$y, k, prep, spec, ctx, class = "kmaha_fit",
            settings = list(learner_args = a$learner_args, neighbors = a$neighbors,
                            cv_folds = cv_folds, cv_strategy = cv_strategy,
                            scale = if (pre) NA else a$scale, rank = a$rank, tol = a$tol,
                            seed = a$seed,
                            landmarks = if (!is.null(p$feature$landmarks)) nrow(p$feature$landmarks),
                            landmark_method = a$landmark_method),
            call = call, feature_names = colnames(a$x), n_features = ncol(a$x),
            kernel_choice = info)
}

# The spec of the learner a kernel choice chose (by its name in the scores'
# curve; Euclidean k-NN's is made from the candidate).
chosen_spec <- function(specs, name) {
  i <- match(name, vapply(specs, `[[`, "", "name"))
  if (is.na(i)) specs[[1]] else specs[[i]]
}

# kernel = "auto" and "cv" above `n` training rows (without `landmarks` or
# `rank`): the candidates are scored on a stratified subsample of
# `n_choose` rows, and the chosen one is fitted on all rows, with exact
# KPCA up to `exact_max` rows and Nystrom KPCA with `landmarks` landmarks
# above (see large_settings()).
auto_large <- list(n = 1000L, n_choose = 1000L, exact_max = 2000L, landmarks = 1250L,
                   max_rank = 500L, min_rank = 100L, min_rank_n = 16000L)

# The large-n settings for n > auto_large$n training rows: `n_choose`
# (scoring subsample), `rank` (NULL: the scoring keeps every component
# above `tol`, as on all rows), `landmarks` and `fit_rank` (the final fit's
# Nystrom landmarks, NULL for exact KPCA, and its rank cap, NULL for none).
# Every step keeps the cost continuous in n: just above `n`, the subsample
# is all but a few rows and costs what scoring all rows costs at `n`; the
# final fit is exact KPCA on all rows up to `exact_max`, and just above it
# Nystrom KPCA of the cost of exact KPCA there: with `landmarks` landmarks
# (Nystrom KPCA with m landmarks costs about three eigen-decompositions of
# size m, exact KPCA one of size n: with 2000 landmarks at 2001 rows, the
# fit's KPCA took 13.5 CPU seconds against 6.2 for the whole exact fit at
# 2000), and at most `max_rank` components (exact KPCA's coordinates are
# principal components already, Nystrom's are not: on all of them the
# learner's PCA start is an SVD of 14 CPU seconds at 2000).  The cap then falls
# smoothly, as max_rank (exact_max / n)^a, to `min_rank` at `min_rank_n`
# rows (the learner's cost grows with n and the components; 0.5.2 kept 100
# at 16 000 rows).  0.5.2 switched at 2000 rows
# from scoring and fitting on all rows with every component to a subsample
# of 1000 rows with KPCA of rank 100 and a final fit of rank 100: 2000 x 500
# inputs cost 6 times the CPU of 2001 x 500, and the rank-100 fit lost
# accuracy (bench/default-cost-n.R, issue 37).
large_settings <- function(n) {
  s <- auto_large
  nystrom <- n > s$exact_max
  a <- log(s$max_rank / s$min_rank) / log(s$min_rank_n / s$exact_max)
  list(n = s$n, n_choose = s$n_choose, rank = NULL,
       landmarks = if (nystrom) s$landmarks,
       fit_rank = if (nystrom) {
         as.integer(max(s$min_rank, min(s$max_rank, round(s$max_rank * (s$exact_max / n)^a))))
       })
}

# The reason and explanation of a choice made on the subsample of
# large_settings() (`large`: the scores' record, with the rows drawn; the
# subsample of a regression is a random one, of a classification
# stratified by class).
large_choice_note <- function(cv, large, kernelized, regression = FALSE) {
  drawn <- if (regression) "random" else "stratified"
  fit <- if (!kernelized) "" else if (is.null(large$landmarks)) " with exact KPCA" else
    sprintf(" with Nystrom KPCA (%d landmarks, rank <= %d)", as.integer(large$landmarks),
            as.integer(large$fit_rank))
  cv$reason <- sprintf("%s; chosen on a %s subsample of %d of the %d rows, and fitted on all rows%s",
                       cv$reason, drawn, length(large$rows), large$n_rows, fit)
  cv$explain <- c(cv$explain, sprintf("Scored on a %s subsample of %d of the %d rows; fitted on all rows%s.",
                                      drawn, length(large$rows), large$n_rows, fit))
  cv
}

# kmaha()'s `landmarks`: NULL, a count (checked by kpca()), or a matrix of
# points in the units of x, returned scaled like the inputs.
kmaha_landmarks <- function(landmarks, x, prep) {
  if (is.null(landmarks) || !(is.matrix(landmarks) || is.data.frame(landmarks))) {
    return(landmarks)
  }
  apply_scaling(check_landmark_points(landmarks, x), prep)
}

kernel_choices <- c("auto", "align", "aligned", "cv", "unweighted", "linear",
                    "precomputed")

resolve_kernel_choice <- function(kernel) {
  if (inherits(kernel, "kmaha_scores")) return(list(type = "scores", scores = kernel))
  if (inherits(kernel, "kmaha_kernel") || is.function(kernel)) {
    return(list(type = "kernel", kernel = check_kernel(kernel)))
  }
  if (identical(kernel, "precomputed")) {
    return(list(type = "kernel", kernel = precomputed_kernel(), precomputed = TRUE))
  }
  if (identical(kernel, "align_lp")) {
    stopf("`kernel = \"align_lp\"` is no longer a kernel choice: the LP alignment puts its weight on the kernel closest to the identity, which classifies new points no better than chance. Use kernel = \"align\" (the QP), or for the paper's comparison align_kernels(x, y, method = \"lp\") and fit its `kernel` yourself.")
  }
  if (!is.character(kernel) || length(kernel) != 1L || is.na(kernel) ||
      !(kernel %in% kernel_choices)) {
    stopf("`kernel` must be a kernel object such as rbf_kernel(1), one of %s, or scores from score_candidates(); kernlab kernels and R functions k(x, y) work too (see ?`kernel-sources`).",
          paste(dQuote(kernel_choices, FALSE), collapse = ", "))
  }
  type <- if (kernel == "aligned") "align" else kernel
  list(type = type)
}
