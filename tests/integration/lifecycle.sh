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

# After a crash the dead mount stays (ENOTCONN); the next start detaches it,
# mounts afresh and reclaims the dead owner's devices.
case_crash_recovery() {
	mount_std
	local old=$DAEMON_PID _ st
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
	for _ in $(seq 200); do
		[[ $(stat -f -c %t "$MNT" 2>/dev/null) == 65735546 ]] && break
		if ! pid_alive "$DAEMON_PID"; then
			daemon_reap
			fail "extresd exited with status $DAEMON_STATUS over the dead mount at $MNT"
		fi
		sleep 0.05
	done
	assert_file "$MNT/gpu/1/index" $'1\n'
	assert_eq 1 "$(awk -v mp="$MNT" '$5 == mp' /proc/self/mountinfo | wc -l)" "mounts at $MNT"
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st
1 $DAEMON_PID$T$st" "$(sort "$WORK/gpu.coord")" "coordination file after the crash"
	daemon_stop
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after a clean exit"
}

# Without -f, extresd returns 0 only once the mount is ready, and the
# process that stays is the one recorded in the coordination file.
case_background() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	local launcher status=0 pid starttime _
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
	assert_eq "0 $pid$T$starttime
1 $pid$T$starttime" "$(sort "$WORK/gpu.coord")" "coordination file"
	# A daemon that kept the caller's stderr would hang `$(extresd ...)`.
	[[ $(readlink "/proc/$pid/fd/2") != "$DAEMON_ERR" ]] ||
		fail "the daemon still holds the caller's stderr"

	fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT failed"
	for _ in $(seq 100); do
		pid_alive "$pid" || break
		sleep 0.1
	done
	! pid_alive "$pid" || fail "extresd ($pid) still runs 10 s after fusermount3 -u"
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

it_main "$@"
