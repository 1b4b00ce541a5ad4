#!/bin/sh
# The manual page of every command, gpuscope-NAME(1), made from the table of
# commands (src/cmd/manpage.c, 'gpuscope __man'): its roff escaping; a page for
# each command of the table and no other; each page renders without a warning
# (groff, mandoc's lint), is shown by man -l and has a NAME line that lexgrog
# (and so apropos and whatis) reads; every option of the table and of the
# command's --help is in its page, hidden ones not; the same SOURCE_DATE_EPOCH
# makes the same bytes; the pages the build made ($O/man, mk/man.mk) are
# these; man/gpuscope.1 refers to each. Prints TAP.
set -u
O=${O:-build}
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/skip.inc
. tests/skip.inc
bin=$O/gpuscope
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP $bin is not built"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
n=0 fail=0
ok() { n=$((n + 1)); printf 'ok %d - %s\n' "$n" "$1"; }
not_ok() {
	n=$((n + 1)); fail=$((fail + 1)); printf 'not ok %d - %s\n' "$n" "$1"; shift
	for l in "$@"; do printf '%s\n' "$l" | head -n 20 | sed 's/^/# /'; done
}
# an option's name as it is written in a page: every '-' as \-
roff_name() { printf '%s' "$1" | sed 's/-/\\-/g'; }
unset SOURCE_DATE_EPOCH

# 1. the escaping and the paragraphs (gpuscope __man --text: plain text as a
# page's is written): what troff would take as a request or an escape, and
# the characters it would change, are written so that it prints them as
# they are; an indented paragraph is kept as it is; a long line is broken
cat >"$tmp/esc.in" <<'EOF'
--json -i 0 a-b
.starts a request
'starts one too
back\slash \fB not bold \- \e
mid.dle and 'quotes' stay
tab	and café

  an indented block
    .kept as it is

a line long enough to be broken in two, more than seventy-eight bytes: .begins the second
EOF
# (with blanks at the end of a line: dropped)
sed 's/stay$/stay   /' "$tmp/esc.in" | "$bin" __man --text >"$tmp/esc.out" 2>"$tmp/esc.err"
rc=$?
cat >"$tmp/esc.want" <<'EOF'
\-\-json \-i 0 a\-b
\&.starts a request
\&'starts one too
back\eslash \efB not bold \e\- \ee
mid.dle and 'quotes' stay
tab and caf\[u00E9]
.PP
.RS
.nf
an indented block
  .kept as it is
.fi
.RE
.PP
a line long enough to be broken in two, more than seventy\-eight bytes:
\&.begins the second
EOF
if [ $rc -eq 0 ] && cmp -s "$tmp/esc.out" "$tmp/esc.want"; then
	ok "roff text: '-' as \\-, '\\' as \\e, a leading '.' and ' behind \\&, UTF-8 as \\[u...], long lines broken"
else
	not_ok "__man --text wrote other than wanted (exit $rc)" "$(diff "$tmp/esc.want" "$tmp/esc.out")" "$(cat "$tmp/esc.err")"
fi
if command -v groff >/dev/null 2>&1; then
	{ printf '%s\n' '.TH T 1' '.nh'; cat "$tmp/esc.out"; } >"$tmp/esc.1"
	groff -man -Tutf8 -ww "$tmp/esc.1" 2>"$tmp/esc.gerr" | grep -v 'T(1)' | tr -s '[:space:]' '\n' | grep -v '^$' >"$tmp/esc.shown"
	tr -s '[:space:]' '\n' <"$tmp/esc.in" | grep -v '^$' >"$tmp/esc.plain"
	if cmp -s "$tmp/esc.shown" "$tmp/esc.plain" && [ ! -s "$tmp/esc.gerr" ]; then
		ok "groff prints the text's words as they were"
	else
		not_ok "groff printed the text otherwise" "$(diff "$tmp/esc.plain" "$tmp/esc.shown")" "$(cat "$tmp/esc.gerr")"
	fi
else
	skip_missing "groff prints the text: no groff (Debian: groff-base)"
fi

# 2. one page per command of the table that is not hidden and not a subcommand
if ! "$bin" __cli-table >"$tmp/table" 2>"$tmp/err"; then
	not_ok "gpuscope __cli-table failed" "$(cat "$tmp/err")"
