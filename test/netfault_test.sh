#!/bin/bash
# netfault_test.sh - FMPL jobs across two hosts whose link is broken on
# purpose while the jobs run: packets lost, delayed and reordered,
# duplicated and corrupted at random, a link that goes down for 2 s and
# comes back, and one that stays down longer than FMPL_PEER_TIMEOUT.
#
#   test/netfault_test.sh [-q] [-p PROVIDERS] [CONDITION...]
#   test/netfault_test.sh -G [-q] [CONDITION...]
#     -q  the short subset make check runs (tcp only; pingpong and the
#         halo exchange; conditions loss1 reorder dup1 corrupt flap
#         down, with -G without reorder)
#     -p  libfabric providers, "tcp net" by default (net only where
#         libfabric has it)
#     -G  in the soft-RoCE test bed instead (test/rxe_run.sh -g 2: two qemu
#         guests joined by one link, FMPL_TRANSPORT=dcfa over rxe's RC
#         queue pairs, which retransmit in software); its kernel has netem
#   CONDITION: clean loss1 loss5 delay reorder dup1 corrupt flap down
#   (default: all of them; with -G reorder only by name)
#
# The hosts.  Without -G: two network namespaces joined through a bridge
# in a head namespace (test/netns.sh; each host's processes in their own
# PID namespace and /dev/shm), mpirun in the head, FMPL_TRANSPORT=ofi over
# libfabric's tcp or net provider; the faults come from Debian's nftables
# and, for delay and reorder, a user-space delayer fed by iptables'
# NFQUEUE (test/netns_fault.sh: this machine's kernel has no netem).
# With -G: two guests, mpirun on guest 1 (rxe_run.sh's $RXE_MPIRUN), the
# faults from tc's netem on each guest's eth0.  Either way 2 ranks a
# host, placed round-robin (--map-by node), so every pair of neighbours
# crosses the link, and every fault hits both directions:
#   loss1, loss5  1 % / 5 % of the packets each host sends are dropped
#                 (with -G, loss5's jobs write at most 16 KiB a request,
#                 FMPL_DCFA_WRITE_MAX=16: a queue pair's retries are
#                 counted per request, and whole messages of 1 MiB failed
#                 3 of 5 jobs with "transport retry counter exceeded")
#   delay         each packet held 0.5-2 ms, uniformly, in order
#   reorder       the same without keeping the order: packets overtake
#                 each other (TCP sorts them out: the delayers must have
#                 let some go ahead of an earlier one).  With -G: RC
#                 queue pairs expect an ordered network (InfiniBand, or
#                 RoCE on one path), and rxe's do not survive this one:
#                 each out-of-sequence packet sends the requester back (a
#                 sequence NAK), every go-back counts against the work
#                 request's retry count until it completes, and a large
#                 RDMA write rarely gets through 7 rounds in order, so the
#                 queue pair fails with "transport retry counter
#                 exceeded" (3 of 5 jobs).  Not in -G's
#                 default list; it shows what the condition does
#   dup1          1 % of the packets each host sends go twice
#   corrupt       0.1 % of the packets are corrupted: without -G a payload
#                 byte of a TCP segment each host receives is overwritten,
#                 and the receivers' TCP must count checksum errors; with
#                 -G netem flips a bit of a packet each guest sends, which
#                 rxe's ICRC check (or the TCP checksum) drops
#   flap          host 2's link goes down for 2 s in the middle of a job
#                 and comes back (without -G its port on the head's
#                 bridge; with -G every packet of both guests is lost)
#   down          the same, for FMPL_PEER_TIMEOUT + 3 s, while
#                 test/progs/fault -f none runs a ring across the link:
#                 both ranks of host 2 and one of host 1 (whose error
#                 makes mpirun kill the other there) must end with
#                 FMPL_ERR_PEER within FMPL_PEER_TIMEOUT + 2 s of the cut,
#                 each having named a rank on the other host, and mpirun
#                 must end non-zero once the link is back, leaving
#                 nothing behind
# Without -G, checksum offloads, TSO, GSO and GRO are off on every veth
# end, so that TCP computes and verifies its checksums in software (a
# corrupted segment is caught as on a real link, not trusted as a veth's
# "already checked" one) and 1 % means 1 % of wire-sized packets, not of
# 64 KiB super-packets.
#
# Jobs under every condition but down (each checks every byte it moves):
# pingpong (sizes 0 B..4 MiB both ways; -q and -G: 1 MiB), random
# (pairwise traffic, many indices in flight), coll_ops (every collective
# against a serial result), coll_halo -g 2x2x1 -m (two halo exchanges),
# examples/pdgesv (a ScaLAPACK solve on a 2x2 grid through fmpl-blacs,
# residual checked); -q runs pingpong and coll_halo.  Under flap the job
# is pingpong repeated and must still be running when the link comes
# back.  A condition must hit packets, or it proved nothing: nftables'
# counters and the receivers' TCP checksum errors without -G; with -G
# netem's drop count, and rxe's own counters (retransmissions, duplicate
# and out-of-sequence requests) on both guests.
#
# Prints a PASS/FAIL line per job, then per condition: jobs run, failures,
# bytes checked (the counts pingpong and random print), slowest job, what
# the condition did; exits 1 if anything failed (-G: 125 when the test bed
# could not run).  If the machine refuses namespaces, nftables or qemu,
# that is a loud FAIL, never a skip.
#
# Environment: NF_TIME_LIMIT (s per job, default 300), NF_TIMEOUT
# (FMPL_PEER_TIMEOUT for the down condition, default 4), FMPL_TOP.
set -u

