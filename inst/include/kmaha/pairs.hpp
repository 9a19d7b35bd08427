// kmaha core: pairwise constraints, shared by the pair learners MMC
// (mmc.hpp) and ITML (itml.hpp).
//
// A constraint set is a list of pairs of rows (i, j) of the data, each marked
// similar (+1) or dissimilar (-1).  The R front ends check them (indices in
// range, no pair of a row with itself, no pair marked both ways, both kinds
// present); the checks here are internal.  Also here: the map of a learned
// positive semi-definite metric, L = diag(sqrt(s)) Q' from M = Q diag(s) Q'
// (the rows of its positive eigenvalues).
#ifndef KMAHA_PAIRS_HPP
#define KMAHA_PAIRS_HPP

#include <algorithm>
#include <cmath>
#include <string>
#include "common.hpp"
#include "context.hpp"
#include "symeig.hpp"

namespace kmaha {

struct pair_set {
  arma::umat idx;  // m x 2, 0-based rows
  arma::vec sign;  // m values, +1 similar, -1 dissimilar
  arma::uword n_similar() const { return static_cast<arma::uword>(arma::accu(sign > 0.0)); }
};

inline pair_set make_pair_set(const arma::umat& idx, const arma::vec& sign, arma::uword n,
                              const char* who) {
  if (idx.n_cols != 2 || idx.n_rows != sign.n_elem)
    throw error(std::string(who) + ": pairs must be an m x 2 index matrix with m signs");
  for (arma::uword k = 0; k < idx.n_rows; ++k) {
    if (idx(k, 0) >= n || idx(k, 1) >= n)
      throw error(std::string(who) + ": a pair index is out of range");
    if (idx(k, 0) == idx(k, 1)) throw error(std::string(who) + ": a pair of a row with itself");
    if (sign[k] != 1.0 && sign[k] != -1.0)
      throw error(std::string(who) + ": pair signs must be 1 or -1");
  }
  return pair_set{idx, sign};
}

// The rows x_i - x_j of the pairs whose sign is `s` (m_s x p).
inline arma::mat pair_differences(const arma::mat& X, const pair_set& ps, double s) {
  const arma::uvec k = arma::find(ps.sign == s);
  arma::mat Dm(k.n_elem, X.n_cols);
  for (arma::uword t = 0; t < k.n_elem; ++t)
    Dm.row(t) = X.row(ps.idx(k[t], 0)) - X.row(ps.idx(k[t], 1));
  return Dm;
}

namespace detail {
// Symmetric part of M, its eigenvalues (ascending) and vectors; the map of
// the positive ones (eigenvalue above 1e-12 times the largest), one row
// each, largest first, signs fixed.
inline arma::mat metric_map(const arma::mat& M, const char* who, const context& ctx) {
  const arma::mat S = 0.5 * (M + M.t());
  const sym_eigen se(S, who, 0, ctx.interrupt);
  const arma::vec& ev = se.values();
  const arma::uword p = ev.n_elem;
  const double top = p ? ev.max() : 0.0;
  if (!(top > 0.0)) return arma::mat(0, S.n_cols);
  arma::uword keep = 0;
  for (arma::uword i = 0; i < p; ++i) keep += ev[i] > 1e-12 * top ? 1 : 0;
  arma::uvec idx(keep);
  for (arma::uword i = 0; i < keep; ++i) idx[i] = p - 1 - i;
  arma::mat Q = se.vectors(idx);
  fix_signs(Q);
  for (arma::uword i = 0; i < keep; ++i) Q.col(i) *= std::sqrt(ev[p - 1 - i]);
  return Q.t();
}

// The projection of a symmetric matrix onto the positive semi-definite cone
// (negative eigenvalues set to 0).
inline arma::mat psd_projection(const arma::mat& M, const char* who, const context& ctx) {
  const arma::mat S = 0.5 * (M + M.t());
  const sym_eigen se(S, who, 0, ctx.interrupt);
  const arma::vec& ev = se.values();
  if (ev.n_elem == 0 || ev.min() >= 0.0) return S;
  const arma::uvec pos = arma::find(ev > 0.0);
  if (pos.n_elem == 0) return arma::mat(S.n_rows, S.n_cols, arma::fill::zeros);
  arma::mat Q = se.vectors(pos);
  const arma::vec s = ev.elem(pos);
  arma::mat out = Q * arma::diagmat(s) * Q.t();
  return 0.5 * (out + out.t());
}
}  // namespace detail

}  // namespace kmaha

#endif  // KMAHA_PAIRS_HPP
