# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The command line: --help, --version, usage errors, and the mount point
# taken from the config.
#
# usage: cli.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# run_cli ARGS...: run extresd, keep RUN_STATUS, CLI_OUT (stdout) and
# CLI_ERR (stderr) as text.
run_cli() {
	RUN_STATUS=0
	timeout 10 "$EXTRESD" "$@" >"$WORK/cli.out" 2>"$WORK/cli.err" </dev/null || RUN_STATUS=$?
	[[ $RUN_STATUS != 124 ]] || fail "extresd $* did not return within 10 s"
	CLI_OUT=$(cat "$WORK/cli.out")
	CLI_ERR=$(cat "$WORK/cli.err")
}

case_help() {
	it_setup_nofuse
	run_cli --help
	assert_eq 0 "$RUN_STATUS" "exit status of extresd --help"
	local all="$CLI_OUT
$CLI_ERR"
	[[ ${all,,} == *usage:*extresd* ]] || fail "extresd --help prints no 'usage: extresd': $all"
	assert_contains "$all" "-c" "extresd --help"
	assert_contains "$all" "-f" "extresd --help"
	assert_contains "$all" "-o" "extresd --help"
	! is_mounted "$MNT" || fail "--help mounted $MNT"
}

case_version() {
	it_setup_nofuse
	run_cli --version
	assert_eq 0 "$RUN_STATUS" "exit status of extresd --version"
	assert_contains "$CLI_OUT
$CLI_ERR" "${EXTRES_VERSION:?EXTRES_VERSION is not set}" "extresd --version"
}

# Usage errors exit 2 and say what was wrong, before anything is read,
# discovered or recorded.
case_unknown_option() {
	it_setup_nofuse
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	run_cli --no-such-option -c "$WORK/extres.yaml" "$MNT"
	assert_eq 2 "$RUN_STATUS" "exit status of extresd --no-such-option"
	assert_contains "$CLI_ERR" "no-such-option" "stderr of extresd --no-such-option"
	! is_mounted "$MNT" || fail "a usage error mounted $MNT"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file"

	run_cli --no-such-option
	assert_eq 2 "$RUN_STATUS" "exit status of extresd --no-such-option (no config)"
	assert_contains "$CLI_ERR" "no-such-option" "stderr of extresd --no-such-option (no config)"

	run_cli -c
	assert_eq 2 "$RUN_STATUS" "exit status of extresd -c (no argument)"
	[[ -n $CLI_ERR ]] || fail "extresd -c (no argument) printed nothing on stderr"

	run_cli -c "$WORK/extres.yaml" "$MNT" "$WORK/second"
	assert_eq 2 "$RUN_STATUS" "exit status of extresd with two mount points"
	assert_contains "$CLI_ERR" "$WORK/second" "stderr of extresd with two mount points"
	! is_mounted "$MNT" || fail "a usage error mounted $MNT"
}

# No MOUNTPOINT argument: extres.mountpoint from the config.
case_mountpoint_config() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	printf 'extres.mountpoint: %s\n' "$MNT" >>"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml"
	assert_eq $'gpu\nnic\nself' "$(ls -1 "$MNT")" "ls $MNT"
	assert_eq "$STD_CONTENTS" "$(tree_contents "$MNT")" "every property file"
	daemon_stop
}

# Relative CONFIG and MOUNTPOINT are taken from the working directory.
case_relative_paths() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	: >"$DAEMON_ERR"
	(cd "$WORK" && exec env --default-signal=INT,QUIT "$EXTRESD" -f -c extres.yaml mnt \
		>"$WORK/daemon.out" 2>"$DAEMON_ERR") &
	DAEMON_PID=$!
	wait_mounted "$MNT"
	assert_eq "$STD_CONTENTS" "$(tree_contents "$MNT")" "every property file"
	daemon_stop
}