TOP=${FMPL_TOP:-$(cd "$(dirname "$0")/.." && pwd)}
P=$TOP/test/progs
LIMIT=${NF_TIME_LIMIT:-300}
TMO=${NF_TIMEOUT:-4}

quick=0 guests=0 inguest=0
provs="tcp net"
usage() { echo "usage: $0 [-q] [-p PROVIDERS | -G] [CONDITION...]" >&2; exit 2; }
if [ "${1:-}" = --in-guest ]; then
    inguest=1 guests=1
    shift
fi
while getopts qp:G o; do
    case $o in
    q) quick=1 provs=tcp ;;
    p) provs=$OPTARG ;;
    G) guests=1 ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))

if [ $guests = 1 ] && [ $inguest = 0 ]; then
    # the whole run inside guest 1 of the test bed: one boot for every job
    args=()
    [ $quick = 1 ] && args+=(-q)
    exec "$TOP/test/rxe_run.sh" -g 2 -t "${NF_GUEST_SECONDS:-2400}" \
        -c "$TOP/test/netfault_test.sh" --in-guest "${args[@]}" "$@"
fi

conds=("$@")
if [ ${#conds[@]} -eq 0 ]; then
    if [ $quick = 1 ] && [ $guests = 1 ]; then
        conds=(loss1 dup1 corrupt flap down)
    elif [ $quick = 1 ]; then
        conds=(loss1 reorder dup1 corrupt flap down)
    elif [ $guests = 1 ]; then
        conds=(clean loss1 loss5 delay dup1 corrupt flap down)
    else
        conds=(clean loss1 loss5 delay reorder dup1 corrupt flap down)
    fi
fi

pass=0
fail=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/netfault_test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

now_ms() { date +%s%N | cut -c1-13; }
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }
setup_failed() {
    echo "FAIL setup: $*"
    echo "0 passed, 1 failed"
    exit 1
}

# ---- the bed: how jobs start, how links break, what is counted -----------
# bed_start ENV=VAL... -- PROG ARGS: the job in the background ($jp),
# its output in $tmp/out
# bed_rules COND / bed_unrules: the condition's fault on both hosts
# bed_cut SECS: host 2's link down for SECS s, then up again
# bed_hits COND: what the condition did ("N dropped", ...); 1 when it
# did nothing it should have
# bed_left: processes of jobs still on either host
if [ $guests = 0 ]; then
    for c in nft ethtool nstat; do
        command -v $c >/dev/null 2>&1 ||
            setup_failed "'$c' is not installed (Debian: nftables, ethtool, iproute2)"
    done
    # run after netns_cleanup by netns.sh's trap
    # shellcheck disable=SC2034,SC2016 # read and eval'ed by test/netns.sh
    NETNS_ATEXIT='rm -rf "$tmp"'
    # shellcheck source=test/netns.sh disable=SC1091
    . "$TOP/test/netns.sh"
    if ! netns_setup 2 >"$tmp/out" 2>&1; then
        cat "$tmp/out"
        setup_failed "the machine refused network namespaces (see above)"
    fi
    cat "$tmp/out"
    export FMPL_NETNS_SHM=private
    # shellcheck disable=SC2034 # read by test/netns_fault.sh
    NETFAULT_TOP=$TOP
    # shellcheck source=test/netns_fault.sh disable=SC1091
    . "$TOP/test/netns_fault.sh"
    netfault_sw_offloads 2>"$tmp/out" || setup_failed "$(cat "$tmp/out")"
    bed_start() {
        local xs=()
        while [ "$1" != -- ]; do xs+=(-x "$1"); shift; done
        shift
        # shellcheck disable=SC2086 # $E is a list of words
        timeout -k 10 "$LIMIT" "$NETNS_DIR/mpirun" --hostfile "$NETNS_DIR/hosts.2" $E "${xs[@]}" \
            -n 4 --map-by node "$@" >"$tmp/out" 2>&1 </dev/null &
        jp=$!
    }
    bed_rules() {
        csum0=$(netfault_csum_errors)
        case $1 in flap|down) return 0 ;; esac   # bed_cut's
        netfault_on "$1"
    }
    bed_unrules() { netfault_off; }
    bed_cut() {
        # host 2's port on the head's bridge: its eth0 loses the carrier
        ip -n "$NETNS_HEAD" link set v2 down
        sleep "$1"
        ip -n "$NETNS_HEAD" link set v2 up
    }
    bed_hits() {
        local n cerr
        n=$(netfault_hits)
        case $1 in
        loss*) echo "$n dropped"; [ "$n" -gt 0 ] ;;
        dup1) echo "$n duplicated"; [ "$n" -gt 0 ] ;;
        delay|reorder)
            # the delayers count what they held as they leave (also in
            # this subshell: netfault_off finds them by name)
            netfault_off
            # shellcheck disable=SC2046 # two numbers
            set -- "$1" $(netfault_delayed)
            echo "$2 held, $3 went after a later one"
            # in order under delay; some overtaken under reorder
            [ "$2" -gt 0 ] && if [ "$1" = delay ]; then [ "$3" = 0 ]; else [ "$3" -gt 0 ]; fi ;;
        corrupt) cerr=$(( $(netfault_csum_errors) - csum0 ))
                 echo "$n corrupted, $cerr TCP checksum errors"; [ $cerr -gt 0 ] ;;
        *) echo "-" ;;
        esac
    }
    bed_left() { netns_pids; }
