// kmaha core: shared types, errors and helpers.
//
// Conventions used everywhere in the core:
//  * one observation per ROW (n x D), exactly as R stores a data matrix, so the
//    glue can hand R memory to the core without transposing;
//  * class labels are 0-based unsigned integers (arma::uvec);
//  * errors are reported by throwing kmaha::error, which carries a kind (the
//    glue turns each kind into an R condition class);
//  * interrupts follow the policy described at interrupt_fn below.
// No R header is included by any file of the core.
#ifndef KMAHA_COMMON_HPP
#define KMAHA_COMMON_HPP

#include <armadillo>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace kmaha {

// What went wrong, for the caller to act on (the R glue maps each kind to
// an R condition class, kmaha_<kind>_error):
//  * invalid:    an argument the caller should have checked (internal);
//  * singular:   a matrix that must be positive definite is not, e.g. the
//                Cholesky factor of K + eps I in KDNE;
//  * degenerate: the data leave nothing to compute, e.g. a zero (centred)
//                kernel matrix: every point coincides in feature space;
//  * numerical:  non-finite values, a failed eigendecomposition, divergence;
//  * memory:     an allocation failed (the glue maps std::bad_alloc here).
enum class error_kind { invalid, singular, degenerate, numerical, memory };

inline const char* error_kind_name(error_kind k) {
  switch (k) {
    case error_kind::singular: return "singular";
    case error_kind::degenerate: return "degenerate";
    case error_kind::numerical: return "numerical";
    case error_kind::memory: return "memory";
    case error_kind::invalid: break;
  }
  return "invalid";
}

// The core's exception.  Argument checks throw error(message), of kind
// invalid; every other failure names its kind.
struct error : public std::runtime_error {
  explicit error(const std::string& what)
      : std::runtime_error(what), kind_(error_kind::invalid) {}
  error(error_kind kind, const std::string& what)
      : std::runtime_error(what), kind_(kind) {}
  error_kind kind() const noexcept { return kind_; }

 private:
  error_kind kind_;
};

// Interrupt policy, one for the whole core.
//  * Long loops poll an interrupt_fn between chunks of work, on the calling
//    (main) thread only and never inside an OpenMP region: they call
//    check_interrupt(interrupt), which enforces both rules.  The callback
//    comes with the call's context (context.hpp).
//  * The callback answers "must the computation stop?".  It never throws and
//    never longjmps (the R glue runs R's own check under R_UnwindProtect and
//    holds whatever jump R makes there, a user interrupt or the error of a
//    time limit, until the core has unwound; src/glue.h).
//  * When it answers yes, check_interrupt() throws kmaha::interrupted, which
//    unwinds C++ frames only.  The glue's boundary then resumes R's jump;
//    where the core runs inside C code (R's lbfgsb(), src/optim.h) the glue
//    catches it inside the C callback, makes the C code return, and rethrows
//    it afterwards.
//  * An exception raised inside an OpenMP region must not leave it: wrap the
//    work of the region in parallel_errors::run() and call rethrow() on the
//    calling thread after the region.
using interrupt_fn = std::function<bool()>;

// Thrown by check_interrupt() when the user asked to stop.
struct interrupted : public std::exception {
  const char* what() const noexcept override { return "interrupted by the user"; }
};

inline bool no_interrupt() { return false; }

inline bool in_parallel_region() {
#ifdef _OPENMP
  return omp_in_parallel() != 0;
#else
  return false;
#endif
}

// Poll the callback (outside parallel regions only) and stop if asked.
inline void check_interrupt(const interrupt_fn& interrupt) {
  if (interrupt && !in_parallel_region() && interrupt()) throw interrupted();
}

// Carries the first exception raised by any thread of an OpenMP region to
// the thread that started it.  An exception may leave neither a parallel
// region nor a worksharing loop, so wrap each piece of work (e.g. the body of
// each iteration), and rethrow after the region, on the calling thread:
//   parallel_errors errs;
//   #pragma omp parallel for
//   for (...) errs.run([&] { ... });
//   errs.rethrow();
// Once a thread has failed, the remaining pieces are skipped.
class parallel_errors {
 public:
  template <class F>
  void run(F&& body) noexcept {
    if (failed_.load(std::memory_order_relaxed)) return;
    try {
      body();
    } catch (...) {
#ifdef _OPENMP
#pragma omp critical(kmaha_parallel_errors)
#endif
      {
        if (!first_) first_ = std::current_exception();
      }
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

namespace detail {
// Deterministic eigenvector signs: flip each column so that its entry of
// largest magnitude (the first such entry on ties) is positive.  Used by
// KPCA, DNE and KDNE.
inline void fix_signs(arma::mat& V) {
  for (arma::uword j = 0; j < V.n_cols; ++j) {
    const arma::uword i = arma::index_max(arma::abs(V.col(j)));
    if (V(i, j) < 0.0) V.col(j) *= -1.0;
  }
}
}  // namespace detail

namespace detail {
// Squared distances are formed from inner products, ||x||^2 + ||y||^2 -
// 2 x'y, which overflow (inf - inf = NaN) when entries exceed ~1e154 and lose
// everything to underflow below ~1e-154, although the distances themselves
// may be representable (or, when they overflow, are correctly infinite).  So
// points whose largest |entry| m is above 2^480 or below 2^-480 are first
// divided by c, the power of two just above m, and the distances multiplied
// back by c^2 afterwards (as (d c) c, which keeps 0 at 0 when c^2
// overflows).  Returns c: 1 when no scaling is needed (or m is not finite).
inline double distance_scale(double m) {
  if (!(m > 0.0) || !std::isfinite(m) ||
      (m <= std::ldexp(1.0, 480) && m >= std::ldexp(1.0, -480)))
    return 1.0;
  int e = 0;
  std::frexp(m, &e);
  return std::ldexp(1.0, std::min(e, 1023));
}

inline double max_abs_entry(const arma::mat& X) {
  return X.n_elem ? arma::abs(X).max() : 0.0;
}

// Multiply squared distances computed on points divided by c back by c^2.
inline void unscale_sq_dist(arma::mat& G, double c) {
  if (c != 1.0) G.transform([c](double v) { return (v * c) * c; });
}
}  // namespace detail

}  // namespace kmaha

#endif  // KMAHA_COMMON_HPP
