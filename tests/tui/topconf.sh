#!/bin/sh
# gpuscope top keeps its settings in $XDG_CONFIG_HOME/gpuscope/top.conf:
# the sort, chart, layout and a hidden pane changed with keys are written
# when it quits and are back on the next start; the F2 setup screen changes
# a setting at once and it is saved too; -d on the command line is for that
# run only; a replay uses the display settings but not the interval or the
# tree, and keeps them in the file; a malformed file, a FIFO or a directory at the path, and a
# directory that cannot be written, each give a note and never a failure.
. "$(dirname "$0")/lib.inc"

CFG=$TMP/cfg
CONF=$CFG/gpuscope/top.conf

# has KEY=VALUE: top.conf holds that line
has() {
	grep -qx -- "$1" "$CONF" 2>/dev/null
}

quit() {
	keys q
	rc=$(wait_exit)
	[ "$rc" = 0 ]
	ok $? "$1 ($rc)"
}

# --- keys change settings; quitting writes them -----------------------------
start 100 40 XDG_CONFIG_HOME="$CFG"
check "started, F2 in the key bar" '^F1Help +F2Setup'
[ ! -e "$CONF" ]
ok $? "no top.conf before the first quit"
keys P
keys c
check "c: the chart of memory used" '^History: memory used'
keys m m
check "m m: the compact layout" 'layout: compact'
keys f
wait_gone '^Findings' 3
ok $? "f: the findings pane hidden"
quit "q: quits with status 0"
[ -f "$CONF" ] && head -1 "$CONF" | grep -q '^# gpuscope top'
ok $? "top.conf written, with its comment header"
has sort=cpu && has sort_invert=0
ok $? "the sort column written (P: CPU%)"
has chart=mem
ok $? "the chart metric written"
has layout=compact
ok $? "the layout written"
has show_findings=0 && has show_charts=1
ok $? "the hidden pane written, the others shown"
has interval=1
ok $? "the interval written (the default)"
[ "$(stat -c %a "$CFG/gpuscope")" = 700 ] && [ "$(ls -A "$CFG/gpuscope")" = top.conf ]
ok $? "its directory made 0700, and no temporary file left"

# --- the next start restores them; F2 shows and changes them -----------------
start 100 40 XDG_CONFIG_HOME="$CFG"
check "restart: the chart of memory used is back" '^History: memory used'
check_not "restart: the findings pane is still hidden" '^Findings'
keys '?'
check "the help lists F2" 'F2 +setup screen: what top shows, kept in top.conf on quit'
keys Escape F2
check "F2: the setup screen" '^ Setup: saved in top.conf when top quits'
check "setup: the sort column restored" 'Sort column +CPU%'
check "setup: the layout restored" 'GPU layout +compact'
check "setup: the findings pane hidden" 'Findings pane +hidden'
check "setup: its keys at the bottom" 'Up/Down: choose  Left/Right/Enter/Space: change  Esc/F2/F10: back'
keys Down Enter
check "setup: Enter inverts the sort order" 'Sort order +ascending \(inverted\)'
keys Down Down Down Down Down Down
keys Right
check "setup: Right hides the history charts" 'History charts +hidden'
keys Up Up Up Up Left
check "setup: Left goes back a chart metric" 'Chart +GPU utilisation'
keys Escape
check "Esc: back to the main view" '^F1Help +F2Setup'
check_not "the charts are hidden at once" '^History'
keys F2
check "F2 again: the setup screen" 'History charts +hidden'
keys F10
check "F10 in the setup screen goes back, it does not quit" '^F1Help +F2Setup'
[ ! -f "$TMP/rc" ]
ok $? "still running after F10 in setup"
keys d F2
check "F2 from the detail view too" '^ Setup: saved'
keys Escape
check "Esc: back to the detail view" 'Fields: [0-9]+ of [0-9]+ reported'
keys Escape
quit "q: quits after the setup screen"
has show_charts=0 && has sort_invert=1 && has chart=util
ok $? "what the setup screen changed is saved"
has layout=compact && has show_findings=0
ok $? "the rest kept"

# --- only when something changed -------------------------------------------
touch -d '2001-01-01' "$CONF"
start 100 40 XDG_CONFIG_HOME="$CFG"
check "unchanged run: up" '^F1Help'
quit "unchanged run: quits"
[ "$(stat -c %Y "$CONF")" = "$(date -d 2001-01-01 +%s)" ]
ok $? "nothing changed: top.conf is not rewritten"

