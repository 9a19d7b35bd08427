// Choice of the compiled copy of the NCA objective (kmaha/nca.hpp) that suits
// the running CPU: the baseline build, or the AVX2+FMA build of nca_avx2.cpp.
#ifndef KMAHA_NCA_ISA_H
#define KMAHA_NCA_ISA_H

#include <memory>
#include <kmaha/nca_function.hpp>

namespace kmaha_glue {

// The AVX2+FMA copy; nullptr when this build has none (non-GCC compilers,
// other architectures).  Call it only when nca_avx2_usable() is true.
std::unique_ptr<kmaha::nca_function> make_nca_avx2(
    const arma::mat& X, const arma::uvec& y, double lambda,
    const arma::mat* reg, int num_threads, arma::uword block,
    kmaha::interrupt_fn interrupt);

// Whether make_nca_avx2() has a copy to offer.
bool nca_avx2_compiled();

}  // namespace kmaha_glue

#endif  // KMAHA_NCA_ISA_H
