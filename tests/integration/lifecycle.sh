# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Starting and stopping: signals, fusermount3 -u, and start-up without -f.
#
# usage: lifecycle.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mount_std() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/index" $'0\n'
}

case_sigterm() {
	mount_std
	daemon_stop TERM
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after SIGTERM"
}

case_sigint() {
	mount_std
	daemon_stop INT
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after SIGINT"
}

# A file held open does not keep the daemon from stopping.
case_sigterm_busy() {
	mount_std
	exec 3<"$MNT/gpu/1/uuid"
	daemon_stop TERM
	exec 3<&-
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after SIGTERM"
}

case_fusermount() {
	mount_std
	fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT failed"
	daemon_expect_exit 0 "after fusermount3 -u"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after fusermount3 -u"
}

# --owner-pid: the owner's exit is a stop like SIGTERM, obeyed at once even
# while a reload waits (up to extres.lock-timeout) for a coordination
# file's lock that someone else holds: the wait ends, the daemon exits 0.
case_owner_exit_reload() {
	it_setup
	local owner lock t0 t1 coord=$WORK/gpu.coord
	sleep 300 >/dev/null 2>&1 9>&- &
	owner=$!
	echo "$owner" >"$WORK/owner.pid"
	write_std_config "$WORK/extres.yaml" "$coord"
	echo 'extres.lock-timeout: 60' >>"$WORK/extres.yaml"
	daemon_start --owner-pid "$owner" -c "$WORK/extres.yaml" "$MNT"
	# This shell holds the lock (its open file description does) until
	# it closes the descriptor.
	exec {lock}<>"$coord"
	flock -x "$lock"
	sed -i 's/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: 3/' "$WORK/extres.yaml"
	kill -HUP "$DAEMON_PID"
	wait_until 10 "the reload" grep -q 'reloading' "$DAEMON_ERR"
	wait_until 10 "the reload waiting for the lock" pid_has_open "$DAEMON_PID" "$coord"
	t0=$(date +%s%N)
	kill -KILL "$owner"
	wait "$owner" 2>/dev/null || true
	wait_until 10 "extresd gone after its owner exited during a reload" pid_gone "$DAEMON_PID"
	t1=$(date +%s%N)
	it_log "gone $(((t1 - t0) / 1000000)) ms after its owner"
	exec {lock}>&-
	daemon_reap
	assert_eq 0 "$DAEMON_STATUS" "exit status after the owner exited during a reload"
	! is_mounted "$MNT" || fail "$MNT still mounted ($(mount_info "$MNT"))"
	grep -qF "stopped while waiting for the lock on coordination file $coord" "$DAEMON_ERR" ||
		fail "the reload's wait was not cut short: $(cat "$DAEMON_ERR")"
}

# The coordination file holds gpu 0 and 1 for $DAEMON_PID ($1 says when);
# a clean stop then empties it.
held_then_stop() {
	local st
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st$(std_uuid 0)
1 $DAEMON_PID$T$st$(std_uuid 1)" "$(sort "$WORK/gpu.coord")" "coordination file $1"
	daemon_stop
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after a clean exit"
}

# After a crash the dead mount stays (ENOTCONN); the next start detaches it,
# mounts afresh and reclaims the dead owner's devices.
case_crash_recovery() {
	mount_std
	local old=$DAEMON_PID
	kill -KILL "$old"
	daemon_reap
	# A name never looked up needs the dead daemon; cached ones do not.
	assert_probe ENOTCONN stat "$MNT/never-looked-up"
	daemon_spawn -f -c "$WORK/extres.yaml" "$MNT"
	# The dead mount is ours too: wait until the new one answers. Neither
	# an ENOENT (the bare directory, between the detach and the new mount)
	# nor a stat (the dead mount's cache) proves that, nor mountinfo read
	# apart from the check (the detach may fall in between). One statfs
	# does: it always asks the daemon, and only a live FUSE mount answers
	# with FUSE's magic.
	wait_until 10 "$MNT answering as FUSE" fuse_answers
	assert_file "$MNT/gpu/1/index" $'1\n'
	assert_eq 1 "$(awk -v mp="$MNT" '$5 == mp' /proc/self/mountinfo | wc -l)" "mounts at $MNT"
	held_then_stop "after the crash"
}

