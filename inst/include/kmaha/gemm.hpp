// kmaha core: one dense matrix product for the whole core,
//
//   C = A B   or   C += A B,
//
// on strided views, so that transposes and row blocks cost nothing.
//
// The hot loops of NCA (and the products of the neighbour searches and
// learned maps) are matrix products of shapes that R's reference BLAS runs
// slowly.  This is a small packed GEMM in the usual layered form: blocks of
// B (KC x NC) and of A (MC x KC) are copied into contiguous panels, and a
// register-blocked micro-kernel computes one MR x NR tile of C from a pair of
// panels.
//
// Instruction sets (isa.hpp): the micro-kernel is written once, with
// GCC/clang vector extensions, and compiled for the x86-64 baseline and,
// through a function-level target attribute, for AVX2+FMA.  gemm() runs the
// kernel of the instruction set its caller passes, which comes from the
// call's context (context.hpp).  Nothing else in the package is compiled for
// AVX2, no compiler flag or macro of the compiler is set by hand, and the
// AVX2 code has names of its own, so neither link order nor link-time
// optimisation can mix the two.  Every call is counted per instruction set
// (gemm_calls()), so that tests can see which kernels a computation ran.
// At the end, apply_map() and product() run gemm() on Armadillo matrices
// (product() with interrupt polls between blocks of columns).
#ifndef KMAHA_GEMM_HPP
#define KMAHA_GEMM_HPP

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <vector>
#include "common.hpp"
#include "isa.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define KMAHA_GEMM_VECTOR 1
#define KMAHA_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define KMAHA_ALWAYS_INLINE inline
#endif

