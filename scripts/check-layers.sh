#!/bin/sh
# The layers of src/ point one way (docs/design.md):
#
#   core  <-  backend  <-  front, doctor, fit, record, bench, queue  <-  tui, serve  <-  cmd
#
# A file may include headers of its own folder and of folders of a lower
# rank, never of a higher one or of a peer of the same rank. Every include
# of a gpuscope header is spelt from src/ ("core/gpu.h"), never relative
# ("../core/gpu.h", "gpu.h"). Prints one line per violation and exits 1 if
# there is any; a folder of src/ that is not in the table below is one too.
#   scripts/check-layers.sh [SRCDIR]
set -u
src=${1:-src}
[ -d "$src" ] || {
	echo "check-layers: no such directory: $src" >&2
	exit 2
}
# the rank of each folder; peers share a rank and must not include each other
rank() {
	case $1 in
	core) echo 0 ;;
	backend) echo 1 ;;
	front | doctor | fit | record | bench | queue) echo 2 ;;
	tui | serve) echo 3 ;;
	cmd) echo 4 ;;
	*) echo "" ;;
	esac
}
bad=0
for dir in "$src"/*/; do
	mod=$(basename "$dir")
	r=$(rank "$mod")
	if [ -z "$r" ]; then
		echo "$src/$mod/: a folder without a layer: add it to scripts/check-layers.sh and docs/design.md"
		bad=1
		continue
	fi
	for f in "$dir"*.[chS]; do
		[ -f "$f" ] || continue
		# line number and the quoted name of every #include "..."
		out=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | sort -u)
		for inc in $out; do
			case $inc in
			*/*/* | ../* | ./*)
				echo "$f: #include \"$inc\": spell it from src/, as \"folder/file.h\""
				bad=1
				continue
				;;
			*/*) ;;
			*)
				echo "$f: #include \"$inc\": spell it from src/, as \"$mod/$inc\""
				bad=1
				continue
				;;
			esac
			to=${inc%%/*}
			if [ ! -f "$src/$inc" ]; then
				echo "$f: #include \"$inc\": no such header in $src/"
				bad=1
				continue
			fi
			[ "$to" = "$mod" ] && continue
			tr=$(rank "$to")
			if [ -z "$tr" ]; then
				echo "$f: #include \"$inc\": $to/ has no layer"
				bad=1
			elif [ "$tr" -ge "$r" ]; then
				if [ "$tr" -eq "$r" ]; then
					why="$to/ is a peer of $mod/"
				else
					why="$to/ is above $mod/"
				fi
				echo "$f: #include \"$inc\": against the layers ($why)"
				bad=1
			fi
		done
	done
done
exit $bad
