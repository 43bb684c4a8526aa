# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The script driver under a real mount: Flink's and Spark's discovery-script
# formats, and the scripts that fail, hang or cannot run.
#
# usage: script.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FIXTURES=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/scripts

# write_script_config AMOUNT PATH ARGS [TIMEOUT]: an fpga resource found by
# a script, coordinated through $WORK/fpga.coord.
write_script_config() {
	{
		printf '%s\n' \
			'external-resources: fpga' \
			"external-resource.fpga.amount: $1" \
			'external-resource.fpga.driver: script' \
			"external-resource.fpga.coordination-file: $WORK/fpga.coord" \
			"external-resource.fpga.param.discovery-script.path: $2"
		[[ -z $3 ]] || printf 'external-resource.fpga.param.discovery-script.args: %s\n' "$3"
		[[ -z ${4:-} ]] || printf 'external-resource.fpga.param.discovery-script.timeout: %s\n' "$4"
	} >"$WORK/extres.yaml"
}

# Flink's contract: amount first, then the args; indexes split by ",",
# whitespace-only items ignored; a relative path is taken from the config
# file's directory, not the daemon's working directory.
case_flink() {
	it_setup
	mkdir "$WORK/discovery"
	cp "$FIXTURES/flink.sh" "$WORK/discovery/flink.sh"
	chmod 0755 "$WORK/discovery/flink.sh"
	write_script_config 2 discovery/flink.sh "--record $WORK/args --indexes 4,6,9"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "2
--record
$WORK/args
--indexes
4,6,9" "$(cat "$WORK/args")" "arguments the script got"
	assert_eq $'0\n1' "$(ls -1 "$MNT/fpga")" "ls fpga"
	assert_eq index "$(ls -1 "$MNT/fpga/0")" "ls fpga/0"
	assert_eq $'.\n..\nindex' "$(ls -1a "$MNT/fpga/1")" "ls -a fpga/1"
	assert_file "$MNT/fpga/0/index" $'4\n'
	assert_file "$MNT/fpga/1/index" $'6\n'
	assert_probe "reg 0444 2" stat "$MNT/fpga/1/index"
	local st
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "4 $DAEMON_PID$T$st
6 $DAEMON_PID$T$st" "$(sort "$WORK/fpga.coord")" "coordination file while running"
	daemon_stop
	assert_eq "" "$(coord_lines "$WORK/fpga.coord")" "coordination file after a clean exit"
}

# Spark's format: {"name": ..., "addresses": [...]}; the core takes the
# first `amount` of them.
case_spark() {
	it_setup
	write_script_config 2 "$FIXTURES/spark.sh" fpga
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1' "$(ls -1 "$MNT/fpga")" "ls fpga"
	assert_eq index "$(ls -1 "$MNT/fpga/1")" "ls fpga/1"
	assert_file "$MNT/fpga/0/index" $'3\n'
	assert_file "$MNT/fpga/1/index" $'5\n'
	daemon_stop
}

# write_gpu_config PATH [COORD]: a gpu resource found by the script at PATH,
# coordinated through COORD when given.
write_gpu_config() {
	{
		printf '%s\n' \
			'external-resources: gpu' \
			'external-resource.gpu.amount: 1' \
			'external-resource.gpu.driver: script' \
			"external-resource.gpu.param.discovery-script.path: $1"
		[[ -z ${2:-} ]] || printf 'external-resource.gpu.coordination-file: %s\n' "$2"
	} >"$WORK/extres.yaml"
}

# What Spark's own script prints, with exit status 0, when the NVIDIA driver
# is down, escaped as the start-up error quotes it.
SPARK_DOWN_QUOTED='its output: "{\"name\": \"gpu\", \"addresses\":[\"NVIDIA-SMI has failed because it couldn'"'"'t communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\",\"\"]}\x0a"'

# Spark's script exits 0 with nvidia-smi's complaint as an address: no
# device named by a sentence, but a start-up error that quotes the output.
case_spark_driver_down() {
	it_setup
	write_gpu_config "$FIXTURES/spark-driver-down.sh"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu "spark-driver-down.sh: index \"NVIDIA-SMI has failed" \
		"contains whitespace" "$SPARK_DOWN_QUOTED"
}

# The same with a coordination file: nothing is recorded.
case_spark_driver_down_coord() {
	it_setup
	write_gpu_config "$FIXTURES/spark-driver-down.sh" "$WORK/gpu.coord"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu "contains whitespace" "$SPARK_DOWN_QUOTED"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file"
}

# Spark's output for another resource does not fill this one.
case_spark_other_name() {
	it_setup
	write_script_config 1 "$FIXTURES/spark.sh" ""
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error fpga 'JSON output is for resource "gpu", not for this resource "fpga"'
	assert_eq "" "$(coord_lines "$WORK/fpga.coord")" "coordination file"
}

# A second line that is not blank is an error naming it, not dropped.
case_second_line() {
	it_setup
	printf '#!/bin/sh\necho 0,1\necho "warning: GPU 1 is hot"\n' >"$WORK/two-lines.sh"
	chmod 0755 "$WORK/two-lines.sh"
	write_gpu_config "$WORK/two-lines.sh"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu 'line 2 of the output is not blank: "warning: GPU 1 is hot"' \
		'its output: "0,1\x0awarning: GPU 1 is hot\x0a"'
}

# A non-zero exit fails start-up, quoting the script's stderr, even though
# its stdout looks valid.
case_fail() {
	it_setup
	write_script_config 1 "$FIXTURES/fail.sh" ""
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error fpga "fail.sh: no FPGA found on this host (marker 7f3a)"
	assert_eq "" "$(coord_lines "$WORK/fpga.coord")" "coordination file"
}

# A script that never answers fails start-up once its timeout is spent.
case_hang() {
	it_setup
	write_script_config 1 "$FIXTURES/hang.sh" "--pidfile $WORK/sleeper.pid" 1
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error fpga
	awk -v t="$RUN_SECONDS" 'BEGIN { exit !(t < 6) }' ||
		fail "extresd took $RUN_SECONDS s to fail a script with timeout 1"
	assert_eq "" "$(coord_lines "$WORK/fpga.coord")" "coordination file"
}

# The same when the hung process is a child of the script that holds the
# script's stdout and stderr open.
case_hang_child() {
	it_setup
	write_script_config 1 "$FIXTURES/hang.sh" "--child --pidfile $WORK/sleeper.pid" 1
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error fpga
	awk -v t="$RUN_SECONDS" 'BEGIN { exit !(t < 6) }' ||
		fail "extresd took $RUN_SECONDS s to fail a script with timeout 1 whose child holds its output"
	if [[ -s $WORK/sleeper.pid ]] && pid_alive "$(cat "$WORK/sleeper.pid")"; then
		it_log "note: the script's child $(cat "$WORK/sleeper.pid") outlived the timeout"
	fi
}

# A script without execute permission: a start-up error naming it.
case_noexec() {
	it_setup
	cp "$FIXTURES/flink.sh" "$WORK/noexec.sh"
	chmod 0644 "$WORK/noexec.sh"
	write_script_config 1 "$WORK/noexec.sh" "--indexes 0"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error fpga "$WORK/noexec.sh"
	assert_eq "" "$(coord_lines "$WORK/fpga.coord")" "coordination file"
}

it_main "$@"
