#!/bin/bash
# SPDX-License-Identifier: MIT
#
# A device is never held by two processes: extresd beside Flink-style
# scripts and against other local users. Each case reproduces one way the
# promise broke (see COORDINATION FILE in extresd(8)).
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

WRITER=$(dirname "$0")/flink-writer.sh
NOBODY=65534

# A static gpu resource over INDEXES taking AMOUNT, coordinated through FILE;
# EXTRA lines are appended to the config.
gpu_config() {
	local amount=$1 indexes=$2 file=$3
	shift 3
	{
		printf '%s\n' 'external-resources: gpu' \
			"external-resource.gpu.amount: $amount" \
			'external-resource.gpu.driver: static' \
			"external-resource.gpu.param.indexes: $indexes" \
			"external-resource.gpu.coordination-file: $file"
		printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
}

# A script resource whose script prints OUTPUT and is told to coordinate
# with Flink's documented spelling, which the script does not know.
flag_config() {
	local file=$1 output=$2 cfg=$3
	printf '#!/bin/sh\n# ignores every argument, as a script that does not know the flag\necho %s\n' "$output" >"$WORK/discover.sh"
	chmod 0755 "$WORK/discover.sh"
	printf '%s\n' 'external-resources: gpu' \
		'external-resource.gpu.amount: 2' \
		'external-resource.gpu.driver: script' \
		"external-resource.gpu.param.discovery-script.path: $WORK/discover.sh" \
		"external-resource.gpu.param.discovery-script.args: --enable-coordination --coordination-file $file" \
		>"$cfg"
}

# Start a second daemon (config $1, mount point $2) in the background; its
# PID in PID2, its stderr in $WORK/d2.err.
start_second() {
	mkdir -p "$2"
	env --default-signal=INT,QUIT "$EXTRESD" -f -c "$1" "$2" \
		>/dev/null 2>"$WORK/d2.err" &
	PID2=$!
	wait_until 10 "the second extresd's mount at $2" second_mounted "$2"
}

second_mounted() {
	is_our_mount "$1" && return 0
	pid_alive "$PID2" || fail "second extresd died: $(cat "$WORK/d2.err")"
	return 1
}

stop_second() {
	kill "$PID2"
	wait "$PID2" || fail "second extresd exited with status $?: $(cat "$WORK/d2.err")"
}

# A script told --enable-coordination that ignores it: extresd checks the
# file after the script and records every device itself. Two daemons get
# disjoint devices, all recorded; with a script that returns only the
# amount (the first ones, as Flink's does without coordination), the
# second daemon fails naming the first one's PID and command line.
case_flag_ignored() {
	it_setup
	local coord=$WORK/gpu.coord st1 st2 a b
	flag_config "$coord" 0,1,2,3 "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	start_second "$WORK/extres.yaml" "$WORK/mnt2"
	a="$(cat "$MNT"/gpu/*/index | tr '\n' ' ')"
	b="$(cat "$WORK"/mnt2/gpu/*/index | tr '\n' ' ')"
	assert_eq "0 1 " "$a" "devices of the first daemon"
	assert_eq "2 3 " "$b" "devices of the second daemon"
	st1=$(proc_starttime "$DAEMON_PID")
	st2=$(proc_starttime "$PID2")
	assert_file "$coord" "0 $DAEMON_PID$T$st1
1 $DAEMON_PID$T$st1
2 $PID2$T$st2
3 $PID2$T$st2
"
	stop_second
	assert_file "$coord" "0 $DAEMON_PID$T$st1
1 $DAEMON_PID$T$st1
"
	# Only the amount returned, and it is held: refused, naming who.
	flag_config "$coord" 0,1 "$WORK/first.yaml"
	daemon_run_fail -f -c "$WORK/first.yaml" "$WORK/mnt2"
	MNT=$WORK/mnt2 assert_startup_error "resource 'gpu': wanted 2, found 0 free of the 2 its discovery script returned (coordination file $coord); device index 0 is held by PID $DAEMON_PID ($EXTRESD -f -c $WORK/extres.yaml $MNT)"
	assert_file "$coord" "0 $DAEMON_PID$T$st1
1 $DAEMON_PID$T$st1
"
	daemon_stop
	assert_file "$coord" ""
}

# extresctl check says which coordination will really happen.
case_flag_check() {
	it_setup_nofuse
	local coord=$WORK/gpu.coord out
	flag_config "$coord" 0,1 "$WORK/extres.yaml"
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>&1) || fail "extresctl check failed: $out"
	assert_contains "$out" "gpu: coordination: the discovery script is asked to record its devices in $coord (--enable-coordination); extresd records any it did not" "extresctl check"
	gpu_config 1 0,1 "$coord"
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>&1) || fail "extresctl check failed: $out"
	assert_contains "$out" "gpu: coordination: extresd records its devices in $coord" "extresctl check"
}

