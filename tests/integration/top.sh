#!/bin/bash
# SPDX-License-Identifier: MIT
#
# extresctl top as a person sees it: run in tmux (its own server socket in
# the case's work dir, an 80x24 window), the tree changed under it (a lease,
# a waiter, a device's health through the mock_live driver, a reload), and
# the screen read back with capture-pane. Plus its plain output, and the
# terminal left as it was found.
#
# usage: top.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LIVE=$BUILDDIR/tests/mock/mock_live.so
TMUX_SOCK=
SESSION=top

tmux_() {
	tmux -S "$TMUX_SOCK" -f /dev/null "$@"
}

top_cleanup() {
	local rc=$?
	if [[ -n $TMUX_SOCK ]]; then
		tmux_ kill-server 2>/dev/null || true
	fi
	it_cleanup "$rc"
}

# The work dir, with tmux required (scripts/deps installs it).
top_setup() {
	it_setup
	if ! command -v tmux >/dev/null; then
		echo "SKIP: $IT_CASE: tmux is not installed (Debian: apt-get install tmux)"
		exit 77
	fi
	TMUX_SOCK=$WORK/tmux.sock
	trap top_cleanup EXIT
}

# A resource `live` of 3 mock devices (health from $WORK/dev), 2 taken,
# through a coordination file, and `nic` of one static device.
top_config() {
	local amount=${1:-2}
	mkdir -p "$WORK/dev"
	cat >"$WORK/extres.yaml" <<-EOF2
	external-resources: live;nic
	external-resource.live.amount: $amount
	external-resource.live.driver: $LIVE
	external-resource.live.param.dir: $WORK/dev
	external-resource.live.param.count: 3
	external-resource.live.coordination-file: $WORK/live.coord
	external-resource.nic.amount: 1
	external-resource.nic.driver: static
	external-resource.nic.param.devices: [{index: "0", name: mlx5_0}]
	EOF2
}

set_health() {
	printf '%s\n' "$2" >"$WORK/dev/health-$1.tmp"
	mv "$WORK/dev/health-$1.tmp" "$WORK/dev/health-$1"
}

screen() {
	tmux_ capture-pane -p -t "$SESSION" 2>/dev/null
}

# screen_has TEXT: the screen shows TEXT.
screen_has() {
	[[ $(screen) == *"$1"* ]]
}

# screen_line RE: the screen has a line matching the ERE.
screen_line() {
	screen | grep -Eq -- "$1"
}

wait_screen() {
	wait_until 20 "screen showing '$1'" screen_has "$1"
}

# A lease of `live` whose command runs until $WORK/$1.go exists.
lease_bg() {
	env --default-signal=INT,QUIT "$EXTRESCTL" -c "$WORK/extres.yaml" run "${@:2}" -- \
		sh -c "while [ ! -e '$WORK/$1.go' ]; do sleep 0.01; done" \
		>/dev/null 2>>"$WORK/lease.err" &
}

