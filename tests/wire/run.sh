#!/usr/bin/env bash
# tests/wire/run.sh — the Wireshark dissector (wireshark/mooncake.lua)
# through tshark, against qplab hs decode.  TAP on stdout.
#
# Usage: tests/wire/run.sh [golden|bad|live]...   (default: all three)
#   golden  the golden frames in synthetic captures (golden.sh)
#   bad     every kind of frame libqphs refuses (bad.sh)
#   live    captures on loopback of qplab hs send against qplab hs serve,
#           with and without faults (live.sh; needs root and tcpdump)
# Env: BUILD (default build: $BUILD/qplab and $BUILD/tests/pcapgen must be
# built), CI (true: a missing tshark or tcpdump fails instead of skipping),
# QPLAB_TIME_MULTIPLIER (scales the live test's deadlines).
set -eu -o pipefail
export LC_ALL=C

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC2034 # read by the messages in netns/lib.sh
PROG=wire-tests
# shellcheck source=netns/lib.sh
. "$ROOT/netns/lib.sh" # defer, the exit trap, wait_until, time_mult
install_exit_trap
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
QPLAB=$BUILD/qplab
PCAPGEN=$BUILD/tests/pcapgen
T=$(mktemp -d "${TMPDIR:-/tmp}/qplab-wire.XXXXXX")
defer rm -rf "$T"
mkdir -p "$T/home"

# shellcheck source=tests/wire/lib.sh
. "$ROOT/tests/wire/lib.sh"
# shellcheck source=tests/wire/golden.sh
. "$ROOT/tests/wire/golden.sh"
# shellcheck source=tests/wire/bad.sh
. "$ROOT/tests/wire/bad.sh"
# shellcheck source=tests/wire/live.sh
. "$ROOT/tests/wire/live.sh"

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(golden bad live)
for p in "${parts[@]}"; do
	case $p in
	golden | bad | live) ;;
	*) echo "usage: $0 [golden|bad|live]..." >&2; exit 2 ;;
	esac
done
for f in "$QPLAB" "$PCAPGEN"; do
	[ -x "$f" ] || { echo "tests/wire/run.sh: $f is not built (make wire-test builds it)" >&2; exit 2; }
done

echo "TAP version 13"
if need_tool tshark tshark; then
	echo "# $(tshark --version 2>/dev/null | head -1)"
	for p in "${parts[@]}"; do
		start=$SECONDS
		"test_$p"
		echo "# $p: $((SECONDS - start)) s"
	done
fi
echo "1..$n"
[ "$failed" = 0 ]
