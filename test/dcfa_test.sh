#!/bin/bash
# dcfa_test.sh - FMPL over InfiniBand verbs (FMPL_TRANSPORT=dcfa) on real
# verbs: soft-RoCE devices in a qemu guest (test/rxe_run.sh), since this
# machine's kernel has no RDMA.
#
#   test/dcfa_test.sh [-g 1|2] [-f]   from any directory, after `make`
#
# Two boots of the test bed: one guest (fmplrun's jobs over rxe0 and rxe1
# on a veth pair), then two guests joined by qemu's link (mpirun's jobs,
# ranks alternating between the guests); -g runs only one of them.  One
# boot runs every job of its part (rxe_run.sh -c; the boot is most of
# a short job's time under qemu's software emulation, which also makes
# everything 5-10x slower than native: the jobs are the suites' workers
# with short loops; -f adds the two-guest runs of coll_vops and of coll_nb
# without the agents, 80 s that make check leaves out).  Each job must
# exit 0 and print its OK line, except where a failure is what is tested.
# One guest:
#   point to point  pingpong (sizes to 1 MiB, fmpl_alloc_mem buffers,
#                   irecv), random traffic, early sends (of up to 2 KiB:
#                   a 200-byte one must go early, -L), spilled sends,
#                   synchronous sends, cancel (CAS by request: a rank in
#                   fmpl_finalize's fence must still answer - the
#                   transport's progress ticker), self sends, truncation
#   registrations   regcache: 100 receives in flight, then buffers unmapped
#                   and mapped again, discarded, freed and allocated again,
#                   both ways: the cache (said: hits, and invalidations)
#                   never uses a registration of memory that went; with a
#                   1 MiB cache (evicting) and with none
#   collectives     coll_ops, coll_comm, coll_args, coll_halo (2-D, 3-D,
#                   in parts), coll_vops, coll_neighbor, coll_nb (with
#                   the progress thread too), examples/fft3d
#   offload         the host agent running the nonblocking collectives
#                   (FMPL_DCFA_OFFLOAD): coll_nb with all of them there
#                   (the count said), with the progress thread beside,
#                   fft3d's ialltoall transpose, a rank killed in an
#                   offloaded ibcast and ialltoall (each survivor
#                   FMPL_ERR_PEER), a bad list refused
#   BLACS           blacs_p2p, blacs_coll; examples/pdgesv (ScaLAPACK)
#   trust           forge: a peer writing into another's mailbox as a
#                   third rank is dropped
#   modes           every job above in split mode (the host's agent owns
#                   the device context, the ranks map its queues: the
#                   default on rxe); 4 ranks name one agent; direct mode
#                   (FMPL_DCFA_AGENT=0) said, and pingpong, random, cancel,
#                   regcache, coll_ops and a killed rank in it; the agent
#                   killed (SIGKILL) in a job: the job fails, a rank naming
#                   it; no agent left behind at the end; a process of
#                   another user saying hello at the agent's socket gets
#                   nothing (and the job's own user does); another user's
#                   socket bound first under the agent's name is refused
#                   by the rank, naming its user (direct mode then, or
#                   fmpl_init failing with FMPL_DCFA_AGENT=1)
#   queue pairs     made on first use: a ring of 6 makes 2 a rank, all to
#                   all among 4 makes 3 (FMPL_VERBOSE's account)
#   faults          a rank killed while the others wait on it: each
#                   survivor gets FMPL_ERR_PEER, the job fails fast; a
#                   rank stopped before anyone talked to it: a connection
#                   request to it times out (FMPL_DCFA_CONNECT_TIMEOUT);
#                   FMPL_DCFA_DEVICE naming no device, FMPL_DCFA_PORT no
#                   active port: fmpl_init fails with the reason
#   direct mode     FMPL_VERBOSE=1 says the process owns its resources
#   libfabric       FMPL_TRANSPORT=ofi over libfabric's verbs provider
#                   (verbs;ofi_rxm): said, pingpong, random, coll_ops
# Two guests (mpirun --map-by node: every pair of neighbouring ranks
# crosses the link; FMPL bootstraps through PMIx):
#   placement       hosts: 2 ranks a guest, 2 hosts, dcfa, every pair's
#                   data intact; one agent a guest (FMPL_VERBOSE)
#   point to point  pingpong (to 1 MiB, and fmpl_alloc_mem buffers), random
#                   traffic among 4, cancel
#   collectives     coll_ops on WORLD (-E: the guests share no /tmp for its
#                   barrier epochs), coll_halo 2-D, coll_neighbor, coll_nb
#                   with the agents running them all (-f: coll_vops, and
#                   coll_nb by the ranks)
#   BLACS           examples/pdgesv (ScaLAPACK) on a 2x2 grid
#   faults          a rank on guest 2 killed: mpirun ends the job, naming
#                   it; with mpirun --enable-recovery, which does not, the
#                   survivors get FMPL_ERR_PEER (the transport's
#                   keepalive finds the dead rank), and so they do when it
#                   dies in an ialltoall the agents run; neither guest keeps a
#                   rank or an agent
# Prints one line per job and "dcfa_test: PASS" or "dcfa_test: FAIL (...)";
# the exit status is non-zero on any failure, and 125 when the test bed
# itself could not run (rxe_run.sh's: no qemu, no guest kernel - said, never
# passed silently).
set -u

