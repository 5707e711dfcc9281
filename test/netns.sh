# shellcheck shell=sh disable=SC2317 # functions run from traps and callers
# netns.sh - several "hosts" on one machine for multi-host FMPL jobs:
# network namespaces joined by veth pairs, and Open MPI's mpirun reaching
# them through a remote agent that enters a namespace instead of ssh.
# A library: source it (POSIX sh; test/multihost_test.sh, bench/compare).
#
#   . test/netns.sh
#   netns_setup 2 || exit 1        # loud message and status 1 when refused
#   netns_mpirun --hostfile "$NETNS_DIR/hosts.2" -n 4 prog args...
#
# The layout (names carry the PID of the shell that sourced this file):
#
#   fmpl<PID>h0   the head node: mpirun runs here; a bridge br0, 10.211.0.1
#   fmpl<PID>hI   host I (1..N): eth0 = 10.211.0.(I+1)/24, joined to br0 of
#                 the head by a veth pair; hostname fmpl<PID>hI
#
# Every address lives inside namespaces this file made: the root namespace
# (the machine's own network, routes and sysctls) is not touched at all,
# so two runs could not collide even at the same addresses.  They still
# take turns: netns_setup holds an flock on /run/lock/fmpl-netns.lock
# (NETNS_LOCK) until netns_cleanup, so that benchmarks and tests on
# namespaces never share the 2 cores with each other.  Namespaces of this
# pattern whose PID is dead are left-overs of a killed run: netns_setup
# kills what runs in them and deletes them.
#
# The remote agent ($NETNS_DIR/nsrsh HOST CMD) maps an address to its
# namespace and runs CMD there (through sh -c in a fresh environment with
# only PATH, HOME and TMPDIR, as ssh would: a job's variables travel with
# mpirun -x, and FI_TCP_IFACE=eth0 and FI_NET_IFACE=eth0 always do) in a UTS
# namespace of its own with the host's name set, so gethostname() differs
# per host, and by default in a PID namespace of its own with its own
# /dev/shm (a private tmpfs): as on separate machines, no shared memory can
# join two hosts (FMPL's shm transport maps a peer's memfd through
# /proc/<pid>/fd, which a private /dev/shm alone would not stop).
# FMPL_NETNS_SHM=shared in mpirun's environment keeps the machine's PID
# namespace and /dev/shm instead: then FMPL's shm transport works between
# "hosts".
#
# After netns_setup N:
#   NETNS_DIR          temp dir: nsrsh, hosts (every host), hosts.K (the
#                      first K hosts), 2 slots per host (NETNS_SLOTS)
#   NETNS_HEAD         the head namespace; NETNS_HOSTS its hosts, in order
#   NETNS_ADDRS        the hosts' addresses, in order
#   NETNS_IFACE        the hosts' interface name (eth0 in every host:
#                      FI_TCP_IFACE=eth0 and FI_NET_IFACE=eth0 pin
#                      libfabric's tcp and net providers)
#   NETNS_MPIRUN_ARGS  agent, daemon and BTL/OOB interface options for mpirun
#   $NETNS_DIR/mpirun  mpirun in the head with those options (a script, so
#                      that timeout can run it; the lock's fd closed)
# Functions: netns_mpirun ARGS (that script),
# netns_pids [NS...] (processes in the namespaces), netns_host_pid HOSTNUM
# HPID, netns_tx_bytes HOSTNUM (bytes sent by a host's eth0), netns_cleanup
# (kills everything in the namespaces, deletes them and NETNS_DIR).
# netns_setup sets the EXIT, INT, TERM and HUP traps to netns_cleanup
# followed by the caller's own clean-up command NETNS_ATEXIT (once).

NETNS_NET=${NETNS_NET:-10.211.0}
NETNS_SLOTS=${NETNS_SLOTS:-2}
NETNS_LOCK=${NETNS_LOCK:-/run/lock/fmpl-netns.lock}
NETNS_LOCK_WAIT=${NETNS_LOCK_WAIT:-1800}
NETNS_IFACE=eth0
NETNS_PREFIX=fmpl$$h
NETNS_HEAD=""
NETNS_HOSTS=""
NETNS_ADDRS=""
NETNS_DIR=""
NETNS_MPIRUN_ARGS=""
NETNS_ATEXIT=${NETNS_ATEXIT:-}
netns_made=""      # namespaces this shell created, to delete
netns_locked=0
netns_cleaned=0

netns_say() { echo "netns: $*" >&2; }

