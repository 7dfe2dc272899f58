#!/usr/bin/env bash
# segment-diff.sh — the differential test of our segment descriptor against
# Mooncake's own decoder and device selection (tests/mooncake/segment_select.cpp).
#
#   tests/mooncake/segment-diff.sh [MOONCAKE_BUILD]     (from the top directory)
#
# MOONCAKE_BUILD (argument or environment) is a Mooncake cmake build
# directory (README, "Building Mooncake for the lab").  Without one this
# prints a SKIP line with the reason and exits 0: CI has no Mooncake.  With
# one it builds segment_select against it, then in the lab VM brings up a
# real `qplab agent` on an rxe device and lets Mooncake's code fetch the
# agent's segment descriptor (a Metadata request, decodeSegmentDesc) and
# select a device for every buffer (RdmaTransport::selectDevice).  It
# prints the agent's Metadata reply (JSON, and the frame as bytes) and
# Mooncake's findings; exit 0 when Mooncake can use the descriptor, 1 when
# it cannot, 2 on a usage error.
set -eu -o pipefail

top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
build=${QPLAB_BUILD:-$top/build}

if [ "${1:-}" = --in-vm ]; then
	# shellcheck source=netns/lib.sh
	. "$top/netns/lib.sh"
	export QPLAB_ROOT=$top
	# shellcheck source=tests/vm/lib.sh
	. "$top/tests/vm/lib.sh"
	bin=$2
	topo_up mcdiff --hosts a,b
	trap 'kill "${agent:-0}" 2>/dev/null || true; wait 2>/dev/null || true; "$TOPO" down --name mcdiff >/dev/null 2>&1 || true' EXIT
	addr=${H_ADDR4[0]}:12001
	fifo=$(mktemp -u)
	mkfifo "$fifo"
	# The agent serves until its stdin closes: hold the fifo open.
	${H_EXEC[0]} "$build/qplab" agent --host a --device "${H_RXE[0]}" --listen "$addr" <"$fifo" >/dev/null 2>&1 &
	agent=$!
	exec 9>"$fifo"
	rm -f "$fifo"
	for _ in $(seq 100); do
		${H_EXEC[1]} "$build/qplab" hs send --to "$addr" --type probe --timeout 1 >/dev/null 2>&1 && break
		sleep 0.1
	done
	echo "# the agent's Metadata reply (qplab agent on ${H_RXE[0]}, $addr):"
	reply=$(${H_EXEC[1]} "$build/qplab" hs send --to "$addr" --type metadata --body - <<<'{"name":"segment-diff","protocol":"rdma"}')
	while IFS= read -r l; do echo "#   $l"; done <<<"$reply"
	echo "# as a frame (8-byte little-endian length, type 1, the JSON):"
	printf '%s' "$reply" | "$build/qplab" hs encode --type metadata | xxd | sed 's/^/#   /'
	echo "# Mooncake's decodeSegmentDesc and RdmaTransport::selectDevice on it:"
	rc=0
	${H_EXEC[1]} "$bin" "$addr" 2>/dev/null | sed 's/^/#   /' || rc=$?
	[ "${PIPESTATUS[0]}" = 0 ] || rc=1
	exec 9>&-
	exit $rc
fi

mb=${1:-${MOONCAKE_BUILD:-}}
if [ -z "$mb" ]; then
	echo "ok - segment-diff # SKIP no Mooncake build (set MOONCAKE_BUILD=DIR or pass it: README, \"Building Mooncake for the lab\")"
	exit 0
fi
env_out=$("$top/scripts/mooncake-env.sh" "$mb") || exit 2
eval "$env_out"
echo "# Mooncake ${MOONCAKE_COMMIT} from $MOONCAKE_SRC"
mkdir -p "$build/mooncake"
# shellcheck disable=SC2086 # the flags are words
g++ $MOONCAKE_CXXFLAGS -c "$top/tests/mooncake/segment_select.cpp" -o "$build/mooncake/segment_select.o"
# shellcheck disable=SC2086
g++ -o "$build/mooncake/segment_select" "$build/mooncake/segment_select.o" $MOONCAKE_LIBS
rc=0
QPLAB_BUILD=$build "$build/qplab" vm --kernel "${SEGMENT_DIFF_KERNEL:-7}" -- \
	"$top/tests/mooncake/segment-diff.sh" --in-vm "$build/mooncake/segment_select" || rc=$?
if [ $rc = 0 ]; then
	echo "ok - segment-diff: Mooncake ${MOONCAKE_COMMIT:0:7} decodes the agent's descriptor and selects a device for every buffer"
else
	echo "not ok - segment-diff: Mooncake ${MOONCAKE_COMMIT:0:7} cannot use the agent's descriptor (exit $rc)"
fi
exit $rc
