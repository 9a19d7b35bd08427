# Which GEMM for the NCA core?  Times the three products of one NCA row block
# (the shapes and memory layouts used by inst/include/kmaha/nca.hpp) with the
# package's own kernel (kmaha/gemm.hpp) for the baseline and the AVX2+FMA
# instruction sets, with Eigen's GEMM (compiled here with R's default flags,
# i.e. for the x86-64 baseline, as a package would be) and with the system
# BLAS (dgemm), single-threaded, on the same memory.
#   Rscript bench/nca-gemm.R        (needs Rcpp, RcppArmadillo, RcppEigen and
#                                    kmaha installed: its headers are used)
cat("BLAS (sessionInfo):", sessionInfo()$BLAS, "\n")
cat("load average:", tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n\n")
Sys.setenv(OMP_NUM_THREADS = "1")

code <- '
// [[Rcpp::depends(RcppArmadillo, RcppEigen, kmaha)]]
#include <RcppArmadillo.h>
#include <RcppEigen.h>
#include <R_ext/BLAS.h>
#include <kmaha/gemm.hpp>
#include <ctime>
using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
static double cpu() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }
// [[Rcpp::export]]
Rcpp::NumericMatrix gemm_race(int n, int d, int b, int reps) {
  Eigen::setNbThreads(1);
  const bool avx2 = kmaha::best_isa() == kmaha::isa::avx2;
  Eigen::MatrixXd Z = Eigen::MatrixXd::Random(n, d);
  RowMat Zt = Z;                       // rows of Z contiguous, as in nca.hpp
  RowMat T(b, n);
  Eigen::MatrixXd Tc(b, n), WZ(n, d), acc = Eigen::MatrixXd::Zero(n, d), Zb(b, d);
  Rcpp::NumericMatrix out(4, 3);
  std::fill(out.begin(), out.end(), NA_REAL);
  kmaha::gemm_buffers buf;
  const double one = 1.0, zero = 0.0;
  for (int rep = 0; rep < reps; ++rep) {
    double t[4][3] = {{0}};
    for (int i0 = 0; i0 + b <= n; i0 += b) {
      for (int k = 0; k < 2; ++k) {  // 0: kmaha baseline, 1: kmaha AVX2
        if (k == 1 && !avx2) continue;
        const kmaha::isa s = k == 0 ? kmaha::isa::baseline : kmaha::isa::avx2;
        double c = cpu();
        kmaha::gemm(s, b, n, d, kmaha::cview{Zt.data() + i0 * d, d, 1},
                    kmaha::cview{Z.data(), n, 1}, T.data(), n, 1, false, buf);
        t[k][0] += cpu() - c; c = cpu();
        kmaha::gemm(s, b, d, n, kmaha::cview{T.data(), n, 1},
                    kmaha::cview{Zt.data(), d, 1}, WZ.data() + i0, 1, n, false, buf);
        t[k][1] += cpu() - c; c = cpu();
        kmaha::gemm(s, n, d, b, kmaha::cview{T.data(), 1, n},
                    kmaha::cview{Zt.data() + i0 * d, d, 1}, acc.data(), 1, n, true, buf);
        t[k][2] += cpu() - c;
      }
      double c = cpu();
      T.noalias() = Z.middleRows(i0, b) * Z.transpose();
      t[2][0] += cpu() - c; c = cpu();
      WZ.middleRows(i0, b).noalias() = T * Z;
      t[2][1] += cpu() - c; c = cpu();
      acc.noalias() += T.transpose() * Z.middleRows(i0, b);
      t[2][2] += cpu() - c;
      Zb = Z.middleRows(i0, b);
      c = cpu();
      F77_CALL(dgemm)("N", "T", &b, &n, &d, &one, Zb.data(), &b, Z.data(), &n,
                      &zero, Tc.data(), &b FCONE FCONE);
      t[3][0] += cpu() - c; c = cpu();
      F77_CALL(dgemm)("N", "N", &b, &d, &n, &one, Tc.data(), &b, Z.data(), &n,
                      &zero, Zb.data(), &b FCONE FCONE);
      t[3][1] += cpu() - c; c = cpu();
      F77_CALL(dgemm)("T", "N", &n, &d, &b, &one, Tc.data(), &b, Z.data() + i0, &n,
                      &one, acc.data(), &n FCONE FCONE);
      t[3][2] += cpu() - c;
    }
    for (int r = 0; r < 4; ++r) {
      if (r == 1 && !avx2) continue;
      for (int k = 0; k < 3; ++k)
        if (rep == 0 || t[r][k] < out(r, k)) out(r, k) = t[r][k];
    }
  }
  return out;
}
'
Rcpp::sourceCpp(code = code)
labels <- c("kmaha, baseline", "kmaha, AVX2+FMA", "Eigen (baseline flags)", "system BLAS")
res <- NULL
for (n in c(1000L, 2000L, 4000L)) {
  b <- as.integer(max(16, min(256, 131072 / n)))  # the core's default block
  m <- gemm_race(n, 36L, b, 3L) * 1000
  flops <- 2 * n * n * 36 / 1e9
  res <- rbind(res, data.frame(n = n, block = b, gemm = labels,
                               `Z_I Z'` = m[, 1], `W_I Z` = m[, 2], `W_I' Z_I` = m[, 3],
                               GFLOPS = 3 * flops / (rowSums(m) / 1000),
                               check.names = FALSE))
}
cat("CPU milliseconds per pass over all row blocks (d = 36, best of 3):\n")
print(res, digits = 3, row.names = FALSE)
for (n in unique(res$n)) {
  r <- res[res$n == n, ]
  cat(sprintf("n = %d: kmaha AVX2 / Eigen baseline %.2fx, kmaha AVX2 / BLAS %.2fx, kmaha baseline / Eigen baseline %.2fx (GFLOPS ratios)\n",
              n, r$GFLOPS[2] / r$GFLOPS[3], r$GFLOPS[2] / r$GFLOPS[4], r$GFLOPS[1] / r$GFLOPS[3]))
}
