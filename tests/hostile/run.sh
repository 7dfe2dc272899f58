#!/usr/bin/env bash
# `make hostile` (part of make check): a hostile peer against `qplab hs
# serve` on loopback, at a small scale: idle sockets from one source,
# partial 1 MiB bodies from many, 800 KB bodies of 100k keys, then idle.
# bench/hs_attack.c --check asserts that a legitimate probe is answered
# throughout, that each attack is refused, counted and logged with its
# reason and source, and that the RSS comes back (generous bounds, scaled
# by QPLAB_TIME_MULTIPLIER).  The full-scale figures are in make bench.
set -eu -o pipefail

build=${1:-build}
mult=${QPLAB_TIME_MULTIPLIER:-1}
# The run takes about 10 s; bounded at 120 s times the multiplier (the
# program's own alarm is the same bound; this one catches a hang in exec).
limit=$(awk -v m="$mult" 'BEGIN { printf "%d", 130 * m }')
timeout "$limit" "$build/bench/hs_attack" --check "$build/qplab"
