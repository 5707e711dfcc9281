#!/bin/sh
# expand.sh - copy a man page source, expanding the lines that stand for
# tables kept in the code, so that a page says what the code has (one
# source):
#   @PARAMS src/...c [PREFIX]@   the model parameters of an emulated
#                       fabric: every FMPL_<FABRIC>_<NAME> of the file's
#                       table of P(field, NAME, default, lo, unit, text)
#                       entries, with the prefix its fmpl_emu_params_read()
#                       reads them with, or PREFIX where the caller gives
#                       it (a table two fabrics read, fmpl.7)
#   @ERRORS include/fmpl.h@   every code of FMPL_ERRNO_MAP with its value
#                       and message (fmpl_strerror.3)
#
#   sh man/expand.sh < man/fmpl.7.md > build/man/md/fmpl.7.md
# Run from the top of the tree (the paths are relative to it).
while IFS= read -r line; do
    case $line in
    @PARAMS\ *@)
        src=${line#@PARAMS }
        src=${src%@}
        given=${src#* }
        [ "$given" = "$src" ] && given=
        src=${src%% *}
        awk -v given="$given" '
            /fmpl_emu_params_read\("/ {
                p = $0; sub(/.*fmpl_emu_params_read\("/, "", p); sub(/".*/, "", p)
                prefix = p
            }
            /^static const fmpl_emu_param_t params\[\] = \{/ { intab = 1; next }
            intab && /^};/ { intab = 0; next }
            intab { body = body " " $0 }
            END {
                if (given != "")
                    prefix = given
                if (prefix == "" || body == "") {
                    print FILENAME ": no parameter table or prefix" > "/dev/stderr"
                    exit 1
                }
                n = split(body, ent, /P\(/)
                for (i = 2; i <= n; i++) {
                    e = ent[i]
                    # field, NAME, default, lo, then string literals
                    split(e, f, ",")
                    name = f[2]; def = f[3]
                    gsub(/[ \t]/, "", name); gsub(/[ \t]/, "", def)
                    unit = ""; text = ""; k = 0
                    while (match(e, /"[^"]*"/)) {
                        lit = substr(e, RSTART + 1, RLENGTH - 2)
                        if (k++ == 0) unit = lit; else text = text lit
                        e = substr(e, RSTART + RLENGTH)
                    }
                    # markdown would read ~ * _ ^ [ ] < > ` \\ as markup
                    gsub(/[][~*_^<>`\\]/, "\\\\&", text)
                    printf "`%s%s` (default %s%s)\n:   %s.\n\n", prefix, name, def,
                           unit == "" ? "" : " " unit, text
                }
            }' "$src" || exit 1
        ;;
    @ERRORS\ *@)
        src=${line#@ERRORS }
        src=${src%@}
        awk '
            /^#define FMPL_ERRNO_MAP/ { inmap = 1; next }
            inmap && /^[ \t]*X\(/ {
                e = $0; sub(/^[ \t]*X\([ \t]*/, "", e)
                name = e; sub(/,.*/, "", name)
                code = e; sub(/^[^,]*,[ \t]*/, "", code); sub(/,.*/, "", code)
                msg = e; sub(/^[^"]*"/, "", msg); sub(/".*/, "", msg)
                gsub(/[][~*_^<>`\\]/, "\\\\&", msg)
                printf "`FMPL_%s` (%s)\n:   %s.\n\n", name, code, msg
                n++
                if ($0 !~ /\\$/) exit
            }
            END { if (!n) { print FILENAME ": no FMPL_ERRNO_MAP" > "/dev/stderr"; exit 1 } }
            ' "$src" || exit 1
        ;;
    *) printf '%s\n' "$line" ;;
    esac
done
