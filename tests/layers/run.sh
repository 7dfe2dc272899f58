#!/usr/bin/env bash
# The layer rules fire: tools/check-layers over each fixture tree of
# tests/layers/fixtures/NAME must print exactly NAME/expect (sorted) and
# exit 1, or print nothing and exit 0 when expect is empty.
set -eu -o pipefail
export LC_ALL=C

tool=${1:?usage: tests/layers/run.sh PATH-TO-check-layers}
here=$(cd "$(dirname "$0")" && pwd)
fail=0 n=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for dir in "$here"/fixtures/*/; do
	name=$(basename "$dir")
	n=$((n + 1))
	want_rc=1
	[ -s "$dir/expect" ] || want_rc=0
	rc=0
	"$tool" --root "$dir" >"$out" 2>/dev/null || rc=$?
	if [ "$rc" -ne "$want_rc" ] || ! sort "$out" | diff -u "$dir/expect" - >/dev/null; then
		echo "not ok $n - check-layers fixture $name (exit $rc, want $want_rc)"
		sort "$out" | diff -u "$dir/expect" - | sed 's/^/#   /' || true
		fail=1
	else
		echo "ok $n - check-layers fixture $name"
	fi
done
echo "# check-layers: $n fixtures"
exit $fail
