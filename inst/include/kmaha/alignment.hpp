// kmaha core: the Frobenius products needed by kernel alignment.
//
// For base kernels k_1..k_m on training rows X (n x D) with labels y, the
// alignment QP of the paper (eq. align2/align3) needs
//   S_ij = <K_i, K_j>_F      (m x m),
//   b_i  = <K_i, Y>_F        (m),
// where Y is the ideal kernel, Y_ab = 1 if y_a = y_b and -1/(p-1) otherwise.
// The LP upper bound (eq. align4) also needs ||vec(K_i)||_1 and whether any
// base Gram has negative entries.
//
// The base Grams are never all kept: rows of X are processed in blocks
// (distances.hpp), the inner products (and squared distances) of all rows
// against one block are computed once and shared by every base kernel, the
// block's m Gram slices are stacked as the columns of one (n * block) x m
// matrix G, and S += G'G, b += G' vec(Y_block) are accumulated with BLAS.  Memory is
// O(block * n * m) with the block chosen to keep G below a fixed budget.
#ifndef KMAHA_ALIGNMENT_HPP
#define KMAHA_ALIGNMENT_HPP

#include <algorithm>
#include <vector>
#include "common.hpp"
#include "context.hpp"
#include "distances.hpp"
#include "kernels.hpp"

namespace kmaha {

// One base kernel: itself possibly a non-negative sum of elementary kernels.
struct base_kernel {
  std::vector<kernel_spec> parts;
  arma::vec weights;
};

struct alignment_stats {
  arma::mat S;        // m x m Frobenius products <K_i, K_j>
  arma::vec b;        // m     <K_i, Y>
  arma::vec l1;       // m     sum_ab |K_i(a, b)|
  arma::vec min_entry;  // m   smallest entry of each base Gram
  double y_norm = 0;  // ||Y||_F
};

// Ideal-kernel value for a pair of labels.
inline double ideal_value(arma::uword a, arma::uword b, double off) {
  return a == b ? 1.0 : off;
}

inline alignment_stats alignment_products(
    const std::vector<base_kernel>& kernels, const arma::mat& X,
    const arma::uvec& y, arma::uword p, double budget_doubles,
    const context& ctx) {
  const arma::uword n = X.n_rows, m = kernels.size();
  if (m == 0) throw error("alignment: no base kernels");
  if (y.n_elem != n) throw error("alignment: labels do not match rows");
  if (p < 2) throw error("alignment: at least two classes are needed");
  for (const auto& k : kernels) {
    if (k.parts.empty() || k.parts.size() != k.weights.n_elem)
      throw error("alignment: malformed base kernel");
  }
  const double D = static_cast<double>(X.n_cols);
  const double off = -1.0 / (static_cast<double>(p) - 1.0);

  bool need_d = false, need_ip = false;
  for (const auto& k : kernels)
    for (const auto& s : k.parts) (uses_distance(s) ? need_d : need_ip) = true;

  alignment_stats out;
  out.S.zeros(m, m);
  out.b.zeros(m);
  out.l1.zeros(m);
  out.min_entry.set_size(m);
  out.min_entry.fill(arma::datum::inf);

  // ||Y||_F^2 from the class sizes.
  arma::vec counts(p, arma::fill::zeros);
  for (arma::uword i = 0; i < n; ++i) {
    if (y[i] >= p) throw error("alignment: label out of range");
    counts[y[i]] += 1.0;
  }
  const double same = arma::accu(arma::square(counts));
  const double nn = static_cast<double>(n) * static_cast<double>(n);
  out.y_norm = std::sqrt(same + (nn - same) * off * off);

  const arma::uword block = std::max<arma::uword>(
      1, std::min<arma::uword>(
             n, static_cast<arma::uword>(budget_doubles /
                                         (static_cast<double>(n) * m))));
  // Points of extreme magnitude are divided by a power of two c first, and
  // inner products and distances multiplied back by c^2 (common.hpp).
  const double cs = detail::distance_scale(detail::max_abs_entry(X));
  const arma::mat Xs = cs == 1.0 ? arma::mat() : arma::mat(X / cs);
  const arma::mat& Xw = cs == 1.0 ? X : Xs;
  const arma::vec xx = arma::sum(arma::square(Xw), 1);
  arma::mat G, d2, Kb;
  arma::vec yv;
  // The blocks run in order on the calling thread: their sums are
  // accumulated in block order, so the result does not depend on threads.
  for_each_product_block(
      Xw, Xw, block,
      [&](arma::uword q0, arma::uword q1, arma::mat& ip) {
        // Blocks are n x nb: all rows (r) against the block's rows (c).
        const arma::uword nb = q1 - q0;
        if (need_d) {
          d2 = ip;
          products_to_sq_dist(d2, xx, xx.memptr() + q0);
          for (arma::uword c = 0; c < nb; ++c) d2(q0 + c, c) = 0.0;
          detail::unscale_sq_dist(d2, cs);
        }
        if (need_ip) detail::unscale_sq_dist(ip, cs);
        G.set_size(n * nb, m);
        for (arma::uword j = 0; j < m; ++j) {
          const base_kernel& bk = kernels[j];
          Kb.zeros(n, nb);
          for (std::size_t t = 0; t < bk.parts.size(); ++t) {
            if (bk.weights[t] == 0.0) continue;
            const kernel_spec& ks = bk.parts[t];
            Kb += bk.weights[t] * apply_kernel(ks, uses_distance(ks) ? d2 : ip, D);
          }
          out.l1[j] += arma::accu(arma::abs(Kb));
          out.min_entry[j] = std::min(out.min_entry[j], Kb.min());
          G.col(j) = arma::vectorise(Kb);
        }
        // Ideal kernel slice, vectorised in the same (column-major) order.
        yv.set_size(n * nb);
        for (arma::uword c = 0; c < nb; ++c)
          for (arma::uword r = 0; r < n; ++r)
            yv[c * n + r] = ideal_value(y[r], y[q0 + c], off);
        out.S += G.t() * G;
        out.b += G.t() * yv;
      },
      ctx.with_threads(1));
  out.S = arma::symmatu(out.S);
  return out;
}

}  // namespace kmaha

#endif  // KMAHA_ALIGNMENT_HPP
