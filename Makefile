# Entry points for a fresh Debian machine (run as root):
#   make demo      installs what is missing, then runs the quick paper reproduction
#   make test      installs what is missing, then runs the testthat suite
#   make check     R CMD check --as-cran on a freshly built tarball
#   make sanitize  builds with AddressSanitizer + UBSan into .make/lib-asan and
#                  runs the test suite under them; prints the error counts
#   make valgrind  runs a subset of the tests under valgrind's memcheck; prints
#                  the error count
#   make bench     runs the quick benchmarks of bench/ (bench/run.R; bench/README.md)
#   make site      builds the pkgdown site into SITE_DIR (default
#                  .make/site) with the suggested frameworks on R_LIBS,
#                  after pkgdown's check of the reference index
#   make check-scripts  checks that every call in the scripts of bench/ and
#                  data-raw/ resolves and that every file in inst/extdata/
#                  names its script (tools/check-scripts.R), and that no file
#                  names a path that does not exist (tools/check-pointers.R);
#                  both also run by .ci/run
#   make suggests  installs the suggested tidymodels and mlr3 packages into
#                  SUGGESTS_LIB (not needed by demo or test, whose adapter
#                  tests skip without them; used by check and CI)
# Elsewhere: install the R packages listed in DESCRIPTION, then
#   R CMD build . && R CMD INSTALL kmaha_*.tar.gz
# LIB=dir installs into (and tests from) the R library dir instead of the
# default one, e.g. make test LIB=/tmp/lib.
#
# The targets are incremental: the tarball is rebuilt and reinstalled only
# when a package file changed (stamps in .make/).  Build and install output
# goes to .make/*.log; a failing step prints the tail of its log.
#
# The tarball carries built vignettes, so that vignette("reproduction") works
# after make demo / make test.  Building them needs the package compiled (R
# CMD build installs it into a temporary library), and R CMD INSTALL
# compiles it again; with ccache (installed by make deps) the second compile,
# and any rebuild after changes that leave src/ and inst/include/ alone,
# reuse the first one's object files.

PKG      := kmaha
VERSION  := $(shell sed -n 's/^Version: *//p' DESCRIPTION)
TARBALL  := $(PKG)_$(VERSION).tar.gz
RSCRIPT  ?= Rscript
STAMPS   := .make
LIB      ?=
ifneq ($(LIB),)
  LIB_ARG := --library=$(abspath $(LIB))
  export R_LIBS := $(abspath $(LIB))$(if $(R_LIBS),:$(R_LIBS))
endif
# The suggested modelling frameworks (tidymodels, mlr3) live in a library of
# their own, put first on R_LIBS only where they are wanted (make check, CI):
# they bring newer versions of some of Debian's R packages.
SUGGESTS_LIB ?= /usr/local/lib/R/kmaha-suggests
# The paper's UCI datasets, when present beside the checkout (tests skip otherwise).
export KMAHA_DATA_DIR ?= $(abspath ../shared/data)

DEB_PKGS := r-base-dev r-cran-rcpp r-cran-rcpparmadillo r-cran-rcppeigen \
  r-cran-rspectra r-cran-future r-cran-future.apply r-cran-progressr \
  r-cran-quadprog r-cran-lpsolve r-cran-testthat r-cran-kernlab \
  r-cran-mlbench r-cran-mass r-cran-caret r-cran-knitr r-cran-rmarkdown r-cran-callr \
  r-cran-class r-cran-roxygen2 r-cran-generics r-cran-globals r-cran-parallelly \
  r-cran-ggplot2 r-cran-broom r-cran-tibble pandoc qpdf ccache
R_PKGS   := Rcpp RcppArmadillo RcppEigen RSpectra future future.apply progressr \
  quadprog lpSolve testthat kernlab mlbench caret knitr rmarkdown callr class \
  generics globals parallelly ggplot2 broom tibble
