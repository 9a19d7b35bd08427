// Glue for the prediction pipeline (kmaha/pipeline.hpp): one call from new
// raw inputs to classes.
#include "glue.h"
#include <kmaha/pipeline.hpp>
#include <memory>
#include <string>

namespace {

// An element of an R list, or R_NilValue when absent.
SEXP element(const Rcpp::List& l, const char* name) {
  return l.containsElementNamed(name) ? static_cast<SEXP>(l[name]) : R_NilValue;
}

// A numeric R matrix (or vector, as one column) as an Armadillo matrix on
// R's memory (no copy; integer and logical values are converted into a
// copy), made in place so that no move or copy ever takes the memory over.
std::unique_ptr<const arma::mat> r_matrix(SEXP s, const char* what) {
  if (TYPEOF(s) != REALSXP && TYPEOF(s) != INTSXP && TYPEOF(s) != LGLSXP)
    throw kmaha::error(std::string("pipeline: `") + what + "` must be numeric");
  arma::uword nr = static_cast<arma::uword>(Rf_xlength(s)), nc = 1;
  if (Rf_isMatrix(s)) {
    nr = static_cast<arma::uword>(Rf_nrows(s));
    nc = static_cast<arma::uword>(Rf_ncols(s));
  }
  if (TYPEOF(s) == REALSXP)
    return std::unique_ptr<const arma::mat>(new arma::mat(REAL(s), nr, nc, false, true));
  Rcpp::NumericVector v(s);  // a converted copy
  return std::unique_ptr<const arma::mat>(new arma::mat(v.begin(), nr, nc));
}

std::unique_ptr<const arma::vec> r_vector(SEXP s, const char* what) {
  if (TYPEOF(s) != REALSXP && TYPEOF(s) != INTSXP)
    throw kmaha::error(std::string("pipeline: `") + what + "` must be numeric");
  const arma::uword n = static_cast<arma::uword>(Rf_xlength(s));
  if (TYPEOF(s) == REALSXP)
    return std::unique_ptr<const arma::vec>(new arma::vec(REAL(s), n, false, true));
  Rcpp::NumericVector v(s);
  return std::unique_ptr<const arma::vec>(new arma::vec(v.begin(), n));
}

}  // namespace

