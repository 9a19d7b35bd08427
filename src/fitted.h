// Glue: the one place that fills the core's typed fitted pipeline
// (kmaha::pipeline_model, kmaha/pipeline.hpp) from R's objects.  Every
// call that runs the pipeline builds a fitted_pipeline: predict(),
// fitted() and kpca() projections from a fitted model's R list
// (src/pipeline.cpp), a cross-validation fold's held-out votes from the map
// its fitting call just learned (src/heldout.h), and a fold's KPCA or
// Nystrom coordinates (src/kpca.cpp).
#ifndef KMAHA_FITTED_H
#define KMAHA_FITTED_H

#include "glue.h"
#include <kmaha/pipeline.hpp>
#include <memory>
#include <string>

namespace kmaha_glue {

// An element of an R list, or R_NilValue when absent.
inline SEXP list_element(const Rcpp::List& l, const char* name) {
  return l.containsElementNamed(name) ? static_cast<SEXP>(l[name]) : R_NilValue;
}

// A numeric R matrix (or vector, as one column) as an Armadillo matrix on
// R's memory (no copy; integer and logical values are converted into a
// copy), made in place so that no move or copy ever takes the memory over.
inline std::unique_ptr<const arma::mat> r_matrix(SEXP s, const char* what) {
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

inline std::unique_ptr<const arma::vec> r_vector(SEXP s, const char* what) {
  if (TYPEOF(s) != REALSXP && TYPEOF(s) != INTSXP)
    throw kmaha::error(std::string("pipeline: `") + what + "` must be numeric");
  const arma::uword n = static_cast<arma::uword>(Rf_xlength(s));
  if (TYPEOF(s) == REALSXP)
    return std::unique_ptr<const arma::vec>(new arma::vec(REAL(s), n, false, true));
  Rcpp::NumericVector v(s);
  return std::unique_ptr<const arma::vec>(new arma::vec(v.begin(), n));
}

// The core's fitted pipeline together with the memory its views point
// into.  Neither copyable nor movable: `model` points into the object's
// own members, so it lives where it is made.
class fitted_pipeline {
 public:
  kmaha::pipeline_model model;

  fitted_pipeline(const fitted_pipeline&) = delete;
  fitted_pipeline& operator=(const fitted_pipeline&) = delete;

  // From a fitted model's R list: list(center, scale (NULL: no scaling),
  // feature_map = list(type = "identity" | "kpca" | "nystrom" |
  // "kernel_rows", kernel, x | landmarks (NULL with Kx), n (points without
  // x), projection, col_means, grand_mean), L (NULL: no map), embedding (or
  // coords: the reference points' feature coordinates, mapped here), y and
  // nlevels, or `response` for a regression).  With `reference_only`, only
  // the reference points (embedding and labels or responses: the
  // leave-one-out votes need no feature map).  `have_Kx`: the caller gives
  // the kernel rows of the new points, so the kernel is not evaluated.
  fitted_pipeline(const Rcpp::List& r, bool have_Kx, bool regression, bool reference_only,
                  const kmaha::context& c) {
    if (reference_only) {
      embedding_ = r_matrix(list_element(r, "embedding"), "embedding");
      model.embedding = embedding_.get();
      reference(r, regression);
      return;
    }
    const SEXP center_s = list_element(r, "center"), scale_s = list_element(r, "scale");
    if (!Rf_isNull(center_s) || !Rf_isNull(scale_s)) {
      center_ = r_vector(center_s, "center");
      scale_ = r_vector(scale_s, "scale");
      model.center = center_.get();
      model.scale = scale_.get();
    }
    feature_map(r, have_Kx);
    if (!Rf_isNull(list_element(r, "L"))) {
      L_ = r_matrix(list_element(r, "L"), "L");
      model.L = L_.get();
    }
    if (!Rf_isNull(list_element(r, "embedding"))) {
      embedding_ = r_matrix(list_element(r, "embedding"), "embedding");
      model.embedding = embedding_.get();
    } else if (!Rf_isNull(list_element(r, "coords"))) {
      const std::unique_ptr<const arma::mat> coords = r_matrix(list_element(r, "coords"), "coords");
      mapped_ = model.L ? kmaha::apply_map(*coords, *model.L, c.kernels) : *coords;
      model.embedding = &mapped_;
    }
    reference(r, regression);
  }

  // A cross-validation fold's model in the map its fitting call learned:
  // the training coordinates x (n x r) mapped by the leading `dim` rows of
  // L0 (all of them when dim is 0 or more than L0 has); the caller sets
  // the labels (y, classes) or the responses.
  fitted_pipeline(const arma::mat& x, const arma::mat& L0, arma::uword dim,
                  const kmaha::context& c)
      : kept_(dim == 0 || dim >= L0.n_rows ? L0 : arma::mat(L0.rows(0, dim - 1))),
        mapped_(kmaha::apply_map(x, kept_, c.kernels)) {
    model.L = &kept_;
    model.embedding = &mapped_;
  }

  // A KPCA or Nystrom feature map alone (no linear map, no reference
  // points), for the coordinates of a fold's held-out rows: the kernel k
  // with the training points `points` (kpca: the training rows, nystrom:
  // the landmarks), or kernel rows from the caller (k and points null,
  // n_points the points they cover).
  fitted_pipeline(kmaha::feature_map map, const flat_kernel* k, const arma::mat* points,
                  arma::uword n_points, const arma::mat& projection,
                  const arma::vec& col_means, double grand_mean) {
    model.map = map;
    if (k != nullptr) {
      model.kernel = k->specs;
      model.weights = k->weights;
    }
    model.points = points;
    model.n_points = n_points;
    model.projection = &projection;
    model.col_means = &col_means;
    model.grand_mean = grand_mean;
  }

 private:
  std::unique_ptr<const arma::vec> center_, scale_, col_means_;
  std::unique_ptr<const arma::mat> points_, projection_, L_, embedding_;
  arma::mat kept_, mapped_;

  void reference(const Rcpp::List& r, bool regression) {
    if (regression) {
      const SEXP resp = list_element(r, "response");
      if (TYPEOF(resp) != REALSXP && TYPEOF(resp) != INTSXP)
        throw kmaha::error("pipeline: a regression needs a numeric `response`");
      model.response = Rcpp::as<arma::vec>(resp);
    } else if (!Rf_isNull(list_element(r, "y"))) {
      model.y = labels_from_r(Rcpp::as<arma::ivec>(list_element(r, "y")));
      model.classes = static_cast<arma::uword>(Rcpp::as<int>(list_element(r, "nlevels")));
    }
  }

  void feature_map(const Rcpp::List& r, bool have_Kx) {
    const SEXP fm_s = list_element(r, "feature_map");
    if (TYPEOF(fm_s) != VECSXP) throw kmaha::error("pipeline: `feature_map` must be a list");
    const Rcpp::List fm(fm_s);
    const std::string type = Rcpp::as<std::string>(list_element(fm, "type"));
    if (type == "identity") {
      model.map = kmaha::feature_map::identity;
      return;
    }
    if (type != "kpca" && type != "nystrom" && type != "kernel_rows")
      throw kmaha::error("pipeline: unknown feature map '" + type + "'");
    const bool nys = type == "nystrom";
    const SEXP pts = list_element(fm, nys ? "landmarks" : "x");
    if (!have_Kx) {
      if (Rf_isNull(pts)) throw kmaha::error("pipeline: this feature map needs the kernel rows of the new points");
      const flat_kernel kern(Rcpp::as<Rcpp::List>(list_element(fm, "kernel")));
      model.kernel = kern.specs;
      model.weights = kern.weights;
      points_ = r_matrix(pts, nys ? "landmarks" : "x");
      model.points = points_.get();
    } else if (!Rf_isNull(pts)) {
      // kernel rows from the caller: the points only say how many there are
      model.n_points = static_cast<arma::uword>(Rf_nrows(pts));
    } else if (!Rf_isNull(list_element(fm, "n"))) {
      model.n_points = static_cast<arma::uword>(Rcpp::as<double>(list_element(fm, "n")));
    } else {
      model.n_points = static_cast<arma::uword>(Rf_length(list_element(fm, "col_means")));
    }
    if (type == "kernel_rows") {
      model.map = kmaha::feature_map::kernel_rows;
      return;
    }
    model.map = nys ? kmaha::feature_map::nystrom : kmaha::feature_map::kpca;
    projection_ = r_matrix(list_element(fm, "projection"), "projection");
    col_means_ = r_vector(list_element(fm, "col_means"), "col_means");
    model.projection = projection_.get();
    model.col_means = col_means_.get();
    if (!nys) model.grand_mean = Rcpp::as<double>(list_element(fm, "grand_mean"));
  }
};

}  // namespace kmaha_glue

#endif  // KMAHA_FITTED_H
