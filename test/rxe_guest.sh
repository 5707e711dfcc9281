#!/bin/bash
# rxe_guest.sh - the guest half of test/rxe_run.sh (which documents the
# test bed).  Entry points:
#
#   rxe_guest.sh WORK             run by the guest's /init, chrooted into the
#                                 host's /, WORK being the host's work folder
#                                 of the run (shared read-write over 9p)
#   rxe_guest.sh --mpirun ARGS    mpirun over the guests of a -g 2 run (the
#                                 guest side of `rxe_run.sh -g 2 -n N`, and
#                                 what a -c script runs as $RXE_MPIRUN)
#   rxe_guest.sh --rsh HOST CMD   mpirun's remote agent: runs CMD on guest
#                                 HOST through the other's --rshd
#   rxe_guest.sh --rshd           one connection of that remote shell
#
# As /init's script it brings up the soft-RoCE devices, then, on the guest
# that runs the job (the only one, or guest 1 of two), runs the job that
# WORK/job.sh describes and leaves in WORK:
#   ready.G         the devices guest G has, once ibv_devices lists them
#                   (the host times the boot by it)
#   stdout, stderr  the job's
#   status          the job's exit status (timeout's 124 when its time ran out)
#   bedfail         instead of status: why the job could not be run
# Guest 2 of two runs the remote shell the job's mpirun starts its daemons
# through, and powers off once guest 1 has left a status or a bedfail.
# Its own messages go to the guest console (rxe_run.sh -v shows it).
# Refuses to run anywhere but in that guest: on the host it would add veths
# and rxe devices.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
SELF=$(readlink -f -- "${BASH_SOURCE[0]}")
# Two guests: a private qemu wire between them (rxe_run.sh's UDP link), on
# which these addresses exist, and the remote shell's port.
NET2=169.254.79
RSH_PORT=7070

# ---- mpirun's remote agent: the client and the server of one command ------
# Not ssh: nothing on these guests is secret, the wire joins only the two
# of them, and Debian's busybox nc serves it (no daemon to install).  The
# agent sends the command line - what ssh would hand the remote shell -
# and relays what it prints; it ends when the command has (the server
# closes the connection), and says 255, as ssh would, when the other guest
# cannot be reached.
case ${1:-} in
    --rsh)
        [ $# -ge 3 ] || { echo "usage: rxe_guest.sh --rsh HOST CMD..." >&2; exit 255; }
        host=$2
        shift 2
        exec 3<>"/dev/tcp/$host/$RSH_PORT" ||
            { echo "rxe_guest: cannot reach the remote shell of $host:$RSH_PORT" >&2; exit 255; }
        printf '%s\n' "$*" >&3
        cat <&3
        exit 0
        ;;
    --rshd)
        # stdin and stdout are the connection (busybox nc -e); the command
        # runs as ssh would run it: sh -c, a fresh environment
        IFS= read -r line || exit 1
        # shellcheck disable=SC2086 # two words (make coverage's), or none
        exec env -i PATH="$PATH" HOME=/run/home TMPDIR=/tmp ${RXE_GCOV_ENV:-} sh -c "$line" 2>&1
        ;;
    --mpirun)
        shift
        # The job's variables travel with -x (the daemons start in the
        # remote shell's fresh environment).  Each guest is its own host
        # with all its cores: no binding.  The daemons and Open MPI talk
        # over the wire only.
        xs=()
        for v in $(compgen -e); do
            case $v in FMPL_* | FI_*) xs+=(-x "$v") ;; esac
        done
        exec mpirun --allow-run-as-root --mca plm_rsh_agent "$SELF --rsh" \
            --mca plm_rsh_no_tree_spawn 1 --mca orte_leave_session_attached 1 \
            --mca oob_tcp_if_include "$NET2.0/24" --mca btl_tcp_if_include "$NET2.0/24" \
            --bind-to none --host "$NET2.1:64,$NET2.2:64" "${xs[@]}" "$@"
        ;;
esac

W=${1:?usage: rxe_guest.sh WORK (run by test/rxe_run.sh in its guest only)}

fail() {
    echo "rxe_guest: $*" >&2
    printf 'guest %s: %s\n' "${guest:-?}" "$*" >>"$W/bedfail"
    exit 1
}
run() { "$@" || fail "failed: $*"; }

