# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Signals are obeyed whatever the daemon is doing, a discovery script never
# outlives it, an interrupted start leaves nothing behind, and "ready" means
# that the mount serves.
#
# usage: signals.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# How long a stop may take: the issue's 1 s, with slack for a loaded VM.
STOP_MS=2500

# A discovery script that answers "0" at once, unless $WORK/hang exists:
# then it records its pid, a child's in its process group and an escaped
# grandchild's (setsid, its own session) in $WORK/*.pid, says "started",
# and waits for them (60 s); with $WORK/quick it starts only the escaped
# one and answers "0" at once.
write_hang_script() {
	cat >"$WORK/discover.sh" <<-'EOF'
	#!/bin/sh
	dir=$2
	if [ ! -e "$dir/hang" ]; then
		echo 0
		exit 0
	fi
	echo $$ >"$dir/script.pid"
	if [ ! -e "$dir/quick" ]; then
		sleep 60 &
		echo $! >"$dir/child.pid"
	fi
	setsid sh -c 'echo $$ >"$1/escaped.pid.tmp"; mv "$1/escaped.pid.tmp" "$1/escaped.pid"; exec sleep 60' \
		escaped "$dir" </dev/null >/dev/null 2>&1 &
	while [ ! -s "$dir/escaped.pid" ]; do sleep 0.01; done
	# Long enough for the keeper's walk (every 20 ms) to see the escaped
	# process before anyone is told the script started: one that escapes
	# within a walk of a SIGKILL may outlive it (process_keeper.h).
	sleep 0.3
	: >"$dir/started"
	if [ -e "$dir/quick" ]; then
		echo 0
		exit 0
	fi
	wait
	echo 0
	EOF
	chmod 0755 "$WORK/discover.sh"
}

# gpu: 1 of 2 static devices through $WORK/gpu.coord, taken first; fpga: 1
# found by the script above (timeout 120 s) through $WORK/fpga.coord.
write_hang_config() {
	write_hang_script
	cat >"$WORK/extres.yaml" <<-EOF
	external-resources: gpu;fpga
	external-resource.gpu.amount: 1
	external-resource.gpu.driver: static
	external-resource.gpu.param.indexes: "0,1"
	external-resource.gpu.coordination-file: $WORK/gpu.coord
	external-resource.fpga.amount: 1
	external-resource.fpga.driver: script
	external-resource.fpga.coordination-file: $WORK/fpga.coord
	external-resource.fpga.param.discovery-script.path: $WORK/discover.sh
	external-resource.fpga.param.discovery-script.args: $WORK
	external-resource.fpga.param.discovery-script.timeout: 120
	EOF
}

# Wait (10 s at most) until the hanging script has started its processes.
wait_started() {
	wait_until 10 "the discovery script's start" script_started "${1:-}"
}

# Whether the script has started; fail if the process $1 (if any) exited.
script_started() {
	[[ -e $WORK/started ]] && return 0
	if [[ -n $1 ]] && ! pid_alive "$1"; then
		fail "the process $1 exited before the discovery script started"
	fi
	return 1
}

# Wait for PID $1 to exit (10 s at most); sets ELAPSED_MS, since $2 (ns).
wait_gone() {
	local pid=$1 t0=$2
	poll_until 10 pid_gone "$pid" || true
	ELAPSED_MS=$((($(date +%s%N) - t0) / 1000000))
	it_log "process $pid gone after $ELAPSED_MS ms"
}

# Send SIG$1 to the daemon; it must exit 0 within STOP_MS.
stop_within() {
	local sig=$1 t0
	t0=$(date +%s%N)
	kill "-$sig" "$DAEMON_PID"
	wait_gone "$DAEMON_PID" "$t0"
	pid_alive "$DAEMON_PID" && fail "extresd still runs $ELAPSED_MS ms after SIG$sig"
	((ELAPSED_MS < STOP_MS)) || fail "extresd took $ELAPSED_MS ms to obey SIG$sig (limit $STOP_MS ms)"
	daemon_expect_exit 0 "after SIG$sig"
}