# Wait (10 s at most) until the mount at $MNT answers statfs as FUSE: only
# a live daemon does (a dead mount fails, the directory beneath is another
# file system). Fail at once if the daemon died first.
wait_serving() {
	wait_until 10 "$MNT answering as FUSE after the restart" fuse_answers
}

# Whether $MNT answers statfs as FUSE; fail if the daemon died.
fuse_answers() {
	[[ $(stat -f -c %t "$MNT" 2>/dev/null) == 65735546 ]] && return 0
	if ! pid_alive "$DAEMON_PID"; then
		daemon_reap
		fail "extresd exited with status $DAEMON_STATUS over the dead mount at $MNT"
	fi
	return 1
}

# A reader in a tight loop across 20 kill -9 and restarts: every read gives
# the same bytes (the dead mount's cache, then the new daemon), statfs says
# FUSE; never ENOENT or another file system (the directory underneath).
# With $1 = fallback, the kernel is taken to refuse MOVE_MOUNT_BENEATH: the
# old order (detach, then mount) still replaces the dead mount, gap and all.
restart_readers() {
	local mode=${1:-} how i reader out mounted
	it_setup
	[[ $(id -u) == 0 ]] || { echo "SKIP: $IT_CASE: only root mounts by hand"; exit 77; }
	if [[ $mode == fallback ]]; then
		export EXTRESD_TEST_NO_BENEATH=1
		how="detached the dead extresd mount at $MNT, then mounted (the kernel cannot mount beneath it)"
	else
		how="mounted beneath the dead extresd mount at $MNT, then detached it"
	fi
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	mounted=$(mount_info "$MNT")
	"$PROBE" gaploop "$MNT/gpu/1/uuid" "$MNT" >"$WORK/reader.out" 2>&1 &
	reader=$!
	wait_until 10 "the reader's start" test -s "$WORK/reader.out"
	assert_eq READY "$(cat "$WORK/reader.out")" "the reader's start"
	for i in $(seq 20); do
		kill -KILL "$DAEMON_PID"
		daemon_reap
		daemon_spawn -f -c "$WORK/extres.yaml" "$MNT"
		wait_serving
		if [[ $mode != fallback ]] && grep -qF "the kernel cannot mount beneath it" "$DAEMON_ERR"; then
			echo "SKIP: $IT_CASE: kernel $(uname -r) cannot mount beneath a mount (MOVE_MOUNT_BENEATH, Linux 6.5+)"
			exit 77
		fi
		assert_file "$MNT/gpu/0/index" $'0\n'
	done
	kill -TERM "$reader"
	wait "$reader" || fail "the reader failed: $(cat "$WORK/reader.out")"
	it_log "reader across 20 restarts: $(tail -n +2 "$WORK/reader.out" | tr '\n' ';')"
	grep -Eq '^reads [0-9]+$' "$WORK/reader.out" || fail "the reader said: $(cat "$WORK/reader.out")"
	# The gap: the directory underneath (ENOENT, another file system).
	# What the dead daemon answers (ENOTCONN; ECONNABORTED for a request
	# it was given as it died, ECANCELED over io_uring for one on its way
	# to a queue of the dying daemon) is no gap, and no order of mounting
	# avoids it.
	out=$(grep -Ev '^(READY|reads [0-9]+|(read|statfs) (ENOTCONN|ECONNABORTED|ECANCELED) .*)$' "$WORK/reader.out" || true)
	[[ $mode == fallback || -z $out ]] || fail "reader across 20 restarts: $out"
	assert_contains "$(cat "$DAEMON_ERR")" "$how" "the last start's log"
	assert_eq 1 "$(awk -v mp="$MNT" '$5 == mp' /proc/self/mountinfo | wc -l)" "mounts at $MNT"
	assert_eq "$mounted" "$(mount_info "$MNT")" "the mount after the restarts"
	held_then_stop "after 20 restarts"
}

case_restart_atomic() {
	restart_readers
}

case_restart_fallback() {
	restart_readers fallback
}

