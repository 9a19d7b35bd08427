// kmaha core: the context of a call.
//
// Every entry point of the core takes a `const context&` as its last
// argument, and every loop, product and interrupt poll below it reads its
// settings from there: no function of the core has a default thread count,
// instruction set or interrupt callback, so a setting cannot be dropped on
// the way down.  The R glue (src/glue.h) makes one context per call of an
// exported function, from the list R resolved once per user call
// (kmaha_context() in R/core.R).
#ifndef KMAHA_CONTEXT_HPP
#define KMAHA_CONTEXT_HPP

#include <algorithm>
#include <utility>
#include "common.hpp"
#include "isa.hpp"

namespace kmaha {

struct context {
  // Threads of the core's parallel loops (parallel.hpp) and of the OpenMP
  // code of Eigen and Armadillo under them; at least 1.
  int threads;
  // Instruction set of the product kernels and of NCA's softmax; isa::avx2
  // only where avx2_compiled() and cpu_has_avx2_fma() (the glue checks).
  isa kernels;
  // Asked between chunks of work whether the user wants to stop (the
  // interrupt policy of common.hpp).
  interrupt_fn interrupt;

  context(int threads_, isa kernels_, interrupt_fn interrupt_)
      : threads(std::max(1, threads_)), kernels(kernels_),
        interrupt(std::move(interrupt_)) {}

  // The same context with another thread count (e.g. 1 for a loop whose
  // work must run in order).
  context with_threads(int n) const { return context(n, kernels, interrupt); }
};

}  // namespace kmaha

#endif  // KMAHA_CONTEXT_HPP
