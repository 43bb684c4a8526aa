# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# A daemon that does not answer (SIGSTOP stands in for a deadlock) must not
# hang the tools around it: extresctl status and reload, and a new extresd
# on the same mount point, each give up at their deadline with "extresd at
# MNT is not responding", and a new extresd still obeys SIGTERM at once.
#
# usage: hang.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

STOPPED=

# Let a stopped daemon go on before the harness cleans up, so that it can
# unmount and exit rather than be killed.
hang_cleanup() {
	local rc=$?
	set +e
	[[ -z $STOPPED ]] || kill -CONT "$STOPPED" 2>/dev/null
	it_cleanup "$rc"
}

# Mount the standard tree and stop its daemon.
start_and_stop() {
	it_setup
	trap hang_cleanup EXIT
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	kill -STOP "$DAEMON_PID" || fail "cannot stop extresd"
	STOPPED=$DAEMON_PID
}

# Let it go on; it must still serve and stop cleanly.
resume_and_stop() {
	kill -CONT "$DAEMON_PID" || fail "cannot resume extresd"
	STOPPED=
	assert_eq "$STD_LISTING" "$(tree_listing "$MNT")" "tree after SIGCONT"
	daemon_stop
}

# timed OUT ERR CMD ARGS...: run CMD (killed after 20 s: a hang), set
# TIMED_STATUS and TIMED_SECONDS.
timed() {
	local out=$1 err=$2 t0 t1
	shift 2
	t0=$(date +%s%N)
	TIMED_STATUS=0
	timeout -s KILL 20 "$@" >"$out" 2>"$err" </dev/null || TIMED_STATUS=$?
	t1=$(date +%s%N)
	TIMED_SECONDS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	[[ $TIMED_STATUS != 137 ]] || fail "$* did not return within 20 s"
	it_log "$* returned $TIMED_STATUS after $TIMED_SECONDS s"
}

# assert_within SECONDS: TIMED_SECONDS is below it.
assert_within() {
	awk -v t="$TIMED_SECONDS" -v max="$1" 'BEGIN { exit !(t < max) }' ||
		fail "took $TIMED_SECONDS s, wanted less than $1 s"
}

# The tool's one line on stderr: exit 1, nothing on stdout.
assert_not_responding() {
	local prog=$1 seconds=$2
	[[ $TIMED_STATUS == 1 ]] || fail "exit status $TIMED_STATUS, wanted 1; stderr: $(cat "$WORK/t.err")"
	assert_eq "" "$(cat "$WORK/t.out")" "stdout"
	assert_eq "$prog: error: extresd at $MNT is not responding (no answer within $seconds s)" \
		"$(cat "$WORK/t.err")" "stderr"
}

# extresctl status: the default deadline of 5 s, then --timeout.
case_status() {
	start_and_stop
	timed "$WORK/t.out" "$WORK/t.err" "$EXTRESCTL" status "$MNT"
	assert_not_responding extresctl 5
	assert_within 6
	timed "$WORK/t.out" "$WORK/t.err" "$EXTRESCTL" status --json --timeout 1 "$MNT"
	assert_not_responding extresctl 1
	assert_within 2
	resume_and_stop
}

# extresctl reload --timeout 2: within 2 s, though each access may
# otherwise take 5.
case_reload() {
	start_and_stop
	timed "$WORK/t.out" "$WORK/t.err" "$EXTRESCTL" reload --timeout 2 "$MNT"
	assert_not_responding extresctl 2
	assert_within 3
	resume_and_stop
}

# A new extresd on the mount point: it finds the start-up lock held and the
# mount there, and must not call a daemon "running" that does not answer.
case_extresd() {
	start_and_stop
	timed "$WORK/t.out" "$RUN_ERR" env --default-signal=INT,QUIT \
		"$EXTRESD" -f -c "$WORK/extres.yaml" "$MNT"
	mv "$RUN_ERR" "$WORK/t.err"
	assert_not_responding extresd 5
	assert_within 6
	resume_and_stop
}

# Whether extresd PID asks the mount: its question runs in a child
# (os/deadline.h), which the stopped daemon never answers.
asking() {
	[[ -n $(pgrep -P "$1") ]] && return 0
	pid_alive "$1" || fail "the second extresd exited before SIGTERM: $(cat "$WORK/t.err")"
	return 1
}

# The same past the lock (its file removed, as a daemon of another user or
# an older version would not have it): the mount point's own check asks
# the daemon, within the deadline; and SIGTERM ends that wait at once.
case_extresd_unlocked() {
	local lock pid t0 t1
	start_and_stop
	lock=$(runlock_file "$MNT")
	[[ -n $lock ]] || fail "no lock file for $MNT"
	rm -f "$lock"
	timed "$WORK/t.out" "$RUN_ERR" env --default-signal=INT,QUIT \
		"$EXTRESD" -f -c "$WORK/extres.yaml" "$MNT"
	mv "$RUN_ERR" "$WORK/t.err"
	assert_not_responding extresd 5
	assert_within 6

	rm -f "$(runlock_file "$MNT")"
	env --default-signal=INT,QUIT "$EXTRESD" -f -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/t.out" 2>"$WORK/t.err" </dev/null &
	pid=$!
	echo "$pid" >"$WORK/second.pid"
	wait_until 10 "the second extresd asking the stopped daemon" asking "$pid"
	t0=$(date +%s%N)
	kill -TERM "$pid"
	wait_until 10 "the second extresd gone after SIGTERM" pid_gone "$pid"
	t1=$(date +%s%N)
	TIMED_SECONDS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
	it_log "SIGTERM ended the waiting extresd after $TIMED_SECONDS s"
	assert_within 2.5
	TIMED_STATUS=0
	wait "$pid" || TIMED_STATUS=$?
	[[ $TIMED_STATUS == 0 ]] || fail "extresd exited with status $TIMED_STATUS after SIGTERM, wanted 0: $(cat "$WORK/t.err")"
	assert_eq "extresd: stopped during start-up" "$(cat "$WORK/t.err")" "stderr after SIGTERM"
	resume_and_stop
}

it_main "$@"
