// kmaha core: Discriminant Neighbourhood Embedding (DNE) and its kernel-trick
// version (KDNE).
//
// DNE (Zhang, Xue, Lu, Guo, 2006; section "DNE" of Chatpatanasiri et al.).  With
// one observation per row of X (n x D), neighbour sets Neig^I(i) (the k
// nearest points of the same class) and Neig^E(i) (the k nearest points of
// other classes) define a symmetric graph
//
//   w_ij = +1  if j in Neig^I(i) or i in Neig^I(j),
//   w_ij = -1  if j in Neig^E(i) or i in Neig^E(j),
//   w_ij =  0  otherwise,
//
// and, with D the diagonal degree matrix D_ii = sum_j w_ij, the map A (d x D)
// solves   min trace(A S A')  s.t.  A A' = I,   S = X' (D - W) X,
// i.e. the rows of A are the eigenvectors of the d smallest eigenvalues of S.
// Since sum_{i,j} w_ij ||A x_i - A x_j||^2 = 2 trace(A S A') (the sum running
// over ordered pairs), this is the paper's objective up to the factor 2.
//
// The graph has at most 2 n k edges and is never stored as an n x n matrix:
// (D - W) X is accumulated edge by edge, so S costs O(n k D + n D^2).  The
// neighbour lists come from same_other_neighbors() (neighbors.hpp), the
// span of the points when D >= n - 1 from centred_row_span() (span.hpp).
//
// KDNE (paper, equation "kdne"): with A = U Phi' and K = Phi' Phi,
//   min trace(U K (D - W) K U')  s.t.  U (K + eps I) U' = I,
// a generalized symmetric eigenproblem K (D - W) K u = mu (K + eps I) u.  It
// is solved through the Cholesky factor R of K + eps I (R'R = K + eps I):
// C = R^{-T} K (D - W) K R^{-1} is symmetric, C v = mu v, and u = R^{-1} v.
#ifndef KMAHA_DNE_HPP
#define KMAHA_DNE_HPP

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>
#include "neighbors.hpp"
#include "span.hpp"
#include "symeig.hpp"

