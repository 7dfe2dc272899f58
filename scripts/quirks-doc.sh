#!/usr/bin/env bash
# quirks-doc.sh -- regenerate the two matrices of docs/quirks.md (make quirks).
#
# Usage: scripts/quirks-doc.sh [QPLAB]
#
# Runs `qplab quirks` in the lab VM: once per kernel of QUIRKS_KERNELS
# (default "6.1 6.12 7", one boot each) for the kernel matrix, then once on
# QUIRKS_PROFILE_KERNEL (default 7) with every quirk profile for the
# profile matrix (QUIRKS_MATRICES="kernels profiles" picks them). Each
# matrix replaces the text between its BEGIN and END markers in
# docs/quirks.md; the prose around them is kept; the runs' JSON (times
# included) goes to build/quirks/{kernels,profiles}.json. A matrix whose
# run failed is left as it was, and the script exits non-zero.
# QPLAB_TIME_MULTIPLIER (default 3 here) stretches the VM boot deadline on
# a loaded machine.
set -eu -o pipefail
ROOT=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
QPLAB=${1:-$ROOT/build/qplab}
DOC=$ROOT/docs/quirks.md
export QPLAB_TIME_MULTIPLIER=${QPLAB_TIME_MULTIPLIER:-3}
read -r -a kernels <<<"${QUIRKS_KERNELS:-6.1 6.12 7}"
profile_kernel=${QUIRKS_PROFILE_KERNEL:-7}

[ -x "$QPLAB" ] || { echo "quirks-doc: $QPLAB not built (make)" >&2; exit 1; }
[ -f "$DOC" ] || { echo "quirks-doc: $DOC missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

args=()
for k in "${kernels[@]}"; do args+=(--kernel "$k"); done
profiles=(--quirk none)
while read -r p; do profiles+=(--quirk "$p"); done < <("$QPLAB" quirks --list-profiles)

# splice NAME FILE: replace the lines between the markers of NAME.
splice() {
	awk -v name="$1" -v file="$2" '
		$0 == "<!-- BEGIN " name " (make quirks) -->" { print; while ((getline l < file) > 0) print l; skip = 1; found = 1; next }
		$0 == "<!-- END " name " -->" { skip = 0 }
		!skip { print }
		END { if (!found) exit 3 }' "$DOC" >"$tmp/doc" ||
		{ echo "quirks-doc: no BEGIN $1 marker in $DOC" >&2; exit 1; }
	cp "$tmp/doc" "$DOC"
}

# matrix NAME ARGS...: one qplab run; its matrix replaces NAME's only when
# every column of it ran (a failed boot leaves the old matrix in place).
# The runs' JSON, with the times the matrices leave out, stays in build/quirks/.
json_dir=${QPLAB_BUILD:-$ROOT/build}/quirks
mkdir -p "$json_dir"
failed=0
matrix() {
	local name=$1
	shift
	echo "quirks-doc: qplab quirks $* --out $json_dir/$name.json" >&2
	if "$QPLAB" quirks "$@" --out "$json_dir/$name.json" >"$tmp/$name.md"; then
		splice "$name" "$tmp/$name.md"
		echo "quirks-doc: $DOC: $name matrix updated" >&2
	else
		cat "$tmp/$name.md" >&2
		echo "quirks-doc: a run failed; the $name matrix of $DOC left as it was" >&2
		failed=1
	fi
}
for m in ${QUIRKS_MATRICES:-kernels profiles}; do
	case $m in
	kernels) matrix kernels "${args[@]}" ;;
	profiles) matrix profiles --kernel "$profile_kernel" "${profiles[@]}" ;;
	*) echo "quirks-doc: unknown matrix '$m' in QUIRKS_MATRICES" >&2; exit 2 ;;
	esac
done
exit $failed