# Files that go into the tarball (bench/, tools/ and .ci/ do not).
PKG_FILES := $(shell git ls-files --cached --others --exclude-standard 2>/dev/null | \
  grep -Ev '^(bench|tools|\.ci)/|^Makefile$$' | while read f; do [ -f "$$f" ] && echo "$$f"; done)

# Compilers behind ccache, when it is installed: a Makevars file of our own
# (R_MAKEVARS_USER) that puts ccache in front of R's configured compilers.
# The object files keep no absolute paths of the (temporary) build
# directories, so hits do not depend on where R unpacks the sources.
# Whether ccache is there is decided by the shell when a compiling recipe
# runs, not when make reads this file: on a fresh machine make deps
# installs ccache during the first command, after this file was read, and
# the ccache Makevars is no prerequisite of anything, so its appearance
# rebuilds nothing.  $(ccache_env) goes in front of a compiling command.
CCACHE_MAKEVARS := $(STAMPS)/Makevars-ccache
ccache_env = if command -v ccache >/dev/null 2>&1; then \
    if [ ! -s $(CCACHE_MAKEVARS) ]; then \
      for v in CC CXX CXX11 CXX14 CXX17 CXX20; do \
        c=$$(R CMD config $$v 2>/dev/null); [ -n "$$c" ] && echo "$$v = ccache $$c"; \
      done > $(CCACHE_MAKEVARS); \
    fi; \
    export R_MAKEVARS_USER=$(abspath $(CCACHE_MAKEVARS)) CCACHE_NOHASHDIR=true; \
  fi;

# $(call logged,NAME,COMMAND): run COMMAND with its output in .make/NAME.log;
# on failure print the log's tail and stop.
logged = @mkdir -p $(STAMPS); echo "  $(1)  (log: $(STAMPS)/$(1).log)"; \
  ( $(2) ) > $(STAMPS)/$(1).log 2>&1 || { tail -n 40 $(STAMPS)/$(1).log; \
  echo "make: $(1) failed; the whole log is $(STAMPS)/$(1).log"; exit 1; }

.PHONY: deps install demo test check sanitize valgrind bench clean suggests check-scripts site

# What make deps checks: the R packages, and the programs the build and
# check use (pandoc for the vignettes, qpdf for check, ccache for speed).
# A missing R package installs R and DEB_PKGS; a missing program (all are
# Debian packages of the same name) is installed when make runs as root,
# else reported, and the build goes on without it.
deps: $(STAMPS)/deps
$(STAMPS)/deps: DESCRIPTION
	@mkdir -p $(STAMPS)
	@tools_missing=$$(for t in pandoc qpdf ccache; do command -v $$t >/dev/null 2>&1 || printf ' %s' $$t; done); \
	if ! command -v $(RSCRIPT) >/dev/null 2>&1 || \
	   ! $(RSCRIPT) -e 'p <- strsplit("$(R_PKGS)", " ")[[1]]; q(status = !all(vapply(p, requireNamespace, NA, quietly = TRUE)))' >/dev/null 2>&1; then \
	  echo "Installing R and the Debian r-cran-* packages kmaha needs...  (log: $(STAMPS)/deps.log)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(DEB_PKGS); } > $(STAMPS)/deps.log 2>&1 || \
	    { tail -n 20 $(STAMPS)/deps.log; echo "make: installing the Debian packages failed; the whole log is $(STAMPS)/deps.log"; exit 1; }; \
	elif [ -n "$$tools_missing" ] && [ "$$(id -u)" = 0 ]; then \
	  echo "Installing$$tools_missing...  (log: $(STAMPS)/deps.log)"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$tools_missing; } > $(STAMPS)/deps.log 2>&1 || \
	    { tail -n 20 $(STAMPS)/deps.log; echo "make: installing$$tools_missing failed; the whole log is $(STAMPS)/deps.log"; exit 1; }; \
	elif [ -n "$$tools_missing" ]; then \
	  echo "Not installed:$$tools_missing (apt-get install them as root); the build goes on without them"; \
	fi
	@touch $@

