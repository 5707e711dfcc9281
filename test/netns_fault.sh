# shellcheck shell=sh disable=SC2317 # functions run by their callers
# netns_fault.sh - break the link between test/netns.sh's hosts on purpose:
# nftables rules on every host's eth0 that drop, duplicate or corrupt a
# share of the packets at random, and a user-space delayer that holds
# them back.  This machine's kernel has no netem (CONFIG_NET_SCH_NETEM is
# not set) but has nf_tables with numgen, and iptables' NFQUEUE target
# (nf_tables' own queue is not built).
# A library, POSIX sh: set NETFAULT_TOP to the source tree and source it
# after test/netns.sh and netns_setup (test/netfault_test.sh,
# bench/compare_multihost -c).
#
#   netfault_conds            the conditions: clean loss1 loss5 dup1 corrupt
#                             delay reorder
#   netfault_sw_offloads      every veth end of the bed checksums and
#                             segments in software (ethtool -K ... off):
#                             TCP then verifies its checksums as on a real
#                             link (a veth otherwise passes its packets as
#                             "already checked", and a corrupted one would
#                             reach the application), and 1 % means 1 % of
#                             wire-sized packets, not of 64 KiB GSO ones.
#                             Status 1 and a message when ethtool refuses
#   netfault_on COND          COND's rule on every host; clean: none;
#                             status 2 for a condition it does not know
#   netfault_off              the rules (and delayers) gone from every host
#   netfault_hits             packets the rules hit since netfault_on, all
#                             hosts together (nftables' counters)
#   netfault_delayed          after netfault_off of delay or reorder: "HELD
#                             OVERTAKEN", the packets the delayers held and
#                             those they let go after a later one, all
#                             hosts together
#   netfault_csum_errors      TCP segments the hosts refused for a bad
#                             checksum, all hosts together, since they began
#
# The conditions (each host applies its rule to what it sends, or for
# corrupt to what it receives, so both directions are hit):
#   loss1, loss5  1 % / 5 % of the packets dropped
#   dup1          1 % of the packets sent twice
#   corrupt       0.1 % of the TCP segments received get byte 50 of the
#                 TCP header overwritten: payload after a 32-byte header
#                 with timestamps (bare ACKs are shorter and left alone);
#                 the receiver's TCP must drop them (TcpInCsumErrors)
#   delay         every packet held 0.5-2 ms (uniform), in order: an
#                 iptables rule (iptables-legacy: mangle POSTROUTING -j
#                 NFQUEUE --queue-bypass) hands each host's packets to
#                 test/progs/nfq_delay in that host, which lets each go
#                 after its delay but never before the one ahead of it
#   reorder       the same without keeping the order: later packets
#                 overtake earlier ones
# (nfq_delay needs Debian's libnetfilter-queue-dev to build, iptables to
# run; without them delay and reorder fail loudly.)

NETFAULT_QUEUE=${NETFAULT_QUEUE:-7}
NETFAULT_DELAY_US=${NETFAULT_DELAY_US:-"500 2000"}

netfault_conds() { echo "clean loss1 loss5 dup1 corrupt delay reorder"; }

netfault_sw_offloads() {
    for _nf_ns in $NETNS_HEAD $NETNS_HOSTS; do
        for _nf_d in $(ip -n "$_nf_ns" -o link show type veth |
                       awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
            if ! _nf_out=$(ip netns exec "$_nf_ns" ethtool -K "$_nf_d" \
                    rx off tx off tso off gso off gro off 2>&1); then
                echo "netfault: ethtool -K $_nf_d in $_nf_ns: $_nf_out" >&2
                return 1
            fi
        done
    done
}

# netfault_rule COND: "HOOK STATEMENT" for nft, nothing for clean
netfault_rule() {
    case $1 in
    clean) ;;
    loss1) echo "egress numgen random mod 1000 < 10 counter drop" ;;
    loss5) echo "egress numgen random mod 1000 < 50 counter drop" ;;
    dup1) echo "egress numgen random mod 1000 < 10 counter dup to eth0" ;;
    corrupt) echo "ingress meta l4proto tcp numgen random mod 1000 < 1 @th,400,8 set 0x5a counter" ;;
    delay|reorder) echo "queue" ;;
    *) return 2 ;;
    esac
}

netfault_on() {
    _nf_r=$(netfault_rule "$1") || {
        echo "netfault: unknown condition '$1' ($(netfault_conds))" >&2
        return 2
    }
    [ -n "$_nf_r" ] || return 0
    [ "$_nf_r" = queue ] && { netfault_delayers "$1"; return; }
    for _nf_h in $NETNS_HOSTS; do
        printf 'table netdev fault {\n chain c {\n  type filter hook %s device eth0 priority 0;\n  %s\n }\n}\n' \
            "${_nf_r%% *}" "${_nf_r#* }" | ip netns exec "$_nf_h" nft -f - || return 1
    done
}

