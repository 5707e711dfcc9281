#!/bin/sh
# docs_test.sh - the documentation's links and rules:
#   1. every relative markdown link [text](path) or [text](path#anchor) in
#      README.md, docs/*.md, bench/README.md and man/*.md names a file or
#      folder of the tree, and its anchor a heading of the target page, as
#      GitHub makes heading ids (lower case, punctuation dropped, each
#      space a hyphen, "-1", "-2" for repeats; # headings only, not
#      underlined ones); links inside code blocks and `code` do not count,
#      nor links with a scheme (https:, mailto:);
#   2. README.md links every page of docs/;
#   3. no file of the tree (git's files, or every file outside .git, build
#      output and logs when there is no git) points at material outside
#      the repository: the papers' text files, a design note beside the
#      repository, a sibling folder.  Cite the papers by author and year,
#      as README.md's "References" does;
#   4. README.md has at most 180 lines, and `make bench` and `make check`
#      each on a line of its own in a code block.
# Prints one line per problem and a summary; exit status 1 on any problem.
#
#   sh test/docs_test.sh          from any directory
# Needs only sh, awk, grep, sed (and git, when the tree is a checkout).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
export LC_ALL=C
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fmpl-docs.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
problems=0
bad() { problems=$((problems + 1)); printf 'FAIL %s\n' "$*"; }

