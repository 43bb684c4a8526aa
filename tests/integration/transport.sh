#!/usr/bin/env bash
# How requests reach extresd: /dev/fuse, or FUSE over io_uring (Linux 6.14+,
# with the fuse module's enable_uring parameter on). Cases that need
# io_uring turn the parameter on and restore it; they skip (77) where the
# kernel has no such parameter or it cannot be set. They run alone
# (tests/integration/meson.build): the parameter is the whole machine's.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

# Each case says its transport: not the whole-suite one (.ci/run).
unset EXTRESD_TEST_TRANSPORT
PARAM=/sys/module/fuse/parameters/enable_uring
PARAM_WAS=

restore_param() {
	local rc=$?
	set +e
	if [[ -n $PARAM_WAS ]]; then
		echo "$PARAM_WAS" >"$PARAM" 2>/dev/null || true
	fi
	it_cleanup "$rc"
}

# set_param Y|N: skip (77) when this kernel or user cannot.
set_param() {
	if [[ ! -e $PARAM ]]; then
		echo "SKIP: $IT_CASE: this kernel has no FUSE over io_uring ($PARAM is missing)"
		exit 77
	fi
	if [[ -z $PARAM_WAS ]]; then
		PARAM_WAS=$(cat "$PARAM")
		trap restore_param EXIT
	fi
	if ! echo "$1" >"$PARAM" 2>/dev/null || [[ $(cat "$PARAM") != "$1" ]]; then
		echo "SKIP: $IT_CASE: cannot set $PARAM to $1 (not root?)"
		exit 77
	fi
}

# Voluntary context switches of the daemon's io_uring threads so far.
ring_wakeups() {
	local t n=0 v
	for t in /proc/"$DAEMON_PID"/task/*; do
		[[ $(cat "$t/comm" 2>/dev/null) == extres-ring-* ]] || continue
		v=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$t/status")
		n=$((n + v))
	done
	echo "$n"
}

# Values, listings, a reload and the status line, over io_uring.
case_uring() {
	it_setup
	set_param Y
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" -o transport=uring "$MNT"
	local t
	t=$(status_field transport)
	[[ $t == "uring ("*" queues)" ]] || fail "transport is '$t', wanted io_uring"
	assert_eq "0" "$(cat "$MNT/gpu/0/index")" "gpu/0/index over io_uring"
	assert_eq "GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001" "$(cat "$MNT/gpu/1/uuid")" "gpu/1/uuid"
	assert_eq "mlx5_0" "$(cat "$MNT/nic/0/name")" "nic/0/name"
	[[ -d $MNT/gpu/0 && ! -e $MNT/gpu/9 ]] || fail "lookups over io_uring"
	# The requests come over the queues: their threads wake for them.
	local before after
	before=$(ring_wakeups)
	python3 -c "import sys
for _ in range(50): assert open(sys.argv[1]).read() == '0\n'" "$MNT/gpu/0/index" ||
		fail "python's open().read() (an ioctl per open) over io_uring"
	after=$(ring_wakeups)
	((after >= before + 25)) || fail "the io_uring threads woke $before then $after times for 50 ioctls"
	ls -la "$MNT/gpu" >/dev/null || fail "listing over io_uring"
	sed -i 's/memory.total: 16384 MiB/memory.total: 4096 MiB/' "$WORK/extres.yaml"
	reload_hup
	wait_until 10 "the reloaded value" grep -qx "4096 MiB" "$MNT/gpu/0/memory.total"
	assert_eq "$t" "$(status_field transport)" "transport after a reload"
	daemon_stop
}

# The daemon's child that aborts the connection should the daemon die
# without unmounting (os/sentinel.h), or nothing.
sentinel_of() {
	local kids
	kids=$(cat /proc/"$1"/task/*/children 2>/dev/null || true)
	# shellcheck disable=SC2086 # the words, trimmed
	echo $kids
}

# The descriptors of PID that are /dev/fuse.
fuse_fds() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[[ $(readlink "$fd" 2>/dev/null) == /dev/fuse ]] && echo "${fd##*/}"
	done
	return 0
}

gone() {
	! pid_alive "$1"
}

# The mount answers statfs as FUSE (a dead one fails).
serving() {
	[[ $(stat -f -c %t "$MNT" 2>/dev/null) == 65735546 ]]
}

