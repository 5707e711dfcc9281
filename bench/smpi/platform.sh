#!/bin/sh
# bench/smpi/platform.sh - a SimGrid platform (XML, DTD v4.1) of the shape
# and link parameters of FMPL's emulated InfiniBand cluster
# (FMPL_TRANSPORT=ib: src/transport/ib/ib_model.c, ib_net.c), for SMPI.
#
#   bench/smpi/platform.sh [-H HOSTFILE] N switch|fattree > P.xml
#     N         nodes (one rank a node), 1 to 4096
#     switch    every node on one switch (HA-PACS/TCA; FMPL_IB_TOPO=switch)
#     fattree   leaf switches of 18 nodes, each with one uplink to each of
#               18 spines (FMPL_IB_TOPO=fattree, FMPL_IB_LEAF=18,
#               FMPL_IB_SPINES=18)
#     -H FILE   also write the hostfile for smpirun: the first N hosts
#
# How FMPL's parameters map (defaults of ib_model.c and ib_node_model.c):
#  - link bandwidth: LINK_MBPS 3380 MB/s, each direction (SPLITDUPLEX: a
#    node's link into the switch and its link out of it are two links, as
#    ib_net.c's).  FMPL sends MTU 2048 + HEADER 26 bytes a packet: SMPI
#    gets the payload's share, smpi/bw-factor 2048/2074 = 0.98746.
#  - latency: FMPL's small write costs, in the network, HCA_NS 500 (the HCA
#    fetching the request) + SWITCH_NS 150 a switch crossed + MEM_NS 250
#    (the responder writing memory): 900 ns over one switch, 1200 ns over
#    three (leaf, spine, leaf).  SimGrid's latency is the sum of its
#    links': one switch is 2 links, so 450 ns a link, exact; a fat tree's
#    links all share one latency (the cluster's lat), and a route between
#    leaves has 4 of them: 300 ns a link, exact between leaves (most pairs
#    beyond 18 nodes), 300 ns short inside a leaf (2 links: 600 ns).
#    smpi/lat-factor 1: the links' latency as it is.
#  - the CPU's part: an FMPL call's start CALL_NS 100 + POST_NS 150 (work
#    request, doorbell) on a send: smpi/os and smpi/ois 250 ns; a receive
#    ending RECV_DONE_NS 100 + CALL_NS 100: smpi/or 200 ns.
#  - sharing: network/weight-S 0 (plain max-min fairness, no TCP
#    RTT-unfairness: a switch's arbitration, as FMPL's link calendars share
#    packets) and network/crosstraffic 0 (InfiniBand's ACKs take no
#    bandwidth in FMPL's model either: ACK_NS is a latency).
#  - hosts: 100 Gflop/s (speed="100Gf"), the K20X-class node bench/tca
#    models Himeno's sweep at; smpi/simulate-computation no: only what the
#    program charges explicitly (bench/smpi/himeno) counts, as with
#    FMPL's default CPU scale 0.
#  - the fat tree: SimGrid's FAT_TREE cluster "2;18,L;1,18;1,1" - two
#    levels, leaf switches of 18 hosts, L leaves each with 18 parents (the
#    spines); it routes up by destination mod 18, as ib_net.c (d mod
#    spines).  It needs 18 L hosts: the platform has 18 ceil(N/18), the
#    hostfile the first N, so the last leaf is partly used as in FMPL.
# The MPI protocol thresholds (smpi/send-is-detached-thresh 65536,
# smpi/async-small-thresh 0) and the collective algorithms (SMPI's
# default selector) are SMPI's own; smpirun's --cfg= overrides any of
# the above.
set -eu
usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
hostfile=
while getopts H: opt; do
    case $opt in
    H) hostfile=$OPTARG ;;
    *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
n=$1 topo=$2
case $n in
'' | *[!0-9]*) usage ;;
esac
if [ "$n" -lt 1 ] || [ "$n" -gt 4096 ]; then usage; fi

leaf=18 spines=18
case $topo in
switch)
    hosts=$n
    cluster="lat=\"450ns\""
    ;;
fattree)
    leaves=$(((n + leaf - 1) / leaf))
    hosts=$((leaf * leaves))
    cluster="lat=\"300ns\" topology=\"FAT_TREE\" topo_parameters=\"2;$leaf,$leaves;1,$spines;1,1\""
    ;;
*) usage ;;
esac

cat <<XML
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- bench/smpi/platform.sh $n $topo: FMPL_TRANSPORT=ib's cluster for SMPI (the mapping: that script) -->
<platform version="4.1">
  <config>
    <prop id="smpi/bw-factor" value="0:0.98746"/>
    <prop id="smpi/lat-factor" value="0:1"/>
    <prop id="smpi/os" value="0:2.5e-7:0"/>
    <prop id="smpi/ois" value="0:2.5e-7:0"/>
    <prop id="smpi/or" value="0:2e-7:0"/>
    <prop id="network/weight-S" value="0"/>
    <prop id="network/crosstraffic" value="0"/>
    <prop id="smpi/simulate-computation" value="no"/>
  </config>
  <cluster id="ib-$topo" prefix="node-" suffix="" radical="0-$((hosts - 1))" speed="100Gf"
           bw="3380MBps" sharing_policy="SPLITDUPLEX" $cluster/>
</platform>
XML

if [ -n "$hostfile" ]; then
    i=0
    : >"$hostfile"
    while [ "$i" -lt "$n" ]; do
        echo "node-$i" >>"$hostfile"
        i=$((i + 1))
    done
fi
