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

// Predictions of a fitted model for new raw inputs x (n_new x D, complete
// rows), in one call: type "transform" gives the n_new x d learned
// coordinates, "class" and "prob" list(class = 1-based codes, prob = n_new x
// p vote fractions) of the k nearest reference points.  Kx: NULL, or kernel
// rows (n_new x points of the feature map) used instead of evaluating the
// kernel.  `model`: list(center, scale (NULL: no scaling), feature_map =
// list(type = "identity" | "kpca" | "nystrom" | "kernel_rows", kernel, x |
// landmarks, projection, col_means, grand_mean), L, embedding, y, nlevels).
// [[Rcpp::export(rng = false)]]
SEXP cpp_pipeline_predict(const Rcpp::List& model, SEXP x, SEXP Kx,
                          std::string type, int k, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) -> SEXP {
    if (type != "transform" && type != "class" && type != "prob")
      throw kmaha::error("pipeline: type must be \"transform\", \"class\" or \"prob\"");
    kmaha::pipeline_model m;
    const SEXP center_s = element(model, "center"), scale_s = element(model, "scale");
    std::unique_ptr<const arma::vec> center, scale;
    if (!Rf_isNull(center_s) || !Rf_isNull(scale_s)) {
      center = r_vector(center_s, "center");
      scale = r_vector(scale_s, "scale");
      m.center = center.get();
      m.scale = scale.get();
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
      const kmaha_glue::flat_kernel kern(Rcpp::as<Rcpp::List>(element(fm, "kernel")));
      m.kernel = kern.specs;
      m.weights = kern.weights;
      const bool nys = fm_type == "nystrom";
      points = r_matrix(element(fm, nys ? "landmarks" : "x"), nys ? "landmarks" : "x");
      m.points = points.get();
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
    const std::unique_ptr<const arma::mat> L = r_matrix(element(model, "L"), "L");
    const std::unique_ptr<const arma::mat> embedding =
        r_matrix(element(model, "embedding"), "embedding");
    m.L = L.get();
    m.embedding = embedding.get();
    m.y = kmaha_glue::labels_from_r(Rcpp::as<arma::ivec>(element(model, "y")));
    m.classes = static_cast<arma::uword>(Rcpp::as<int>(element(model, "nlevels")));
    const std::unique_ptr<const arma::mat> X = r_matrix(x, "x");
    std::unique_ptr<const arma::mat> K;
    if (!Rf_isNull(Kx)) K = r_matrix(Kx, "Kx");
    if (type == "transform") return Rcpp::wrap(kmaha::pipeline_transform(m, *X, K.get(), c));
    if (k < 1) throw kmaha::error("pipeline: k must be a positive whole number");
    const kmaha::knn_result r =
        kmaha::pipeline_classify(m, *X, K.get(), static_cast<arma::uword>(k), c);
    return Rcpp::List::create(
        Rcpp::Named("class") = Rcpp::IntegerVector(r.cls.begin(), r.cls.end()) + 1,
        Rcpp::Named("prob") = r.prob);
  });
}
