// kmaha core: shared types, errors and helpers.
//
// Conventions used everywhere in the core:
//  * one observation per ROW (n x D), exactly as R stores a data matrix, so the
//    glue can hand R memory to the core without transposing;
//  * class labels are 0-based unsigned integers (arma::uvec);
//  * errors are reported by throwing kmaha::error (the glue turns them into R
//    errors);
//  * interrupts follow the policy described at interrupt_fn below.
// No R header is included by any file of the core.
#ifndef KMAHA_COMMON_HPP
#define KMAHA_COMMON_HPP

#include <armadillo>
#include <atomic>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace kmaha {

struct error : public std::runtime_error {
  explicit error(const std::string& what) : std::runtime_error(what) {}
};

// Interrupt policy, one for the whole core.
//  * Long loops poll an interrupt_fn between chunks of work, on the calling
//    (main) thread only and never inside an OpenMP region: they call
//    check_interrupt(interrupt), which enforces both rules.
//  * The callback answers "has the user asked to stop?".  It never throws and
//    never longjmps (the R glue looks at R's interrupt flag under
//    R_ToplevelExec, src/glue.h).
//  * When it answers yes, check_interrupt() throws kmaha::interrupted, which
//    unwinds C++ frames only.  The glue's wrappers turn it into an R
//    interrupt; where the core runs inside C code (R's lbfgsb(), src/optim.h)
//    the glue catches it inside the C callback, makes the C code return, and
//    rethrows it afterwards.
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

// Squared Euclidean distances between the rows of X (n x D) and of Y (m x D),
// computed through one matrix product: ||x||^2 + ||y||^2 - 2 x'y.  Rounding can
// make tiny distances negative; they are clamped at zero.
inline arma::mat sq_dist(const arma::mat& X, const arma::mat& Y) {
  if (X.n_cols != Y.n_cols) throw error("sq_dist: X and Y differ in columns");
  arma::mat G = X * Y.t();
  const arma::vec xx = arma::sum(arma::square(X), 1);
  const arma::rowvec yy = arma::sum(arma::square(Y), 1).t();
  G *= -2.0;
  G.each_col() += xx;
  G.each_row() += yy;
  G.transform([](double v) { return v < 0.0 ? 0.0 : v; });
  return G;
}

// Symmetric version for distances within one set: exact zero diagonal and
// exactly symmetric output (the product X X' is evaluated as a rank-k update).
inline arma::mat sq_dist(const arma::mat& X) {
  arma::mat G = X * X.t();
  const arma::vec d = G.diag();
  const arma::uword n = X.n_rows;
  for (arma::uword j = 0; j < n; ++j) {
    for (arma::uword i = j + 1; i < n; ++i) {
      double v = d[i] + d[j] - 2.0 * G(i, j);
      if (v < 0.0) v = 0.0;
      G(i, j) = v;
    }
  }
  for (arma::uword j = 0; j < n; ++j) {
    G(j, j) = 0.0;
    for (arma::uword i = 0; i < j; ++i) G(i, j) = G(j, i);
  }
  return G;
}

}  // namespace kmaha

#endif  // KMAHA_COMMON_HPP