if [ "${1:-}" != --in-guest ]; then
    top=$(cd "$(dirname "$0")/.." && pwd)
    parts="1 2" full=
    while [ $# -gt 0 ]; do
        case $1 in
            -g) case ${2:-} in
                    1 | 2) parts=$2; shift ;;
                    *) echo "usage: dcfa_test.sh [-g 1|2] [-f]" >&2; exit 2 ;;
                esac ;;
            -f) full=--full ;;
            *) echo "usage: dcfa_test.sh [-g 1|2] [-f]" >&2; exit 2 ;;
        esac
        shift
    done
    # the worst status of the parts: 125 (a test bed that could not run)
    # above a failure
    worst=0
    for g in $parts; do
        echo "dcfa_test: $g guest(s)"
        "$top/test/rxe_run.sh" -g "$g" -t "${DCFA_TEST_SECONDS:-1500}" \
            -c "$top/test/dcfa_test.sh" --in-guest $full
        st=$?
        if [ $st = 125 ] || { [ $st != 0 ] && [ $worst = 0 ]; }; then worst=$st; fi
    done
    if [ $worst != 0 ]; then
        echo "dcfa_test: FAIL (status $worst)"
    else
        echo "dcfa_test: PASS (guests: $parts)"
    fi
    exit $worst
fi

# ---- in the guest ---------------------------------------------------------
top=$(cd "$(dirname "$0")/.." && pwd)
run="$top/bin/fmplrun"
progs="$top/test/progs"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
export FMPL_TRANSPORT=dcfa
pass=0 fail=0

# report NAME SECS WHY: one PASS line when WHY is empty, else a FAIL line
# with the tail of the output
report() {
    if [ -z "$3" ]; then
        echo "PASS $1 ($2 s)"
        pass=$((pass + 1))
    else
        echo "FAIL $1: $3 ($2 s); output:"
        tail -n 25 "$tmp/out" | sed 's/^/  | /'
        fail=$((fail + 1))
    fi
}

