# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The shipped scripts/discovery/nvidia-gpu-discovery.sh, run against a fake nvidia-smi
# (tests/integration/nvidia/nvidia-smi): Flink's contract, the coordination
# file, concurrent and crashing owners, and the script under extresd.
#
# usage: nvidia.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAKE_DIR=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/nvidia
NVSCRIPT=
COORD=
ME_ST=
NV_STATUS=

USAGE='usage: nvidia-gpu-discovery.sh AMOUNT [--enable-coordination-mode | --enable-coordination]
                               [--coordination-file PATH]'

# The work dir, the fake nvidia-smi first in PATH with 4 GPUs, and the
# start time of this shell: the owner the script records when this shell
# runs it. "nv_setup mount" for the cases that mount (they skip without
# /dev/fuse).
nv_setup() {
	if [[ ${1:-} == mount ]]; then
		it_setup
	else
		it_setup_nofuse
	fi
	NVSCRIPT=$SRCDIR/scripts/discovery/nvidia-gpu-discovery.sh
	[[ -x $NVSCRIPT ]] || fail "$NVSCRIPT is not executable"
	COORD=$WORK/gpu.coord
	export PATH="$FAKE_DIR:$PATH"
	export FAKE_NVIDIA_SMI_GPUS=4
	unset FAKE_NVIDIA_SMI_MODE
	ME_ST=$(proc_starttime $$)
}

# nv_run ARGS...: run the script as a direct child of this shell, so that
# its $PPID is $$; sets NV_STATUS, leaves stdout and stderr in
# $WORK/nv.out and $RUN_ERR.
nv_run() {
	NV_STATUS=0
	"$NVSCRIPT" "$@" >"$WORK/nv.out" 2>"$RUN_ERR" </dev/null || NV_STATUS=$?
}

# flink_run AMOUNT ARGS: run the script as Flink's GPUDriver does: one
# command string, "PATH AMOUNT ARGS", split on blanks with no quoting
# (Runtime.exec(String)); ARGS is the word null when discovery-script.args
# is unset. Sets NV_STATUS and the output files as nv_run does.
flink_run() {
	local -a argv
	IFS=$' \t\n\r\f' read -r -a argv <<<"$NVSCRIPT $1 $2"
	NV_STATUS=0
	"${argv[@]}" >"$WORK/nv.out" 2>"$RUN_ERR" </dev/null || NV_STATUS=$?
}

# nv_run_coord ARGS...: the same in coordination mode through $COORD.
nv_run_coord() {
	nv_run "$@" --enable-coordination-mode --coordination-file "$COORD"
}

# assert_nv STATUS STDOUT STDERR: exact status and bytes of the last run.
assert_nv() {
	[[ $NV_STATUS == "$1" ]] || fail "nvidia-gpu-discovery.sh exited with status $NV_STATUS, wanted $1"
	assert_file "$WORK/nv.out" "$2"
	assert_file "$RUN_ERR" "$3"
}

# ---------------------------------------------------------------------------
# Flink's contract

# The first AMOUNT indexes, split by ","; no coordination file is touched.
case_plain() {
	nv_setup
	nv_run 2
	assert_nv 0 $'0,1\n' ""
	nv_run 4
	assert_nv 0 $'0,1,2,3\n' ""
	nv_run 1
	assert_nv 0 $'0\n' ""
	# Leading zeros are decimal, not octal.
	FAKE_NVIDIA_SMI_GPUS=12 nv_run 010
	assert_nv 0 $'0,1,2,3,4,5,6,7,8,9\n' ""
	[[ ! -e $COORD ]] || fail "a coordination file appeared without coordination mode"
}

# More than there are: exit 1 and say wanted and found.
case_too_many() {
	nv_setup
	nv_run 5
	assert_nv 1 "" $'nvidia-gpu-discovery.sh: wanted 5 GPUs, found 4 (0,1,2,3)\n'
	FAKE_NVIDIA_SMI_GPUS=0 nv_run 1
	assert_nv 1 "" $'nvidia-gpu-discovery.sh: wanted 1 GPU, found 0\n'
}