# The script, its child and its escaped grandchild are gone (zombies of
# nobody count as gone), at once or within $1 ms.
assert_script_gone() {
	local within=${1:-0} left t0 ms
	t0=$(date +%s%N)
	script_gone && return 0
	((within > 0)) || fail "still running:$left"
	poll_until 10 script_gone || fail "still running 10 s on:$left"
	ms=$((($(date +%s%N) - t0) / 1000000))
	((ms < within)) || fail "the script's processes took $ms ms to go (limit $within ms)"
}

# Whether the script, its child and its escaped grandchild are gone; sets
# the caller's left to those that run.
script_gone() {
	local name pid
	left=
	for name in script child escaped; do
		pid=$(cat "$WORK/$name.pid" 2>/dev/null) || fail "no $name.pid: the script did not record it"
		pid_alive "$pid" && left+=" $name ($pid)"
	done
	[[ -z $left ]]
}

assert_nothing_left() {
	! is_mounted "$MNT" || fail "$MNT is mounted: $(mount_info "$MNT")"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "gpu coordination file"
	assert_eq "" "$(coord_lines "$WORK/fpga.coord")" "fpga coordination file"
}

# SIGTERM while a start-up discovery script hangs (timeout 120 s): exit 0
# within a second, the script and what it started killed, the device taken
# before it handed back, nothing mounted.
case_startup_sigterm() {
	it_setup
	write_hang_config
	touch "$WORK/hang"
	daemon_spawn -f -c "$WORK/extres.yaml" "$MNT"
	wait_started "$DAEMON_PID"
	[[ -n $(coord_lines "$WORK/gpu.coord") ]] || fail "gpu was not taken before the script ran"
	stop_within TERM
	assert_script_gone
	assert_nothing_left
}

# The same with SIGINT (^C on a foreground extresd).
case_startup_sigint() {
	it_setup
	write_hang_config
	touch "$WORK/hang"
	daemon_spawn -f -c "$WORK/extres.yaml" "$MNT"
	wait_started "$DAEMON_PID"
	stop_within INT
	assert_script_gone
	assert_nothing_left
}

# SIGTERM while a reload's script hangs: the reload is rolled back and the
# daemon exits 0 within a second, releasing everything.
case_reload_sigterm() {
	it_setup
	write_hang_config
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/fpga/0/index" $'0\n'
	touch "$WORK/hang"
	kill -HUP "$DAEMON_PID"
	wait_started "$DAEMON_PID"
	stop_within TERM
	assert_script_gone
	assert_nothing_left
}

# SIGKILL of the daemon in the middle of a reload: the script, its child
# and its escaped grandchild do not outlive it.
case_reload_sigkill() {
	it_setup
	write_hang_config
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	touch "$WORK/hang"
	kill -HUP "$DAEMON_PID"
	wait_started "$DAEMON_PID"
	kill -KILL "$DAEMON_PID"
	daemon_reap
	assert_script_gone "$STOP_MS"
}

# A script that leaves a setsid'd process behind and exits: the warning
# says truthfully what became of it, and it is gone.
case_escaped_reported() {
	it_setup
	write_hang_script
	printf '%s\n' 'external-resources: fpga' 'external-resource.fpga.amount: 1' \
		'external-resource.fpga.driver: script' \
		"external-resource.fpga.param.discovery-script.path: $WORK/discover.sh" \
		"external-resource.fpga.param.discovery-script.args: $WORK" >"$WORK/extres.yaml"
	touch "$WORK/hang" "$WORK/quick"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local pid
	pid=$(cat "$WORK/escaped.pid")
	! pid_alive "$pid" || fail "the escaped process $pid outlived the discovery"
	grep -qF "discovery script $WORK/discover.sh left 1 process running outside its process group (setsid); killed it" "$DAEMON_ERR" ||
		fail "no true warning about the escaped process: $(cat "$DAEMON_ERR")"
	daemon_stop
}