# A mount point that is missing or not a directory: a start-up error that
# names it, with nothing left recorded.
case_bad_mountpoint() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$WORK/missing"
	assert_startup_error "$WORK/missing"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file"
	: >"$WORK/file"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$WORK/file"
	assert_startup_error "$WORK/file"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file"
	assert_eq "" "$(mounts_in_work)" "mounts left"
}


# -d: libfuse's request trace and the drivers' debug messages both go
# through extres' log (prefixed "extresd: "), not libfuse's own stderr.
case_debug_log() {
	it_setup
	local lib=$BUILDDIR/tests/mock/libnvidia-ml.so.1
	[[ -f $lib ]] || fail "$lib is missing (build tests/mock first)"
	export FAKE_NVML_GPUS=2 FAKE_NVML_UNSUPPORTED=serial:1
	printf '%s\n' 'external-resources: gpu' 'external-resource.gpu.amount: 2' \
		'external-resource.gpu.driver: nvml' \
		"external-resource.gpu.param.library: $lib" >"$WORK/extres.yaml"
	daemon_spawn -d -c "$WORK/extres.yaml" "$MNT"
	wait_mounted "$MNT"
	cat "$MNT/gpu/0/index" >/dev/null
	daemon_stop
	grep -q "^extresd: resource 'gpu': driver 'nvml': GPU 1: no serial: " "$DAEMON_ERR" ||
		fail "no driver debug message with -d: $(head -c 2000 "$DAEMON_ERR")"
	grep -q '^extresd: unique: [0-9]*, opcode: LOOKUP' "$DAEMON_ERR" ||
		fail "libfuse's -d trace does not go through extres' log: $(head -c 2000 "$DAEMON_ERR")"
	! grep -q '^unique: ' "$DAEMON_ERR" ||
		fail "libfuse wrote to stderr by itself: $(grep -m1 '^unique: ' "$DAEMON_ERR")"
}

# In the background without a syslog daemon, what the daemon logs after it
# detached still reaches the stderr it was started with (here a file).
case_background_log() {
	it_setup
	if [[ -S /dev/log ]]; then
		echo "a syslog daemon listens on /dev/log: messages go there" >&2
		exit 77
	fi
	write_std_config "$WORK/extres.yaml"
	local status=0 pid
	env --default-signal=INT,QUIT "$EXTRESD" -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/daemon.out" 2>"$DAEMON_ERR" </dev/null || status=$?
	[[ $status == 0 ]] || fail "extresd without -f exited with status $status"
	pid=$(sed -n 's/^pid //p' "$MNT/.meta/status")
	[[ $pid =~ ^[0-9]+$ ]] || fail "no pid in $MNT/.meta/status"
	DAEMON_PID=$pid
	printf 'external-resources: [\n' >"$WORK/extres.yaml"
	kill -HUP "$pid"
	wait_until 10 "the failed reload after detaching on stderr" \
		grep -q "^extresd: error: reload failed" "$DAEMON_ERR"
	kill -TERM "$pid"
	wait_until 10 "extresd ($pid) gone after SIGTERM" pid_gone "$pid"
	! is_mounted "$MNT" || fail "$MNT still mounted"
}

# Started under $(...), which waits for the end of its pipe, extresd in the
# background returns at once: the pipe is let go, with a warning on it when
# no syslog listens.
case_background_pipe() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	local out status=0 pid
	out=$(timeout 10 "$EXTRESD" -c "$WORK/extres.yaml" "$MNT" 2>&1 </dev/null) || status=$?
	[[ $status == 0 ]] || fail "extresd without -f under \$(...) exited with status $status: $out"
	pid=$(sed -n 's/^pid //p' "$MNT/.meta/status")
	[[ $pid =~ ^[0-9]+$ ]] || fail "no pid in $MNT/.meta/status"
	DAEMON_PID=$pid
	if [[ ! -S /dev/log ]]; then
		assert_contains "$out" "no syslog at /dev/log and stderr is a pipe" "output of extresd"
	fi
	kill -TERM "$pid"
	wait_until 10 "extresd ($pid) gone after SIGTERM" pid_gone "$pid"
}

it_main "$@"
