# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Harness for the real-mount integration cases, sourced by each case script.
#
# meson sets EXTRESD, EXTRESCTL, SRCDIR, BUILDDIR, PROBE and EXTRES_VERSION.
# A case calls it_setup, writes a config, starts the daemon with
# daemon_start, asserts, and ends with daemon_stop (clean exit required).
# Whatever happens, the EXIT trap unmounts, kills what the case started and
# removes the work dir. Exit 77 (skip) only when /dev/fuse is missing.

set -eu -o pipefail
export LC_ALL=C

IT_CASE=${IT_CASE:-${1:-?}}
WORK=
MNT=
DAEMON_PID=
DAEMON_STATUS=
DAEMON_ERR=
RUN_ERR=
ZOMBIE=

it_log() {
	printf '%s: %s\n' "$IT_CASE" "$*" >&2
}

fail() {
	local f
	printf 'FAIL: %s: %s\n' "$IT_CASE" "$*" >&2
	for f in "$DAEMON_ERR" "$RUN_ERR"; do
		if [[ -n $f && -s $f ]]; then
			printf -- '--- %s (last 40 lines) ---\n' "$f" >&2
			tail -n 40 "$f" >&2
			printf -- '---\n' >&2
		fi
	done
	exit 1
}

it_require_env() {
	local v
	for v in EXTRESD EXTRESCTL SRCDIR BUILDDIR PROBE; do
		[[ -n ${!v:-} ]] || fail "environment variable $v is not set (run through meson test)"
	done
	[[ -x $EXTRESD ]] || fail "EXTRESD=$EXTRESD is not executable"
	[[ -x $PROBE ]] || fail "PROBE=$PROBE is not executable"
}

# The fstype, source and per-mount options of the top mount at $1 (an
# absolute path without spaces), or nothing when none is mounted there.
mount_info() {
	awk -v mp="$1" '
		$5 == mp {
			for (i = 7; i <= NF; i++)
				if ($i == "-")
					break
			top = $(i + 1) " " $(i + 2) " " $6
		}
		END { if (top != "") print top }' /proc/self/mountinfo
}

is_mounted() {
	[[ -n $(mount_info "$1") ]]
}

is_our_mount() {
	local info
	info=$(mount_info "$1")
	[[ $info == "fuse.extresd "* ]]
}

# 0 while PID runs; a zombie counts as gone.
pid_alive() {
	local state
	kill -0 "$1" 2>/dev/null || return 1
	state=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ $state != Z ]]
}

pid_gone() {
	! pid_alive "$1"
}

# Whether PID's command name (/proc/PID/comm) is $2: a child started as
# `cmd &` is bash until it has exec'd.
comm_is() {
	[[ $(cat "/proc/$1/comm" 2>/dev/null) == "$2" ]]
}

# proc_sleeps_in PID PATTERN NR...: whether PID sleeps (state S) in a kernel
# function matching PATTERN (its wait channel) or, where that is hidden, in
# one of the x86-64 system calls NR...
proc_sleeps_in() {
	local pid=$1 pat=$2 nr
	shift 2
	[[ $(proc_state "$pid") == S ]] || return 1
	# shellcheck disable=SC2053 # PATTERN is a glob
	[[ $(cat "/proc/$pid/wchan" 2>/dev/null) == $pat ]] && return 0
	read -r nr _ <"/proc/$pid/syscall" 2>/dev/null || return 1
	[[ $(uname -m) == x86_64 && " $* " == *" $nr "* ]]
}

# Whether a process waits, blocked, for a flock on PATH (/proc/locks shows
# blocked waiters with "->").
flock_waited() {
	local ino
	ino=$(stat -c %i "$1") || return 1
	awk -v ino="$ino" '$2 == "->" && $3 == "FLOCK" && $7 ~ (":" ino "$") { n++ } END { exit !n }' /proc/locks
}

# Whether PID has PATH open.
pid_has_open() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[[ $(readlink "$fd" 2>/dev/null) == "$2" ]] && return 0
	done
	return 1
}

