#!/bin/bash
# soak_test.sh - random traffic for a while, every byte checked.
#
#   test/soak_test.sh [-m MINUTES | -S SECONDS] [-s SEED]
#
# Until MINUTES (default 2) or SECONDS have passed, draws from SEED (default 1) a job
# and runs it under bin/fmplrun:
#   transport  shm; ofi (libfabric tcp); routed (two ranks per fake host:
#              shm within, libfabric between); the emulated fabrics with
#              their timing models: tcw (SR8000), peach2 (a PEACH2
#              sub-cluster), tca (sub-clusters of 2 nodes: PEACH2 within,
#              InfiniBand between)
#   ranks      2 to 8 (more ranks than this machine's cores: oversubscribed)
#   worker     random (nonblocking traffic among all ranks, 0 B to 16 MiB,
#              many indices in flight, some receive buffers larger than the
#              message, fmpl_test polling), sync (blocking sends up to
#              8 MiB), cancel (receives cancelled and completed), spill
#              (sends spilled to the spill buffer), selfsend (to itself, up
#              to 16 MiB), coll_ops (every collective, sizes to 1 MiB, on
#              WORLD, a copy and a split), coll_comm (communicators made,
#              split and freed, collectives on several at once)
#   with a fresh seed each time.  Every worker checks every byte it
#   receives (and the guard bytes after a receive buffer) and exits
#   non-zero on the first wrong one.
# A job passes when it exits 0 with its OK line within 300 s (else: a
# hang).  Prints one line per failed job and a summary: jobs, messages and
# bytes the random jobs moved, corrupted (failed) jobs, hangs.  Exit
# status 1 if anything failed.  `make soak MINUTES=N` runs it; `make check`
# runs 40 seconds.
set -u
TOP=${FMPL_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
minutes=2 secs= seed=1
while [ $# -gt 0 ]; do
    case $1 in
        -m) minutes=$2; shift 2 ;;
        -S) secs=$2; shift 2 ;;
        -s) seed=$2; shift 2 ;;
        *) sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; exit 2 ;;
    esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/soak_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
HAVE_OFI=$(pkg-config --libs libfabric 2>/dev/null)
RANDOM=$seed
P=$TOP/test/progs
[ -n "$secs" ] || secs=$(( minutes * 60 ))
end=$(( $(date +%s) + secs ))
jobs=0 bad=0 hangs=0 msgs=0 bytes=0
declare -A per

while [ "$(date +%s)" -lt "$end" ]; do
    t=$(( RANDOM % 6 ))
    [ -z "$HAVE_OFI" ] && [ $t -le 2 ] && t=0
    np=$(( 2 + RANDOM % 7 ))
    s=$(( RANDOM * 32768 + RANDOM ))
    envs=()
    case $t in
        0) tl=shm ;;
        1) tl=ofi; envs+=(FMPL_TRANSPORT=ofi FI_PROVIDER=tcp) ;;
        2) tl=routed; envs+=(FMPL_TEST_RANKS_PER_HOST=2 FI_PROVIDER=tcp) ;;
        3) tl=tcw; envs+=(FMPL_TRANSPORT=tcw) ;;
        4) tl=peach2; envs+=(FMPL_TRANSPORT=peach2) ;;
        5) tl=tca; envs+=(FMPL_TRANSPORT=tca FMPL_TCA_SUBCLUSTER=2) ;;
    esac
    case $(( RANDOM % 7 )) in
        0|1) w=(random -s "$s" -R 3 -k 12 -M 16M) ;;
        2) w=(sync -m 8M -r 1) ;;
        3) w=(cancel -s "$s" -R 4) ;;
        4) w=(spill) ;;
        5) w=(coll_ops -s "$s" -M 1M -R 1) ;;
        6) w=(coll_comm -F 10) ;;
    esac
    # selfsend wants no more than its own rank; every fourth job
    if [ $(( jobs % 4 )) = 3 ]; then
        w=(selfsend -m 16M)
        np=$(( 1 + RANDOM % 3 ))
    fi
    name="${w[0]} on $tl, $np ranks (${w[*]:1})"
    jobs=$((jobs + 1))
    per["${w[0]}/$tl"]=$(( ${per["${w[0]}/$tl"]:-0} + 1 ))
    t0=$(date +%s)
    env "${envs[@]}" timeout -k 10 300 "$TOP/bin/fmplrun" -n "$np" -t 290 "$P/${w[0]}" \
        "${w[@]:1}" > "$tmp/out" 2>&1 </dev/null
    st=$?
    if [ $st = 0 ] && grep -q "^OK " "$tmp/out"; then
        m=$(awk '/^random: rank .* received/ { n += $5; b += $7 } END { print n + 0, b + 0 }' \
            "$tmp/out")
        msgs=$(( msgs + ${m% *} ))
        bytes=$(( bytes + ${m#* } ))
        continue
    fi
    if [ $st = 124 ] || { [ $st = 137 ] && [ $(( $(date +%s) - t0 )) -ge 300 ]; }; then
        hangs=$((hangs + 1))
        echo "HANG $name"
    else
        bad=$((bad + 1))
        echo "FAIL $name: status $st"
    fi
    tail -n 15 "$tmp/out" | sed 's/^/  | /'
done
summary=""
for k in $(printf '%s\n' "${!per[@]}" | sort); do summary="$summary $k=${per[$k]}"; done
echo "soak_test: jobs by worker/transport:$summary"
echo "soak_test: $secs s (seed $seed): $jobs jobs; the random jobs moved $msgs messages," \
     "$bytes bytes; $bad failed (a wrong byte fails its job), $hangs hung"
[ $bad = 0 ] && [ $hangs = 0 ]
