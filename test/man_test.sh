#!/bin/bash
# man_test.sh - the man pages (man/*.md, built by `make man` into
# build/man/man[137] with pandoc) against the library and the code:
#   1. every function lib/libfmpl.so exports has a page in man3 (its own or
#      a `.so` link page), and every Fortran binding (fmpl_*_) is in
#      fmpl_fortran.3;
#   2. every page renders with `man --warnings=all -l` (and groff -ww)
#      without a warning and not empty, has NAME, SYNOPSIS, DESCRIPTION,
#      SEE ALSO (and RETURN VALUE in section 3), a .TH that matches its
#      file name, and every page it names in SEE ALSO exists;
#   3. every FMPL_* environment variable the code in src/ and tools/ reads
#      is in fmpl.7: read by getenv() directly (a literal or a macro), by
#      a helper that passes its argument to getenv() (env_int("FMPL_X"),
#      ...), or built from a prefix and a model table
#      (fmpl_emu_params_read("FMPL_TCW_", ...): FMPL_TCW_MODEL and
#      FMPL_TCW_<NAME> of every P(field, NAME, ...) entry); and every
#      "FMPL_..." string literal there besides (error names excepted);
#   4. `make install DESTDIR=... PREFIX=/usr` puts them where
#      `man -M DESTDIR/usr/share/man` finds them (link pages too), and
#      `make uninstall` removes them.
# Prints "N passed, M failed"; exit status 0 only when all passed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
man_dir=build/man
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-man.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; for l in "$@"; do echo "    $l"; done; }
export MANWIDTH=80 LC_ALL=C.UTF-8 MANPAGER=cat PAGER=cat