# AMOUNT must be a non-negative integer: a usage error (exit 2) naming
# it, before nvidia-smi runs (it would fail here).
case_bad_amount() {
	nv_setup
	export FAKE_NVIDIA_SMI_MODE=fail
	local a
	for a in -1 -0 +1 abc 1.5 " 2" "2 " 0x10 ""; do
		nv_run "$a"
		assert_nv 2 "" "nvidia-gpu-discovery.sh: AMOUNT '$a' is not a non-negative integer
$USAGE
"
	done
	for a in 2147483648 99999999999999999999999; do
		nv_run "$a"
		assert_nv 2 "" "nvidia-gpu-discovery.sh: AMOUNT '$a' is too large
$USAGE
"
	done
	nv_run
	assert_nv 2 "" "nvidia-gpu-discovery.sh: missing AMOUNT
$USAGE
"
}

# Unknown arguments (which Flink ignores) and a missing value are usage
# errors; --help is not.
case_unknown_flag() {
	nv_setup
	nv_run 2 --enable-coordination-modes
	assert_nv 2 "" "nvidia-gpu-discovery.sh: unknown argument '--enable-coordination-modes'
$USAGE
"
	nv_run 2 --enable-coordination-mode extra
	assert_nv 2 "" "nvidia-gpu-discovery.sh: unknown argument 'extra'
$USAGE
"
	nv_run 2 --coordination-file
	assert_nv 2 "" "nvidia-gpu-discovery.sh: --coordination-file needs a PATH
$USAGE
"
	nv_run 2 --coordination-file ""
	assert_nv 2 "" "nvidia-gpu-discovery.sh: --coordination-file needs a non-empty PATH
$USAGE
"
	nv_run --help
	[[ $NV_STATUS == 0 ]] || fail "--help exited with status $NV_STATUS"
	assert_eq "$USAGE" "$(head -n 2 "$WORK/nv.out")" "--help"
	assert_file "$RUN_ERR" ""
}

# Run exactly as Flink's GPUDriver runs it. Without discovery-script.args
# the only argument after the amount is the word null, which is ignored;
# with them, they arrive split on blanks. null among other arguments is
# not Flink's doing and stays an error.
case_flink_exec() {
	nv_setup
	flink_run 2 null
	assert_nv 0 $'0,1\n' ""
	flink_run 4 null
	assert_nv 0 $'0,1,2,3\n' ""
	flink_run 5 null
	assert_nv 1 "" $'nvidia-gpu-discovery.sh: wanted 5 GPUs, found 4 (0,1,2,3)\n'
	[[ ! -e $COORD ]] || fail "a coordination file appeared without coordination mode"
	flink_run 1 "--enable-coordination-mode --coordination-file $COORD"
	assert_nv 0 $'0\n' ""
	assert_file "$COORD" "0 $$$T$ME_ST
"
	nv_run 2 --enable-coordination-mode null
	assert_nv 2 "" "nvidia-gpu-discovery.sh: unknown argument 'null'
$USAGE
"
	nv_run 2 null null
	assert_nv 2 "" "nvidia-gpu-discovery.sh: unknown argument 'null'
$USAGE
"
}

# Amount 0, as Flink's script answers it: exit 0, no output, and nvidia-smi
# never runs (it would fail here), nor is a coordination file touched.
case_amount_zero() {
	nv_setup
	export FAKE_NVIDIA_SMI_MODE=fail
	nv_run 0
	assert_nv 0 "" ""
	nv_run 000
	assert_nv 0 "" ""
	flink_run 0 null
	assert_nv 0 "" ""
	flink_run 0 "--enable-coordination-mode --coordination-file $COORD"
	assert_nv 0 "" ""
	[[ ! -e $COORD ]] || fail "amount 0 created the coordination file"
	# Usage errors still come first.
	nv_run 0 --bogus
	assert_nv 2 "" "nvidia-gpu-discovery.sh: unknown argument '--bogus'
$USAGE
"
	# Nor is nvidia-smi needed at all.
	mkdir "$WORK/bin"
	ln -s "$(command -v bash)" "$WORK/bin/bash"
	PATH=$WORK/bin nv_run 0
	assert_nv 0 "" ""
}

# nvidia-smi fails: exit 1 with what it said on stdout and stderr, and its
# status.
case_smi_fail() {
	nv_setup
	export FAKE_NVIDIA_SMI_MODE=fail
	nv_run 1 --enable-coordination-mode --coordination-file "$COORD"
	[[ $NV_STATUS == 1 ]] || fail "exited with status $NV_STATUS, wanted 1"
	assert_file "$WORK/nv.out" ""
	# nvidia-smi's stderr passes straight through; its stdout comes after.
	assert_file "$RUN_ERR" "fake nvidia-smi: marker 5c21
NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.
nvidia-gpu-discovery.sh: 'nvidia-smi --query-gpu=index --format=csv,noheader' failed with exit status 9
"
	[[ ! -e $COORD ]] || fail "a coordination file appeared although discovery failed"
}