# netns_refused WHAT OUTPUT: the loud failure (never a skip: a multi-host
# test that quietly does not run proves nothing).
netns_refused() {
    netns_say "FAILED: $1"
    [ -n "$2" ] && printf '%s\n' "$2" | sed 's/^/netns:   /' >&2
    netns_say "the multi-host test needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN), iproute2"
    netns_say "('ip'), util-linux (unshare, flock) and a kernel with network namespaces,"
    netns_say "veth and bridge; this machine refused, so the test FAILS instead of skipping"
}

# netns_clean_stale: delete fmpl<PID>h<N> namespaces and fmpl-netns.<PID>.*
# temp dirs whose PID is dead.
netns_clean_stale() {
    for _ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' |
                 grep -E '^fmpl[0-9]+h[0-9]+$'); do
        _pid=${_ns#fmpl}
        _pid=${_pid%h*}
        [ "$_pid" = $$ ] && continue
        # alive, and not a zombie nobody reaps
        kill -0 "$_pid" 2>/dev/null &&
            [ "$(awk '{ print $3 }' "/proc/$_pid/stat" 2>/dev/null)" != Z ] && continue
        netns_say "removing $_ns, left over by process $_pid (gone)"
        _p=$(ip netns pids "$_ns" 2>/dev/null)
        # shellcheck disable=SC2086 # a list of PIDs
        [ -n "$_p" ] && kill -9 $_p 2>/dev/null
        ip netns del "$_ns" 2>/dev/null
        rm -rf "${TMPDIR:-/tmp}"/ompi."$_ns".* 2>/dev/null
    done
    # and their temp dirs (fmpl-netns.<PID>.XXXXXX)
    for _d in "${TMPDIR:-/tmp}"/fmpl-netns.*.*; do
        [ -d "$_d" ] || continue
        _pid=${_d##*/fmpl-netns.}
        _pid=${_pid%%.*}
        case $_pid in ''|*[!0-9]*) continue ;; esac
        kill -0 "$_pid" 2>/dev/null &&
            [ "$(awk '{ print $3 }' "/proc/$_pid/stat" 2>/dev/null)" != Z ] && continue
        rm -rf "$_d"
    done
}