# --- -d wins for the run, and is not written back ---------------------------
start 100 40 XDG_CONFIG_HOME="$CFG" -- -d 0.5
check "-d 0.5: the command line wins over the file" 'every 0\.5s'
keys c
quit "-d run: quits"
has interval=1 && has chart=mem
ok $? "-d is not written back; what the keys changed is"
start 100 40 XDG_CONFIG_HOME="$CFG" -- -d 0.5
check "-d 0.5 again" 'every 0\.5s'
keys -
check "-: a shorter interval" 'every 0\.2s'
quit "-d run with -: quits"
has interval=0.2
ok $? "an interval changed on the screen is written"
start 100 40 XDG_CONFIG_HOME="$CFG"
check "no -d: the file's interval" 'every 0\.2s'
keys q
wait_exit >/dev/null

# --- a replay: the file's display settings, not its interval nor its tree ----
(
	export GPUSCOPE_NVML="$FAKE" FAKE_NVML_SCENARIO="$SCN"
	export GPUSCOPE_PROC_ROOT="$ROOT/tests/fixtures/proc" GPUSCOPE_SYSFS_ROOT="$ROOT/tests/fixtures/sys-empty"
	"$BIN" record -o "$TMP/r.rec" -d 0.1 -c 4 --quiet
) >"$TMP/record.out" 2>&1
printf 'chart=temp\ntree=1\ninterval=0.2\n' >"$CONF"
PREFIX="replay $TMP/r.rec" start 100 40 XDG_CONFIG_HOME="$CFG"
check "replay: the file's chart" '^History: temperature'
keys c
check "replay: c, the next chart" '^History: SM/graphics clock'
quit "replay: quits"
has chart=sm_clock && has tree=1 && has interval=0.2
ok $? "replay: the chart saved; the tree and the interval, which it does not use, kept"

# --- malformed and odd files: a note, never a failure -------------------------
printf 'sort=pid\nthis is no setting\nchart=power\nfuture_key=7\n' >"$CONF"
start 100 40 XDG_CONFIG_HOME="$CFG"
check "a malformed line: top starts anyway" '^History: power draw'
keys c
quit "malformed: quits with status 0"
grep -q "note: '$CONF' line 2: not key=value; that line ignored" "$TMP/err"
ok $? "one note on stderr names the file and the line"
[ "$(wc -l <"$TMP/err")" = 1 ]
ok $? "just one line"
has sort=pid && has chart=temp && has future_key=7 && ! grep -q 'no setting' "$CONF"
ok $? "the good lines applied, the unknown key kept, the malformed line dropped"

rm -f "$CONF"
mkfifo "$CONF"
start 100 40 XDG_CONFIG_HOME="$CFG"
check "a FIFO at the path: top starts, not waiting for a writer" '^F1Help'
keys q
rc=$(wait_exit)
[ "$rc" = 0 ] && grep -q "'$CONF' is not a regular file; not read" "$TMP/err"
ok $? "a FIFO: not read, one note, status 0 ($rc)"

rm -f "$CONF"
mkdir "$CONF"
start 100 40 XDG_CONFIG_HOME="$CFG"
check "a directory at the path: top starts" '^F1Help'
keys c
keys q
rc=$(wait_exit)
[ "$rc" = 0 ] && grep -q "is not a regular file; not read" "$TMP/err" &&
	grep -q "note: settings not saved: '$CONF' was not read" "$TMP/err" && [ -d "$CONF" ]
ok $? "a directory: not read nor replaced, notes, status 0 ($rc)"
rmdir "$CONF"

# --- a home that cannot be written ------------------------------------------
if [ "$(id -u)" = 0 ]; then
	# root writes into a read-only directory: a file where the directory should be
	: >"$TMP/ro"
	RO=$TMP/ro/sub
else
	mkdir "$TMP/ro"
	chmod 555 "$TMP/ro"
	RO=$TMP/ro
fi
start 100 40 XDG_CONFIG_HOME="$RO"
check "an unwritable config directory: top starts" '^F1Help'
keys c
keys q
rc=$(wait_exit)
[ "$rc" = 0 ] && grep -q "note: settings not saved: cannot" "$TMP/err"
ok $? "it quits with status 0 and one note ($rc: $(cat "$TMP/err"))"
chmod 755 "$TMP/ro" 2>/dev/null

done_testing
