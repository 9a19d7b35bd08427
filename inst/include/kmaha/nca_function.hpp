// kmaha core: the interface of the NCA objective (kmaha/nca.hpp).
//
// nca.hpp can be compiled more than once, for different instruction sets, in
// separate inline namespaces; optimisers and glue see every copy through this
// abstract class, which depends on Armadillo only.
#ifndef KMAHA_NCA_FUNCTION_HPP
#define KMAHA_NCA_FUNCTION_HPP

#include "common.hpp"

namespace kmaha {

// The NCA objective as seen by optimisers and glue, whatever the instruction
// set it was compiled for.
class nca_function {
 public:
  virtual ~nca_function() {}
  // Objective at A (d x D); the gradient is written to *grad when non-null.
  virtual double evaluate(const arma::mat& A, arma::mat* grad = nullptr) const = 0;
  virtual arma::uword n_obs() const = 0;
  virtual arma::uword n_features() const = 0;
  virtual int threads() const = 0;
  // Below this many flops per evaluation one thread is used (tests lower it
  // to exercise the threaded path on small problems).
  virtual void set_min_parallel_flops(double flops) = 0;
  // Name of the instruction set this copy was compiled for.
  virtual const char* isa() const = 0;
};

}  // namespace kmaha

#endif  // KMAHA_NCA_FUNCTION_HPP
