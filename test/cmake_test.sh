#!/bin/sh
# cmake_test.sh - CMake's find_package(FMPL) (cmake/FMPLConfig.cmake.in,
# cmake/FMPLConfigVersion.cmake.in) on staged installs:
#
#   1. `make install DESTDIR=... PREFIX=/usr/local` puts FMPLConfig.cmake
#      and FMPLConfigVersion.cmake in /usr/local/lib/cmake/FMPL;
#   2. a C project, found by CMAKE_PREFIX_PATH and again by FMPL_DIR:
#      FMPL::fmpl (the staged libfmpl.so.0), FMPL::fmpl_static (no
#      libfmpl.so needed) and the usage's add_test with FMPL_FMPLRUN; the
#      programs pass under the staged fmplrun -n 2, and fmpl.mod's
#      directory reaches no C compile;
#   3. a C project on FMPL::fmpl_blacs and FMPL::fmpl_blacs_static
#      (Cblacs_pinfo), run the same way;
#   4. a Fortran project (`use fmpl`, FMPL::fmpl): fmpl.mod found through
#      the target alone; it runs the same way;
#   5. versions (SameMinorVersion: find_package(FMPL 99) and a newer or
#      older minor fail, X.Y and X.Y.Z EXACT pass; ranges), components,
#      a 32-bit project turned away, a missing libfmpl.so.0 reported;
#   6. a packager's install (PREFIX=/usr, a multiarch LIBDIR) moved
#      elsewhere: every path follows the config file; an install reached
#      through a symbolic link (as /lib -> /usr/lib): the installed paths;
#   7. `make uninstall` removes the CMake files and their directory.
#
# Needs a built tree (make) and cmake (make deps).  Prints "N passed, M
# failed"; the exit status is non-zero when anything failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-cmake.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
LC_ALL=C
export LC_ALL
pass=0 fail=0
step() {
    name=$1; shift
    if "$@" > "$tmp/step.log" 2>&1; then
        pass=$((pass + 1)); echo "PASS $name"
    else
        fail=$((fail + 1)); echo "FAIL $name"; sed 's/^/    /' "$tmp/step.log"
    fi
}
if ! command -v cmake > /dev/null 2>&1; then
    echo "FAIL: cmake is not installed (make deps installs Debian's cmake)"
    echo "0 passed, 1 failed"
    exit 1
fi
if [ ! -f "$top/lib/libfmpl.so" ] || [ ! -x "$top/bin/fmplrun" ] ||
   [ ! -f "$top/build/fortran/fmpl.mod" ]; then
    echo "FAIL: lib/libfmpl.so, bin/fmplrun or build/fortran/fmpl.mod missing (run make)"
    echo "0 passed, 1 failed"
    exit 1
fi
# the version the header gives (the Makefile's VERSION)
major=$(sed -n 's/^#define FMPL_VERSION_MAJOR \([0-9]*\)$/\1/p' "$top/include/fmpl.h")
minor=$(sed -n 's/^#define FMPL_VERSION_MINOR \([0-9]*\)$/\1/p' "$top/include/fmpl.h")
patch=$(sed -n 's/^#define FMPL_VERSION_PATCH \([0-9]*\)$/\1/p' "$top/include/fmpl.h")
version=$major.$minor.$patch

# make and cmake of our own: not the flags or jobserver of a `make check`
# around us; no package registry (only the prefixes given are searched)
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$top" -s "$@"; }
cm() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL cmake "$@"
}
cmconf() {
    cm -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF "$@"
}

# ---- 1. a staged install -------------------------------------------------
stage="$tmp/stage"
prefix="$stage/usr/local"
cmakedir="$prefix/lib/cmake/FMPL"
step "make install DESTDIR PREFIX=/usr/local" mk install DESTDIR="$stage" PREFIX=/usr/local
step "installed lib/cmake/FMPL/FMPLConfig.cmake, FMPLConfigVersion.cmake" \
    test -f "$cmakedir/FMPLConfig.cmake" -a -f "$cmakedir/FMPLConfigVersion.cmake"
step "no @VARIABLE@ left in them" sh -c "! grep -n '@[A-Z_]*@' '$cmakedir'/*.cmake"
fmoddir=$(cd "$prefix/lib/fortran" 2>/dev/null && echo "$prefix/lib/fortran"/gfortran-mod-*)

