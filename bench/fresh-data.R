# Fresh classification sets (2026-11-29): fourteen sets from mlbench's
# generators, ipred, boot, rpart, glmnet, MASS, caret, kernlab and
# modeldata that no kmaha session had used before, neither to tune a
# default (the development sets: the paper's nine and
# studies/auto-external-data.R's seventeen) nor to accept one (the
# thirty-one of accept-data.R).  They check changes chosen on those
# (bench/studies/k-grid.R) and the default's acceptance
# (bench/default-accept.R fresh).  Loaders return list(x = numeric matrix,
# y = factor, n_train, note), as holdout_load() does; splits are
# holdout_split_data()'s, seed 9000 + 10 * (the set's place) + split
# (fresh_split()).
source("bench/accept-data.R")

fresh_load <- function(name) {
  switch(name,
    cuboids = holdout_sim(51, { d <- mlbench::mlbench.cuboids(1000)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.cuboids(1000), fixed pool") }),
    shapes = holdout_sim(52, { d <- mlbench::mlbench.shapes(1000)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.shapes(1000), fixed pool") }),
    simplex = holdout_sim(53, { d <- mlbench::mlbench.simplex(1000, d = 3, sd = 0.3)
      list(x = d$x, y = d$classes, n_train = 200, note = "mlbench.simplex(1000, d = 3, sd = 0.3), fixed pool") }),
    dystrophy = { d <- holdout_pkg_data("dystrophy", "ipred")
      d <- d[stats::complete.cases(d), ]
      list(x = holdout_numeric(d[, c("AGE", "M", "CK", "H", "PK", "LD")]), y = droplevels(d$Class),
           n_train = 100, note = "ipred dystrophy, complete rows, OBS and the visit dates dropped") },
    glaucoma = { d <- holdout_pkg_data("GlaucomaMVF", "ipred")
      d <- d[stats::complete.cases(d), ]
      list(x = holdout_numeric(d[, names(d) != "Class"]), y = d$Class, n_train = 100,
           note = "ipred GlaucomaMVF, complete rows") },
    urine = { d <- holdout_pkg_data("urine", "boot")
      d <- d[stats::complete.cases(d), ]
      list(x = as.matrix(d[, names(d) != "r"]), y = factor(d$r, labels = c("no", "yes")),
           n_train = 50, note = "boot urine (crystals), complete rows") },
    kyphosis = { d <- holdout_pkg_data("kyphosis", "rpart")
      list(x = as.matrix(d[, c("Age", "Number", "Start")]), y = d$Kyphosis, n_train = 50,
           note = "rpart kyphosis") },
    multinomial_ex = { d <- holdout_pkg_data("MultinomialExample", "glmnet")
      list(x = d$x, y = factor(d$y), n_train = 200, note = "glmnet MultinomialExample") },
    binomial_ex = { d <- holdout_pkg_data("BinomialExample", "glmnet")
      list(x = d$x, y = factor(d$y), n_train = 60, note = "glmnet BinomialExample") },
    stackoverflow = holdout_sim(54, { d <- holdout_pkg_data("stackoverflow", "modeldata")
      d <- d[sort(sample.int(nrow(d), 3000)), ]
      list(x = holdout_numeric(d[, names(d) != "Remote"]), y = d$Remote, n_train = 300,
           note = "modeldata stackoverflow, fixed random 3000 rows") }),
    survey = { d <- holdout_pkg_data("survey", "MASS")
      d <- d[, c("Sex", "Wr.Hnd", "NW.Hnd", "Height", "Pulse", "Age")]
      d <- d[stats::complete.cases(d), ]
      list(x = as.matrix(d[, -1]), y = d$Sex, n_train = 100,
           note = "MASS survey, Sex from hand spans, height, pulse and age, complete rows") },
    uscereal = { d <- holdout_pkg_data("UScereal", "MASS")
      list(x = holdout_numeric(d[, !names(d) %in% c("mfr", "shelf", "vitamins")]),
           y = factor(d$shelf), n_train = 40, note = "MASS UScereal, shelf from the nutrients") },
    cars93 = { d <- holdout_pkg_data("Cars93", "MASS")
      v <- c("Price", "MPG.city", "MPG.highway", "EngineSize", "Horsepower", "RPM", "Rev.per.mile",
             "Fuel.tank.capacity", "Passengers", "Length", "Wheelbase", "Width", "Turn.circle", "Weight")
      list(x = as.matrix(d[, v]), y = d$Type, n_train = 60,
           note = "MASS Cars93, Type from 14 numeric columns") },
    income = holdout_sim(55, { d <- holdout_pkg_data("income", "kernlab")
      d <- d[stats::complete.cases(d), ]
      d <- d[sort(sample.int(nrow(d), 3000)), ]
      list(x = holdout_numeric(d[, names(d) != "INCOME"]), y = droplevels(factor(d$INCOME, ordered = FALSE)),
           n_train = 300, note = "kernlab income, complete rows, fixed random 3000, income band from the rest") }),
    stop("unknown set ", name))
}

FRESH_SETS <- c("cuboids", "shapes", "simplex", "dystrophy", "glaucoma", "urine", "kyphosis",
                "multinomial_ex", "binomial_ex", "stackoverflow", "survey",
                "uscereal", "cars93", "income")

fresh_split <- function(d, s, r) holdout_split_data(d, seed = 9000 + 10 * match(s, FRESH_SETS) + r)
