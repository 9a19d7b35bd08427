# Acceptance data sets for the default (bench/default-accept.R): thirteen
# classification sets from modeldata, MASS, datasets and mlbench's
# generators that no kmaha session has used before 0.6.0, added to the
# eighteen hold-out sets of bench/holdout-data.R (never tuned on either).
# Nothing here is shared with the development sets (the paper's nine,
# bench/auto-external-data.R's seventeen), on which the default's policy
# was chosen (bench/default-study.R).  Loaders return list(x = numeric
# matrix, y = factor, n_train, note), as holdout_load() does; a set whose
# package is missing is unavailable (accept_available()).
source("bench/holdout-data.R")

accept_load <- function(name) {
  if (name %in% HOLDOUT_SETS) return(holdout_load(name))
  switch(name,
    parabolic = { d <- holdout_pkg_data("parabolic", "modeldata")
      list(x = as.matrix(d[, c("X1", "X2")]), y = d$class, n_train = 200,
           note = "modeldata parabolic (500 rows, 2 inputs)") },
    bivariate = { e <- new.env(); utils::data("bivariate", package = "modeldata", envir = e)
      d <- rbind(e$bivariate_train, e$bivariate_test)
      list(x = as.matrix(d[, c("A", "B")]), y = d$Class, n_train = 200,
           note = "modeldata bivariate_train + bivariate_test") },
    scat = { d <- holdout_pkg_data("scat", "modeldata"); d <- d[stats::complete.cases(d), ]
      list(x = holdout_numeric(d[, !names(d) %in% c("Species", "Month", "Year", "Site", "Location")]),
           y = droplevels(d$Species), n_train = 60,
           note = "modeldata scat, complete rows, Month/Year/Site/Location dropped") },
    mlc_churn = holdout_sim(41, { d <- holdout_pkg_data("mlc_churn", "modeldata")
      d <- d[sort(sample.int(nrow(d), 3000)), names(d) != "state"]
      list(x = holdout_numeric(d[, names(d) != "churn"]), y = d$churn, n_train = 300,
           note = "modeldata mlc_churn, fixed random 3000 rows, state dropped") }),
    credit = holdout_sim(42, { d <- holdout_pkg_data("credit_data", "modeldata")
      d <- d[stats::complete.cases(d), ]
      list(x = holdout_numeric(d[, names(d) != "Status"]), y = d$Status, n_train = 300,
           note = "modeldata credit_data, complete rows") }),
    wa_churn = holdout_sim(43, { d <- holdout_pkg_data("wa_churn", "modeldata")
      d <- d[stats::complete.cases(d), ]
      d <- d[sort(sample.int(nrow(d), 3000)), ]
      list(x = holdout_numeric(d[, names(d) != "churn"]), y = d$churn, n_train = 300,
           note = "modeldata wa_churn, complete rows, fixed random 3000") }),
    cats = { d <- holdout_pkg_data("cats", "MASS")
      list(x = as.matrix(d[, c("Bwt", "Hwt")]), y = d$Sex, n_train = 90,
           note = "MASS cats (sex from body and heart weight)") },
    birthwt = { d <- holdout_pkg_data("birthwt", "MASS")
      list(x = as.matrix(d[, c("age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv")]),
           y = factor(d$low), n_train = 120, note = "MASS birthwt (low from the mother's data; bwt dropped)") },
    melanoma = { d <- holdout_pkg_data("Melanoma", "MASS")
      list(x = as.matrix(d[, c("time", "sex", "age", "year", "thickness", "ulcer")]),
           y = factor(d$status), n_train = 130, note = "MASS Melanoma (status)") },
    chickwts = { d <- holdout_pkg_data("chickwts", "datasets")
      list(x = as.matrix(d["weight"]), y = d$feed, n_train = 45,
           note = "datasets chickwts (feed from weight: one input, six classes)") },
    normals2d = holdout_sim(44, { d <- mlbench.2dnormals(1200, cl = 6, sd = 1)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.2dnormals(1200, 6 classes), fixed pool") }),
    hypercube = holdout_sim(45, { d <- mlbench.hypercube(1200, d = 3, sd = 0.2)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.hypercube(1200, d = 3), fixed pool") }),
    infert = { d <- holdout_pkg_data("infert", "datasets")
      list(x = holdout_numeric(d[, c("education", "age", "parity", "induced", "spontaneous")]),
           y = factor(d$case), n_train = 150, note = "datasets infert (case)") },
    stop("unknown set ", name))
}

ACCEPT_NEW_SETS <- c("parabolic", "bivariate", "scat", "mlc_churn", "credit", "wa_churn",
                     "cats", "birthwt", "melanoma", "chickwts", "normals2d", "hypercube",
                     "infert")
ACCEPT_SETS <- c(HOLDOUT_SETS, ACCEPT_NEW_SETS)

accept_available <- function(name) {
  !inherits(tryCatch(accept_load(name), error = function(e) e), "error")
}