# ---- helpers -------------------------------------------------------------
# links FILE: "LINE<TAB>TARGET" for each markdown link outside code
links() {
    awk '
        NR == 1 && /^---[ \t]*$/ { front = 1; next }     # YAML front matter
        front { if (/^---[ \t]*$/) front = 0; next }
        /^[ \t]*(```|~~~)/ { fence = !fence; next }
        fence { next }
        {
            line = $0
            gsub(/``[^`]*``/, "", line)
            gsub(/`[^`]*`/, "", line)
            while (match(line, /\]\([^)]*\)/)) {
                print FNR "\t" substr(line, RSTART + 2, RLENGTH - 3)
                line = substr(line, RSTART + RLENGTH)
            }
        }' "$1"
}

# anchors FILE: the id of every heading, one a line
anchors() {
    awk '
        function slug(h,   s, t) {
            s = h
            # [text](url) is its text; emphasis and code marks go
            while (match(s, /\[[^]]*\]\([^)]*\)/)) {
                t = substr(s, RSTART + 1, RLENGTH - 1)
                sub(/\]\(.*/, "", t)
                s = substr(s, 1, RSTART - 1) t substr(s, RSTART + RLENGTH)
            }
            s = tolower(s)
            gsub(/\342\200\224|\342\200\223/, "", s)     # em and en dash
            gsub(/[!-,.\/:-@[-^`{-~]/, "", s)            # ASCII but - and _
            gsub(/ /, "-", s)
            return s
        }
        NR == 1 && /^---[ \t]*$/ { front = 1; next }
        front { if (/^---[ \t]*$/) front = 0; next }
        /^[ \t]*(```|~~~)/ { fence = !fence; next }
        fence { next }
        /^#+[ \t]/ {
            h = $0
            match(h, /^#+/)
            if (RLENGTH > 6) next
            sub(/^#+[ \t]+/, "", h)
            sub(/[ \t]+#+[ \t]*$/, "", h)
            sub(/[ \t]+$/, "", h)
            s = slug(h)
            if (s in seen) { n = seen[s]; seen[s] = n + 1; s = s "-" n }
            else seen[s] = 1
            print s
        }' "$1"
}

# normpath PATH: without "." and "dir/.." (PATH relative to the top)
normpath() {
    printf '%s\n' "$1" | awk -F/ '{
        n = 0
        for (i = 1; i <= NF; i++) {
            if ($i == "" || $i == ".") continue
            if ($i == ".." && n > 0 && p[n] != "..") { n--; continue }
            p[++n] = $i
        }
        s = ""
        for (i = 1; i <= n; i++) s = s (i > 1 ? "/" : "") p[i]
        print (s == "" ? "." : s)
    }'
}

# ---- 1. links --------------------------------------------------------------
pages="README.md bench/README.md"
for f in docs/*.md man/*.md; do
    [ -f "$f" ] && pages="$pages $f"
done
nlinks=0
: > "$tmp/targets"
for f in $pages; do
    [ -f "$f" ] || { bad "$f: missing"; continue; }
    dir=$(dirname "$f")
    links "$f" > "$tmp/links"
    while IFS='	' read -r line target; do
        # <path> and a "title" after the path
        target=$(printf '%s' "$target" | sed 's/^<\(.*\)>$/\1/; s/[ \t][ \t]*".*"$//')
        case $target in
        '' ) bad "$f:$line: empty link"; continue ;;
        [a-zA-Z]*:*)
            case ${target%%:*} in
            *[!a-zA-Z0-9+.-]*) ;;            # not a scheme: a path with a colon
            *) continue ;;                   # https:, mailto:, ...
            esac ;;
        esac
        nlinks=$((nlinks + 1))
        path=${target%%#*}
        anchor=
        case $target in *'#'*) anchor=${target#*#} ;; esac
        if [ -z "$path" ]; then
            dest=$f
        else
            case $path in
            /*) dest=$(normpath "${path#/}") ;;
            *) dest=$(normpath "$dir/$path") ;;
            esac
        fi
        case $dest in
        ..|../*) bad "$f:$line: ($target) leaves the repository"; continue ;;
        esac
        if [ ! -e "$dest" ]; then
            bad "$f:$line: ($target): no such file: $dest"
            continue
        fi
        echo "$f	$dest" >> "$tmp/targets"
        [ -n "$anchor" ] || continue
        case $dest in
        *.md) ;;
        *) bad "$f:$line: ($target): an anchor into $dest, which is not markdown"
           continue ;;
        esac
        if ! anchors "$dest" | grep -qxF -- "$anchor"; then
            bad "$f:$line: ($target): $dest has no heading with the id \"$anchor\"" \
                "(its ids: $(anchors "$dest" | tr '\n' ' '))"
        fi
    done < "$tmp/links"
done

# ---- 2. README.md links every page of docs/ -------------------------------
for d in docs/*.md; do
    [ -f "$d" ] || continue
    grep -qxF "README.md	$d" "$tmp/targets" ||
        bad "README.md: no link to $d (add it to \"Where to read on\")"
done

# ---- 3. nothing points outside the repository -----------------------------
# The patterns are written so that this file does not match them.
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard > "$tmp/files0"
    tr '\0' '\n' < "$tmp/files0" > "$tmp/files"
else
    find . -path ./.git -prune -o -path ./build -prune -o -path ./test/logs -prune \
         -o -path ./bench/out -prune -o -type f -print | sed 's|^\./||' > "$tmp/files"
fi
while IFS= read -r p; do
    [ -f "$p" ] || continue
    grep -InE -e 'see[d]s/' -e 'DESIGN[.]md' -e '[.][.]/shared' -- "$p" 2>/dev/null |
        while IFS= read -r hit; do
            printf '%s:%.120s\n' "$p" "$hit"
        done
done < "$tmp/files" > "$tmp/outside"
while IFS= read -r hit; do
    bad "$hit" "(points outside the repository: cite the paper by author and year)"
done < "$tmp/outside"

# ---- 4. the README's size and its two commands ----------------------------
n=$(wc -l < README.md)
[ "$n" -le 180 ] || bad "README.md: $n lines, at most 180 (move the rest into docs/)"
for cmd in "make bench" "make check"; do
    awk -v cmd="$cmd" '
        /^[ \t]*(```|~~~)/ { fence = !fence; next }
        fence { l = $0; sub(/^[ \t]+/, "", l); sub(/[ \t]+$/, "", l); if (l == cmd) found = 1 }
        END { exit !found }' README.md ||
        bad "README.md: no line \"$cmd\" in a code block"
done

npages=$(echo $pages | wc -w)
if [ $problems = 0 ]; then
    echo "docs_test: PASS ($nlinks links in $npages pages, README.md $n lines)"
    exit 0
fi
echo "docs_test: FAIL, $problems problems ($nlinks links in $npages pages)"
exit 1