# Without -f, extresd returns 0 only once the mount is ready, and the
# process that stays is the one recorded in the coordination file.
case_background() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	local launcher status=0 pid starttime
	env --default-signal=INT,QUIT "$EXTRESD" -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/daemon.out" 2>"$DAEMON_ERR" </dev/null &
	launcher=$!
	wait "$launcher" || status=$?
	[[ $status == 0 ]] || fail "extresd without -f exited with status $status"
	# The very next command must find the mount ready.
	assert_file "$MNT/gpu/1/uuid" $'GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001\n'
	is_our_mount "$MNT" || fail "$MNT is not an extresd mount: '$(mount_info "$MNT")'"

	pid=$(awk '{ print $2 }' "$WORK/gpu.coord" | sort -u)
	[[ $pid =~ ^[0-9]+$ ]] || fail "coordination file names no single owner: $(cat "$WORK/gpu.coord")"
	[[ $pid != "$launcher" ]] || fail "the recorded owner $pid is the process that returned"
	pid_alive "$pid" || fail "the recorded owner $pid is not running"
	[[ $(tr '\0' ' ' <"/proc/$pid/cmdline") == *"$WORK/extres.yaml"* ]] ||
		fail "pid $pid is not our extresd: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
	starttime=$(proc_starttime "$pid")
	assert_eq "0 $pid$T$starttime$(std_uuid 0)
1 $pid$T$starttime$(std_uuid 1)" "$(sort "$WORK/gpu.coord")" "coordination file"
	# Its log goes to syslog where one listens; else it keeps the
	# caller's stderr (a file here), so that nothing is lost. A pipe it
	# lets go in any case: `$(extresd ...)` would hang (cli.sh).
	if [[ -S /dev/log ]]; then
		[[ $(readlink "/proc/$pid/fd/2") != "$DAEMON_ERR" ]] ||
			fail "the daemon still holds the caller's stderr though syslog listens"
	else
		[[ $(readlink "/proc/$pid/fd/2") == "$DAEMON_ERR" ]] ||
			fail "the daemon let go of the caller's stderr without a syslog to log to"
	fi

	fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT failed"
	wait_until 10 "extresd ($pid) gone after fusermount3 -u" pid_gone "$pid"
	! is_mounted "$MNT" || fail "$MNT still mounted"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after fusermount3 -u"
	check_daemon_stderr
}

# Without -f, a start-up error comes back at once, on stderr.
case_background_fail() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	sed -i 's/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: 4/' "$WORK/extres.yaml"
	grep -q 'gpu.amount: 4' "$WORK/extres.yaml" || fail "cannot edit the config"
	daemon_run_fail -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu "wanted 4" "found 3"
	awk -v t="$RUN_SECONDS" 'BEGIN { exit !(t < 8) }' ||
		fail "extresd took $RUN_SECONDS s to report the error"
	assert_eq "" "$(pids_in_work)" "processes left behind"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file"

	# A missing config file, named in the error.
	daemon_run_fail -c "$WORK/missing.yaml" "$MNT"
	assert_startup_error "$WORK/missing.yaml"
	assert_eq "" "$(pids_in_work)" "processes left behind"
}

# A start right after fusermount3 -u, while the old daemon may still be
# releasing its devices under the lock: it waits for them, then mounts.
case_restart() {
	mount_std
	local old=$DAEMON_PID
	fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT failed"
	DAEMON_ERR=$WORK/daemon2.err
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local new=$DAEMON_PID
	DAEMON_PID=$old
	DAEMON_ERR=$WORK/daemon.err
	daemon_reap
	[[ $DAEMON_STATUS == 0 ]] || fail "the first extresd exited with status $DAEMON_STATUS"
	check_daemon_stderr
	DAEMON_PID=$new
	DAEMON_ERR=$WORK/daemon2.err
	held_then_stop "after the restart"
}

