#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Devices that change while extresd serves them: a driver that asks for a
# refresh by itself (host->request_refresh()), `health` keeping sick
# devices from new holders, and poll()/epoll waking readers on a change.
# The mock_live driver reads each device's `health` and `value` from files
# in $WORK/dev and asks for a refresh when one changes.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

LIVE=$BUILDDIR/tests/mock/mock_live.so

# live_config COUNT AMOUNT [EXTRA...]: a resource `live` of COUNT devices,
# AMOUNT of them taken; EXTRA lines appended.
live_config() {
	local count=$1 amount=$2
	shift 2
	mkdir -p "$WORK/dev"
	{
		printf '%s\n' 'external-resources: live' \
			"external-resource.live.amount: $amount" \
			"external-resource.live.driver: $LIVE" \
			"external-resource.live.param.dir: $WORK/dev" \
			"external-resource.live.param.count: $count"
		printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
}

# set_dev FIELD I VALUE: what the mock driver reports next for device I.
set_dev() {
	printf '%s\n' "$3" >"$WORK/dev/$1-$2.tmp"
	mv "$WORK/dev/$1-$2.tmp" "$WORK/dev/$1-$2"
}

# until_reads SECONDS FILE VALUE: FILE reads VALUE within SECONDS (a bound
# that catches a hang; the daemon's own delay is ~20-100 ms).
until_reads() {
	local secs=$1 file=$2 want=$3
	poll_until "$secs" content_is "$file" "$want" ||
		fail "$file: wanted '$want' within $secs s, still '$(cat "$file" 2>/dev/null)'"
}

# Whether PID sleeps in poll() or epoll_wait(): a poll that found its event
# ready returns without sleeping.
sleeps_in_poll() {
	proc_sleeps_in "$1" '*poll*' 7 232 271 281 441
}

# A driver's request reaches the files without any refresh-interval.
case_request_refresh() {
	it_setup
	[[ -f $LIVE ]] || fail "$LIVE is missing"
	live_config 2 2
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "-" "$(cat "$MNT/live/1/value")" "value before"
	set_dev value 1 changed
	until_reads 5 "$MNT/live/1/value" changed
	set_dev value 1 again
	until_reads 5 "$MNT/live/1/value" again
	# The same driver with nothing asking: no refresh-interval, no change.
	daemon_stop
	# Beside it a resource whose driver asks: once that one's change
	# shows, the quiet one's would have had anything asked for it.
	live_config 2 2 'external-resource.live.param.quiet: yes' \
		'external-resource.loud.amount: 1' \
		"external-resource.loud.driver: $LIVE" \
		"external-resource.loud.param.dir: $WORK/loud" \
		'external-resource.loud.param.count: 1'
	sed -i 's/^external-resources: live$/external-resources: live;loud/' "$WORK/extres.yaml"
	mkdir -p "$WORK/loud"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	set_dev value 1 unheard
	printf 'heard\n' >"$WORK/loud/value-0"
	until_reads 5 "$MNT/loud/0/value" heard
	assert_eq again "$(cat "$MNT/live/1/value")" "value of a quiet driver"
	daemon_stop
}

# A sick device is not taken; a held one that turns sick stays, and says so.
case_alloc_skips() {
	it_setup
	live_config 3 2 "external-resource.live.coordination-file: $WORK/live.coord"
	set_dev health 0 xid-79
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "1 2" "$(cat "$MNT"/live/*/index | tr '\n' ' ' | sed 's/ $//')" \
		"indexes taken with device 0 sick"
	assert_eq "1 2" "$(awk '{print $1}' "$WORK/live.coord" | sort | tr '\n' ' ' | sed 's/ $//')" \
		"coordination file"
	grep -qx 'unhealthy 0' "$MNT/.meta/status" || fail "status: $(cat "$MNT/.meta/status")"
	set_dev health 2 ecc-dbe
	until_reads 5 "$MNT/live/1/health" ecc-dbe
	assert_eq 2 "$(cat "$MNT/live/1/index")" "the sick device is still held"
	wait_until 5 "the sick device in .meta/status" \
		grep -qx 'unhealthy-device live 1 ecc-dbe' "$MNT/.meta/status"
	{ grep -qx 'unhealthy 1' "$MNT/.meta/status" &&
		grep -qx 'unhealthy-device live 1 ecc-dbe' "$MNT/.meta/status"; } ||
		fail "status: $(cat "$MNT/.meta/status")"
	"$EXTRESCTL" status "$MNT" >/dev/null 2>"$WORK/status.err" || true
	assert_contains "$(cat "$WORK/status.err")" \
		"held, but its driver says it is not healthy: live 1 ecc-dbe" "extresctl status"
	# Too few healthy ones: the error says why.
	daemon_stop
	set_dev health 1 xid-48
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'live': wanted 2, found 0 free of 3" \
		"; 3 not healthy (health)"
}

# A lease skips sick devices too.
case_lease_skips() {
	it_setup_nofuse
	live_config 3 1 "external-resource.live.coordination-file: $WORK/live.coord"
	set_dev health 0 xid-79
	set_dev health 1 xid-79
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" run live=1 -- cat "$WORK/live.coord") ||
		fail "run: $out"
	assert_eq 2 "$(awk '{print $1}' <<<"$out")" "the lease's device"
	if out=$("$EXTRESCTL" -c "$WORK/extres.yaml" run live=2 -- true 2>&1); then
		fail "a lease of 2 with one healthy device: $out"
	fi
	assert_contains "$out" "2 not healthy (health)" "lease error"
}

# poll() and epoll wait until the value changes, then report POLLPRI.
case_poll() {
	it_setup
	live_config 2 2
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local how
	for how in poll epoll; do
		"$PROBE" "$how" "$MNT/live/1/health" 20000 >"$WORK/$how.out" &
		local prober=$!
		until_reads 5 "$WORK/$how.out" "read $([[ $how == poll ]] && echo ok || echo xid-79)"
		# It waits: an unchanged file has nothing to report.
		wait_until 10 "$how asleep on an unchanged file" sleeps_in_poll "$prober"
		pid_alive "$prober" || fail "$how returned before any change: $(cat "$WORK/$how.out")"
		set_dev health 1 "$([[ $how == poll ]] && echo xid-79 || echo ok)"
		local t0=$SECONDS
		wait "$prober" || fail "probe $how failed"
		((SECONDS - t0 < 15)) || fail "$how woke only at its timeout"
		if [[ $how == poll ]]; then
			assert_eq "read ok
poll POLLPRI POLLERR
same ok
reopen xid-79" "$(cat "$WORK/$how.out")" "$how on a changed health"
		else
			assert_eq "read xid-79
poll POLLPRI POLLERR
same xid-79
reopen ok" "$(cat "$WORK/$how.out")" "$how on a changed health"
		fi
	done
	# As in sysfs, a file is always readable: POLLIN alone never waits.
	assert_eq "read ok
poll POLLIN
same ok
reopen ok" "$("$PROBE" pollin "$MNT/live/0/health" 20000)" "poll for POLLIN"
	# A change elsewhere does not wake it.
	"$PROBE" poll "$MNT/live/0/health" 2000 >"$WORK/other.out" &
	prober=$!
	wait_until 10 "poll asleep on health" sleeps_in_poll "$prober"
	set_dev value 0 elsewhere
	wait "$prober" || fail "probe poll failed"
	assert_eq "read ok
poll TIMEOUT
same ok
reopen ok" "$(cat "$WORK/other.out")" "poll on an unchanged file"
	# .meta/status changes with every generation.
	"$PROBE" poll "$MNT/.meta/status" 20000 >"$WORK/status.out" &
	local prober=$!
	until_reads 5 "$WORK/status.out" "read pid $DAEMON_PID"
	"$EXTRESCTL" reload "$MNT" >/dev/null || fail "reload failed"
	wait "$prober" || fail "probe failed"
	assert_contains "$(cat "$WORK/status.out")" "poll POLLPRI POLLERR" "poll on .meta/status"
	daemon_stop
}

# extresctl watch: the shell's way to wait.
case_watch() {
	it_setup
	live_config 1 1
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	"$EXTRESCTL" watch --follow --timeout 30 "$MNT/live/0/health" >"$WORK/watch.out" &
	local watcher=$!
	until_reads 5 "$WORK/watch.out" ok
	set_dev health 0 xid-79
	until_reads 5 "$WORK/watch.out" "ok
xid-79"
	set_dev health 0 ok
	until_reads 5 "$WORK/watch.out" "ok
xid-79
ok"
	kill "$watcher"
	wait "$watcher" || true
	# One change, then exit 0.
	"$EXTRESCTL" watch --timeout 30 "$MNT/live/0/health" >"$WORK/once.out" &
	watcher=$!
	# It waits once it sleeps in poll(), past reading its starting value:
	# a change before would be that value.
	wait_until 10 "watch asleep on $MNT/live/0/health" sleeps_in_poll "$watcher"
	set_dev health 0 ecc-dbe
	wait "$watcher" || fail "watch exited with $?"
	assert_eq ecc-dbe "$(cat "$WORK/once.out")" "watch without --follow"
	# No change in time: 1, said.
	if out=$("$EXTRESCTL" watch --timeout 1 "$MNT/live/0/value" 2>&1); then
		fail "watch without a change exited 0: $out"
	fi
	assert_contains "$out" "$MNT/live/0/value: no change within 1 s" "watch timeout"
	# A file that cannot be waited on is refused, not spun on.
	echo x >"$WORK/plain"
	if out=$("$EXTRESCTL" watch --timeout 5 "$WORK/plain" 2>&1); then
		fail "watch on a plain file exited 0: $out"
	fi
	assert_contains "$out" "this file cannot be waited on" "watch on tmpfs"
	# A daemon that never answers cannot hold it past the timeout.
	kill -STOP "$DAEMON_PID"
	local t0=$SECONDS st=0
	timeout 20 "$EXTRESCTL" watch --timeout 1 "$MNT/.meta/status" >/dev/null 2>&1 || st=$?
	kill -CONT "$DAEMON_PID"
	[[ $st == 142 ]] || fail "watch on a stopped daemon: status $st, wanted 142 (SIGALRM)"
	((SECONDS - t0 < 15)) || fail "watch on a stopped daemon took $((SECONDS - t0)) s"
	daemon_stop
}

it_main "$@"