# ---- 2. C: FMPL::fmpl, FMPL::fmpl_static, add_test ----------------------
mkdir -p "$tmp/c"
cat > "$tmp/c/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(fmpl_cmake_c C)
find_package(FMPL ${FMPL_REQ} REQUIRED)
add_executable(hello hello.c)
target_link_libraries(hello PRIVATE FMPL::fmpl)
add_executable(hello_static hello.c)
target_link_libraries(hello_static PRIVATE FMPL::fmpl_static)
enable_testing()
add_test(NAME hello COMMAND ${FMPL_FMPLRUN} -n 2 -t 60 $<TARGET_FILE:hello>)
set_tests_properties(hello PROPERTIES PASS_REGULAR_EXPRESSION "cmake-c rank 1 of 2")
file(WRITE ${CMAKE_BINARY_DIR}/found.txt
     "FMPL_DIR=${FMPL_DIR}\nFMPL_VERSION=${FMPL_VERSION}\nFMPL_FMPLRUN=${FMPL_FMPLRUN}\n")
EOF
cat > "$tmp/c/hello.c" <<'EOF'
#include <stdio.h>
#include <fmpl.h>
int main(void)
{
    if (fmpl_init(1) != FMPL_SUCCESS)
        return 1;
    printf("cmake-c rank %d of %d FMPL %s\n", fmpl_rank(), fmpl_size(), FMPL_VERSION_STRING);
    return fmpl_finalize() != FMPL_SUCCESS;
}
EOF
# run NAME PROGRAM PREFIX: PROGRAM under PREFIX's fmplrun -n 2, both ranks'
# line (NAME rank R of 2 ...) in its output
run() {
    "$3/bin/fmplrun" -n 2 -t 60 "$2" > "$tmp/run.out" 2>&1
    rc=$?
    cat "$tmp/run.out"
    test $rc = 0 && grep -q "^$1 rank 0 of 2" "$tmp/run.out" &&
        grep -q "^$1 rank 1 of 2" "$tmp/run.out"
}
# build SRC BUILD ARGS...: configure (ARGS) and build
build() {
    src=$1 bld=$2; shift 2
    cmconf -S "$src" -B "$bld" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" && cm --build "$bld"
}
cbuild="$tmp/c-build"
step "C project: CMAKE_PREFIX_PATH, find_package(FMPL $major.$minor REQUIRED), build" \
    build "$tmp/c" "$cbuild" -DCMAKE_PREFIX_PATH="$prefix" -DFMPL_REQ="$major.$minor"
step "found the staged FMPLConfig.cmake, FMPL_VERSION $version" sh -c "cat '$cbuild/found.txt' &&
    grep -qx 'FMPL_DIR=$cmakedir' '$cbuild/found.txt' &&
    grep -qx 'FMPL_VERSION=$version' '$cbuild/found.txt' &&
    grep -qx 'FMPL_FMPLRUN=$prefix/bin/fmplrun' '$cbuild/found.txt'"
step "FMPL::fmpl: hello uses the staged libfmpl.so.0" sh -c "ldd '$cbuild/hello' &&
    ldd '$cbuild/hello' | grep -q '=> $prefix/lib/libfmpl.so.0'"
step "FMPL::fmpl_static: hello_static needs no libfmpl.so" sh -c "ldd '$cbuild/hello_static';
    ! ldd '$cbuild/hello_static' | grep -q libfmpl"
step "no fmpl.mod directory in the C compiles" sh -c "test -s '$cbuild/compile_commands.json' &&
    grep -q '$prefix/include' '$cbuild/compile_commands.json' &&
    ! grep -q 'gfortran-mod' '$cbuild/compile_commands.json'"
step "hello passes under the staged fmplrun -n 2" run cmake-c "$cbuild/hello" "$prefix"
step "hello_static passes under the staged fmplrun -n 2" run cmake-c "$cbuild/hello_static" "$prefix"
step "ctest: add_test with FMPL_FMPLRUN" sh -c "cd '$cbuild' && env -u MAKEFLAGS ctest --output-on-failure"
cbuild2="$tmp/c-build-dir"
step "C project: FMPL_DIR (the config directory), find_package(FMPL $version REQUIRED)" \
    build "$tmp/c" "$cbuild2" -DFMPL_DIR="$cmakedir" -DFMPL_REQ="$version"