# The lock of a daemon started without -f: held by the daemon that stays
# after the command returned, holding the mount point's path, never
# inherited by a discovery script, and removed by a clean exit.
case_lock_held() {
	it_setup
	local lock pid status=0
	cat >"$WORK/discover.sh" <<-'EOF'
	#!/bin/sh
	# Records what the script's descriptors lead to in $2; finds device 0.
	for fd in /proc/$$/fd/*; do readlink "$fd"; done >"$2"
	echo 0
	EOF
	chmod 0755 "$WORK/discover.sh"
	printf '%s\n' 'external-resources: fpga' 'external-resource.fpga.amount: 1' \
		'external-resource.fpga.driver: script' \
		"external-resource.fpga.param.discovery-script.path: $WORK/discover.sh" \
		"external-resource.fpga.param.discovery-script.args: $WORK/fds" >"$WORK/extres.yaml"
	env --default-signal=INT,QUIT "$EXTRESD" -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/daemon.out" 2>"$DAEMON_ERR" </dev/null || status=$?
	[[ $status == 0 ]] || fail "extresd without -f exited with status $status"
	is_our_mount "$MNT" || fail "$MNT is not an extresd mount after extresd returned"
	pid=$(pids_in_work)
	[[ $pid =~ ^[0-9]+$ ]] || fail "not exactly one process runs for the case: '$pid'"
	lock=$(runlock_file "$MNT")
	[[ -n $lock ]] || fail "no lock file in $(runlock_dir) holds $MNT: $(ls -l "$(runlock_dir)")"
	assert_file "$lock" "$MNT"$'\n'
	[[ $lock == "$(runlock_dir)"/????????????????.lock ]] || fail "lock file named $lock"
	! flock -n "$lock" true || fail "nobody holds $lock after extresd returned"
	[[ -n $(find "/proc/$pid/fd" -lname "$lock") ]] || fail "the daemon ($pid) does not hold $lock"
	[[ -s $WORK/fds ]] || fail "the discovery script recorded nothing"
	! grep -qxF "$lock" "$WORK/fds" || fail "the discovery script inherited the lock: $(cat "$WORK/fds")"
	kill -TERM "$pid"
	wait_until 10 "extresd ($pid) gone after SIGTERM" pid_gone "$pid"
	! is_mounted "$MNT" || fail "$MNT still mounted"
	[[ ! -e $lock ]] || fail "$lock is left after a clean exit"
	check_daemon_stderr
}

# While the lock's holder is still discovering (nothing mounted yet),
# another start waits, runs no driver, and ends at once on SIGTERM (exit 0,
# nothing taken); left alone, it gives up after its short wait, saying the
# mount point is served.
# Whether extresd PID blocks SIGTERM and sleeps in nanosleep(); fail if it
# exited.
waits_for_lock() {
	local blk
	pid_alive "$1" || fail "the second extresd did not wait: $(cat "$WORK/b.err")"
	blk=$(awk '$1 == "SigBlk:" { print $2 }' "/proc/$1/status" 2>/dev/null || true)
	[[ -n $blk ]] && ((0x$blk & 0x4000)) || return 1
	proc_sleeps_in "$1" '*nanosleep*' 35 230
}

case_lock_wait() {
	it_setup
	local b t0 t1
	cat >"$WORK/discover.sh" <<-'EOF'
	#!/bin/sh
	# Counts its runs in $2; finds device 0 once $3 exists.
	echo run >>"$2"
	while [ ! -e "$3" ]; do sleep 0.05; done
	echo 0
	EOF
	chmod 0755 "$WORK/discover.sh"
	printf '%s\n' 'external-resources: fpga' 'external-resource.fpga.amount: 1' \
		'external-resource.fpga.driver: script' \
		"external-resource.fpga.coordination-file: $WORK/fpga.coord" \
		"external-resource.fpga.param.discovery-script.path: $WORK/discover.sh" \
		"external-resource.fpga.param.discovery-script.args: $WORK/runs $WORK/go" \
		'external-resource.fpga.param.discovery-script.timeout: 30' >"$WORK/extres.yaml"
	daemon_spawn -f -c "$WORK/extres.yaml" "$MNT"
	wait_until 10 "the first extresd running its discovery script" test -s "$WORK/runs"

	env --default-signal=INT,QUIT "$EXTRESD" -f -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/b.out" 2>"$WORK/b.err" </dev/null &
	b=$!
	# Once it blocks SIGTERM, the signal is no longer fatal but a request;
	# asleep so, it waits for the lock (it polls it between naps).
	wait_until 10 "the second extresd waiting for the lock" waits_for_lock "$b"
	t0=$(date +%s%N)
	kill -TERM "$b"
	wait_until 10 "the waiting extresd gone after SIGTERM" pid_gone "$b"
	t1=$(date +%s%N)
	((t1 - t0 < 1000000000)) || fail "the waiting extresd took $(((t1 - t0) / 1000000)) ms to stop"
	wait "$b" || fail "the waiting extresd exited with status $? after SIGTERM"
	assert_file "$WORK/b.err" $'extresd: stopped during start-up\n'

	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	[[ $RUN_STATUS == 1 ]] || fail "extresd exited with status $RUN_STATUS, wanted 1"
	assert_file "$RUN_ERR" "extresd: error: $MNT is already served by a running extresd"$'\n'
	awk -v t="$RUN_SECONDS" 'BEGIN { exit !(t >= 1.5) }' ||
		fail "extresd gave up after $RUN_SECONDS s, before its wait was spent"
	assert_eq run "$(cat "$WORK/runs")" "discovery runs"
	assert_eq "" "$(coord_lines "$WORK/fpga.coord")" "coordination file before the first extresd mounted"

	touch "$WORK/go"
	wait_mounted "$MNT"
	assert_eq "0 $DAEMON_PID$T$(proc_starttime "$DAEMON_PID")" "$(cat "$WORK/fpga.coord")" "coordination file"
	daemon_stop
}

# Whether of the daemons PID... none runs, or one does with the mount up;
# sets the caller's live to those that run.
one_left() {
	local pid
	live=()
	for pid in "$@"; do
		pid_alive "$pid" && live+=("$pid")
	done
	((${#live[@]} == 0)) && return 0
	((${#live[@]} == 1)) && is_our_mount "$MNT"
}

# One daemon per mount point. 8 extresd start at once on one mount point,
# each wanting 1 of 8 devices through one coordination file, for 20 rounds:
# exactly one mounts (nothing stacked under it), the 7 others (half of
# them told the mount point through a symlink) exit 1 saying the mount
# point is already served, and the file holds exactly the
# winner's line, so no loser kept a device; the winner's clean exit empties
# it.
case_start_race() {
	it_setup
	local coord=$WORK/gpu.coord round i pid winner want mp
	local -a pids live
	ln -s mnt "$WORK/link"
	cat >"$WORK/extres.yaml" <<-EOF
	external-resources: gpu
	external-resource.gpu.amount: 1
	external-resource.gpu.driver: static
	external-resource.gpu.param.indexes: "0,1,2,3,4,5,6,7"
	external-resource.gpu.coordination-file: $coord
	EOF
	for round in $(seq 20); do
		pids=()
		for i in 1 2 3 4 5 6 7 8; do
			# Two spellings of one mount point: one lock.
			mp=$MNT
			((i % 2)) || mp=$WORK/link/
			env --default-signal=INT,QUIT "$EXTRESD" -f -c "$WORK/extres.yaml" "$mp" \
				>"$WORK/r$i.out" 2>"$WORK/r$i.err" </dev/null &
			pids+=("$!")
		done
		poll_until 10 one_left "${pids[@]}" || true
		((${#live[@]} == 1)) ||
			fail "round $round: ${#live[@]} of 8 daemons still run after 10 s, wanted 1"
		winner=
		for i in 1 2 3 4 5 6 7 8; do
			pid=${pids[i - 1]}
			if [[ $pid == "${live[0]}" ]]; then
				winner=$i
				continue
			fi
			DAEMON_PID=$pid
			daemon_reap
			DAEMON_ERR=$WORK/r$i.err
			[[ $DAEMON_STATUS == 1 ]] || fail "round $round: daemon $i exited with status $DAEMON_STATUS, wanted 1"
			assert_file "$WORK/r$i.err" "extresd: error: $MNT is already served by a running extresd"$'\n'
		done
		DAEMON_PID=${live[0]}
		DAEMON_ERR=$WORK/r$winner.err
		is_our_mount "$MNT" || fail "round $round: nothing mounted at $MNT"
		assert_eq 1 "$(awk -v mp="$MNT" '$5 == mp' /proc/self/mountinfo | wc -l)" "round $round: mounts at $MNT"
		assert_file "$MNT/gpu/0/index" $'0\n'
		want="0 $DAEMON_PID$T$(proc_starttime "$DAEMON_PID")"
		assert_eq "$want" "$(cat "$coord")" "round $round: coordination file"
		daemon_stop
		assert_eq "" "$(coord_lines "$coord")" "round $round: coordination file after a clean exit"
	done
}

# A SIGKILL while a daemon thread waits in the kernel on its own mount: a
# reload's invalidation of a dropped entry waits for gpu/'s lock, held by a
# lookup the FUSE workers (held by strace) never read. The process cannot
# finish dying, so /dev/fuse stays open and, without the sentinel aborting
# the connection, the mount hangs for good.
stuck_pool_config() {
	printf '%s\n' 'external-resources: gpu' 'external-resource.gpu.driver: static' \
		"external-resource.gpu.param.indexes: $1" 'external-resource.gpu.pool: true' \
		"external-resource.gpu.coordination-file: $WORK/gpu" >"$WORK/extres.yaml"
}

# The threads of $1 that wait in the kernel function $2; 1 when none.
threads_in() {
	local t found=1
	for t in /proc/"$1"/task/*; do
		[[ $(cat "$t/wchan" 2>/dev/null) == "$2" ]] && echo "${t##*/}" && found=0
	done
	return $found
}

