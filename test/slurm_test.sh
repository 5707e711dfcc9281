#!/bin/bash
# slurm_test.sh - FMPL jobs started by Slurm's `srun --mpi=pmix`, as on a
# cluster: a private Slurm (munged, slurmctld, one slurmd per host) on
# network-namespace hosts (test/netns.sh), stopped afterwards even when
# the test fails.
#
#   test/slurm_test.sh [NAME...]        from any directory, as root
#
# Needs Debian's slurmctld, slurmd, slurm-client, munge and
# slurm-wlm-basic-plugins (Slurm's PMIx plugin, mpi_pmix_v4.so; `make
# deps` installs them).  Nothing of the machine's own Slurm or munge is
# used or touched: the key, the configuration, the spool and state
# directories and the munge socket live in a temp dir, the daemons in
# namespaces of their own (their ports cannot meet anything else).
#
# Layout: the head h0 (10.211.0.1) runs slurmctld and every srun; hosts h1
# and h2 (10.211.0.2, .3) run a slurmd each, in a PID namespace of their
# own with a private /dev/shm (nothing of a job can reach the other host
# but through the network).  Each slurmd offers 4 CPUs.
# Cases (NAME/...):
#   one/...    one host: hello on 1 task, pingpong on 2, coll_ops on 3,
#              coll_halo and random on 4, examples/pdgesv and pdgesv_f on
#              a 2x2 grid (ScaLAPACK on fmpl-blacs), mpi_fmpl on 4 (Open
#              MPI and FMPL in one program)
#   two/...    srun -N 2: 2 hosts x 2 tasks, FMPL_VERBOSE=1: every rank
#              routes its host's peer over shm and the other host's over
#              libfabric (route lines checked), pingpong -m 4M with both
#              pairs across the hosts (the bytes eth0 sent are checked),
#              coll_ops, pdgesv 2x2, mpi_fmpl
#   kill/...   a task SIGKILLs itself mid-job (test/progs/kill), on one
#              host and across two: srun exits non-zero and names the
#              killed task, every survivor returns FMPL_ERR_PEER naming
#              the dead rank (across hosts Slurm may end a survivor
#              first: its PMIx server cancels the step when a task dies
#              by a signal), Slurm records the job FAILED, and no process
#              (but slurmd) nor /dev/shm entry is left on any host
#   stop       the daemons stop (scontrol shutdown), nothing is left
# With NAME arguments only the cases whose name contains one of them run
# (stop always does).  One PASS/FAIL line per case (a failure shows the
# job's output), then "N passed, M failed"; status 1 if anything failed.
# Where Slurm or munge cannot start here that is a loud FAIL, never a skip.
#
# Environment: SLURM_TEST_LIMIT (s per job, default 120), FMPL_TOP.
set -u

