// A second copy of the NCA objective (kmaha/nca.hpp), compiled for AVX2+FMA.
//
// One NCA evaluation is a handful of matrix products; Eigen's GEMM kernels
// built for AVX2+FMA run them 2.5-3x faster than the x86-64 baseline that R
// packages are compiled for, and the system BLAS is not involved at all.  The
// glue (nca.cpp) uses this copy only when the CPU reports AVX2 and FMA.
//
// How the two copies stay apart:
//  * everything after the target pragma below is compiled for AVX2+FMA;
//  * the headers whose inline functions and static objects are shared with
//    the rest of the package (Rcpp, Armadillo, C++ library, kmaha/common.hpp) are
//    included *before* the pragma, so they are compiled for the baseline;
//  * Eigen is included under another namespace name (`Eigen` is a macro for
//    `kmaha_eigen_avx2` here) and the objective under kmaha::isa_avx2, so
//    none of their symbols collide with the baseline copies;
//  * this object file is linked last (OBJECTS in Makevars): for any inline
//    function that both copies still share, the linker keeps the first
//    definition, i.e. a baseline one.
// GCC's target pragma does not define the ISA macros that Eigen tests to pick
// its AVX packet code, so they are defined here by hand.
#include "glue.h"  // RcppArmadillo first, configured exactly as in the other files
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>
#include <kmaha/common.hpp>
#include <kmaha/nca_function.hpp>
#ifdef _OPENMP
#include <omp.h>
#endif
#include "nca_isa.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    (__GNUC__ >= 9) && !defined(KMAHA_NO_AVX2)
#define KMAHA_HAVE_AVX2_COPY 1
#endif

#ifdef KMAHA_HAVE_AVX2_COPY

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#ifndef __SSE3__
#define __SSE3__ 1
#endif
#ifndef __SSSE3__
#define __SSSE3__ 1
#endif
#ifndef __SSE4_1__
#define __SSE4_1__ 1
#endif
#ifndef __SSE4_2__
#define __SSE4_2__ 1
#endif
#ifndef __AVX__
#define __AVX__ 1
#endif
#ifndef __AVX2__
#define __AVX2__ 1
#endif
#ifndef __FMA__
#define __FMA__ 1
#endif
#define Eigen kmaha_eigen_avx2
#define KMAHA_NCA_ISA isa_avx2
#define KMAHA_NCA_ISA_NAME "avx2"
#define KMAHA_NCA_NO_CLONES 1
#include <kmaha/nca.hpp>

namespace kmaha_glue {

std::unique_ptr<kmaha::nca_function> make_nca_avx2(
    const arma::mat& X, const arma::uvec& y, double lambda,
    const arma::mat* reg, int num_threads, arma::uword block,
    kmaha::interrupt_fn interrupt) {
  return std::unique_ptr<kmaha::nca_function>(new kmaha::isa_avx2::nca_objective(
      X, y, lambda, reg, num_threads, block, std::move(interrupt)));
}

}  // namespace kmaha_glue

#pragma GCC pop_options

namespace kmaha_glue {
bool nca_avx2_compiled() { return true; }
}  // namespace kmaha_glue

#else

namespace kmaha_glue {

std::unique_ptr<kmaha::nca_function> make_nca_avx2(
    const arma::mat&, const arma::uvec&, double, const arma::mat*, int,
    arma::uword, kmaha::interrupt_fn) {
  return nullptr;
}

bool nca_avx2_compiled() { return false; }

}  // namespace kmaha_glue

#endif