# No nvidia-smi in PATH: exit 1 saying so.
case_smi_missing() {
	nv_setup
	local t
	mkdir "$WORK/bin"
	for t in bash stat flock truncate; do
		ln -s "$(command -v "$t")" "$WORK/bin/$t"
	done
	PATH=$WORK/bin nv_run 1
	assert_nv 1 "" "nvidia-gpu-discovery.sh: nvidia-smi not found in PATH ($WORK/bin); is the NVIDIA driver installed?
"
}

# Whitespace and CRs around indexes and empty lines are ignored, a repeated
# index counts once; a line that is not an index is an error.
case_smi_output() {
	nv_setup
	export FAKE_NVIDIA_SMI_MODE=messy
	nv_run 3
	assert_nv 0 $'0,1,2\n' ""
	nv_run 4
	assert_nv 1 "" $'nvidia-gpu-discovery.sh: wanted 4 GPUs, found 3 (0,1,2)\n'
	FAKE_NVIDIA_SMI_MODE=garbage nv_run 1
	assert_nv 1 "" "nvidia-gpu-discovery.sh: 'nvidia-smi --query-gpu=index --format=csv,noheader' printed 'No devices were found' where a GPU index was expected
"
}

# ---------------------------------------------------------------------------
# The coordination file

# A new file, 0660 whatever the umask, with "INDEX PID STARTTIME" for the
# process that ran the script; the next run takes the rest; a run that
# cannot be satisfied changes nothing.
case_coord_record() {
	nv_setup
	local want
	umask 077
	nv_run_coord 2
	assert_nv 0 $'0,1\n' ""
	assert_eq "-rw-rw----" "$(stat -c %A "$COORD")" "mode of the new coordination file"
	want="0 $$$T$ME_ST
1 $$$T$ME_ST
"
	assert_file "$COORD" "$want"
	nv_run_coord 2
	assert_nv 0 $'2,3\n' ""
	want+="2 $$$T$ME_ST
3 $$$T$ME_ST
"
	assert_file "$COORD" "$want"
	nv_run_coord 1
	assert_nv 1 "" "nvidia-gpu-discovery.sh: wanted 1 GPU, found 0 free of 4 (coordination file $COORD)
"
	assert_file "$COORD" "$want"
}

# Flink's documented spelling, --enable-coordination, and the options in
# any order.
case_coord_alias() {
	nv_setup
	nv_run 3 --coordination-file "$COORD" --enable-coordination
	assert_nv 0 $'0,1,2\n' ""
	assert_file "$COORD" "0 $$$T$ME_ST
1 $$$T$ME_ST
2 $$$T$ME_ST
"
	nv_run 2 --enable-coordination --coordination-file "$COORD"
	assert_nv 1 "" "nvidia-gpu-discovery.sh: wanted 2 GPUs, found 1 free of 4 (coordination file $COORD)
"
}

# GPUs of live owners are skipped: extres' three-field lines and Flink's
# two-field ones; their lines are kept as they were.
case_coord_skip_live() {
	nv_setup
	local foreign="1 $$ $ME_ST
2 1
"
	printf '%s' "$foreign" >"$COORD"
	nv_run_coord 2
	assert_nv 0 $'0,3\n' ""
	assert_file "$COORD" "$foreign""0 $$$T$ME_ST
3 $$$T$ME_ST
"
}

# Owners that are gone give their GPUs back: a dead PID (with or without a
# start time), a PID now used by a process started at another time, a
# zombie. Only their lines go.
case_coord_reclaim() {
	nv_setup
	local dead1 dead2 zst
	dead1=$(dead_pid)
	dead2=$(dead_pid)
	make_zombie
	zst=$(proc_starttime "$ZOMBIE")
	! pid_alive "$dead1" || fail "pid $dead1 was reused at once"
	! pid_alive "$dead2" || fail "pid $dead2 was reused at once"
	printf '%s\n' "0 $dead1 12345" "1 $$ $((ME_ST + 1))" "2 $ZOMBIE $zst" \
		"3 $$ $ME_ST" "4 $dead2" >"$COORD"
	export FAKE_NVIDIA_SMI_GPUS=6
	nv_run_coord 4
	assert_nv 0 $'0,1,2,4\n' ""
	assert_file "$COORD" "3 $$ $ME_ST
0 $$$T$ME_ST
1 $$$T$ME_ST
2 $$$T$ME_ST
4 $$$T$ME_ST
"
	# A failed run reclaims nothing on disk: the file stays as it was.
	printf '%s\n' "0 $dead1" "1 $$ $ME_ST" >"$COORD"
	nv_run_coord 6
	assert_nv 1 "" "nvidia-gpu-discovery.sh: wanted 6 GPUs, found 5 free of 6 (coordination file $COORD)
"
	assert_file "$COORD" "0 $dead1
1 $$ $ME_ST
"
}