# the pages as the sources are now (a no-op after `make all`)
if ! make -s man > "$tmp/make.log" 2>&1 || ! ls $man_dir/man3/*.3 > /dev/null 2>&1; then
    bad "make man" "$(cat "$tmp/make.log")" "(no pages: is pandoc installed? make deps)"
    echo "$pass passed, $fail failed"
    exit 1
fi
ok "make man"

# ---- 1. every exported function has a page ------------------------------
nm -D --defined-only lib/libfmpl.so | awk '$2 == "T" && $3 ~ /^fmpl_/ { print $3 }' |
    sort > "$tmp/exports"
grep -v '_$' "$tmp/exports" > "$tmp/c_calls"
grep '_$' "$tmp/exports" > "$tmp/f_calls"
if [ "$(wc -l < "$tmp/c_calls")" -lt 50 ]; then
    bad "exports" "only $(wc -l < "$tmp/c_calls") fmpl_ functions in lib/libfmpl.so?"
fi
missing=()
while read -r f; do
    [ -e "$man_dir/man3/$f.3" ] || missing+=("$f")
done < "$tmp/c_calls"
if [ ${#missing[@]} = 0 ]; then
    ok "a man3 page for each of the $(wc -l < "$tmp/c_calls") exported functions"
else
    bad "exported functions without a page in $man_dir/man3" "${missing[@]}"
fi
# Fortran bindings: `call fmpl_send(` in fmpl_fortran.3 for fmpl_send_
missing=()
while read -r f; do
    grep -q "call ${f%_}(" "$man_dir/man3/fmpl_fortran.3" 2>/dev/null || missing+=("$f")
done < "$tmp/f_calls"
if [ ${#missing[@]} = 0 ] && [ -s "$tmp/f_calls" ]; then
    ok "fmpl_fortran.3 lists the $(wc -l < "$tmp/f_calls") Fortran bindings"
else
    bad "Fortran bindings missing from fmpl_fortran.3" "${missing[@]}"
fi

# ---- 2. every page renders cleanly and has its sections -----------------
pages=()
for f in $man_dir/man1/* $man_dir/man3/* $man_dir/man7/*; do
    [ -f "$f" ] && pages+=("${f#$man_dir/}")
done
problems=()
for p in "${pages[@]}"; do
    name=${p#man?/}
    sec=${p%%/*}
    sec=${sec#man}
    src=$p
    # a link page: one `.so manS/PAGE.S` line to a page that exists
    if [ "$(head -c 3 "$man_dir/$p")" = ".so" ]; then
        tgt=$(sed -n '1s/^\.so //p' "$man_dir/$p")
        if [ "$(wc -l < "$man_dir/$p")" != 1 ] || [ ! -f "$man_dir/$tgt" ] ||
           [ "$(head -c 3 "$man_dir/$tgt")" = ".so" ]; then
            problems+=("$p: bad link page ($(head -1 "$man_dir/$p"))")
            continue
        fi
        sed -n '/^\.SH NAME/,/^\.SH SYNOPSIS/p' "$man_dir/$tgt" | grep -q "\b${name%.*}\b" ||
            problems+=("$p: ${name%.*} is not on the NAME line of $tgt")
        src=$tgt
    fi
    (cd "$man_dir" && man --warnings=all -l "$p" > "$tmp/out" 2> "$tmp/err")
    if [ -s "$tmp/err" ]; then
        problems+=("$p: man --warnings: $(tr '\n' ' ' < "$tmp/err")")
    fi
    (cd "$man_dir" && groff -ww -z -t -man "$p" > /dev/null 2> "$tmp/err2")
    if [ -s "$tmp/err2" ]; then
        problems+=("$p: groff -ww: $(tr '\n' ' ' < "$tmp/err2")")
    fi
    if [ "$(grep -c . "$tmp/out")" -lt 8 ]; then
        problems+=("$p: renders to (almost) nothing")
    fi
    [ "$src" = "$p" ] || continue          # the rest: once, for the page itself
    want="NAME SYNOPSIS DESCRIPTION SEE_ALSO"
    [ "$sec" = 3 ] && want="$want RETURN_VALUE"
    for s in $want; do
        grep -q "^\.SH \"\?${s//_/ }\"\?\$" "$man_dir/$p" || problems+=("$p: no ${s//_/ } section")
    done
    grep -q "^\.TH \"${name%.*}\" \"$sec\"" "$man_dir/$p" ||
        problems+=("$p: its .TH is not \"${name%.*}\" \"$sec\": $(grep '^\.TH' "$man_dir/$p")")
    # SEE ALSO: every name(N) there must be a page
    awk '/^SEE ALSO/ { on = 1; next } on && /^[^ ]/ { on = 0 } on' "$tmp/out" |
        grep -o '[A-Za-z0-9_.-]*([0-9])' > "$tmp/refs"
    [ -s "$tmp/refs" ] || problems+=("$p: SEE ALSO names no page")
    while read -r r; do
        rn=${r%(*}
        rs=${r#*(}
        rs=${rs%)}
        [ -e "$man_dir/man$rs/$rn.$rs" ] || man -w "$rs" "$rn" > /dev/null 2>&1 ||
            problems+=("$p: SEE ALSO $r: no such page")
    done < "$tmp/refs"
done
if [ ${#problems[@]} = 0 ] && [ ${#pages[@]} -gt 50 ]; then
    ok "${#pages[@]} pages render without warnings, with their sections and SEE ALSO"
else
    bad "pages (${#pages[@]})" "${problems[@]}"
fi

# ---- 3. every environment variable the code reads is in fmpl.7 ----------
files=$(find src tools -name '*.[ch]' | sort)
# macros that name a variable: #define FMPL_ENV_RANK "FMPL_RANK"
# shellcheck disable=SC2086
awk '/^#define [A-Z_0-9]+ +"FMPL_[A-Z0-9_]*"/ { v = $3; gsub(/"/, "", v); print $2, v }' \
    $files > "$tmp/macros"
# helpers: functions that pass a parameter, not a literal, to getenv() or
# to a helper (base/env.c's readers go through value(); the emulated
# machines' tables through fmpl_emu_params_read), found until no new one
# comes (the function whose definition starts last at column 0 before
# the call)
echo getenv > "$tmp/readers"
while :; do
    pat=$(paste -sd'|' "$tmp/readers")
    # shellcheck disable=SC2086
    awk -v pat="$pat" 'FNR == 1 { fn = "" }
         /^[a-z].*[a-z_0-9]+\(/ && !/;[ \t]*$/ {
             s = $0; sub(/\(.*/, "", s); n = split(s, w, /[ \t*]+/); fn = w[n] }
         fn != "" && match($0, "(^|[^a-z_0-9])(" pat ")\\([a-z_][a-z_0-9]*[,)]") { print fn }' \
        $files | sort -u > "$tmp/more"
    sort -u "$tmp/readers" "$tmp/more" > "$tmp/next"
    cmp -s "$tmp/next" "$tmp/readers" && break
    mv "$tmp/next" "$tmp/readers"
