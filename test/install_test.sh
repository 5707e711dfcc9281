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

# a packager's install: staged under DESTDIR, libraries in a multiarch LIBDIR
stage="$prefix/stage"
step "make install DESTDIR LIBDIR" make -C "$top" -s install DESTDIR="$stage" PREFIX=/usr \
    LIBDIR=/usr/lib/x86_64-linux-gnu
step "staged files" test -e "$stage/usr/lib/x86_64-linux-gnu/libfmpl.so.0" -a \
    -e "$stage/usr/lib/x86_64-linux-gnu/pkgconfig/fmpl.pc" -a -e "$stage/usr/bin/fmplrun" -a \
    -e "$stage/usr/include/fmpl.h"
step "pc libdir is LIBDIR" grep -qx "libdir=/usr/lib/x86_64-linux-gnu" \
    "$stage/usr/lib/x86_64-linux-gnu/pkgconfig/fmpl.pc"

# the build's conventions: short lines, V=1, make help, and CFLAGS/LDFLAGS
# reaching every compile and link (a coverage build of a copy of the tree)
# (a make of our own: not the flags of a `make -s check` around us)
step "make: short lines" sh -c "$(command -v env) -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
    make -C '$top' -B build/src/base/error.o | grep -q '^  CC  *src/base/error.c\$'"
step "make V=1: commands" sh -c "$(command -v env) -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
    make -C '$top' -B V=1 build/src/base/error.o |
    grep -q -- '-c src/base/error.c -o build/src/base/error.o'"
step "make -s: silent" sh -c "test -z \"\$($(command -v env) -u MAKEFLAGS -u MFLAGS \
    -u MAKELEVEL make -s -C '$top' -B build/src/base/error.o)\""
step "make help" sh -c "make -C '$top' -s help | grep -q 'install  '"
cov="$prefix/cov"
mkdir -p "$cov"
cp -r "$top/src" "$top/include" "$top/tools" "$top/Makefile" "$top/fmpl.pc.in" "$cov/"
step "CFLAGS=--coverage LDFLAGS=--coverage" make -C "$cov" -s -j2 CFLAGS=--coverage \
    LDFLAGS=--coverage lib/libfmpl.so bin/fmplrun
step "coverage counted" sh -c "cc --coverage -I'$cov/include' '$top/examples/pingpong.c' \
    -L'$cov/lib' -lfmpl -Wl,-rpath,'$cov/lib' -o '$cov/pingpong' && \
    '$cov/bin/fmplrun' -n 2 -t 60 '$cov/pingpong' && test -s '$cov/build/src/p2p/send.gcda'"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
