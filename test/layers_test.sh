#!/bin/sh
# test/layers_test.sh - the source tree's layers run one way.
#
# Each folder of src/ is one layer; a file may include the headers of its
# own layer and of those below it, never of one above:
#
#   0 base       services the transports may use (log, env, boots, hosts, clock)
#   1 transport  the ops table, its wrappers, and every transport
#   2 p2p        matching-area point-to-point and the progress engine
#   3 coll       the collectives, on p2p
#   4 api        fmpl_init / fmpl_finalize, on everything
#   5 fortran, blacs (outside src/): bindings on the public API
#
# The public headers (include/) are the contract every layer shares.  A
# header is judged by its own folder, so a transport header that pulls in
# p2p is caught where it is written.  Also: above the transport layer,
# nobody reaches into a transport's ops table (tl->ops->, .ops->) instead
# of the inline wrappers, and nobody includes one transport's private
# header (transport/NAME/...).  Exit status 1 with each violation named.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

level() {
    case $1 in
        src/base/*|base/*) echo 0 ;;
        src/transport/*|transport/*) echo 1 ;;
        src/p2p/*|p2p/*) echo 2 ;;
        src/coll/*|coll/*) echo 3 ;;
        src/api/*|api/*) echo 4 ;;
        src/fortran/*|fortran/*|blacs/*) echo 5 ;;
        *) echo -1 ;;
    esac
}

bad=0 files=0 edges=0
for f in $(find src blacs -name '*.[ch]' | sort); do
    files=$((files + 1))
    lf=$(level "$f")
    if [ "$lf" -lt 0 ]; then
        echo "FAIL $f: in no layer (src/base, transport, p2p, coll, api, fortran)"
        bad=$((bad + 1))
        continue
    fi
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        edges=$((edges + 1))
        case $inc in
            */*) ;;
            *) continue ;;         # its own folder's header, or include/
        esac
        li=$(level "$inc")
        if [ "$li" -gt "$lf" ]; then
            echo "FAIL $f (layer $lf) includes $inc (layer $li): an upper layer"
            bad=$((bad + 1))
        fi
        case $inc in
            transport/*/*)
                if [ "$lf" -gt 1 ]; then
                    echo "FAIL $f includes $inc: a transport's own header, above the transports"
                    bad=$((bad + 1))
                fi ;;
        esac
    done
    if [ "$lf" -ge 2 ] && grep -n 'tl->ops->\|tl\.ops->' "$f" >/dev/null; then
        grep -n 'tl->ops->\|tl\.ops->' "$f" | sed "s|^|FAIL $f:|; s|\$|  (a transport's ops, not its wrapper)|"
        bad=$((bad + 1))
    fi
done
echo "layers_test: $files files, $edges includes, $bad violations"
[ "$bad" -eq 0 ]
