#!/bin/sh
# Ban libc calls that invite overflows or silent failures (curl's checksrc
# idea): sprintf, vsprintf, strcpy, strcat, strncpy, strtok, atoi, atol,
# gets, and malloc/calloc/realloc outside src/core/xalloc.c.
set -u
cd "$(dirname "$0")/.." || exit 2
bad=0
# tracked and new files alike (a file deleted but not yet committed is passed over)
files=$(git ls-files --cached --others --exclude-standard 'src/*.c' 'src/*.h' 2>/dev/null ||
	find src -name '*.[ch]')
for f in $files; do
	[ -f "$f" ] || continue
	# strip comments and string literals roughly before matching
	hits=$(sed -e 's://.*$::' -e 's:"[^"]*"::g' "$f" |
		grep -n -E '(^|[^_a-zA-Z0-9])(sprintf|vsprintf|strcpy|strcat|strncpy|strtok|atoi|atol|gets)[[:space:]]*\(' |
		grep -v -E 'snprintf|vsnprintf|strtok_r')
	if [ -n "$hits" ]; then
		echo "$hits" | sed "s|^|$f:|"
		bad=1
	fi
	case $f in
	src/core/xalloc.c) ;;
	*)
		hits=$(sed -e 's:"[^"]*"::g' "$f" | grep -n -E '(^|[^_a-zA-Z0-9x])(malloc|calloc|realloc)[[:space:]]*\(')
		if [ -n "$hits" ]; then
			echo "$hits" | sed "s|^|$f: use xmalloc/xcalloc/xrealloc: |"
			bad=1
		fi
		;;
	esac
done
[ "$bad" -eq 0 ] && echo "checksrc: ok"
exit "$bad"
