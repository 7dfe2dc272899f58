#!/usr/bin/env bash
# mooncake-agent.sh — builds qplab-mooncake-agent, the adapter that runs a
# real Mooncake Transfer Engine as a lab host (mooncake/, README "Mooncake
# hosts"), against a Mooncake build of yours.  Nothing of Mooncake is
# copied into this repository: its header and libraries are used where
# they are.
#
#   scripts/mooncake-agent.sh MOONCAKE_BUILD      (from the top directory)
#
# MOONCAKE_BUILD is Mooncake's cmake build directory (README, "Building
# Mooncake for the lab"); BUILD (default build) is ours, and must hold
# libqphs.a and the harness objects (make all).  Writes
# $BUILD/mooncake/qplab-mooncake-agent; exit 1 when the build fails, 2 when
# MOONCAKE_BUILD is missing or not a Mooncake build.
set -eu -o pipefail

top=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
build=${BUILD:-build}
cc=${CC:-cc}
mb=${1:-}
if [ -z "$mb" ]; then
	echo "mooncake-agent: no Mooncake build (make mooncake-agent MOONCAKE_BUILD=DIR: README, \"Building Mooncake for the lab\")" >&2
	exit 2
fi
env_out=$("$top/scripts/mooncake-env.sh" "$mb") || exit 2
eval "$env_out"
inc=$MOONCAKE_SRC/mooncake-transfer-engine/include
[ -f "$inc/transfer_engine_c.h" ] || { echo "mooncake-agent: no $inc/transfer_engine_c.h" >&2; exit 2; }
for f in "$build/libqphs.a" "$build/obj/harness/hs/bad_frame.o" "$build/obj/harness/hs/raw_frame.o" \
	"$build/obj/harness/cli/jread.o" "$build/obj/harness/cli/readfile.o" \
	"$build/obj/harness/cli/timemult.o" "$build/obj/harness/cli/hwc_nl.o" "$build/obj/harness/cli/hwc_read.o"; do
	[ -f "$f" ] || { echo "mooncake-agent: no $f (make all first)" >&2; exit 2; }
done
out=$build/mooncake
mkdir -p "$out/obj"
mbabs=$(cd "$mb" && pwd)
warn="-Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes -Wwrite-strings -Wshadow -Wformat=2 -Wno-format-nonliteral -Werror"
# The build's identity goes into the binary: the ready line, and so
# results.json, name the Mooncake each host ran.
ids=(-DMOONCAKE_COMMIT="\"$MOONCAKE_COMMIT\"" -DMOONCAKE_BUILD_DIR="\"$mbabs\"" -DMOONCAKE_SRC_DIR="\"$MOONCAKE_SRC\"")
read -ra jsonc_cflags <<<"$(pkg-config --cflags json-c)"
read -ra jsonc_libs <<<"$(pkg-config --libs json-c)"
objs=()
for c in "$top"/mooncake/*.c; do
	o=$out/obj/$(basename "${c%.c}").o
	# shellcheck disable=SC2086 # the flags are words
	"$cc" -std=c11 -D_GNU_SOURCE -O2 -g $warn "${jsonc_cflags[@]}" "${ids[@]}" \
		-I"$top/lib/include" -I"$top/harness" -I"$top/mooncake" -I"$inc" -c "$c" -o "$o"
	objs+=("$o")
done
# shellcheck disable=SC2086 # MOONCAKE_LIBS is words
"$cc" -o "$out/qplab-mooncake-agent" "${objs[@]}" "$build/obj/harness/hs/bad_frame.o" \
	"$build/obj/harness/hs/raw_frame.o" "$build/obj/harness/cli/jread.o" \
	"$build/obj/harness/cli/readfile.o" "$build/obj/harness/cli/timemult.o" \
	"$build/obj/harness/cli/hwc_nl.o" "$build/obj/harness/cli/hwc_read.o" "$build/libqphs.a" \
	$MOONCAKE_LIBS \
	"${jsonc_libs[@]}" -libverbs -lpthread
echo "mooncake-agent: $out/qplab-mooncake-agent (Mooncake ${MOONCAKE_COMMIT:0:7}, $mbabs)"
