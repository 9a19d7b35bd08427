// kmaha core: the instruction sets of the product kernels (gemm.hpp) and of
// NCA's softmax (nca.hpp), and what this build and this CPU can run.
//
// The kernels are written once and compiled for the x86-64 baseline and,
// through a function-level target attribute, for AVX2+FMA.  Which one runs is
// decided once per call, by the caller's context (context.hpp): no function
// of the core picks an instruction set by itself.  Defining KMAHA_NO_AVX2 at
// compile time leaves the AVX2 kernels out.  They are also left out on
// Windows (GCC there does not align the stack for spilled AVX registers) and
// on compilers without vector extensions.
#ifndef KMAHA_ISA_HPP
#define KMAHA_ISA_HPP

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && \
    !defined(_WIN32) && !defined(KMAHA_NO_AVX2)
#define KMAHA_GEMM_AVX2 1
#define KMAHA_TARGET_AVX2 __attribute__((target("avx2,fma")))
#endif

namespace kmaha {

// Instruction sets the core's kernels are compiled for.
enum class isa { baseline, avx2 };

inline const char* isa_name(isa s) { return s == isa::avx2 ? "avx2" : "default"; }

// Whether this build has AVX2+FMA kernels.
inline bool avx2_compiled() {
#ifdef KMAHA_GEMM_AVX2
  return true;
#else
  return false;
#endif
}

// Whether the running CPU (and OS) supports AVX2 and FMA.
inline bool cpu_has_avx2_fma() {
#ifdef KMAHA_GEMM_AVX2
  static const bool ok = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return ok;
#else
  return false;
#endif
}

// The fastest instruction set usable here.
inline isa best_isa() {
  return avx2_compiled() && cpu_has_avx2_fma() ? isa::avx2 : isa::baseline;
}

}  // namespace kmaha

#endif  // KMAHA_ISA_HPP
