#!/usr/bin/env bash
# Every shell script git tracks through shellcheck (all levels, -x for the
# files they source), and every script in netns/ runs under `set -eu`: a
# sourced library (not executable) takes its caller's, and a script that
# may not (PID 1 of the VM) says why on a `# lint: no errexit: ` line.
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
	*)
		first=
		IFS= read -r first <"$f" || true
		[[ $first =~ ^\#\!(/usr/bin/env\ |/bin/|/bin/busybox\ )(ba)?sh ]] && scripts+=("$f")
		;;
	esac
done < <(git ls-files)
[ ${#scripts[@]} -gt 0 ] || { echo "shell.sh: no shell scripts found under $root" >&2; exit 1; }
bad=0
shellcheck -x "${scripts[@]}" || bad=1
for f in "${scripts[@]}"; do
	case $f in netns/*) ;; *) continue ;; esac
	[ -x "$f" ] || continue
	grep -qE '^# lint: no errexit: .' "$f" && continue
	grep -qE '^set -eu' "$f" || { echo "$f: no 'set -eu' line"; bad=1; }
done
[ $bad = 0 ] || exit 1
echo "# shellcheck: ${#scripts[@]} scripts clean"