fi
awk -F'\t' '$1 != "*" && $2 == "" && $7 != "hidden" && $1 !~ / / { print "gpuscope-" $1 }' "$tmp/table" |
	sort >"$tmp/want-pages"
"$bin" __man --list >"$tmp/pages" 2>"$tmp/err"
rc=$?
sort "$tmp/pages" >"$tmp/pages.sorted"
if [ $rc -eq 0 ] && [ "$(wc -l <"$tmp/want-pages")" -ge 10 ] && cmp -s "$tmp/want-pages" "$tmp/pages.sorted"; then
	ok "__man --list: a page for each of the table's $(wc -l <"$tmp/pages") commands"
else
	not_ok "__man --list and the table's commands differ (exit $rc)" \
		"$(diff "$tmp/want-pages" "$tmp/pages.sorted")" "$(cat "$tmp/err")"
fi
# every command gpuscope --help shows has a page
missing=""
for c in $("$bin" --help | sed -n 's/^ *\(usage:\)\{0,1\} *gpuscope \([a-z][a-z]*\).*/\2/p' | sort -u); do
	grep -qx "gpuscope-$c" "$tmp/pages" || missing="$missing $c"
done
if [ -z "$missing" ]; then ok "every command of gpuscope --help has a page"; else not_ok "commands of --help without a page:$missing"; fi

# 3. each page renders cleanly, man shows it, lexgrog reads its NAME
bad_rc="" bad_groff="" bad_mandoc="" bad_man="" bad_lex="" bad_th=""
for p in $(cat "$tmp/pages"); do
	c=${p#gpuscope-}
	if ! "$bin" __man "$c" >"$tmp/$p.1" 2>"$tmp/$p.err" || [ ! -s "$tmp/$p.1" ]; then
		bad_rc="$bad_rc $p"
		continue
	fi
	up=$(echo "$c" | tr '[:lower:]' '[:upper:]')
	grep -q "^\.TH GPUSCOPE\\\\-$up 1 [0-9]\{4\}-[0-9][0-9]-[0-9][0-9] \"gpuscope [0-9.]*\" \"User Commands\"\$" "$tmp/$p.1" ||
		bad_th="$bad_th $p"
	if command -v groff >/dev/null 2>&1; then
		w=$(groff -man -Tutf8 -ww -z "$tmp/$p.1" 2>&1)
		[ -z "$w" ] || bad_groff="$bad_groff $p: $w"
	fi
	if command -v mandoc >/dev/null 2>&1; then
		w=$(mandoc -Tlint "$tmp/$p.1" 2>&1)
		[ -z "$w" ] || bad_mandoc="$bad_mandoc $w"
	fi
	if command -v man >/dev/null 2>&1; then
		MANWIDTH=80 man -P cat -l "$tmp/$p.1" >"$tmp/$p.txt" 2>"$tmp/$p.merr"
		grep -q "^GPUSCOPE-$up(1)" "$tmp/$p.txt" && grep -q "^ *$p  *- " "$tmp/$p.txt" &&
			grep -q '^EXIT STATUS' "$tmp/$p.txt" || bad_man="$bad_man $p"
	fi
	if command -v lexgrog >/dev/null 2>&1; then
		l=$(lexgrog "$tmp/$p.1" 2>&1)
		case $l in
		"$tmp/$p.1: \"$p - "?*) ;;
		*) bad_lex="$bad_lex $l" ;;
		esac
	fi
done
np=$(wc -l <"$tmp/pages")
if [ -z "$bad_rc$bad_th" ]; then
	ok "__man NAME prints each of the $np pages, with its .TH line"
else
	not_ok "pages not printed:$bad_rc; without their .TH line:$bad_th"
fi
if ! command -v groff >/dev/null 2>&1; then
	skip_missing "pages rendered by groff: no groff (Debian: groff-base)"
elif [ -z "$bad_groff" ]; then
	ok "groff -man -ww renders each page without a warning"
else
	not_ok "groff warnings" "$bad_groff"
fi
if ! command -v mandoc >/dev/null 2>&1; then
	skip_missing "pages checked by mandoc -Tlint: no mandoc (Debian: mandoc)"