TOP=${FMPL_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
P=$TOP/test/progs
LIMIT=${SLURM_TEST_LIMIT:-120}
MB=$((1000 * 1000))

pass=0
fail=0
failed_names=()
SEL=("$@")
selected() {
    local pat
    [ ${#SEL[@]} -eq 0 ] && return 0
    for pat in "${SEL[@]}"; do
        case "$1" in *"$pat"*) return 0 ;; esac
    done
    return 1
}

now_ms() { date +%s%N | cut -c1-13; }

# the loud end when Slurm cannot be set up here
refused() {
    echo "FAIL slurm: $1"
    [ -n "${2:-}" ] && [ -s "$2" ] && tail -n 30 "$2" | sed 's/^/  | /'
    echo "0 passed, 1 failed"
    exit 1
}

for c in munged munge slurmctld slurmd srun scontrol sinfo; do
    command -v "$c" >/dev/null 2>&1 ||
        refused "'$c' is not installed (make deps installs slurmctld slurmd slurm-client munge)"
done
PMIX_PLUGIN=$(ls /usr/lib/*/slurm-wlm/mpi_pmix.so /usr/lib/slurm/mpi_pmix.so 2>/dev/null | head -n 1)
[ -n "$PMIX_PLUGIN" ] ||
    refused "Slurm's PMIx plugin (mpi_pmix.so, in slurm-wlm-basic-plugins) is not installed"

rm -rf "$TOP/test/logs/slurm"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-slurm.XXXXXX") || exit 1
# munged wants every directory above its socket searchable by all
chmod 755 "$WORK"
tmp=$WORK/out.d
mkdir -p "$tmp" "$WORK/key" "$WORK/msock" "$WORK/state" "$WORK/log"
chmod 700 "$WORK/key"
chmod 755 "$WORK/msock"
MUNGE_SOCK=$WORK/msock/munge.sock

# slurm_stop: the daemons ended (after netns_cleanup has ended everything
# in the namespaces: slurmctld, the slurmds and what they ran), munged
# too; then the temp dir goes.
slurm_stop() {
    local pid
    # the daemons' logs outlive the run (test/logs/slurm/)
    mkdir -p "$TOP/test/logs/slurm" && cp "$WORK"/log/* "$TOP/test/logs/slurm/" 2>/dev/null
    pid=$(cat "$WORK/msock/munged.pid" 2>/dev/null)
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null
        for _i in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
    fi
    rm -rf "$WORK"
}
# shellcheck disable=SC2034 # eval'ed by test/netns.sh's trap
NETNS_ATEXIT=slurm_stop
trap slurm_stop EXIT

# shellcheck source=test/netns.sh disable=SC1091
. "$TOP/test/netns.sh"
netns_setup 2 || refused "cannot make the namespace hosts (test/netns.sh said why above)"
# shellcheck disable=SC2086 # lists of words
set -- $NETNS_HOSTS
H1=$1 H2=$2
# shellcheck disable=SC2086
set -- $NETNS_ADDRS
A1=$1 A2=$2
HEAD_ADDR=$NETNS_NET.1

# ---- munge and Slurm -----------------------------------------------------
dd if=/dev/urandom of="$WORK/key/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$WORK/key/munge.key"
munged --force --socket="$MUNGE_SOCK" --key-file="$WORK/key/munge.key" \
    --pid-file="$WORK/msock/munged.pid" --seed-file="$WORK/key/seed" \
    --log-file="$WORK/log/munged.log" 9>&- ||
    refused "munged does not start" "$WORK/log/munged.log"
munge -S "$MUNGE_SOCK" -n </dev/null | unmunge -S "$MUNGE_SOCK" >/dev/null 2>&1 ||
    refused "munge cannot encode and decode a credential" "$WORK/log/munged.log"

export SLURM_CONF=$WORK/slurm.conf
# What a cluster would have, cut to one partition of two nodes.  The
# nodes claim 4 CPUs each (config_overrides: the 2 cores are shared by the
# namespace hosts); no cgroups (proctrack/linuxproc finds a job's
# processes by parentage) and no accounting database: the job completion
# log (jobcomp/filetxt) records each job's final state.
cat >"$SLURM_CONF" <<EOF
ClusterName=fmpltest
SlurmctldHost=$NETNS_HEAD($HEAD_ADDR)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool/%n
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.%n.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$WORK/log/jobcomp.txt
MailProg=/bin/true
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillWait=2
MinJobAge=600
InactiveLimit=0
NodeName=$H1 NodeAddr=$A1 CPUs=4 RealMemory=1000 State=UNKNOWN
NodeName=$H2 NodeAddr=$A2 CPUs=4 RealMemory=1000 State=UNKNOWN
PartitionName=fmpl Nodes=$H1,$H2 Default=YES MaxTime=10 State=UP OverSubscribe=YES
EOF
mkdir -p "$WORK/spool/$H1" "$WORK/spool/$H2"
# Each slurmd gets its own copy of the configuration, with an mpi.conf
# naming a PMIx client directory of its own: the PMIx plugin's default
# (TmpFS/spmix_appdir_<uid>_<job>.<step>) is the same path on every node,
# and these "hosts" share one /tmp.
for h in "$H1" "$H2"; do
    mkdir -p "$WORK/etc/$h" "$WORK/pmix/$h"
    cp "$SLURM_CONF" "$WORK/etc/$h/slurm.conf"
    echo "PMIxCliTmpDirBase=$WORK/pmix/$h" >"$WORK/etc/$h/mpi.conf"
done

# slurmd starts its cgroup plugin even when no plugin of ours uses
# cgroups, and fails where /sys/fs/cgroup holds nothing - as in a network
# namespace, whose /sys is a fresh sysfs.  A tmpfs there is what the
# plugin looks for (a cgroup v1 layout, with systemd's named hierarchy:
# here one of our own, gone with the host's mount namespace); no job is
# put in a cgroup.
CGROUP="mount -t tmpfs -o mode=755 fmpl-cgroup /sys/fs/cgroup && mkdir /sys/fs/cgroup/systemd &&"
CGROUP="$CGROUP mount -t cgroup -o none,name=fmplslurm$$ cgroup /sys/fs/cgroup/systemd || exit 1;"
# slurmctld in the head, under the head's name (it checks that it runs on
# SlurmctldHost); a slurmd on each host through the namespaces' remote
# agent (hostname, PID namespace, private /dev/shm: test/netns.sh)
ip netns exec "$NETNS_HEAD" unshare --uts sh -c \
    "hostname $NETNS_HEAD && exec slurmctld -D -f $SLURM_CONF" \
    >"$WORK/log/slurmctld.out" 2>&1 9>&- &
"$NETNS_DIR/nsrsh" "$A1" "$CGROUP slurmd -D -N $H1 -f $WORK/etc/$H1/slurm.conf" >"$WORK/log/slurmd1.out" 2>&1 9>&- &
"$NETNS_DIR/nsrsh" "$A2" "$CGROUP slurmd -D -N $H2 -f $WORK/etc/$H2/slurm.conf" >"$WORK/log/slurmd2.out" 2>&1 9>&- &

# srun, sinfo, scontrol: in the head
inhead() { ip netns exec "$NETNS_HEAD" "$@"; }
up=0
for _ in $(seq 1 100); do
    if [ "$(inhead sinfo -h -N -o '%N %t' 2>/dev/null | grep -c ' idle$')" = 2 ]; then
        up=1
        break
    fi
    sleep 0.3
done
if [ $up = 0 ]; then
    inhead sinfo -N 2>&1 | sed 's/^/  | /'
    cat "$WORK"/log/slurm*.log "$WORK"/log/*.out >"$tmp/out" 2>/dev/null
    refused "slurmctld and two slurmds did not come up within 30 s" "$tmp/out"
fi
echo "slurm: slurmctld on $NETNS_HEAD, slurmd on $H1 ($A1) and $H2 ($A2); $(srun --version)"

# ---- jobs --------------------------------------------------------------------
note=""
# result NAME WHY START_MS
result() {
    local ms secs
    ms=$(( $(now_ms) - $3 ))
    secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
    if [ -z "$2" ]; then
        pass=$((pass + 1))
        echo "PASS $1 ($secs s)${note:+: $note}"
    else
        fail=$((fail + 1))
        failed_names+=("$1")
        echo "FAIL $1 ($secs s): $2"
        [ -s "$tmp/out" ] && tail -n 40 "$tmp/out" | sed 's/^/  | /'
    fi
    note=""
}

# srun_job NAME SRUN_ARGS...: srun in the head, output in $tmp/out; sets
# st (its status) and why (a time limit)
srun_job() {
    local name=$1 t0
    shift
    why=""
    t0=$(now_ms)
    # in the background: a signal to this script runs its trap at once
    timeout -k 10 "$LIMIT" ip netns exec "$NETNS_HEAD" srun --mpi=pmix -J "$name" -t 5 \
        "$@" >"$tmp/out" 2>&1 </dev/null 9>&- &
    wait $!
    st=$?
    # 124: timeout ended it; 137 after the limit: it had to KILL (137
    # before it is srun's own status for a task killed by SIGKILL)
    if [ $st = 124 ] || { [ $st = 137 ] && [ $(( $(now_ms) - t0 )) -ge $((LIMIT * 1000)) ]; }; then
        why="time limit of $LIMIT s reached"
    fi
}

# job NAME CHECK SRUN_ARGS...: passes when srun exits 0 and CHECK (reading
# $tmp/out; may set why and note) finds nothing wrong
job() {
    local name=$1 check=$2 t0
    shift 2
    selected "$name" || return 0
    t0=$(now_ms)
    srun_job "$name" "$@"
    if [ -z "$why" ] && [ $st != 0 ]; then
        why="srun exit status $st"
    elif [ -z "$why" ]; then
        $check
    fi
    result "$name" "$why" "$t0"
}

# expect_ok PROG: the program's own "OK <prog>" line
expect_ok() { grep -q "^OK " "$tmp/out" || why="no OK line"; }
check_hello() {
    local n
    n=$(grep -c 'hello' "$tmp/out")
    [ "$n" -ge 1 ] || why="no hello line"
}
check_pdgesv() {
    local prog=$1 line
    line=$(grep -E "^$prog: n=" "$tmp/out" | tail -n 1)
    if [ "$(grep -cE "^$prog: n=.*: PASS\$" "$tmp/out")" != 1 ] || grep -q FAIL "$tmp/out"; then
        why="no $prog PASS line"
    else
        note=${line#*: }
    fi
}
check_pdgesv_c() { check_pdgesv pdgesv; }
check_pdgesv_f() { check_pdgesv pdgesv_f; }
# bootstrap: every rank 0..N-1 of an N-task job says it came up through
# Slurm's PMIx server (FMPL_VERBOSE=1), so srun did not start N singletons
check_boot() {
    local n=$1 r
    for r in $(seq 0 $((n - 1))); do
        grep -q "rank $r: bootstrap pmix: rank $r of $n, job slurm_pmix" "$tmp/out" || {
            why="rank $r did not bootstrap through Slurm's PMIx as rank $r of $n"; return; }
    done
}
check_ok4_boot() { expect_ok; [ -z "$why" ] && check_boot 4; }
check_ok2_boot() { expect_ok; [ -z "$why" ] && check_boot 2; }
check_ok3_boot() { expect_ok; [ -z "$why" ] && check_boot 3; }

V="--export=ALL,FMPL_VERBOSE=1"
ONE="-N 1 -w $H1"
# shellcheck disable=SC2086 # option lists
{
job one/hello_1 check_hello $ONE -n 1 "$TOP/examples/hello"
job one/pingpong_2 check_ok2_boot $ONE -n 2 $V "$P/pingpong" -m 1M
job one/coll_ops_3 check_ok3_boot $ONE -n 3 $V "$P/coll_ops" -M 64K
job one/coll_halo_4 expect_ok $ONE -n 4 "$P/coll_halo" -g 2x2x1 -m
job one/random_4 expect_ok $ONE -n 4 "$P/random"
job one/pdgesv_4 check_pdgesv_c $ONE -n 4 "$TOP/examples/pdgesv" -n 500 -nb 24 -p 2 -q 2
job one/pdgesv_f_4 check_pdgesv_f $ONE -n 4 "$TOP/examples/pdgesv_f" -n 500 -nb 24 -p 2 -q 2
job one/mpi_fmpl_4 check_ok4_boot $ONE -n 4 $V "$P/mpi_fmpl"
}

# ---- two hosts ---------------------------------------------------------------
# libfabric and Open MPI on the hosts' eth0 (the namespaces' network)
NET="--export=ALL,FMPL_VERBOSE=1,FI_TCP_IFACE=$NETNS_IFACE,FI_NET_IFACE=$NETNS_IFACE"
NET="$NET,OMPI_MCA_btl_tcp_if_include=$NETNS_NET.0/24,OMPI_MCA_oob_tcp_if_include=$NETNS_NET.0/24"
TWO="-N 2 --ntasks-per-node=2"

# every rank printed a route line; the routes name shm (its host's peer)
# and ofi (the other host's)
check_routes() {
    local r
    for r in 0 1 2 3; do
        grep -q "rank $r:.*route:" "$tmp/out" || {
            why="rank $r printed no \"route:\" line (FMPL_VERBOSE=1)"; return; }
    done
    grep 'route:' "$tmp/out" | grep -q ofi || why="no route line names ofi"
    grep 'route:' "$tmp/out" | grep -q shm || why="no route line names shm"
}
check_two() {
    expect_ok
    [ -z "$why" ] && check_boot 4
    [ -z "$why" ] && check_routes
}
# pingpong -m 4M with -m cyclic: ranks 0,2 on h1 and 1,3 on h2, so both
# pairs cross the hosts: each host must have sent >= 16 MB on eth0
check_two_traffic() {
    local d1 d2
    check_two
    [ -n "$why" ] && return
    d1=$(( $(netns_tx_bytes 1) - tx1 ))
    d2=$(( $(netns_tx_bytes 2) - tx2 ))
    note="$H1 sent $((d1 / MB)) MB, $H2 $((d2 / MB)) MB on eth0"
    if [ $d1 -lt $((16 * MB)) ] || [ $d2 -lt $((16 * MB)) ]; then
        why="too little traffic between the hosts ($note)"
    fi
}
check_two_pdgesv() { check_pdgesv pdgesv; [ -z "$why" ] && check_boot 4; }
tx1=$(netns_tx_bytes 1) tx2=$(netns_tx_bytes 2)
# shellcheck disable=SC2086 # option lists
{
job two/pingpong check_two_traffic $TWO -m cyclic -n 4 $NET "$P/pingpong" -m 4M
job two/coll_ops check_two $TWO -n 4 $NET "$P/coll_ops" -M 64K
job two/pdgesv check_two_pdgesv $TWO -n 4 $NET "$TOP/examples/pdgesv" -n 500 -nb 24 -p 2 -q 2
job two/mpi_fmpl check_two $TWO -n 4 $NET "$P/mpi_fmpl"
}

# ---- a task killed -------------------------------------------------------
# host_pids HOSTNUM: the processes on host HOSTNUM but its slurmd (and the
# agent's sh, init of the host's PID namespace)
host_pids() {
    local p c
    for p in $(netns_pids "$NETNS_PREFIX$1"); do
        c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
        case $c in slurmd|sh|unshare) ;; *) echo "$p($c)" ;; esac
    done
}
# host_shm HOSTNUM: the entries in host HOSTNUM's private /dev/shm
host_shm() {
    local p
    for p in $(netns_pids "$NETNS_PREFIX$1"); do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurmd ] || continue
        ls -A "/proc/$p/root/dev/shm" 2>/dev/null
        return
    done
}
# left_behind: processes or /dev/shm entries still on the hosts (waits up
# to 10 s for Slurm to finish the job)
left_behind() {
    local i left
    for i in $(seq 1 50); do
        left="$(host_pids 1)$(host_pids 2)$(host_shm 1)$(host_shm 2)"
        [ -z "$left" ] && return 0
        sleep 0.2
    done
    echo "$(host_pids 1) $(host_pids 2) /dev/shm: $(host_shm 1) $(host_shm 2)"
}

# kill_job NAME NTASKS MAY_END SRUN_ARGS...: test/progs/kill, its last
# rank dies; MAY_END=1: survivors may be ended by Slurm instead
kill_job() {
    local name=$1 n=$2 may_end=$3 t0 victim r left state ended
    shift 3
    selected "$name" || return 0
    victim=$((n - 1))
    t0=$(now_ms)
    srun_job "$name" "$@" -K0 -n "$n" "$P/kill" -d 1
    if [ -n "$why" ]; then
        :
    elif [ $st = 0 ]; then
        why="srun exited 0 although task $victim was killed"
    elif ! grep -Eq "task $victim: Killed|tasks? [-0-9,]*$victim[^0-9].*Killed" "$tmp/out"; then
        why="srun's output does not name task $victim as killed"
    else
        # a survivor reports FMPL_ERR_PEER naming the victim - unless Slurm
        # ended it first: its PMIx server cancels the whole step when a
        # task dies by a signal, which across hosts comes before FMPL
        # hears of the death (on one host FMPL sees it at once)
        ended=0
        for r in $(seq 0 $((victim - 1))); do
            if grep -q "kill: rank $r: FMPL_ERR_PEER from .*src=$victim" "$tmp/out"; then
                continue
            elif [ "$may_end" = 1 ] && grep -q "CANCELLED AT" "$tmp/out" &&
                 grep -Eq "error: [^:]*: tasks? ([0-9]+[-,])*$r([-,][0-9]+)*: Killed" "$tmp/out"; then
                ended=$((ended + 1))
            else
                why="rank $r did not report FMPL_ERR_PEER from rank $victim"
                break
            fi
        done
    fi
    if [ -z "$why" ]; then
        state=$(grep "Name=$name " "$WORK/log/jobcomp.txt" 2>/dev/null | tail -n 1 |
                grep -o 'JobState=[A-Z_]*')
        [ "$state" = JobState=FAILED ] || why="Slurm recorded ${state:-no state} for the job, not FAILED"
    fi
    if [ -z "$why" ]; then
        left=$(left_behind) || true
        [ -n "$left" ] && why="left behind: $left"
        note="srun status $st, task $victim named; survivors: $((victim - ended)) FMPL_ERR_PEER"
        note="$note naming rank $victim, $ended ended by Slurm; Slurm: FAILED; nothing left"
    fi
    result "$name" "$why" "$t0"
}
# shellcheck disable=SC2086 # option lists
{
kill_job kill/one_host 3 0 $ONE
kill_job kill/two_hosts 4 1 $TWO -m cyclic $NET
}

# ---- stop: the daemons end, nothing is left ---------------------------------
t0=$(now_ms)
why=""
left=$(left_behind) || true
[ -n "$left" ] && why="left behind by the jobs: $left"
inhead scontrol shutdown >/dev/null 2>&1 || why="$why scontrol shutdown failed;"
for _ in $(seq 1 50); do
    [ -z "$(netns_pids)" ] && break
    sleep 0.2
done
rest=""
for p in $(netns_pids); do rest="$rest $p($(cat "/proc/$p/comm" 2>/dev/null))"; done
[ -n "$rest" ] && why="$why still running after scontrol shutdown:$rest"
note="slurmctld and both slurmds stopped"
result stop "$why" "$t0"

echo "$pass passed, $fail failed"
[ $fail = 0 ] || echo "failed: ${failed_names[*]}"
[ $fail = 0 ]
