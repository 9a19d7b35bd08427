// kmaha core: the prediction pipeline of a fitted model, from new raw inputs
// to classes in one call:
//
//   input scaling -> feature map -> linear map -> kNN vote
//
//  * input scaling: xs = (x - center) / scale, column by column (or none);
//  * feature map, the coordinates the linear map acts on:
//      identity     xs itself (NCA, LMNN, DNE on the inputs);
//      kpca         exact KPCA coordinates of xs (kpca.hpp): kernel rows
//                   against the n training points, centred with the
//                   training statistics, times the projection (n x r);
//      nystrom      Nystrom KPCA coordinates (nystrom.hpp): kernel rows
//                   against the m landmarks, minus their training mean,
//                   times the projection (m x r);
//      kernel_rows  the kernel rows k(xs, x_i) against the n training points
//                   themselves, uncentred (the kernel trick of KNCA, KDNE,
//                   KLMNN: the map is the coefficient matrix U);
//    kernel rows computed by the caller (Kx, n_new x n or m) replace the
//    evaluation of the kernel: kernels evaluated in R and precomputed Gram
//    matrices (which have no training inputs: `points` is null and
//    `n_points` says how many training points the rows cover) come this
//    way;
//  * linear map: z = coords L' (L: d x r), through the core's product
//    kernels (gemm.hpp); without L, the feature map's coordinates
//    themselves (a kpca() fit's projection);
//  * kNN vote (knn.hpp) of z against the reference embedding (n_ref x d)
//    with labels y, with knn.hpp's tie rule; for a regression model
//    (MLKR), the weighted mean of the numeric responses of the k nearest
//    reference points (pipeline_regress(), pipeline_loo_regress()).
// This is the one path from inputs to learned coordinates and votes:
// predict(), fitted() (leave-one-out votes of the embedding, see
// pipeline_loo()), the held-out scoring of cross-validation folds and the
// projection of kpca() fits all run it.
#ifndef KMAHA_PIPELINE_HPP
#define KMAHA_PIPELINE_HPP

#include <string>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#include "gemm.hpp"
#include "gram.hpp"
#include "kernels.hpp"
#include "knn.hpp"
#include "kpca.hpp"
#include "parallel.hpp"