# kill -9 over io_uring while something else keeps the connection's
# /dev/fuse open (as a thread of the daemon stuck on its own mount, or the
# kernel's queue references, would): the kernel then never aborts the
# connection by itself, and without the sentinel every request would wait
# for good. The mount must fail fast instead, the sentinel go, and a new
# daemon mount there again.
case_uring_kill9() {
	it_setup
	set_param Y
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" -o transport=uring "$MNT"
	local sentinel holder
	sentinel=$(sentinel_of "$DAEMON_PID")
	[[ $sentinel =~ ^[0-9]+$ ]] || fail "the daemon's children: '$sentinel', wanted one sentinel"
	assert_eq "" "$(fuse_fds "$sentinel")" "the sentinel's /dev/fuse descriptors"
	local -a fds
	mapfile -t fds < <(fuse_fds "$DAEMON_PID")
	((${#fds[@]} > 0)) || fail "the daemon holds no /dev/fuse"
	# pidfd_getfd (438): a copy of each of the daemon's /dev/fuse.
	python3 -c '
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
pfd = os.pidfd_open(int(sys.argv[1]))
for fd in sys.argv[2:]:
    if libc.syscall(438, pfd, int(fd), 0) < 0:
        sys.exit("pidfd_getfd: " + os.strerror(ctypes.get_errno()))
print("holding", flush=True)
time.sleep(600)' "$DAEMON_PID" "${fds[@]}" >"$WORK/holder.out" 2>&1 &
	holder=$!
	echo "$holder" >"$WORK/holder.pid"
	wait_until 10 "the holder's start" grep -q holding "$WORK/holder.out"
	kill -KILL "$DAEMON_PID"
	daemon_reap
	# The bound only catches a hang: the answer comes at once.
	local says
	says=$(timeout -s KILL 10 stat -f -c %T "$MNT" 2>&1) || true
	[[ $says == *"Transport endpoint is not connected"* || $says == *"connection abort"* ]] ||
		fail "statfs of the mount after kill -9: '$says', wanted ENOTCONN"
	wait_until 10 "the sentinel's exit" gone "$sentinel"
	kill "$holder"
	wait "$holder" 2>/dev/null || true
	# The dead mount is an extresd mount too: wait for one that answers.
	daemon_spawn -f -c "$WORK/extres.yaml" -o transport=uring "$MNT"
	wait_until 10 "the new daemon's mount" serving
	assert_eq "0" "$(cat "$MNT/gpu/0/index")" "gpu/0/index from the new daemon"
	assert_contains "$(cat "$DAEMON_ERR")" "mounted beneath the dead extresd mount" "the new daemon's log"
	sentinel=$(sentinel_of "$DAEMON_PID")
	[[ $sentinel =~ ^[0-9]+$ ]] || fail "the new daemon's children: '$sentinel', wanted one sentinel"
	daemon_stop
	# A clean stop takes its sentinel along.
	! pid_alive "$sentinel" || fail "the sentinel ($sentinel) outlived a clean stop"
}

# Asked for io_uring, which the kernel does not allow: a clear error.
case_uring_off() {
	it_setup
	set_param N
	write_std_config "$WORK/extres.yaml"
	daemon_run_fail -c "$WORK/extres.yaml" -o transport=uring "$MNT"
	assert_startup_error "transport uring" "enable_uring" "$PARAM"
}

# Asked for io_uring, allowed when extresd starts, not when it mounts (a
# discovery script turns the parameter off in between): the start fails.
case_uring_lost() {
	it_setup
	set_param Y
	cat >"$WORK/discover.sh" <<-EOF
	#!/bin/sh
	echo N >$PARAM
	echo 0
	EOF
	chmod 0755 "$WORK/discover.sh"
	printf '%s\n' 'external-resources: fpga' 'external-resource.fpga.amount: 1' \
		'external-resource.fpga.driver: script' \
		"external-resource.fpga.param.discovery-script.path: $WORK/discover.sh" >"$WORK/extres.yaml"
	daemon_run_fail -f -c "$WORK/extres.yaml" -o transport=uring "$MNT"
	assert_startup_error "transport uring" "did not offer io_uring at INIT"
}

# auto without the parameter: /dev/fuse, and why, in the log and status.
case_auto_fallback() {
	it_setup
	set_param N
	write_std_config "$WORK/extres.yaml"
	echo "extres.transport: auto" >>"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_contains "$(status_field transport)" "dev (the fuse module's enable_uring parameter is off" "transport"
	grep -q "serving over /dev/fuse: the fuse module's enable_uring parameter is off" "$DAEMON_ERR" ||
		fail "no fallback line in the log: $(cat "$DAEMON_ERR")"
	assert_eq "0" "$(cat "$MNT/gpu/0/index")" "gpu/0/index over /dev/fuse"
	daemon_stop
}

# auto with the parameter on: io_uring.
case_auto_uring() {
	it_setup
	set_param Y
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" -o transport=auto "$MNT"
	local t
	t=$(status_field transport)
	[[ $t == "uring ("*" queues)" ]] || fail "transport is '$t', wanted io_uring"
	assert_eq "0" "$(cat "$MNT/gpu/0/index")" "gpu/0/index"
	daemon_stop
}

# Without a setting: /dev/fuse, whatever the kernel allows.
case_default() {
	it_setup
	set_param Y
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "dev (the default; extres.transport chooses)" "$(status_field transport)" "transport"
	daemon_stop
}

# extres.transport: dev keeps /dev/fuse, whatever the kernel allows.
case_dev() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	echo "extres.transport: dev" >>"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "dev (asked for)" "$(status_field transport)" "transport"
	assert_eq "0" "$(cat "$MNT/gpu/0/index")" "gpu/0/index"
	"$EXTRESCTL" status "$MNT" >"$WORK/status.out" 2>&1 || fail "extresctl status: $(cat "$WORK/status.out")"
	grep -q "dev (asked for)" "$WORK/status.out" || fail "extresctl status does not say the transport: $(cat "$WORK/status.out")"
	daemon_stop
}

# Misspelt values are named.
case_bad_value() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	daemon_run_fail -c "$WORK/extres.yaml" -o transport=urng "$MNT"
	assert_startup_error "-o transport" "'urng'" "auto, uring or dev"
	echo "extres.transport: io_uring" >>"$WORK/extres.yaml"
	daemon_run_fail -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "$WORK/extres.yaml:" "extres.transport is 'io_uring'" "auto, uring or dev"
}

it_main "$@"
