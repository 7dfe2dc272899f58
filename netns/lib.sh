# lib.sh -- helpers shared by the netns/ scripts (sourced, never run).
#
# Conventions (like the kernel's selftests/net/lib.sh): every script runs
# with `set -eu -o pipefail`; every lab object gets a name with a unique
# suffix (reg_new) and is registered in the undo registry before it is
# created (`defer`, below); one EXIT trap unwinds the registry in
# reverse; waits poll against a deadline (`wait_until`).
# shellcheck shell=bash

# Under TCG every fork costs 0.05-0.1 s and every exec 0.1-0.3 s, and the
# runner starts topo for every build, fault and teardown: paths are worked
# out with string operations, a subshell only for an odd path.
# canon_dir DIR: DIR as an absolute path without ./.. (into REPLY).
canon_dir() {
	case $1 in
	/*) REPLY=$1 ;;
	*) REPLY=$PWD/$1 ;;
	esac
	REPLY=${REPLY%/}
	case $REPLY/ in
	*/./* | */../* | *//*) REPLY=$(cd "$REPLY" && pwd) ;;
	esac
}
case ${BASH_SOURCE[0]} in
*/*) canon_dir "${BASH_SOURCE[0]%/*}" ;;
*) canon_dir . ;;
esac
QPLAB_LIBDIR=$REPLY
# The checkout (netns/..) or the install prefix (libexec/qplab/../..).
if [ -z "${QPLAB_ROOT:-}" ]; then
	if [ -e "$QPLAB_LIBDIR/../Makefile" ] || [ -d "$QPLAB_LIBDIR/../.git" ] || [ -e "$QPLAB_LIBDIR/../.git" ]; then
		QPLAB_ROOT=${QPLAB_LIBDIR%/*}
	else
		QPLAB_ROOT=${QPLAB_LIBDIR%/*}
		QPLAB_ROOT=${QPLAB_ROOT%/*}
	fi
	QPLAB_ROOT=${QPLAB_ROOT:-/}
fi
QPLAB_CACHE=${QPLAB_CACHE:-/var/cache/qplab}
QPLAB_KERNELS=$QPLAB_CACHE/kernels
# The lab's constants (addresses, tables, host limit, name prefix, state
# directory) are defined once, in lab.conf; the C side gets them from it too.
# shellcheck source=netns/lab.conf
. "$QPLAB_LIBDIR/lab.conf"
# KSFT_SKIP (the kernel selftests' code): a test that cannot run here.
KSFT_SKIP=4

PROG=${PROG:-${0##*/}}

die() { echo "$PROG: error: $*" >&2; exit 1; }
warn() { echo "$PROG: $*" >&2; }
usage_error() { echo "$PROG: $*" >&2; echo "Try '$PROG --help'." >&2; exit 2; }

# require_cmd CMD...: a missing command stops the script with KSFT_SKIP
# (4) and the reason: what cannot run here is a skip, not a failure.
require_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null 2>&1 || {
			echo "$PROG: SKIP: '$c' not found; install it (scripts/deps.sh installs every dependency)" >&2
			exit $KSFT_SKIP
		}
	done
}