namespace kmaha {

enum class feature_map { identity, kpca, nystrom, kernel_rows };

// A fitted model, as views of the caller's memory: every pointer must stay
// valid while the model is used.  Pointers that a feature map does not use
// are null.
struct pipeline_model {
  const arma::vec* center = nullptr;  // D, or null: no input scaling
  const arma::vec* scale = nullptr;   // D, with center
  feature_map map = feature_map::identity;
  std::vector<kernel_spec> kernel;    // kpca, nystrom, kernel_rows: the kernel
  arma::vec weights;                  //   (a weighted sum of base kernels)
  const arma::mat* points = nullptr;  // kpca, kernel_rows: scaled training
                                      // inputs (n x D); nystrom: landmarks;
                                      // null: kernel rows come from the caller
  arma::uword n_points = 0;           // rows of the feature map without points
  const arma::mat* projection = nullptr;  // kpca: n x r, nystrom: m x r
  const arma::vec* col_means = nullptr;   // kpca: n, nystrom: m
  double grand_mean = 0.0;                // kpca
  const arma::mat* L = nullptr;           // d x r, or null: no map
  const arma::mat* embedding = nullptr;   // n_ref x d
  arma::uvec y;                           // n_ref labels in 0..classes-1
  arma::uword classes = 0;
  arma::vec response;                     // regression: n_ref responses
};

namespace detail {

// Checks that the parts of a model fit together, for inputs of D columns.
inline void check_pipeline(const pipeline_model& m, arma::uword D) {
  if ((m.center == nullptr) != (m.scale == nullptr))
    throw error("pipeline: center and scale go together");
  if (m.center && (m.center->n_elem != D || m.scale->n_elem != D))
    throw error("pipeline: center and scale must have one entry per input column");
  arma::uword r = D;
  if (m.map != feature_map::identity) {
    if (m.points == nullptr) {
      if (m.n_points == 0)
        throw error("pipeline: the feature map needs its points or their number");
      r = m.n_points;
    } else {
      if (m.kernel.empty() || m.kernel.size() != m.weights.n_elem)
        throw error("pipeline: the feature map needs a kernel");
      if (m.points->n_cols != D)
        throw error("pipeline: the feature map's points must have one column per input column");
      r = m.points->n_rows;
    }
  }
  if (m.map == feature_map::kpca || m.map == feature_map::nystrom) {
    if (m.projection == nullptr || m.col_means == nullptr ||
        m.projection->n_rows != r || m.col_means->n_elem != r)
      throw error("pipeline: the projection and column means must have one row per point of the feature map");
    r = m.projection->n_cols;
  }
  if (m.L != nullptr && m.L->n_cols != r)
    throw error("pipeline: the map must have one column per coordinate of the feature map");
}

// A reference embedding with one column per learned coordinate (d);
// `use` says what it is needed for.
inline void check_embedding(const pipeline_model& m, arma::uword d, const char* use) {
  if (m.embedding == nullptr)
    throw error(std::string("pipeline: the model needs a reference embedding to ") + use);
  if (m.embedding->n_cols != d)
    throw error("pipeline: the reference embedding must have one column per learned coordinate");
}

// The parts a vote needs: the reference embedding, one label per reference
// point.
inline void check_reference(const pipeline_model& m, arma::uword d) {
  check_embedding(m, d, "vote");
  if (m.y.n_elem != m.embedding->n_rows)
    throw error("pipeline: one label per reference point is needed");
  if (m.classes == 0 || (m.y.n_elem && m.y.max() >= m.classes))
    throw error("pipeline: labels out of range");
}

// The parts a regression needs: the reference embedding, one response per
// reference point.
inline void check_response(const pipeline_model& m, arma::uword d) {
  check_embedding(m, d, "predict");
  if (m.response.n_elem != m.embedding->n_rows)
    throw error("pipeline: one response per reference point is needed");
}

// The k of a vote or a prediction: each between 1 and the number of
// reference points n (n - 1 when each point is left out of its own
// neighbours, `loo`).  Returns the largest.
inline arma::uword check_ks(const arma::uvec& ks, arma::uword n, bool loo = false) {
  if (ks.is_empty()) throw error("pipeline: no k to vote or predict with");
  if (loo && (ks.min() < 1 || ks.max() + 1 > n))
    throw error("pipeline: leave-one-out needs k below the number of reference points");
  if (ks.min() < 1 || ks.max() > n)
    throw error("pipeline: k must lie between 1 and the number of reference points");
  return ks.max();
}

// Coordinates of new points under a KPCA feature map that are NaN: their
// kernel values overflowed (predict() of a kpca fit says so too).
inline void check_coords(const arma::mat& coords) {
  if (coords.has_nan())
    throw error(error_kind::numerical,
                "the new points are so far from the training data that their "
                "kernel values overflow; rescale them as the training data");
}

}  // namespace detail

// (x - center) / scale, column by column.
inline arma::mat pipeline_scale(const pipeline_model& m, const arma::mat& x) {
  if (m.center == nullptr) return x;
  arma::mat xs(x.n_rows, x.n_cols);
  for (arma::uword j = 0; j < x.n_cols; ++j) {
    const double c = (*m.center)[j], s = (*m.scale)[j];
    const double* in = x.colptr(j);
    double* out = xs.colptr(j);
    for (arma::uword i = 0; i < x.n_rows; ++i) out[i] = (in[i] - c) / s;
  }
  return xs;
}

namespace detail {

// Rows s.. of z: F W - 1 shift' - f sum_w', where F holds the block's kernel
// rows and f their means (the centring of exact KPCA; none when sum_w is
// empty).
inline void project_block(const arma::mat& F, const arma::mat& W,
                          const arma::rowvec& shift, const arma::rowvec& sum_w,
                          arma::mat& z, arma::uword s, isa kernels,
                          gemm_buffers& buf) {
  const arma::uword b = F.n_rows, d = W.n_cols;
  gemm(kernels, static_cast<std::ptrdiff_t>(b), static_cast<std::ptrdiff_t>(d),
       static_cast<std::ptrdiff_t>(F.n_cols), cview::col_major(F.memptr(), b),
       cview::col_major(W.memptr(), W.n_rows), z.memptr() + s, 1,
       static_cast<std::ptrdiff_t>(z.n_rows), false, buf);
  const bool centre = !sum_w.is_empty();
  arma::vec fm;
  if (centre) fm = arma::mean(F, 1);
  for (arma::uword j = 0; j < d; ++j) {
    double* zj = z.colptr(j) + s;
    const double a = shift[j], mw = centre ? sum_w[j] : 0.0;
    for (arma::uword i = 0; i < b; ++i) zj[i] -= centre ? a + fm[i] * mw : a;
  }
}

}  // namespace detail

// The learned coordinates z (n_new x d) of the raw inputs x (n_new x D);
// Kx (n_new x n or m): kernel rows computed by the caller, used instead of
// evaluating the kernel (null: evaluate it; required when the feature map
// has no points, and then x is only read for its number of rows and
// columns).  Without a map (L null) z holds the feature map's coordinates.
//
// The linear map is folded into the feature map's projection once per call,
// W = projection L' (points x d), so each new point costs one product with
// its kernel row (exact KPCA: z = kc W for the centred kernel row kc;
// Nystrom: z = (c - mu)' W); new points are processed in blocks of rows on
// the context's threads (the kernel rows of a block, never n_new x n).  The
// coordinates equal, up to rounding, those of the separate steps (KPCA
// projection, then the map).
inline arma::mat pipeline_transform(const pipeline_model& m, const arma::mat& x,
                                    const arma::mat* Kx, const context& ctx) {
  detail::check_pipeline(m, x.n_cols);
  const arma::uword np = m.map == feature_map::identity ? 0
                         : (m.points ? m.points->n_rows : m.n_points);
  if (Kx != nullptr) {
    if (m.map == feature_map::identity)
      throw error("pipeline: kernel rows are given, but the model has no kernel feature map");
    if (Kx->n_rows != x.n_rows || Kx->n_cols != np)
      throw error("pipeline: the kernel rows must be n_new x (points of the feature map)");
  } else if (m.map != feature_map::identity && m.points == nullptr) {
    throw error("pipeline: this feature map needs the kernel rows of the new points");
  }
  if (m.map == feature_map::identity) {
    if (m.L == nullptr) return pipeline_scale(m, x);
    return apply_map(pipeline_scale(m, x), *m.L, ctx.kernels);
  }
  const arma::uword n_new = x.n_rows;
  // Without a map: the identity on the feature map's coordinates.
  arma::mat I;
  const arma::uword r = m.map == feature_map::kernel_rows ? np : m.projection->n_cols;
  if (m.L == nullptr) I.eye(r, r);
  const arma::mat& L = m.L ? *m.L : I;
  const arma::uword d = L.n_rows;
  // W (np x d) and the centring terms of the feature map: z = F W - 1 shift'
  // - rowmeans(F) sum_w' (kpca), z = F W - 1 shift' (nystrom), z = F L'
  // (kernel rows).
  arma::mat W;
  arma::rowvec shift(d, arma::fill::zeros), sum_w;
  if (m.map == feature_map::kernel_rows) {
    W = L.t();
  } else {
    W = m.L ? apply_map(*m.projection, L, ctx.kernels) : *m.projection;
    shift = m.col_means->t() * W;
    if (m.map == feature_map::kpca) {
      sum_w = arma::sum(W, 0);
      shift -= m.grand_mean * sum_w;
    }
  }
  arma::mat z(n_new, d);
  const double target = 1048576.0 / static_cast<double>(std::max<arma::uword>(np, 1));
  const row_blocks blocks(n_new, static_cast<arma::uword>(std::max(8.0, std::min(256.0, target))));
  const arma::vec pp = m.points ? arma::vec(arma::sum(arma::square(*m.points), 1)) : arma::vec();
  per_thread<gemm_buffers> bufs(ctx.threads);
  parallel_for(blocks.count(), ctx, [&](std::size_t bi, std::size_t) {
    const arma::uword s = blocks.start(bi), e = blocks.end(bi);
    arma::mat F;
    if (Kx) {
      F = Kx->rows(s, e - 1);
    } else {
      arma::mat xb = x.rows(s, e - 1);
      if (m.center) xb = pipeline_scale(m, xb);
      gram_rows(m.kernel, m.weights, xb, 0, e - s, *m.points, pp, F, ctx.kernels);
    }
    detail::project_block(F, W, shift, sum_w, z, s, ctx.kernels, bufs.local());
  });
  if (m.map != feature_map::kernel_rows) detail::check_coords(z);
  return z;
}

// Classes and vote fractions of the k nearest reference points of each new
// point in the learned space (knn.hpp).
inline knn_result pipeline_classify(const pipeline_model& m, const arma::mat& x,
                                    const arma::mat* Kx, arma::uword k,
                                    const context& ctx) {
  const arma::mat z = pipeline_transform(m, x, Kx, ctx);
  detail::check_reference(m, z.n_cols);
  detail::check_ks(arma::uvec{k}, m.embedding->n_rows);
  return knn_classify(*m.embedding, m.y, m.classes, z, k, false, ctx);
}

// The classes of each new point voted by its ks[j] nearest reference
// points, for every j (n_new x ks.n_elem, 0-based): one transform and one
// neighbour search for all the k (a cross-validation fold scores several k
// at once, see knn_vote_ks()).
inline arma::umat pipeline_classify_ks(const pipeline_model& m, const arma::mat& x,
                                       const arma::mat* Kx, const arma::uvec& ks,
                                       const context& ctx) {
  const arma::mat z = pipeline_transform(m, x, Kx, ctx);
  detail::check_reference(m, z.n_cols);
  const arma::uword kmax = detail::check_ks(ks, m.embedding->n_rows);
  const arma::umat idx = knn_search(*m.embedding, z, kmax, false, 512, ctx);
  return knn_vote_ks(idx, m.y, m.classes, ks);
}

// Leave-one-out votes of the reference points themselves (each left out of
// its own neighbours): the fitted classes of the training points.
inline knn_result pipeline_loo(const pipeline_model& m, arma::uword k,
                               const context& ctx) {
  if (m.embedding == nullptr) throw error("pipeline: the model has no reference embedding");
  detail::check_reference(m, m.embedding->n_cols);
  detail::check_ks(arma::uvec{k}, m.embedding->n_rows, true);
  return knn_classify(*m.embedding, m.y, m.classes, *m.embedding, k, true, ctx);
}

// Regression: the weighted mean of the responses of the ks[j] nearest
// reference points of each new point in the learned space, for every j
// (n_new x ks.n_elem): one transform and one neighbour search for all the
// k (a cross-validation fold scores several k, as pipeline_classify_ks()).
inline arma::mat pipeline_regress_ks(const pipeline_model& m, const arma::mat& x,
                                     const arma::mat* Kx, const arma::uvec& ks,
                                     knn_weights w, const context& ctx) {
  const arma::mat z = pipeline_transform(m, x, Kx, ctx);
  detail::check_response(m, z.n_cols);
  const arma::uword kmax = detail::check_ks(ks, m.embedding->n_rows);
  const arma::umat idx = knn_search(*m.embedding, z, kmax, false, 512, ctx);
  arma::mat out(z.n_rows, ks.n_elem);
  for (arma::uword j = 0; j < ks.n_elem; ++j)
    out.col(j) = knn_weighted_mean(*m.embedding, m.response, z,
                                   arma::umat(idx.cols(0, ks[j] - 1)), w, ctx);
  return out;
}

// The same for one k (knn_regress() of knn.hpp: the same neighbours and
// weights).
inline arma::vec pipeline_regress(const pipeline_model& m, const arma::mat& x,
                                  const arma::mat* Kx, arma::uword k, knn_weights w,
                                  const context& ctx) {
  return pipeline_regress_ks(m, x, Kx, arma::uvec{k}, w, ctx).col(0);
}

// Leave-one-out regression of the reference points themselves: the fitted
// values of the training points.
inline arma::vec pipeline_loo_regress(const pipeline_model& m, arma::uword k,
                                      knn_weights w, const context& ctx) {
  if (m.embedding == nullptr) throw error("pipeline: the model has no reference embedding");
  detail::check_response(m, m.embedding->n_cols);
  detail::check_ks(arma::uvec{k}, m.embedding->n_rows, true);
  return knn_regress(*m.embedding, m.response, *m.embedding, k, true, w, ctx);
}

}  // namespace kmaha

#endif  // KMAHA_PIPELINE_HPP
