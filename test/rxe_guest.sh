#!/bin/bash
# rxe_guest.sh WORK - the guest half of test/rxe_run.sh (which documents the
# guest): run by the guest's /init, chrooted into the host's /, with WORK the
# host's work folder of the run (shared read-write over 9p).  Brings up the
# soft-RoCE devices, then runs the job that WORK/job.sh describes and leaves
# in WORK:
#   ready           "rxe0 rxe1" once ibv_devices lists both (the host times
#                   the boot by it)
#   stdout, stderr  the job's
#   status          the job's exit status (timeout's 124 when its time ran out)
#   bedfail         instead of status: why the job could not be run
# Its own messages go to the guest console (rxe_run.sh -v shows it).
# Refuses to run anywhere but in that guest: on the host it would add veths
# and rxe devices.
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
W=${1:?usage: rxe_guest.sh WORK (run by test/rxe_run.sh in its guest only)}

fail() {
    echo "rxe_guest: $*" >&2
    printf '%s\n' "$*" >>"$W/bedfail"
    exit 1
}
run() { "$@" || fail "failed: $*"; }

grep -qw fmpl_rxe /proc/cmdline || fail "not in the guest of test/rxe_run.sh"
# shellcheck source=/dev/null  # written per run by rxe_run.sh
. "$W/job.sh" || fail "cannot read $W/job.sh"

# No one else is on these links, so duplicate address detection only
# delays the IPv6 link-local addresses, which rxe's GIDs follow: off.
echo 0 >/proc/sys/net/ipv6/conf/default/accept_dad
run ip link set lo up
run ip link add veth0 type veth peer name veth1
run ip link set veth0 up
run ip link set veth1 up
# IPv4 on veth0 only: with both ends in one subnet, traffic between them
# would be routed through lo, not across the pair.
run ip addr add 169.254.78.1/24 dev veth0
run rdma link add rxe0 type rxe netdev veth0
run rdma link add rxe1 type rxe netdev veth1
for _ in $(seq 50); do
    ip -6 addr | grep -q tentative || break
    sleep 0.2
done
rdma link show >&2
devs=$(ibv_devices 2>&1)
printf '%s\n' "$devs" >&2
for d in rxe0 rxe1; do
    grep -qw "$d" <<<"$devs" || fail "ibv_devices does not list $d: $devs"
done
echo "rxe0 rxe1" >"$W/ready"

mkdir -p /run/home
cd -- "$RXE_CWD" 2>/dev/null ||
    fail "cannot enter $RXE_CWD in the guest (it sees the host's /, /tmp and /var/tmp, not /run or /dev)"
# A clean environment: the caller's PATH, FMPL_*, FI_* and OMPI_* only.
# timeout(1) signals the whole process group, so ranks too; -k: SIGKILL
# for what outlives the TERM by 10 s.
env -i HOME=/run/home "${RXE_ENV[@]}" "$(command -v timeout)" -k 10 "$RXE_TIMEOUT" \
    "${RXE_CMD[@]}" </dev/null >"$W/stdout" 2>"$W/stderr"
rc=$?
echo "rxe_guest: job exit status $rc" >&2
# status appears whole or not at all: the host takes a partial file for none
echo "$rc" >"$W/status.new" && mv "$W/status.new" "$W/status"