else
    [ -n "${RXE_MPIRUN:-}" ] || setup_failed "--in-guest runs only in test/rxe_run.sh -g 2's guest 1"
    G2=169.254.79.2
    # on2 CMD: CMD on guest 2 (its remote shell, over the same link)
    on2() { "$TOP/test/rxe_guest.sh" --rsh $G2 "$*"; }
    provs=rxe
    bed_start() {
        local envs=()
        while [ "$1" != -- ]; do envs+=("$1"); shift; done
        shift
        # shellcheck disable=SC2086 # RXE_MPIRUN is a command line
        env "${envs[@]}" timeout -k 10 "$LIMIT" $RXE_MPIRUN --map-by node -n 4 "$@" \
            >"$tmp/out" 2>&1 </dev/null &
        jp=$!
    }
    # netem's arguments for a condition.  Under delay a rate keeps the
    # packets in order (netem then sends none before the one ahead of it);
    # reorder is netem's jitter alone, which reorders - see the top
    netem() {
        case $1 in
        loss1) echo "loss 1%" ;;
        loss5) echo "loss 5%" ;;
        delay) echo "delay 1250us 750us rate 1gbit" ;;
        reorder) echo "delay 1250us 750us" ;;
        dup1) echo "duplicate 1%" ;;
        corrupt) echo "corrupt 0.1%" ;;
        esac
    }
    bed_rules() {
        local out c
        counters0=$(rxe_counters)
        [ -n "$(netem "$1")" ] || return 0
        c="tc qdisc replace dev eth0 root netem $(netem "$1")"
        out=$(sh -c "$c" 2>&1) || { echo "guest 1: $out"; return 1; }
        out=$(on2 "$c && echo done" 2>/dev/null)
        [ "${out##*$'\n'}" = done ] || { echo "guest 2: $out"; return 1; }
    }
    bed_unrules() {
        tc qdisc del dev eth0 root 2>/dev/null
        on2 "tc qdisc del dev eth0 root" >/dev/null 2>&1
    }
    # every packet lost both ways: a cable or switch gone.  (Not eth0
    # down: a local port down makes rxe fail the queue pairs' sends at
    # once, where a real adapter keeps retrying on a dead wire.)  Each
    # guest times its own part: guest 2's command left before the cut.
    bed_cut() {
        on2 "tc qdisc replace dev eth0 root netem loss 100%; sleep $1; tc qdisc del dev eth0 root" \
            >/dev/null 2>&1 &
        tc qdisc replace dev eth0 root netem loss 100%
        sleep "$1"
        tc qdisc del dev eth0 root
        wait $!
    }
    # rxe_counters: retransmissions, duplicate and out-of-sequence
    # requests, both guests together (rxe's hw_counters)
    rxe_counters() {
        local f='for c in completer_retry_err duplicate_request out_of_seq_request; do
                   cat /sys/class/infiniband/rxe0/ports/1/hw_counters/$c 2>/dev/null || echo 0
                 done'
        { sh -c "$f"; on2 "$f" 2>/dev/null; } | paste -sd' ' |
            awk '{ print $1 + $4, $2 + $5, $3 + $6 }'
    }
    bed_hits() {
        local d0 d1 drops
        # shellcheck disable=SC2086 # three numbers each
        set -- "$1" $counters0 $(rxe_counters)
        d0="$(($5 - $2)) retransmitted, $(($6 - $3)) duplicate, $(($7 - $4)) out of sequence"
        # netem's own counts (the root qdisc's line), both guests
        stat() { sed -n "/qdisc netem/,/Sent/s/.*Sent [0-9]* bytes \([0-9]*\) pkt (dropped \([0-9]*\).*/\\$1/p" |
                 head -n 1 | grep . || echo 0; }
        case $1 in
        clean|flap|down) echo "$d0"; return 0 ;;
        esac
        tc -s qdisc show dev eth0 >"$tmp/qd1"
        on2 "tc -s qdisc show dev eth0" >"$tmp/qd2" 2>/dev/null
        drops=$(( $(stat 2 <"$tmp/qd1") + $(stat 2 <"$tmp/qd2") + 0 ))
        held=$(( $(stat 1 <"$tmp/qd1") + $(stat 1 <"$tmp/qd2") + 0 ))
        case $1 in
        loss*) echo "$drops dropped; $d0"; [ $drops -gt 0 ] && [ $(($5 - $2)) -gt 0 ] ;;
        delay) echo "$held delayed; $d0"; [ $held -gt 0 ] ;;
        reorder) echo "$d0"; [ $(($7 - $4)) -gt 0 ] ;;
        dup1) echo "$d0"; [ $(($6 - $3)) -gt 0 ] ;;
        corrupt) echo "$d0"; [ $(($5 - $2)) -gt 0 ] ;;
        esac
    }
    bed_left() {
        local k='ps -e -o pid=,comm= | awk '\''$2 ~ /^(pingpong|random|coll_ops|coll_halo|pdgesv|fault|fmpl-dcfa-agent|orted)$/'\'''
        sh -c "$k"
        on2 "$k"
    }
