#!/bin/sh
# fakehost.sh K PROG ARGS... - run one rank of an fmplrun job as if the job
# were spread over hosts of K ranks each: ranks 0..K-1 on "fakehost0",
# K..2K-1 on "fakehost1", ...  FMPL routes by host identity (FMPL_HOSTNAME,
# else the host name), so this puts the route transport - shm to the ranks
# of the same fake host, libfabric to the others - under the test suites
# on one machine.  The test drivers insert it when FMPL_TEST_RANKS_PER_HOST
# is set (test/testlib.h).
k=$1
shift
FMPL_HOSTNAME=fakehost$((${FMPL_RANK:?not started by fmplrun} / k))
export FMPL_HOSTNAME
exec "$@"
