#include "glue.h"
#include "optim.h"
#include <cfloat>
#include <kmaha/lmnn.hpp>

namespace {

kmaha::lmnn::problem problem_from_r(const arma::mat& x, const arma::ivec& y,
                                    const Rcpp::IntegerMatrix& targets,
                                    double mu, double lambda) {
  const arma::uvec yy = kmaha_glue::labels_from_r(y);
  return kmaha::lmnn::make_problem(x, yy, kmaha_glue::index_from_r(targets), mu, lambda);
}

}  // namespace

// Fit LMNN.  x: n x D inputs, y: 1-based class codes, targets: n x k 1-based
// (NA = none), init: d x D starting map, solver: "M" or "L"; dense_max and
// max_pairs set how the L-form solver visits impostor pairs (see
// kmaha::lmnn::options; exposed for tests).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_lmnn_fit(const arma::mat& x, const arma::ivec& y,
                        const Rcpp::IntegerMatrix& targets,
                        const arma::mat& init, double mu, double lambda,
                        int max_iter, double tol, std::string solver,
                        int refresh, double slack, bool verbose,
                        double dense_max, double max_pairs, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
  if (solver != "M" && solver != "L") throw kmaha::error("unknown solver");
  const arma::uvec yy = kmaha_glue::labels_from_r(y);
  kmaha::lmnn::options o;
  o.mu = mu;
  o.lambda = lambda;
  o.max_iter = static_cast<unsigned>(max_iter);
  o.tol = tol;
  o.refresh = static_cast<unsigned>(std::max(1, refresh));
  o.slack = slack;
  o.threads = c.threads;
  o.kernels = c.kernels;
  o.dense_max = static_cast<arma::uword>(dense_max);
  o.max_pairs = static_cast<std::size_t>(max_pairs);
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
  kmaha::lmnn::minimizer_fn lbfgs =
      [factr, &c](std::function<double(const arma::vec&, arma::vec&)> f,
                  const arma::vec& x0, unsigned maxit) {
        kmaha_glue::lbfgs_result lr = kmaha_glue::minimize_lbfgs(
            f, x0, static_cast<int>(maxit), factr, 0.0, c.interrupt);
        kmaha::lmnn::inner_result ir;
        ir.par = lr.par;
        ir.evaluations = static_cast<unsigned>(lr.fncount);
        ir.stopped = lr.fail != 1;
        ir.message = lr.message;
        ir.trace = lr.trace;
        return ir;
      };
  const kmaha::lmnn::result r = kmaha::lmnn::fit(
      x, yy, kmaha_glue::index_from_r(targets), init, o,
      solver == "M" ? kmaha::lmnn::solver_kind::M : kmaha::lmnn::solver_kind::L,
      lbfgs, c.interrupt, progress);
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
      Rcpp::Named("evaluations") = r.evaluations,
      Rcpp::Named("isa") = std::string(kmaha::isa_name(o.kernels)));
  });
}

// Exact objective (all impostors) and gradient.  form "M": `map` is a PSD M
// (D x D), gradient with respect to M; form "L": `map` is L (d x D),
// gradient with respect to L (the reference evaluation); forms "Lpairs" and
// "Lgram": the same through the solver's own evaluation (pull term in the
// Laplacian; impostors by the blocked pair search or through the Gram matrix
// of the mapped points), with the hinge smoothed over `eps` (0: exact).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_lmnn_objective(const arma::mat& x, const arma::ivec& y,
                              const Rcpp::IntegerMatrix& targets,
                              const arma::mat& map, double mu, double lambda,
                              std::string form, double eps, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
  const kmaha::lmnn::problem P = problem_from_r(x, y, targets, mu, lambda);
  arma::mat G;
  kmaha::lmnn::eval_out e;
  if (form == "M") {
    arma::mat M = map;
    const arma::mat L = kmaha::lmnn::psd_project(M);
    e = kmaha::lmnn::evaluate(P, L, nullptr, &G, nullptr, 0.0, 256, c.interrupt);
    // evaluate() reports lambda ||L||_F^2 = lambda tr(M) for the factor
  } else if (form == "L") {
    e = kmaha::lmnn::evaluate(P, map, nullptr, nullptr, &G, 0.0, 256, c.interrupt);
  } else if (form == "Lpairs" || form == "Lgram") {
    kmaha::lmnn::workspace ws;
    ws.kernels = c.kernels;
    e = kmaha::lmnn::evaluate_L(P, map, nullptr, &G, eps, 256, c.interrupt, ws,
                                form == "Lgram");
  } else {
    throw kmaha::error("unknown form");
  }
  return Rcpp::List::create(
      Rcpp::Named("value") = e.value, Rcpp::Named("exact") = e.exact,
      Rcpp::Named("pull") = e.pull, Rcpp::Named("push") = e.push,
      Rcpp::Named("triples") = static_cast<double>(e.triples),
      Rcpp::Named("gradient") = G);
  });
}