namespace kmaha {

// Sparse symmetric DNE graph: each undirected edge {i, j} (i < j) once.
struct dne_graph {
  arma::uword n = 0;
  arma::umat edges;   // 2 x m, edges(0, e) < edges(1, e)
  arma::vec weight;   // m values, +1 (same class) or -1 (other classes)
};

namespace detail {
// Sorted, duplicate-free undirected pairs (keys i * n + j with i < j) from an
// n x k neighbour list; no_neighbor entries are skipped.
inline std::vector<std::uint64_t> pair_keys(const arma::umat& nb,
                                            arma::uword n,
                                            const char* what) {
  std::vector<std::uint64_t> keys;
  keys.reserve(nb.n_elem);
  for (arma::uword t = 0; t < nb.n_cols; ++t) {
    for (arma::uword i = 0; i < nb.n_rows; ++i) {
      const arma::uword j = nb(i, t);
      if (j == no_neighbor) continue;
      if (j >= n) throw error(std::string("dne graph: ") + what +
                              " neighbour index out of range");
      if (j == i) throw error(std::string("dne graph: a point is its own ") +
                              what + " neighbour");
      const std::uint64_t a = std::min(i, j), b = std::max(i, j);
      keys.push_back(a * static_cast<std::uint64_t>(n) + b);
    }
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}
}  // namespace detail

// The graph of the paper's w_ij from the same-class (n x k1) and other-class
// (n x k2) neighbour lists.  A pair listed both as same-class and as
// other-class neighbours is contradictory and rejected.
inline dne_graph make_dne_graph(const arma::umat& same, const arma::umat& other,
                                arma::uword n) {
  if (same.n_rows != n || other.n_rows != n)
    throw error("dne graph: neighbour lists must have one row per point");
  const std::vector<std::uint64_t> ps = detail::pair_keys(same, n, "same-class");
  const std::vector<std::uint64_t> po = detail::pair_keys(other, n, "other-class");
  std::vector<std::uint64_t> both;
  std::set_intersection(ps.begin(), ps.end(), po.begin(), po.end(),
                        std::back_inserter(both));
  if (!both.empty())
    throw error("dne graph: a pair of points is listed both as same-class and "
                "as other-class neighbours");
  dne_graph g;
  g.n = n;
  const arma::uword m = ps.size() + po.size();
  g.edges.set_size(2, m);
  g.weight.set_size(m);
  arma::uword e = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<std::uint64_t>& keys = pass == 0 ? ps : po;
    for (const std::uint64_t key : keys) {
      g.edges(0, e) = static_cast<arma::uword>(key / n);
      g.edges(1, e) = static_cast<arma::uword>(key % n);
      g.weight[e] = pass == 0 ? 1.0 : -1.0;
      ++e;
    }
  }
  return g;
}

namespace detail {
// X' (D - W) X from Xt = X' (p x n): the points are the COLUMNS of Xt, so
// that each edge's update below reads and writes contiguous memory.  Because
// (D - W) 1 = 0, X may be centred first, which removes the cancellation an
// uncentred X would cause; (D - W) Xc is accumulated edge by edge, then one
// matrix product.
inline arma::mat scatter_of_columns(const arma::mat& Xt, const dne_graph& g,
                                    const context& ctx) {
  if (Xt.n_cols != g.n) throw error("dne scatter: data and graph sizes differ");
  const arma::uword p = Xt.n_rows, m = g.weight.n_elem;
  arma::mat Xc = Xt;
  Xc.each_col() -= arma::mean(Xt, 1);
  arma::mat LXc(p, g.n, arma::fill::zeros);
  arma::vec diff(p);
  for (arma::uword e = 0; e < m; ++e) {
    const arma::uword i = g.edges(0, e), j = g.edges(1, e);
    const double w = g.weight[e];
    const double* xi = Xc.colptr(i);
    const double* xj = Xc.colptr(j);
    double* li = LXc.colptr(i);
    double* lj = LXc.colptr(j);
    for (arma::uword r = 0; r < p; ++r) {
      const double v = w * (xi[r] - xj[r]);
      li[r] += v;
      lj[r] -= v;
    }
    if ((e & 4095u) == 4095u) check_interrupt(ctx.interrupt);
  }
  arma::mat S = Xc * LXc.t();
  S = 0.5 * (S + S.t());
  return S;
}
}  // namespace detail

// The p x p matrix X' (D - W) X for the points in the rows of X (n x p),
// the core's convention.
inline arma::mat dne_scatter(const arma::mat& X, const dne_graph& g,
                             const context& ctx) {
  return detail::scatter_of_columns(X.t(), g, ctx);
}

struct dne_result {
  arma::mat A;        // d x D, orthonormal rows
  arma::vec eigval;   // all D eigenvalues of S + lambda I, ascending
  arma::mat S;        // X' (D - W) X; empty when solved in the span (below)
  arma::uword dim = 0;
  arma::uword n_negative = 0;  // eigenvalues of S + lambda I below -tol
  arma::uword span_rank = 0;   // rank r of the centred data when solved in
                               // their span (D >= n - 1), else 0
  double retention = 1.0;      // see detail::retention()
};

namespace detail {
// Tolerance below which an eigenvalue (of m) is zero up to rounding:
// 10 m eps_mach max|ev|.
inline double zero_tol(const arma::vec& ev) {
  if (ev.n_elem == 0) return 0.0;
  return 10.0 * ev.n_elem * std::numeric_limits<double>::epsilon() *
         arma::abs(ev).max();
}

// Number of eigenvalues below -zero_tol(ev): eigenvalues that are zero up to
// rounding do not count as negative.
inline arma::uword count_negative(const arma::vec& ev) {
  const double tol = zero_tol(ev);
  arma::uword c = 0;
  for (arma::uword i = 0; i < ev.n_elem; ++i) c += ev[i] < -tol ? 1 : 0;
  return c;
}

// Retention of n training points: the share of their spread that lies
// within what the other points span, i.e. that a new point of the same
// distribution can share.  Each point x_i is replaced by its
// leave-one-out position, its orthogonal projection onto the affine span of
// the other points, and
//     rho = sum_i ||loo(x_i) - mean||^2 / sum_i ||x_i - mean||^2.
// When the points are affinely dependent (centred rank r < n - 1, e.g. D <
// n - 1), each one lies in the span of the others and rho = 1.  When they
// are affinely independent (D >= n - 1, or kernel coordinates of full rank),
// every point has a private part outside the others' span, and rho < 1; for
// p >> n noise rho is near 0.  From the eigen-decomposition of the centred
// Gram matrix, Gc = U diag(s) U' (r = n - 1 kept directions), whose
// pseudo-inverse Q = U diag(1/s) U' is the leading block of the inverse of
// the bordered matrix [Gc 1; 1' 0]: the residual of x_i is
// sum_j Q_ij x_j / Q_ii, so in the coordinates Z = U diag(s)^(1/2) the
// leave-one-out positions are Z - diag(1/Q_ii) U diag(s)^(-1/2).
inline double retention(const arma::mat& U, const arma::vec& s, arma::uword n) {
  if (n < 3 || U.n_cols + 1 < n) return 1.0;
  const arma::vec isq = 1.0 / arma::sqrt(s);
  const arma::vec sq = arma::sqrt(s);
  const arma::vec qd = arma::square(U) * (1.0 / s);  // Q_ii
  double num = 0.0, den = 0.0;
  for (arma::uword k = 0; k < U.n_cols; ++k) {
    for (arma::uword i = 0; i < n; ++i) {
      const double z = U(i, k) * sq[k];
      const double zl = z - U(i, k) * isq[k] / qd[i];
      num += zl * zl;
      den += z * z;
    }
  }
  if (!(den > 0.0) || !std::isfinite(num)) return 1.0;
  return std::min(1.0, num / den);
}

// The automatic dimension of DNE and KDNE from the ascending eigenvalues
// `ev` of their symmetric problem (after any shift by lambda) and the
// retention rho of the points (retention()): the number of eigenvalues
// below -max((1 - rho) mu_max, tol), at least 1, with mu_max the largest
// eigenvalue when positive (else 0).  Without class information the
// same-class and other-class neighbour sums are exchangeable and the
// spectrum is symmetric about 0, so mu_max is the size of the eigenvalues
// that chance alone produces; the share 1 - rho of the spread is private to
// the training points, and negative eigenvalues within (1 - rho) mu_max of 0
// are not trusted.  With rho = 1 (ordinary data) every negative eigenvalue
// counts.
inline arma::uword automatic_dim(const arma::vec& ev, double rho) {
  if (ev.n_elem == 0) return 1;
  const double top = std::max(ev[ev.n_elem - 1], 0.0);
  const double thr = std::max((1.0 - std::min(std::max(rho, 0.0), 1.0)) * top,
                              zero_tol(ev));
  arma::uword c = 0;
  for (arma::uword i = 0; i < ev.n_elem; ++i) c += ev[i] < -thr ? 1 : 0;
  return std::max<arma::uword>(1, c);
}

// The upper Cholesky factor R of a symmetric positive definite B (R'R = B),
// in panels of `nb` columns (right-looking: LAPACK's factor of the diagonal
// block, a triangular solve for the block row, a symmetric rank-nb update of
// the rest), polling the interrupt after each panel, so that a time limit
// acts during the O(n^3 / 3) factorization of a large Gram matrix.  False
// when B is not numerically positive definite (as arma::chol()).
inline bool chol_panels(arma::mat& R, const arma::mat& B, const interrupt_fn& interrupt,
                        arma::uword nb = 256) {
  const arma::uword n = B.n_rows;
  // one panel: LAPACK's factor itself (the same numbers as before panels)
  if (n <= nb) {
    const bool ok = arma::chol(R, B);
    check_interrupt(interrupt);
    return ok;
  }
  arma::mat A = arma::symmatu(B);
  R.zeros(n, n);
  for (arma::uword j0 = 0; j0 < n; j0 += nb) {
    const arma::uword j1 = std::min(n, j0 + nb) - 1;
    arma::mat R11;
    if (!arma::chol(R11, A.submat(j0, j0, j1, j1))) return false;
    R.submat(j0, j0, j1, j1) = R11;
    if (j1 + 1 < n) {
      const arma::mat R12 = arma::solve(arma::trimatl(R11.t()), A.submat(j0, j1 + 1, j1, n - 1));
      R.submat(j0, j1 + 1, j1, n - 1) = R12;
      A.submat(j1 + 1, j1 + 1, n - 1, n - 1) -= R12.t() * R12;
    }
    check_interrupt(interrupt);
  }
  return true;
}

// Eigen-solve of a symmetric matrix and the DNE/KDNE dimension rule: the
// eigenvectors of the `dim` smallest eigenvalues, or, with dim = 0, of the
// automatic dimension for retention rho, with fixed signs.
inline arma::mat smallest_eigvecs(const arma::mat& S, arma::uword dim,
                                  const char* who, double rho,
                                  arma::vec& eigval, arma::uword& n_negative,
                                  arma::uword& dim_out,
                                  const interrupt_fn& interrupt = interrupt_fn()) {
  const sym_eigen se(S, who, 0, interrupt);
  eigval = se.values();
  n_negative = count_negative(eigval);
  dim_out = dim > 0 ? dim : automatic_dim(eigval, rho);
  if (dim_out > eigval.n_elem) throw error(std::string(who) + ": dim exceeds the number of features");
  arma::mat Vd = se.vectors(0, dim_out);
  fix_signs(Vd);
  return Vd;
}

// c orthonormal vectors orthogonal to the orthonormal columns of B (D x r),
// by Gram-Schmidt on the coordinate vectors e_j with column pivoting (the
// e_j with the largest remaining component first, the lower j on ties):
// deterministic, and cheap for small c.
inline arma::mat complement_basis(const arma::mat& B, arma::uword c) {
  const arma::uword D = B.n_rows;
  if (B.n_cols + c > D) throw error("dne: the complement is too small");
  arma::mat Q(D, c);
  arma::vec left = 1.0 - arma::sum(arma::square(B), 1);  // ||(I - P) e_j||^2
  for (arma::uword t = 0; t < c; ++t) {
    const arma::uword j = left.index_max();
    arma::vec v(D, arma::fill::zeros);
    v[j] = 1.0;
    for (int pass = 0; pass < 2; ++pass) {  // twice is enough (Kahan)
      v -= B * (B.t() * v);
      if (t > 0) v -= Q.cols(0, t - 1) * (Q.cols(0, t - 1).t() * v);
    }
    const double nv = arma::norm(v);
    if (!(nv > 0.5 * std::sqrt(std::max(left[j], 0.0))) || !(nv > 1e-8))
      throw error("dne: could not complete the orthonormal basis");
    v /= nv;
    Q.col(t) = v;
    left -= arma::square(v);
    left[j] = -1.0;  // used
  }
  return Q;
}
}  // namespace detail

// DNE on the rows of X with graph g.  dim = 0 selects the automatic
// dimension (detail::automatic_dim()).  lambda adds lambda * ||A||_F^2 to the
// objective: under A A' = I that is the constant lambda * d, so the map for
// a given d is unchanged while the automatic choice of d sees the shifted
// eigenvalues.
//
// When D >= n - 1 the problem is solved in the span of the centred points:
// S = Xc' (D - W) Xc (since (D - W) 1 = 0) vanishes on the orthogonal
// complement of that span, so with the basis B and coordinates Z = Xc B of
// centred_row_span() (span.hpp) the eigenpairs of S are those of the r x r
// matrix Z' (D - W) Z (eigenvectors B v) and D - r zeros (eigenvectors any
// orthonormal basis of the complement).  Cost O(n^2 D + n^3) instead of
// O(n D^2 + D^3); S itself is not formed (dne_result::S stays empty).
// principal = true: the columns of X are principal components already
// (exact KPCA coordinates), whose span needs no eigen-decomposition
// (principal_row_span(), span.hpp).
inline dne_result dne_fit(const arma::mat& X, const dne_graph& g,
                          arma::uword dim, double lambda, bool principal,
                          const context& ctx) {
  const arma::uword p = X.n_cols, n = X.n_rows;
  if (n != g.n) throw error("dne: data and graph sizes differ");
  if (dim > p) throw error("dne: dim exceeds the number of features");
  if (!(lambda >= 0.0)) throw error("dne: lambda must be non-negative");
  dne_result r;
  if (n == 0 || p + 1 < n) {
    r.S = dne_scatter(X, g, ctx);
    arma::mat Sr = r.S;
    if (lambda > 0.0) Sr.diag() += lambda;
    const arma::mat Vd = detail::smallest_eigvecs(Sr, dim, "dne", 1.0, r.eigval,
                                                  r.n_negative, r.dim, ctx.interrupt);
    r.A = Vd.t();
    return r;
  }
  // In the span of the centred points.
  const row_span sp = principal ? principal_row_span(X, 1e-10)
                                : centred_row_span(X, ctx.kernels, 1e-10, "dne", ctx.interrupt);
  const arma::mat& B = sp.basis;
  const arma::mat& Z = sp.coords;
  r.retention = detail::retention(sp.U, sp.s, n);
  check_interrupt(ctx.interrupt);
  const arma::uword rk = B.n_cols;
  r.span_rank = rk;
  arma::vec ev_s;
  std::unique_ptr<sym_eigen> se;
  if (rk > 0) {
    arma::mat Ss = detail::scatter_of_columns(Z.t(), g, ctx);
    if (lambda > 0.0) Ss.diag() += lambda;
    se.reset(new sym_eigen(Ss, "dne", 0, ctx.interrupt));
    ev_s = se->values();
  }
  // All D eigenvalues: the r of the span merged (ascending) with D - r
  // copies of lambda from the complement; a span eigenvalue below lambda
  // comes first.
  const arma::uword ns = static_cast<arma::uword>(
      std::lower_bound(ev_s.begin(), ev_s.end(), lambda) - ev_s.begin());
  r.eigval.set_size(p);
  for (arma::uword i = 0; i < ns; ++i) r.eigval[i] = ev_s[i];
  for (arma::uword i = ns; i < ns + (p - rk); ++i) r.eigval[i] = lambda;
  for (arma::uword i = ns; i < rk; ++i) r.eigval[i + (p - rk)] = ev_s[i];
  r.n_negative = detail::count_negative(r.eigval);
  r.dim = dim > 0 ? dim : detail::automatic_dim(r.eigval, r.retention);
  // The rows of A: span eigenvectors up to ns, then complement vectors,
  // then the remaining span eigenvectors.
  const arma::uword from_span_low = std::min(r.dim, ns);
  const arma::uword from_comp = std::min(r.dim - from_span_low, p - rk);
  const arma::uword from_span_high = r.dim - from_span_low - from_comp;
  arma::mat Vd(p, r.dim);
  if (from_span_low > 0) Vd.cols(0, from_span_low - 1) = B * se->vectors(0, from_span_low);
  if (from_comp > 0)
    Vd.cols(from_span_low, from_span_low + from_comp - 1) =
        detail::complement_basis(B, from_comp);
  if (from_span_high > 0)
    Vd.cols(from_span_low + from_comp, r.dim - 1) =
        B * se->vectors(ns, from_span_high);
  detail::fix_signs(Vd);
  r.A = Vd.t();
  return r;
}

struct kdne_result {
  arma::mat U;        // d x n coefficients: z(x) = U k(x)
  arma::vec eigval;   // all n generalized eigenvalues, ascending
  arma::uword dim = 0;
  arma::uword n_negative = 0;
  double retention = 1.0;  // of the mapped points (detail::retention())
};

// KDNE on Gram matrix K (n x n) with graph g; dim = 0 as in dne_fit(), with
// the retention of the mapped points phi(x_i) computed from the centred Gram
// matrix (one more n x n eigen-decomposition).
// Throws a kmaha::error of kind singular when K + eps I has no reliable
// Cholesky factor.
inline kdne_result kdne_fit(const arma::mat& K, const dne_graph& g,
                            arma::uword dim, double eps, const context& ctx) {
  const arma::uword n = K.n_rows;
  if (K.n_cols != n) throw error("kdne: Gram matrix not square");
  if (g.n != n) throw error("kdne: Gram matrix and graph sizes differ");
  if (dim > n) throw error("kdne: dim exceeds the number of training points");
  if (!(eps >= 0.0)) throw error("kdne: eps must be non-negative");
  // K (D - W) K = K' (D - W) K, the scatter of the rows of K; K is
  // symmetric, so its columns are its rows and no transposed copy is needed.
  const arma::mat M = detail::scatter_of_columns(K, g, ctx);
  check_interrupt(ctx.interrupt);
  arma::mat B = 0.5 * (K + K.t());
  B.diag() += eps;
  arma::mat R;
  const double dmax = B.diag().max();
  // A factor whose smallest pivot is at rounding level relative to the
  // largest diagonal entry comes from a numerically singular matrix.
  const double piv_tol = 10.0 * n * std::numeric_limits<double>::epsilon() * dmax;
  if (!(dmax > 0.0) || !detail::chol_panels(R, B, ctx.interrupt) ||
      arma::min(arma::square(R.diag())) <= piv_tol) {
    throw error(error_kind::singular,
                "kdne: K + eps I is not positive definite: the Gram matrix is "
                "singular or nearly so");
  }
  check_interrupt(ctx.interrupt);
  // C = R^{-T} M R^{-1}, by two triangular solves, each in blocks of about
  // 2^28 multiply-adds with an interrupt poll after each block
  const arma::mat Rt = R.t();
  const arma::uword step = std::max<arma::uword>(
      1, static_cast<arma::uword>(268435456.0 / (static_cast<double>(n) * n)));
  // T \ B for a triangular T (trimatl or trimatu of a factor), in column
  // blocks of `step`
  auto solve_blocks = [&](const auto& T, const arma::mat& B) {
    arma::mat X(B.n_rows, B.n_cols);
    for (arma::uword c0 = 0; c0 < B.n_cols; c0 += step) {
      const arma::uword c1 = std::min(B.n_cols, c0 + step) - 1;
      X.cols(c0, c1) = arma::solve(T, B.cols(c0, c1));
      check_interrupt(ctx.interrupt);
    }
    return X;
  };
  auto solve_rt = [&](const arma::mat& B) { return solve_blocks(arma::trimatl(Rt), B); };
  const arma::mat T = solve_rt(M);
  arma::mat C = solve_rt(arma::mat(T.t()));
  C = 0.5 * (C + C.t());
  check_interrupt(ctx.interrupt);
  kdne_result r;
  {
    arma::mat Kc = 0.5 * (K + K.t());
    Kc.each_col() -= arma::mean(Kc, 1);
    Kc.each_row() -= arma::mean(Kc, 0);
    arma::mat Ug;
    arma::vec sg;
    // (the relative tolerance of kpca(), so that the kernel trick and the
    // KPCA trick see the same rank)
    detail::centred_gram_eigen(Kc, Ug, sg, "kdne", 1e-8, ctx.interrupt);
    r.retention = detail::retention(Ug, sg, n);
  }
  check_interrupt(ctx.interrupt);
  const arma::mat Vd = detail::smallest_eigvecs(C, dim, "kdne", r.retention,
                                                r.eigval, r.n_negative, r.dim, ctx.interrupt);
  check_interrupt(ctx.interrupt);
  r.U = solve_blocks(arma::trimatu(R), Vd).t();
  return r;
}

}  // namespace kmaha

#endif  // KMAHA_DNE_HPP
