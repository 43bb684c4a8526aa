#!/bin/bash
# SPDX-License-Identifier: MIT
#
# extresctl run on a shared server (issue 21): a waiter sleeps; a stopped
# waiter holds up no one and no lock; a queue another user made first
# stops no run that does not wait; a line in the queue or the
# coordination file counts as a waiter or a lease only while the process
# it names proves it. Group GID (4242) shares the files; MEMBER is in it,
# NOBODY is not (numeric ids through setpriv: no user database needed).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lease_lib.sh
source "$(dirname "$0")/lease_lib.sh"

GID=4242
MEMBER=4244
NOBODY=65534
AS_MEMBER=(setpriv --reuid="$MEMBER" --regid="$MEMBER" --groups="$GID" --)
AS_NOBODY=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups --)

# shared_config N [FILE [EXTRA...]]: a pool of N static gpus 0..N-1 shared
# through FILE (default $WORK/gpu.coord); EXTRA lines appended.
shared_config() {
	local n=$1
	COORD=${2:-$WORK/gpu.coord}
	shift $(($# < 2 ? $# : 2))
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.pool: true' \
			'external-resource.gpu.driver: static' \
			"external-resource.gpu.param.indexes: $(seq -s, 0 $((n - 1)))" \
			"external-resource.gpu.coordination-file: $COORD"
		printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
	QUEUE=$COORD.queue
}

# The files as extresctl(8) says, in a sticky world-writable directory as
# Flink's default /var/tmp: the coordination file and its queue made by
# root for the group. The work dir is opened to the other users.
shared_layout() {
	chmod 0755 "$WORK"
	mkdir -m 1777 "$WORK/tmp"
	shared_config "$1" "$WORK/tmp/gpu"
	install -m 0660 -o root -g "$GID" /dev/null "$COORD"
	install -m 0660 -o root -g "$GID" /dev/null "$QUEUE"
}

is_stopped() { [[ $(proc_state "$1") == [Tt] ]]; }

# "TICKS READS" of PID: utime + stime in clock ticks, and its read
# system calls (/proc/PID/io).
cpu_and_reads() {
	local stat rest reads
	stat=$(cat "/proc/$1/stat") || fail "PID $1 is gone"
	reads=$(awk '$1 == "syscr:" { print $2 }' "/proc/$1/io") || fail "PID $1 is gone"
	rest=${stat##*) }
	# shellcheck disable=SC2086
	set -- $rest
	echo "$((${12} + ${13})) $reads"
}

# Scenario 1: a waiter sleeps until something it waits on changes. Its
# own opens and closes of the files used to wake it (IN_CLOSE_WRITE): a
# whole CPU on an idle machine. Over a window of 3 s, bound at 10% of a
# CPU (far above a sleeper, far below the spin) and at 100 reads (the
# spin reads the files thousands of times even on a machine so loaded
# that it gets little CPU; a sleeper reads nothing).
case_waiter_cpu() {
	it_setup_nofuse
	shared_config 2
	local w a b hz used reads rc=0
	start_blocker 2
	run_bg --wait gpu=1 -- touch "$WORK/ran" 2>"$RUN_ERR" &
	w=$!
	wait_until 10 "the waiter in the queue" lines_are "$QUEUE" 1
	hz=$(getconf CLK_TCK)
	read -ra a < <(cpu_and_reads "$w")
	sleep 3
	read -ra b < <(cpu_and_reads "$w")
	used=$((b[0] - a[0]))
	reads=$((b[1] - a[1]))
	it_log "the waiter used $used of $((3 * hz)) CPU ticks and made $reads reads in 3 s"
	((used * 10 < 3 * hz && reads < 100)) ||
		fail "the waiter used $used of $((3 * hz)) CPU ticks and made $reads reads in 3 s"
	touch "$WORK/go"
	wait "$BLOCKER"
	wait "$w" || rc=$?
	assert_eq 0 "$rc" "the waiter's status"
	[[ -e $WORK/ran ]] || fail "the waiter's command did not run"
}

# Scenario 2: a waiter stopped by SIGSTOP stays first in the queue but is
# passed over: the run behind it gets the device, a run without --wait
# is not refused; continued, it takes its turn.
case_stopped_waiter() {
	it_setup_nofuse
	shared_config 2
	local a b rc
	start_blocker 2
	run_bg --wait gpu=1 -- touch "$WORK/a" 2>"$WORK/a.err" &
	a=$!
	wait_until 10 "the first waiter in the queue" lines_are "$QUEUE" 1
	kill -STOP "$a"
	wait_until 10 "the first waiter stopped" is_stopped "$a"
	run_bg --wait=20 gpu=1 -- touch "$WORK/b" 2>"$RUN_ERR" &
	b=$!
	wait_until 10 "the second waiter in the queue" lines_are "$QUEUE" 2
	touch "$WORK/go"
	wait "$BLOCKER"
	rc=0
	wait "$b" || rc=$?
	assert_eq 0 "$rc" "the waiter behind a stopped one"
	[[ -e $WORK/b ]] || fail "the second waiter's command did not run"
	rc=0
	run gpu=1 -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 0 "$rc" "a run without --wait beside a stopped waiter"
	assert_eq 1 "$(nlines "$QUEUE")" "the stopped waiter keeps its place"
	kill -CONT "$a"
	rc=0
	wait "$a" || rc=$?
	assert_eq 0 "$rc" "the stopped waiter, continued"
	[[ -e $WORK/a ]] || fail "the first waiter's command did not run"
	assert_eq 0 "$(nlines "$QUEUE")" "lines left in the queue"
	assert_eq 0 "$(nlines "$COORD")" "lines left in the coordination file"
}

# Scenario 2: the waiter ahead stops while the one behind it waits: a stop
# changes no file, and the one behind looks again within seconds.
case_stopped_ahead() {
	it_setup_nofuse
	shared_config 2
	local a b rc=0
	start_blocker 1
	# First in line, it wants both devices: it cannot take while the
	# blocker runs, and nobody may overtake it.
	run_bg --wait gpu=2 -- touch "$WORK/a" 2>"$WORK/a.err" &
	a=$!
	wait_until 10 "the first waiter in the queue" lines_are "$QUEUE" 1
	run_bg --wait=10 gpu=1 -- touch "$WORK/b" 2>"$RUN_ERR" &
	b=$!
	wait_until 10 "the second waiter in the queue" lines_are "$QUEUE" 2
	[[ ! -e $WORK/b ]] || fail "the second waiter overtook a running one"
	kill -STOP "$a"
	wait "$b" || rc=$?
	assert_eq 0 "$rc" "the waiter behind one that stopped"
	[[ -e $WORK/b ]] || fail "the second waiter's command did not run"
	kill -CONT "$a"
	touch "$WORK/go"
	wait "$BLOCKER"
	rc=0
	wait "$a" || rc=$?
	assert_eq 0 "$rc" "the stopped waiter, continued"
}

# Scenario 2: Ctrl-Z (SIGTSTP) stops a waiter, never with a lock held; it
# stops itself between attempts and goes on once continued.
case_ctrl_z() {
	it_setup_nofuse
	shared_config 2
	local a i rc=0
	start_blocker 2
	run_bg --wait gpu=1 -- touch "$WORK/ran" 2>"$RUN_ERR" &
	a=$!
	wait_until 10 "the waiter in the queue" lines_are "$QUEUE" 1
	for i in $(seq 10); do
		kill -TSTP "$a"
		wait_until 10 "the waiter stopped by SIGTSTP ($i)" is_stopped "$a"
		flock -n -x "$QUEUE" true || fail "the waiter stopped by SIGTSTP holds the queue's lock ($i)"
		flock -n -x "$COORD" true || fail "the waiter stopped by SIGTSTP holds the coordination file's lock ($i)"
		kill -CONT "$a"
		wait_until 10 "the waiter continued ($i)" eval "! is_stopped $a"
	done
	touch "$WORK/go"
	wait "$BLOCKER"
	wait "$a" || rc=$?
	assert_eq 0 "$rc" "the waiter's status"
	[[ -e $WORK/ran ]] || fail "the waiter's command did not run"
}

# Scenario 2: a lock held past extres.lock-timeout (by a stopped process,
# say) does not end a wait; the run takes once it is free.
case_lock_wait() {
	it_setup_nofuse
	shared_config 2 "" 'extres.lock-timeout: 0.5'
	local h w rc=0
	: >"$COORD"
	flock -x "$COORD" sleep 3 </dev/null >/dev/null 2>&1 &
	h=$!
	wait_until 10 "the lock taken" eval "! flock -n -x '$COORD' true"
	run_bg --wait=30 gpu=1 -- touch "$WORK/ran" 2>"$RUN_ERR" &
	w=$!
	wait "$h"
	wait "$w" || rc=$?
	assert_eq 0 "$rc" "a waiter after a lock held past the lock timeout"
	assert_contains "$(cat "$RUN_ERR")" "still waiting" "the wait said"
	[[ -e $WORK/ran ]] || fail "the waiter's command did not run"
	# A waiter whose attempt finds the queue locked past the timeout
	# keeps its line, proven: its place.
	local out
	start_blocker 2
	run_bg --wait=30 gpu=1 -- touch "$WORK/ran2" 2>"$WORK/w2.err" &
	w=$!
	wait_until 10 "the waiter in the queue" lines_are "$QUEUE" 1
	(
		exec 9<"$QUEUE" </dev/null >/dev/null 2>&1
		flock -s 9
		exec sleep 2
	) &
	h=$!
	wait_until 10 "the queue locked" eval "! flock -n -x '$QUEUE' true"
	# A blank line (which readers skip) wakes the waiter.
	echo >>"$COORD"
	wait_until 10 "the attempt timed out" grep -q "still waiting" "$WORK/w2.err"
	wait "$h"
	out=$("$EXTRESCTL" coord list "$QUEUE") || fail "coord list failed: $out"
	assert_contains "$out" "live" "the waiter's line"
	[[ $out != *unproven* ]] || fail "the waiter lost its proof: $out"
	touch "$WORK/go"
	wait "$BLOCKER"
	rc=0
	wait "$w" || rc=$?
	assert_eq 0 "$rc" "the waiter after a queue locked past the timeout"
}

# Scenario 3, and a queue locked past the timeout: a run without --wait
# needs no queue's consent. squat KIND: NOBODY makes the queue first
# (after root's setup, as in a sticky /var/tmp it may).
squat() {
	it_setup_nofuse
	shared_layout 2
	local rc err
	rm -f "$QUEUE"
	case $1 in
	symlink) "${AS_NOBODY[@]}" ln -s /etc/passwd "$QUEUE" ;;
	file) "${AS_NOBODY[@]}" sh -c "umask 0; : >'$QUEUE'; chmod 0666 '$QUEUE'" ;;
	esac
	[[ $(stat -c %u "$QUEUE") == "$NOBODY" ]] || fail "nobody's queue was not made"
	rc=0
	"${AS_MEMBER[@]}" "$EXTRESCTL" -c "$WORK/extres.yaml" run gpu=1 -- touch "$WORK/tmp/ran" 2>"$RUN_ERR" || rc=$?
	assert_eq 0 "$rc" "a run without --wait beside a squatted queue"
	[[ -e $WORK/tmp/ran ]] || fail "the command did not run"
	err=$(cat "$RUN_ERR")
	assert_contains "$err" "warning" "a warning"
	assert_contains "$err" "owned by uid $NOBODY" "the queue's owner named"
	assert_contains "$err" "install -m 0660 -o root -g $GID /dev/null $QUEUE" "the fix"
	rc=0
	"${AS_MEMBER[@]}" "$EXTRESCTL" -c "$WORK/extres.yaml" run --wait=5 gpu=1 -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "a run with --wait and a squatted queue"
	err=$(cat "$RUN_ERR")
	assert_contains "$err" "owned by uid $NOBODY" "the queue's owner named"
	assert_contains "$err" "rm -f $QUEUE && install -m 0660 -o root -g $GID /dev/null $QUEUE" "the fix"
	assert_eq 0 "$(nlines "$COORD")" "lines left"
}

case_squat_symlink() { squat symlink; }
case_squat_file() { squat file; }

case_queue_locked() {
	it_setup_nofuse
	shared_config 2 "" 'extres.lock-timeout: 0.5'
	local h rc=0
	: >"$QUEUE"
	# The sleep itself holds the lock, on a descriptor of its own.
	(
		exec 9<"$QUEUE" </dev/null >/dev/null 2>&1
		flock -s 9
		exec sleep 30
	) &
	h=$!
	echo "$h" >"$WORK/holder.pid"
	wait_until 10 "the queue locked" eval "! flock -n -x '$QUEUE' true"
	run gpu=1 -- touch "$WORK/ran" 2>"$RUN_ERR" || rc=$?
	assert_eq 0 "$rc" "a run without --wait beside a locked queue"
	assert_contains "$(cat "$RUN_ERR")" "timed out" "the warning"
	[[ -e $WORK/ran ]] || fail "the command did not run"
	kill "$h"
}

# Scenario 4: a group member writes a waiter line naming PID 1 (alive,
# with its real start time): it stops no run, and gc drops it.
case_forged_waiter() {
	it_setup_nofuse
	shared_layout 2
	local line rc out
	line=$(printf '1 1\t%s\tlease=waiting' "$(proc_starttime 1)")
	"${AS_MEMBER[@]}" sh -c "printf '%s\n' '$line' >>'$QUEUE'"
	rc=0
	"${AS_MEMBER[@]}" "$EXTRESCTL" -c "$WORK/extres.yaml" run gpu=1 -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 0 "$rc" "a run without --wait behind a forged waiter"
	rc=0
	"${AS_MEMBER[@]}" "$EXTRESCTL" -c "$WORK/extres.yaml" run --wait=5 gpu=1 -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 0 "$rc" "a run with --wait behind a forged waiter"
	"${AS_MEMBER[@]}" sh -c "printf '%s\n' '$line' >>'$QUEUE'"
	out=$("${AS_MEMBER[@]}" "$EXTRESCTL" coord gc "$QUEUE" 2>&1) || fail "coord gc failed: $out"
	assert_eq 0 "$(nlines "$QUEUE")" "lines in the queue after gc ($out)"
}

# Scenario 4: a lease line naming root's sleep holds its device (nothing
# is taken twice) but is no lease: `leases` does not list it and --kill
# does not signal it. A real lease is listed and ended.
case_forged_lease() {
	it_setup
	shared_config 2
	local s st id out rc real
	: >"$COORD"
	sleep 300 >/dev/null 2>&1 &
	s=$!
	echo "$s" >"$WORK/sleep.pid"
	st=$(proc_starttime "$s")
	id=$s-$st
	printf '0 %s\t%s\tlease=%s\n' "$s" "$st" "$id" >>"$COORD"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	wait_until 10 ".meta/holders showing the line" grep -qF "$id" "$MNT/.meta/holders"
	out=$("$EXTRESCTL" leases "$MNT") || fail "extresctl leases failed: $out"
	[[ $out != *"$id"* ]] || fail "a forged line listed as a lease: $out"
	rc=0
	"$EXTRESCTL" leases --kill "$id" "$MNT" 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "--kill of a forged lease"
	pid_alive "$s" || fail "--kill signalled the process a forged line named"
	rc=0
	run gpu=2 -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 75 "$rc" "a run wanting the device the forged line holds"
	# A real lease: listed, and --kill ends it.
	run_bg gpu=1 -- sleep 300 2>"$RUN_ERR" &
	real=$!
	wait_until 10 "the real lease in the file" lines_are "$COORD" 2
	wait_until 10 "the real lease listed" eval "'$EXTRESCTL' leases '$MNT' | grep -q ' gpu 1\$'"
	id=$(awk '$6 == 1 { print $1 }' <("$EXTRESCTL" leases "$MNT"))
	out=$("$EXTRESCTL" leases --kill "$id" "$MNT") || fail "--kill of a real lease failed: $out"
	rc=0
	wait "$real" || rc=$?
	assert_eq 143 "$rc" "the real lease's status after --kill"
	kill "$s"
	daemon_stop
}

it_main "$@"