# Set OWNER to a sleeping process whose PID ends in 1 (and not in 11, so
# that "1 " is in it only where Flink's sed would find it), with a start
# time recorded after a tab by extres.
start_owner_ending_in_1() {
	local pid _
	for _ in $(seq 400); do
		sleep 300 </dev/null >/dev/null 2>&1 &
		pid=$!
		if [[ $pid == *1 && $pid != *11 ]]; then
			OWNER=$pid
			echo "$pid" >"$WORK/owner.pid"
			return 0
		fi
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
	fail "no PID ending in 1 in 400 tries"
}

# Flink frees a dead owner's index 1 with `sed -i "/1 /d"` while extresd
# holds index 3 for a PID ending in 1: with the start time after a tab,
# the line does not match and survives. A line that goes anyway (as Flink's
# reclaiming 3 also deletes "13 ...") is written back within a second.
case_sed_reclaim() {
	it_setup
	local coord=$WORK/gpu.coord st line dead
	start_owner_ending_in_1
	dead=$(dead_pid)
	gpu_config 1 3 "$coord"
	daemon_start --owner-pid "$OWNER" -c "$WORK/extres.yaml" "$MNT"
	st=$(proc_starttime "$OWNER")
	line="3 $OWNER$T$st"
	assert_file "$coord" "$line"$'\n'
	printf '1 %s\n' "$dead" >>"$coord"
	bash "$WRITER" --reclaim "$coord" 1
	assert_file "$coord" "$line"$'\n'
	# Deleted anyway: back within a second (the guard), as the same line.
	bash "$WRITER" --reclaim "$coord" 3
	wait_until 10 "our line written back to $coord" content_is "$coord" "$line"
	assert_file "$coord" "$line"$'\n'
	grep -q "1 line of ours had gone from $coord; written back" "$DAEMON_ERR" ||
		fail "no warning about the line written back: $(cat "$DAEMON_ERR")"
	sed -i '/written back/d' "$DAEMON_ERR"
	kill "$OWNER"
	daemon_expect_exit 0 "after its owner exited"
	assert_file "$coord" ""
}

# A Flink-style writer takes the device in the gap after our line went: a
# conflict, in .meta/status and `extresctl status` (exit 1) within a
# second; extresd keeps serving, and a reload does not quietly drop the
# device. Once the other holder is gone, the line is ours again.
case_sed_conflict() {
	it_setup
	local coord=$WORK/gpu.coord st out status=0 s
	gpu_config 1 0 "$coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	st=$(proc_starttime "$DAEMON_PID")
	sleep 300 </dev/null >/dev/null 2>&1 &
	s=$!
	echo "$s" >"$WORK/sleeper.pid"
	wait_until 10 "the sleeper ($s) exec'ing sleep" comm_is "$s" sleep
	# In one rename, as sed -i does: our line gone, the device taken.
	printf '0 %s\n' "$s" >"$coord.new"
	mv "$coord.new" "$coord"
	wait_until 10 "a conflict in .meta/status" grep -q '^conflict ' "$MNT/.meta/status"
	assert_contains "$(cat "$MNT/.meta/status")" "conflicts 1
conflict resource 'gpu': device index 0 is held by PID $s (sleep 300) in coordination file $coord" ".meta/status"
	out=$("$EXTRESCTL" status "$MNT" 2>&1) || status=$?
	assert_eq 1 "$status" "exit status of extresctl status with a conflict"
	assert_contains "$out" "extresctl: error: conflict: resource 'gpu': device index 0 is held by PID $s (sleep 300)" "extresctl status"
	assert_file "$MNT/gpu/0/index" $'0\n'
	# A reload may not hand the device over to "resolve" it.
	"$EXTRESCTL" reload "$MNT" >"$WORK/reload.out" 2>&1 && fail "reload over a conflict succeeded"
	assert_contains "$(cat "$WORK/reload.out")" "device index 0 is held by PID $s" "extresctl reload"
	assert_file "$MNT/gpu/0/index" $'0\n'
	kill "$s"
	wait "$s" 2>/dev/null || true
	wait_until 10 "no conflict in .meta/status" grep -q '^conflicts 0$' "$MNT/.meta/status"
	assert_contains "$(cat "$MNT/.meta/status")" "conflicts 0" ".meta/status once the other holder is gone"
	assert_file "$coord" "0 $s
0 $DAEMON_PID$T$st
"
	"$EXTRESCTL" status "$MNT" >/dev/null || fail "extresctl status still fails"
	grep -q "conflict: resource 'gpu'" "$DAEMON_ERR" || fail "the conflict was not logged"
	sed -i '/conflict: resource/d; /reload failed/d' "$DAEMON_ERR"
	daemon_stop
}

