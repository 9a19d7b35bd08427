# Pieces shared by the kernel benchmarks (sourced by paper_kernel.R,
# kernel_choice_speed.R, cv_validate.R and cv_speed.R; kmaha attached).

# A comma-separated environment variable as a character vector.
env_list <- function(var, default) {
  v <- Sys.getenv(var)
  if (nzchar(v)) strsplit(v, ",", fixed = TRUE)[[1]] else default
}

data_cache <- new.env()

# Split s of dataset ds in the paper's protocol: n_train random training
# rows (200; 100 for Glass and Iris), the rest for testing; columns constant
# on the training rows are dropped. NULL when the data are not available.
paper_split <- function(ds, s, info = paper_datasets()) {
  if (!exists(ds, envir = data_cache, inherits = FALSE)) {
    assign(ds, tryCatch(kmaha_data(ds), error = function(e) NULL), envir = data_cache)
  }
  d <- get(ds, envir = data_cache, inherits = FALSE)
  if (is.null(d)) return(NULL)
  x_all <- as.matrix(d[, setdiff(names(d), "class")])
  set.seed(1000 * s + match(ds, info$name))
  tr <- sample(nrow(d), info$n_train[info$name == ds])
  keep <- apply(x_all[tr, , drop = FALSE], 2, stats::sd) > 0
  list(x = x_all[tr, keep, drop = FALSE], y = droplevels(d$class[tr]),
       xte = x_all[-tr, keep, drop = FALSE], yte = d$class[-tr])
}

# Runs a command on one core with one thread for OpenMP, OpenBLAS and kmaha,
# pinned with `taskset` to the CPU in KMAHA_BENCH_CPU (default 0; "none":
# not pinned, e.g. when other jobs are pinned to CPU 0); returns its last
# line of output.
run_one_core <- function(cmd, args) {
  env <- c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "KMAHA_NUM_THREADS=1")
  cpu <- Sys.getenv("KMAHA_BENCH_CPU", "0")
  out <- if (cpu != "none" && nzchar(Sys.which("taskset"))) {
    system2("taskset", c("-c", cpu, cmd, args), stdout = TRUE, env = env)
  } else {
    system2(cmd, args, stdout = TRUE, env = env)
  }
  utils::tail(out, 1)
}

# The numbers on a line of output.
line_numbers <- function(line) as.numeric(strsplit(trimws(line), " ")[[1]])

# Writes the scikit-learn reference for KNCA with kernel choice: KernelPCA
# (the paper's scaled RBF kernels) + NeighborhoodComponentsAnalysis + 1-NN
# on the standardized rows of argv[1] with labels argv[2]; one fit with
# sigma = argv[3], then 5-fold CV over the 21 kernels of paper_kernels().
# Prints: fit seconds, CV seconds, chosen sigma, its CV accuracy.
write_sklearn_nca_cv <- function(file) {
  writeLines(c(
    "import sys, time, warnings, numpy as np",
    "warnings.filterwarnings('ignore')",
    "from sklearn.decomposition import KernelPCA",
    "from sklearn.neighbors import NeighborhoodComponentsAnalysis, KNeighborsClassifier",
    "from sklearn.pipeline import make_pipeline",
    "from sklearn.model_selection import StratifiedKFold, cross_val_score",
    "x = np.loadtxt(sys.argv[1], delimiter=','); y = np.loadtxt(sys.argv[2], dtype=str)",
    "x = (x - x.mean(0)) / x.std(0, ddof=1); D = x.shape[1]; s_fit = float(sys.argv[3])",
    sprintf("sig = [%s]", paste(paper_sigmas(), collapse = ", ")),
    "pipe = lambda s: make_pipeline(KernelPCA(kernel='rbf', gamma=1/(2*D*s*s)),",
    "  NeighborhoodComponentsAnalysis(random_state=0), KNeighborsClassifier(1))",
    "t0 = time.perf_counter(); pipe(s_fit).fit(x, y); t_fit = time.perf_counter() - t0",
    "t0 = time.perf_counter()",
    "cv = StratifiedKFold(5, shuffle=True, random_state=1)",
    "sc = [cross_val_score(pipe(s), x, y, cv=cv).mean() for s in sig]",
    "print('%.4f %.4f %g %.4f' % (t_fit, time.perf_counter() - t0, sig[int(np.argmax(sc))], max(sc)))"),
    file)
}

# TRUE when /usr/bin/python3 can import `module`.
python_has <- function(module, python = "/usr/bin/python3") {
  file.exists(python) &&
    identical(suppressWarnings(system2(python, c("-c", shQuote(paste("import", module))),
                                       stdout = FALSE, stderr = FALSE)), 0L)
}

# A split of an mlbench classification set `name` in the protocol of the
# learner benchmarks (bench/learners-new.R, bench/mmc-projection.R): 200
# random training rows (at most half the set; seed 1000 s + 77), the rest
# for testing, columns constant on the training rows dropped.
mlbench_split <- function(name, s) {
  e <- new.env()
  utils::data(list = name, package = "mlbench", envir = e)
  d <- e[[name]]
  y <- d[[ncol(d)]]
  x <- d[, -ncol(d), drop = FALSE]
  x <- as.matrix(as.data.frame(lapply(x, function(v) as.numeric(as.character(v)))))
  set.seed(1000 * s + 77)
  tr <- sample(nrow(x), min(200L, nrow(x) %/% 2L))
  keep <- apply(x[tr, , drop = FALSE], 2, stats::sd) > 0
  list(x = x[tr, keep, drop = FALSE], y = droplevels(y[tr]),
       xte = x[-tr, keep, drop = FALSE], yte = y[-tr])
}

# The split `s` of a paper set (paper_split()) or of an mlbench set
# (mlbench_split()).
get_split <- function(name, s) {
  if (name %in% paper_datasets()$name) paper_split(name, s) else mlbench_split(name, s)
}

# A split's inputs standardized with the training rows' means and standard
# deviations: list(xs, xte), plain matrices.
standardize_split <- function(sp) {
  mu <- colMeans(sp$x)
  sdv <- apply(sp$x, 2, stats::sd)
  xs <- scale(sp$x, mu, sdv)
  xte <- scale(sp$xte, mu, sdv)
  attributes(xs)[c("scaled:center", "scaled:scale")] <- NULL
  attributes(xte)[c("scaled:center", "scaled:scale")] <- NULL
  list(xs = xs, xte = xte)
}