$(TARBALL): $(STAMPS)/deps $(PKG_FILES)
	$(call logged,build,$(ccache_env) R CMD build --no-manual .)

install: $(STAMPS)/installed$(subst /,_,$(LIB))
$(STAMPS)/installed$(subst /,_,$(LIB)): $(TARBALL)
	@$(if $(LIB),mkdir -p $(LIB))
	$(call logged,install,$(ccache_env) R CMD INSTALL --no-test-load $(LIB_ARG) $(TARBALL))
	@touch $@

demo: install
	$(RSCRIPT) tools/demo.R

test: install
	$(RSCRIPT) tools/run-tests.R

suggests: $(STAMPS)/deps
	tools/install-suggests.sh $(SUGGESTS_LIB)

# LaTeX for the PDF manual of the check (installed by make check when
# pdflatex is missing and make runs as root).
LATEX_PKGS := texlive-latex-base texlive-latex-recommended texlive-fonts-recommended

# The shared library is stripped of debug information, as CRAN does; without
# the LaTeX package inconsolata (texlive-fonts-extra) the PDF manual uses
# the default monospaced font.  The check needs every suggested package (a
# missing one is a NOTE, and --as-cran then looks its maintainer up on CRAN,
# which fails offline), so it runs with SUGGESTS_LIB first on R_LIBS.
check: $(STAMPS)/deps suggests
	@if ! command -v pdflatex >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "Installing LaTeX for the PDF manual...  (log: $(STAMPS)/latex.log)"; \
	    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(LATEX_PKGS); } > $(STAMPS)/latex.log 2>&1 || \
	      { tail -n 20 $(STAMPS)/latex.log; echo "make: installing LaTeX failed; the check's PDF manual will fail"; }; \
	  else \
	    echo "pdflatex is not installed (apt-get install $(LATEX_PKGS) as root): the check's PDF manual will fail"; \
	  fi; \
	fi
	$(call logged,build-check,R_LIBS=$(SUGGESTS_LIB)$${R_LIBS:+:$$R_LIBS} R CMD build .)
	$(if $(shell kpsewhich inconsolata.sty 2>/dev/null),,R_RD4PDF="times,hyper") \
	  _R_SHLIB_STRIP_=true R_STRIP_SHARED_LIB="strip --strip-debug" \
	  R_LIBS=$(SUGGESTS_LIB)$${R_LIBS:+:$$R_LIBS} \
	  TZ=$${TZ:-UTC} _R_CHECK_FORCE_SUGGESTS_=false R CMD check --as-cran $(TARBALL)

# Sanitizers: the package is built from the tarball (so no object file of a
# normal build is reused) with the flags below into a library of its own; R
# itself is not instrumented, so libasan is preloaded.  R leaks by design:
# leak detection is off.  UBSan reports and continues ("runtime error"),
# AddressSanitizer stops the process at its first error; both write their
# reports to files, so that those of child R processes (callr) count too.
ASAN_LIB  := $(STAMPS)/lib-asan
ASAN_FLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
sanitize: $(TARBALL)
	@mkdir -p $(ASAN_LIB)
	@printf 'CXXFLAGS = %s\nCXX11FLAGS = %s\nCXX14FLAGS = %s\nCXX17FLAGS = %s\nLDFLAGS = -fsanitize=address,undefined\n' \
	  "$(ASAN_FLAGS)" "$(ASAN_FLAGS)" "$(ASAN_FLAGS)" "$(ASAN_FLAGS)" > $(STAMPS)/Makevars-asan
	$(call logged,install-asan,R_MAKEVARS_USER=$(abspath $(STAMPS)/Makevars-asan) R CMD INSTALL --no-test-load --library=$(ASAN_LIB) $(TARBALL))
	@echo "  tests under ASan + UBSan  (log: $(STAMPS)/sanitize.log; reports: $(STAMPS)/sanitizer-reports/)"
	@rm -rf $(STAMPS)/sanitizer-reports; mkdir -p $(STAMPS)/sanitizer-reports; \
	  reports=$(abspath $(STAMPS)/sanitizer-reports); \
	  LD_PRELOAD=$$(g++ -print-file-name=libasan.so) \
	  ASAN_OPTIONS=detect_leaks=0:log_path=$$reports/asan \
	  UBSAN_OPTIONS=print_stacktrace=1:log_path=$$reports/ubsan \
	  R_LIBS=$(abspath $(ASAN_LIB)) $(RSCRIPT) tools/run-tests.R > $(STAMPS)/sanitize.log 2>&1; \
	  status=$$?; tail -n 1 $(STAMPS)/sanitize.log; \
	  asan=$$(cat $$reports/asan.* 2>/dev/null | grep -c 'ERROR: AddressSanitizer'); \
	  ubsan=$$(cat $$reports/ubsan.* 2>/dev/null | grep -c 'runtime error:'); \
	  echo "AddressSanitizer errors: $$asan   UBSan runtime errors: $$ubsan   (test run exit status $$status)"; \
	  [ $$asan -eq 0 ] && [ $$ubsan -eq 0 ] && [ $$status -eq 0 ]