namespace kmaha {

// Read-only strided view: element (i, j) at p[i * rs + j * cs].
struct cview {
  const double* p;
  std::ptrdiff_t rs, cs;
  double operator()(std::ptrdiff_t i, std::ptrdiff_t j) const { return p[i * rs + j * cs]; }
  // Column-major matrix with leading dimension ld, and its transpose.
  static cview col_major(const double* p, std::ptrdiff_t ld) { return cview{p, 1, ld}; }
  static cview transposed(const double* p, std::ptrdiff_t ld) { return cview{p, ld, 1}; }
};

// Scratch memory of gemm() (panels of A and B); reuse it between calls.
struct gemm_buffers {
  std::vector<double> a, b;
};

namespace gemm_detail {

constexpr std::ptrdiff_t KC = 256;  // depth of a panel
constexpr std::ptrdiff_t NC = 2048; // columns of B packed at a time

// Copy rows [i0, i0 + mc) x columns [p0, p0 + kc) of A into panels of MR
// rows: panel q holds kc groups of MR values (column by column), rows past m
// are zero.
template <int MR>
inline void pack_a(const cview& A, std::ptrdiff_t i0, std::ptrdiff_t mc,
                   std::ptrdiff_t p0, std::ptrdiff_t kc, double* out) {
  for (std::ptrdiff_t q = 0; q < mc; q += MR) {
    const std::ptrdiff_t rows = std::min<std::ptrdiff_t>(MR, mc - q);
    for (std::ptrdiff_t k = 0; k < kc; ++k) {
      const double* src = A.p + (i0 + q) * A.rs + (p0 + k) * A.cs;
      std::ptrdiff_t r = 0;
      for (; r < rows; ++r) out[r] = src[r * A.rs];
      for (; r < MR; ++r) out[r] = 0.0;
      out += MR;
    }
  }
}

// Copy rows [p0, p0 + kc) x columns [j0, j0 + nc) of B into panels of NR
// columns (kc groups of NR values, row by row), zero past n.
template <int NR>
inline void pack_b(const cview& B, std::ptrdiff_t p0, std::ptrdiff_t kc,
                   std::ptrdiff_t j0, std::ptrdiff_t nc, double* out) {
  for (std::ptrdiff_t q = 0; q < nc; q += NR) {
    const std::ptrdiff_t cols = std::min<std::ptrdiff_t>(NR, nc - q);
    for (std::ptrdiff_t k = 0; k < kc; ++k) {
      const double* src = B.p + (p0 + k) * B.rs + (j0 + q) * B.cs;
      std::ptrdiff_t c = 0;
      if (B.cs == 1 && cols == NR) {
        std::memcpy(out, src, NR * sizeof(double));
      } else {
        for (; c < cols; ++c) out[c] = src[c * B.cs];
        for (; c < NR; ++c) out[c] = 0.0;
      }
      out += NR;
    }
  }
}

#ifdef KMAHA_GEMM_VECTOR
typedef double v2d __attribute__((vector_size(16)));
typedef double v4d __attribute__((vector_size(32)));

KMAHA_ALWAYS_INLINE void splat(v2d& v, double x) { v = v2d{x, x}; }
KMAHA_ALWAYS_INLINE void splat(v4d& v, double x) { v = v4d{x, x, x, x}; }

// tile (MR x NV W, row-major) = sum over kc of a-panel column x b-panel row,
// with vectors V of W doubles.  The loops over the tile have constant bounds
// and are unrolled, so the accumulators stay in registers.
template <class V, int W, int MR, int NV>
KMAHA_ALWAYS_INLINE void micro_kernel(std::ptrdiff_t kc, const double* a,
                                      const double* b, std::ptrdiff_t ldb,
                                      double* c_out, std::ptrdiff_t ldc,
                                      bool add) {
  V c[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) splat(c[r][v], 0.0);
  for (std::ptrdiff_t k = 0; k < kc; ++k) {
    V bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) std::memcpy(&bv[v], b + W * v, sizeof(V));
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      V ar;
      splat(ar, a[r]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) c[r][v] += ar * bv[v];
    }
    a += MR;
    b += ldb;
  }
  // c_out: MR rows of W * NV contiguous doubles, ldc apart.
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      double* p = c_out + r * ldc + W * v;
      if (add) {
        V old;
        std::memcpy(&old, p, sizeof(V));
        c[r][v] += old;
      }
      std::memcpy(p, &c[r][v], sizeof(V));
    }
  }
}
#else
template <class V, int W, int MR, int NV>
inline void micro_kernel(std::ptrdiff_t kc, const double* a, const double* b,
                         std::ptrdiff_t ldb, double* c_out, std::ptrdiff_t ldc,
                         bool add) {
  constexpr int NR = W * NV;
  double t[MR * NR] = {};
  for (std::ptrdiff_t k = 0; k < kc; ++k, a += MR, b += ldb)
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) t[r * NR + c] += a[r] * b[c];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NR; ++c)
      c_out[r * ldc + c] = (add ? c_out[r * ldc + c] : 0.0) + t[r * NR + c];
}
#endif

