#!/bin/bash
# fault_test.sh - the fault matrix: a rank fails at a random moment inside
# an activity, on a transport; every survivor must end soon with
# FMPL_ERR_PEER, the launcher must fail, and nothing may be left behind.
#
#   test/fault_test.sh [-n TRIALS] [-s SEED] [-l SECONDS] [-T "TRANSPORT..."]
#                      [-A "ACTIVITY..."]
#
# Each trial draws, from SEED (default 1), one of
#   fault      kill (SIGKILL), stop (SIGSTOP; FMPL_PEER_TIMEOUT=2), exit
#              (_exit(0) without fmpl_finalize)
#   activity   p2p (ring, blocking and not, 0 B-256 KiB), coll (barrier,
#              bcast, allreduce, allgather, reduce), halo, init (inside
#              fmpl_init or right after), finalize (the others in it),
#              blacs (the BLACS traffic of an LU solve on fmpl-blacs:
#              test/progs/blacs_fault); -A limits the draw to those listed
#   transport  shm; ofi (libfabric tcp); route (FMPL_TEST_RANKS_PER_HOST=2:
#              shm inside a fake host, libfabric between); the emulated
#              machines with their timing models: tcw (the SR8000), peach2
#              (a PEACH2 sub-cluster), tca (sub-clusters of 2: PEACH2 and
#              InfiniBand); -T limits the draw to the transports listed
#   ranks      3 or 4; the moment: 20-400 ms into the activity
# and runs test/progs/fault under bin/fmplrun.  It passes when
#   - fmplrun exits non-zero, within 60 s;
#   - every survivor printed FMPL_ERR_PEER, within SECONDS (default 5) of
#     the victim's failure (its own timestamp); under the BLACS, which end
#     the job on an error as MPI-BLACS do: a survivor reported
#     FMPL_ERR_PEER ("BLACS ERROR") and the job ended within SECONDS;
#   - for kill and exit, some survivor's message names the victim ("peer
#     rank V failed ..." from the launcher's word, or a transport's "rank V
#     (pid P) is gone"), and none names another rank as the failure: a
#     stopped rank is alive, and a survivor that times out names the rank
#     it waited for, which may be another survivor;
#   - no process of the job is left (every rank's pid is gone), and
#     /dev/shm holds nothing it did not hold before.
# Prints one line per failed trial and a summary: trials per fault and
# transport, the slowest survivor, failures.  Exit status 1 if any failed.
# `make faults TRIALS=N` runs it; `make check` runs 30 trials (seed 1).
set -u
TOP=${FMPL_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
# shellcheck source=test/fault_lib.sh
. "$TOP/test/fault_lib.sh"
trials=50 seed=1 limit=5
tls=(shm ofi route tcw peach2 tca)
acts=(p2p coll halo init finalize blacs)
while [ $# -gt 0 ]; do
    case $1 in
        -n) trials=$2; shift 2 ;;
        -s) seed=$2; shift 2 ;;
        -l) limit=$2; shift 2 ;;
        -T) read -r -a tls <<< "$2"; shift 2 ;;
        -A) read -r -a acts <<< "$2"; shift 2 ;;
        *) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fault_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
HAVE_OFI=$(pkg-config --libs libfabric 2>/dev/null)
RANDOM=$seed
faults=(kill stop exit)
pass=0 fail=0 worst=0
declare -A count

