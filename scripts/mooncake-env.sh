#!/usr/bin/env bash
# mooncake-env.sh — how to compile and link a program of ours against a
# Mooncake Transfer Engine build the user made (README, "Building Mooncake
# for the lab").  Nothing of Mooncake is copied into this repository.
#
#   scripts/mooncake-env.sh MOONCAKE_BUILD        prints shell assignments:
#     MOONCAKE_SRC=...      the source tree (from the build's CMakeCache.txt)
#     MOONCAKE_COMMIT=...   its git commit, or "unknown"
#     MOONCAKE_CXXFLAGS=... the defines, include paths and flags the engine's
#                           own objects were compiled with (flags.make), so
#                           our objects see the same struct layouts
#     MOONCAKE_LIBS=...     the archives and libraries to link, in order
#
# MOONCAKE_BUILD is the cmake build directory of Mooncake's top level (the
# one holding CMakeCache.txt and mooncake-transfer-engine/src/
# libtransfer_engine.a).  Exit 1 with the reason when it is not one.
set -eu -o pipefail

b=${1:-}
if [ -z "$b" ] || [ "$b" = -h ] || [ "$b" = --help ]; then
	sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
	[ -n "$b" ] && exit 0
	exit 2
fi
b=$(cd "$b" 2>/dev/null && pwd) || { echo "mooncake-env: $1: no such directory" >&2; exit 1; }
cache=$b/CMakeCache.txt
te=$b/mooncake-transfer-engine/src
flags=$te/CMakeFiles/transfer_engine.dir/flags.make
for f in "$cache" "$te/libtransfer_engine.a" "$flags"; do
	[ -f "$f" ] || { echo "mooncake-env: $1 is not a Mooncake build directory: no $f (build the transfer_engine target first)" >&2; exit 1; }
done
src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
[ -d "$src/mooncake-transfer-engine/include" ] || { echo "mooncake-env: the source tree of $b ($src) is not there" >&2; exit 1; }
commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo unknown)
defines=$(sed -n 's/^CXX_DEFINES = //p' "$flags")
includes=$(sed -n 's/^CXX_INCLUDES = //p' "$flags")
cxxflags=$(sed -n 's/^CXX_FLAGS = //p' "$flags" | sed 's/-Wall -Wextra -Wno-unused-parameter//')
libs="$te/libtransfer_engine.a $te/common/base/libbase.a $b/mooncake-common/src/libmooncake_common.a"
libs+=" -L$b/mooncake-common -lasio -Wl,-rpath,$b/mooncake-common"
libs+=" -libverbs -lnuma -lglog -lgflags -ljsoncpp -lyaml-cpp -lpthread -ldl -lstdc++ -lm"
printf 'MOONCAKE_SRC=%q\nMOONCAKE_COMMIT=%q\nMOONCAKE_CXXFLAGS=%q\nMOONCAKE_LIBS=%q\n' \
	"$src" "$commit" "$defines $includes $cxxflags" "$libs"
