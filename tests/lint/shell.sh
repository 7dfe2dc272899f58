#!/usr/bin/env bash
# Every shell script git tracks through shellcheck (all levels, -x for the
# files they source), and every script in netns/ runs under `set -eu`: a
# sourced library (a `# shellcheck shell=` line) takes its caller's, and a
# script that may not (PID 1 of the VM) says why on a `# lint: set -u only:`
# line.
# Usage: tests/lint/shell.sh [ROOT]
set -eu -o pipefail

root=${1:-.}
cd "$root"
command -v shellcheck >/dev/null || { echo "shell.sh: shellcheck is missing: scripts/deps.sh installs it" >&2; exit 1; }
scripts=()
while IFS= read -r f; do
	[ -f "$f" ] || continue
	case $f in
	*.sh) scripts+=("$f") ;;
	*) head -c 64 "$f" | head -1 | grep -qE '^#!(/usr/bin/env |/bin/)(ba)?sh' && scripts+=("$f") ;;
	esac
done < <(git ls-files)
[ ${#scripts[@]} -gt 0 ] || { echo "shell.sh: no shell scripts found under $root" >&2; exit 1; }
bad=0
shellcheck -x "${scripts[@]}" || bad=1
for f in "${scripts[@]}"; do
	case $f in netns/*) ;; *) continue ;; esac
	grep -qE '^# shellcheck shell=|^# lint: set -u only: .' "$f" && continue
	grep -qE '^set -eu' "$f" || { echo "$f: no 'set -eu' line"; bad=1; }
done
[ $bad = 0 ] || exit 1
echo "# shellcheck: ${#scripts[@]} scripts clean"
