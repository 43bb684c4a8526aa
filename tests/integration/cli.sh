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
	assert_eq $'gpu\nnic' "$(ls -1 "$MNT")" "ls $MNT"
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

it_main "$@"
