#!/bin/bash
# multihost_test.sh - FMPL jobs across "hosts": network namespaces joined by
# veth pairs (test/netns.sh), one job launched over all of them by Open
# MPI's mpirun, whose remote agent enters a namespace instead of ssh, so
# FMPL bootstraps through PMIx exactly as on a cluster.
#
#   test/multihost_test.sh [NAME...]     from any directory, as root
#
# Three namespaces are made: h1, h2, h3 (10.211.0.2-4; each job's processes
# on a host get the host's name and, unless said otherwise below, their own
# PID namespace and /dev/shm, so no shared memory joins two hosts) behind
# a head h0 where mpirun runs.  Cases, named MODE/PROGRAM:
#   ofi/...      FMPL_TRANSPORT=ofi FI_PROVIDER=tcp: every peer through
#                libfabric's tcp provider (pinned to eth0, FI_TCP_IFACE)
#   default/...  nothing set: FMPL routes per peer (same host name: shm,
#                else ofi) and picks the libfabric provider itself (net
#                where libfabric has it); the bytes pingpong sends between
#                hosts are checked, and so are the route and provider lines
#                FMPL_VERBOSE=1 prints (each rank names shm and ofi, and
#                the provider is the one FMPL prefers)
# each of them on 2 hosts x 2 ranks: pingpong -m 4M (--map-by node: both
# pairs cross hosts; the bytes eth0 sent are checked), random, coll_ops
# -M 64K, coll_halo -g 2x2x1 -m, mpi_fmpl (Open MPI over its tcp BTL beside
# FMPL) and the ScaLAPACK solve examples/pdgesv on a 2x2 grid; then
#   3hosts/...   ofi on 3 hosts x 1 rank over the net provider (tcp where
#                libfabric has no net): pingpong, coll_ops, pdgesv 1x3
#   kill/...     a rank killed on host 2 (test/progs/kill: the last rank
#                SIGKILLs itself; or kill -9 from outside of rank 2, found
#                with `ip netns pids`): mpirun must exit non-zero within
#                MH_FAULT_LIMIT s, name the dead rank, and leave no process
#                in any namespace; under `mpirun --enable-recovery` the
#                job goes on: the survivor on the victim's host must end
#                with FMPL_ERR_PEER within 5 s, told by the PMIx server's
#                process table, the others by FMPL_PEER_TIMEOUT
#   cleanup      the namespaces, their processes and the temp dir are gone
#                after netns_cleanup (which also runs on exit, failure, and
#                INT/TERM/HUP)
# With NAME arguments only the cases whose name contains one of them run
# (cleanup always does).  Prints one PASS/FAIL line per case, the output of
# failed ones, then "N passed, M failed"; exits 1 if anything failed.  If
# the machine refuses namespaces (not root, no iproute2, no veth/bridge)
# that is a loud FAIL, never a skip.
#
# Environment: MH_TIME_LIMIT (s per job, default 180), MH_FAULT_LIMIT (s
# from the kill to mpirun's exit, default 60), MH_ROUTED (1/0: force the
# routing checks on/off; default on),
# FMPL_TOP (repository root).
set -u

