#!/usr/bin/env bash
# bench/flame's split on a hand-made folded profile whose counts are
# chosen so that every figure follows by hand: 100 samples, 2 connections,
# 2 CPUs.  The work the rules fix is 10 connect + 4 QP create (waiting for
# mmap's lock) + 6 mmap = 20 samples, 10 ms per connection, 2 of them
# waiting for a lock; its floor is (20 - 4) / 2 connections / 2 CPUs =
# 4 ms per connection.  setsockopt, futex and sched_yield are not fixed.
# Usage: tests/bench/flame-split.sh FLAME
set -eu -o pipefail

flame=${1:?usage: tests/bench/flame-split.sh FLAME}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'qphs_connect\n' >"$tmp/own"
cat >"$tmp/folded" <<'FOLDED'
t;qphs_connect;__sys_connect [k] 10
t;ib_uverbs_handler_UVERBS_METHOD_QP_CREATE [k];rwsem_down_write_slowpath [k] 4
t;ksys_mmap_pgoff [k] 6
t;__sys_setsockopt [k] 5
t;__x64_sys_futex [k] 20
t;__x64_sys_sched_yield [k];do_sched_yield [k] 5
t;qphs_connect 50
FOLDED
bad=0
expect() { # WHAT LINE
	if grep -qxF -- "$2" "$tmp/out"; then
		echo "ok - $1"
	else
		echo "not ok - $1: no line \"$2\" in:"
		sed 's/^/#   /' "$tmp/out"
		bad=1
	fi
}
"$flame" split "$tmp/own" 2 2 <"$tmp/folded" >"$tmp/out"
expect "fixed work and its floor" "fixed  20.00%   10.000 ms/conn of CPU (2.000 of it waiting for locks); on 2 CPUs at least 4.000 ms per connection"
expect "the sched_yield loop is a kind of its own" "what    5.00%    2.500 ms/conn  waiting: sched_yield loop"
expect "setsockopt is not fixed" "what    5.00%    2.500 ms/conn  TCP: options"
expect "our own functions" "whose  50.00%  our own functions (OWN)"
# Without CPUS there is no floor; a CPU count of 0 is refused.
"$flame" split "$tmp/own" 2 <"$tmp/folded" >"$tmp/out"
if grep -q '^fixed' "$tmp/out"; then
	echo "not ok - no floor without CPUS"
	bad=1
else
	echo "ok - no floor without CPUS"
fi
if "$flame" split "$tmp/own" 2 0 <"$tmp/folded" >/dev/null 2>"$tmp/err"; then
	echo "not ok - CPUS 0 is refused"
	bad=1
else
	echo "ok - CPUS 0 is refused ($(head -1 "$tmp/err"))"
fi
exit $bad