elif [ -z "$bad_mandoc" ]; then
	ok "mandoc -Tlint finds nothing in any page"
else
	not_ok "mandoc -Tlint" "$bad_mandoc"
fi
if ! command -v man >/dev/null 2>&1; then
	skip_missing "pages shown by man -l: no man (Debian: man-db)"
elif [ -z "$bad_man" ]; then
	ok "man -l shows each page: its header, NAME line and EXIT STATUS"
else
	not_ok "man -l did not show:$bad_man" "$(cat "$tmp"/*.merr)"
fi
if ! command -v lexgrog >/dev/null 2>&1; then
	skip_missing "NAME lines read by lexgrog: no lexgrog (Debian: man-db)"
elif [ -z "$bad_lex" ]; then
	ok "lexgrog reads each NAME line as \"gpuscope-X - what it does\" (apropos, whatis)"
else
	not_ok "lexgrog did not read:" "$bad_lex"
fi

# 4. every option of the table is in its command's page (subcommands': their
# parent's), as an option's entry, but the hidden ones
missing="" shown=""
# (a tab is a blank to read: the fields go through awk, an empty one as "-")
awk -F'\t' '$1 != "*" && $2 != "" { c = $1; sub(/ .*/, "", c); print c, $2, $3, $7 }' "$tmp/table" >"$tmp/opts"
while read -r cmd long short hidden; do
	p=gpuscope-$cmd
	[ -f "$tmp/$p.1" ] || continue
	tag="\\fB\\-\\-$(roff_name "$long")\\fR"
	[ "$short" = - ] || tag="\\fB\\-$short\\fR, $tag"
	if [ "$hidden" = hidden ]; then
		# shown as the option of another subcommand of the page, where it is not hidden?
		grep -q "^$cmd $long [^ ]* -\$" "$tmp/opts" ||
			grep -qF -- "\\fB\\-\\-$(roff_name "$long")\\fR" "$tmp/$p.1" && shown="$shown $cmd:--$long"
	else
		grep -qF -- "$tag" "$tmp/$p.1" || missing="$missing $cmd:--$long"
	fi
done <"$tmp/opts"
# and the options every command takes, in every page
for long in $(awk -F'\t' '$1 == "*" { print $2 }' "$tmp/table"); do
	for p in $(cat "$tmp/pages"); do
		grep -qF -- "\\fB\\-\\-$(roff_name "$long")\\fR" "$tmp/$p.1" || missing="$missing $p:--$long"
	done
done
if [ -z "$missing$shown" ]; then
	ok "every option of the table is in its page, none of the hidden ones"
else
	not_ok "options of the table missing from their page:$missing; hidden ones shown:$shown"
fi

