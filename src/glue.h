// Shared helpers for the Rcpp glue: conversions between R objects and the
// core's types, the interrupt callback and the exception guard.  Only src/ includes R headers.
#ifndef KMAHA_GLUE_H
#define KMAHA_GLUE_H

#include <RcppArmadillo.h>
#include <string>
#include <vector>
#include <kmaha/common.hpp>
#include <kmaha/gemm.hpp>
#include <kmaha/kernels.hpp>

namespace kmaha_glue {

namespace detail {
inline void check_user_interrupt(void*) { R_CheckUserInterrupt(); }
}  // namespace detail

// The core's interrupt callback (see the interrupt policy in
// kmaha/common.hpp): true when the user has asked to stop.  R's check runs
// under R_ToplevelExec, so the longjmp it makes on a pending interrupt ends
// there and never crosses C++ frames; the interrupt it consumed is raised
// again by guarded() once the core has unwound.
inline kmaha::interrupt_fn user_interrupt() {
  return []() -> bool {
    return R_ToplevelExec(detail::check_user_interrupt, nullptr) == FALSE;
  };
}

// Runs the body of an exported function: kmaha::interrupted becomes an R
// interrupt; kmaha::error (a std::runtime_error) and every other exception
// reach Rcpp's wrapper, which turns them into R errors.
template <class F>
inline auto guarded(F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const kmaha::interrupted&) {
    throw Rcpp::internal::InterruptedException();
  }
}

// The instruction set of the core's product kernels (kmaha/gemm.hpp), from
// the R option kmaha.isa ("auto", the default: AVX2+FMA when this build and
// the CPU have it; "default": the baseline; "avx2": insist on AVX2+FMA).
// The option kmaha.nca_isa of version 0.2.0 is read when kmaha.isa is unset.
// Documented in ?kmaha-package, section "Instruction sets".
inline kmaha::isa isa_setting() {
  SEXP opt = Rf_GetOption1(Rf_install("kmaha.isa"));
  const char* name = "kmaha.isa";
  if (Rf_isNull(opt)) {
    opt = Rf_GetOption1(Rf_install("kmaha.nca_isa"));
    if (!Rf_isNull(opt)) name = "kmaha.nca_isa";
  }
  std::string v = "auto";
  if (!Rf_isNull(opt)) {
    if (TYPEOF(opt) != STRSXP || Rf_length(opt) != 1 || STRING_ELT(opt, 0) == NA_STRING)
      v = "?";
    else
      v = CHAR(STRING_ELT(opt, 0));
  }
  if (v == "auto") return kmaha::best_isa();
  if (v == "default") return kmaha::isa::baseline;
  if (v == "avx2") {
    if (!kmaha::avx2_compiled())
      Rcpp::stop("Option `%s` is \"avx2\", but this build of kmaha has no AVX2 kernels.", name);
    if (!kmaha::cpu_has_avx2_fma())
      Rcpp::stop("Option `%s` is \"avx2\", but this CPU lacks AVX2 or FMA.", name);
    return kmaha::isa::avx2;
  }
  Rcpp::stop("Option `%s` must be \"auto\", \"avx2\" or \"default\".", name);
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
