// Shared helpers for the Rcpp glue: conversions between R objects and the
// core's types, and the interrupt callback.  Only src/ includes R headers.
#ifndef KMAHA_GLUE_H
#define KMAHA_GLUE_H

#include <RcppArmadillo.h>
#include <string>
#include <vector>
#include <kmaha/common.hpp>
#include <kmaha/kernels.hpp>

namespace kmaha_glue {

// Polled by core loops on the main thread: throws Rcpp's interrupt exception,
// which the generated wrappers turn into an R interrupt.
inline kmaha::interrupt_fn r_interrupt() {
  return []() { Rcpp::checkUserInterrupt(); };
}

// The thread count for a core call: `requested` when positive, else the
// package setting resolved in R by kmaha_threads() (option
// kmaha.num_threads, environment variable KMAHA_NUM_THREADS, default 2).
inline int resolve_threads(int requested) {
  if (requested > 0) return requested;
  const Rcpp::Environment ns = Rcpp::Environment::namespace_env("kmaha");
  const Rcpp::Function current = ns["kmaha_threads"];
  return Rcpp::as<int>(current());
}

// A kernel object made by rbf_kernel() & co. (already validated in R).
inline kmaha::kernel_spec kernel_from_list(const Rcpp::List& k) {
  kmaha::kernel_spec s;
  const std::string type = Rcpp::as<std::string>(k["type"]);
  if (type == "linear") {
    s.type = kmaha::kernel_type::linear;
  } else if (type == "rbf") {
    s.type = kmaha::kernel_type::rbf;
    s.sigma = Rcpp::as<double>(k["sigma"]);
  } else if (type == "gaussian") {
    s.type = kmaha::kernel_type::gaussian;
    s.sigma = Rcpp::as<double>(k["sigma"]);
  } else if (type == "laplace") {
    s.type = kmaha::kernel_type::laplace;
    s.sigma = Rcpp::as<double>(k["sigma"]);
  } else if (type == "poly") {
    s.type = kmaha::kernel_type::poly;
    s.degree = Rcpp::as<double>(k["degree"]);
    s.scale = Rcpp::as<double>(k["scale"]);
    s.offset = Rcpp::as<double>(k["offset"]);
  } else {
    throw kmaha::error("unknown kernel type '" + type + "'");
  }
  return s;
}

// Flatten a kernel object (a base kernel or a weighted sum) into base specs
// and weights.
inline void flatten_kernel(const Rcpp::List& k, double w,
                           std::vector<kmaha::kernel_spec>& specs,
                           std::vector<double>& weights);

// A kernel object as the base specs and weights of its sum.
struct flat_kernel {
  std::vector<kmaha::kernel_spec> specs;
  arma::vec weights;
  explicit flat_kernel(const Rcpp::List& k) {
    std::vector<double> w;
    flatten_kernel(k, 1.0, specs, w);
    weights = arma::vec(w);
  }
};

inline void flatten_kernel(const Rcpp::List& k, double w,
                           std::vector<kmaha::kernel_spec>& specs,
                           std::vector<double>& weights) {
  const std::string type = Rcpp::as<std::string>(k["type"]);
  if (type == "sum") {
    const Rcpp::List parts = k["kernels"];
    const Rcpp::NumericVector pw = k["weights"];
    for (R_xlen_t i = 0; i < parts.size(); ++i)
      flatten_kernel(Rcpp::as<Rcpp::List>(parts[i]), w * pw[i], specs, weights);
  } else {
    specs.push_back(kernel_from_list(k));
    weights.push_back(w);
  }
}

}  // namespace kmaha_glue

#endif  // KMAHA_GLUE_H
