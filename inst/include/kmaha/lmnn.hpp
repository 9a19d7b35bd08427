// kmaha core: Large Margin Nearest Neighbours (LMNN).
//
// Objective (paper, section "LMNN"; Weinberger et al. 2006), written with the
// usual (1 - mu) pull + mu push weighting, mu in (0, 1):
//
//   f(M) = (1 - mu) sum_{i,j} w_ij d_M(i, j)
//        + mu sum_{i,j,l} w_ij (1 - y_il) [1 + d_M(i, j) - d_M(i, l)]_+
//        + lambda tr(M R),
//
// where d_M(i, j) = (x_i - x_j)' M (x_i - x_j), w_ij = 1 when x_j is one of the
// target neighbours of x_i, and y_il = 1 when x_i and x_l share a label.  This
// is (1 - mu) times the paper's objective with c = mu / (1 - mu), plus the
// optional regulariser lambda tr(M R): R = I gives lambda ||L||_F^2 (for
// M = L'L); a kernel matrix R = K with kernel rows as inputs gives the
// kernel trick's lambda ||A||_F^2 for A = U Phi'.
//
// This header includes the parts, one thing each (all in kmaha::lmnn):
//   lmnn/problem.hpp    the problem, options, run context and result;
//   lmnn/impostors.hpp  the blocked all-pairs search and the active set;
//   lmnn/objective.hpp  evaluation of the objective and gradient, smoothing;
//   lmnn/solve_m.hpp    the convex solver over M (projected sub-gradient);
//   lmnn/solve_l.hpp    the low-rank solver over L (caller's L-BFGS);
//   lmnn/fit.hpp        fit(): reduction to the span of the centred
//                       points (kernel rows: their KPCA coordinates),
//                       whitening, solver, map back;
// and kmaha/span.hpp (the span of the differences of the rows) and
// kmaha/kpca.hpp, which the reduction uses.
#ifndef KMAHA_LMNN_HPP
#define KMAHA_LMNN_HPP

#include "lmnn/problem.hpp"
#include "lmnn/impostors.hpp"
#include "lmnn/objective.hpp"
#include "lmnn/solve_m.hpp"
#include "lmnn/solve_l.hpp"
#include "lmnn/fit.hpp"

#endif  // KMAHA_LMNN_HPP
