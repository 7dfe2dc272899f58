#!/usr/bin/env bash
# bench/flame on hand-made input.  fold: perf script's text into stacks,
# a kernel frame keeping its mark when its name is cut to fit.  split: a
# folded profile whose counts are
# chosen so that every figure follows by hand: 100 samples, 2 connections,
# 2 CPUs.  The work the rules fix is 10 connect + 4 QP create (waiting for
# mmap's lock) + 6 mmap = 20 samples, 10 ms per connection, 2 of them
# waiting for a lock; its floor is (20 - 4) / 2 connections / 2 CPUs =
# 4 ms per connection.  setsockopt, futex and sched_yield are not fixed.
# Usage: tests/bench/flame.sh FLAME
set -eu -o pipefail

flame=${1:?usage: tests/bench/flame.sh FLAME}
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
# fold: one sample of three frames (the innermost first, as perf script
# prints them), one whose kernel frame has a 300-character name.
long=$(printf 'k%.0s' $(seq 300))
printf 'rdma_setup\n\tffffffff81000000 do_syscall_64+0x10 ([kernel.kallsyms])\n\t7f0000000000 qphs_connect+0x20 (/x/libqphs.so)\n\t7f0000000001 [unknown] (/usr/lib/libibverbs.so.1)\n\nqphs-loop\n\tffffffff81000001 %s+0x1 ([kernel.kallsyms])\n\n' "$long" |
	"$flame" fold >"$tmp/out"
expect "fold: callers first, unknown frames named by their library" "rdma_setup;[libibverbs.so.1];qphs_connect;do_syscall_64 [k] 1"
if grep -qE "^qphs-loop;k{200,} \[k\] 1\$" "$tmp/out"; then
	echo "ok - fold: a name cut to fit keeps its kernel mark"
else
	echo "not ok - fold: a name cut to fit keeps its kernel mark:"
	sed 's/^/#   /' "$tmp/out"
	bad=1
fi
exit $bad
