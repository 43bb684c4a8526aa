# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Allocation under stress, through real daemons: start-up races, kill -9 of
# holders, sharing the coordination file with Flink's own script, roll-back
# and release, --owner-pid, and coordination files that must be refused.
#
# usage: alloc.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

WRITER=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/flink-writer.sh

# Daemons of this case by name: each mounts $WORK/NAME, logs to
# $WORK/NAME.err; STATUS is set once it has exited.
declare -A PID=() STATUS=()
WON=()

# write_static PATH NAME AMOUNT INDEXES [COORD]: a config with one static
# resource; appended to PATH when it exists (list the names separately).
write_static() {
	local path=$1 name=$2 amount=$3 indexes=$4 coord=${5:-}
	{
		printf 'external-resource.%s.amount: %s\n' "$name" "$amount"
		printf 'external-resource.%s.driver: static\n' "$name"
		printf 'external-resource.%s.param.indexes: "%s"\n' "$name" "$indexes"
		[[ -z $coord ]] || printf 'external-resource.%s.coordination-file: %s\n' "$name" "$coord"
	} >>"$path"
}

# write_gpu_config PATH AMOUNT INDEXES [COORD]: only the resource gpu.
write_gpu_config() {
	printf 'external-resources: gpu\n' >"$1"
	write_static "$1" gpu "$2" "$3" "${4:-}"
}

# spawn NAME ARGS...: start `extresd -f ARGS... $WORK/NAME` in the
# background. fd 9 (the case's lock gate, when open) is not inherited: a
# daemon holding it would keep the gate shut against itself.
spawn() {
	local name=$1
	shift
	mkdir -p "$WORK/$name"
	env --default-signal=INT,QUIT "$EXTRESD" -f "$@" "$WORK/$name" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null 9>&- &
	PID[$name]=$!
	STATUS[$name]=
}

# Record the exit status of daemon NAME, which has exited.
reap() {
	local st=0
	wait "${PID[$1]}" 2>/dev/null || st=$?
	STATUS[$1]=$st
}

# Whether each daemon NAME... has mounted or exited (reaping those that
# exited).
decided() {
	local name left=0
	for name in "$@"; do
		is_our_mount "$WORK/$name" && continue
		if [[ -z ${STATUS[$name]} ]] && pid_alive "${PID[$name]}"; then
			left=1
			continue
		fi
		[[ -n ${STATUS[$name]} ]] || reap "$name"
	done
	[[ $left == 0 ]]
}

# decide NAME...: wait (10 s at most) until each daemon has mounted or
# exited. WON gets the names that mounted, in the order given. Not in a
# subshell: the exit statuses it reaps must reach STATUS.
decide() {
	local name
	poll_until 10 decided "$@" || true
	WON=()
	for name in "$@"; do
		if is_our_mount "$WORK/$name"; then
			WON+=("$name")
		elif [[ -z ${STATUS[$name]} ]]; then
			fail "daemon $name (pid ${PID[$name]}) neither mounted nor exited in 10 s"
		fi
	done
}