step "FMPL_DIR: same FMPLConfig.cmake, hello passes" sh -c "
    grep -qx 'FMPL_DIR=$cmakedir' '$cbuild2/found.txt' &&
    ldd '$cbuild2/hello' | grep -q '=> $prefix/lib/libfmpl.so.0' &&
    '$prefix/bin/fmplrun' -n 2 -t 60 '$cbuild2/hello' | grep -q '^cmake-c rank 1 of 2 FMPL $version\$'"

# ---- 3. C on FMPL::fmpl_blacs ---------------------------------------------
mkdir -p "$tmp/blacs"
cat > "$tmp/blacs/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(fmpl_cmake_blacs C)
find_package(FMPL REQUIRED COMPONENTS blacs static)
add_executable(pinfo pinfo.c)
target_link_libraries(pinfo PRIVATE FMPL::fmpl_blacs)
add_executable(pinfo_static pinfo.c)
target_link_libraries(pinfo_static PRIVATE FMPL::fmpl_blacs_static)
EOF
cat > "$tmp/blacs/pinfo.c" <<'EOF'
#include <stdio.h>
#include <fmpl_blacs.h>
int main(void)
{
    int me = -1, np = -1;
    Cblacs_pinfo(&me, &np);
    printf("cmake-blacs rank %d of %d\n", me, np);
    Cblacs_exit(0);
    return 0;
}
EOF
bbuild="$tmp/blacs-build"
step "BLACS project: FMPL::fmpl_blacs, FMPL::fmpl_blacs_static, build" \
    build "$tmp/blacs" "$bbuild" -DCMAKE_PREFIX_PATH="$prefix"
step "FMPL::fmpl_blacs: the staged libfmpl_blacs.so.0 and libfmpl.so.0" sh -c "ldd '$bbuild/pinfo' &&
    ldd '$bbuild/pinfo' | grep -q '=> $prefix/lib/libfmpl_blacs.so.0' &&
    ldd '$bbuild/pinfo' | grep -q '=> $prefix/lib/libfmpl.so.0'"
step "Cblacs_pinfo passes under the staged fmplrun -n 2" run cmake-blacs "$bbuild/pinfo" "$prefix"
step "FMPL::fmpl_blacs_static: no libfmpl*.so, passes" sh -c "! ldd '$bbuild/pinfo_static' |
    grep libfmpl && '$prefix/bin/fmplrun' -n 2 -t 60 '$bbuild/pinfo_static' |
    grep -q '^cmake-blacs rank 1 of 2'"

# ---- 4. Fortran: use fmpl -------------------------------------------------
mkdir -p "$tmp/f"
cat > "$tmp/f/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(fmpl_cmake_fortran Fortran)
find_package(FMPL REQUIRED COMPONENTS Fortran)
add_executable(fhello fhello.f90)
target_link_libraries(fhello PRIVATE FMPL::fmpl)
file(WRITE ${CMAKE_BINARY_DIR}/found.txt "FMPL_Fortran_MODULE_DIR=${FMPL_Fortran_MODULE_DIR}\n")
EOF
cat > "$tmp/f/fhello.f90" <<'EOF'
program fhello
  use fmpl
  implicit none
  integer :: ier, me, np
  call fmpl_init(1, ier)
  if (ier /= FMPL_SUCCESS) error stop 'fmpl_init'
  call fmpl_rank(me, ier)
  call fmpl_size(np, ier)
  print '(a,i0,a,i0)', 'cmake-fortran rank ', me, ' of ', np
  call fmpl_finalize(ier)
  if (ier /= FMPL_SUCCESS) error stop 'fmpl_finalize'
end program fhello
EOF
fbuild="$tmp/f-build"
step "Fortran project: use fmpl, FMPL::fmpl, build" \
    build "$tmp/f" "$fbuild" -DCMAKE_PREFIX_PATH="$prefix"
step "FMPL_Fortran_MODULE_DIR is the staged fmpl.mod's, on the Fortran compile" sh -c "
    cat '$fbuild/found.txt' && test -f '$fmoddir/fmpl.mod' &&
    grep -qx 'FMPL_Fortran_MODULE_DIR=$fmoddir' '$fbuild/found.txt' &&
    grep -q 'I$fmoddir' '$fbuild/compile_commands.json'"
step "fhello passes under the staged fmplrun -n 2" run cmake-fortran "$fbuild/fhello" "$prefix"