# Right after extresd wrote its line back, another writer takes the lock and
# rewrites the file in place with the device taken, in as many bytes,
# within the same clock tick. Where a file's times come from the coarse
# clock (ramfs here; ext4, xfs and tmpfs before Linux 6.13) its stat() is
# then exactly as extresd left it: a conflict all the same, within a second.
case_same_tick_rewrite() {
	it_setup
	local dir=$WORK/ticks coord st ours theirs out s i
	mkdir "$dir"
	if ! mount -t ramfs -o mode=0755 extres-it "$dir" 2>/dev/null; then
		echo "SKIP: $IT_CASE: cannot mount a ramfs (root only), the file system with coarse times here"
		exit 77
	fi
	coord=$dir/gpu.coord
	gpu_config 1 0 "$coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	st=$(proc_starttime "$DAEMON_PID")
	ours="0 $DAEMON_PID$T$st"
	assert_file "$coord" "$ours"$'\n'
	sleep 300 </dev/null >/dev/null 2>&1 &
	s=$!
	echo "$s" >"$WORK/sleeper.pid"
	wait_until 10 "the sleeper ($s) exec'ing sleep" comm_is "$s" sleep
	# The other's line padded to ours: Flink reads only KEY PID.
	theirs=$(printf '%-*s' "${#ours}" "0 $s")
	# "late": a tick passed before the lock was ours; nothing written.
	for ((i = 0; i < 50; i++)); do
		out=$("$PROBE" sametick "$coord" "$theirs"$'\n')
		[[ $out == late ]] || break
	done
	case $out in
	same-tick) ;;
	other-tick) it_log "note: the rewrite crossed a clock tick; stat() showed it" ;;
	late)
		echo "SKIP: $IT_CASE: no rewrite within the clock tick of extresd's in $i tries (a machine this loaded cannot show it)"
		exit 77
		;;
	*) fail "rewrite right after extresd's: $out" ;;
	esac
	wait_until 10 "a conflict in .meta/status" grep -q '^conflict ' "$MNT/.meta/status"
	assert_contains "$(cat "$MNT/.meta/status")" "conflict resource 'gpu': device index 0 is held by PID $s (sleep 300) in coordination file $coord" ".meta/status"
	kill "$s"
	wait "$s" 2>/dev/null || true
	wait_until 10 "no conflict in .meta/status" grep -q '^conflicts 0$' "$MNT/.meta/status"
	sed -i '/written back/d; /conflict: resource/d' "$DAEMON_ERR"
	daemon_stop
}

# A file another user made first in a sticky world-writable directory (as
# /var/tmp): refused, naming it, its owner and its mode; nothing recorded.
case_precreated() {
	it_setup
	local dir=$WORK/vartmp coord
	chmod 0755 "$WORK"
	mkdir "$dir"
	chmod 1777 "$dir"
	coord=$dir/gpu.coord
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- \
		sh -c 'umask 0; : >"$1"' sh "$coord" ||
		fail "cannot create $coord as nobody"
	gpu_config 1 0,1 "$coord"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': coordination file $coord could be modified by another user: it is owned by uid $NOBODY (mode 0666)"
	assert_file "$coord" ""
	# A directory others may write without the sticky bit: not even made.
	chmod 0777 "$dir"
	rm "$coord"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "coordination file $coord could be modified by another user: directory $dir is world-writable without the sticky bit (mode 0777)"
	[[ ! -e $coord ]] || fail "$coord was created"
	# Our own file there, in a sticky directory, is fine.
	chmod 1777 "$dir"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	[[ $(stat -c '%u %a' "$coord") == "0 660" ]] || fail "$coord is $(stat -c '%u %a' "$coord")"
	daemon_stop
}

# Anyone who can open the file can hold a shared lock on it forever: every
# wait has a deadline (extres.lock-timeout) and names the holder, and a stop
# is obeyed within a second even during a stuck reload.
# `flock -s FILE CMD` as nobody, in the background; HOLDER is its PID (the
# one /proc/locks shows), once the lock is held. The file is made 0644
# first: extres makes its files 0660, which nobody could not open.
hold_shared() {
	chmod 0644 "$1"
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- \
		flock -s "$1" sleep 600 </dev/null >/dev/null 2>&1 &
	HOLDER=$!
	echo "$HOLDER" >"$WORK/holder.pid"
	wait_until 10 "flock -s $1 holding the lock" grep -q " $HOLDER " /proc/locks
}