# Start without -f while the script hangs, and interrupt the front process
# with SIG$1: it exits 128+N after saying so, once the background daemon has
# released what it took, mounted nothing and exited.
background_interrupt() {
	local sig=$1 want=$2 front status=0 t0
	it_setup
	write_hang_config
	touch "$WORK/hang"
	env --default-signal=INT,QUIT "$EXTRESD" -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/daemon.out" 2>"$DAEMON_ERR" </dev/null &
	front=$!
	wait_started "$front"
	t0=$(date +%s%N)
	kill "-$sig" "$front"
	wait_gone "$front" "$t0"
	pid_alive "$front" && fail "the front extresd still runs $ELAPSED_MS ms after SIG$sig"
	wait "$front" || status=$?
	[[ $status == "$want" ]] || fail "the front extresd exited with status $status after SIG$sig, wanted $want"
	((ELAPSED_MS < STOP_MS)) || fail "the front extresd took $ELAPSED_MS ms to obey SIG$sig (limit $STOP_MS ms)"
	grep -q "^extresd: interrupted by SIG$sig" "$DAEMON_ERR" ||
		fail "the front did not say it was interrupted: $(cat "$DAEMON_ERR")"
	assert_eq "" "$(pids_in_work)" "processes left behind (the background daemon, the script)"
	assert_script_gone
	assert_nothing_left
	check_daemon_stderr
}

case_background_sigint() {
	background_interrupt INT 130
}

case_background_sigterm() {
	background_interrupt TERM 143
}

# gpu: 1 of 2 static devices; fpga: a script that says "started" and
# answers "0" once $WORK/go exists: a start-up that waits for the case.
write_gate_config() {
	cat >"$WORK/gate.sh" <<-'EOF'
	#!/bin/sh
	: >"$2/started"
	while [ ! -e "$2/go" ]; do sleep 0.01; done
	echo 0
	EOF
	chmod 0755 "$WORK/gate.sh"
	cat >"$WORK/extres.yaml" <<-EOF
	external-resources: gpu;fpga
	external-resource.gpu.amount: 1
	external-resource.gpu.driver: static
	external-resource.gpu.param.indexes: "0,1"
	external-resource.fpga.amount: 1
	external-resource.fpga.driver: script
	external-resource.fpga.param.discovery-script.path: $WORK/gate.sh
	external-resource.fpga.param.discovery-script.args: $WORK
	EOF
}

# Wait (10 s at most) until .meta/status counts a reload that succeeded.
wait_reloaded() {
	poll_until 10 grep -qx 'last-reload ok' "$MNT/.meta/status" 2>/dev/null ||
		fail "no reload within 10 s of the mount: $(cat "$MNT/.meta/status" 2>&1)"
}

# SIGHUP to a foreground extresd before it mounts (its discovery still
# running): a reload request, obeyed once the mount serves, never death.
case_startup_sighup() {
	it_setup
	write_gate_config
	daemon_spawn -f -c "$WORK/extres.yaml" "$MNT"
	wait_started "$DAEMON_PID"
	kill -HUP "$DAEMON_PID"
	touch "$WORK/go"
	wait_mounted "$MNT"
	wait_reloaded
	assert_file "$MNT/fpga/0/index" $'0\n'
	daemon_stop
}

# The same to the front of a background start (the PID a shell's $! names):
# passed on to the daemon, which reloads once it serves; the front still
# says ready (exit 0).
case_background_sighup() {
	it_setup
	write_gate_config
	local front pid status=0
	env --default-signal=INT,QUIT "$EXTRESD" -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/daemon.out" 2>"$DAEMON_ERR" </dev/null &
	front=$!
	wait_started "$front"
	kill -HUP "$front"
	touch "$WORK/go"
	wait "$front" || status=$?
	[[ $status == 0 ]] || fail "the front extresd exited with status $status after SIGHUP, wanted 0"
	is_our_mount "$MNT" || fail "nothing mounted at $MNT after the front said ready"
	wait_reloaded
	grep -q '^extresd: SIGHUP during start-up: passed on' "$DAEMON_ERR" ||
		fail "the front did not say what became of the SIGHUP: $(cat "$DAEMON_ERR")"
	pid=$(sed -n 's/^pid //p' "$MNT/.meta/status")
	[[ $pid =~ ^[0-9]+$ ]] || fail "no pid in .meta/status"
	kill -TERM "$pid"
	wait_gone "$pid" "$(date +%s%N)"
	! pid_alive "$pid" || fail "the background extresd ($pid) still runs 10 s after SIGTERM"
	! is_mounted "$MNT" || fail "$MNT still mounted after SIGTERM"
	check_daemon_stderr
}

