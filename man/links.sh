#!/bin/sh
# links.sh - the link pages of the man pages.  For man/PAGE.S.md every
# other name on the page's NAME line ("a, b, c \- what they do") gets a
# page manS/NAME.S that holds `.so manS/PAGE.S`.  Prints one
# "manS/NAME.S=manS/PAGE.S" per link: the Makefile builds, installs and
# removes these, and test/man_test.sh checks them.  The NAME line is the
# one source of the list.
#
#   sh man/links.sh man/*.md
for f in "$@"; do
    awk -v f="$f" '
        BEGIN { p = f; sub(/.*\//, "", p); sub(/\.md$/, "", p)
                s = p; sub(/.*\./, "", s) }
        /^# NAME[ \t]*$/ { inname = 1; next }
        inname && /^[ \t]*$/ { if (line != "") exit; next }
        inname && /^#/ { exit }
        inname { line = line " " $0 }
        END {
            if (line == "") { print f ": no NAME line" > "/dev/stderr"; exit 1 }
            sub(/ \\- .*/, "", line)
            n = split(line, a, ",")
            for (i = 1; i <= n; i++) {
                gsub(/[ \t]/, "", a[i])
                if (a[i] != "" && a[i] "." s != p)
                    print "man" s "/" a[i] "." s "=man" s "/" p
            }
        }' "$f" || exit 1
done
