#!/usr/bin/env bash
# Starts a single-node Slurm cluster on this machine, on the loopback
# address, for kmaha's Slurm test (tests/testthat/test-slurm.R) and the
# benchmark bench/slurm.R:
#
#   tools/slurm-up.sh        # as root
#   tools/slurm-down.sh      # stops the daemons this script started
#
# What it does, each step only when needed (so running it again is
# harmless, and a cluster that is up is left as it is):
#   1. installs Debian's slurm-wlm and munge (apt-get) when missing;
#   2. creates munge's key and starts munged (as the user munge);
#   3. writes /etc/slurm/slurm.conf: one node (this host, 127.0.0.1, all its
#      CPUs, 90% of its memory), one partition, no cgroups (process
#      tracking by /proc, no task plugin), no accounting database;
#   4. starts slurmctld and slurmd, and waits until the node is idle;
#   5. runs a one-second job through the cluster (srun) as a check.
# It exits 0 with "Slurm is up: ..." on its last line, or non-zero with
# "slurm-up: cannot start Slurm: <reason>" (and the log lines that tell
# why).  A slurm.conf that this script did not write is never replaced.
# Logs: /var/log/slurm/slurmctld.log, /var/log/slurm/slurmd.log.
set -uo pipefail

conf_dir=/etc/slurm
conf=$conf_dir/slurm.conf
marker="# written by kmaha's tools/slurm-up.sh"
state=/var/lib/slurm
logs=/var/log/slurm
run=/run/kmaha-slurm

fail() {
  echo "slurm-up: cannot start Slurm: $*" >&2
  exit 1
}

tail_log() {
  [ -f "$1" ] && { echo "--- last lines of $1:" >&2; tail -n 15 "$1" >&2; }
}

# The cluster answers and its node takes jobs.
node_idle() {
  local s
  s=$(timeout 10 sinfo -h -o %T 2>/dev/null | head -n 1)
  case "$s" in idle*|mixed*|allocated*|completing*) return 0 ;; *) return 1 ;; esac
}

if command -v sinfo >/dev/null 2>&1 && [ -f "$conf" ] && grep -qF "$marker" "$conf" &&
   node_idle; then
  echo "Slurm is up (already running): $(sinfo -h -o '%N, %c CPUs, partition %P' | head -n 1)"
  exit 0
fi

[ "$(id -u)" = 0 ] || fail "this script must run as root (it installs packages and starts the daemons; slurmd must be root to run jobs as their users)"

# 1. Packages.
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v slurmd >/dev/null 2>&1 ||
   ! command -v munged >/dev/null 2>&1 || ! command -v sbatch >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || fail "slurm-wlm and munge are not installed and there is no apt-get to install them"
  echo "slurm-up: installing slurm-wlm and munge (apt-get)..."
  ok=0
  for attempt in 1 2 3 4 5 6; do
    if { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
           --no-install-recommends slurm-wlm munge; } >/tmp/kmaha-slurm-apt.log 2>&1; then
      ok=1
      break
    fi
    # another apt-get or dpkg holds the lock: wait and retry
    grep -q "lock" /tmp/kmaha-slurm-apt.log || break
    sleep 20
  done
  if [ "$ok" != 1 ]; then
    tail -n 15 /tmp/kmaha-slurm-apt.log >&2
    fail "apt-get could not install slurm-wlm and munge (log above)"
  fi
fi

host=$(hostname -s 2>/dev/null || hostname)
[ -n "$host" ] || fail "this machine has no host name (hostname printed nothing)"
cpus=$(nproc)
mem_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
[ -n "$mem_mb" ] && [ "$mem_mb" -gt 0 ] || fail "could not read the memory size from /proc/meminfo"

# 2. munge: the key, its directories, the daemon.
mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge
chown munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge
chmod 0700 /etc/munge
chmod 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key >/dev/null 2>&1 ||
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 2>/dev/null ||
    fail "could not create /etc/munge/munge.key"
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
fi
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  runuser -u munge -- munged || { tail_log /var/log/munge/munged.log; fail "munged did not start"; }
  for i in $(seq 1 20); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.5
  done
  munge -n 2>/dev/null | unmunge >/dev/null 2>&1 ||
    { tail_log /var/log/munge/munged.log; fail "munged started but does not answer (munge -n | unmunge fails)"; }
fi

# 3. slurm.conf (rewritten when the host name, CPUs or memory changed).
mkdir -p "$conf_dir" "$state/slurmctld" "$state/slurmd" "$logs" "$run"
if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
  fail "$conf exists and was not written by this script; move it away to let tools/slurm-up.sh write its own"
fi
new=$(mktemp)
cat >"$new" <<EOF
$marker
# A single-node cluster on the loopback address, without cgroups and
# without an accounting database.
ClusterName=kmaha
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
# finished jobs stay listed (squeue --states=all) for an hour
MinJobAge=3600
KillWait=5
SlurmctldPort=6817
SlurmdPort=6818
SlurmctldPidFile=$run/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
StateSaveLocation=$state/slurmctld
SlurmdSpoolDir=$state/slurmd
SlurmctldLogFile=$logs/slurmctld.log
SlurmdLogFile=$logs/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=main Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
changed=0
if ! cmp -s "$new" "$conf"; then
  cp "$new" "$conf"
  chmod 0644 "$conf"
  changed=1
fi
rm -f "$new"

# 4. The daemons: started when not running, restarted when the
# configuration changed.
running() {
  local pid
  [ -f "$1" ] && pid=$(cat "$1" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}
stop_daemon() {
  local pid
  if running "$1"; then
    pid=$(cat "$1")
    kill "$pid" 2>/dev/null
    for i in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  fi
  rm -f "$1"
}
if [ "$changed" = 1 ]; then
  stop_daemon "$run/slurmd.pid"
  stop_daemon "$run/slurmctld.pid"
fi
if ! running "$run/slurmctld.pid"; then
  slurmctld || { tail_log "$logs/slurmctld.log"; fail "slurmctld did not start"; }
fi
for i in $(seq 1 30); do
  timeout 5 scontrol ping 2>/dev/null | grep -q "is UP" && break
  sleep 1
done
timeout 5 scontrol ping 2>/dev/null | grep -q "is UP" ||
  { tail_log "$logs/slurmctld.log"; fail "slurmctld does not answer (scontrol ping)"; }
if ! running "$run/slurmd.pid"; then
  slurmd || { tail_log "$logs/slurmd.log"; fail "slurmd did not start"; }
fi
for i in $(seq 1 60); do
  node_idle && break
  st=$(timeout 5 sinfo -h -o %T 2>/dev/null | head -n 1)
  case "$st" in
    down*|drain*|fail*) timeout 5 scontrol update nodename="$host" state=resume >/dev/null 2>&1 ;;
  esac
  sleep 1
done
node_idle || {
  tail_log "$logs/slurmd.log"; tail_log "$logs/slurmctld.log"
  fail "the node $host did not become idle (sinfo says: $(timeout 5 sinfo -h -o '%T %E' 2>&1 | head -n 1))"
}

# 5. A job through the cluster.
out=$(timeout 60 srun --job-name=kmaha-slurm-up --ntasks=1 --cpus-per-task=1 \
        --mem-per-cpu=16 --time=1 hostname 2>&1) ||
  { echo "$out" >&2; tail_log "$logs/slurmd.log"; fail "a test job (srun hostname) did not run"; }
echo "Slurm is up: node $host (127.0.0.1), $cpus CPUs, ${mem_mb} MB, partition main; test job ran on $out"
