#include "glue.h"
#include "heldout.h"
#include "optim.h"
#include <cfloat>
#include <kmaha/lmnn.hpp>

namespace {

// The regulariser's matrix: NULL (the identity) or a numeric matrix (checked
// by the core: D x D, symmetric, positive semi-definite).
arma::mat regulariser_from_r(const Rcpp::Nullable<Rcpp::NumericMatrix>& reg) {
  if (reg.isNull()) return arma::mat();
  return Rcpp::as<arma::mat>(reg.get());
}

}  // namespace

// Fit LMNN.  x: n x D inputs, y: 1-based class codes, targets: n x k 1-based
// (NA = none), or NULL: the target_k nearest same-class rows of x, found
// here (and returned as `targets`), init: d x D starting map (a 0 x 0
// matrix: the D x D identity), solver: "M", "L" or "Lfull" (the L-form without its low-rank
// mode; for tests and benchmarks); dense_max and max_pairs set how the
// L-form solver visits impostor pairs (see kmaha::lmnn::options; exposed for
// tests); metric: return M = L'L (D x D; otherwise an empty matrix); span:
// solve in the span of the centred points (false: the full-dimension
// problem, for tests); reg: NULL or the D x D positive semi-definite matrix R
// of the regulariser lambda tr(M R) (NULL: R = I; x itself: kernel rows);
// score: NULL, or a fold's held-out rows to vote in the learned metric (see
// heldout.h), returned as `score`.
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_lmnn_fit(const arma::mat& x, const arma::ivec& y,
                        SEXP targets, int target_k,
                        const arma::mat& init, double mu, double lambda,
                        int max_iter, double tol, std::string solver,
                        int refresh, double slack, bool verbose,
                        double dense_max, double max_pairs, bool metric,
                        bool span, Rcpp::Nullable<Rcpp::NumericMatrix> reg,
                        SEXP score, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
  if (solver != "M" && solver != "L" && solver != "Lfull")
    throw kmaha::error("unknown solver");
  const arma::uvec yy = kmaha_glue::labels_from_r(y);
  kmaha::lmnn::options o;
  o.mu = mu;
  o.lambda = lambda;
  o.max_iter = static_cast<unsigned>(max_iter);
  o.tol = tol;
  o.refresh = static_cast<unsigned>(std::max(1, refresh));
  o.slack = slack;
  o.dense_max = static_cast<arma::uword>(dense_max);
  o.max_pairs = static_cast<std::size_t>(max_pairs);
  o.low_rank = solver == "L";
  o.metric = metric;
  o.span = span;
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
  kmaha::lmnn::minimizer_fn lbfgs =
      [&c](std::function<double(const arma::vec&, arma::vec&)> f,
           const arma::vec& x0, unsigned maxit, double tol_k) {
        kmaha_glue::lbfgs_result lr = kmaha_glue::minimize_lbfgs(
            f, x0, static_cast<int>(maxit), tol_k / DBL_EPSILON, 0.0, c.interrupt);
        kmaha::lmnn::inner_result ir;
        ir.par = lr.par;
        ir.evaluations = static_cast<unsigned>(lr.fncount);
        ir.stopped = lr.fail != 1;
        ir.message = lr.message;
        ir.trace = lr.trace;
        return ir;
      };
  const arma::umat tg =
      Rf_isNull(targets)
          ? kmaha_glue::class_targets(x, yy, static_cast<arma::uword>(std::max(target_k, 1)),
                                      true, c)
          : kmaha_glue::index_from_r(Rcpp::IntegerMatrix(targets));
  const kmaha::lmnn::result r = kmaha::lmnn::fit(
      x, yy, tg, init, regulariser_from_r(reg), o,
      solver == "M" ? kmaha::lmnn::solver_kind::M : kmaha::lmnn::solver_kind::L,
      lbfgs, c, progress);
  Rcpp::List out = Rcpp::List::create(
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
      Rcpp::Named("isa") = std::string(kmaha::isa_name(c.kernels)));
  if (Rf_isNull(targets)) out["targets"] = kmaha_glue::index_to_r(tg);
  out["score"] = kmaha_glue::score_heldout(score, x, yy, r.L, c);
  return out;
  });
}

// Exact objective (all impostors) and gradient.  form "M": `map` is a PSD M
// (D x D), gradient with respect to M; form "L": `map` is L (d x D),
// gradient with respect to L (the reference evaluation); forms "Lpairs" and
// "Lgram": the same through the solver's own evaluation (pull term in the
// Laplacian; impostors by the blocked pair search or through the Gram matrix
// of the mapped points), with the hinge smoothed over `eps` (0: exact).
// reg: NULL or the matrix R of the regulariser lambda tr(M R) (NULL: R = I).
// [[Rcpp::export(rng = false)]]
Rcpp::List cpp_lmnn_objective(const arma::mat& x, const arma::ivec& y,
                              const Rcpp::IntegerMatrix& targets,
                              const arma::mat& map, double mu, double lambda,
                              std::string form, double eps,
                              Rcpp::Nullable<Rcpp::NumericMatrix> reg, SEXP ctx) {
  return kmaha_glue::run(ctx, [&](const kmaha::context& c) {
  const kmaha::lmnn::problem P = kmaha::lmnn::make_problem(
      x, kmaha_glue::labels_from_r(y), kmaha_glue::index_from_r(targets), mu,
      lambda, regulariser_from_r(reg), c);
  const kmaha::interrupt_fn& interrupt = c.interrupt;
  kmaha::lmnn::workspace ws(c.kernels);
  arma::mat G;
  kmaha::lmnn::eval_out e;
  if (form == "M") {
    arma::mat M = map;
    const arma::mat L = kmaha::lmnn::psd_project(M);
    // (the regulariser of the factor: tr(L R L') = tr(M R))
    e = kmaha::lmnn::evaluate(P, L, nullptr, &G, nullptr, 0.0, 256, interrupt, ws);
  } else if (form == "L") {
    e = kmaha::lmnn::evaluate(P, map, nullptr, nullptr, &G, 0.0, 256, interrupt, ws);
  } else if (form == "Lpairs" || form == "Lgram") {
    e = kmaha::lmnn::evaluate_L(P, map, nullptr, &G, eps, 256, interrupt, ws,
                                form == "Lgram");
  } else {
    throw kmaha::error("unknown form");
  }
  return Rcpp::List::create(
      Rcpp::Named("value") = e.value, Rcpp::Named("exact") = e.exact,
      Rcpp::Named("pull") = e.pull, Rcpp::Named("push") = e.push,
      Rcpp::Named("reg") = e.reg,
      Rcpp::Named("triples") = static_cast<double>(e.triples),
      Rcpp::Named("gradient") = G);
  });
}