# CPU ticks (user + system) of PID.
cpu_ticks() {
	local stat rest
	stat=$(cat "/proc/$1/stat") || return 1
	rest=${stat##*) }
	# shellcheck disable=SC2086
	set -- $rest
	echo $((${12} + ${13}))
}

# The PID of top in the pane.
top_pid() {
	pgrep -f -- "extresctl top $MNT\$" | head -n 1
}

case_once() {
	it_setup
	top_config
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local out
	out=$("$EXTRESCTL" top "$MNT") || fail "top: $out"
	assert_eq "extres top $MNT  generation 0  reloads 0  conflicts 0
last reload -  unhealthy 0  sort resource  filter all
RES     DEV KEY  NAME         HEALTH  COMMAND   USER     LEASE         SINCE" \
		"$(head -n 3 <<<"$out")" "the head of the snapshot"
	[[ $(grep -c '^live    [01]   [01]    -            ok      extresd   root     (daemon)      [0-9:]\{8\}$' <<<"$out") == 2 ]] ||
		fail "the devices of live: $out"
	assert_contains "$out" $'\nnic     0   0    mlx5_0       -       -         -        -             -\n' "nic"
	assert_eq "waiting: none" "$(tail -n 1 <<<"$out")" "no waiters"
	# Every line fits 80 columns; --filter and --sort.
	[[ -z $(awk 'length > 80' <<<"$out") ]] || fail "lines over 80 columns: $out"
	out=$("$EXTRESCTL" top --once --filter nic --sort health "$MNT") || fail "top --filter: $out"
	assert_contains "$out" "sort health  filter nic" "the view's settings"
	[[ $out != *$'\nlive '* ]] || fail "the filter let live through: $out"
	out=$("$EXTRESCTL" top --sort size "$MNT" 2>&1) && fail "a bad --sort was taken"
	assert_contains "$out" "top: --sort 'size' is none of resource, health, holder" "bad --sort"
	daemon_stop
}

case_live() {
	top_setup
	top_config
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	# The pane's shell records the terminal's settings before and after.
	tmux_ new-session -d -s "$SESSION" -x 80 -y 24 \
		"stty -g >'$WORK/stty.before'; '$EXTRESCTL' top '$MNT' 2>'$WORK/top.err'; echo \$? >'$WORK/top.rc'; stty -g >'$WORK/stty.after'; sleep 300" ||
		fail "tmux new-session failed"
	wait_screen "extres top $MNT"
	wait_until 20 "the daemon's devices on screen" screen_line '^live +1 +[01] .*extresd +root +\(daemon\)'
	# Every line fits the 80 columns.
	[[ -z $(screen | awk 'length > 80') ]] || fail "a line over 80 columns: $(screen)"
	local pid t0 t1
	pid=$(top_pid)
	[[ -n $pid ]] || fail "no extresctl top process"
	# Idle, it sleeps until woken: no CPU in a second of nothing.
	t0=$(cpu_ticks "$pid")
	sleep 1
	t1=$(cpu_ticks "$pid")
	((t1 - t0 <= 2)) || fail "top used $((t1 - t0)) ticks of CPU while nothing changed"

	# A lease: the third device, held by its command.
	lease_bg one live=1
	wait_until 20 "the lease on screen" screen_line '^live +- +2 +.* sh +root +[0-9]+-[0-9]+ +[0-9:]{8}$'
	# A waiter, queued behind it.
	lease_bg two --wait=60 live=1
	wait_until 20 "the waiter on screen" screen_line '^waiting live: ticket [0-9]+ pid [0-9]+ root extresctl$'
	touch "$WORK/one.go"
	wait_until 20 "the waiter served" screen_has "waiting: none"

	# A device turns sick: its health on screen, the count in the head.
	set_health 0 xid-79
	wait_until 20 "the sick device" screen_line '^live +0 +0 +- +xid-79 '
	wait_screen "unhealthy 1"

	# A reload.
	top_config 1
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload: $out"
	wait_until 20 "the reload on screen" screen_line "generation 1  reloads 1 "
	touch "$WORK/two.go"

	# Keys: filter by resource, sort, all again.
	tmux_ send-keys -t "$SESSION" f
	wait_screen "filter live"
	screen_line '^nic ' && fail "the filter let nic through: $(screen)"
	tmux_ send-keys -t "$SESSION" f
	wait_screen "filter nic"
	tmux_ send-keys -t "$SESSION" s
	wait_screen "sort health"
	tmux_ send-keys -t "$SESSION" a
	wait_screen "filter all"
	screen_has "q quit  s sort  f filter resource  a all" || fail "no key line: $(screen)"

	# q: top ends, the terminal as it was.
	tmux_ send-keys -t "$SESSION" q
	wait_until 20 "top's exit" test -s "$WORK/stty.after"
	assert_eq 0 "$(cat "$WORK/top.rc")" "top's exit status after q (stderr: $(cat "$WORK/top.err"))"
	assert_eq "" "$(cat "$WORK/top.err")" "top's stderr"
	assert_eq "$(cat "$WORK/stty.before")" "$(cat "$WORK/stty.after")" "the terminal after q"
	daemon_stop
}

# SIGTERM and SIGINT (^C) end it too, with the terminal restored.
case_signals() {
	top_setup
	top_config
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local sig pid
	for sig in TERM INT; do
		rm -f "$WORK/stty.after"
		# A session each: the server stays up (a server that is
		# exiting would refuse the next session).
		SESSION=top-$sig
		tmux_ new-session -d -s "$SESSION" -x 80 -y 24 \
			"stty -g >'$WORK/stty.before'; '$EXTRESCTL' top '$MNT'; stty -g >'$WORK/stty.after'; sleep 300" ||
			fail "tmux new-session failed"
		wait_screen "extres top $MNT"
		wait_until 20 "top's key line" screen_has "q quit"
		pid=$(top_pid)
		[[ -n $pid ]] || fail "no extresctl top process"
		if [[ $sig == INT ]]; then
			tmux_ send-keys -t "$SESSION" C-c
		else
			kill -TERM "$pid"
		fi
		wait_until 20 "top's exit on SIG$sig" test -s "$WORK/stty.after"
		assert_eq "$(cat "$WORK/stty.before")" "$(cat "$WORK/stty.after")" "the terminal after SIG$sig"
		screen_has "extres top" && fail "the alternate screen stayed after SIG$sig: $(screen)"
	done
	daemon_stop
}

it_main "$@"
