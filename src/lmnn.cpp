#include "glue.h"
#include "optim.h"
#include <cfloat>
#include <cstdlib>
#include <kmaha/lmnn.hpp>

namespace {

// 1-based integer targets (NA = none) to 0-based indices with the sentinel.
arma::umat targets_from_r(const Rcpp::IntegerMatrix& t) {
  arma::umat out(t.nrow(), t.ncol());
  for (R_xlen_t q = 0; q < t.size(); ++q) {
    const int v = t[q];
    out[q] = (v == NA_INTEGER) ? kmaha::no_neighbor
                               : static_cast<arma::uword>(v - 1);
  }
  return out;
}

kmaha::lmnn::problem problem_from_r(const arma::mat& x, const arma::ivec& y,
                                    const Rcpp::IntegerMatrix& targets,
                                    double mu, double lambda) {
  const arma::uvec yy = arma::conv_to<arma::uvec>::from(y - 1);
  return kmaha::lmnn::make_problem(x, yy, targets_from_r(targets), mu, lambda);
}

}  // namespace

// Fit LMNN.  x: n x D inputs, y: 1-based class codes, targets: n x k 1-based
// (NA = none), init: d x D starting map, solver: "M" or "L".
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_lmnn_fit(const arma::mat& x, const arma::ivec& y,
                        const Rcpp::IntegerMatrix& targets,
                        const arma::mat& init, double mu, double lambda,
                        int max_iter, double tol, std::string solver,
                        int refresh, double slack, bool verbose,
                        int threads) {
  if (solver != "M" && solver != "L") Rcpp::stop("unknown solver");
  const arma::uvec yy = arma::conv_to<arma::uvec>::from(y - 1);
  kmaha::lmnn::options o;
  o.mu = mu;
  o.lambda = lambda;
  o.max_iter = static_cast<unsigned>(max_iter);
  o.tol = tol;
  o.refresh = static_cast<unsigned>(std::max(1, refresh));
  o.slack = slack;
  o.threads = threads;
  kmaha::lmnn::progress_fn progress = kmaha::lmnn::no_progress;
  if (verbose) {
    progress = [&](unsigned it, double f, double step, std::size_t act) {
      if (solver == "M") {
        if (it % 10 != 0) return;
        Rcpp::Rcout << "iter " << it << "  objective " << f << "  step " << step
                    << "  impostor pairs " << act << "\n";
      } else {
        Rcpp::Rcout << "evaluations " << it << "  objective " << f
                    << "  impostor pairs " << act << "\n";
      }
    };
  }
  const double factr = tol / DBL_EPSILON;
  const char* em = std::getenv("XLMNN_M");
  const int mem = em ? std::atoi(em) : 10;
  if (const char* e = std::getenv("XLMNN_S0")) o.smooth0 = std::atof(e);
  if (const char* e = std::getenv("XLMNN_SF")) o.smooth_factor = std::atof(e);
  if (const char* e = std::getenv("XLMNN_SMIN")) o.smooth_min = std::atof(e);
  kmaha::lmnn::minimizer_fn lbfgs =
      [factr, mem](std::function<double(const arma::vec&, arma::vec&)> f,
              const arma::vec& x0, unsigned maxit) {
        kmaha_glue::lbfgs_result lr = kmaha_glue::minimize_lbfgs(
            f, x0, static_cast<int>(maxit), factr, 0.0, mem);
        kmaha::lmnn::inner_result ir;
        ir.par = lr.par;
        ir.evaluations = static_cast<unsigned>(lr.fncount);
        ir.stopped = lr.fail != 1;
        ir.message = lr.message;
        ir.trace = lr.trace;
        return ir;
      };
  const kmaha::lmnn::result r = kmaha::lmnn::fit(
      x, yy, targets_from_r(targets), init, o,
      solver == "M" ? kmaha::lmnn::solver_kind::M : kmaha::lmnn::solver_kind::L,
      lbfgs, kmaha_glue::r_interrupt(), progress);
  return Rcpp::List::create(
      Rcpp::Named("L") = r.L, Rcpp::Named("M") = r.M,
      Rcpp::Named("iterations") = r.iterations,
      Rcpp::Named("objective") = r.objective,
      Rcpp::Named("trace") = Rcpp::NumericVector(r.trace.begin(), r.trace.end()),
      Rcpp::Named("converged") = r.converged,
      Rcpp::Named("message") = r.message,
      Rcpp::Named("active_pairs") = static_cast<double>(r.active_pairs),
      Rcpp::Named("active_triples") = static_cast<double>(r.active_triples),
      Rcpp::Named("refreshes") = r.refreshes,
      Rcpp::Named("evaluations") = r.evaluations);
}

// Exact objective (all impostors) and gradient.  form "L": `map` is L (d x D),
// gradient with respect to L; form "M": `map` is a PSD M (D x D), gradient
// with respect to M.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_lmnn_objective(const arma::mat& x, const arma::ivec& y,
                              const Rcpp::IntegerMatrix& targets,
                              const arma::mat& map, double mu, double lambda,
                              std::string form) {
  const kmaha::lmnn::problem P = problem_from_r(x, y, targets, mu, lambda);
  arma::mat G;
  kmaha::lmnn::eval_out e;
  if (form == "M") {
    arma::mat M = map;
    const arma::mat L = kmaha::lmnn::psd_project(M);
    e = kmaha::lmnn::evaluate(P, L, nullptr, &G, nullptr, 0.0, 256,
                              kmaha_glue::r_interrupt());
    // evaluate() reports lambda ||L||_F^2 = lambda tr(M) for the factor
  } else {
    e = kmaha::lmnn::evaluate(P, map, nullptr, nullptr, &G, 0.0, 256,
                              kmaha_glue::r_interrupt());
  }
  return Rcpp::List::create(
      Rcpp::Named("value") = e.value, Rcpp::Named("pull") = e.pull,
      Rcpp::Named("push") = e.push, Rcpp::Named("triples") = static_cast<double>(e.triples),
      Rcpp::Named("gradient") = G);
}