for i in $(seq 1 "$trials"); do
    f=${faults[RANDOM % 3]}
    a=${acts[RANDOM % ${#acts[@]}]}
    t=${tls[RANDOM % ${#tls[@]}]}
    np=$((3 + RANDOM % 2))
    ms=$((20 + RANDOM % 381))
    [ -z "$HAVE_OFI" ] && { [ "$t" = ofi ] || [ "$t" = route ]; } && t=shm
    envs=()
    case $t in
        ofi) envs+=(FMPL_TRANSPORT=ofi FI_PROVIDER=tcp) ;;
        route) envs+=(FMPL_TEST_RANKS_PER_HOST=2 FI_PROVIDER=tcp); np=4 ;;
        tcw|peach2) envs+=(FMPL_TRANSPORT=$t) ;;
        tca) envs+=(FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2) ;;
    esac
    [ "$f" = stop ] && envs+=(FMPL_PEER_TIMEOUT=2)
    name="#$i $f in $a on $t, $np ranks, at $ms ms"
    ls -A /dev/shm > "$tmp/shm.before"
    t0=$(date +%s%N)
    if [ "$a" = blacs ]; then
        prog=("$TOP/test/progs/blacs_fault" -f "$f" -t "$ms")
    else
        prog=("$TOP/test/progs/fault" -a "$a" -f "$f" -t "$ms")
    fi
    env "${envs[@]}" timeout -k 5 60 "$TOP/bin/fmplrun" -n "$np" -t 50 "${prog[@]}" \
        > "$tmp/out" 2>&1 </dev/null
    st=$?
    t_end=$(date +%s.%N)
    victim=$((np - 1))
    why=""
    fail_at=$(sed -n "s/^fault: rank $victim fails ($f) at \([0-9.]*\)$/\1/p" "$tmp/out")
    if [ $st = 0 ]; then
        why="fmplrun exited 0"
    elif [ $st = 124 ] || [ $st = 137 ] && [ $(( ($(date +%s%N) - t0) / 1000000000 )) -ge 60 ]; then
        why="the job hung (60 s)"
    elif [ -z "$fail_at" ]; then
        why="the victim never failed"
    elif [ "$a" = blacs ]; then
        late=$(awk -v a="$t_end" -v b="$fail_at" 'BEGIN { printf "%.3f", a - b }')
        if ! grep -q "^BLACS ERROR '.*FMPL_ERR_PEER" "$tmp/out"; then
            why="no survivor's BLACS reported FMPL_ERR_PEER"
        elif awk -v d="$late" -v l="$limit" 'BEGIN { exit !(d > l) }'; then
            why="the job ended $late s after the failure (limit $limit s)"
        elif awk -v d="$late" -v w="$worst" 'BEGIN { exit !(d > w) }'; then
            worst=$late
        fi
    elif ! fault_survivors "$tmp/out" "$victim" "$limit"; then
        why=$fault_why
    elif awk -v d="$fault_late" -v w="$worst" 'BEGIN { exit !(d > w) }'; then
        worst=$fault_late
    fi
    # named by the launcher's word (peer rank V failed ...) or by a
    # transport that saw it go (shm: rank V (pid P) is gone; the emulated
    # machines: tcw: rank V (pid P) is gone)
    if [ -z "$why" ] && [ "$f" != stop ] &&
       ! grep -qE "^fmpl: rank [0-9]+: ([a-z0-9]+: )?(peer rank $victim |rank $victim \(pid)" \
           "$tmp/out"; then
        why="no survivor named rank $victim"
    fi
    # and none named another (a survivor that left first, say)
    if [ -z "$why" ] && [ "$f" != stop ]; then
        other=$(sed -n "s/^fmpl: rank [0-9]*: \([a-z0-9]*: \)\{0,1\}peer rank \([0-9]*\) failed.*/\2/p" \
                    "$tmp/out" | grep -vx "$victim" | head -n 1)
        [ -n "$other" ] && why="a survivor named rank $other, not the victim $victim"
    fi
    if [ -z "$why" ]; then
        for p in $(sed -n 's/^fault: rank [0-9]* pid \([0-9]*\)$/\1/p' "$tmp/out"); do
            if kill -0 "$p" 2>/dev/null; then
                why="process $p of the job is still there"
                break
            fi
        done
    fi
    if [ -z "$why" ]; then
        ls -A /dev/shm > "$tmp/shm.after"
        new=$(comm -13 <(sort "$tmp/shm.before") <(sort "$tmp/shm.after") | tr '\n' ' ')
        [ -n "$new" ] && why="/dev/shm entries left: $new"
    fi
    count["$f $t"]=$(( ${count["$f $t"]:-0} + 1 ))
    if [ -z "$why" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: $why (status $st)"
        tail -n 15 "$tmp/out" | sed 's/^/  | /'
    fi
done
summary=""
for k in $(printf '%s\n' "${!count[@]}" | tr ' ' / | sort); do
    summary="$summary $k=${count[${k/\// }]}"
done
echo "fault_test: trials by fault/transport:$summary"
echo "fault_test: $trials trials (seed $seed): $pass passed, $fail failed;" \
     "slowest survivor $worst s after the failure"
[ $fail = 0 ]