// The layered product for one tile shape; see the file comment.
template <class V, int W, int MR, int NV>
KMAHA_ALWAYS_INLINE void gemm_blocked(std::ptrdiff_t m, std::ptrdiff_t n,
                                      std::ptrdiff_t k, const cview& A,
                                      const cview& B, double* C,
                                      std::ptrdiff_t rsc, std::ptrdiff_t csc,
                                      bool accumulate, gemm_buffers& buf) {
  constexpr int NR = W * NV;
  constexpr std::ptrdiff_t MC = 24 * MR;
  const std::ptrdiff_t nc_max = std::min<std::ptrdiff_t>(NC, (n + NR - 1) / NR * NR);
  const std::ptrdiff_t kc_max = std::min<std::ptrdiff_t>(KC, k);
  const std::ptrdiff_t mc_max = std::min<std::ptrdiff_t>(MC, (m + MR - 1) / MR * MR);
  if (buf.b.size() < static_cast<std::size_t>(kc_max * nc_max)) buf.b.resize(kc_max * nc_max);
  if (buf.a.size() < static_cast<std::size_t>(kc_max * mc_max)) buf.a.resize(kc_max * mc_max);
  double tile[MR * NR];
  for (std::ptrdiff_t j0 = 0; j0 < n; j0 += NC) {
    const std::ptrdiff_t nc = std::min(NC, n - j0);
    for (std::ptrdiff_t p0 = 0; p0 < k; p0 += KC) {
      const std::ptrdiff_t kc = std::min(KC, k - p0);
      // Rows of B that are contiguous (unit column stride) are read in
      // place; otherwise, and for a last partial panel, B is packed.
      const bool direct = B.cs == 1;
      const std::ptrdiff_t n_direct = direct ? nc / NR * NR : 0;
      if (n_direct < nc)
        pack_b<NR>(B, p0, kc, j0 + n_direct, nc - n_direct, buf.b.data());
      const bool add = accumulate || p0 > 0;
      for (std::ptrdiff_t i0 = 0; i0 < m; i0 += MC) {
        const std::ptrdiff_t mc = std::min(MC, m - i0);
        pack_a<MR>(A, i0, mc, p0, kc, buf.a.data());
        for (std::ptrdiff_t jr = 0; jr < nc; jr += NR) {
          const std::ptrdiff_t cols = std::min<std::ptrdiff_t>(NR, nc - jr);
          const bool in_place = jr < n_direct;
          const double* bp = in_place ? B.p + p0 * B.rs + (j0 + jr)
                                      : buf.b.data() + (jr - n_direct) * kc;
          const std::ptrdiff_t ldb = in_place ? B.rs : NR;
          for (std::ptrdiff_t ir = 0; ir < mc; ir += MR) {
            const std::ptrdiff_t rows = std::min<std::ptrdiff_t>(MR, mc - ir);
            double* c0 = C + (i0 + ir) * rsc + (j0 + jr) * csc;
            if (csc == 1 && rows == MR && cols == NR) {
              micro_kernel<V, W, MR, NV>(kc, buf.a.data() + ir * kc, bp, ldb, c0, rsc, add);
              continue;
            }
            // Edge tile, or C with non-unit column stride: through a buffer.
            micro_kernel<V, W, MR, NV>(kc, buf.a.data() + ir * kc, bp, ldb, tile, NR, false);
            for (std::ptrdiff_t c = 0; c < cols; ++c) {
              double* cc = c0 + c * csc;
              for (std::ptrdiff_t r = 0; r < rows; ++r) {
                if (add) {
                  cc[r * rsc] += tile[r * NR + c];
                } else {
                  cc[r * rsc] = tile[r * NR + c];
                }
              }
            }
          }
        }
      }
    }
  }
}

// Baseline x86-64 has 16 128-bit registers: a 4 x 4 tile (8 registers of
// accumulators).  AVX2 has 16 256-bit registers: a 6 x 8 tile (12).
inline void gemm_baseline(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k,
                          const cview& A, const cview& B, double* C,
                          std::ptrdiff_t rsc, std::ptrdiff_t csc,
                          bool accumulate, gemm_buffers& buf) {
  gemm_blocked<v2d, 2, 4, 2>(m, n, k, A, B, C, rsc, csc, accumulate, buf);
}

#ifdef KMAHA_GEMM_AVX2
KMAHA_TARGET_AVX2
inline void gemm_avx2(std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k,
                      const cview& A, const cview& B, double* C,
                      std::ptrdiff_t rsc, std::ptrdiff_t csc, bool accumulate,
                      gemm_buffers& buf) {
  gemm_blocked<v4d, 4, 6, 2>(m, n, k, A, B, C, rsc, csc, accumulate, buf);
}
#endif

}  // namespace gemm_detail

// The number of products gemm() has run so far in this process with each
// instruction set (index 0: baseline, 1: AVX2+FMA); the counters may be
// reset by the caller.  A diagnostic: tests read them to check that a
// computation ran every product in the instruction set its context asked
// for.
inline std::atomic<unsigned long long>& gemm_calls(isa s) {
  static std::atomic<unsigned long long> counts[2];
  return counts[s == isa::avx2 ? 1 : 0];
}

