# Two entry points for a fresh Debian machine (run as root):
#   make demo   -- installs what is missing, then runs the quick paper reproduction
#   make test   -- installs what is missing, then runs the testthat suite
# Elsewhere: install the R packages listed in DESCRIPTION, then
#   R CMD build . && R CMD INSTALL kmaha_*.tar.gz

PKG      := kmaha
VERSION  := $(shell sed -n 's/^Version: *//p' DESCRIPTION)
TARBALL  := $(PKG)_$(VERSION).tar.gz
RSCRIPT  ?= Rscript
# The paper's UCI datasets, when present beside the checkout (tests skip otherwise).
export KMAHA_DATA_DIR ?= $(abspath ../shared/data)

DEB_PKGS := r-base-dev r-cran-rcpp r-cran-rcpparmadillo r-cran-rcppeigen \
  r-cran-rspectra r-cran-future r-cran-future.apply r-cran-progressr \
  r-cran-quadprog r-cran-lpsolve r-cran-testthat r-cran-kernlab \
  r-cran-mlbench r-cran-caret r-cran-knitr r-cran-rmarkdown r-cran-callr \
  r-cran-class r-cran-roxygen2 pandoc qpdf
R_PKGS   := Rcpp RcppArmadillo RcppEigen RSpectra future future.apply progressr \
  quadprog lpSolve testthat kernlab mlbench caret knitr rmarkdown callr class

.PHONY: deps install demo test check bench clean

deps:
	@if ! command -v $(RSCRIPT) >/dev/null 2>&1 || \
	   ! $(RSCRIPT) -e 'p <- strsplit("$(R_PKGS)", " ")[[1]]; q(status = !all(vapply(p, requireNamespace, NA, quietly = TRUE)))' >/dev/null 2>&1; then \
	  echo "Installing R and the Debian r-cran-* packages kmaha needs..."; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(DEB_PKGS) >/dev/null; \
	fi

$(TARBALL): deps $(shell git ls-files 2>/dev/null | grep -Ev '^(bench|tools|\.ci)/')
	R CMD build --no-build-vignettes --no-manual .

install: $(TARBALL)
	R CMD INSTALL --no-test-load $(TARBALL)

demo: install
	$(RSCRIPT) tools/demo.R

test: install
	$(RSCRIPT) tools/run-tests.R

check: deps
	R CMD build .
	_R_SHLIB_STRIP_=true R_STRIP_SHARED_LIB="strip --strip-debug" _R_CHECK_FORCE_SUGGESTS_=false R CMD check --as-cran $(TARBALL)

bench: install
	for f in learners kpca nca-gemm kernel_choice_speed paper_linear paper_kernel; do \
	  $(RSCRIPT) bench/$$f.R || exit 1; done

clean:
	rm -rf $(PKG)_*.tar.gz $(PKG).Rcheck src/*.o src/*.so