# Indexes match exactly: a live "10" or "01" holds neither 1 nor 0, and a
# dead "0" next to a live "10" is reclaimed while "10" stays.
case_coord_exact() {
	nv_setup
	local dead
	dead=$(dead_pid)
	printf '%s\n' "0 $dead" "10 $$ $ME_ST" "01 $$ $ME_ST" >"$COORD"
	export FAKE_NVIDIA_SMI_GPUS=12
	nv_run_coord 2
	assert_nv 0 $'0,1\n' ""
	assert_file "$COORD" "10 $$ $ME_ST
01 $$ $ME_ST
0 $$$T$ME_ST
1 $$$T$ME_ST
"
	nv_run_coord 9
	assert_nv 0 $'2,3,4,5,6,7,8,9,11\n' ""
	[[ $(grep -c "^10 $$ " "$COORD") == 1 ]] || fail "the line for 10 is not kept once: $(cat "$COORD")"
}

# Lines the allocator cannot parse are kept byte for byte and hold
# nothing; blank lines are dropped; a CR ends a field as a blank does.
case_coord_garbage() {
	nv_setup
	local dead kept
	dead=$(dead_pid)
	printf -v kept '%s\n' garbage "1 notapid" "1 0" "1 -3" "1 2147483648" "# held by hand" \
		"  leading blanks" $'\x01 x' "2 $$ $ME_ST"$'\r' "3 $$ not-a-start-time"
	printf '%s\t \n\n0 %s\r\n' "$kept" "$dead" >"$COORD"
	nv_run_coord 2
	assert_nv 0 $'0,1\n' ""
	assert_file "$COORD" "$kept""0 $$$T$ME_ST
1 $$$T$ME_ST
"
	nv_run_coord 1
	assert_nv 1 "" "nvidia-gpu-discovery.sh: wanted 1 GPU, found 0 free of 4 (coordination file $COORD)
"
	# A NUL byte, even in the last line without a newline: bash cannot
	# keep it, so the file is left alone.
	local nul
	for nul in '0 1\0 2\n' '0 1\0 2'; do
		printf '%b' "$nul" >"$COORD"
		cp "$COORD" "$WORK/copy"
		nv_run_coord 1
		assert_nv 1 "" "nvidia-gpu-discovery.sh: coordination file $COORD contains NUL bytes, which this script cannot keep; refusing to rewrite it
"
		cmp -s "$COORD" "$WORK/copy" || fail "the file with a NUL byte was changed"
	done
}

# extres reads at most 16 MiB of a coordination file: the script refuses to
# grow one past that, and leaves it as it was.
case_coord_size() {
	nv_setup
	# One kept line of 16 MiB less 4 bytes: any new line crosses the limit.
	{
		head -c $((16777216 - 5)) /dev/zero | tr '\0' x
		printf '\n'
	} >"$COORD"
	cp "$COORD" "$WORK/copy"
	nv_run_coord 1
	assert_nv 1 "" "nvidia-gpu-discovery.sh: coordination file $COORD would grow to $((16777216 - 4 + ${#T} + 3 + ${#$} + ${#ME_ST})) bytes, past the 16777216-byte limit; nothing was written
"
	cmp -s "$COORD" "$WORK/copy" || fail "the file past the limit was changed"
}

# A symbolic link (dangling or not), a FIFO, a directory or a file with a
# second hard link is refused, naming the path; nothing is touched and
# the FIFO does not make the script hang.
case_coord_refuse() {
	nv_setup
	local p why
	printf 'precious\n' >"$WORK/target"
	ln -s "$WORK/target" "$WORK/link"
	ln -s "$WORK/nothing" "$WORK/dangling"
	mkfifo "$WORK/fifo"
	mkdir "$WORK/dir"
	printf '0 1\n' >"$WORK/hard"
	ln "$WORK/hard" "$WORK/hard2"
	for p in link dangling fifo dir hard; do
		case $p in
		link | dangling) why="is a symbolic link" ;;
		fifo) why="is a FIFO" ;;
		dir) why="is a directory" ;;
		hard) why="has 2 hard links" ;;
		esac
		NV_STATUS=0
		timeout 10 "$NVSCRIPT" 1 --enable-coordination-mode --coordination-file "$WORK/$p" \
			>"$WORK/nv.out" 2>"$RUN_ERR" </dev/null || NV_STATUS=$?
		[[ $NV_STATUS != 124 ]] || fail "the script hangs on $p"
		assert_nv 1 "" "nvidia-gpu-discovery.sh: $WORK/$p $why; refusing to use it as a coordination file