# PIDs whose command line mentions the work dir: a detached daemon, or a
# discovery script the daemon left behind.
pids_in_work() {
	local d pid
	[[ -n $WORK ]] || return 0
	for d in /proc/[0-9]*; do
		pid=${d#/proc/}
		[[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
		if grep -qsaF -- "$WORK" "$d/cmdline"; then
			echo "$pid"
		fi
	done
}

# Mount points under the work dir, deepest first.
mounts_in_work() {
	[[ -n $WORK ]] || return 0
	awk -v w="$WORK/" 'substr($5, 1, length(w)) == w { print $5 }' /proc/self/mountinfo |
		sort -r -u
}

# Undo what the case made, then exit with its status: $1, or else $? as
# found (a wrapper that ran commands since passes the status it saved: a
# `(exit RC)` to set $? would end a wrapper still under set -e).
it_cleanup() {
	local rc=${1:-$?} _ pid pids mp f
	set +e
	trap - EXIT
	for _ in 1 2 3; do
		for mp in $(mounts_in_work); do
			fusermount3 -u "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null
		done
	done
	pids="$DAEMON_PID $(pids_in_work)"
	if [[ -n $WORK ]]; then
		pids+=" $(cat "$WORK"/*.pid 2>/dev/null)"
	fi
	for pid in $pids; do
		pid_alive "$pid" || continue
		kill -TERM "$pid" 2>/dev/null
		poll_until 2 pid_gone "$pid" || kill -KILL "$pid" 2>/dev/null
	done
	for mp in $(mounts_in_work); do
		umount -l "$mp" 2>/dev/null
	done
	# A daemon killed by the case leaves its lock file (a clean exit
	# removes it): remove those of our mount points.
	if [[ -n $WORK ]]; then
		for f in "$(runlock_dir)"/*.lock; do
			[[ -f $f && $(head -n 1 "$f" 2>/dev/null) == "$WORK"/* ]] && rm -f "$f"
		done
	fi
	if [[ -n $WORK && -d $WORK ]]; then
		# Never descend into a mount that would not go away.
		rm -rf --one-file-system "$WORK"
	fi
	exit "$rc"
}

# The directory of extresd's lock files for the user running the case.
runlock_dir() {
	if [[ $(id -u) == 0 ]]; then
		echo /run/extresd
	else
		echo "${XDG_RUNTIME_DIR:-}/extresd"
	fi
}

# The lock file of the mount point $1 (the file holds the mount point's
# path), or nothing while there is none.
runlock_file() {
	local f
	for f in "$(runlock_dir)"/*.lock; do
		if [[ -f $f && $(head -n 1 "$f" 2>/dev/null) == "$1" ]]; then
			echo "$f"
		fi
	done
}

# Make the case's work dir with an empty mount point; skip without FUSE.
it_setup() {
	if [[ ! -c /dev/fuse ]]; then
		echo "SKIP: $IT_CASE: /dev/fuse is missing, cannot mount"
		exit 77
	fi
	it_setup_nofuse
}

# The same for cases that never mount.
it_setup_nofuse() {
	it_require_env
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/extres-it.XXXXXX")
	WORK=$(realpath "$WORK")
	MNT=$WORK/mnt
	mkdir "$MNT"
	DAEMON_ERR=$WORK/daemon.err
	RUN_ERR=$WORK/run.err
	trap it_cleanup EXIT
}

# Start `extresd -f ARGS...` in the background (stderr to $DAEMON_ERR) and
# wait for the mount at $MNT. SIGINT is reset to its default: bash starts
# background jobs with it ignored, and libfuse then keeps it ignored.
daemon_start() {
	daemon_spawn -f "$@"
	wait_mounted "$MNT"
}

# Same without -f, for -d (which implies it) or other spellings.
daemon_spawn() {
	: >"$DAEMON_ERR"
	env --default-signal=INT,QUIT "$EXTRESD" "$@" >"$WORK/daemon.out" 2>"$DAEMON_ERR" &
	DAEMON_PID=$!
	DAEMON_STATUS=
}

# Whether $1 is an extresd mount; fail at once if the daemon died first.
daemon_mounted() {
	is_our_mount "$1" && return 0
	if pid_gone "$DAEMON_PID"; then
		daemon_reap
		fail "extresd exited with status $DAEMON_STATUS before mounting $1"
	fi
	return 1
}

# Wait (10 s at most) until $1 is an extresd mount.
wait_mounted() {
	local mp=$1
	poll_until 10 daemon_mounted "$mp" && return 0
	if is_mounted "$mp"; then
		fail "$mp is mounted as '$(mount_info "$mp")', not fuse.extresd"
	fi
	fail "no mount at $mp after 10 s"
}

# Wait (10 s at most) for our daemon to exit and keep its status.
daemon_reap() {
	poll_until 10 pid_gone "$DAEMON_PID" || fail "extresd (pid $DAEMON_PID) still runs after 10 s"
	DAEMON_STATUS=0
	wait "$DAEMON_PID" || DAEMON_STATUS=$?
}

# Fail when daemon stderr says "error". libfuse's debug log (-d) reports
# failed requests as "unique: N, error: -2 (...)": those are answers (an
# ENOENT the case asked for), not daemon errors.
check_daemon_stderr() {
	local bad
	bad=$(grep -i 'error' "$DAEMON_ERR" | grep -Ev '^(extresd: )? *unique: [0-9]+, error: ' || true)
	[[ -z $bad ]] || fail "unexpected error in daemon stderr: $bad"
}

# Stop the daemon with a signal (default TERM); require exit status 0, the
# mount gone and no unexpected error on stderr.
# shellcheck disable=SC2120 # the signal is optional
daemon_stop() {
	local sig=${1:-TERM}
	kill "-$sig" "$DAEMON_PID" || fail "cannot send SIG$sig to extresd ($DAEMON_PID)"
	daemon_expect_exit 0 "after SIG$sig"
}

# daemon_stop for cases that made reloads fail: the daemon's stderr must
# hold exactly the "reload failed" lines given (and no other error).
daemon_stop_expecting() {
	local want=$1 got bad
	kill -TERM "$DAEMON_PID" || fail "cannot send SIGTERM to extresd ($DAEMON_PID)"
	daemon_reap
	[[ $DAEMON_STATUS == 0 ]] || fail "extresd exited with status $DAEMON_STATUS after SIGTERM, wanted 0"
	! is_mounted "$MNT" || fail "$MNT still mounted after SIGTERM"
	got=$(grep '^extresd: error: ' "$DAEMON_ERR" || true)
	assert_eq "$want" "$got" "errors on the daemon's stderr"
	bad=$(grep -i 'error' "$DAEMON_ERR" | grep -v '^extresd: error: ' || true)
	[[ -z $bad ]] || fail "unexpected error in daemon stderr: $bad"
}

# Wait for the daemon to exit; require status $1 and no mount left.
daemon_expect_exit() {
	local want=$1 why=$2
	daemon_reap
	[[ $DAEMON_STATUS == "$want" ]] || fail "extresd exited with status $DAEMON_STATUS $why, wanted $want"
	! is_mounted "$MNT" || fail "$MNT still mounted ($(mount_info "$MNT")) $why"
	check_daemon_stderr
}

# Whether extresd is a sanitizer build: those reserve and touch memory of
# their own (ASan keeps freed blocks in quarantine), so no bound on its
# memory means anything. ldd's output is read whole: `grep -q` would quit
# early, and under pipefail ldd's SIGPIPE would hide the match.
it_sanitized() {
	local libs
	libs=$(ldd "$EXTRESD" 2>/dev/null || true)
	[[ $libs == *libasan* || $libs == *libubsan* || $libs == *libtsan* ]]
}

# Run extresd ARGS... to completion, expecting it to fail: sets RUN_STATUS,
# RUN_SECONDS (wall time, 0.01 s resolution) and leaves stderr in $RUN_ERR.
daemon_run_fail() {
	local t0 t1
	: >"$RUN_ERR"
	t0=$(date +%s%N)
	RUN_STATUS=0
	timeout 10 env --default-signal=INT,QUIT "$EXTRESD" "$@" \
		>"$WORK/run.out" 2>"$RUN_ERR" </dev/null || RUN_STATUS=$?
	t1=$(date +%s%N)
	# shellcheck disable=SC2034 # read by the case scripts
	RUN_SECONDS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	[[ $RUN_STATUS != 124 ]] || fail "extresd $* did not return within 10 s"
}

# Assert that daemon_run_fail saw a start-up failure: status 1,
# "extresd: error: " on stderr, every argument found in the error, and no
# mount at $MNT.
assert_startup_error() {
	local needle msg
	[[ $RUN_STATUS == 1 ]] || fail "extresd exited with status $RUN_STATUS, wanted 1 (start-up error)"
	msg=$(grep '^extresd: error: ' "$RUN_ERR" || true)
	[[ -n $msg ]] || fail "no 'extresd: error: ' line on stderr"
	for needle in "$@"; do
		[[ $msg == *"$needle"* ]] || fail "start-up error does not mention '$needle': $msg"
	done
	# Anything else that says error (a sanitizer's report, say) is a bug.
	msg=$(grep -i 'error' "$RUN_ERR" | grep -v '^extresd: error: ' || true)
	[[ -z $msg ]] || fail "unexpected error on stderr besides the start-up error: $msg"
	! is_mounted "$MNT" || fail "a mount was left at $MNT: $(mount_info "$MNT")"
}

assert_eq() {
	local want=$1 got=$2 what=$3
	[[ $got == "$want" ]] || fail "$what: wanted
$want
got
$got"
}

assert_contains() {
	local hay=$1 needle=$2 what=$3
	[[ $hay == *"$needle"* ]] || fail "$what: '$needle' not found in: $hay"
}

# The exact bytes of a file, trailing newlines included.
file_bytes() {
	local s
	s=$(cat -- "$1"; printf x) || return 1
	printf '%s' "${s%x}"
}

# Whether FILE holds TEXT (trailing newlines aside, as $(cat) reads it).
content_is() {
	[[ $(cat -- "$1" 2>/dev/null) == "$2" ]]
}

assert_file() {
	local path=$1 want=$2 got
	got=$(file_bytes "$path"; printf x) || fail "cannot read $path"
	got=${got%x}
	[[ $got == "$want" ]] || fail "content of $path: wanted $(printf '%q' "$want"), got $(printf '%q' "$got")"
}

# assert_probe EXPECTED OP ARGS...: the probe's output must be EXPECTED.
assert_probe() {
	local want=$1 got
	shift
	got=$("$PROBE" "$@" 2>&1) || fail "probe $* failed: $got"
	[[ $got == "$want" ]] || fail "probe $*: wanted '$want', got '$got'"
}

# extres records `KEY PID<tab>STARTTIME`: a tab, so that Flink's
# `sed -i "/INDEX /d"` can never match after the key.
T=$'\t'
# std_uuid N: the uuid word a coordination-file line of write_std_config's
# device N carries.
std_uuid() { printf '\tuuid=GPU-0f4c6d3e-1a2b-4c5d-8e9f-%012d' "$1"; }

# Field 22 (start time) of /proc/PID/stat, as extres records it.
proc_starttime() {
	local stat rest
	stat=$(cat "/proc/$1/stat") || return 1
	rest=${stat##*) }
	# shellcheck disable=SC2086
	set -- $rest
	echo "${20}"
}

# The state letter of PID (R, S, Z, ...), or nothing once it is gone.
proc_state() {
	awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null || true
}

# A PID that has just exited and been reaped.
dead_pid() {
	local pid
	sleep 0 &
	pid=$!
	wait "$pid" || true
	echo "$pid"
}

# Set ZOMBIE to the PID of a process that nobody reaps: the child of a shell
# that has exec'd into sleep. The child exits only after that exec (it waits
# for a go file), so the shell can never have reaped it first. The sleep's PID
# goes to a .pid file in $WORK, which the cleanup kills.
make_zombie() {
	local maker tag=zombie.$RANDOM
	# Not on our stdout: a caller's $(...) or meson would wait for it.
	bash -c '(while [[ ! -e $2 ]]; do sleep 0.01; done) & echo $! >"$1"; exec sleep 300' \
		zombie-maker "$WORK/$tag" "$WORK/$tag.go" </dev/null >/dev/null 2>&1 &
	maker=$!
	echo "$maker" >"$WORK/$tag.pid"
	wait_until 20 "the zombie maker ($maker) exec'ing sleep" zombie_maker_ready "$maker" "$WORK/$tag"
	ZOMBIE=$(cat "$WORK/$tag")
	touch "$WORK/$tag.go"
	wait_until 20 "process $ZOMBIE a zombie" proc_state_is "$ZOMBIE" Z
}

zombie_maker_ready() {
	[[ $(cat "/proc/$1/comm" 2>/dev/null) == sleep && -s $2 ]]
}

proc_state_is() {
	[[ $(proc_state "$1") == "$2" ]]
}

# Lines of a coordination file; nothing when it does not exist.
coord_lines() {
	[[ -e $1 ]] || return 0
	cat -- "$1"
}

# ---------------------------------------------------------------------------
# Shared configs

# The standard tree: gpu (2 of 3 static devices) and nic (1 of 1), flat keys.
# The coordination file, when wanted, is $WORK/gpu.coord.
write_std_config() {
	local path=$1 coord=${2:-}
	{
		cat <<-'EOF'
		# Flat keys, as in a Flink flink-conf.yaml.
		external-resources: gpu;nic
		external-resource.gpu.amount: 2
		external-resource.gpu.driver: static
		external-resource.gpu.param.devices:
		  - index: "0"
		    uuid: GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000000
		    name: Test GPU
		    memory.total: 16384 MiB
		  - index: "1"
		    uuid: GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001
		    name: Test GPU
		    memory.total: 32768 MiB
		  - index: "2"
		    uuid: GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000002
		    name: Test GPU
		    memory.total: 8192 MiB
		external-resource.nic.amount: 1
		external-resource.nic.driver: static
		external-resource.nic.param.devices:
		  - index: "0"
		    name: mlx5_0
		    link_layer: InfiniBand
		EOF
		if [[ -n $coord ]]; then
			printf 'external-resource.gpu.coordination-file: %s\n' "$coord"
		fi
	} >"$path"
}

# The same configuration with nested keys, as in a Flink 1.19+ config.yaml.
write_std_config_nested() {
	cat >"$1" <<-'EOF'
	external-resources: gpu;nic
	external-resource:
	  gpu:
	    amount: 2
	    driver: static
	    param:
	      devices:
	        - index: "0"
	          uuid: GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000000
	          name: Test GPU
	          memory.total: 16384 MiB
	        - index: "1"
	          uuid: GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001
	          name: Test GPU
	          memory.total: 32768 MiB
	        - index: "2"
	          uuid: GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000002
	          name: Test GPU
	          memory.total: 8192 MiB
	  nic:
	    amount: 1
	    driver: static
	    param:
	      devices:
	        - index: "0"
	          name: mlx5_0
	          link_layer: InfiniBand
	EOF
}

# Every path under the mount with type, mode and (for files) size, sorted;
# hidden names (the daemon's .meta) are left out, as `ls` leaves them out.
tree_listing() {
	(cd "$1" && find . -mindepth 1 -name '.*' -prune -o \( -type d -printf '%y %m %p\n' \) -o -printf '%y %m %s %p\n') | sort
}

# The listing and contents the standard config must produce.
STD_LISTING='d 555 ./gpu
d 555 ./gpu/0
d 555 ./gpu/1
d 555 ./nic
d 555 ./nic/0
f 444 10 ./gpu/0/memory.total
f 444 10 ./gpu/1/memory.total
f 444 2 ./gpu/0/index
f 444 2 ./gpu/1/index
f 444 2 ./nic/0/index
f 444 41 ./gpu/0/uuid
f 444 41 ./gpu/1/uuid
f 444 7 ./nic/0/name
f 444 9 ./gpu/0/name
f 444 9 ./gpu/1/name
f 444 11 ./nic/0/link_layer
l 777 12 ./self'
STD_LISTING=$(sort <<<"$STD_LISTING")

# Every property file of the standard tree as "path=value" (value without
# its newline), sorted: a second, content-based fingerprint of the tree.
tree_contents() {
	local f
	(cd "$1" && find . -mindepth 1 -name '.*' -prune -o -type f -print | sort) | while read -r f; do
		printf '%s=%s\n' "$f" "$(cat "$1/$f")"
	done
}

# shellcheck disable=SC2034 # read by the case scripts
STD_CONTENTS='./gpu/0/index=0
./gpu/0/memory.total=16384 MiB
./gpu/0/name=Test GPU
./gpu/0/uuid=GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000000
./gpu/1/index=1
./gpu/1/memory.total=32768 MiB
./gpu/1/name=Test GPU
./gpu/1/uuid=GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001
./nic/0/index=0
./nic/0/link_layer=InfiniBand
./nic/0/name=mlx5_0'

# One field of .meta/status ("generation", "reloads", "last-reload", ...).
status_field() {
	local key=$1 line
	while IFS= read -r line; do
		if [[ $line == "$key "* ]]; then
			printf '%s\n' "${line#"$key "}"
			return 0
		fi
	done <"$MNT/.meta/status"
	fail "no '$key' line in $MNT/.meta/status: $(cat "$MNT/.meta/status")"
}

# kill -HUP, then wait (20 s at most) until .meta/status counts the attempt.
reload_hup() {
	local before
	before=$(status_field reloads)
	kill -HUP "$DAEMON_PID" || fail "cannot send SIGHUP to extresd ($DAEMON_PID)"
	wait_until 20 "a reload counted in $MNT/.meta/status after SIGHUP" reload_counted "$before"
}

# Whether .meta/status counts more reloads than $1; fail if the daemon died.
reload_counted() {
	[[ $(status_field reloads) != "$1" ]] && return 0
	pid_alive "$DAEMON_PID" || fail "extresd died after SIGHUP"
	return 1
}

# poll_until SECONDS CMD...: run CMD every 10 ms until it succeeds (0), or
# give up after SECONDS (1). CMD runs in this shell: it may set variables
# or fail at once. The naps are read timeouts on a pipe that nobody
# writes, not a sleep process per look: a case that waits costs next to
# no CPU of a loaded machine.
poll_until() {
	local secs=$1 i nap r=1
	shift
	exec {nap}<> <(:)
	for ((i = 0; i < secs * 100; i++)); do
		if "$@"; then
			r=0
			break
		fi
		read -r -t 0.01 -u "$nap" _ || true
	done
	exec {nap}>&-
	return "$r"
}

# wait_until SECONDS WHAT CMD...: poll_until, failing the case after
# SECONDS (a bound that only catches a hang). The one way a case waits for
# a condition.
wait_until() {
	local secs=$1 what=$2
	shift 2
	poll_until "$secs" "$@" || fail "$what: not within $secs s"
}

# Dispatch: run case_$1 of the sourcing script. `--list` prints its cases,
# one a line: meson registers them from there (tests/integration/meson.build).
it_main() {
	local name=${1:-} f
	if [[ $name == --list ]]; then
		for f in $(compgen -A function case_); do
			f=${f#case_}
			echo "${f//_/-}"
		done
		exit 0
	fi
	[[ -n $name ]] || { echo "usage: $0 CASE | --list" >&2; exit 2; }
	declare -F "case_${name//-/_}" >/dev/null || { echo "$0: no case '$name'" >&2; exit 2; }
	IT_CASE=$name
	"case_${name//-/_}"
	echo "PASS: $IT_CASE"
}
