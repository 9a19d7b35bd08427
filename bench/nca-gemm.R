# Which GEMM for the NCA core?  Times the three products of one NCA row block
# (the shapes used by inst/include/kmaha/nca.hpp) with Eigen's own GEMM and
# with the system BLAS (dgemm through R_ext/BLAS.h), single-threaded, on the
# same memory.  Run: Rscript bench/nca-gemm.R   (needs Rcpp and RcppEigen)
cat("BLAS (sessionInfo):", sessionInfo()$BLAS, "\n")
cat("BLAS (extSoftVersion):", extSoftVersion()[["BLAS"]], "\n")
cat("load average:", tryCatch(readLines("/proc/loadavg"), error = function(e) "?"), "\n\n")
Sys.setenv(OMP_NUM_THREADS = "1")

code <- '
// [[Rcpp::depends(RcppEigen)]]
#include <RcppEigen.h>
#include <R_ext/BLAS.h>
#include <ctime>
using RowMat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
static double cpu() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }
// [[Rcpp::export]]
Rcpp::NumericMatrix gemm_race(int n, int d, int b, int reps) {
  Eigen::setNbThreads(1);
  Eigen::MatrixXd Z = Eigen::MatrixXd::Random(n, d);
  RowMat T(b, n);
  Eigen::MatrixXd Tc(b, n);  // column-major copy layout for BLAS
  Eigen::MatrixXd WZ(n, d), acc = Eigen::MatrixXd::Zero(n, d);
  Eigen::MatrixXd Zb(b, d);
  Rcpp::NumericMatrix out(2, 3);
  const double one = 1.0, zero = 0.0;
  for (int rep = 0; rep < reps; ++rep) {
    double t[6] = {0, 0, 0, 0, 0, 0};
    for (int i0 = 0; i0 + b <= n; i0 += b) {
      double s = cpu();
      T.noalias() = Z.middleRows(i0, b) * Z.transpose();
      t[0] += cpu() - s; s = cpu();
      WZ.middleRows(i0, b).noalias() = T * Z;
      t[1] += cpu() - s; s = cpu();
      acc.noalias() += T.transpose() * Z.middleRows(i0, b);
      t[2] += cpu() - s;
      Zb = Z.middleRows(i0, b);
      s = cpu();
      // Tc = Zb Z^T  (b x d times d x n)
      F77_CALL(dgemm)("N", "T", &b, &n, &d, &one, Zb.data(), &b, Z.data(), &n,
                      &zero, Tc.data(), &b FCONE FCONE);
      t[3] += cpu() - s; s = cpu();
      // Zb = Tc Z  (b x n times n x d)
      F77_CALL(dgemm)("N", "N", &b, &d, &n, &one, Tc.data(), &b, Z.data(), &n,
                      &zero, Zb.data(), &b FCONE FCONE);
      t[4] += cpu() - s; s = cpu();
      // acc += Tc^T Z_I  (n x b times b x d)
      F77_CALL(dgemm)("T", "N", &n, &d, &b, &one, Tc.data(), &b, Z.data() + i0, &n,
                      &one, acc.data(), &n FCONE FCONE);
      t[5] += cpu() - s;
    }
    for (int k = 0; k < 3; ++k) {
      if (rep == 0 || t[k] < out(0, k)) out(0, k) = t[k];
      if (rep == 0 || t[k + 3] < out(1, k)) out(1, k) = t[k + 3];
    }
  }
  return out;
}
'
Rcpp::sourceCpp(code = code)
res <- NULL
for (n in c(1000L, 4000L)) {
  b <- as.integer(max(16, min(256, 131072 / n)))  # the core's default block
  m <- gemm_race(n, 36L, b, 3L) * 1000
  flops <- 2 * n * n * 36 / 1e9
  for (r in 1:2) {
    res <- rbind(res, data.frame(n = n, block = b, gemm = c("Eigen", "system BLAS")[r],
                                 `Z_I Z'` = m[r, 1], `W_I Z` = m[r, 2], `W_I' Z_I` = m[r, 3],
                                 GFLOPS = 3 * flops / (sum(m[r, ]) / 1000),
                                 check.names = FALSE))
  }
}
cat("CPU milliseconds per pass over all row blocks (d = 36, best of 3):\n")
print(res, digits = 3, row.names = FALSE)