# netfault_delayers delay|reorder: a delayer in every host, then the rule
# that feeds it (in that order: --queue-bypass would let packets through
# undelayed while no delayer listens)
netfault_delayers() {
    _nf_prog=${NETFAULT_TOP:-.}/test/progs/nfq_delay
    [ -x "$_nf_prog" ] || {
        echo "netfault: $_nf_prog is not built (make; it needs libnetfilter-queue-dev)" >&2
        return 1
    }
    command -v iptables-legacy >/dev/null 2>&1 ||
        { echo "netfault: iptables-legacy is not installed (Debian: iptables)" >&2; return 1; }
    _nf_r=""
    [ "$1" = reorder ] && _nf_r=-r
    _nf_i=0
    for _nf_h in $NETNS_HOSTS; do
        _nf_i=$((_nf_i + 1))
        # shellcheck disable=SC2086 # -r or nothing
        ip netns exec "$_nf_h" "$_nf_prog" -q "$NETFAULT_QUEUE" -d "${NETFAULT_DELAY_US% *}" \
            -D "${NETFAULT_DELAY_US#* }" $_nf_r -s "$_nf_i" \
            >"$NETNS_DIR/nfq.$_nf_i" 2>&1 </dev/null &
    done
    # each says its first line once its queue is bound; a half-made
    # condition is taken down again, so that the next can bind the queue
    _nf_t=0
    for _nf_f in $(seq 1 "$_nf_i"); do
        while ! grep -q '^nfq_delay: queue' "$NETNS_DIR/nfq.$_nf_f" 2>/dev/null; do
            _nf_t=$((_nf_t + 1))
            [ $_nf_t -le 100 ] || {
                echo "netfault: nfq_delay did not start:" >&2
                cat "$NETNS_DIR/nfq.$_nf_f" >&2
                netfault_off
                return 1
            }
            sleep 0.05
        done
    done
    for _nf_h in $NETNS_HOSTS; do
        ip netns exec "$_nf_h" iptables-legacy -t mangle -A POSTROUTING -o eth0 \
            -j NFQUEUE --queue-num "$NETFAULT_QUEUE" --queue-bypass || { netfault_off; return 1; }
    done
}

netfault_off() {
    for _nf_h in $NETNS_HOSTS; do
        ip netns exec "$_nf_h" nft delete table netdev fault 2>/dev/null
        ip netns exec "$_nf_h" iptables-legacy -t mangle -F POSTROUTING 2>/dev/null
    done
    # the delayers let what they hold go and say what they did
    for _nf_h in $NETNS_HOSTS; do
        for _nf_p in $(ip netns pids "$_nf_h" 2>/dev/null); do
            case $(cat "/proc/$_nf_p/comm" 2>/dev/null) in
            nfq_delay) kill -TERM "$_nf_p" 2>/dev/null ;;
            esac
        done
    done
    for _nf_t in 1 2 3 4 5 6 7 8 9 10; do
        _nf_left=0
        for _nf_h in $NETNS_HOSTS; do
            for _nf_p in $(ip netns pids "$_nf_h" 2>/dev/null); do
                [ "$(cat "/proc/$_nf_p/comm" 2>/dev/null)" = nfq_delay ] && _nf_left=1
            done
        done
        [ $_nf_left = 0 ] && break
        sleep 0.1
    done
    return 0
}

netfault_delayed() {
    cat "$NETNS_DIR"/nfq.* 2>/dev/null |
        sed -n 's/.*: \([0-9]*\) packets held, \([0-9]*\) reordered.*/\1 \2/p' |
        awk '{ h += $1; r += $2 } END { print h + 0, r + 0 }'
    rm -f "$NETNS_DIR"/nfq.*
}

netfault_hits() {
    _nf_n=0
    for _nf_h in $NETNS_HOSTS; do
        _nf_k=$(ip netns exec "$_nf_h" nft list table netdev fault 2>/dev/null |
                sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | head -n 1)
        _nf_n=$((_nf_n + ${_nf_k:-0}))
    done
    echo "$_nf_n"
}

netfault_csum_errors() {
    _nf_n=0
    for _nf_h in $NETNS_HOSTS; do
        _nf_k=$(ip netns exec "$_nf_h" nstat -az TcpInCsumErrors 2>/dev/null |
                awk '$1 == "TcpInCsumErrors" { print $2 }')
        _nf_n=$((_nf_n + ${_nf_k:-0}))
    done
    echo "$_nf_n"
}
