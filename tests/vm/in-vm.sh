#!/usr/bin/env bash
# in-vm.sh -- the one in-VM driver of the lab self-tests. Runs every phase
# in tests/vm/phases/ whose "# sets:" line names the chosen set, in name
# order, in this one boot; prints TAP with each phase's wall time. New
# phases: drop an executable NN-name.sh with a "# sets: smoke full" (or
# "# sets: full") line there. A phase that exits 4 (KSFT_SKIP: require_cmd
# found a command missing) is a skip with its reason, except with CI=true,
# where it fails.
#
# Usage: in-vm.sh [--set smoke|full] [--only NAME]...
set -eu -o pipefail
ROOT=${QPLAB_ROOT:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
export QPLAB_ROOT=$ROOT
set_name=full only=()
while [ $# -gt 0 ]; do
	case $1 in
	--set) set_name=$2; shift ;;
	--only) only+=("$2"); shift ;;
	*) echo "in-vm.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
# The phases may ask which set runs (70-runner ablates on the full set only).
export QPLAB_VM_SET=$set_name
[ "${QPLAB_IN_VM:-0}" = 1 ] || { echo "in-vm.sh: runs inside the micro-VM (tests/vm/run-selftests.sh)"; exit 2; }

# KSFT_SKIP, the phases' skip status (require_cmd).
# shellcheck source=netns/lib.sh
. "$ROOT/netns/lib.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
phases=()
for f in "$ROOT"/tests/vm/phases/[0-9]*.sh; do
	[ -e "$f" ] || continue
	name=$(basename "$f" .sh)
	if [ ${#only[@]} -gt 0 ]; then
		case " ${only[*]} " in *" $name "* | *" ${name#[0-9][0-9]-} "*) ;; *) continue ;; esac
	else
		grep -q "^# sets:.*\b$set_name\b" "$f" || continue
	fi
	phases+=("$f")
done
read -r krel </proc/sys/kernel/osrelease
echo "TAP version 13"
echo "1..${#phases[@]}"
echo "# kernel $krel, set $set_name"
n=0 failed=0
for f in "${phases[@]}"; do
	n=$((n + 1))
	name=$(basename "$f" .sh)
	t0=${EPOCHREALTIME/[.,]/}
	rc=0
	bash -c 'set -eu -o pipefail; . "$QPLAB_ROOT/netns/lib.sh"; . "$QPLAB_ROOT/tests/vm/lib.sh"; . "$1"' phase "$f" 2>&1 |
		tee "$out" | sed -u 's/^\([^#]\)/# \1/' || rc=$?
	t1=${EPOCHREALTIME/[.,]/}
	secs=$(( (t1 - t0) / 100000 ))
	secs="$((secs / 10)).$((secs % 10))"
	if [ $rc = 0 ]; then
		echo "ok $n - $name (${secs} s)"
	elif [ $rc = "$KSFT_SKIP" ] && [ "${CI:-}" != true ]; then
		# A phase that cannot run here (a command it needs is missing,
		# require_cmd) is a skip with its reason; in CI, where
		# scripts/deps.sh installed everything, a failure.
		echo "ok $n - $name (${secs} s) # SKIP $(sed -n 's/.*SKIP: //p' "$out" | head -n 1)"
	else
		echo "not ok $n - $name (${secs} s)"
		failed=$((failed + 1))
		# A failed phase may leave its topology: clear it for the next one.
		"$ROOT/netns/topo" down --all 2>&1 | sed 's/^/# /' || true
	fi
done
# Whatever a phase left behind would fail the next run: say so here.
"$ROOT/netns/topo" down --all >/dev/null 2>&1 || { echo "# topo down --all found leftovers"; failed=$((failed + 1)); }
echo "# $failed of $n phases failed on $krel"
[ $failed = 0 ]