# ---- 5. versions, components, pointer size, a missing file --------------
mkdir -p "$tmp/probe"
cat > "$tmp/probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.13)
project(fmpl_probe NONE)
find_package(FMPL ${REQ} ${ARGS})
set(t)
foreach(n fmpl fmpl_blacs fmpl_static fmpl_blacs_static)
  if(TARGET FMPL::${n})
    list(APPEND t FMPL::${n})
  endif()
endforeach()
message(STATUS "probe: FOUND=${FMPL_FOUND} VERSION=${FMPL_VERSION}")
message(STATUS "probe: INCLUDE=${FMPL_INCLUDE_DIR}")
message(STATUS "probe: MODULE=${FMPL_Fortran_MODULE_DIR}")
message(STATUS "probe: FMPLRUN=${FMPL_FMPLRUN}")
message(STATUS "probe: TARGETS=${t}")
EOF
nprobe=0
# probe WANT ARGS...: configure the probe (find_package(FMPL ${REQ}
# ${ARGS}), -DREQ= -DARGS= among ARGS); WANT found: configured, FMPL_FOUND
# true; notfound: configured, FMPL_FOUND false; error: configure failed.
# The output is in $tmp/probe.out, shown.
probe() {
    want=$1; shift
    nprobe=$((nprobe + 1))
    cmconf -S "$tmp/probe" -B "$tmp/probe-$nprobe" "$@" > "$tmp/probe.out" 2>&1
    rc=$?
    cat "$tmp/probe.out"
    case $want in
    found) test $rc = 0 && grep -q 'probe: FOUND=1 ' "$tmp/probe.out" ;;
    notfound) test $rc = 0 && grep -Eq 'probe: FOUND=(0|FALSE) ' "$tmp/probe.out" ;;
    error) test $rc != 0 ;;
    esac
}
# has PATTERN: in the last probe's output
has() { grep -Eq -- "$1" "$tmp/probe.out"; }
P="-DCMAKE_PREFIX_PATH=$prefix"
all_targets() {
    probe found "$P" && has " VERSION=$version\$" &&
    has "probe: TARGETS=FMPL::fmpl;FMPL::fmpl_blacs;FMPL::fmpl_static;FMPL::fmpl_blacs_static\$" &&
    has "probe: INCLUDE=$prefix/include\$" && has "probe: MODULE=$fmoddir\$" &&
    has "probe: FMPLRUN=$prefix/bin/fmplrun\$"
}
step "find_package(FMPL): found, every target and variable" all_targets
too_new() {
    probe error "$P" -DREQ=99 -DARGS=REQUIRED &&
    has "version: $version" && has "Could not find a configuration file for package \"FMPL\" that is compatible"
}
step "find_package(FMPL 99 REQUIRED) fails on the version" too_new
step "find_package(FMPL 99): not found" probe notfound "$P" -DREQ=99
step "find_package(FMPL $major.$minor): found" probe found "$P" -DREQ="$major.$minor"
step "find_package(FMPL $version EXACT): found" probe found "$P" -DREQ="$version" -DARGS=EXACT
step "find_package(FMPL $major.$minor EXACT): found ($major.$minor.0)" \
    probe $([ "$patch" = 0 ] && echo found || echo notfound) "$P" -DREQ="$major.$minor" -DARGS=EXACT
step "find_package(FMPL $major.$minor.$((patch + 1))): not found (a newer patch)" \
    probe notfound "$P" -DREQ="$major.$minor.$((patch + 1))"
step "find_package(FMPL $major.$((minor + 1))): not found (a newer minor)" \
    probe notfound "$P" -DREQ="$major.$((minor + 1))"
if [ "$minor" -gt 0 ]; then
    step "find_package(FMPL $major.$((minor - 1))): not found (an older minor: SameMinorVersion)" \
        probe notfound "$P" -DREQ="$major.$((minor - 1))"
fi
step "find_package(FMPL $major.$minor...<$major.$((minor + 1))): found" \
    probe found "$P" -DREQ="$major.$minor...<$major.$((minor + 1))"
step "find_package(FMPL $major.$minor...$version): found" \
    probe found "$P" -DREQ="$major.$minor...$version"
step "find_package(FMPL $major.$((minor + 1))...$major.$((minor + 3))): not found" \
    probe notfound "$P" -DREQ="$major.$((minor + 1))...$major.$((minor + 3))"