TOP=${FMPL_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
P=$TOP/test/progs
# shellcheck source=test/fault_lib.sh
. "$TOP/test/fault_lib.sh"
LIMIT=${MH_TIME_LIMIT:-180}
FLIMIT=${MH_FAULT_LIMIT:-60}
MB=$((1000 * 1000))

pass=0
fail=0
failed_names=()

selected() {
    local pat
    [ ${#SEL[@]} -eq 0 ] && return 0
    for pat in "${SEL[@]}"; do
        case "$1" in *"$pat"*) return 0 ;; esac
    done
    return 1
}
SEL=("$@")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/multihost_test.XXXXXX") || exit 1
# run after netns_cleanup by netns.sh's trap
# shellcheck disable=SC2034,SC2016 # read and eval'ed by test/netns.sh
NETNS_ATEXIT='rm -rf "$tmp"'
trap 'rm -rf "$tmp"' EXIT

# shellcheck source=test/netns.sh disable=SC1091
. "$TOP/test/netns.sh"

now_ms() { date +%s%N | cut -c1-13; }

# result NAME WHY START_MS: a PASS line when WHY is empty, else a FAIL line
# with the job's output
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

# job NAME CHECK MPIRUN_ARGS...: one job in the namespaces; passes when
# mpirun exits 0 in time and the function CHECK (reading $tmp/out, the
# output; may set why and note) finds nothing wrong.
note=""
job() {
    local name=$1 check=$2 t0 st
    shift 2
    selected "$name" || return 0
    why=""
    tx1=$(netns_tx_bytes 1) tx2=$(netns_tx_bytes 2)
    t0=$(now_ms)
    # in the background: a signal to this script then runs its trap at
    # once (netns_cleanup) instead of after the job
    timeout -k 10 "$LIMIT" "$NETNS_DIR/mpirun" "$@" >"$tmp/out" 2>&1 </dev/null &
    wait $!
    st=$?
    # 124: timeout ended it; 137 after the limit: it had to KILL (137
    # before it is mpirun's own status for a rank killed by SIGKILL)
    if [ $st = 124 ] || { [ $st = 137 ] && [ $(( $(now_ms) - t0 )) -ge $((LIMIT * 1000)) ]; }; then
        why="time limit of $LIMIT s reached"
    elif [ $st != 0 ]; then
        why="mpirun exit status $st"
    else
        $check
    fi
    result "$name" "$why" "$t0"
}

ok() { :; }

# pdgesv: process {0,0} printed its result line ending in ": PASS"
check_pdgesv() {
    local line
    line=$(grep -E '^pdgesv: n=' "$tmp/out" | tail -n 1)
    if [ "$(grep -cE '^pdgesv: n=.*: PASS$' "$tmp/out")" != 1 ] || grep -q FAIL "$tmp/out"; then
        why="no pdgesv PASS line"
    else
        note=${line#*: }
    fi
}

# traffic: both hosts sent at least 16 MB on eth0 (pingpong -m 4M with
# pairs across hosts moves ~40 MB each way), so the data did cross the
# veth pair and did not take a shortcut through the machine
check_traffic() {
    local d1 d2
    d1=$(( $(netns_tx_bytes 1) - tx1 ))
    d2=$(( $(netns_tx_bytes 2) - tx2 ))
    note="h1 sent $((d1 / MB)) MB, h2 $((d2 / MB)) MB on eth0"
    if [ $d1 -lt $((16 * MB)) ] || [ $d2 -lt $((16 * MB)) ]; then
        why="too little traffic between the hosts ($note): not over the network"
    fi
}

# ---- ROUTING: per-peer routing by hostname --------------------------------
# The default mode runs on separate hosts (own PID namespace and /dev/shm
# each: shm between hosts is impossible, as on real machines), its traffic
# is checked like the ofi mode's, and every rank must report its routes,
# naming both shm and ofi.  MH_ROUTED=0 turns the block off (FMPL then
# meets shared namespaces, as a build without routing needed).
routed=${MH_ROUTED:-1}

# check_routes: every rank 0..N-1 printed a route line; with 2 ranks per
# host each one has peers on its own host (shm) and on the other (ofi)
check_routes() {
    local n=$1 r
    for ((r = 0; r < n; r++)); do
        if ! grep -q "rank $r:.*route:" "$tmp/out"; then
            why="rank $r printed no \"route:\" line (FMPL_VERBOSE=1)"
            return
        fi
    done
    grep 'route:' "$tmp/out" | grep -q ofi || why="no route line names ofi"
    grep 'route:' "$tmp/out" | grep -q shm || why="no route line names shm"
    if [ -z "$why" ] && [ "$(grep -c "ofi: provider $AUTO_PROV," "$tmp/out")" -ne "$n" ]; then
        why="not every rank chose the provider $AUTO_PROV: $(grep -o 'ofi: provider [^,]*' "$tmp/out" | sort | uniq -c | tr '\n' ' ')"
    fi
}
check_routes_traffic() {
    check_routes 4
    [ -n "$why" ] || check_traffic
}
check_routes4() { check_routes 4; }
# ---- end of ROUTING ------------------------------------------------------

# ---- the namespaces --------------------------------------------------------
t0=$(now_ms)
if ! netns_setup 3 >"$tmp/out" 2>&1; then
    result "netns setup" "the machine refused network namespaces (see above)" "$t0"
    echo "$pass passed, $fail failed"
    exit 1
fi
cat "$tmp/out"
H2="--hostfile $NETNS_DIR/hosts.2"
H3="--hostfile $NETNS_DIR/hosts.3"
OFI="-x FMPL_TRANSPORT=ofi -x FI_PROVIDER=tcp"
# the provider FMPL picks by itself among the ones for tcp networks
# (src/transport/ofi/ofi_ops.c): net, the rewrite of tcp, where it exists
AUTO_PROV="tcp;ofi_rxm"
fi_info -p net -t FI_EP_RDM >/dev/null 2>&1 && AUTO_PROV=net
OFI3="-x FMPL_TRANSPORT=ofi -x FI_PROVIDER=${AUTO_PROV%%;*}"

# ---- the two modes, 2 hosts x 2 ranks ----------------------------------------
for mode in ofi default; do
    if [ $mode = ofi ]; then
        E=$OFI traffic=check_traffic routes=ok
        export FMPL_NETNS_SHM=private
    elif [ "$routed" = 1 ]; then
        E="-x FMPL_VERBOSE=1" traffic=check_routes_traffic routes=check_routes4
        export FMPL_NETNS_SHM=private
    else
        E="" traffic=check_traffic routes=ok
        export FMPL_NETNS_SHM=shared
    fi
    # shellcheck disable=SC2086 # $H2 and $E are lists of words
    {
    job $mode/pingpong $traffic $H2 $E -n 4 --map-by node "$P/pingpong" -m 4M
    job $mode/random $routes $H2 $E -n 4 "$P/random"
    job $mode/coll_ops $routes $H2 $E -n 4 "$P/coll_ops" -M 64K
    job $mode/coll_halo $routes $H2 $E -n 4 "$P/coll_halo" -g 2x2x1 -m
    if [ -x "$P/mpi_fmpl" ]; then
        job $mode/mpi_fmpl $routes $H2 $E -n 4 "$P/mpi_fmpl"
    fi
    job $mode/pdgesv check_pdgesv $H2 $E -n 4 "$TOP/examples/pdgesv" -n 500 -nb 24 -p 2 -q 2
    }
done

# ---- 3 hosts x 1 rank, all over libfabric ------------------------------------
export FMPL_NETNS_SHM=private
# shellcheck disable=SC2086 # $H3 and $OFI3 are lists of words
{
job 3hosts/pingpong ok $H3 $OFI3 -n 3 "$P/pingpong" -m 1M
job 3hosts/coll_ops ok $H3 $OFI3 -n 3 "$P/coll_ops" -M 64K
job 3hosts/pdgesv check_pdgesv $H3 $OFI3 -n 3 "$TOP/examples/pdgesv" -n 300 -nb 16 -p 1 -q 3
}

# ---- faults -------------------------------------------------------------------
# wait_clean: no process left in any namespace (mpirun, daemons, ranks),
# waiting up to 10 s for them to go; sets why otherwise
wait_clean() {
    local t=0 left
    while left=$(netns_pids) && [ -n "$left" ] && [ $t -lt 100 ]; do
        sleep 0.1
        t=$((t + 1))
    done
    if [ -n "$left" ]; then
        # shellcheck disable=SC2086 # a list of PIDs
        why="processes left in the namespaces after mpirun exited: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)" | tr '\n' ';')"
    fi
}

# fault NAME RANK MODE_ARGS -- HOW: start `kill` on 2 hosts x 2 ranks and
# end rank RANK (on host 2): HOW = self (the program's victim, the last
# rank, SIGKILLs itself after 0.5 s) or kill9 (kill -9 from outside, found
# with ip netns pids, while the victim waits 300 s).  mpirun must end the
# job on both hosts with a non-zero status within FLIMIT s of the kill,
# name rank RANK and its signal, and leave nothing in the namespaces.
fault() {
    local name=$1 rank=$2 how=$3 t0 jp st pid hpid p tk t last
    shift 3
    selected "$name" || return 0
    why=""
    t0=$(now_ms)
    if [ "$how" = self ]; then
        # shellcheck disable=SC2086 # lists of words
        timeout -k 10 "$LIMIT" "$NETNS_DIR/mpirun" $H2 "$@" -n 4 "$P/kill" -d 0.5 \
            >"$tmp/out" 2>&1 </dev/null &
    else
        # shellcheck disable=SC2086 # lists of words
        timeout -k 10 "$LIMIT" "$NETNS_DIR/mpirun" $H2 "$@" -n 4 "$P/kill" -d 300 \
            >"$tmp/out" 2>&1 </dev/null &
    fi
    jp=$!
    # every rank is up once it printed "kill: rank R pid P"
    t=0
    while [ "$(grep -c '^kill: rank [0-9]* pid' "$tmp/out")" -lt 4 ] && [ $t -lt $((LIMIT * 10)) ] &&
          kill -0 $jp 2>/dev/null; do
        sleep 0.1
        t=$((t + 1))
    done
    tk=$(now_ms)
    if [ "$how" = kill9 ]; then
        # the PID rank RANK printed (inside host 2), then that process
        # among the ones ip netns pids lists in host 2
        hpid=$(sed -n "s/^kill: rank $rank pid \([0-9]*\) .*/\1/p" "$tmp/out" | head -n 1)
        pid=""
        t=0
        while [ -n "$hpid" ] && [ -z "$pid" ] && [ $t -lt 50 ]; do
            pid=$(netns_host_pid 2 "$hpid") || sleep 0.2
            t=$((t + 1))
        done
        if [ -z "$hpid" ]; then
            why="rank $rank printed no PID"
        elif [ -z "$pid" ]; then
            why="no process with PID $hpid in host 2 ($NETNS_PREFIX""2):"
            for p in $(netns_pids "$NETNS_PREFIX""2"); do
                why="$why $p=$(cat "/proc/$p/comm" 2>/dev/null)/$(awk '$1 == "NSpid:" { $1 = ""; print }' "/proc/$p/status" 2>/dev/null)"
            done
        else
            kill -9 "$pid"
            tk=$(now_ms)
        fi
    fi
    # mpirun must be gone within FLIMIT s of the kill
    t=0
    while kill -0 $jp 2>/dev/null && [ $t -lt $((FLIMIT * 10)) ]; do
        sleep 0.1
        t=$((t + 1))
    done
    if kill -0 $jp 2>/dev/null; then
        [ -n "$why" ] || why="mpirun still running $FLIMIT s after rank $rank died"
        netns_pids | xargs -r kill -9 2>/dev/null
    fi
    wait $jp
    st=$?
    last=$(( ($(now_ms) - tk) / 100 ))
    note="mpirun exit status $st, $((last / 10)).$((last % 10)) s after the kill"
    if [ -n "$why" ]; then
        :
    elif [ $st = 0 ]; then
        why="mpirun exited with status 0"
    elif [ $st = 124 ]; then
        why="mpirun hung until the time limit"
    elif ! grep -qE "rank $rank .*(signal 9|Killed)" "$tmp/out"; then
        why="mpirun's output does not name rank $rank and its signal"
    else
        wait_clean
    fi
    result "$name" "$why" "$t0"
}
# shellcheck disable=SC2086 # a list of words
{
fault kill/ofi_self 3 self $OFI
fault kill/ofi_kill9 2 kill9 $OFI
}
FMPL_NETNS_SHM=shared
[ "$routed" = 1 ] && FMPL_NETNS_SHM=private
fault kill/default_self 3 self

# recover NAME ACTIVITY MODE_ARGS: test/progs/fault on 2 hosts x 2 ranks
# under mpirun --enable-recovery, the job going on after its last rank
# (host 2) is killed.  Rank 2, beside it, must end with FMPL_ERR_PEER
# within 5 s, having read rank 3's death in the PMIx server's process
# table (FMPL_PMIX_POLL); Open MPI 4.1's daemons know their own host's
# processes only, so ranks 0 and 1 end by FMPL_PEER_TIMEOUT (3 s),
# within 10 s; no survivor may be named as failed by the server's word,
# and no rank may be left.  Open MPI 4.1.4's mpirun and the remote orted
# never exit after such a job across hosts (a bare PMIx client without
# FMPL shows it too), so once every rank is gone mpirun is told to go and
# what is left of Open MPI is killed.
recover() {
    local name=$1 act=$2 t0 jp t p left orte near
    shift 2
    selected "$name" || return 0
    why=""
    t0=$(now_ms)
    # shellcheck disable=SC2086 # lists of words
    timeout -k 10 "$LIMIT" "$NETNS_DIR/mpirun" $H2 --enable-recovery "$@" \
        -x FMPL_PEER_TIMEOUT=3 -n 4 "$P/fault" -a "$act" -f kill -t 300 \
        >"$tmp/out" 2>&1 </dev/null &
    jp=$!
    # the ranks are gone once none of the namespaces' processes is one
    t=0
    while [ $t -lt 300 ]; do
        sleep 0.1
        t=$((t + 1))
        [ "$(grep -c '^fault: rank [0-9]* pid' "$tmp/out")" -lt 4 ] && continue
        left=""
        for p in $(netns_pids); do
            [ "$(cat "/proc/$p/comm" 2>/dev/null)" = fault ] && left="$left $p"
        done
        [ -z "$left" ] && break
    done
    # what of Open MPI is still there once mpirun is told to go: killed
    kill $jp 2>/dev/null
    wait $jp
    sleep 1
    orte=$(netns_pids | tr '\n' ' ')
    # shellcheck disable=SC2086 # a list of PIDs
    [ -n "$orte" ] && kill -9 $orte 2>/dev/null
    if [ -n "$left" ]; then
        why="ranks still running 30 s after the start:$left"
    elif ! fault_survivors "$tmp/out" 3 10; then
        why=$fault_why
    elif ! grep -q "rank 2: the PMIx server's process table says rank 3 " "$tmp/out"; then
        why="rank 2 did not read rank 3's death in the PMIx server's process table"
    elif ! near=$(awk '/^fault: rank 3 fails/ { t = $NF } /^fault: rank 2: FMPL_ERR_PEER/ { d = $NF - t }
                       END { printf "%.3f", d; exit !(t > 0 && d < 5) }' "$tmp/out"); then
        why="rank 2 ended $near s after rank 3's death (limit 5 s)"
    elif grep -q "the PMIx server.* rank [0-2] " "$tmp/out"; then
        why="the PMIx server's word named a survivor"
    else
        note="rank 2 (the victim's host) $near s after the kill, slowest survivor $fault_late s"
        [ -n "$orte" ] && note="$note; Open MPI's processes killed after the job: $(echo $orte | wc -w)"
        wait_clean
    fi
    result "$name" "$why" "$t0"
}
# shellcheck disable=SC2086 # a list of words
{
recover kill/ofi_recovery_p2p p2p $OFI
recover kill/ofi_recovery_coll coll $OFI
}

# ---- cleanup: nothing of ours is left ----------------------------------------------
t0=$(now_ms)
why=""
dir=$NETNS_DIR
# shellcheck disable=SC2154 # set by test/netns.sh
made=$netns_made
netns_cleanup
for ns in $made; do
    if ip netns list | awk '{ print $1 }' | grep -qx "$ns"; then
        why="$why namespace $ns still exists;"
    fi
done
[ -e "$dir" ] && why="$why $dir still exists;"
note="removed $made"
result cleanup "$why" "$t0"

echo "$pass passed, $fail failed"
[ $fail = 0 ] || echo "failed: ${failed_names[*]}"
[ $fail = 0 ]