fi

# ---- jobs and their results -------------------------------------------------
# per condition: jobs, failures, bytes, slowest (ms)
c_jobs=0 c_fail=0 c_bytes=0 c_slow=0
report=()
note=""

# result NAME WHY MS: one PASS/FAIL line (FAIL with the job's output)
result() {
    c_jobs=$((c_jobs + 1))
    [ "$3" -gt $c_slow ] && c_slow=$3
    if [ -z "$2" ]; then
        pass=$((pass + 1))
        echo "PASS $1 ($(secs "$3") s)${note:+: $note}"
    else
        fail=$((fail + 1))
        c_fail=$((c_fail + 1))
        echo "FAIL $1 ($(secs "$3") s): $2"
        [ -s "$tmp/out" ] && tail -n 30 "$tmp/out" | sed 's/^/  | /'
    fi
    note=""
}

# count_bytes: what pingpong and random said they received and checked
count_bytes() {
    local b
    b=$(sed -n -e 's/^pingpong: rank [0-9]* received and checked \([0-9]*\) bytes$/\1/p' \
               -e 's/^random: rank [0-9]* received [0-9]* messages, \([0-9]*\) bytes$/\1/p' "$tmp/out" |
        awk '{ s += $1 } END { print s + 0 }')
    c_bytes=$((c_bytes + b))
}