# The lock lives as long as flock's child (sleep) keeps the file open.
release_shared() {
	pkill -P "$HOLDER" || true
	kill "$HOLDER" 2>/dev/null || true
	wait "$HOLDER" 2>/dev/null || true
}

case_lock_frozen() {
	it_setup
	local coord=$WORK/gpu.coord t0 t1 out
	chmod 0755 "$WORK"
	gpu_config 1 0,1 "$coord" 'extres.lock-timeout: 1'
	: >"$coord"
	hold_shared "$coord"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': timed out after 1.000 s waiting for the lock on coordination file $coord; held by PID $HOLDER (flock -s $coord sleep 600)"
	awk -v s="$RUN_SECONDS" 'BEGIN { exit !(s < 2.5) }' || fail "start-up took $RUN_SECONDS s with lock-timeout 1"
	assert_file "$coord" ""

	out=$("$EXTRESCTL" coord list --timeout 1 "$coord" 2>&1) && fail "coord list succeeded: $out"
	assert_contains "$out" "timed out after 1.000 s waiting for the lock on coordination file $coord; held by PID $HOLDER" "extresctl coord list"
	release_shared

	# A running daemon, a reload stuck on the lock, SIGTERM: exit 0 within
	# a second, nothing mounted.
	gpu_config 1 0,1 "$coord" 'extres.lock-timeout: 60'
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	hold_shared "$coord"
	gpu_config 2 0,1 "$coord" 'extres.lock-timeout: 60'
	kill -HUP "$DAEMON_PID"
	wait_until 10 "the reload" grep -q 'reloading' "$DAEMON_ERR"
	# Stuck: the reload has the file open and polls for its lock.
	wait_until 10 "the reload waiting for the lock" pid_has_open "$DAEMON_PID" "$coord"
	t0=$(date +%s%N)
	kill -TERM "$DAEMON_PID"
	daemon_reap
	t1=$(date +%s%N)
	assert_eq 0 "$DAEMON_STATUS" "exit status after SIGTERM during a stuck reload"
	(((t1 - t0) / 1000000 < 1000)) || fail "SIGTERM during a stuck reload took $(((t1 - t0) / 1000000)) ms"
	! is_mounted "$MNT" || fail "$MNT still mounted"
	release_shared
}

# Six resources on one file whose lock another user holds: a stop waits for
# the locks at most once, not once per resource.
case_lock_frozen_many() {
	it_setup
	local coord=$WORK/gpu.coord t0 t1 i names=""
	chmod 0755 "$WORK"
	for i in 0 1 2 3 4 5; do
		names+="${names:+;}r$i"
	done
	{
		echo "external-resources: $names"
		for i in 0 1 2 3 4 5; do
			printf '%s\n' "external-resource.r$i.amount: 1" \
				"external-resource.r$i.driver: static" \
				"external-resource.r$i.param.indexes: $((10 + i))" \
				"external-resource.r$i.coordination-file: $coord"
		done
	} >"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	hold_shared "$coord"
	t0=$(date +%s%N)
	kill -TERM "$DAEMON_PID"
	daemon_reap
	t1=$(date +%s%N)
	assert_eq 0 "$DAEMON_STATUS" "exit status after SIGTERM with the lock held"
	(((t1 - t0) / 1000000 < 1000)) || fail "SIGTERM with six resources on a held lock took $(((t1 - t0) / 1000000)) ms"
	! is_mounted "$MNT" || fail "$MNT still mounted"
	release_shared
	sed -i '/timed out after/d' "$DAEMON_ERR"
}

# A file just under the size limit: our append is refused before anything
# is written, with a clear error, and the file stays as it was; gc can
# always shrink it.
case_size_limit() {
	it_setup
	local coord=$WORK/gpu.coord sum
	gpu_config 1 0,1 "$coord"
	# 16 MiB less 4 bytes of lines that do not parse (kept verbatim).
	head -c $((16 * 1024 * 1024 - 4)) /dev/zero | tr '\0' 'x' | fold -w 99 >"$coord"
	truncate -s $((16 * 1024 * 1024 - 4)) "$coord"
	sum=$(md5sum <"$coord")
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': coordination file $coord would grow to" "past the 16777216-byte limit; nothing was written"
	assert_eq "$sum" "$(md5sum <"$coord")" "the coordination file after a refused append"
	# extresctl coord gc can always make it usable again.
	"$EXTRESCTL" coord gc --drop-unparsable "$coord" >/dev/null ||
		fail "extresctl coord gc --drop-unparsable failed"
	assert_file "$coord" ""
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	daemon_stop
}

it_main "$@"