# job NAME EXPECT NP [ENV=VAL...] -- PROG ARGS.  EXPECT: "ok" (status 0
# and, for a test worker, its "OK" line), "ok:PATTERN" (status 0 and the
# extended regular expression PATTERN in the output), "all:PATTERN" (status
# 0 and NP lines matching: one a rank), "one:PATTERN" (as all:, and what
# PATTERN matches is the same text on every line), "count:K:PATTERN" (status
# 0 and K lines matching) or "fail:PATTERN" (a failure status, not the time
# limit's, and PATTERN in the output).
job() {
    local name=$1 expect=$2 np=$3
    shift 3
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    local t0 t1 st
    t0=$(date +%s%N)
    env "${envs[@]}" timeout -k 10 300 "${launch[@]}" "$np" "$@" >"$tmp/out" 2>&1 </dev/null
    st=$?
    t1=$(date +%s%N)
    local secs=$(( (t1 - t0) / 1000000000 ))
    local ok=0
    case $expect in
        ok) [ $st = 0 ] && grep -q "^OK " "$tmp/out" && ok=1 ;;
        ok:*) [ $st = 0 ] && grep -qE -- "${expect#ok:}" "$tmp/out" && ok=1 ;;
        all:*) [ $st = 0 ] && [ "$(grep -cE -- "${expect#all:}" "$tmp/out")" = "$np" ] &&
            ok=1 ;;
        count:*) local k=${expect#count:}
            [ $st = 0 ] && [ "$(grep -cE -- "${k#*:}" "$tmp/out")" = "${k%%:*}" ] && ok=1 ;;
        one:*) [ $st = 0 ] && [ "$(grep -cE -- "${expect#one:}" "$tmp/out")" = "$np" ] &&
            [ "$(grep -oE -- "${expect#one:}" "$tmp/out" | sort -u | wc -l)" = 1 ] && ok=1 ;;
        fail:*) [ $st != 0 ] && [ $st != 124 ] && grep -qE -- "${expect#fail:}" "$tmp/out" &&
            ok=1 ;;
    esac
    local why=""
    [ $ok = 1 ] || why="exit status $st, expected ${expect}"
    report "$name" "$secs" "$why"
}

# fmplrun on one guest; mpirun with ranks alternating between two
if [ "${RXE_GUESTS:-1}" = 2 ]; then
    # shellcheck disable=SC2206  # RXE_MPIRUN is a command line
    launch=($RXE_MPIRUN --map-by node -n)
else
    launch=("$run" -t 240 -n)
fi
agents() { ps -e -o pid=,comm= | awk '$2 == "fmpl-dcfa-agent" { print $1 }'; }

if [ "${RXE_GUESTS:-1}" = 2 ]; then
    job "2 guests: hosts 4 (2 a guest)" ok 4 -- "$progs/hosts" -H 2 -m 256K
    job "2 guests: one agent a guest" \
        "all:dcfa: split mode \\(the host agent, pid [0-9]+, owns the device context" \
        2 FMPL_VERBOSE=1 -- "$progs/pingpong" -m 4K
    job "2 guests: pingpong 2" ok 2 -- "$progs/pingpong" -m 1M
    job "2 guests: pingpong 2 alloc irecv" ok 2 -- "$progs/pingpong" -a -i -m 256K
    job "2 guests: random 4" ok 4 -- "$progs/random" -s 5
    job "2 guests: cancel 2" ok 2 -- "$progs/cancel"
    job "2 guests: coll_ops 4" ok 4 -- "$progs/coll_ops" -E -c w -M 64K -A 1K -R 10
    job "2 guests: coll_halo 4 2-D" ok 4 -- "$progs/coll_halo" -g 2x2 -e 8 -w 2 -m -i 10
    if [ "${2:-}" = --full ]; then
        job "2 guests: coll_vops 4" ok 4 -- "$progs/coll_vops" -c w -R 10
        job "2 guests: coll_nb 4" ok 4 -- "$progs/coll_nb" -E -c w -R 10
    fi
    job "2 guests: coll_neighbor 4" ok 4 -- "$progs/coll_neighbor" -g 3
    # every nonblocking collective the agents can run, run by the agents
    # one rank a guest: the agents have a CPU each, the default takes the
    # large ones (auto)
    job "2 guests: offload: auto, 1 rank a guest" \
        "all:dcfa: the host agent runs the nonblocking bcast, allgather, alltoall of 262144" 2 \
        FMPL_VERBOSE=1 -- "$progs/pingpong" -m 4K
    job "2 guests: offload: coll_nb 4" "all:dcfa: the host agent ran [1-9][0-9]* collectives" 4 \
        FMPL_VERBOSE=1 FMPL_DCFA_OFFLOAD=all FMPL_DCFA_OFFLOAD_MIN=0 -- "$progs/coll_nb" -E -c w -R 2 \
        -M 64K
    job "2 guests: pdgesv 4" "ok:^pdgesv: n=.*: PASS$" 4 -- "$top/examples/pdgesv" -n 200 -nb 16 -p 2 -q 2
    # rank 3 (on guest 2) kills itself while the others wait on it
    job "2 guests: kill 4, rank 3 on guest 2" "fail:rank 3 with PID [0-9]+ on node 169\\.254\\.79\\.2 exited on signal 9" \
        4 -- "$progs/kill" -w recv
    # the same with a runtime that keeps the job going (--enable-recovery,
    # under which mpirun's own status is 0): only FMPL can end the
    # survivors' waits - its keepalive to the peer waited on (dcfa_ops.c)
    # finds the dead rank's queue pair gone.  Rank 2 (guest 1) dies 3 s in,
    # when ranks 0 (guest 1) and 1 (guest 2) wait on it, connected.
    job "2 guests: kill 3 under --enable-recovery: both survivors FMPL_ERR_PEER" \
        "count:2:kill: rank [01]: FMPL_ERR_PEER from fmpl_recv\\(src=2\\)" 3 \
        FMPL_DCFA_CONNECT_TIMEOUT=20 -- --enable-recovery "$progs/kill" -w recv -d 3
    # ... and during an ialltoall the agents run: the survivors' ranks look
    # at the peers themselves (their keepalives) while their agents wait
    job "2 guests: offload: kill 3 in ialltoall under --enable-recovery" \
        "count:2:coll_kill: rank [01]: FMPL_ERR_PEER from fmpl_ialltoall" 3 \
        FMPL_DCFA_OFFLOAD=all FMPL_DCFA_OFFLOAD_MIN=0 FMPL_DCFA_CONNECT_TIMEOUT=20 -- \
        --enable-recovery \
        "$progs/coll_kill" -w ialltoall
    # nothing left on either guest: no rank, no agent (a second for the
    # agent, which ends once its last rank has)
    sleep 1
    : >"$tmp/out"
    left=$(ps -e -o pid=,comm= | awk '$2 ~ /^(kill|fmpl-dcfa-agent|orted)$/')
    left2=$("$top/test/rxe_guest.sh" --rsh 169.254.79.2 ps -e -o pid=,comm= 2>&1 |
        awk '$2 ~ /^(kill|fmpl-dcfa-agent|orted)$/ || /cannot reach/')
    report "2 guests: nothing left on either guest" 1 \
        "${left:+guest 1 has: $left }${left2:+guest 2 has: $left2}"
    echo "dcfa_test: $pass passed, $fail failed"
    [ $fail = 0 ] || { echo "dcfa_test: FAIL ($fail jobs)"; exit 1; }
    echo "dcfa_test: PASS"
    exit 0
fi

job "pingpong 2" ok 2 -- "$progs/pingpong" -m 1M
job "pingpong 2 alloc irecv" ok 2 -- "$progs/pingpong" -a -i -m 4M
job "pingpong 3" ok 3 -- "$progs/pingpong" -m 256K -i
job "random 2" ok 2 -- "$progs/random" -s 2
job "random 4" ok 4 -- "$progs/random" -s 5
job "random 3 many" ok 3 -- "$progs/random" -s 13 -I 200000 -k 40
job "early 3" ok 3 -- "$progs/early" -L
job "spill 2" ok 2 -- "$progs/spill"
job "sync 3" ok 3 -- "$progs/sync" -m 1M
job "cancel 2" ok 2 -- "$progs/cancel"
job "cancel 3" ok 3 -- "$progs/cancel"
job "cancel 3 progress thread" ok 3 FMPL_PROGRESS_THREAD=1 -- "$progs/cancel"
job "selfsend 2" ok 2 -- "$progs/selfsend"
job "truncate 2" ok 2 -- "$progs/truncate"
job "regcache 2" "ok:registration cache: [1-9][0-9]* hits, [0-9]+ misses, [1-9][0-9]* invalidated" \
    2 FMPL_VERBOSE=1 -- "$progs/regcache"
job "regcache 2 small cache" ok 2 FMPL_DCFA_RCACHE_MB=1 -- "$progs/regcache" -r 4
job "regcache 2 no cache" ok 2 FMPL_DCFA_RCACHE_MB=0 -- "$progs/regcache" -n 20 -r 4
job "coll_ops 3" ok 3 -- "$progs/coll_ops" -A 64K
job "coll_ops 4 large" ok 4 -- "$progs/coll_ops" -M 2M -B -c w
job "coll_comm 4" ok 4 -- "$progs/coll_comm"
job "coll_args 3" ok 3 -- "$progs/coll_args"
job "coll_halo 4 2-D" ok 4 -- "$progs/coll_halo" -g 2x2 -e 8 -w 2 -m -i 10
job "coll_halo 4 3-D" ok 4 -- "$progs/coll_halo" -g 2x2x1 -w 1x1x0 -e 8 -n 8x8x40 -K BTN
job "coll_halo 4 in parts" ok 4 -- "$progs/coll_halo" -g 2x2 -o -m -i 8
job "coll_vops 4" ok 4 -- "$progs/coll_vops" -R 20
job "coll_neighbor 4" ok 4 -- "$progs/coll_neighbor"
job "coll_nb 4" ok 4 -- "$progs/coll_nb" -R 20
job "coll_nb 3 progress thread" ok 3 FMPL_PROGRESS_THREAD=1 -- "$progs/coll_nb" -s 3 -R 10
job "fft3d 4" "ok:^fft3d: PASS$" 4 -- "$top/examples/fft3d" -n 32 -i 1
# the host agent running the nonblocking collectives (dcfa_offload.h):
# all of them, the count said; with the progress thread beside; a
# transpose by ialltoall; a rank killed in an offloaded ibcast and
# ialltoall (on WORLD and a split); a bad list
OFF=(FMPL_DCFA_OFFLOAD=all FMPL_DCFA_OFFLOAD_MIN=0)
job "offload: coll_nb 4" "all:dcfa: the host agent ran [1-9][0-9]* collectives" 4 \
    FMPL_VERBOSE=1 "${OFF[@]}" -- "$progs/coll_nb" -R 5
job "offload: coll_nb 3 progress thread" ok 3 "${OFF[@]}" FMPL_PROGRESS_THREAD=1 -- \
    "$progs/coll_nb" -s 3 -R 5
job "offload: fft3d 4 (ialltoall)" "ok:^fft3d: PASS$" 4 FMPL_DCFA_OFFLOAD=alltoall \
    FMPL_DCFA_OFFLOAD_MIN=0 -- \
    "$top/examples/fft3d" -n 32 -i 1 -b
job "offload: kill 3 (ibcast)" "fail:coll_kill: rank [01]: FMPL_ERR_PEER from fmpl_ibcast" 3 \
    FMPL_DCFA_OFFLOAD=bcast FMPL_DCFA_OFFLOAD_MIN=0 -- "$progs/coll_kill" -w ibcast
job "offload: kill 3 (ialltoall, split)" \
    "fail:coll_kill: rank [01]: FMPL_ERR_PEER from fmpl_ialltoall" 3 FMPL_DCFA_OFFLOAD=alltoall \
    FMPL_DCFA_OFFLOAD_MIN=0 -- \
    "$progs/coll_kill" -w ialltoall -S
# the default (auto): off where the ranks leave the agent no CPU (fmplrun
# binds each rank to one), on across guests with one rank each (below)
job "offload: auto, no CPU for the agent" \
    "all:no collective goes to the host agent \\(auto, and a machine of the job has no CPU" 2 \
    FMPL_VERBOSE=1 -- "$progs/pingpong" -m 4K
job "offload: bad list" "fail:FMPL_DCFA_OFFLOAD=reduce: expected auto, off, all, or" 2 \
    FMPL_DCFA_OFFLOAD=reduce -- "$progs/pingpong"
job "blacs_p2p 2" ok 2 -- "$progs/blacs_p2p"
job "blacs_coll 4" ok 4 -- "$progs/blacs_coll"
# a peer writing as another rank: dropped (a queue pair has one peer)
job "forge 3" ok 3 -- "$progs/forge"
job "pdgesv 4" "ok:^pdgesv: n=.*: PASS$" 4 -- "$top/examples/pdgesv" -n 200 -nb 16 -p 2 -q 2
job "kill 3 (recv)" "fail:kill: rank 0: FMPL_ERR_PEER" 3 -- "$progs/kill" -w recv
job "on demand: ring 6" "all:dcfa: 2 queue pairs \\(to 2 of 5 peers\\)" 6 FMPL_VERBOSE=1 -- \
    "$progs/neighbours" -p ring
job "on demand: all 4" "all:dcfa: 3 queue pairs \\(to 3 of 3 peers\\)" 4 FMPL_VERBOSE=1 -- \
    "$progs/neighbours" -p all -s 64K
job "connect: stopped rank" "fail:rank 2 did not answer a connection request in 3 s" 3 \
    FMPL_DCFA_CONNECT_TIMEOUT=3 -- "$progs/kill" -s
job "no such device" "fail:no active port on device nosuch" 2 \
    FMPL_DCFA_DEVICE=nosuch -- "$progs/pingpong"
job "no such port" "fail:no active port on any device \\(FMPL_DCFA_PORT\\)" 2 FMPL_DCFA_PORT=9 -- "$progs/pingpong"

# ---- the modes: split (the host's agent owns the device context; rxe's
# default) and direct (FMPL_DCFA_AGENT=0).  Everything above ran split.
job "split mode: one agent for the host" \
    "one:dcfa: split mode \\(the host agent, pid [0-9]+, owns the device context" \
    4 FMPL_VERBOSE=1 -- "$progs/pingpong" -m 64K
job "direct mode said" \
    "all:dcfa: direct mode \\(this process owns the verbs resources: FMPL_DCFA_AGENT=0\\)" \
    2 FMPL_VERBOSE=1 FMPL_DCFA_AGENT=0 -- "$progs/pingpong" -m 64K
D=FMPL_DCFA_AGENT=0
job "direct: pingpong 2" ok 2 $D -- "$progs/pingpong" -m 1M
job "direct: random 4" ok 4 $D -- "$progs/random" -s 5
job "direct: cancel 3" ok 3 $D -- "$progs/cancel"
job "direct: regcache 2" ok 2 $D -- "$progs/regcache" -r 4
job "direct: coll_ops 3" ok 3 $D -- "$progs/coll_ops" -A 64K
job "direct: kill 3 (recv)" "fail:kill: rank 0: FMPL_ERR_PEER" 3 $D -- "$progs/kill" -w recv

# ---- the same device through libfabric: FMPL's ofi transport over the
# verbs provider (under ofi_rxm, its RDM layer), which no other step can
# reach on this machine; FMPL sets FI_UNIVERSE_SIZE to the job's size, or
# rxm asks rxe for a completion queue larger than it has.
O=(FMPL_TRANSPORT=ofi "FI_PROVIDER=verbs;ofi_rxm")
job "libfabric verbs: said" "all:ofi: provider verbs;ofi_rxm" 2 "${O[@]}" FMPL_VERBOSE=1 -- \
    "$progs/pingpong" -m 4K
job "libfabric verbs: pingpong 2" ok 2 "${O[@]}" -- "$progs/pingpong" -m 1M
job "libfabric verbs: random 3" ok 3 "${O[@]}" -- "$progs/random" -s 4
job "libfabric verbs: coll_ops 3" ok 3 "${O[@]}" -- "$progs/coll_ops" -c w -A 4K -R 30

# bg_job NP PROG ARGS...: a job in the background, its output in $tmp/out;
# sets jobpid and t0
bg_job() {
    local np=$1
    shift
    t0=$(date +%s%N)
    timeout -k 10 300 "$run" -n "$np" -t 240 "$@" >"$tmp/out" 2>&1 </dev/null &
    jobpid=$!
}
# poll CMD...: CMD's output as soon as it has one, within 30 s (else none)
poll() {
    local out
    for _ in $(seq 1 300); do
        out=$("$@")
        [ -n "$out" ] && { printf '%s\n' "$out"; return 0; }
        sleep 0.1
    done
    return 1
}
first_agent() { agents | head -n 1; }
# the agent's abstract socket name, without the @
agent_socket() { awk '$NF ~ /^@fmpl-dcfa-agent\./ { print substr($NF, 2); exit }' /proc/net/unix; }

# ---- the agent killed mid-job: the ranks end the job, naming it ----------
bg_job 3 "$progs/random" -s 3 -R 100000
victim=$(poll first_agent)
sleep 2                            # the ranks are at their traffic by then
[ -n "$victim" ] && kill -9 "$victim"
wait $jobpid
st=$?
secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
why=""
if [ -z "$victim" ]; then
    why="no agent process (fmpl-dcfa-agent) appeared"
elif [ $st = 0 ] || [ $st = 124 ]; then
    why="the job's exit status is $st"
elif ! grep -qE "the host agent \\(pid $victim\\).*died" "$tmp/out"; then
    why="no rank named the dead agent (pid $victim)"
fi
report "agent killed: the job fails naming it (status $st)" "$secs" "$why"

# ---- another user at the agent's door -------------------------------------
# The agent's abstract socket has no permissions: a process of another user
# (uid 4242 here: the guest's /etc is the host's, read-only) that connects
# and says hello as a rank, then hands over its own file of the device, must
# get nothing made in it, while the job's own user does (the proof that the
# probe can tell).
bg_job 2 "$progs/random" -s 3 -R 30
name=$(poll agent_socket)
why=""
if [ -z "$name" ]; then
    why="no agent socket (@fmpl-dcfa-agent.*) appeared"
else
    other=$(setpriv --reuid=4242 --regid=4242 --clear-groups "$progs/intrude" -s "$name" 2>&1)
    own=$("$progs/intrude" -s "$name" 2>&1)
    echo "other user: $other; the job's user: $own" >>"$tmp/out"
    case $other in
        *refused*) ;;
        *) why="another user's hello got: $other" ;;
    esac
    case $own in
        *OPEN*) ;;
        *) why="${why:+$why; }the job's own user was refused ($own): the probe cannot tell" ;;
    esac
fi
wait $jobpid
st=$?
[ $st = 0 ] || why="${why:+$why; }the job failed (status $st)"
grep -q "refused a client of user 4242" "$tmp/out" ||
    why="${why:+$why; }the agent did not say it refused user 4242"
secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
report "another user: the agent refuses it" "$secs" "$why"

# ---- another user's socket where the agent's should be ------------------
# The other way round: a process of another user binds the agent's name
# before the job's rank can (a singleton's job id is s<its pid>, so the
# name is known before the rank starts, as exec keeps the pid).  The rank
# must refuse that socket - it would hand it its device file, in whose
# protection domain the squatter could then reach the rank's memory -
# naming its user; by default it then runs in direct mode (and the job
# runs), with FMPL_DCFA_AGENT=1 fmpl_init fails.
# squatted ENV...: one such singleton job, its output in $tmp/out; sets
# st, secs and why (the rank's refusal not found)
squatted() {
    local t0
    t0=$(date +%s%N)
    # shellcheck disable=SC2016  # expanded by the inner shell
    env "$@" timeout -k 5 60 bash -c 'name="fmpl-dcfa-agent.$(id -u).s$$"
        setpriv --reuid=4242 --regid=4242 --clear-groups "$1" -b "$name" &
        for _ in $(seq 1 100); do grep -q "@$name" /proc/net/unix && break; sleep 0.1; done
        exec "$2" -c w' _ "$progs/intrude" "$progs/coll_ops" >"$tmp/out" 2>&1 </dev/null
    st=$?
    sleep 0.5                      # the squatter leaves once the rank has gone
    secs=$(( ($(date +%s%N) - t0) / 1000000000 ))
    why=""
    grep -qE "$refused" "$tmp/out" || why="the rank did not refuse the squatted socket, naming its user"
}
refused="the agent socket @fmpl-dcfa-agent\\.[0-9]+\\.s[0-9]+ belongs to user 4242, not to this job's user [0-9]+: refusing it"
squatted FMPL_VERBOSE=1
if ! grep -q "intrude: squatting @fmpl-dcfa-agent" "$tmp/out"; then
    why="the other user could not take the agent's name first"
elif [ -n "$why" ]; then
    :
elif [ $st != 0 ] || ! grep -q "dcfa: direct mode (this process owns the verbs resources: the host agent failed" "$tmp/out"; then
    why="the job did not run in direct mode (status $st)"
fi
report "a squatted agent socket: refused, direct mode" "$secs" "$why"
squatted FMPL_DCFA_AGENT=1
if [ -z "$why" ] && { [ $st = 0 ] || [ $st = 124 ]; }; then
    why="the job's exit status is $st"
fi
report "a squatted agent socket, FMPL_DCFA_AGENT=1: fmpl_init fails" "$secs" "$why"

# ---- nothing left: every agent ended with its job ------------------------
sleep 1
left=$(agents)
: >"$tmp/out"
report "no agent left behind" 1 "${left:+agents left behind: $left}"

echo "dcfa_test: $pass passed, $fail failed"
if [ $fail != 0 ]; then
    echo "dcfa_test: FAIL ($fail jobs)"
    exit 1
fi
echo "dcfa_test: PASS"