# netns_setup N: the head and N hosts (1 <= N <= 200).  Status 0, or 1
# after a message on stderr (everything made so far is removed again).
netns_setup() {
    _n=$1
    case $_n in ''|*[!0-9]*|0) netns_say "netns_setup: need a host count, got '$_n'"; return 1 ;; esac
    [ "$_n" -le 200 ] || { netns_say "netns_setup: at most 200 hosts"; return 1; }
    for _c in ip unshare flock mpirun; do
        command -v "$_c" >/dev/null 2>&1 || {
            netns_refused "'$_c' is not installed" ""; return 1; }
    done
    trap 'netns_on_exit' EXIT
    trap 'netns_on_exit; exit 130' INT
    trap 'netns_on_exit; exit 143' TERM
    trap 'netns_on_exit; exit 129' HUP
    netns_cleaned=0
    # fd 9: the lock, held until netns_cleanup (closed in every job we start)
    if ! { exec 9>>"$NETNS_LOCK"; } 2>/dev/null; then
        netns_refused "cannot open the lock file $NETNS_LOCK" ""
        return 1
    fi
    if ! flock -n 9; then
        netns_say "waiting up to $NETNS_LOCK_WAIT s for another namespace run ($NETNS_LOCK)"
        flock -w "$NETNS_LOCK_WAIT" 9 || {
            netns_say "FAILED: $NETNS_LOCK still held after $NETNS_LOCK_WAIT s"; return 1; }
    fi
    netns_locked=1
    netns_clean_stale
    NETNS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-netns.$$.XXXXXX") || return 1
    NETNS_HEAD=${NETNS_PREFIX}0
    if ! _out=$(ip netns add "$NETNS_HEAD" 2>&1); then
        netns_refused "ip netns add $NETNS_HEAD: cannot create a network namespace" "$_out"
        return 1
    fi
    netns_made=$NETNS_HEAD
    _h="ip netns exec $NETNS_HEAD"
    if ! _out=$({ $_h ip link set lo up &&
                  $_h ip link add br0 type bridge &&
                  $_h ip addr add "$NETNS_NET.1/24" dev br0 &&
                  $_h ip link set br0 up; } 2>&1); then
        netns_refused "cannot set up the bridge in $NETNS_HEAD" "$_out"
        return 1
    fi
    # shellcheck disable=SC2016,SC1003 # the agent's own variables and a \ line end
    printf '#!/bin/sh\n# nsrsh - mpirun'\''s remote agent (test/netns.sh): HOST CMD...\nh=$1\nshift\ncase $h in\n' \
        >"$NETNS_DIR/nsrsh"
    _i=1
    while [ "$_i" -le "$_n" ]; do
        _ns=$NETNS_PREFIX$_i
        _a=$NETNS_NET.$((_i + 1))
        if ! _out=$(ip netns add "$_ns" 2>&1); then
            netns_refused "ip netns add $_ns: cannot create a network namespace" "$_out"
            return 1
        fi
        netns_made="$netns_made $_ns"
        _e="ip netns exec $_ns"
        if ! _out=$({ $_h ip link add "v$_i" type veth peer name "$NETNS_IFACE" netns "$_ns" &&
                      $_h ip link set "v$_i" master br0 up &&
                      $_e ip addr add "$_a/24" dev "$NETNS_IFACE" &&
                      $_e ip link set "$NETNS_IFACE" up &&
                      $_e ip link set lo up; } 2>&1); then
            netns_refused "cannot join $_ns to $NETNS_HEAD by a veth pair" "$_out"
            return 1
        fi
        NETNS_HOSTS="$NETNS_HOSTS $_ns"
        NETNS_ADDRS="$NETNS_ADDRS $_a"
        printf '%s) ns=%s ;;\n' "$_a" "$_ns" >>"$NETNS_DIR/nsrsh"
        _i=$((_i + 1))
    done
    NETNS_HOSTS=${NETNS_HOSTS# }
    NETNS_ADDRS=${NETNS_ADDRS# }
    # shellcheck disable=SC2016,SC1003 # the agent's own variables and a \ line end
    printf '%s\n' \
        '*) echo "nsrsh: unknown host $h" >&2; exit 1 ;;' \
        'esac' \
        '# unless FMPL_NETNS_SHM=shared: a PID namespace of its own (sh is its' \
        '# init; /proc remounted) and a private /dev/shm (ip netns exec gives a' \
        '# mount namespace of its own, so the tmpfs is this host'\''s only)' \
        'shm="" pidns=""' \
        'if [ "${FMPL_NETNS_SHM:-private}" != shared ]; then' \
        '    shm="mount -t tmpfs -o mode=1777 fmpl-netns-shm /dev/shm || exit 1;"' \
        '    pidns="--pid --fork --mount-proc"' \
        'fi' \
        '# a fresh environment, as ssh gives: what the job needs comes with -x' \
        'env=""' \
        '[ -n "${TMPDIR:-}" ] && env="TMPDIR=$TMPDIR"' \
        'exec ip netns exec "$ns" unshare --uts $pidns env -i PATH="$PATH" HOME="${HOME:-/}" $env \' \
        '    sh -c "hostname $ns || exit 1; $shm $*"' \
        >>"$NETNS_DIR/nsrsh"
    chmod +x "$NETNS_DIR/nsrsh"
    _k=1
    for _a in $NETNS_ADDRS; do
        : >"$NETNS_DIR/hosts.$_k"
        _j=1
        for _b in $NETNS_ADDRS; do
            [ "$_j" -le "$_k" ] && echo "$_b slots=$NETNS_SLOTS" >>"$NETNS_DIR/hosts.$_k"
            _j=$((_j + 1))
        done
        _k=$((_k + 1))
    done
    cp "$NETNS_DIR/hosts.$_n" "$NETNS_DIR/hosts"
    # Daemons launched one by one from the head (no tree spawn), all
    # daemon and MPI traffic on the namespaces' network.
    # The daemons stay in the foreground (orte_leave_session_attached): in
    # a host's own PID namespace the agent's sh is init, whose exit ends
    # everything in it.
    NETNS_MPIRUN_ARGS="--mca plm_rsh_agent $NETNS_DIR/nsrsh --mca plm_rsh_no_tree_spawn 1"
    NETNS_MPIRUN_ARGS="$NETNS_MPIRUN_ARGS --mca orte_leave_session_attached 1"
    NETNS_MPIRUN_ARGS="$NETNS_MPIRUN_ARGS --mca oob_tcp_if_include $NETNS_NET.0/24"
    NETNS_MPIRUN_ARGS="$NETNS_MPIRUN_ARGS --mca btl_tcp_if_include $NETNS_NET.0/24"
    NETNS_MPIRUN_ARGS="$NETNS_MPIRUN_ARGS -x FI_TCP_IFACE=$NETNS_IFACE -x FI_NET_IFACE=$NETNS_IFACE"
    # Every host's daemon sees all of this machine's cores as its own and
    # would bind its first rank to core 0, so the ranks of different
    # "hosts" would share one core and every message would wait for a
    # context switch (8-byte latency over tcp: ~90 us instead of ~20 for
    # FMPL and Open MPI alike).  Real hosts have cores of their own.
    NETNS_MPIRUN_ARGS="$NETNS_MPIRUN_ARGS --bind-to none"
    [ "$(id -u)" = 0 ] && NETNS_MPIRUN_ARGS="$NETNS_MPIRUN_ARGS --allow-run-as-root"
    # mpirun in the head namespace, with its own hostname (its session
    # directory is then ours to remove); the lock's fd stays here.
    # shellcheck disable=SC2016 # the wrapper's own "$@"
    printf '%s\n' '#!/bin/sh' "# mpirun in $NETNS_HEAD (test/netns.sh)" 'exec 9>&-' \
        "exec ip netns exec $NETNS_HEAD unshare --uts sh -c 'hostname $NETNS_HEAD || exit 1; exec mpirun $NETNS_MPIRUN_ARGS \"\$@\"' sh \"\$@\"" \
        >"$NETNS_DIR/mpirun"
    chmod +x "$NETNS_DIR/mpirun"
    netns_say "head $NETNS_HEAD ($NETNS_NET.1), hosts $NETNS_HOSTS ($NETNS_ADDRS)"
    return 0
}

