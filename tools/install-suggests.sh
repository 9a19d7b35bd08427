#!/usr/bin/env bash
# Installs the suggested modelling frameworks (tidymodels, mlr3) so that the
# adapters' tests run, batchtools and future.batchtools for the Slurm
# tests, and pkgdown for the site (`make site`; .ci/run checks its
# reference index); `make test` does not need them (those tests skip).
#   tools/install-suggests.sh LIB
# Debian's r-cran-* packages first (as root), for what Debian has at a
# recent enough version; then tools/install-suggests.R installs the rest
# from CRAN into the R library LIB (put LIB first on R_LIBS to use them).
# Prints the time each part took.
set -euo pipefail
lib=${1:?usage: tools/install-suggests.sh LIB}
cd "$(dirname "$0")/.."
deb="r-cran-furrr r-cran-slider r-cran-warp r-cran-prettyunits \
  r-cran-checkmate r-cran-uuid r-cran-palmerpenguins r-cran-generics \
  r-cran-digest r-cran-r6 r-cran-globals r-cran-withr r-cran-tidyselect \
  r-cran-glue r-cran-magrittr r-cran-ggplot2 r-cran-tidyr r-cran-numderiv \
  r-cran-batchtools r-cran-future.batchtools r-cran-pkgdown r-cran-ranger \
  r-cran-igraph r-cran-glmnet r-cran-modeldata"
# apt-get waits for another apt-get or dpkg that holds the package
# manager's lock (up to KMAHA_APT_LOCK_WAIT seconds, 900 by default)
# instead of failing at once: dpkg's own wait for its lock, and a retry of
# apt-get update, whose lists lock that wait does not cover.
lock_wait=${KMAHA_APT_LOCK_WAIT:-900}
apt_get() {
  local deadline=$(( $(date +%s) + lock_wait )) out status
  while :; do
    status=0
    out=$(DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout="$lock_wait" "$@" 2>&1) ||
      status=$?
    [ "$status" = 0 ] && return 0
    if grep -qiE 'could not get lock|unable to (acquire|lock)|another process' <<<"$out" &&
       [ "$(date +%s)" -lt "$deadline" ]; then
      echo "install-suggests: another apt-get or dpkg holds the lock; waiting (until $(date -d "@$deadline" +%T))" >&2
      sleep 10
      continue
    fi
    printf '%s\n' "$out" >&2
    if grep -qiE 'could not get lock|unable to (acquire|lock)|another process' <<<"$out"; then
      echo "install-suggests: the package manager stayed locked for ${lock_wait} s (KMAHA_APT_LOCK_WAIT); giving up" >&2
    fi
    return "$status"
  done
}
start=$(date +%s)
missing=$(for p in $deb; do dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || echo "$p"; done)
if [ -n "$missing" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt_get update -qq
    # shellcheck disable=SC2086
    apt_get install -y -qq --no-install-recommends $missing >/dev/null
  else
    echo "not root: the Debian packages $missing are not installed; CRAN will provide them" >&2
  fi
fi
mid=$(date +%s)
Rscript tools/install-suggests.R "$lib"
end=$(date +%s)
echo "install-suggests: Debian packages $((mid - start)) s, CRAN packages $((end - mid)) s"