process_ended() {
	[[ ! -e /proc/$1 ]] || grep -q '^Threads:.1$' /proc/"$1"/status 2>/dev/null ||
		[[ $(proc_state "$1") == Z ]]
}

# Let a hung mount go, so that the case can clean up after a failure.
abort_connection() {
	local dev conn mounted=
	conn=$(awk -v m="$1" '$5 == m { split($3, d, ":"); print d[1] * 1048576 + d[2] }' /proc/self/mountinfo)
	mountpoint -q /sys/fs/fuse/connections ||
		{ mount -t fusectl fusectl /sys/fs/fuse/connections && mounted=1; }
	for dev in $conn; do
		echo 1 >/sys/fs/fuse/connections/"$dev"/abort 2>/dev/null
	done
	[[ -z $mounted ]] || umount /sys/fs/fuse/connections
}

case_kill9_stuck_thread() {
	command -v strace >/dev/null || { echo "strace is not installed (scripts/deps installs it)"; exit 77; }
	it_setup
	: >"$WORK/gpu"
	stuck_pool_config 0,1,2,3
	# /dev/fuse's own workers are what strace holds (transport-uring-kill9
	# covers io_uring's queues).
	daemon_start -c "$WORK/extres.yaml" -o transport=dev "$MNT"
	ls "$MNT/gpu" >/dev/null
	local workers tracer lookup args=() t
	wait_until 10 "FUSE workers waiting for requests" threads_in "$DAEMON_PID" fuse_dev_do_read
	workers=$(threads_in "$DAEMON_PID" fuse_dev_do_read)
	for t in $workers; do args+=(-p "$t"); done
	# Every read of a worker waits 30 s before it is made.
	strace -qq -o /dev/null -e trace=read,readv,splice \
		-e inject=read,readv,splice:delay_enter=30000000 "${args[@]}" 2>/dev/null &
	tracer=$!
	echo "$tracer" >"$WORK/tracer.pid"
	wait_until 10 "strace attached to the workers" \
		grep -q "^TracerPid:.$tracer\$" /proc/"$DAEMON_PID"/task/"${args[1]}"/status
	stat "$MNT/gpu/no-such-info" >/dev/null 2>&1 &
	lookup=$!
	wait_until 10 "the lookup waiting for an answer" proc_sleeps_in "$lookup" request_wait_answer
	stuck_pool_config 0,1,2
	kill -HUP "$DAEMON_PID"
	wait_until 10 "the reload's invalidation stuck behind the lookup" \
		threads_in "$DAEMON_PID" fuse_reverse_inval_entry
	kill -KILL "$DAEMON_PID"
	kill "$tracer"
	wait "$tracer" 2>/dev/null || true
	# The bound only catches the hang: the process ends at once.
	if ! poll_until 10 process_ended "$DAEMON_PID"; then
		abort_connection "$MNT"
		fail "extresd had not ended 10 s after SIGKILL (a thread stuck on its own mount)"
	fi
	wait "$lookup" 2>/dev/null || true
	daemon_reap
	local says
	says=$(timeout -s KILL 10 stat -f -c %T "$MNT" 2>&1) || true
	[[ $says == *"not connected"* || $says == *"abort"* ]] ||
		fail "statfs of the mount after kill -9: '$says', wanted ENOTCONN"
	umount -l "$MNT" 2>/dev/null || true
}

it_main "$@"