"
	done
	assert_file "$WORK/target" $'precious\n'
	[[ ! -e $WORK/nothing ]] || fail "a file was created through the dangling link"
	[[ -p $WORK/fifo ]] || fail "the FIFO is gone"
	assert_eq "" "$(ls -A "$WORK/dir")" "the directory"
	assert_file "$WORK/hard" $'0 1\n'
	assert_eq "2" "$(stat -c %h "$WORK/hard2")" "links of hard2"
	# A path that cannot be created at all.
	nv_run 1 --enable-coordination-mode --coordination-file "$WORK/nodir/gpu.coord"
	assert_nv 1 "" "nvidia-gpu-discovery.sh: cannot create coordination file $WORK/nodir/gpu.coord: No such file or directory
"
}

# The file is rewritten in place: the inode stays, a reader holding it
# open sees the new content, and a shorter content leaves no tail behind.
case_coord_inode() {
	nv_setup
	local ino dead fd long
	dead=$(dead_pid)
	long="0 $dead 18446744073709551615 and a long comment to make the file shrink"
	printf '%s\n' "$long" "3 $$ $ME_ST" >"$COORD"
	ino=$(stat -c %i "$COORD")
	exec {fd}<"$COORD"
	nv_run_coord 1
	assert_nv 0 $'0\n' ""
	assert_eq "$ino" "$(stat -c %i "$COORD")" "inode after a shrinking rewrite"
	assert_file "$COORD" "3 $$ $ME_ST
0 $$$T$ME_ST
"
	assert_file "/proc/$$/fd/$fd" "3 $$ $ME_ST
0 $$$T$ME_ST
"
	nv_run_coord 2
	assert_nv 0 $'1,2\n' ""
	assert_eq "$ino" "$(stat -c %i "$COORD")" "inode after a growing rewrite"
	assert_file "/proc/$$/fd/$fd" "3 $$ $ME_ST
0 $$$T$ME_ST
1 $$$T$ME_ST
2 $$$T$ME_ST
"
	exec {fd}<&-
}

# Whether the script (PID) waits for the lock on $COORD; fail if it ended.
script_waits() {
	pid_alive "$1" || fail "the script did not wait for the lock"
	flock_waited "$COORD"
}

# The script waits for the lock that another process holds on the file,
# and reads the file only once it has it.
case_coord_lock() {
	nv_setup
	local fd pid status=0
	: >"$COORD"
	exec {fd}<"$COORD"
	flock -x "$fd"
	"$NVSCRIPT" 1 --enable-coordination-mode --coordination-file "$COORD" \
		>"$WORK/nv.out" 2>"$RUN_ERR" </dev/null &
	pid=$!
	wait_until 10 "the script waiting for the lock" script_waits "$pid"
	assert_file "$COORD" ""
	# Written while the lock is held: the script must see it.
	printf '0 %s %s\n' $$ "$ME_ST" >"$COORD"
	flock -u "$fd"
	exec {fd}<&-
	wait_until 10 "the script's end" pid_gone "$pid"
	wait "$pid" || status=$?
	[[ $status == 0 ]] || fail "exited with status $status: $(cat "$RUN_ERR")"
	assert_file "$WORK/nv.out" $'1\n'
	assert_file "$COORD" "0 $$ $ME_ST
1 $$$T$ME_ST
"
}

# ---------------------------------------------------------------------------
# Many owners at once