done
grep -vx getenv "$tmp/readers" > "$tmp/helpers"
: > "$tmp/vars"
: > "$tmp/prefixes"
while read -r fn; do
    # shellcheck disable=SC2086
    grep -Ho "\b$fn(\(\"FMPL_[A-Z0-9_]*\"\|FMPL_[A-Z0-9_]*\)" $files | while IFS=: read -r file arg; do
        arg=${arg#*(}
        case $arg in
        \"*) arg=${arg//\"/} ;;
        *) arg=$(awk -v m="$arg" '$1 == m { print $2 }' "$tmp/macros") ;;
        esac
        [ -n "$arg" ] || continue
        case $arg in
        *_) echo "$file $arg" >> "$tmp/prefixes" ;;
        *) echo "$arg" >> "$tmp/vars" ;;
        esac
    done
done < "$tmp/readers"
# a prefix: PREFIX + MODEL and PREFIX + the NAME of each P(field, NAME, ...)
problems=()
while read -r file prefix; do
    echo "${prefix}MODEL" >> "$tmp/vars"
    names=$(grep -o '^ *P([a-z_0-9]*, *[A-Z_0-9]*' "$file" | sed 's/.*, *//')
    [ -n "$names" ] || problems+=("$file reads variables named $prefix... from no P() table")
    for n in $names; do
        echo "$prefix$n" >> "$tmp/vars"
    done
done < <(sort -u "$tmp/prefixes")
found=$(sort -u "$tmp/vars" | wc -l)
# and every other FMPL_ name a string literal holds (log messages name the
# variables they complain about), but the error codes' names
# shellcheck disable=SC2086
grep -ho '"FMPL_[A-Z0-9_]*[A-Z0-9]\b' $files | tr -d '"' | grep -v '^FMPL_ERR_' >> "$tmp/vars"
sort -u "$tmp/vars" -o "$tmp/vars"
# the page as a reader sees it (pandoc escapes nothing in these names)
(cd "$man_dir" && man -l man7/fmpl.7 2> /dev/null) | sed 's/‐/-/g' > "$tmp/fmpl7"
missing=()
while read -r v; do
    grep -q "\b$v\b" "$tmp/fmpl7" || missing+=("$v")
done < "$tmp/vars"
helpers=$(tr '\n' ' ' < "$tmp/helpers")
if [ "$found" -lt 40 ] || ! grep -q . "$tmp/helpers" || ! grep -q . "$tmp/prefixes"; then
    problems+=("the search found only $found variables (helpers: $helpers): is it still right?")
fi
if [ ${#missing[@]} = 0 ] && [ ${#problems[@]} = 0 ]; then
    ok "fmpl.7 names all $(wc -l < "$tmp/vars") FMPL_ variables the code reads (helpers: $helpers)"
else
    bad "environment variables missing from fmpl.7" "${problems[@]}" "${missing[@]}"
fi

# ---- 4. make install / uninstall, and man finds them --------------------
stage="$tmp/stage"
mp="$stage/usr/share/man"
if make -s install DESTDIR="$stage" PREFIX=/usr > "$tmp/install.log" 2>&1; then
    ok "make install DESTDIR PREFIX=/usr"
else
    bad "make install DESTDIR PREFIX=/usr" "$(tail -20 "$tmp/install.log")"
fi
problems=()
for q in "3 fmpl_send" "3 fmpl_irecv" "3 fmpl_fortran" "1 fmplrun" "7 fmpl" "7 fmpl-blacs"; do
    set -- $q
    where=$(man -M "$mp" -w "$1" "$2" 2> /dev/null)
    # (a link page's path is its target's)
    case $where in
    "$mp"/man$1/*.$1) [ -f "$where" ] || problems+=("man -M $mp -w $1 $2: '$where'") ;;
    *) problems+=("man -M $mp -w $1 $2: '$where'") ;;
    esac
    man -M "$mp" "$1" "$2" > "$tmp/out" 2> "$tmp/err"
    grep -q "^NAME" "$tmp/out" && grep -q "$2" "$tmp/out" && ! [ -s "$tmp/err" ] ||
        problems+=("man -M $mp $1 $2 did not show the page: $(head -3 "$tmp/err" | tr '\n' ' ')")
done
n=$(find "$mp" -type f | wc -l)
[ "$n" = "${#pages[@]}" ] || problems+=("$n files under $mp, ${#pages[@]} pages built")
if [ ${#problems[@]} = 0 ]; then
    ok "man -M DESTDIR/usr/share/man finds and shows the installed pages"
else
    bad "installed pages" "${problems[@]}"
fi
make -s uninstall DESTDIR="$stage" PREFIX=/usr > "$tmp/uninstall.log" 2>&1
left=$(find "$mp" -type f 2> /dev/null)
if [ -z "$left" ]; then
    ok "make uninstall removes them"
else
    bad "make uninstall left man pages" $left
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