pointer() {
    probe notfound "$P" -DCMAKE_SIZEOF_VOID_P=4 && has "$version \\(64bit\\)"
}
[ "$(getconf LONG_BIT)" = 64 ] &&
    step "a project with 4-byte pointers: not found (\"$version (64bit)\")" pointer
step "COMPONENTS blacs static Fortran REQUIRED: found" \
    probe found "$P" "-DARGS=REQUIRED;COMPONENTS;blacs;static;Fortran"
nosuch() {
    probe error "$P" "-DARGS=REQUIRED;COMPONENTS;nosuch" && has "no component nosuch"
}
step "COMPONENTS nosuch REQUIRED: fails, naming it" nosuch
step "OPTIONAL_COMPONENTS nosuch: found" probe found "$P" "-DARGS=OPTIONAL_COMPONENTS;nosuch"
# a copy without libfmpl.so.0
cp -a "$prefix" "$tmp/broken"
rm -f "$tmp/broken/lib/libfmpl.so.0"
missing() {
    probe error "-DCMAKE_PREFIX_PATH=$tmp/broken" -DARGS=REQUIRED &&
    has "$tmp/broken/lib/libfmpl.so.0 is missing"
}
step "libfmpl.so.0 missing: FMPL not found, the message names it" missing
missing_blacs() {
    rm -f "$tmp/broken/lib/libfmpl_blacs.so.0" && cp "$prefix/lib/libfmpl.so.0" "$tmp/broken/lib/" &&
    probe found "-DCMAKE_PREFIX_PATH=$tmp/broken" && has "probe: TARGETS=FMPL::fmpl;FMPL::fmpl_static\$" &&
    probe error "-DCMAKE_PREFIX_PATH=$tmp/broken" "-DARGS=REQUIRED;COMPONENTS;blacs" &&
    has "component blacs is not installed"
}
step "libfmpl_blacs.so.0 missing: no FMPL::fmpl_blacs; COMPONENTS blacs REQUIRED fails" missing_blacs

# ---- 6. a packager's install, moved; an install through a symbolic link --
pkg="$tmp/pkg"
step "make install DESTDIR PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu" \
    mk install DESTDIR="$pkg" PREFIX=/usr LIBDIR=/usr/lib/x86_64-linux-gnu
moved="$tmp/moved/opt/fmpl"
mkdir -p "$tmp/moved/opt"
mv "$pkg/usr" "$moved"
mcmakedir="$moved/lib/x86_64-linux-gnu/cmake/FMPL"
moved_paths() {
    probe found -DFMPL_DIR="$mcmakedir" -DARGS=REQUIRED &&
    has "probe: INCLUDE=$moved/include\$" && has "probe: FMPLRUN=$moved/bin/fmplrun\$" &&
    has "probe: MODULE=$moved/lib/x86_64-linux-gnu/fortran/gfortran-mod-[0-9]+\$"
}
step "moved: FMPL_DIR finds the include, module and bin directories under it" moved_paths
mbuild="$tmp/c-build-moved"
moved_run() {
    build "$tmp/c" "$mbuild" -DFMPL_DIR="$mcmakedir" &&
    ldd "$mbuild/hello" | grep -q "=> $moved/lib/x86_64-linux-gnu/libfmpl.so.0" &&
    run cmake-c "$mbuild/hello" "$moved"
}
step "moved: the C project builds on its libfmpl.so.0 and passes" moved_run
# installed for real in $tmp/real (no DESTDIR), found through a link to
# its lib: the paths relative to the link would be wrong ($tmp/include)
real="$tmp/real"
step "make install PREFIX=$real" mk install PREFIX="$real"
ln -s "$real/lib" "$tmp/link"
linked() {
    probe found -DFMPL_DIR="$tmp/link/cmake/FMPL" -DARGS=REQUIRED &&
    has "probe: INCLUDE=$real/include\$" && has "probe: FMPLRUN=$real/bin/fmplrun\$"
}
step "through a symbolic link to LIBDIR: the installed paths" linked

# ---- 7. uninstall -----------------------------------------------------------
step "make uninstall removes the CMake files and lib/cmake/FMPL" sh -c "
    make -C '$top' -s uninstall DESTDIR='$stage' PREFIX=/usr/local && ! test -e '$cmakedir' &&
    test -z \"\$(find '$stage' -name '*.cmake')\""

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