# must_mount NAME: the daemon mounted; fail with its stderr if it did not.
must_mount() {
	decide "$1"
	if [[ ${#WON[@]} != 1 ]]; then
		DAEMON_ERR=$WORK/$1.err
		fail "daemon $1 exited with status ${STATUS[$1]} instead of mounting"
	fi
}

# must_fail NAME NEEDLE...: the daemon did not mount; see lost.
must_fail() {
	decide "$1"
	[[ ${#WON[@]} == 0 ]] || fail "daemon $1 mounted $WORK/$1, wanted a start-up error"
	lost "$@"
}

# lost NAME NEEDLE...: the daemon exited 1 with a start-up error that holds
# every needle, and mounted nothing.
lost() {
	local name=$1 saved=$MNT
	shift
	# shellcheck disable=SC2034 # read by assert_startup_error
	RUN_ERR=$WORK/$name.err
	# shellcheck disable=SC2034
	RUN_STATUS=${STATUS[$name]}
	MNT=$WORK/$name
	assert_startup_error "$@"
	MNT=$saved
	# shellcheck disable=SC2034
	RUN_ERR=$WORK/run.err
}

# stop NAME: SIGTERM; exit 0, mount gone, no error on stderr.
stop() {
	local name=$1
	kill -TERM "${PID[$name]}" || fail "cannot send SIGTERM to $name (${PID[$name]})"
	wait_until 10 "daemon $name gone after SIGTERM" pid_gone "${PID[$name]}"
	reap "$name"
	DAEMON_ERR=$WORK/$name.err
	[[ ${STATUS[$name]} == 0 ]] || fail "daemon $name exited with status ${STATUS[$name]} after SIGTERM"
	! is_mounted "$WORK/$name" || fail "$WORK/$name still mounted after SIGTERM"
	check_daemon_stderr
	DAEMON_ERR=$WORK/daemon.err
}

# crash NAME: SIGKILL, then as crashed.
crash() {
	kill -KILL "${PID[$1]}"
	crashed "$1"
}

# crashed NAME: wait until the daemon killed by SIGKILL is gone, reap it,
# and detach the dead mount it leaves.
crashed() {
	local name=$1
	wait_until 10 "daemon $name gone after SIGKILL" pid_gone "${PID[$name]}"
	reap "$name"
	[[ ${STATUS[$name]} == 137 ]] || fail "daemon $name exited with status ${STATUS[$name]}, not by SIGKILL"
	if is_mounted "$WORK/$name"; then
		fusermount3 -u "$WORK/$name" 2>/dev/null || umount -l "$WORK/$name" ||
			fail "cannot detach the dead mount $WORK/$name"
	fi
	! is_mounted "$WORK/$name" || fail "$WORK/$name still mounted after detaching it"
}

# The index daemon NAME serves as gpu/0.
served_index() {
	cat "$WORK/$1/gpu/0/index" || fail "cannot read $WORK/$1/gpu/0/index"
}

# `KEY PID<tab>STARTTIME` for process PID, as extres records it.
line_for() {
	printf '%s %s\t%s' "$1" "$2" "$(proc_starttime "$2")"
}

# A process that lives until the case ends, to stand for a workload.
start_sleeper() {
	sleep 300 >/dev/null 2>&1 9>&- &
	SLEEPER=$!
	echo "$SLEEPER" >>"$WORK/sleepers.pid"
}

# Wait for a sleeper killed by the case to be gone.
kill_sleeper() {
	kill -KILL "$1"
	wait "$1" 2>/dev/null || true
}

# No key is recorded for two live owners.
assert_no_double_owner() {
	local key pid _ lines
	declare -A seen=()
	lines=$(cat "$1")
	while read -r key pid _; do
		[[ -n ${key:-} && ${pid:-} =~ ^[0-9]+$ ]] || continue
		pid_alive "$pid" || continue
		if [[ -n ${seen[$key]:-} && ${seen[$key]} != "$pid" ]]; then
			fail "key $key has two live owners, ${seen[$key]} and $pid, in $1: $lines"
		fi
		seen[$key]=$pid
	done <<<"$lines"
}

# Type, size, mtime, inode and links: a file neither written nor replaced.
file_id() {
	stat -c '%F %s %y %i %h' "$1"
}

# The same without the mtime: a file rewritten in place to what it was.
file_inode() {
	stat -c '%F %s %i %h' "$1"
}

# lock_waiters FILE INODE N NAME...: whether N processes wait for the flock
# on FILE; fail if one of the daemons NAME... has exited.
lock_waiters() {
	local file=$1 ino=$2 n=$3 got name fd
	shift 3
	# Blocked waiters (Flink-style writers) show in /proc/locks; extresd
	# polls the lock, so it counts once it has the file open.
	got=$(awk -v ino="$ino" '$2 == "->" && $3 == "FLOCK" && $7 ~ (":" ino "$")' /proc/locks | wc -l)
	for name in "$@"; do
		for fd in "/proc/${PID[$name]}/fd/"*; do
			if [[ $(readlink "$fd" 2>/dev/null) == "$file" ]]; then
				got=$((got + 1))
				break
			fi
		done
	done
	[[ $got -lt $n ]] || return 0
	for name in "$@"; do
		if ! pid_alive "${PID[$name]}"; then
			reap "$name"
			DAEMON_ERR=$WORK/$name.err
			fail "daemon $name exited with status ${STATUS[$name]} while waiting for the lock"
		fi
	done
	return 1
}

# Wait (10 s at most) until N processes wait for the flock on $1, failing
# if one of the daemons NAME... exits first.
wait_lock_waiters() {
	local file=$1 n=$2
	shift 2
	wait_until 10 "$n processes waiting for the lock on $file" \
		lock_waiters "$file" "$(stat -c %i "$file")" "$n" "$@"
}

# ---------------------------------------------------------------------------

# 8 daemons start at once for 4 free devices, one each: exactly 4 mount, on
# 4 distinct devices; the others fail naming the resource; the file holds
# the winners' lines and is empty of them once they stop. Odd rounds race to
# create the file; even rounds all queue on the lock we hold and go
# together, beside two more devices held in the older line forms (a space
# before the start time, and Flink's two fields), which stay as they are.
case_race() {
	it_setup
	local coord=$WORK/gpu.coord round i name want idx old s
	local -a names winners losers
	start_sleeper
	s=$SLEEPER
	old="4 $s $(proc_starttime "$s")"$'\n'"5 $s"$'\n'
	for round in 1 2 3 4 5; do
		if ((round % 2)); then
			write_gpu_config "$WORK/extres.yaml" 1 0,1,2,3 "$coord"
		else
			write_gpu_config "$WORK/extres.yaml" 1 0,1,2,3,4,5 "$coord"
		fi
		names=()
		for i in 1 2 3 4 5 6 7 8; do
			names+=("r$round-$i")
		done
		if ((round % 2)); then
			rm -f "$coord"
			for name in "${names[@]}"; do
				spawn "$name" -c "$WORK/extres.yaml"
			done
		else
			printf '%s' "$old" >"$coord"
			exec 9<>"$coord"
			flock -x 9
			for name in "${names[@]}"; do
				spawn "$name" -c "$WORK/extres.yaml"
			done
			wait_lock_waiters "$coord" 8 "${names[@]}"
			exec 9>&-
		fi
		decide "${names[@]}"
		winners=("${WON[@]}")
		losers=()
		for name in "${names[@]}"; do
			[[ " ${winners[*]} " == *" $name "* ]] || losers+=("$name")
		done
		[[ ${#winners[@]} == 4 ]] ||
			fail "round $round: ${#winners[@]} daemons mounted (${winners[*]}), wanted 4"
		for name in "${losers[@]}"; do
			lost "$name" "resource 'gpu'" "wanted 1, found 0"
		done
		want=
		for name in "${winners[@]}"; do
			idx=$(served_index "$name")
			want+="$(line_for "$idx" "${PID[$name]}")"$'\n'
		done
		assert_eq "0
1
2
3" "$(cut -d' ' -f1 <<<"${want%$'\n'}" | sort)" "round $round: indexes the winners serve"
		((round % 2)) || want+=$old
		assert_eq "$(sort <<<"${want%$'\n'}")" "$(sort "$coord")" "round $round: coordination file"
		for name in "${winners[@]}"; do
			stop "$name"
		done
		if ((round % 2)); then
			assert_eq "" "$(coord_lines "$coord")" "round $round: coordination file after the winners stopped"
		else
			assert_eq "$old" "$(coord_lines "$coord")"$'\n' "round $round: coordination file after the winners stopped"
		fi
	done
}

# Three holders of three devices; each round kill -9's one while two new
# daemons allocate: at most one of them wins, and then it holds the dead
# one's device; the survivors' lines stay as they were; no device ever has
# two live owners.
case_crash() {
	it_setup
	local coord=$WORK/gpu.coord round idx victim name lines survivors late
	local -a holder contenders won
	write_gpu_config "$WORK/extres.yaml" 1 0,1,2 "$coord"
	for idx in 0 1 2; do
		name=h$idx
		spawn "$name" -c "$WORK/extres.yaml"
		must_mount "$name"
		assert_eq "$idx" "$(served_index "$name")" "index served by $name"
		holder[idx]=$name
	done
	for round in 1 2 3 4 5 6; do
		idx=$((round % 3))
		victim=${holder[idx]}
		survivors=$(grep -v "^$idx " "$coord" | sort)
		assert_eq 2 "$(wc -l <<<"$survivors")" "round $round: lines of the survivors"
		kill -KILL "${PID[$victim]}"
		contenders=("c$round-a" "c$round-b")
		spawn "${contenders[0]}" -c "$WORK/extres.yaml"
		spawn "${contenders[1]}" -c "$WORK/extres.yaml"
		crashed "$victim"
		decide "${contenders[@]}"
		won=("${WON[@]}")
		[[ ${#won[@]} -le 1 ]] || fail "round $round: both ${won[*]} mounted with 3 devices held by 2 live daemons"
		for name in "${contenders[@]}"; do
			[[ $name == "${won[0]:-}" ]] || lost "$name" "resource 'gpu'" "wanted 1, found 0"
		done
		if [[ ${#won[@]} == 0 ]]; then
			# Both allocated before the kill had landed: once it has,
			# the next one must get the device.
			late=c$round-c
			spawn "$late" -c "$WORK/extres.yaml"
			must_mount "$late"
			won=("$late")
		fi
		assert_eq "$idx" "$(served_index "${won[0]}")" "round $round: index served by ${won[0]}"
		holder[idx]=${won[0]}
		lines=$(sort <<<"$survivors
$(line_for "$idx" "${PID[${won[0]}]}")")
		assert_eq "$lines" "$(sort "$coord")" "round $round: coordination file"
		assert_no_double_owner "$coord"
	done
	for name in "${holder[@]}"; do
		stop "$name"
	done
	assert_eq "" "$(coord_lines "$coord")" "coordination file after every holder stopped"
}

# Flink's script takes devices first; extresd skips them, and its release
# leaves Flink's two-field lines byte for byte. A dead Flink owner's line is
# reclaimed.
case_interop_flink_first() {
	it_setup
	local coord=$WORK/gpu.coord s s2 dead got flink
	start_sleeper
	s=$SLEEPER
	sleep 0 &
	dead=$!
	wait "$dead"
	printf '2 %s\n' "$dead" >"$coord"
	got=$(bash "$WRITER" "$coord" "$s" 2 0 1 2 3) || fail "flink-writer failed"
	assert_eq "0,1" "$got" "indexes the Flink writer took"
	flink="2 $dead
0 $s
1 $s"
	assert_eq "$flink" "$(cat "$coord")" "coordination file after the Flink writer"

	write_gpu_config "$WORK/extres.yaml" 2 0,1,2,3 "$coord"
	spawn d -c "$WORK/extres.yaml"
	must_mount d
	assert_file "$WORK/d/gpu/0/index" $'2\n'
	assert_file "$WORK/d/gpu/1/index" $'3\n'
	assert_eq "0 $s
1 $s
$(line_for 2 "${PID[d]}")
$(line_for 3 "${PID[d]}")" "$(cat "$coord")" "coordination file with extresd"
	assert_no_double_owner "$coord"

	# Nothing is left for anyone, Flink or extresd.
	start_sleeper
	s2=$SLEEPER
	flink=$(cat "$coord")
	if got=$(bash "$WRITER" "$coord" "$s2" 1 0 1 2 3 2>"$WORK/writer.err"); then
		fail "flink-writer took '$got' with every device held"
	fi
	assert_eq "flink-writer.sh: wanted 1, found 0 free in $coord" "$(cat "$WORK/writer.err")" "flink-writer stderr"
	spawn e -c "$WORK/extres.yaml"
	must_fail e "resource 'gpu'" "wanted 2, found 0"
	assert_eq "$flink" "$(cat "$coord")" "coordination file after two failed allocations"

	stop d
	assert_eq "0 $s
1 $s" "$(cat "$coord")" "coordination file after extresd stopped"
	got=$(bash "$WRITER" "$coord" "$s2" 2 0 1 2 3) || fail "flink-writer failed"
	assert_eq "2,3" "$got" "indexes the Flink writer took after extresd stopped"
	assert_no_double_owner "$coord"
}

# extresd takes devices first; Flink's script skips them; the Flink lines
# survive extresd's release, and are reclaimed by extresd once their owner
# is dead.
case_interop_extres_first() {
	it_setup
	local coord=$WORK/gpu.coord s got before
	write_gpu_config "$WORK/extres.yaml" 2 0,1,2,3 "$coord"
	spawn d -c "$WORK/extres.yaml"
	must_mount d
	start_sleeper
	s=$SLEEPER
	got=$(bash "$WRITER" "$coord" "$s" 2 0 1 2 3) || fail "flink-writer failed"
	assert_eq "2,3" "$got" "indexes the Flink writer took"
	assert_eq "$(line_for 0 "${PID[d]}")
$(line_for 1 "${PID[d]}")
2 $s
3 $s" "$(cat "$coord")" "coordination file with both"
	assert_no_double_owner "$coord"

	before=$(cat "$coord")
	if got=$(bash "$WRITER" "$coord" "$s" 1 0 1 2 3 2>/dev/null); then
		fail "flink-writer took '$got' with every device held"
	fi
	write_gpu_config "$WORK/one.yaml" 1 0,1,2,3 "$coord"
	spawn e -c "$WORK/one.yaml"
	must_fail e "resource 'gpu'" "wanted 1, found 0"
	assert_eq "$before" "$(cat "$coord")" "coordination file after two failed allocations"

	stop d
	assert_eq "2 $s
3 $s" "$(cat "$coord")" "coordination file after extresd stopped"

	# The Flink owner is gone: its lines no longer hold the devices.
	kill_sleeper "$s"
	spawn f -c "$WORK/extres.yaml"
	must_mount f
	assert_file "$WORK/f/gpu/0/index" $'0\n'
	assert_file "$WORK/f/gpu/1/index" $'1\n'
	assert_eq "$(line_for 0 "${PID[f]}")
$(line_for 1 "${PID[f]}")" "$(cat "$coord")" "coordination file after the Flink owner died"
	stop f
	assert_eq "" "$(coord_lines "$coord")" "coordination file at the end"
}

# Two daemons and two Flink writers queue on the lock and go together, three
# rounds: all four get a device, no two the same; each line names its taker.
case_interop_concurrent() {
	it_setup
	local coord=$WORK/gpu.coord round i want s1 s2 w
	write_gpu_config "$WORK/extres.yaml" 1 0,1,2,3 "$coord"
	: >"$coord"
	for round in 1 2 3; do
		start_sleeper
		s1=$SLEEPER
		start_sleeper
		s2=$SLEEPER
		exec 9<>"$coord"
		flock -x 9
		spawn "a$round" -c "$WORK/extres.yaml"
		spawn "b$round" -c "$WORK/extres.yaml"
		bash "$WRITER" "$coord" "$s1" 1 0 1 2 3 >"$WORK/w1.out" 2>"$WORK/w1.err" 9>&- &
		w=$!
		bash "$WRITER" "$coord" "$s2" 1 0 1 2 3 >"$WORK/w2.out" 2>"$WORK/w2.err" 9>&- &
		wait_lock_waiters "$coord" 4 "a$round" "b$round"
		exec 9>&-
		wait "$w" || fail "round $round: flink-writer for $s1 failed: $(cat "$WORK/w1.err")"
		wait $! || fail "round $round: flink-writer for $s2 failed: $(cat "$WORK/w2.err")"
		must_mount "a$round"
		must_mount "b$round"
		want="$(line_for "$(served_index "a$round")" "${PID[a$round]}")
$(line_for "$(served_index "b$round")" "${PID[b$round]}")
$(cat "$WORK/w1.out") $s1
$(cat "$WORK/w2.out") $s2"
		assert_eq "0
1
2
3" "$(cut -d' ' -f1 <<<"$want" | sort)" "round $round: indexes taken"
		assert_eq "$(sort <<<"$want")" "$(sort "$coord")" "round $round: coordination file"
		assert_no_double_owner "$coord"
		stop "a$round"
		stop "b$round"
		assert_eq "$(sort <<<"$(cat "$WORK/w1.out") $s1
$(cat "$WORK/w2.out") $s2")" "$(sort "$coord")" "round $round: coordination file after the daemons stopped"
		kill_sleeper "$s1"
		kill_sleeper "$s2"
	done
}

# rollback_case SHARED: gpu takes 2, then fpga is short; extresd exits 1,
# and every coordination file is as it was, in bytes and inode.
rollback_case() {
	local shared=$1 s gpu_coord fpga_coord id_gpu id_fpga fpga_before
	it_setup
	gpu_coord=$WORK/gpu.coord
	start_sleeper
	s=$SLEEPER
	if [[ $shared == 1 ]]; then
		fpga_coord=$gpu_coord
	else
		fpga_coord=$WORK/fpga.coord
	fi
	printf '9 %s\n%s\n' "$s" "$(line_for 8 "$s")" >"$gpu_coord"
	# fpga's 3 is held (2 is free): found 1 of the 2 wanted.
	printf '3 %s\n' "$s" >>"$fpga_coord"
	printf 'external-resources: gpu;fpga\n' >"$WORK/extres.yaml"
	write_static "$WORK/extres.yaml" gpu 2 0,1,8,9 "$gpu_coord"
	write_static "$WORK/extres.yaml" fpga 2 2,3 "$fpga_coord"
	cp "$gpu_coord" "$WORK/gpu.before"
	id_gpu=$(file_inode "$gpu_coord")
	fpga_before=$(file_bytes "$fpga_coord")
	id_fpga=$(file_id "$fpga_coord")
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'fpga'" "wanted 2, found 1"
	cmp -s "$WORK/gpu.before" "$gpu_coord" ||
		fail "gpu coordination file changed: $(cat "$gpu_coord")"
	assert_eq "$id_gpu" "$(file_inode "$gpu_coord")" "gpu coordination file: type, size, inode, links"
	if [[ $shared == 0 ]]; then
		assert_eq "$fpga_before" "$(file_bytes "$fpga_coord")" "fpga coordination file"
		assert_eq "$id_fpga" "$(file_id "$fpga_coord")" "fpga coordination file: type, size, mtime, inode, links"
	fi
}

# Both resources in one coordination file.
case_rollback_shared() {
	rollback_case 1
}

# Each resource with its own coordination file.
case_rollback_separate() {
	rollback_case 0
}

# SIGTERM removes exactly the daemon's lines, from every file it used, in
# place: a live Flink line, another extres owner's line and a line that does
# not parse stay byte for byte, in their order.
case_release() {
	it_setup
	local coord=$WORK/gpu.coord s before id
	start_sleeper
	s=$SLEEPER
	before="1 $s
this line does not parse
$(line_for 3 "$s")
"
	printf '%s' "$before" >"$coord"
	id=$(stat -c %i "$coord")
	printf 'external-resources: gpu;nic\n' >"$WORK/extres.yaml"
	write_static "$WORK/extres.yaml" gpu 2 0,1,2,3,4 "$coord"
	write_static "$WORK/extres.yaml" nic 1 0 "$WORK/nic.coord"
	spawn d -c "$WORK/extres.yaml"
	must_mount d
	assert_file "$WORK/d/gpu/0/index" $'0\n'
	assert_file "$WORK/d/gpu/1/index" $'2\n'
	assert_file "$coord" "$before$(line_for 0 "${PID[d]}")
$(line_for 2 "${PID[d]}")
"
	assert_file "$WORK/nic.coord" "$(line_for 0 "${PID[d]}")"$'\n'
	stop d
	assert_file "$coord" "$before"
	assert_eq "$id" "$(stat -c %i "$coord")" "inode of the coordination file"
	assert_file "$WORK/nic.coord" ""
}

# Lines whose owner is gone are reclaimed, whatever the way it went: a dead
# PID (Flink's two fields), a PID now used by another process (the start
# time differs) and a zombie nobody reaps. Live owners keep theirs.
case_stale_owners() {
	it_setup
	local coord=$WORK/gpu.coord s dead live
	start_sleeper
	s=$SLEEPER
	dead=$(dead_pid)
	make_zombie
	live="3 $s"
	printf '0 %s\n1 %s 1\n2 %s %s\n%s\n' "$dead" "$s" "$ZOMBIE" "$(proc_starttime "$ZOMBIE")" \
		"$live" >"$coord"
	write_gpu_config "$WORK/extres.yaml" 3 0,1,2,3,4 "$coord"
	spawn d -c "$WORK/extres.yaml"
	must_mount d
	assert_eq "0 1 2" "$(cat "$WORK/d/gpu/"{0,1,2}/index | tr '\n' ' ' | sed 's/ $//')" "indexes served"
	assert_eq "$live
$(line_for 0 "${PID[d]}")
$(line_for 1 "${PID[d]}")
$(line_for 2 "${PID[d]}")" "$(cat "$coord")" "coordination file"
	stop d
	assert_eq "$live" "$(cat "$coord")" "coordination file after a clean exit"
}

# --owner-pid: the owner is recorded; when it exits, extresd unmounts,
# releases and exits 0.
case_owner_exit() {
	it_setup
	local s coord=$WORK/gpu.coord
	start_sleeper
	s=$SLEEPER
	write_gpu_config "$WORK/extres.yaml" 2 0,1,2 "$coord"
	daemon_start --owner-pid "$s" -c "$WORK/extres.yaml" "$MNT"
	assert_eq "$(line_for 0 "$s")
$(line_for 1 "$s")" "$(cat "$coord")" "coordination file while the owner lives"
	kill_sleeper "$s"
	daemon_expect_exit 0 "after its owner exited"
	assert_eq "" "$(coord_lines "$coord")" "coordination file after the owner exited"
}

# --owner-pid and a daemon crash: the workload still lives, so its devices
# stay taken; once it is gone they are free again.
case_owner_crash() {
	it_setup
	local s coord=$WORK/gpu.coord lines
	start_sleeper
	s=$SLEEPER
	write_gpu_config "$WORK/extres.yaml" 2 0,1,2 "$coord"
	spawn d --owner-pid "$s" -c "$WORK/extres.yaml"
	must_mount d
	lines="$(line_for 0 "$s")
$(line_for 1 "$s")"
	assert_eq "$lines" "$(cat "$coord")" "coordination file while both live"
	crash d
	assert_eq "$lines" "$(cat "$coord")" "coordination file after the daemon crashed"

	spawn e -c "$WORK/extres.yaml"
	must_fail e "resource 'gpu'" "wanted 2, found 1"
	assert_eq "$lines" "$(cat "$coord")" "coordination file after the failed start"

	kill_sleeper "$s"
	spawn f -c "$WORK/extres.yaml"
	must_mount f
	assert_file "$WORK/f/gpu/0/index" $'0\n'
	assert_file "$WORK/f/gpu/1/index" $'1\n'
	assert_eq "$(line_for 0 "${PID[f]}")
$(line_for 1 "${PID[f]}")" "$(cat "$coord")" "coordination file after the owner died"
	stop f
	assert_eq "" "$(coord_lines "$coord")" "coordination file at the end"
}

# --owner-pid naming no process: a start-up error naming it, nothing taken.
# pid_max itself is never a PID.
case_owner_missing() {
	it_setup
	local pid coord=$WORK/gpu.coord
	pid=$(cat /proc/sys/kernel/pid_max)
	! kill -0 "$pid" 2>/dev/null || fail "process $pid exists"
	write_gpu_config "$WORK/extres.yaml" 1 0 "$coord"
	daemon_run_fail -f --owner-pid "$pid" -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "--owner-pid" "$pid"
	[[ ! -e $coord ]] || fail "$coord was created: $(cat "$coord")"
}

# --owner-pid naming a zombie: an owner every allocator counts as gone, so
# it is refused as a missing one is, with or without -f: nothing taken,
# nothing mounted.
case_owner_zombie() {
	it_setup
	local coord=$WORK/gpu.coord
	make_zombie
	write_gpu_config "$WORK/extres.yaml" 1 0 "$coord"
	daemon_run_fail -f --owner-pid "$ZOMBIE" -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "--owner-pid: no process $ZOMBIE"
	[[ ! -e $coord ]] || fail "$coord was created: $(cat "$coord")"
	daemon_run_fail --owner-pid "$ZOMBIE" -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "--owner-pid: no process $ZOMBIE"
	[[ ! -e $coord ]] || fail "$coord was created without -f: $(cat "$coord")"
	assert_eq "" "$(pids_in_work)" "processes left behind"
	assert_eq Z "$(proc_state "$ZOMBIE")" "state of $ZOMBIE at the end (the case tried a zombie)"
}

# Without -f the recorded owner is the process that stays in the
# background, not the one that returned.
case_background() {
	it_setup
	local coord=$WORK/gpu.coord launcher status=0 pid
	write_gpu_config "$WORK/extres.yaml" 2 0,1,2 "$coord"
	env --default-signal=INT,QUIT "$EXTRESD" -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/daemon.out" 2>"$DAEMON_ERR" </dev/null &
	launcher=$!
	wait "$launcher" || status=$?
	[[ $status == 0 ]] || fail "extresd without -f exited with status $status"
	is_our_mount "$MNT" || fail "$MNT is not an extresd mount after extresd returned"
	pid=$(awk '{ print $2 }' "$coord" | sort -u)
	[[ $pid =~ ^[0-9]+$ ]] || fail "coordination file names no single owner: $(cat "$coord")"
	[[ $pid != "$launcher" ]] || fail "the recorded owner is the process that returned ($launcher)"
	assert_eq extresd "$(ps -p "$pid" -o comm=)" "ps -p $pid (the recorded owner)"
	assert_eq "$(line_for 0 "$pid")
$(line_for 1 "$pid")" "$(cat "$coord")" "coordination file"
	fusermount3 -u "$MNT" || fail "fusermount3 -u $MNT failed"
	wait_until 10 "extresd ($pid) gone after fusermount3 -u" pid_gone "$pid"
	assert_eq "" "$(coord_lines "$coord")" "coordination file after fusermount3 -u"
	check_daemon_stderr
}

# Without -f and with --owner-pid: the owner is recorded, the daemon stays
# in the background, and goes when the owner does.
case_owner_background() {
	it_setup
	local coord=$WORK/gpu.coord s status=0 pid
	start_sleeper
	s=$SLEEPER
	write_gpu_config "$WORK/extres.yaml" 1 0,1 "$coord"
	env --default-signal=INT,QUIT "$EXTRESD" --owner-pid "$s" -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/daemon.out" 2>"$DAEMON_ERR" </dev/null || status=$?
	[[ $status == 0 ]] || fail "extresd without -f exited with status $status"
	is_our_mount "$MNT" || fail "$MNT is not an extresd mount after extresd returned"
	assert_eq "$(line_for 0 "$s")" "$(cat "$coord")" "coordination file"
	pid=$(pids_in_work)
	[[ $pid =~ ^[0-9]+$ ]] || fail "not exactly one process runs for the case: '$pid'"
	assert_eq extresd "$(ps -p "$pid" -o comm=)" "ps -p $pid (the daemon)"
	kill_sleeper "$s"
	wait_until 10 "extresd ($pid) gone after its owner exited" pid_gone "$pid"
	! is_mounted "$MNT" || fail "$MNT still mounted after the owner exited"
	assert_eq "" "$(coord_lines "$coord")" "coordination file after the owner exited"
	check_daemon_stderr
}

# refused WHAT: extresd must refuse the coordination file at $WORK/gpu.coord,
# at once, naming it, without a mount.
refused() {
	write_gpu_config "$WORK/extres.yaml" 1 0,1 "$WORK/gpu.coord"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu'" "$WORK/gpu.coord" "$1"
	awk -v t="$RUN_SECONDS" 'BEGIN { exit !(t < 8) }' ||
		fail "extresd took $RUN_SECONDS s to refuse the coordination file"
}

# A symbolic link, to a file or to nothing: neither is followed.
case_symlink() {
	it_setup
	local id
	printf '0 1\n' >"$WORK/target"
	id=$(file_id "$WORK/target")
	ln -s target "$WORK/gpu.coord"
	refused "symbolic link"
	assert_file "$WORK/target" $'0 1\n'
	assert_eq "$id" "$(file_id "$WORK/target")" "the link's target"
	assert_eq target "$(readlink "$WORK/gpu.coord")" "the link"

	rm "$WORK/target"
	refused "symbolic link"
	[[ ! -e $WORK/target ]] || fail "extresd created the dangling link's target"
}

# A FIFO is neither opened (a reader waiting on it stays blocked) nor a
# reason to hang.
case_fifo() {
	it_setup
	local reader
	mkfifo -m 0644 "$WORK/gpu.coord"
	cat "$WORK/gpu.coord" >"$WORK/reader.out" &
	reader=$!
	refused "FIFO"
	pid_alive "$reader" || fail "the FIFO was opened: its reader got '$(cat "$WORK/reader.out")'"
	[[ -p $WORK/gpu.coord ]] || fail "$WORK/gpu.coord is no longer a FIFO"
	kill "$reader"
	wait "$reader" 2>/dev/null || true
}

case_directory() {
	it_setup
	local id
	mkdir "$WORK/gpu.coord"
	id=$(file_id "$WORK/gpu.coord")
	refused "directory"
	assert_eq "" "$(ls -A "$WORK/gpu.coord")" "the directory's content"
	assert_eq "$id" "$(file_id "$WORK/gpu.coord")" "the directory"
}

# A second name for someone else's file, as a user could make in /var/tmp.
case_hardlink() {
	it_setup
	local id
	printf '5 1\n' >"$WORK/other"
	ln "$WORK/other" "$WORK/gpu.coord"
	id=$(file_id "$WORK/other")
	refused "2 hard links"
	assert_file "$WORK/other" $'5 1\n'
	assert_eq "$id" "$(file_id "$WORK/other")" "the linked file"
}

# script_config COORD ARGS: gpu found by $WORK/discover.sh, with
# coordination-file COORD and discovery-script.args ARGS.
script_config() {
	printf '%s\n' 'external-resources: gpu' \
		'external-resource.gpu.amount: 1' \
		'external-resource.gpu.driver: script' \
		"external-resource.gpu.coordination-file: $1" \
		"external-resource.gpu.param.discovery-script.path: $WORK/discover.sh" \
		"external-resource.gpu.param.discovery-script.args: $2" >"$WORK/extres.yaml"
}

# A script that coordinates by itself (Flink's --enable-coordination-mode)
# records extresd, its parent, as the owner: extres checks that line and
# writes none of its own (the file is not even rewritten), and its clean
# exit removes the script's line. A script that recorded nothing (it does
# not know the flag) has its device recorded by extresd instead.
case_script_coordinates() {
	it_setup
	local coord=$WORK/gpu.coord before id st
	# shellcheck disable=SC2016 # expanded by the script
	printf '#!/bin/sh
echo "0 $PPID" >>%s
echo 0
' "$coord" >"$WORK/discover.sh"
	chmod 0755 "$WORK/discover.sh"
	script_config "$coord" "--coordination-file $coord --enable-coordination-mode"
	before="5 $$"$'\n'
	printf '%s' "$before" >"$coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/index" $'0\n'
	assert_file "$coord" "${before}0 $DAEMON_PID"$'\n'
	id=$(file_id "$coord")
	"$EXTRESCTL" reload "$MNT" >/dev/null || fail "extresctl reload failed"
	assert_eq "$id" "$(file_id "$coord")" "coordination file after a reload with the same settings"
	daemon_stop
	assert_file "$coord" "$before"

	# The flag as one item of a YAML list; a script that records nothing.
	printf '#!/bin/sh
echo 0
' >"$WORK/discover.sh"
	script_config "$coord" "[--enable-coordination-mode, --coordination-file, $coord]"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/index" $'0\n'
	st=$(proc_starttime "$DAEMON_PID")
	assert_file "$coord" "${before}0 $DAEMON_PID$T$st"$'\n'
	daemon_stop
	assert_file "$coord" "$before"
}

# A self-coordinating script records every device it returns under
# extresd's PID before extresd looks. When the take then fails (a device
# is held by another live process), the lines for devices extresd did not
# take go again: a failed reload leaves nothing recorded that it does not
# serve.
case_script_coordinates_failed() {
	it_setup
	local coord=$WORK/gpu.coord out
	# shellcheck disable=SC2016 # expanded by the script
	printf '#!/bin/sh
n=$1 i=0 out=
while [ $i -lt $n ]; do
	grep -q "^$i $PPID\$" %s || echo "$i $PPID" >>%s
	out=$out${out:+,}$i
	i=$((i + 1))
done
echo $out
' "$coord" "$coord" >"$WORK/discover.sh"
	chmod 0755 "$WORK/discover.sh"
	script_config "$coord" "--coordination-file $coord --enable-coordination-mode"
	printf '1 %s\n' "$$" >"$coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$coord" "1 $$"$'\n'"0 $DAEMON_PID"$'\n'
	sed -i 's/^external-resource.gpu.amount: 1$/external-resource.gpu.amount: 2/' "$WORK/extres.yaml"
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) && fail "a reload over a held device succeeded: $out"
	assert_contains "$out" "device index 1 is held by PID $$" "extresctl reload"
	assert_file "$coord" "1 $$"$'\n'"0 $DAEMON_PID"$'\n'
	assert_file "$MNT/gpu/0/index" $'0\n'
	sed -i '/reload failed/d' "$DAEMON_ERR"
	daemon_stop
	assert_file "$coord" "1 $$"$'\n'
}

it_main "$@"