# owner_start TAG: a long-lived owner process that runs the script once
# (amount 1, coordination through $COORD) as its direct child, leaves the
# status in $WORK/TAG.rc and the script's output in $WORK/TAG.out and
# .err, then stays alive as `sleep` under the same PID. It waits for
# $WORK/go to exist first; with KILL_AFTER set (seconds) it kills its
# script that long after starting it. Sets OWNER_PID, a child of this
# shell, also listed in $WORK/owners.pid for the cleanup.
OWNER_PID=
owner_start() {
	bash -c '
		while [[ ! -e $1/go ]]; do sleep 0.01; done
		"$2" 1 --enable-coordination-mode --coordination-file "$3" \
			>"$1/$4.out" 2>"$1/$4.err" </dev/null &
		pid=$!
		if [[ -n ${KILL_AFTER:-} ]]; then
			sleep "$KILL_AFTER"
			kill -KILL "$pid" 2>/dev/null
		fi
		status=0
		wait "$pid" || status=$?
		echo "$status" >"$1/$4.rc"
		exec sleep 120' owner "$WORK" "$NVSCRIPT" "$COORD" "$1" \
		>"$WORK/$1.log" 2>&1 </dev/null &
	OWNER_PID=$!
	echo "$OWNER_PID" >>"$WORK/owners.pid"
}

# Wait (20 s at most) for $WORK/TAG.rc of every TAG given.
owners_wait() {
	local tag
	for tag in "$@"; do
		wait_until 20 "owner $tag finishing its run" test -s "$WORK/$tag.rc"
	done
}

# Kill owner PIDs and reap them.
owners_kill() {
	local pid
	for pid in "$@"; do
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
}

# The coordination file's lines, sorted, without blank ones.
coord_sorted() {
	grep -v '^[[:space:]]*$' "$COORD" | sort || true
}

# 8 owners at once for 4 GPUs, amount 1, for 10 rounds: exactly 4 win,
# with distinct GPUs, 4 fail, and the file lists exactly the winners. The
# winners are then killed, and the next round must reclaim their GPUs.
case_race() {
	nv_setup
	local round i tag rc out want seen wins losses
	local -a pids
	for round in $(seq 10); do
		rm -f "$WORK/go"
		pids=()
		for i in $(seq 8); do
			owner_start "r$round.$i"
			pids+=("$OWNER_PID")
		done
		# All eight are up and polling: let them go at once.
		: >"$WORK/go"
		for i in $(seq 8); do
			owners_wait "r$round.$i"
		done
		want='' seen=' ' wins=0 losses=0
		for i in $(seq 8); do
			tag=r$round.$i
			rc=$(cat "$WORK/$tag.rc")
			out=$(cat "$WORK/$tag.out")
			if [[ $rc == 0 ]]; then
				[[ $out =~ ^[0-3]$ ]] || fail "round $round: winner $tag printed '$out'"
				[[ $seen != *" $out "* ]] || fail "round $round: GPU $out given twice"
				seen+="$out "
				want+="$out ${pids[i - 1]}$T$(proc_starttime "${pids[i - 1]}")"$'\n'
				wins=$((wins + 1))
			else
				assert_eq 1 "$rc" "round $round: status of $tag"
				assert_file "$WORK/$tag.err" "nvidia-gpu-discovery.sh: wanted 1 GPU, found 0 free of 4 (coordination file $COORD)
"
				losses=$((losses + 1))
			fi
		done
		assert_eq "4 4" "$wins $losses" "round $round: winners and losers"
		assert_eq "$(sort <<<"${want%$'\n'}")" "$(coord_sorted)" "round $round: coordination file"
		owners_kill "${pids[@]}"
	done
	assert_eq 1 "$(stat -c %h "$COORD")" "links of the coordination file"
}

# check_crash_round ROUND: every line of the file is "GPU PID STARTTIME";
# no GPU is held twice by live owners; every live owner whose run
# succeeded still has its exact line. Sets HELD to the GPUs of live owners.
HELD=
check_crash_round() {
	local idx pid st line tag rest
	HELD=' '
	while read -r idx pid st rest; do
		[[ $idx =~ ^[0-7]$ && $pid =~ ^[0-9]+$ && $st =~ ^[0-9]+$ && -z $rest ]] ||
			fail "$1: bad line '$idx $pid $st $rest' in: $(cat "$COORD")"
		# An owner is live with its own start time only.
		if ! pid_alive "$pid" || [[ $(proc_starttime "$pid") != "$st" ]]; then
			continue
		fi
		[[ $HELD != *" $idx "* ]] || fail "$1: GPU $idx held twice: $(cat "$COORD")"
		HELD+="$idx "
	done < <(coord_sorted)
	while read -r tag pid; do
		if [[ $(cat "$WORK/$tag.rc") != 0 ]] || ! pid_alive "$pid"; then
			continue
		fi
		line="$(cat "$WORK/$tag.out") $pid$T$(proc_starttime "$pid")"
		grep -qxF -- "$line" "$COORD" ||
			fail "$1: the line '$line' of live owner $tag is gone: $(cat "$COORD")"
	done <"$WORK/tags"
}