// C (m x n; element (i, j) at C[i * rsc + j * csc]) = A B, or += A B when
// `accumulate`; A is m x k, B is k x n.  `s` = isa::avx2 needs
// cpu_has_avx2_fma() (the context's instruction set, checked when the
// context is made).
inline void gemm(isa s, std::ptrdiff_t m, std::ptrdiff_t n, std::ptrdiff_t k,
                 const cview& A, const cview& B, double* C, std::ptrdiff_t rsc,
                 std::ptrdiff_t csc, bool accumulate, gemm_buffers& buf) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (std::ptrdiff_t j = 0; j < n; ++j)
        for (std::ptrdiff_t i = 0; i < m; ++i) C[i * rsc + j * csc] = 0.0;
    return;
  }
  if (csc != 1 && rsc == 1 && (A.rs == 1 || B.cs != 1)) {
    // The kernel writes rows of C contiguously and reads rows of B in place
    // when they are contiguous: compute C' = B' A' instead when that gains
    // the first without losing the second.
    gemm(s, n, m, k, cview{B.p, B.cs, B.rs}, cview{A.p, A.cs, A.rs}, C, csc, 1,
         accumulate, buf);
    return;
  }
  gemm_calls(s).fetch_add(1, std::memory_order_relaxed);
#ifdef KMAHA_GEMM_AVX2
  if (s == isa::avx2) {
    gemm_detail::gemm_avx2(m, n, k, A, B, C, rsc, csc, accumulate, buf);
    return;
  }
#else
  (void)s;
#endif
  gemm_detail::gemm_baseline(m, n, k, A, B, C, rsc, csc, accumulate, buf);
}

// Armadillo conveniences (column-major, no copies).
// X L' for X (n x D) and L (d x D): the learned map applied to rows.
inline arma::mat apply_map(const arma::mat& X, const arma::mat& L, isa s) {
  if (X.n_cols != L.n_cols)
    throw error("apply_map: the map must have one column per column of X");
  arma::mat Z(X.n_rows, L.n_rows);
  gemm_buffers buf;
  gemm(s, X.n_rows, L.n_rows, X.n_cols, cview::col_major(X.memptr(), X.n_rows),
       cview::transposed(L.memptr(), L.n_rows), Z.memptr(), 1, Z.n_rows, false, buf);
  return Z;
}

// Multiply-adds between two interrupt polls in the products below (about
// 0.05-0.2 s of the core's product kernel).
constexpr double poll_flops = 2.5e8;

// C = op(A) op(B) for column-major matrices (op: transpose when the flag is
// set), through gemm() above.  With an
// interrupt callback, a product of more than poll_flops multiply-adds runs
// in blocks of columns of C with a poll after each block, so that no large
// product runs without one (the result does not depend on the blocking:
// each column of C is one product of its own).
inline void product(isa s, const arma::mat& A, bool ta, const arma::mat& B,
                    bool tb, arma::mat& C, gemm_buffers& buf,
                    const interrupt_fn* interrupt = nullptr) {
  const arma::uword m = ta ? A.n_cols : A.n_rows, k = ta ? A.n_rows : A.n_cols;
  const arma::uword n = tb ? B.n_rows : B.n_cols;
  C.set_size(m, n);
  const cview a = ta ? cview::transposed(A.memptr(), A.n_rows)
                     : cview::col_major(A.memptr(), A.n_rows);
  const double work = static_cast<double>(m) * static_cast<double>(k);
  arma::uword step = n;
  if (interrupt && work * static_cast<double>(n) > poll_flops)
    step = std::max<arma::uword>(
        1, static_cast<arma::uword>(poll_flops / std::max(work, 1.0)));
  for (arma::uword c0 = 0; c0 < n; c0 += step) {
    const arma::uword nb = std::min(step, n - c0);
    // columns c0.. of op(B): columns of B, or rows of B when transposed
    const cview b = tb ? cview::transposed(B.memptr() + c0, B.n_rows)
                       : cview::col_major(B.colptr(c0), B.n_rows);
    gemm(s, m, nb, k, a, b, C.colptr(c0), 1, m, false, buf);
    if (interrupt) check_interrupt(*interrupt);
  }
}

// The same with the product's own scratch memory.
inline arma::mat product(isa s, const arma::mat& A, bool ta,
                         const arma::mat& B, bool tb,
                         const interrupt_fn& interrupt) {
  arma::mat C;
  gemm_buffers buf;
  product(s, A, ta, B, tb, C, buf, &interrupt);
  return C;
}

}  // namespace kmaha

#endif  // KMAHA_GEMM_HPP