// The one path from inputs to learned coordinates and votes
// (kmaha/pipeline.hpp): predict(), fitted() and the projection of kpca()
// fits (a cross-validation fold's held-out rows go through the same core
// functions inside its fitting calls: src/kpca.cpp, src/heldout.h).
//   type "transform": the n_new x d learned coordinates of the rows of x
//     (without a map `L`, the feature map's coordinates);
//   "class", "prob": list(class = 1-based codes, prob = n_new x p vote
//     fractions) of the k nearest reference points;
//   "loo": the same for the reference points themselves, each left out of
//     its own neighbours (x and Kx NULL);
//   "value", "loo_value": regression (a model with a numeric `response`
//     instead of `y`, and `vote`: "uniform", "distance" or "kernel"): the
//     weighted mean of the responses of the k nearest reference points, as
//     a numeric vector, of the new points or (leave-one-out) of the
//     reference points.
// x: n_new x D raw inputs (complete rows), or NULL with Kx; Kx: NULL, or
// kernel rows (n_new x points of the feature map) used instead of evaluating
// the kernel (kernels evaluated in R, precomputed Gram matrices).
// `model`: list(center, scale (NULL: no scaling), feature_map = list(type =
// "identity" | "kpca" | "nystrom" | "kernel_rows", kernel, x | landmarks
// (NULL with Kx), n (points without x), projection, col_means, grand_mean),
// L (NULL: no map), embedding (or coords: the reference points' feature
// coordinates, mapped here), y, nlevels).
// [[Rcpp::export(rng = false)]]
SEXP cpp_pipeline_apply(const Rcpp::List& model, SEXP x, SEXP Kx,
                        std::string type, int k, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) -> SEXP {
    if (type != "transform" && type != "class" && type != "prob" && type != "loo" &&
        type != "value" && type != "loo_value")
      throw kmaha::error("pipeline: type must be \"transform\", \"class\", \"prob\", \"loo\", \"value\" or \"loo_value\"");
    const bool regression = type == "value" || type == "loo_value";
    kmaha::knn_weights vote = kmaha::knn_weights::distance;
    if (regression) {
      const SEXP r = element(model, "response"), v = element(model, "vote");
      if (TYPEOF(r) != REALSXP && TYPEOF(r) != INTSXP)
        throw kmaha::error("pipeline: a regression needs a numeric `response`");
      if (!Rf_isNull(v)) vote = kmaha::knn_weights_from(Rcpp::as<std::string>(v));
    }
    kmaha::pipeline_model m;
    const SEXP center_s = element(model, "center"), scale_s = element(model, "scale");
    std::unique_ptr<const arma::vec> center, scale;
    if (!Rf_isNull(center_s) || !Rf_isNull(scale_s)) {
      center = r_vector(center_s, "center");
      scale = r_vector(scale_s, "scale");
      m.center = center.get();
      m.scale = scale.get();
    }
    auto votes = [](const kmaha::knn_result& r) {
      return Rcpp::List::create(
          Rcpp::Named("class") = Rcpp::IntegerVector(r.cls.begin(), r.cls.end()) + 1,
          Rcpp::Named("prob") = r.prob);
    };
    if (k < 1 && type != "transform") throw kmaha::error("pipeline: k must be a positive whole number");
    if (type == "loo_value") {
      const std::unique_ptr<const arma::mat> emb = r_matrix(element(model, "embedding"), "embedding");
      m.embedding = emb.get();
      m.response = Rcpp::as<arma::vec>(element(model, "response"));
      const arma::vec v = kmaha::pipeline_loo_regress(m, static_cast<arma::uword>(k), vote, c);
      return Rcpp::NumericVector(v.begin(), v.end());
    }
    if (type == "loo") {
      // the reference points among themselves: no feature map to evaluate
      const std::unique_ptr<const arma::mat> emb = r_matrix(element(model, "embedding"), "embedding");
      m.embedding = emb.get();
      m.y = kmaha_glue::labels_from_r(Rcpp::as<arma::ivec>(element(model, "y")));
      m.classes = static_cast<arma::uword>(Rcpp::as<int>(element(model, "nlevels")));
      return votes(kmaha::pipeline_loo(m, static_cast<arma::uword>(k), c));
    }
    const SEXP fm_s = element(model, "feature_map");
    if (TYPEOF(fm_s) != VECSXP) throw kmaha::error("pipeline: `feature_map` must be a list");
    const Rcpp::List fm(fm_s);
    const std::string fm_type = Rcpp::as<std::string>(element(fm, "type"));
    std::unique_ptr<const arma::mat> points, projection;
    std::unique_ptr<const arma::vec> col_means;
    if (fm_type == "identity") {
      m.map = kmaha::feature_map::identity;
    } else if (fm_type == "kpca" || fm_type == "nystrom" || fm_type == "kernel_rows") {
      const bool nys = fm_type == "nystrom";
      const SEXP pts = element(fm, nys ? "landmarks" : "x");
      if (Rf_isNull(Kx)) {
        if (Rf_isNull(pts)) throw kmaha::error("pipeline: this feature map needs the kernel rows of the new points");
        const kmaha_glue::flat_kernel kern(Rcpp::as<Rcpp::List>(element(fm, "kernel")));
        m.kernel = kern.specs;
        m.weights = kern.weights;
        points = r_matrix(pts, nys ? "landmarks" : "x");
        m.points = points.get();
      } else {
        // kernel rows from the caller: the points only say how many there are
        if (!Rf_isNull(pts)) {
          m.n_points = static_cast<arma::uword>(Rf_nrows(pts));
        } else if (!Rf_isNull(element(fm, "n"))) {
          m.n_points = static_cast<arma::uword>(Rcpp::as<double>(element(fm, "n")));
        } else {
          m.n_points = static_cast<arma::uword>(Rf_length(element(fm, "col_means")));
        }
      }
      if (fm_type == "kernel_rows") {
        m.map = kmaha::feature_map::kernel_rows;
      } else {
        m.map = nys ? kmaha::feature_map::nystrom : kmaha::feature_map::kpca;
        projection = r_matrix(element(fm, "projection"), "projection");
        col_means = r_vector(element(fm, "col_means"), "col_means");
        m.projection = projection.get();
        m.col_means = col_means.get();
        if (!nys) m.grand_mean = Rcpp::as<double>(element(fm, "grand_mean"));
      }
    } else {
      throw kmaha::error("pipeline: unknown feature map '" + fm_type + "'");
    }
    std::unique_ptr<const arma::mat> L, embedding, coords;
    arma::mat mapped;
    if (!Rf_isNull(element(model, "L"))) {
      L = r_matrix(element(model, "L"), "L");
      m.L = L.get();
    }
    if (!Rf_isNull(element(model, "embedding"))) {
      embedding = r_matrix(element(model, "embedding"), "embedding");
      m.embedding = embedding.get();
    } else if (!Rf_isNull(element(model, "coords"))) {
      coords = r_matrix(element(model, "coords"), "coords");
      mapped = m.L ? kmaha::apply_map(*coords, *m.L, c.kernels) : *coords;
      m.embedding = &mapped;
    }
    if (regression) {
      m.response = Rcpp::as<arma::vec>(element(model, "response"));
    } else if (!Rf_isNull(element(model, "y"))) {
      m.y = kmaha_glue::labels_from_r(Rcpp::as<arma::ivec>(element(model, "y")));
      m.classes = static_cast<arma::uword>(Rcpp::as<int>(element(model, "nlevels")));
    }
    std::unique_ptr<const arma::mat> X, K;
    if (!Rf_isNull(Kx)) K = r_matrix(Kx, "Kx");
    if (!Rf_isNull(x)) {
      X = r_matrix(x, "x");
    } else if (K) {
      X.reset(new arma::mat(K->n_rows, 0));
    } else {
      throw kmaha::error("pipeline: the new points or their kernel rows are needed");
    }
    if (type == "transform") return Rcpp::wrap(kmaha::pipeline_transform(m, *X, K.get(), c));
    if (regression) {
      const arma::vec v = kmaha::pipeline_regress(m, *X, K.get(), static_cast<arma::uword>(k), vote, c);
      return Rcpp::NumericVector(v.begin(), v.end());
    }
    return votes(kmaha::pipeline_classify(m, *X, K.get(), static_cast<arma::uword>(k), c));
  });
}