# Owners are killed with SIGKILL while others allocate, and some scripts are
# killed mid-run: the lines of live owners stay intact, no GPU is ever held
# twice, and the GPUs of the dead are taken again, until the live owners
# hold all 8.
case_crash() {
	nv_setup
	export FAKE_NVIDIA_SMI_GPUS=8
	local -a live
	local i j n=0 pid victim
	: >"$WORK/go"
	: >"$WORK/tags"
	for i in $(seq 8); do
		owner_start "s$i"
		echo "s$i $OWNER_PID" >>"$WORK/tags"
	done
	for i in $(seq 8); do
		owners_wait "s$i"
		assert_eq 0 "$(cat "$WORK/s$i.rc")" "status of first owner s$i"
	done
	check_crash_round "start"
	assert_eq " 0 1 2 3 4 5 6 7 " "$HELD" "GPUs held at the start"
	for i in $(seq 12); do
		live=()
		while read -r pid; do
			! pid_alive "$pid" || live+=("$pid")
		done <"$WORK/owners.pid"
		victim=${live[RANDOM % ${#live[@]}]}
		# Not waited for: the new owners race with its death.
		kill -KILL "$victim"
		for j in 1 2 3; do
			n=$((n + 1))
			if ((j == 3)); then
				KILL_AFTER=0.0$((RANDOM % 10)) owner_start "c$n"
			else
				owner_start "c$n"
			fi
			echo "c$n $OWNER_PID" >>"$WORK/tags"
		done
		owners_wait "c$((n - 2))" "c$((n - 1))" "c$n"
		wait "$victim" 2>/dev/null || true
		check_crash_round "round $i"
	done
	# The GPUs of every dead owner are taken again.
	for i in $(seq 8); do
		n=$((n + 1))
		owner_start "c$n"
		echo "c$n $OWNER_PID" >>"$WORK/tags"
		owners_wait "c$n"
	done
	check_crash_round "end"
	assert_eq " 0 1 2 3 4 5 6 7 " "$(tr ' ' '\n' <<<"$HELD" | grep . | sort -n | tr '\n' ' ' | sed 's/^/ /')" \
		"GPUs held by live owners at the end"
}

# ---------------------------------------------------------------------------
# Flink's default script: the GPU driver factory without discovery-script.path

# write_default_config [ARGS]: a gpu resource of Flink's GPU driver factory
# with no script path, amount 2, discovery-script.args ARGS when given.
write_default_config() {
	{
		printf '%s\n' \
			'external-resources: gpu' \
			'external-resource.gpu.amount: 2' \
			'external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory'
		[[ -z ${1:-} ]] || printf 'external-resource.gpu.param.discovery-script.args: %s\n' "$1"
	} >"$WORK/extres.yaml"
}

# assert_check_says LINE: `extresctl check` accepts the config and prints
# LINE among its own.
assert_check_says() {
	local out
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>"$RUN_ERR") ||
		fail "extresctl check failed: $(cat "$RUN_ERR")"
	assert_contains $'\n'"$out"$'\n' $'\n'"$1"$'\n' "extresctl check"
}

# With FLINK_HOME set and Flink's script in its plugins directory, that
# script runs, as Flink would run it (here a fake that takes its indexes
# from its args), and extresctl check says which and why.
case_default_flink_home() {
	nv_setup mount
	local plugin=$WORK/flink/plugins/external-resource-gpu
	mkdir -p "$plugin"
	cp "$SRCDIR/tests/integration/scripts/flink.sh" "$plugin/nvidia-gpu-discovery.sh"
	chmod 0755 "$plugin/nvidia-gpu-discovery.sh"
	export FLINK_HOME=$WORK/flink
	write_default_config "--record $WORK/args --indexes 5,7"
	assert_check_says "gpu: discovery-script.path: $plugin/nvidia-gpu-discovery.sh (Flink's default under FLINK_HOME)"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/index" $'5\n'
	assert_file "$MNT/gpu/1/index" $'7\n'
	assert_eq "2
--record
$WORK/args
--indexes
5,7" "$(cat "$WORK/args")" "arguments Flink's script got"
	daemon_stop
}

# Without FLINK_HOME (or without Flink's script under it) the script
# shipped with extres runs: here the build tree's copy, against the fake
# nvidia-smi.
case_default_shipped() {
	nv_setup mount
	unset FLINK_HOME
	write_default_config
	assert_check_says "gpu: discovery-script.path: $BUILDDIR/scripts/nvidia-gpu-discovery.sh (the script shipped with extres; FLINK_HOME is not set)"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_file "$MNT/gpu/0/index" $'0\n'
	assert_file "$MNT/gpu/1/index" $'1\n'
	daemon_stop

	export FLINK_HOME=$WORK/flink
	mkdir -p "$FLINK_HOME/plugins"
	assert_check_says "gpu: discovery-script.path: $BUILDDIR/scripts/nvidia-gpu-discovery.sh (the script shipped with extres; there is no $FLINK_HOME/plugins/external-resource-gpu/nvidia-gpu-discovery.sh)"
	FAKE_NVIDIA_SMI_GPUS=3 daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/1/index" $'1\n'
	daemon_stop
}

# ---------------------------------------------------------------------------
# Under extresd

# A script resource using the shipped script in coordination mode, with
# extres' own coordination-file set to the same file: the script records
# extresd (its parent) as the owner, and extres adds no line of its own.
# A clean exit removes the lines the script wrote for extresd (and only
# those); a reload with the same settings does not run the script again
# (it would take more GPUs, its own being held).
case_extresd() {
	nv_setup mount
	local st foreign="0 $$ $ME_ST"
	printf '%s\n' "$foreign" >"$COORD"
	printf '%s\n' \
		'external-resources: gpu' \
		'external-resource.gpu.amount: 2' \
		'external-resource.gpu.driver-factory.class: org.apache.flink.externalresource.gpu.GPUDriverFactory' \
		"external-resource.gpu.coordination-file: $COORD" \
		"external-resource.gpu.param.discovery-script.path: $NVSCRIPT" \
		"external-resource.gpu.param.discovery-script.args: --enable-coordination-mode --coordination-file $COORD" \
		>"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_file "$MNT/gpu/0/index" $'1\n'
	assert_file "$MNT/gpu/1/index" $'2\n'
	st=$(proc_starttime "$DAEMON_PID")
	assert_file "$COORD" "$foreign
1 $DAEMON_PID$T$st
2 $DAEMON_PID$T$st
"
	"$EXTRESCTL" reload "$MNT" >/dev/null || fail "extresctl reload failed"
	"$EXTRESCTL" reload "$MNT" >/dev/null || fail "extresctl reload failed"
	assert_file "$MNT/gpu/0/index" $'1\n'
	assert_file "$MNT/gpu/1/index" $'2\n'
	assert_file "$COORD" "$foreign
1 $DAEMON_PID$T$st
2 $DAEMON_PID$T$st
"
	daemon_stop
	assert_file "$COORD" "$foreign
"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/index" $'1\n'
	assert_file "$MNT/gpu/1/index" $'2\n'
	st=$(proc_starttime "$DAEMON_PID")
	assert_file "$COORD" "$foreign
1 $DAEMON_PID$T$st
2 $DAEMON_PID$T$st
"
	daemon_stop
}

# extres' own allocator and the script share one file: each skips what the
# other holds, and extresd's clean exit removes only its own lines.
case_extresd_shared() {
	nv_setup mount
	printf '%s\n' \
		'external-resources: gpu' \
		'external-resource.gpu.amount: 2' \
		'external-resource.gpu.driver: static' \
		'external-resource.gpu.param.indexes: 0,1,2,3' \
		"external-resource.gpu.coordination-file: $COORD" \
		>"$WORK/extres.yaml"
	nv_run_coord 1
	assert_nv 0 $'0\n' ""
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/index" $'1\n'
	assert_file "$MNT/gpu/1/index" $'2\n'
	nv_run_coord 1
	assert_nv 0 $'3\n' ""
	nv_run_coord 1
	assert_nv 1 "" "nvidia-gpu-discovery.sh: wanted 1 GPU, found 0 free of 4 (coordination file $COORD)
"
	local st
	st=$(proc_starttime "$DAEMON_PID")
	assert_file "$COORD" "0 $$$T$ME_ST
1 $DAEMON_PID$T$st
2 $DAEMON_PID$T$st
3 $$$T$ME_ST
"
	daemon_stop
	assert_file "$COORD" "0 $$$T$ME_ST
3 $$$T$ME_ST
"
	nv_run_coord 2
	assert_nv 0 $'1,2\n' ""
}

it_main "$@"
