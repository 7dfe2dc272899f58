#!/usr/bin/env bash
# The README's catalogue table and scenarios/ must name the same scenarios:
# every file has one row, every row links a file that exists.
# Usage: tests/docs/readme-catalogue.sh [ROOT]
set -eu -o pipefail

root=${1:-.}
readme=$root/README.md
rows=$(grep -oE '^\| \[[a-z0-9_-]+/[a-z0-9_-]+\]\(scenarios/[a-z0-9_/-]+\.json\)' "$readme" |
	sed -E 's/^\| \[([^]]+)\]\(scenarios\/([^)]+)\.json\)/\1 \2/' || true)
bad=0
while read -r id path; do
	[ -n "$id" ] || continue
	if [ "$id" != "$path" ]; then
		echo "README.md: row $id links scenarios/$path.json"
		bad=1
	elif [ ! -f "$root/scenarios/$path.json" ]; then
		echo "README.md: row $id has no file scenarios/$path.json"
		bad=1
	fi
done <<<"$rows"
files=$(cd "$root/scenarios" && find . -name '*.json' | sed 's|^\./||; s|\.json$||' | sort)
for id in $files; do
	grep -qx "$id $id" <<<"$rows" || { echo "README.md: no catalogue row for scenarios/$id.json"; bad=1; }
done
dups=$(awk '{ print $1 }' <<<"$rows" | sort | uniq -d)
[ -z "$dups" ] || { echo "README.md: rows repeated: $dups"; bad=1; }
[ $bad = 0 ] || exit 1
echo "# README catalogue table: $(wc -w <<<"$files") scenarios, one row each"