# 5. every option of a command's --help is in its page
missing="" hidden_help=""
for p in $(cat "$tmp/pages"); do
	c=${p#gpuscope-}
	[ -f "$tmp/$p.1" ] || continue
	"$bin" "$c" --help >"$tmp/help" 2>&1 || { missing="$missing $c(--help failed)"; continue; }
	for o in $(grep -oE -- '(^|[^a-zA-Z0-9-])--[a-z][a-z0-9.-]*[a-z0-9]' "$tmp/help" | sed 's/^[^-]*//' | sort -u); do
		# an alias the table hides (taken, no entry of its own in the page) may be in --help
		if grep -q "^$c ${o#--} [^ ]* hidden\$" "$tmp/opts" && ! grep -q "^$c ${o#--} [^ ]* -\$" "$tmp/opts"; then
			hidden_help="$hidden_help $c:$o"
			continue
		fi
		grep -qF -- "$(roff_name "$o")" "$tmp/$p.1" || missing="$missing $c:$o"
	done
	for o in $(grep -oE -- '^ *-[a-zA-Z],' "$tmp/help" | tr -d ' ,' | sort -u); do
		grep -qF -- "\\fB$(roff_name "$o")\\fR" "$tmp/$p.1" || missing="$missing $c:$o"
	done
done
if [ -z "$missing" ]; then
	ok "every option of each command's --help is in its page${hidden_help:+ (but aliases the table hides:$hidden_help)}"
else
	not_ok "options of --help missing from the page:$missing"
fi

# 6. reproducible: the date is SOURCE_DATE_EPOCH's, the rest the same
SOURCE_DATE_EPOCH=1700000000 "$bin" __man fit >"$tmp/r1" 2>&1
SOURCE_DATE_EPOCH=1700000000 "$bin" __man fit >"$tmp/r2" 2>&1
SOURCE_DATE_EPOCH=1800000000 "$bin" __man fit >"$tmp/r3" 2>&1
if cmp -s "$tmp/r1" "$tmp/r2" && grep -q '^\.TH GPUSCOPE\\-FIT 1 2023-11-14 ' "$tmp/r1" &&
	grep -q '^\.TH GPUSCOPE\\-FIT 1 2027-01-15 ' "$tmp/r3" &&
	[ "$(grep -v '^\.TH' "$tmp/r1" | cksum)" = "$(grep -v '^\.TH' "$tmp/r3" | cksum)" ]; then
	ok "the same SOURCE_DATE_EPOCH makes the same bytes, dated by it (UTC)"
else
	not_ok "pages are not reproducible, or not dated by SOURCE_DATE_EPOCH" "$(grep '^\.TH' "$tmp/r1" "$tmp/r2" "$tmp/r3")"
fi
SOURCE_DATE_EPOCH=yesterday "$bin" __man fit >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q "SOURCE_DATE_EPOCH='yesterday'" "$tmp/err"; then
	ok "a SOURCE_DATE_EPOCH that is not a number is a usage error, named"
else
	not_ok "SOURCE_DATE_EPOCH=yesterday: exit $rc" "$(cat "$tmp/err")"
fi

# 7. no page for what is not a command, nor for a subcommand (a section of its parent's)
bad=""
for c in nosuch "queue submit" __cli-table ""; do
	"$bin" __man "$c" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	{ [ $rc -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q '^gpuscope: .*__man --list' "$tmp/err"; } || bad="$bad '$c'(exit $rc)"
done
"$bin" __man >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'usage: gpuscope __man' "$tmp/err" || bad="$bad (none)"
if grep -q '^\.SS "submit"$' "$tmp/gpuscope-queue.1" 2>/dev/null &&
	grep -q '^\.B gpuscope queue submit$' "$tmp/gpuscope-queue.1"; then
	:
else
	bad="$bad queue-page-lacks-submit"
fi
if [ -z "$bad" ]; then
	ok "__man refuses what has no page; a subcommand is a section of its command's page"
else
	not_ok "__man:$bad" "$(cat "$tmp/err")"
fi

# 8. the build's pages (mk/man.mk) are these
if [ ! -f "$O/man/.stamp" ]; then
	not_ok "$O/man/.stamp is not there: 'make O=$O' makes the pages (mk/man.mk)"
else
	(cd "$O/man" && ls gpuscope-*.1 | sed 's/\.1$//' | sort) >"$tmp/built"
	bad=""
	for p in $(cat "$tmp/pages"); do
		grep -v '^\.TH' "$O/man/$p.1" 2>/dev/null >"$tmp/b" && grep -v '^\.TH' "$tmp/$p.1" | cmp -s - "$tmp/b" ||
			bad="$bad $p"
	done
	if cmp -s "$tmp/built" "$tmp/pages.sorted" && [ -z "$bad" ]; then
		ok "$O/man holds the $np pages, as __man prints them"
	else
		not_ok "$O/man differs from __man: pages$bad" "$(diff "$tmp/pages.sorted" "$tmp/built")"
	fi
fi

# 9. the overview page refers to every page in its SEE ALSO
missing=""
sed -n '/^\.SH SEE ALSO/,/^\.SH/p' man/gpuscope.1 >"$tmp/seealso"
for p in $(cat "$tmp/pages"); do
	grep -qF -- ".BR $(roff_name "$p") (1)" "$tmp/seealso" || missing="$missing $p(1)"
done
if [ -z "$missing" ]; then
	ok "man/gpuscope.1's SEE ALSO lists every page"
else
	not_ok "man/gpuscope.1's SEE ALSO lacks:$missing"
fi

echo "1..$n"
[ "$fail" -eq 0 ]
