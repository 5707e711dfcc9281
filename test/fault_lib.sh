# shellcheck shell=sh
# shellcheck disable=SC2034 # fault_why and fault_late are for the caller
# fault_lib.sh - reading what test/progs/fault printed; sourced by the
# tests that run it (fault_test.sh, pmix_test.sh, multihost_test.sh).
#
# fault_survivors OUT VICTIM LIMIT
#   Every rank below VICTIM printed "fault: rank R: FMPL_ERR_PEER from CALL
#   at T" no later than LIMIT s after the victim's "fault: rank VICTIM
#   fails (FAULT) at T" (both CLOCK_REALTIME, so across hosts of one
#   machine too).  Returns 0 if so; sets fault_why (why not, or empty) and
#   fault_late (the slowest survivor's seconds after the failure).
fault_survivors() {
    _out=$1 _victim=$2 _limit=$3
    fault_why="" fault_late=0
    _at0=$(sed -n "s/^fault: rank $_victim fails (.*) at \([0-9.]*\)$/\1/p" "$_out")
    if [ -z "$_at0" ]; then
        fault_why="rank $_victim never failed"
        return 1
    fi
    for _r in $(seq 0 $((_victim - 1))); do
        _at=$(sed -n "s/^fault: rank $_r: FMPL_ERR_PEER from .* at \([0-9.]*\)$/\1/p" "$_out")
        if [ -z "$_at" ]; then
            fault_why="rank $_r did not end with FMPL_ERR_PEER"
            return 1
        fi
        _late=$(awk -v a="$_at" -v b="$_at0" 'BEGIN { printf "%.3f", a - b }')
        if awk -v d="$_late" -v l="$_limit" 'BEGIN { exit !(d > l) }'; then
            fault_why="rank $_r ended $_late s after the failure (limit $_limit s)"
            return 1
        fi
        if awk -v d="$_late" -v w="$fault_late" 'BEGIN { exit !(d > w) }'; then
            fault_late=$_late
        fi
    done
    return 0
}
