#!/bin/sh
# install_test.sh - `make install` into a scratch prefix, then build the
# README's way (pkg-config, the installed header and shared library) and run
# the result under the installed fmplrun.  Prints "N passed, M failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-install.XXXXXX") || exit 1
trap 'rm -rf "$prefix"' EXIT
pass=0 fail=0
step() {
    name=$1; shift
    if "$@" > "$prefix/step.log" 2>&1; then
        pass=$((pass + 1)); echo "PASS $name"
    else
        fail=$((fail + 1)); echo "FAIL $name"; sed 's/^/    /' "$prefix/step.log"
    fi
}
step "make install" make -C "$top" -s install PREFIX="$prefix"
for f in include/fmpl.h include/fmplf.h lib/libfmpl.a lib/libfmpl.so lib/libfmpl.so.0 \
         lib/pkgconfig/fmpl.pc bin/fmplrun; do
    step "installed $f" test -e "$prefix/$f"
done
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
step "pkg-config" pkg-config --exists fmpl
step "cc with pkg-config" sh -c "cc '$top/examples/pingpong.c' \$(pkg-config --cflags --libs fmpl) \
    -Wl,-rpath,'$prefix/lib' -o '$prefix/pingpong'"
step "soname" sh -c "readelf -d '$prefix/lib/libfmpl.so.0' | grep -q 'SONAME.*libfmpl.so.0'"
step "run under installed fmplrun" "$prefix/bin/fmplrun" -n 2 -t 60 "$prefix/pingpong"
step "make uninstall" make -C "$top" -s uninstall PREFIX="$prefix"
step "uninstalled" sh -c "! test -e '$prefix/lib/libfmpl.so' && ! test -e '$prefix/bin/fmplrun'"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