grep -qw fmpl_rxe /proc/cmdline || fail "not in the guest of test/rxe_run.sh"
guest=$(sed -n 's/.*fmpl_rxe_guest=\([0-9]*\).*/\1/p' /proc/cmdline)
guests=$(sed -n 's/.*fmpl_rxe_guests=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$guest" ] && [ -n "$guests" ] || fail "no fmpl_rxe_guest= and fmpl_rxe_guests= on the kernel command line"
# shellcheck source=/dev/null  # written per run by rxe_run.sh
. "$W/job.sh" || fail "cannot read $W/job.sh"
# make coverage (FMPL_RXE_GCOV=1): gcov writes its counts into the work
# folder, one tree per guest, which rxe_run.sh merges into the host's
RXE_GCOV_ENV=""
for v in "${RXE_ENV[@]}"; do
    [ "$v" = FMPL_RXE_GCOV=1 ] &&
        RXE_GCOV_ENV="GCOV_PREFIX=/run/fmpl-rxe/gcov.$guest GCOV_PREFIX_STRIP=0"
done
export RXE_GCOV_ENV

# No one else is on these links, so duplicate address detection only
# delays the IPv6 link-local addresses, which rxe's GIDs follow: off.
echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
run ip link set lo up
# Open MPI needs a host name, and the guests' must differ ("(none)" is
# the kernel's default).
run hostname "fmpl-rxe-g$guest"
if [ "$guests" = 1 ]; then
    run ip link add veth0 type veth peer name veth1
    run ip link set veth0 up
    run ip link set veth1 up
    # IPv4 on veth0 only: with both ends in one subnet, traffic between them
    # would be routed through lo, not across the pair.
    run ip addr add 169.254.78.1/24 dev veth0
    run rdma link add rxe0 type rxe netdev veth0
    run rdma link add rxe1 type rxe netdev veth1
    want="rxe0 rxe1"
else
    # the NIC qemu gave us: the one network device with a bus device
    nic=""
    for n in /sys/class/net/*; do
        [ -e "$n/device" ] && { nic=${n##*/}; break; }
    done
    [ -n "$nic" ] || fail "no network device for the link between the guests"
    echo 0 >"/proc/sys/net/ipv6/conf/$nic/accept_dad"
    run ip link set "$nic" up
    run ip addr add "$NET2.$guest/24" dev "$nic"
    run rdma link add rxe0 type rxe netdev "$nic"
    want="rxe0"
fi
for _ in $(seq 50); do
    ip -6 addr | grep -q tentative || break
    sleep 0.2
done
rdma link show >&2
devs=$(ibv_devices 2>&1)
printf '%s\n' "$devs" >&2
for d in $want; do
    grep -qw "$d" <<<"$devs" || fail "ibv_devices does not list $d: $devs"
done
mkdir -p /run/home

if [ "$guest" != 1 ]; then
    # Serve the remote shell until guest 1's job has ended (or failed to
    # start); this guest's processes end with it when it powers off.
    busybox nc -ll -p "$RSH_PORT" -e /bin/bash "$SELF" --rshd </dev/null >&2 2>&1 &
    sleep 0.2
    kill -0 $! 2>/dev/null || fail "cannot listen on port $RSH_PORT for the remote shell"
    echo "$want" >"$W/ready.$guest"
    until [ -e "$W/status" ] || [ -e "$W/bedfail" ]; do sleep 0.5; done
    exit 0
fi

# Guest 1 runs the job once every other guest is up.
g=2
while [ "$g" -le "$guests" ]; do
    for _ in $(seq "$RXE_PEER_WAIT"); do
        [ -e "$W/ready.$g" ] || [ -e "$W/bedfail" ] && break
        sleep 1
    done
    [ -e "$W/bedfail" ] && exit 1
    [ -e "$W/ready.$g" ] || fail "guest $g did not come up within $RXE_PEER_WAIT s of this one"
    g=$((g + 1))
done
echo "$want" >"$W/ready.1"
cd -- "$RXE_CWD" 2>/dev/null ||
    fail "cannot enter $RXE_CWD in the guest (it sees the host's /, /tmp and /var/tmp, not /run or /dev)"
# A clean environment: the caller's PATH, FMPL_*, FI_* and OMPI_* only,
# and where the job is spread over two guests, RXE_MPIRUN: the command
# that starts such a job.  timeout(1) signals the whole process group, so
# ranks too; -k: SIGKILL for what outlives the TERM by 10 s.
extra=(RXE_GUESTS="$guests")
# shellcheck disable=SC2206 # two words, or none
extra+=($RXE_GCOV_ENV)
[ "$guests" -gt 1 ] && extra+=(RXE_MPIRUN="$SELF --mpirun")
env -i HOME=/run/home "${RXE_ENV[@]}" "${extra[@]}" "$(command -v timeout)" -k 10 "$RXE_TIMEOUT" \
    "${RXE_CMD[@]}" </dev/null >"$W/stdout" 2>"$W/stderr"
rc=$?
echo "rxe_guest: job exit status $rc" >&2
# status appears whole or not at all: the host takes a partial file for none
echo "$rc" >"$W/status.new" && mv "$W/status.new" "$W/status"
