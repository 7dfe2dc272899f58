#!/usr/bin/env bash
# tests/browser/run.sh: report.html in a real browser.  A results document
# of 100 scenarios on three kernels (make-results.mjs) goes through
# `qplab report`; headless Chromium (Debian's, driven by playwright-core)
# loads the page at 1280x900 and report-test.mjs checks its DOM and takes a
# screenshot ($BUILD/browser/report.png).  Without Chromium, Node.js or
# playwright-core (scripts/deps.sh installs them) it skips with the reason;
# under CI=true it fails instead.
set -eu -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
out=$build/browser

missing() {
	if [ "${CI:-}" = true ]; then
		echo "not ok 1 - browser test: $1 (CI=true: a missing dependency is a failure)"
		exit 1
	fi
	echo "ok 1 - browser test # SKIP $1"
	exit 0
}

[ -x "${QPLAB_CHROMIUM:-/usr/bin/chromium}" ] || missing "no /usr/bin/chromium (Debian package chromium: scripts/deps.sh)"
command -v node >/dev/null || missing "no node (Debian package nodejs: scripts/deps.sh)"
[ -f "$here/node_modules/playwright-core/package.json" ] ||
	missing "no playwright-core in tests/browser/node_modules (scripts/deps.sh runs npm ci there)"
[ -x "$build/qplab" ] || { echo "not ok 1 - $build/qplab is not built"; exit 1; }

rm -rf "$out"
mkdir -p "$out"
node "$here/make-results.mjs" "$out/results.json"
"$build/qplab" report "$out/results.json" --out "$out/report.html" >/dev/null
echo "# report.html of 100 scenarios on 3 kernels: $(wc -c <"$out/report.html") bytes, made in $SECONDS s"
rc=0
timeout $((300 * ${QPLAB_TIME_MULTIPLIER:-1})) node "$here/report-test.mjs" "$out/report.html" \
	"$out/results.expect.json" "$out/report.png" || rc=$?
echo "# browser test took $SECONDS s"
exit $rc
