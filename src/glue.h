// Shared helpers for the Rcpp glue: the context of a call, conversions
// between R objects and the core's types, the interrupt callback and the
// exception guard.  Only src/ includes R headers.
#ifndef KMAHA_GLUE_H
#define KMAHA_GLUE_H

#include <RcppArmadillo.h>
#include <atomic>
#include <cmath>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
#include <kmaha/common.hpp>
#include <kmaha/context.hpp>
#include <kmaha/gemm.hpp>
#include <kmaha/parallel.hpp>
#include <kmaha/kernels.hpp>
#include <kmaha/neighbors.hpp>

namespace kmaha_glue {

// R's jump out of an interrupt poll, held until the core has unwound: one
// per call of an exported function.
struct pending_jump {
  SEXP token = nullptr;  // R's continuation (preserved), once R has jumped
};

// The core's interrupt callback (see the interrupt policy in
// kmaha/common.hpp): true when R wants to leave the computation.  It runs
// R_CheckUserInterrupt() under R_UnwindProtect (Rcpp::unwindProtect), so
// whatever R does there happens as in R code: a user interrupt (SIGINT) is
// signalled as an interrupt, a limit of setTimeLimit() raises R's own error
// ("reached elapsed time limit"), and the handlers of the caller (tryCatch,
// withCallingHandlers) see them.  The jump R then makes towards a handler or
// the top level is caught before it crosses a C++ frame and kept in `jump`;
// the callback answers true, the core unwinds by kmaha::interrupted, and
// guarded() resumes R's jump at the boundary (R_ContinueUnwind, through
// Rcpp's wrapper of the export).  Once R has jumped, every later poll
// answers true.
inline kmaha::interrupt_fn user_interrupt(std::shared_ptr<pending_jump> jump) {
  return [jump]() -> bool {
    if (jump->token != nullptr) return true;
    try {
      Rcpp::unwindProtect([]() -> SEXP {
        R_CheckUserInterrupt();
        return R_NilValue;
      });
    } catch (const Rcpp::LongjumpException& e) {
      jump->token = e.token;  // preserved by Rcpp::unwindProtect
      return true;
    }
    return false;
  };
}

// Signals the R error condition of class c("kmaha_<kind>_error",
// "kmaha_error", "error", "condition") with `message` and no call (so that
// nothing of the glue's call shows), through R's stop().  The longjmp stop()
// makes towards the handler is caught by Rcpp::unwindProtect and resumed by
// Rcpp's wrapper of the export once the C++ frames have unwound (a
// Rcpp::LongjumpException), so it never crosses C++ code.
[[noreturn]] inline void stop_kind(const std::string& kind,
                                   const std::string& message) {
  Rcpp::List cond = Rcpp::List::create(Rcpp::Named("message") = message,
                                       Rcpp::Named("call") = R_NilValue);
  cond.attr("class") = Rcpp::CharacterVector::create(
      "kmaha_" + kind + "_error", "kmaha_error", "error", "condition");
  Rcpp::unwindProtect([&]() -> SEXP {
    Rcpp::Shield<SEXP> call(Rf_lang2(Rf_install("stop"), cond));
    return Rf_eval(call, R_BaseEnv);
  });
  // stop() does not return.
  throw std::logic_error("stop() returned");
}

// The R condition kind of an exception of the core (see guarded()), and its
// message; "" for kmaha::interrupted.
inline std::string classify(std::exception_ptr ep, std::string& message) {
  try {
    std::rethrow_exception(ep);
  } catch (const kmaha::interrupted&) {
    return "";
  } catch (const kmaha::error& e) {
    message = e.what();
    return kmaha::error_kind_name(e.kind());
  } catch (const std::bad_alloc&) {
    message = "not enough memory: a matrix of this computation could not be allocated";
    return "memory";
  } catch (const std::runtime_error& e) {
    message = e.what();
    return "numerical";
  } catch (const std::exception& e) {
    message = e.what();
    return "invalid";
  } catch (...) {
    message = "unknown C++ exception";
    return "invalid";
  }
}

// Runs the body of an exported function and maps what it throws to R:
//  * when an interrupt poll caught a jump of R (pending_jump), that jump is
//    resumed, whatever the body threw (kmaha::interrupted, normally);
//  * kmaha::interrupted without such a jump becomes an R interrupt;
//  * kmaha::error becomes an R error of class kmaha_<kind>_error (kinds in
//    kmaha/common.hpp), std::bad_alloc one of class kmaha_memory_error, any
//    other std::runtime_error (e.g. a failed decomposition of Armadillo)
//    kmaha_numerical_error, and every other exception (a failed conversion
//    of an R object, a logic error) kmaha_invalid_error; each with the
//    exception's message and no call;
//  * R's own jumps (Rcpp::LongjumpException, e.g. an R error raised in a
//    callback into R) pass through to Rcpp's wrapper, which resumes them.
template <class F>
inline auto guarded(const pending_jump& jump, F&& body) -> decltype(body()) {
  std::string kind, message;
  try {
    auto result = body();
    if (jump.token != nullptr) throw Rcpp::LongjumpException(jump.token);
    return result;
  } catch (const Rcpp::LongjumpException&) {
    throw;
  } catch (const Rcpp::internal::InterruptedException&) {
    throw;
  } catch (...) {
    if (jump.token != nullptr) throw Rcpp::LongjumpException(jump.token);
    kind = classify(std::current_exception(), message);
  }
  if (kind.empty()) throw Rcpp::internal::InterruptedException();
  stop_kind(kind, message);
}

// The core's context from the list made by kmaha_context() in R/core.R:
// list(threads = <whole number >= 1>, isa = "auto" | "default" | "avx2").
// R resolved and validated both (the option or environment variable that set
// the instruction set, and whether this build and CPU have AVX2+FMA, see
// cpp_isa_support()), so a bad list here is an internal error.  "auto" is
// the fastest instruction set usable here, "default" the baseline.
inline kmaha::context context_from_r(SEXP ctx, kmaha::interrupt_fn interrupt) {
  if (TYPEOF(ctx) != VECSXP) throw kmaha::error("the context must be a list");
  const Rcpp::List l(ctx);
  if (!l.containsElementNamed("threads") || !l.containsElementNamed("isa"))
    throw kmaha::error("the context must have elements `threads` and `isa`");
  SEXP th = l["threads"];
  if ((TYPEOF(th) != INTSXP && TYPEOF(th) != REALSXP) || Rf_length(th) != 1)
    throw kmaha::error("the context's `threads` must be one whole number");
  const double t = Rf_asReal(th);
  if (!(t >= 1.0) || t != std::floor(t) || t > 1e6)
    throw kmaha::error("the context's `threads` must be a whole number >= 1");
  SEXP is = l["isa"];
  if (TYPEOF(is) != STRSXP || Rf_length(is) != 1 || STRING_ELT(is, 0) == NA_STRING)
    throw kmaha::error("the context's `isa` must be one string");
  const std::string v = CHAR(STRING_ELT(is, 0));
  kmaha::isa kernels = kmaha::isa::baseline;
  if (v == "auto") {
    kernels = kmaha::best_isa();
  } else if (v == "avx2") {
    if (!kmaha::avx2_compiled() || !kmaha::cpu_has_avx2_fma())
      throw kmaha::error("the context asks for AVX2+FMA kernels, which this build or CPU lacks");
    kernels = kmaha::isa::avx2;
  } else if (v != "default") {
    throw kmaha::error("the context's `isa` must be \"auto\", \"default\" or \"avx2\"");
  }
  return kmaha::context(static_cast<int>(t), kernels, std::move(interrupt));
}

// The largest thread count of any context a call of the compiled code has
// run in (since the last reset): a diagnostic for the tests, which check
// that a user's num_threads = 1 reaches every call below it.
inline std::atomic<int>& threads_seen() {
  static std::atomic<int> seen{0};
  return seen;
}

// Runs the body of an exported function, body(const kmaha::context&), in the
// context made from R's list `ctx` (its interrupt callback: user_interrupt()),
// with the calling thread's OpenMP thread count (which Eigen's and
// Armadillo's own parallel code follow) set to the context's for the
// duration of the call; exceptions and R's jumps as in guarded().
template <class F>
inline auto run(SEXP ctx, F&& body)
    -> decltype(body(std::declval<const kmaha::context&>())) {
  const std::shared_ptr<pending_jump> jump = std::make_shared<pending_jump>();
  return guarded(*jump, [&] {
    const kmaha::context c = context_from_r(ctx, user_interrupt(jump));
    int prev = threads_seen().load();
    while (c.threads > prev && !threads_seen().compare_exchange_weak(prev, c.threads)) {
    }
    const kmaha::thread_scope scope(c.threads);
    return body(c);
  });
}

// Class labels: R's 1-based integer codes (as.integer(factor)) to the core's
// 0-based labels.
inline arma::uvec labels_from_r(const arma::ivec& y) {
  if (y.n_elem && y.min() < 1) throw kmaha::error("labels must be positive integer codes");
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

// The neighbour searches behind the learners' targets (kmaha/neighbors.hpp),
// with their block sizes, for every glue that runs them: the k nearest
// same-class (same = true) or other-class rows of x (LMNN's targets), and
// DNE's same- and other-class lists.
inline arma::umat class_targets(const arma::mat& x, const arma::uvec& y, arma::uword k,
                                bool same, const kmaha::context& c) {
  return kmaha::class_neighbors(x, y, k, same, 512, c);
}

inline void dne_lists(const arma::mat& x, const arma::uvec& y, arma::uword k,
                      arma::umat& same, arma::umat& other, const kmaha::context& c) {
  kmaha::same_other_neighbors(x, y, k, same, other, 256, c);
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