# end_job OKPATTERN: wait for it; sets why from its status and output
end_job() {
    local st
    wait "$jp"
    st=$?
    if [ $st = 124 ] || [ $st = 137 ]; then
        why="time limit of $LIMIT s reached"
    elif [ $st != 0 ]; then
        why="mpirun exit status $st"
    elif ! grep -qE "$1" "$tmp/out"; then
        why="no line matching $1"
    else
        count_bytes
    fi
}

# job NAME PROGRAM ARGS...: one job under the current condition
job() {
    local name=$1 t0 ok
    shift
    why="" note=""
    ok="^OK $(basename "$1")\$"
    [ "$name" = pdgesv ] && ok='^pdgesv: n=.*: PASS$'
    t0=$(now_ms)
    bed_start "${cenv[@]}" -- "$@"
    end_job "$ok"
    result "$cond/$prov/$name" "$why" $(($(now_ms) - t0))
}

# flap: pingpong across a 2-s cut of host 2's link
flap() {
    local t0 t1 cut
    why="" note=""
    t0=$(now_ms)
    if [ $guests = 1 ]; then
        bed_start -- "$P/pingpong" -m 1M -r 8
        sleep 6
    else
        # (net moves this in about 4 s, tcp in 12)
        bed_start -- "$P/pingpong" -m 4M -r 12
        sleep 2
    fi
    if ! kill -0 "$jp" 2>/dev/null; then
        cut="the job ended before the link went down"
    else
        t1=$(now_ms)
        bed_cut 2
        # (in the guests each times its own cut; the remote shell's
        # answer comes back late, after TCP's backed-off retries)
        note="link down $(secs $(($(now_ms) - t1))) s"
        [ $guests = 1 ] && note="link down 2 s on each guest"
        kill -0 "$jp" 2>/dev/null || cut="the job ended while the link was down"
    fi
    end_job '^OK pingpong$'
    why=${cut:-$why}
    result "$cond/$prov/pingpong" "$why" $(($(now_ms) - t0))
}

# down: a ring across a cut that outlasts FMPL_PEER_TIMEOUT
down() {
    local t0 tcut_ms t n r line at late other
    why="" note=""
    t0=$(now_ms)
    bed_start FMPL_PEER_TIMEOUT="$TMO" -- "$P/fault" -a p2p -f none
    t=0
    while [ "$(grep -c '^fault: rank [0-9]* pid' "$tmp/out")" -lt 4 ] && [ $t -lt 1200 ] &&
          kill -0 "$jp" 2>/dev/null; do
        sleep 0.1
        t=$((t + 1))
    done
    sleep 0.5
    if ! kill -0 "$jp" 2>/dev/null; then
        wait "$jp"
        result "$cond/$prov/fault" "the job ended before the cut (status $?)" $(($(now_ms) - t0))
        return
    fi
    tcut_ms=$(now_ms)
    bed_cut $((TMO + 3))
    wait "$jp"
    n=$?
    if [ $n = 0 ] || [ $n = 124 ] || [ $n = 137 ]; then
        why="mpirun exit status $n (expected the ranks' FMPL_ERR_PEER)"
    fi
    # Host 2's ranks (odd) are cut off from everybody: each must end by
    # its own FMPL_ERR_PEER.  Of host 1's, the first to end makes mpirun
    # abort the job, which it can on that side: the other may be killed
    # before it says anything.
    late=0 ended=""
    for r in 0 1 2 3; do
        [ -n "$why" ] && break
        line=$(grep -m 1 "^fault: rank $r: FMPL_ERR_PEER from " "$tmp/out")
        if [ -z "$line" ] && [ $((r % 2)) = 0 ]; then
            continue
        elif [ -z "$line" ]; then
            why="rank $r did not end with FMPL_ERR_PEER"
            break
        fi
        ended="$ended $r"
        # when, in ms after the cut
        at=$(awk -v l="${line##* at }" -v c="$tcut_ms" 'BEGIN { printf "%d", l * 1000 - c }')
        [ "$at" -gt $late ] && late=$at
        if [ "$at" -gt $(((TMO + 2) * 1000)) ]; then
            why="rank $r's FMPL_ERR_PEER came $(secs "$at") s after the cut (FMPL_PEER_TIMEOUT=$TMO)"
        fi
        # it named a rank on the other host (--map-by node: the other parity)
        other=$(grep -E "^fmpl: rank $r: .*rank [0-9]+" "$tmp/out" |
                grep -oE "(for|peer|to|from) rank [0-9]+" | grep -oE '[0-9]+$' |
                awk -v r="$r" '($1 % 2) != (r % 2)' | head -n 1)
        [ -z "$other" ] && [ -z "$why" ] && why="rank $r named no rank on the other host"
    done
    case " $ended " in
    *" 0 "* | *" 2 "*) ;;
    *) [ -n "$why" ] || why="neither rank of host 1 ended with FMPL_ERR_PEER" ;;
    esac
    if [ -z "$why" ]; then
        note="ranks$ended ended with FMPL_ERR_PEER, the last $(secs $late) s after the cut"
        t=0
        while [ -n "$(bed_left)" ] && [ $t -lt 50 ]; do
            sleep 0.2
            t=$((t + 1))
        done
        [ -n "$(bed_left)" ] && why="processes left on the hosts: $(bed_left | tr '\n' ' ')"
    fi
    result "$cond/$prov/fault" "$why" $(($(now_ms) - t0))
}

