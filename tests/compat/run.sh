#!/usr/bin/env bash
# tests/compat/run.sh — the differential test against Mooncake's JSON library.
#
# Builds mooncake_ref (jsoncpp 1.9.5, doing what Mooncake's encode/decode and
# FastWriter do) and ours (libqphs), feeds both tests/compat/table.txt, and
# compares the answers line by line:
#   same    both must print the identical line (fields, bytes written)
#   reject  libqphs must refuse; Mooncake's answer is shown (-v)
#   differ  a documented difference; both answers are shown
# Without jsoncpp (or g++), libqphs is compared against golden.txt, the
# reference output kept in the tree.  The reference output is also checked
# against golden.txt, so a jsoncpp that changes behaviour is noticed.
#
# Usage: tests/compat/run.sh [-v] [--update-golden]   (from the top directory)
# Env: BUILD (default build), CC, CXX.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
build=${BUILD:-build}
out="$top/$build/compat"
verbose=0
update=0
for a in "$@"; do
	case $a in
	-v) verbose=1 ;;
	--update-golden) update=1 ;;
	*) echo "usage: $0 [-v] [--update-golden]" >&2; exit 2 ;;
	esac
done
mkdir -p "$out"
cd "$top"

make -s BUILD="$build" "$build/libqphs.a" >/dev/null
jsonc_cflags=$(pkg-config --cflags json-c 2>/dev/null || true)
jsonc_libs=$(pkg-config --libs json-c 2>/dev/null || echo -ljson-c)
# shellcheck disable=SC2086 # the flags are words
${CC:-cc} -std=c11 -D_GNU_SOURCE -O1 -g -Wall -Wextra -Werror -Ilib/include -Ilib \
	$jsonc_cflags tests/compat/ours.c "$build/libqphs.a" $jsonc_libs -lm -o "$out/ours"

have_ref=0
if command -v "${CXX:-g++}" >/dev/null && pkg-config --exists jsoncpp; then
	# shellcheck disable=SC2046
	"${CXX:-g++}" -std=c++17 -O1 -Wall -o "$out/mooncake_ref" tests/compat/mooncake_ref.cpp \
		$(pkg-config --cflags --libs jsoncpp)
	have_ref=1
	echo "# reference: jsoncpp $(pkg-config --modversion jsoncpp)"
else
	echo "# reference: no jsoncpp here, comparing against tests/compat/golden.txt"
fi

"$out/ours" <tests/compat/table.txt >"$out/ours.out"
if [ $have_ref = 1 ]; then
	"$out/mooncake_ref" <tests/compat/table.txt >"$out/ref.out"
	if [ $update = 1 ]; then
		cp "$out/ref.out" tests/compat/golden.txt
		echo "# golden.txt updated"
	elif ! cmp -s "$out/ref.out" tests/compat/golden.txt; then
		echo "not ok - jsoncpp's answers differ from tests/compat/golden.txt:"
		diff tests/compat/golden.txt "$out/ref.out" | head -20
		exit 1
	fi
else
	cp tests/compat/golden.txt "$out/ref.out"
fi

# Golden frames: the body each side writes, framed; compared with frames/.
frame_hex() { # TYPE BODYHEX -> the frame as hex
	local len=$(( ${#2} / 2 )) le=""
	[ "$1" = old ] || len=$((len + 1))
	for i in 0 1 2 3 4 5 6 7; do le+=$(printf '%02x' $(( (len >> (8 * i)) & 255 ))); done
	printf '%s%s%s\n' "$le" "${1/old/}" "$2"
}
grep -v '^#' tests/compat/frames.txt | awk '{ $2 = "same"; $1 = ""; print substr($0, 2) }' >"$out/frames.table"
"$out/ours" <"$out/frames.table" >"$out/frames.ours"
[ $have_ref = 1 ] && "$out/mooncake_ref" <"$out/frames.table" >"$out/frames.ref"
mkdir -p tests/compat/frames
frame_fails=0 nframes=0
while read -r name type _; do
	nframes=$((nframes + 1))
	ours=$(sed -n "${nframes}p" "$out/frames.ours" | sed 's/.* enc=//')
	if [ $update = 1 ]; then
		ref=$(sed -n "${nframes}p" "$out/frames.ref" | sed 's/.* enc=//')
		frame_hex "$type" "$ref" >"tests/compat/frames/$name.hex"
	fi
	if [ "$(frame_hex "$type" "$ours")" != "$(cat "tests/compat/frames/$name.hex")" ]; then
		echo "not ok - frame $name: libqphs writes $(frame_hex "$type" "$ours")"
		frame_fails=$((frame_fails + 1))
	fi
done < <(grep -v '^#' tests/compat/frames.txt)
echo "# compat: $nframes golden frames compared, $frame_fails failures"
[ $frame_fails = 0 ] || exit 1

grep -v '^#' tests/compat/table.txt | grep -v '^$' >"$out/table.rows"
paste -d '\t' "$out/table.rows" "$out/ref.out" "$out/ours.out" | awk -F '\t' -v verbose=$verbose '
{
	split($1, w, " "); expect = w[1]; mode = w[2]; n++
	row = substr($1, length(expect) + 2, 90); ref = $2; ours = $3
	bad = 0
	if (expect == "same" && ref != ours) bad = 1
	if (expect == "reject" && ours !~ /^reject /) bad = 1
	if (expect == "differ" && ref == ours) bad = 1
	if (bad) {
		fails++
		printf "not ok %d - %s %s\n#   mooncake: %s\n#   libqphs:  %s\n", n, expect, row, substr(ref, 1, 400), substr(ours, 1, 400)
		next
	}
	count[expect]++
	if (expect == "reject") { split(ref, r, " "); moon[r[1]]++ }
	if (verbose || expect == "differ")
		printf "ok %d - %s %s\n#   mooncake: %s\n#   libqphs:  %s\n", n, expect, row, substr(ref, 1, 160), substr(ours, 1, 160)
}
END {
	printf "# compat: %d bodies compared: %d identical, %d refused by libqphs (Mooncake: %d accepted, %d aborted, %d malformed, %d dropped as corrupt), %d documented differences, %d failures\n", n, count["same"], count["reject"], moon["ok"], moon["abort"], moon["malformed"], moon["corrupt"], count["differ"], fails
	exit fails ? 1 : 0
}'