# Valgrind (memcheck) on the installed package, over the test files matched
# by VALGRIND_TESTS (a regular expression on their names).
VALGRIND_TESTS ?= gemm|optim|nca|knn|kernels|dne|kpca|align|validation
valgrind: install
	@echo "  tests '$(VALGRIND_TESTS)' under valgrind  (log: $(STAMPS)/valgrind.log)"
	@KMAHA_TEST_FILTER='$(VALGRIND_TESTS)' KMAHA_NUM_THREADS=1 OMP_NUM_THREADS=1 \
	  R -d "valgrind --error-exitcode=0" --vanilla --no-echo -f tools/run-tests.R > $(STAMPS)/valgrind.log 2>&1; \
	  status=$$?; grep -E '^[0-9]+ passed' $(STAMPS)/valgrind.log | tail -n 1; \
	  errors=$$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' $(STAMPS)/valgrind.log | tail -n 1); \
	  echo "valgrind errors: $${errors:-?}   (test run exit status $$status)"; \
	  [ "$${errors:-1}" -eq 0 ] && [ $$status -eq 0 ]

# The quick benchmarks of the suite (bench/run.R lists them all; `Rscript
# bench/run.R all` runs every one, hours).
bench: install
	$(RSCRIPT) bench/run.R quick

# The pkgdown site, built from the checkout as it is (no hand edits: every
# help topic must be in _pkgdown.yml's reference index, which the check
# says first; .ci/run runs that check too).  pkgdown.internet = FALSE: it
# would otherwise look the package up on CRAN and Bioconductor.  The
# examples and articles run with the kmaha that make install installed
# (install = FALSE: pkgdown would compile it once more).  Every package the
# pages name must be installed (make suggests): downlit looks any other up
# on cran.rstudio.com for its link.  About 6 minutes on the project
# machine.
SITE_DIR ?= $(STAMPS)/site
site: install suggests
	$(RSCRIPT) -e 'pkgdown::check_pkgdown()'
	$(call logged,site,TZ=$${TZ:-UTC} R_LIBS=$(SUGGESTS_LIB)$${R_LIBS:+:$$R_LIBS} \
	  $(RSCRIPT) -e 'options(pkgdown.internet = FALSE); \
	    pkgdown::build_site(override = list(destination = "$(abspath $(SITE_DIR))"), \
	                        preview = FALSE, install = FALSE, new_process = FALSE)')
	@echo "site: $(abspath $(SITE_DIR))/index.html"

check-scripts:
	$(RSCRIPT) tools/check-scripts.R --self-test
	$(RSCRIPT) tools/check-scripts.R
	$(RSCRIPT) tools/check-pointers.R

clean:
	rm -rf $(PKG)_*.tar.gz $(PKG).Rcheck src/*.o src/*.so $(STAMPS)