for prov in $provs; do
    if [ $guests = 0 ]; then
        if ! fi_info -p "$prov" -t FI_EP_RDM >/dev/null 2>&1; then
            echo "(libfabric has no $prov provider here: not run over it)"
            continue
        fi
        E="-x FMPL_TRANSPORT=ofi -x FI_PROVIDER=$prov"
    fi
    for cond in "${conds[@]}"; do
        c_jobs=0 c_fail=0 c_bytes=0 c_slow=0
        # 5 % loss in the guests: writes of 16 KiB (FMPL_DCFA_WRITE_MAX;
        # with whole messages in one request 3 of 5 jobs failed)
        cenv=()
        [ $guests = 1 ] && [ "$cond" = loss5 ] && cenv=(FMPL_DCFA_WRITE_MAX=16)
        case $cond in
        clean|loss1|loss5|delay|reorder|dup1|corrupt|flap|down) ;;
        *) echo "unknown condition $cond" >&2; exit 2 ;;
        esac
        # (not in a subshell: it keeps the counters it starts from)
        if ! bed_rules "$cond" >"$tmp/rules" 2>&1; then
            note="" why="the rules of $cond were refused: $(cat "$tmp/rules")"
            result "$cond/$prov/rules" "$why" 0
            continue
        fi
        case $cond in
        flap) flap ;;
        down) down ;;
        *)
            if [ $quick = 1 ]; then
                job pingpong "$P/pingpong" -m 1M
                job coll_halo "$P/coll_halo" -g 2x2x1 -m
            elif [ $guests = 1 ]; then
                job pingpong "$P/pingpong" -m 1M
                job random "$P/random" -s 5
                job coll_ops "$P/coll_ops" -E -c w -M 64K -A 1K -R 10
                job coll_halo "$P/coll_halo" -g 2x2x1 -m
                job pdgesv "$TOP/examples/pdgesv" -n 200 -nb 16 -p 2 -q 2
            else
                job pingpong "$P/pingpong" -m 4M
                job random "$P/random"
                job coll_ops "$P/coll_ops" -M 64K
                job coll_halo "$P/coll_halo" -g 2x2x1 -m
                job pdgesv "$TOP/examples/pdgesv" -n 500 -nb 24 -p 2 -q 2
            fi
            ;;
        esac
        if ! what=$(bed_hits "$cond"); then
            note="" why="the condition did not show: $what"
            : >"$tmp/out"
            result "$cond/$prov/hit" "$why" 0
        fi
        bed_unrules
        report+=("$(printf '%-8s %-4s %4d %5d %14d %8s  %s' "$cond" "$prov" $c_jobs $c_fail $c_bytes \
                    "$(secs $c_slow)" "$what${cenv[*]:+ (${cenv[*]})}")")
    done
done

echo
echo "condition prov jobs fails  bytes checked  slowest  what it did"
for l in "${report[@]}"; do echo "$l"; done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