# ---- the undo registry ---------------------------------------------------------
# One mechanism undoes whatever the lab creates. A registry is the file
# $QPLAB_STATE_DIR/HANDLE.undo, so it outlives the process that wrote it
# (topo up, then topo down) and a crash. Its lines (docs/lab-backends.md):
#   owner PID / pid PID   who ran the creating script, and the script
#   obj KIND NAME         an object that will exist (netns, link, rxe: by
#                         name; table4/table6 NUMBER; localrule4/6 PREF)
#   undo CMD...           undoes a create; written BEFORE the create
#   done CMD...           that undo has been run already (a fault)
#   commit                the creates above it completed
# `defer CMD...` writes an undo line, `reg_obj` an obj line, `reg_commit`
# the mark after the creates succeeded; `reg_unwind` runs the undo lines
# in reverse and removes the file. An undo that fails although its create
# completed is appended, with the tool's message, to REG_LOG (kept:
# nothing removes it) and makes reg_unwind fail; one whose create never
# completed (a crash or an error between the registration and the act) may
# fail without harm. Without a registry (no reg_new/reg_attach: netns/vm,
# which makes no lab object) defer keeps its commands in memory for the
# EXIT trap.
# shellcheck disable=SC2034 # REG_HANDLE is read by the scripts
REG_FILE="" REG_HANDLE="" REG_LOG=$QPLAB_STATE_DIR/undo-failures.log
REG_MEM=() REG_OBJS=() REG_FAILED=0 REG_CUR=""
REG_ERR=${TMPDIR:-/tmp}/qplab-undo-err.$$
# valid_handle H: a registry handle (a topology's name): 1-10 of [a-z0-9].
valid_handle() { [[ $1 =~ ^[a-z0-9]{1,10}$ ]]; }
# names_taken PREFIX: a namespace, link or rxe device starting with PREFIX
# exists (globs only: no process).
names_taken() {
	local f
	for f in /run/netns/"$1"* /sys/class/net/"$1"* /sys/class/infiniband/"$1"*; do
		[ ! -e "$f" ] || return 0
	done
	return 1
}
# reg_new BASE: a new registry, HANDLE = BASE + 3 random characters of
# REG_SUFFIX_CHARS (BASE is 1-7 of [a-z0-9]), reserved by creating
# HANDLE.undo exclusively; a handle whose names (ql<HANDLE>-...) exist
# already is never taken. Sets REG_HANDLE and REG_FILE.
REG_SUFFIX_CHARS=abcdefghijklmnopqrstuvwxyz0123456789
reg_new() {
	local chars=$REG_SUFFIX_CHARS s i try f r
	[ -d "$QPLAB_STATE_DIR" ] || mkdir -p "$QPLAB_STATE_DIR"
	for ((try = 0; try < 50; try++)); do
		s=""
		for i in 1 2 3; do
			r=${SRANDOM:-$RANDOM}
			s=$s${chars:r % ${#chars}:1}
		done
		f=$QPLAB_STATE_DIR/$1$s.undo
		! names_taken "$QPLAB_PREFIX$1$s-" || continue
		set -C
		if { printf '# qplab undo registry %s\nowner %s\npid %s\n' "$1$s" "$PPID" "$$" >"$f"; } 2>/dev/null; then
			set +C
			REG_HANDLE=$1$s REG_FILE=$f
			return 0
		fi
		set +C
	done
	die "no free name for '$1' in $QPLAB_STATE_DIR after $try tries"
}
# reg_attach HANDLE: append to HANDLE's existing registry (topo fault).
reg_attach() {
	[ -e "$QPLAB_STATE_DIR/$1.undo" ] || return 1
	# shellcheck disable=SC2034
	REG_HANDLE=$1 REG_FILE=$QPLAB_STATE_DIR/$1.undo
}
# defer CMD...: register the command that undoes what comes next.
defer() {
	local line
	printf -v line '%q ' "$@"
	if [ -n "$REG_FILE" ]; then
		printf 'undo %s\n' "${line% }" >>"$REG_FILE" || die "cannot write $REG_FILE"
	else
		REG_MEM+=("${line% }")
	fi
}
reg_obj() { # KIND NAME: what the creates that follow will make
	[ -z "$REG_FILE" ] || printf 'obj %s %s\n' "$1" "$2" >>"$REG_FILE" || die "cannot write $REG_FILE"
}
reg_commit() { # the creates registered so far completed
	[ -z "$REG_FILE" ] || echo commit >>"$REG_FILE" || die "cannot write $REG_FILE"
}
# reg_undo_now CMD...: run a registered undo now (a fault deleting a lab
# object) and mark it done, so unwinding does not run it again.
reg_undo_now() {
	local line
	"$@" || return
	printf -v line '%q ' "$@"
	[ -z "$REG_FILE" ] || printf 'done %s\n' "${line% }" >>"$REG_FILE" || die "cannot write $REG_FILE"
}
# reg_read FILE: its obj lines into REG_OBJS ("KIND NAME"); its undo lines
# that were not done into REG_UNDO, REG_COMMITTED[i] 1 when a commit
# follows undo i.
reg_read() {
	local -a lines
	local -A gone=()
	local i last=-1 l
	REG_OBJS=() REG_UNDO=() REG_COMMITTED=()
	[ -e "$1" ] || return 0
	mapfile -t lines <"$1"
	for i in "${!lines[@]}"; do
		case ${lines[i]} in
		commit) last=$i ;;
		"done "*) l=${lines[i]#done }; gone[$l]=$((${gone[$l]:-0} + 1)) ;;
		esac
	done
	for i in "${!lines[@]}"; do
		case ${lines[i]} in
		"obj "*) REG_OBJS+=("${lines[i]#obj }") ;;
		"undo "*)
			l=${lines[i]#undo }
			if [ "${gone[$l]:-0}" -gt 0 ]; then
				gone[$l]=$((gone[$l] - 1))
				continue
			fi
			REG_UNDO+=("$l")
			REG_COMMITTED+=($((i < last)))
			;;
		esac
	done
}
# reg_failed I MESSAGE: undo I failed; logged when its create completed.
reg_failed() {
	[ "${REG_COMMITTED[$1]:-1}" = 1 ] || return 0
	REG_FAILED=$((REG_FAILED + 1))
	if [ -z "$REG_CUR" ]; then
		warn "undo failed: ${REG_UNDO[$1]}: $2"
		return 0
	fi
	printf '%(%F %T)T %s: undo failed: %s: %s\n' -1 "$REG_CUR" "${REG_UNDO[$1]}" "$2" >>"$REG_LOG" ||
		warn "undo failed: ${REG_UNDO[$1]}: $2 (and $REG_LOG cannot be written)"
}
# reg_batch KEY: run the queued lines (BATCH, their indexes BATCH_IDX) as
# one `ip [OPTS] -force -batch -` or `rdma -f -b -` (under TCG each process
# costs 0.1-0.3 s); a line's failure is found in the tool's
# "Command failed -:N" and the messages before it.
reg_batch() {
	local key=$1 text="" i rc=0 msg="" line err=$REG_ERR
	local -a errlines words
	[ ${#BATCH[@]} -gt 0 ] || return 0
	for i in "${BATCH[@]}"; do text+=$i$'\n'; done
	read -r -a words <<<"$key"
	if [ "${words[0]}" = rdma ]; then
		rdma -f -b - <<<"$text" >/dev/null 2>"$err" || rc=$?
	else
		"${words[@]}" -force -batch - <<<"$text" >/dev/null 2>"$err" || rc=$?
	fi
	if [ $rc != 0 ]; then
		mapfile -t errlines <"$err"
		for line in "${errlines[@]}"; do
			if [[ $line =~ ^Command\ failed\ -:([0-9]+)$ ]]; then
				i=${BASH_REMATCH[1]}
				reg_failed "${BATCH_IDX[i - 1]}" "${msg:-exit $rc}"
				msg="" rc=0
			else
				msg=${msg:+$msg; }$line
			fi
		done
		# A failure the tool did not attribute to a line: the batch's.
		[ $rc = 0 ] || reg_failed "${BATCH_IDX[0]}" "${msg:-exit $rc} (batch: ${BATCH[*]})"
	fi
	rm -f "$err"
	BATCH=() BATCH_IDX=()
}
# reg_unwind [FILE]: run the registry's undo lines (FILE, default the open
# registry; none open: the in-memory ones) in reverse, never stopping at a
# failure, consecutive `ip` lines with the same global options in one
# batch, consecutive `rdma` lines in another; then remove FILE. REG_OBJS
# keeps what it named. Fails when an undo whose create completed failed,
# saying how many and where they are logged.
reg_unwind() {
	local f=${1:-$REG_FILE} i key k err=$REG_ERR msg
	local -a words errlines rm_args=()
	BATCH=() BATCH_IDX=() REG_FAILED=0 REG_CUR=${f##*/}
	REG_CUR=${REG_CUR%.undo}
	if [ -n "$f" ]; then
		reg_read "$f"
	else
		REG_OBJS=() REG_UNDO=("${REG_MEM[@]}") REG_COMMITTED=()
		REG_MEM=()
	fi
	key=""
	for ((i = ${#REG_UNDO[@]} - 1; i >= 0; i--)); do
		eval "words=(${REG_UNDO[i]})"
		k=""
		case ${words[0]} in
		ip)
			k=ip
			set -- "${words[@]:1}"
			while [ $# -gt 0 ]; do
				case $1 in
				-n) k="$k -n $2"; shift 2 ;;
				-4 | -6) k="$k $1"; shift ;;
				*) break ;;
				esac
			done
			;;
		rdma) k=rdma; set -- "${words[@]:1}" ;;
		esac
		[ "$k" = "$key" ] || reg_batch "$key"
		key=$k
		if [ -n "$k" ]; then
			BATCH+=("$*") BATCH_IDX+=("$i")
		elif [ "${words[0]}" = rm ] && [ "${words[1]:-}" = -f ]; then
			# Files (the script's own state): one rm with the registry's.
			rm_args+=("${words[@]:2}")
		elif [ -n "$f" ]; then
			"${words[@]}" >/dev/null 2>"$err" || {
				mapfile -t errlines <"$err"
				msg="${errlines[*]}"
				reg_failed "$i" "${msg:-exit status non-zero}"
			}
		else
			"${words[@]}" || reg_failed "$i" "exit status non-zero"
		fi
	done
	reg_batch "$key"
	if [ -n "$f" ]; then
		rm -f "${rm_args[@]}" "$f" "$err"
	elif [ ${#rm_args[@]} -gt 0 ]; then
		rm -f "${rm_args[@]}"
	fi
	[ "$f" != "$REG_FILE" ] || REG_FILE=""
	[ $REG_FAILED != 0 ] || return 0
	echo "$PROG: error: $REG_FAILED undo command(s) failed${f:+ (registry ${f##*/}); each, with its error, is in $REG_LOG}" >&2
	return 1
}
# install_exit_trap: one EXIT trap unwinds the registry (with
# REG_ON_FAILURE=1 only when the script exits non-zero: topo up keeps what
# it built). INT and TERM exit through it.
REG_ON_FAILURE=0
install_exit_trap() {
	trap reg_exit_trap EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}
reg_exit_trap() {
	local rc=$?
	trap - EXIT
	if [ "$rc" != 0 ] || [ $REG_ON_FAILURE = 0 ]; then
		reg_unwind || [ "$rc" != 0 ] || rc=1
	fi
	exit "$rc"
}

# Under TCG every exec costs 0.1-0.3 s, so the helpers below use bash
# builtins only: time from $EPOCHREALTIME, naps from `read -t` on a fifo
# nobody writes to.
now_ms() { local t=${EPOCHREALTIME/[.,]/}; echo $((t / 1000)); }
QPLAB_NAPFD=
nap() { # seconds (fractions allowed)
	if [ -z "$QPLAB_NAPFD" ]; then
		local f
		f=$(mktemp -u "${TMPDIR:-/tmp}/qplab-nap.XXXXXX")
		if ! { mkfifo "$f" && exec {QPLAB_NAPFD}<>"$f"; }; then
			sleep "$1"
			return 0
		fi
		rm -f "$f"
	fi
	read -r -t "$1" -u "$QPLAB_NAPFD" _ || true
}

# QPLAB_TIME_MULTIPLIER rounded up to a whole number: 1 to 100, as qplab
# accepts it (a decimal: digits, at most one '.').  check_time_mult refuses
# anything else as a usage error; time_mult assumes it was checked.
check_time_mult() {
	local m=${QPLAB_TIME_MULTIPLIER-1} w f
	case $m in
	'' | *[!0-9.]* | *.*.* | . | .*) usage_error "QPLAB_TIME_MULTIPLIER=$m is not a number (accepted: 1 to 100)" ;;
	esac
	w=${m%%.*} f=${m#"$w"}
	f=${f#.}
	w=$((10#$w))
	if [ "$w" -lt 1 ] || [ "$w" -gt 100 ] || { [ "$w" = 100 ] && [ -n "${f//0/}" ]; }; then
		usage_error "QPLAB_TIME_MULTIPLIER=$m is out of range (accepted: 1 to 100)"
	fi
}
time_mult() {
	local m=${QPLAB_TIME_MULTIPLIER:-1} w
	w=${m%%.*}
	case $w in '' | *[!0-9]*) w=1 ;; esac
	w=$((10#$w))
	[ "$m" = "$w" ] || w=$((w + 1))
	[ "$w" -ge 1 ] || w=1
	echo "$w"
}

# wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds or the
# deadline (multiplied by QPLAB_TIME_MULTIPLIER, an integer) passes.
wait_until() {
	local secs=$1 end t
	shift
	t=${EPOCHREALTIME/[.,]/}
	end=$((t / 1000 + secs * $(time_mult) * 1000))
	while :; do
		"$@" && return 0
		t=${EPOCHREALTIME/[.,]/}
		[ $((t / 1000)) -lt "$end" ] || return 1
		nap 0.1
	done
}

# Kernels the lab can boot: "RELEASE KERNEL-IMAGE MODULE-BASE" lines, where
# MODULE-BASE/lib/modules/RELEASE is the module tree. Looks in the cache of
# scripts/lab-kernels.sh, then at the host's /boot + /lib/modules.
# QPLAB_KERNEL_DIRS (colon-separated) adds more caches; QPLAB_BOOT_DIR
# stands for /boot (the self-tests point it at an empty directory).
kernel_dirs() { # the caches, one per line
	local d IFS=:
	for d in ${QPLAB_KERNEL_DIRS:+$QPLAB_KERNEL_DIRS:}$QPLAB_KERNELS; do echo "$d"; done
}
# Where list_kernels looks, one place per line (for the "looked at" of an
# error: list_kernels runs in a subshell, so it cannot leave a list behind).
kernel_places() {
	local d
	while IFS= read -r d; do echo "$d/<release>/{vmlinuz,lib/modules/<release>}"; done < <(kernel_dirs)
	echo "${QPLAB_BOOT_DIR:-/boot}/vmlinuz-<release> + /lib/modules/<release>"
}
list_kernels() {
	local d r boot=${QPLAB_BOOT_DIR:-/boot}
	while IFS= read -r d; do
		[ -d "$d" ] || continue
		for r in "$d"/*/; do
			r=$(basename "$r")
			[ -s "$d/$r/vmlinuz" ] && [ -s "$d/$r/lib/modules/$r/modules.dep" ] &&
				echo "$r $d/$r/vmlinuz $d/$r"
		done
	done < <(kernel_dirs)
	for r in "$boot"/vmlinuz-*; do
		[ -e "$r" ] || continue
		r=${r#"$boot"/vmlinuz-}
		[ -s "/lib/modules/$r/modules.dep" ] && echo "$r $boot/vmlinuz-$r /"
	done
	return 0
}

# has_module BASE RELEASE MODULE: the kernel has MODULE (module or built in).
has_module() {
	modprobe -d "$1" -S "$2" --show-depends "$3" >/dev/null 2>&1
}

# match_release RELEASE PATTERN: PATTERN is the full release or a prefix that
# ends on a component boundary ("6.1" matches 6.1.0-57-amd64, not 6.12.x).
match_release() {
	case $1 in
	"$2") return 0 ;;
	"$2".* | "$2"-* | "$2"+* | "$2"~*) return 0 ;;
	esac
	return 1
}