# netns_mpirun ARGS...: "$NETNS_DIR/mpirun" ARGS (for timeout and other
# commands that need a program rather than a function).
netns_mpirun() {
    "$NETNS_DIR/mpirun" "$@"
}

# netns_pids [NS...]: processes in the given namespaces (default: ours)
netns_pids() {
    # shellcheck disable=SC2086 # a list of names
    [ $# -gt 0 ] || set -- $netns_made
    for _ns in "$@"; do
        ip netns pids "$_ns" 2>/dev/null
    done
}

# netns_host_pid HOSTNUM HPID: the PID (as seen here) of the process in
# host HOSTNUM whose PID inside that host is HPID (the last field of NSpid
# in /proc/PID/status: hosts have PID namespaces of their own unless
# FMPL_NETNS_SHM=shared).
netns_host_pid() {
    for _p in $(netns_pids "$NETNS_PREFIX$1"); do
        if [ "$(awk '$1 == "NSpid:" { print $NF }' "/proc/$_p/status" 2>/dev/null)" = "$2" ]; then
            echo "$_p"
            return 0
        fi
    done
    return 1
}

# netns_tx_bytes HOSTNUM: bytes host HOSTNUM has sent on its eth0
netns_tx_bytes() {
    ip netns exec "$NETNS_PREFIX$1" cat "/sys/class/net/$NETNS_IFACE/statistics/tx_bytes"
}

# netns_cleanup: end every process in our namespaces (TERM, then KILL),
# delete the namespaces (their veths and the bridge go with them), the
# daemons' session directories and NETNS_DIR, release the lock.  Safe to
# call more than once.
netns_cleanup() {
    if [ "$netns_cleaned" = 0 ]; then
        netns_cleaned=1
        if [ -n "$netns_made" ]; then
            _p=$(netns_pids)
            # shellcheck disable=SC2086 # a list of PIDs
            [ -n "$_p" ] && kill -TERM $_p 2>/dev/null
            _t=0
            while [ -n "$(netns_pids)" ] && [ $_t -lt 30 ]; do
                sleep 0.1
                _t=$((_t + 1))
            done
            _p=$(netns_pids)
            if [ -n "$_p" ]; then
                # shellcheck disable=SC2086 # a list of PIDs
                netns_say "killing what is still running in the namespaces:" $_p
                # shellcheck disable=SC2086 # a list of PIDs
                kill -9 $_p 2>/dev/null
                sleep 0.2
            fi
            for _ns in $netns_made; do
                ip netns del "$_ns" 2>/dev/null ||
                    netns_say "could not delete namespace $_ns"
                rm -rf "${TMPDIR:-/tmp}"/ompi."$_ns".* 2>/dev/null
            done
            netns_made=""
        fi
        [ -n "$NETNS_DIR" ] && rm -rf "$NETNS_DIR"
        if [ "$netns_locked" = 1 ]; then
            exec 9>&-
            netns_locked=0
        fi
    fi
}

# netns_on_exit: the trap: netns_cleanup, then the caller's NETNS_ATEXIT
# (its own clean-up), once.
netns_on_exit() {
    netns_cleanup
    _x=$NETNS_ATEXIT
    NETNS_ATEXIT=""
    [ -z "$_x" ] || eval "$_x"
}
