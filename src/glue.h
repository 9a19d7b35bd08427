// Shared helpers for the Rcpp glue: conversions between R objects and the
// core's types, the interrupt callback and the exception guard.  Only src/ includes R headers.
#ifndef KMAHA_GLUE_H
#define KMAHA_GLUE_H

#include <RcppArmadillo.h>
#include <cstdlib>
#include <string>
#include <vector>
#include <kmaha/common.hpp>
#include <kmaha/gemm.hpp>
#include <kmaha/kernels.hpp>
#include <kmaha/neighbors.hpp>

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

// The instruction set of the core's product kernels (kmaha/gemm.hpp): the R
// option kmaha.isa, else the environment variable KMAHA_ISA (which child
// processes inherit), else "auto".  "auto": AVX2+FMA when this build and the
// CPU have it; "default": the baseline; "avx2": insist on AVX2+FMA.  The
// option kmaha.nca_isa of version 0.2.0 is read when kmaha.isa is unset.
// Documented in ?kmaha-package, section "Instruction sets".
inline kmaha::isa isa_setting() {
  std::string name = "kmaha.isa", v = "auto";
  SEXP opt = Rf_GetOption1(Rf_install("kmaha.isa"));
  if (Rf_isNull(opt)) {
    opt = Rf_GetOption1(Rf_install("kmaha.nca_isa"));
    if (!Rf_isNull(opt)) name = "kmaha.nca_isa";
  }
  if (!Rf_isNull(opt)) {
    if (TYPEOF(opt) != STRSXP || Rf_length(opt) != 1 || STRING_ELT(opt, 0) == NA_STRING)
      v = "?";
    else
      v = CHAR(STRING_ELT(opt, 0));
  } else {
    const char* env = std::getenv("KMAHA_ISA");
    if (env != nullptr && *env != '\0') {
      name = "KMAHA_ISA";
      v = env;
    }
  }
  const char* what = name == "KMAHA_ISA" ? "Environment variable" : "Option";
  if (v == "auto") return kmaha::best_isa();
  if (v == "default") return kmaha::isa::baseline;
  if (v == "avx2") {
    if (!kmaha::avx2_compiled())
      Rcpp::stop("%s `%s` is \"avx2\", but this build of kmaha has no AVX2 kernels.",
                 what, name);
    if (!kmaha::cpu_has_avx2_fma())
      Rcpp::stop("%s `%s` is \"avx2\", but this CPU lacks AVX2 or FMA.", what, name);
    return kmaha::isa::avx2;
  }
  Rcpp::stop("%s `%s` must be \"auto\", \"avx2\" or \"default\".", what, name);
}

// Class labels: R's 1-based integer codes (as.integer(factor)) to the core's
// 0-based labels.
inline arma::uvec labels_from_r(const arma::ivec& y) {
  if (y.n_elem && y.min() < 1) Rcpp::stop("labels must be positive integer codes");
  return arma::conv_to<arma::uvec>::from(y - 1);
}

// Neighbour indices: R's 1-based integers with NA for "none" to the core's
// 0-based indices with kmaha::no_neighbor, and back.
inline arma::umat index_from_r(const Rcpp::IntegerMatrix& m) {
  arma::umat out(m.nrow(), m.ncol());
  for (R_xlen_t i = 0; i < m.size(); ++i)
    out[i] = m[i] == NA_INTEGER ? kmaha::no_neighbor
                                : static_cast<arma::uword>(m[i] - 1);
  return out;
}

inline Rcpp::IntegerMatrix index_to_r(const arma::umat& idx) {
  Rcpp::IntegerMatrix out(idx.n_rows, idx.n_cols);
  for (arma::uword i = 0; i < idx.n_elem; ++i)
    out[i] = idx[i] == kmaha::no_neighbor ? NA_INTEGER
                                          : static_cast<int>(idx[i]) + 1;
  return out;
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