# A start that cannot serve reports the failure and its reason to the
# caller (exit 1), foreground and background alike, and leaves nothing
# mounted or recorded. $1: what the error must say; the rest: how to run.
expect_not_ready() {
	local why=$1 msg
	shift
	: >"$RUN_ERR"
	RUN_STATUS=0
	timeout 20 "$@" >"$WORK/run.out" 2>"$RUN_ERR" </dev/null || RUN_STATUS=$?
	[[ $RUN_STATUS != 124 ]] || fail "$* did not return within 20 s"
	[[ $RUN_STATUS == 1 ]] || fail "$* exited with status $RUN_STATUS, wanted 1; stderr: $(cat "$RUN_ERR")"
	msg=$(grep '^extresd: error: ' "$RUN_ERR" || true)
	[[ -n $msg ]] || fail "$*: no 'extresd: error: ' line on stderr: $(cat "$RUN_ERR")"
	assert_contains "$msg" "$why" "$*: the error"
	! grep -q 'mounted' "$RUN_ERR" || fail "$*: said mounted: $(cat "$RUN_ERR")"
	! is_mounted "$MNT" || fail "$*: a mount was left at $MNT: $(mount_info "$MNT")"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "$*: coordination file"
	assert_eq "" "$(pids_in_work)" "$*: processes left behind"
}

# -o max_read=1: the session's INIT fails; that is a failed start.
case_max_read() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	expect_not_ready "cannot serve $MNT" \
		"$EXTRESD" -c "$WORK/extres.yaml" -o max_read=1 "$MNT"
	expect_not_ready "cannot serve $MNT" \
		"$EXTRESD" -f -c "$WORK/extres.yaml" -o max_read=1 "$MNT"
}

# Under an address-space limit the session's threads cannot start: the
# reason reaches the caller of a background start (there may be no syslog).
# A limit under which everything works is fine too, if the mount serves.
address_limit() {
	local kib=$1 status=0
	it_setup
	if it_sanitized; then
		echo "SKIP: $IT_CASE: a sanitizer build cannot run under ulimit -v"
		exit 77
	fi
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	: >"$RUN_ERR"
	timeout 20 bash -c 'ulimit -v "$1" && exec "$2" -c "$3" "$4"' limit \
		"$kib" "$EXTRESD" "$WORK/extres.yaml" "$MNT" \
		>"$WORK/run.out" 2>"$RUN_ERR" </dev/null || status=$?
	if [[ $status == 0 ]]; then
		it_log "ulimit -v $kib: started"
		assert_file "$MNT/gpu/0/index" $'0\n'
		fusermount3 -u "$MNT"
		return 0
	fi
	[[ $status == 1 ]] || fail "ulimit -v $kib: extresd exited with status $status; stderr: $(cat "$RUN_ERR")"
	grep -q '^extresd: error: ' "$RUN_ERR" ||
		fail "ulimit -v $kib: exit 1 without a reason on stderr: $(cat "$RUN_ERR")"
	! grep -q 'mounted' "$RUN_ERR" || fail "ulimit -v $kib: said mounted: $(cat "$RUN_ERR")"
	! is_mounted "$MNT" || fail "ulimit -v $kib: a mount was left at $MNT"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "ulimit -v $kib: coordination file"
	assert_eq "" "$(pids_in_work)" "ulimit -v $kib: processes left behind"
}

case_address_limit_12000() {
	address_limit 12000
}

case_address_limit_8000() {
	address_limit 8000
}

it_main "$@"
