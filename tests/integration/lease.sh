#!/bin/bash
# SPDX-License-Identifier: MIT
#
# extresctl run: leases of devices for one command, through a coordination
# file shared with extresd and Flink-style scripts. Real processes, real
# files; the `static` driver needs no GPU.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lease_lib.sh
source "$(dirname "$0")/lease_lib.sh"

WRITER=$(dirname "$0")/flink-writer.sh
FAKE_LIB=$BUILDDIR/tests/mock/libnvidia-ml.so.1
NOBODY=65534

# lease_config N [EXTRA...]: a static gpu resource of N devices 0..N-1
# with the coordination file $WORK/gpu.coord; EXTRA lines appended.
lease_config() {
	local n=$1
	shift
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.amount: 1' \
			'external-resource.gpu.driver: static' \
			"external-resource.gpu.param.indexes: $(seq -s, 0 $((n - 1)))" \
			"external-resource.gpu.coordination-file: $WORK/gpu.coord"
		printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
	COORD=$WORK/gpu.coord
	QUEUE=$COORD.queue
}

exists() { [[ -e $1 ]]; }

# PID and its children: state, kernel wait channel, blocked and pending
# signals, command line.
procs_of() {
	local pid
	for pid in "$1" $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		printf '[%s %s %s blk=%s pnd=%s %s] ' "$pid" "$(proc_state "$pid")" \
			"$(cat /proc/"$pid"/wchan 2>/dev/null)" \
			"$(sed -n 's/^SigBlk:\t//p' /proc/"$pid"/status 2>/dev/null)" \
			"$(sed -n 's/^ShdPnd:\t//p' /proc/"$pid"/status 2>/dev/null)" \
			"$(tr '\0' ' ' </proc/"$pid"/cmdline 2>/dev/null)"
	done
}

# Milliseconds since the epoch.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The sampler: until $WORK/stop, snapshot FILE under a shared lock (so no
# rewrite is seen half done) and append to OUT every violation: a key held
# by two live owners, or more than MAX live lines. Live: the PID runs, is
# no zombie, and has the recorded start time when there is one.
start_sampler() {
	local file=$1 max=$2 out=$3
	: >"$out"
	: >"$WORK/samples"
	(
		while [[ ! -e $WORK/stop ]]; do
			flock -s "$file" cat "$file" >"$WORK/sample" 2>/dev/null || true
			awk -v max="$max" '
				function live(pid, st,   line, f, rest) {
					line = ""
					if ((getline line < ("/proc/" pid "/stat")) <= 0)
						return 0
					close("/proc/" pid "/stat")
					rest = line
					sub(/.*\) /, "", rest)
					split(rest, f, " ")
					if (f[1] == "Z" || f[1] == "X")
						return 0
					return st == "" || f[20] == st
				}
				NF >= 2 && live($2, NF >= 3 ? $3 : "") {
					n++
					if (++held[$1] > 1)
						print "key " $1 " held twice: " $0
				}
				END { if (n > max) print n " live lines, more than " max }
			' "$WORK/sample" >>"$out" || true
			# (mawk dies on a read of /proc/PID/stat that fails
			# with ESRCH as PID exits: that sample is lost, no more.)
			echo x >>"$WORK/samples"
			sleep 0.01
		done
	) &
	SAMPLER=$!
}

stop_sampler() {
	touch "$WORK/stop"
	wait "$SAMPLER"
	[[ ! -s $1 ]] || fail "the sampler saw: $(sort -u "$1" | head -5)"
	(($(nlines "$WORK/samples") >= 10)) || fail "the sampler took only $(nlines "$WORK/samples") samples"
	it_log "$(nlines "$WORK/samples") samples of the coordination file, none wrong"
}

# Lines of $COORD that carry a lease id.
lease_lines() {
	grep -c 'lease=' "$COORD" 2>/dev/null || true
}

# 32 waiters for 8 devices, queued in a known order: never more than 8
# commands at once, no device twice, served in arrival order, and nothing
# left in the file or the queue at the end.
case_fifo() {
	it_setup_nofuse
	lease_config 8
	local log=$WORK/log i pids=() rc max bad
	start_blocker 8
	for i in $(seq 0 31); do
		run_bg --wait gpu=1 -- sh -c "echo \"\$(date +%s.%N) start \$EXTRES_GPU_INDEXES $i\" >>'$log'; sleep 0.5; echo \"\$(date +%s.%N) end \$EXTRES_GPU_INDEXES $i\" >>'$log'" \
			2>>"$WORK/waiters.err" &
		pids+=($!)
		# In line before the next one comes: the arrival order is i.
		wait_until 10 "waiter $i in the queue" lines_are "$QUEUE" $((i + 1))
	done
	start_sampler "$COORD" 8 "$WORK/violations"
	touch "$WORK/go"
	date +%s.%N >"$WORK/go.time"
	wait "$BLOCKER" || fail "the blocker exited with status $?"
	for i in "${!pids[@]}"; do
		rc=0
		wait "${pids[$i]}" || rc=$?
		[[ $rc == 0 ]] || fail "waiter $i exited with status $rc: $(cat "$WORK/waiters.err")"
	done
	stop_sampler "$WORK/violations"
	(($(grep -c start "$log") == 32 && $(grep -c end "$log") == 32)) ||
		fail "not every command ran: $(cat "$log")"
	# At most 8 at once, and a device never in two commands at once.
	read -r max bad < <(sort -n "$log" | awk '
		$2 == "start" { if (++cur > max) max = cur; if (busy[$3]++) bad = bad "dev" $3 "@" $1 "," }
		$2 == "end" { cur--; busy[$3]-- }
		END { print max, (bad == "" ? "-" : bad) }')
	((max <= 8)) || fail "$max commands held devices at once"
	[[ $bad == - ]] || fail "a device was held twice: $bad"
	# Arrival order: no waiter starts a round (0.5 s) before an earlier
	# one. A command's own clock reading may lag its take by a CPU's
	# worth of waiting on a loaded machine: 0.3 s of slack for that.
	bad=$(awk '$2 == "start" { s[$4] = $1 }
		END { for (j = 1; j < 32; j++) { if (s[j - 1] > m) m = s[j - 1];
			if (m > s[j] + 0.3) printf "waiter %d started at %s, before an earlier one (%s); ", j, s[j], m } }' "$log")
	[[ -z $bad ]] || fail "not first come, first served: $bad"
	assert_eq 0 "$(nlines "$COORD")" "lines left in the coordination file"
	assert_eq 0 "$(nlines "$QUEUE")" "lines left in the queue"
	it_log "32 commands, at most $max at once, in arrival order, $(awk -v g="$(cat "$WORK/go.time")" '$1 > m { m = $1 } END { printf "%.2f", m - g }' "$log") s from the first release to the last end"
	[[ -z ${LEASE_KEEP_LOG:-} ]] || sort -n "$log" >"$LEASE_KEEP_LOG"
}

# kill -9 of extresctl: the command keeps its devices; its end frees them.
case_kill_wrapper() {
	it_setup_nofuse
	lease_config 2
	local w cmd st rc=0
	run_bg gpu=2 -- sh -c "echo \$\$ >'$WORK/cmd.pid'; while [ ! -e '$WORK/go' ]; do sleep 0.01; done" &
	w=$!
	wait_until 10 "the lease's lines" lines_are "$COORD" 2
	wait_until 10 "the command's pid" exists "$WORK/cmd.pid"
	cmd=$(cat "$WORK/cmd.pid")
	st=$(proc_starttime "$cmd")
	kill -KILL "$w"
	wait "$w" || rc=$?
	assert_eq 137 "$rc" "extresctl's status after SIGKILL"
	# Reaped, extresctl has nothing left running but the command (its one
	# child), which keeps the lines: no delay can change them.
	assert_file "$COORD" "0 $cmd$T$st${T}lease=$cmd-$st
1 $cmd$T$st${T}lease=$cmd-$st
"
	rc=0
	run gpu=1 -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 75 "$rc" "a run while the orphaned command holds both"
	assert_contains "$(cat "$RUN_ERR")" "PID $cmd (sh -c" "the holder named"
	touch "$WORK/go"
	wait_until 10 "the command's end" pid_gone "$cmd"
	run gpu=2 -- sh -c "echo \$EXTRES_GPU_INDEXES >'$WORK/got'" || fail "a run after the command's end exited with $?"
	assert_file "$WORK/got" $'0,1\n'
	assert_eq 0 "$(nlines "$COORD")" "lines left"
}

# kill -9 of the command: extresctl frees its lines at once and exits 137.
case_kill_command() {
	it_setup_nofuse
	lease_config 2
	local w cmd t0 t1 rc=0
	run_bg gpu=2 -- sh -c "echo \$\$ >'$WORK/cmd.pid'; exec sleep 30" &
	w=$!
	wait_until 10 "the lease's lines" lines_are "$COORD" 2
	wait_until 10 "the command's pid" exists "$WORK/cmd.pid"
	cmd=$(cat "$WORK/cmd.pid")
	t0=$(now_ms)
	kill -KILL "$cmd"
	wait_until 2 "the lines of a killed command removed" lines_are "$COORD" 0
	t1=$(now_ms)
	it_log "lines gone $((t1 - t0)) ms after kill -9 of the command"
	wait "$w" || rc=$?
	assert_eq 137 "$rc" "extresctl's status (128 + SIGKILL)"
}

# Both killed: the dead owner's lines are free at once to every taker.
case_kill_both() {
	it_setup_nofuse
	lease_config 2
	local w cmd
	run_bg gpu=2 -- sh -c "echo \$\$ >'$WORK/cmd.pid'; exec sleep 30" &
	w=$!
	wait_until 10 "the lease's lines" lines_are "$COORD" 2
	wait_until 10 "the command's pid" exists "$WORK/cmd.pid"
	cmd=$(cat "$WORK/cmd.pid")
	kill -KILL "$w"
	wait "$w" || true
	kill -KILL "$cmd"
	wait_until 10 "the command's end" pid_gone "$cmd"
	assert_eq 2 "$(nlines "$COORD")" "the dead lease's lines, still there"
	run gpu=2 -- true || fail "taking the dead lease's devices failed with $?"
	assert_eq 0 "$(nlines "$COORD")" "lines left"
}

# A line whose PID runs with another start time (reused) keeps nothing.
case_pid_reuse() {
	it_setup_nofuse
	lease_config 2
	local st
	st=$(proc_starttime $$)
	printf '0 %s\t%s\tlease=%s-%s\n1 %s\t%s\tlease=%s-%s\n' \
		$$ $((st + 1)) $$ $((st + 1)) $$ "$st" $$ "$st" >"$COORD"
	run gpu=1 -- sh -c "echo \$EXTRES_GPU_INDEXES >'$WORK/got'" || fail "run failed with $?"
	assert_file "$WORK/got" $'0\n'
	# The live line stays, byte for byte; the reused one went.
	assert_file "$COORD" "1 $$$T$st${T}lease=$$-$st
"
}

# Leases, an extresd with its own amount and Flink-style writers on one
# file: the live holders are disjoint at every moment.
case_interop() {
	it_setup
	lease_config 10
	sed -i 's/^external-resource.gpu.amount: 1$/external-resource.gpu.amount: 2/' "$WORK/extres.yaml"
	local i pids=() owner rc served
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	served=$(cat "$MNT"/gpu/*/index | tr '\n' ,)
	sleep 300 &
	owner=$!
	echo "$owner" >"$WORK/owner.pid"
	"$WRITER" "$COORD" "$owner" 2 0 1 2 3 4 5 6 7 8 9 >/dev/null || fail "the Flink-style writer failed"
	start_sampler "$COORD" 10 "$WORK/violations"
	for i in $(seq 0 7); do
		run_bg --wait=20 gpu=2 -- sh -c "echo \"\$EXTRES_GPU_INDEXES\" >>'$WORK/leased'; sleep 0.15" \
			2>>"$WORK/waiters.err" &
		pids+=($!)
	done
	# Short-lived Flink-style owners taking one device now and then.
	for i in $(seq 0 5); do
		sleep 0.2 &
		"$WRITER" "$COORD" "$!" 1 0 1 2 3 4 5 6 7 8 9 >>"$WORK/flink-took" 2>/dev/null || true
		sleep 0.1
	done
	for i in "${!pids[@]}"; do
		rc=0
		wait "${pids[$i]}" || rc=$?
		[[ $rc == 0 ]] || fail "lease $i exited with status $rc: $(cat "$WORK/waiters.err")"
	done
	stop_sampler "$WORK/violations"
	it_log "extresd served $served; Flink-style owners took $(tr '\n' ' ' <"$WORK/flink-took"); leases got $(tr '\n' ' ' <"$WORK/leased")"
	# Nobody took what extresd serves or the long-lived writer holds.
	! grep -Eq "(^|,)(${served//,/|}2|3)(,|$)" "$WORK/leased" ||
		fail "a lease got a device of extresd's ($served) or the writer's (2,3): $(cat "$WORK/leased")"
	assert_eq "" "$(grep 'lease=' "$COORD" || true)" "lease lines left"
	kill "$owner"
	daemon_stop
}

# Exit statuses: the command's, 128 + signal, 75 when busy (holders
# named) with or without a wait that times out.
case_status() {
	it_setup_nofuse
	lease_config 2
	local rc t0 t1
	rc=0; run gpu=1 -- sh -c 'exit 7' || rc=$?
	assert_eq 7 "$rc" "the command's exit status"
	rc=0; run gpu=1 -- sh -c 'kill -KILL $$' || rc=$?
	assert_eq 137 "$rc" "a command killed by SIGKILL"
	start_blocker 2
	rc=0; run gpu=1 -- touch "$WORK/ran" 2>"$RUN_ERR" || rc=$?
	assert_eq 75 "$rc" "busy without --wait"
	assert_contains "$(cat "$RUN_ERR")" "index 0 by PID " "the holders listed"
	assert_contains "$(cat "$RUN_ERR")" "(sh -c while [ ! -e" "the holder's command line"
	t0=$(now_ms)
	rc=0; run --wait=1 gpu=1 -- touch "$WORK/ran" 2>"$RUN_ERR" || rc=$?
	t1=$(now_ms)
	assert_eq 75 "$rc" "busy after --wait=1"
	assert_contains "$(cat "$RUN_ERR")" "gave up waiting: resource 'gpu'" "the timeout said"
	assert_contains "$(cat "$RUN_ERR")" "index 1 by PID " "the holders listed after the wait"
	((t1 - t0 >= 1000 && t1 - t0 < 4000)) || fail "--wait=1 gave up after $((t1 - t0)) ms"
	[[ ! -e $WORK/ran ]] || fail "a command ran without its devices"
	assert_eq 2 "$(nlines "$COORD")" "only the blocker's lines"
	assert_eq 0 "$(nlines "$QUEUE")" "the queue after the timeout"
	touch "$WORK/go"
	wait "$BLOCKER"
}

# Bad input: exit 2, nothing run, nothing recorded.
case_usage() {
	it_setup_nofuse
	lease_config 2 'external-resource.nic.amount: 1' \
		'external-resource.nic.driver: static' 'external-resource.nic.param.indexes: 0'
	sed -i 's/^external-resources: gpu$/external-resources: gpu;nic/' "$WORK/extres.yaml"
	local before args rc
	printf 'garbage line kept\n' >"$COORD"
	before=$(file_bytes "$COORD")
	while IFS= read -r args; do
		rc=0
		# shellcheck disable=SC2086 # the words are the arguments
		run $args 2>"$RUN_ERR" || rc=$?
		assert_eq 2 "$rc" "extresctl run $args"
		assert_contains "$(cat "$RUN_ERR")" "Try 'extresctl run --help'." "the usage hint for '$args'"
		[[ ! -e $WORK/ran ]] || fail "'$args' ran the command"
		assert_eq "$before" "$(file_bytes "$COORD")" "the file after '$args'"
		[[ ! -e $QUEUE ]] || fail "'$args' made a queue"
	done <<-EOF
	fpga=1 -- touch $WORK/ran
	gpu=0 -- touch $WORK/ran
	gpu=-1 -- touch $WORK/ran
	gpu=x -- touch $WORK/ran
	gpu=3 -- touch $WORK/ran
	--wait gpu=3 -- touch $WORK/ran
	gpu=1 touch $WORK/ran
	gpu=1 --
	-- touch $WORK/ran
	gpu gpu -- touch $WORK/ran
	--wait=soon gpu -- touch $WORK/ran
	--bogus gpu -- touch $WORK/ran
	EOF
	# A resource without a coordination file: an error naming it.
	rc=0
	run nic -- touch "$WORK/ran" 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "a resource without a coordination file"
	assert_contains "$(cat "$RUN_ERR")" "resource 'nic' has no coordination-file" "the error"
	[[ ! -e $WORK/ran ]] || fail "the command ran"
}

# SIGTERM, SIGINT, SIGHUP and SIGQUIT to extresctl reach the command.
case_signals() {
	it_setup_nofuse
	lease_config 1
	local sig w rc
	for sig in TERM INT HUP QUIT; do
		rm -f "$WORK/ready" "$WORK/got"
		run_bg gpu=1 -- sh -c "trap 'echo $sig >\"$WORK/got\"; exit 3' $sig; touch '$WORK/ready'; while :; do sleep 0.01; done" &
		w=$!
		wait_until 10 "the command ready" exists "$WORK/ready"
		kill "-$sig" "$w"
		# The bound only catches a hang, and says where it is.
		poll_until 10 pid_gone "$w" ||
			fail "extresctl run ($w) still runs 10 s after SIG$sig: $(procs_of "$w")"
		rc=0
		wait "$w" || rc=$?
		assert_eq 3 "$rc" "extresctl's status after SIG$sig"
		assert_file "$WORK/got" "$sig
"
		assert_eq 0 "$(nlines "$COORD")" "lines left after SIG$sig"
	done
}

# Ctrl-C while waiting: exit 130, out of the queue, nothing recorded, and
# the command never ran.
case_wait_interrupt() {
	it_setup_nofuse
	lease_config 1
	local w rc t0 t1
	start_blocker 1
	run_bg --wait gpu=1 -- touch "$WORK/ran" 2>"$RUN_ERR" &
	w=$!
	wait_until 10 "the waiter in the queue" lines_are "$QUEUE" 1
	t0=$(now_ms)
	kill -INT "$w"
	rc=0
	wait "$w" || rc=$?
	t1=$(now_ms)
	assert_eq 130 "$rc" "a waiter's status after SIGINT"
	((t1 - t0 < 1000)) || fail "SIGINT took $((t1 - t0)) ms"
	assert_eq 0 "$(nlines "$QUEUE")" "the queue after SIGINT"
	assert_eq 1 "$(nlines "$COORD")" "only the blocker's line"
	touch "$WORK/go"
	wait "$BLOCKER"
	[[ ! -e $WORK/ran ]] || fail "the interrupted command ran"
	assert_eq 0 "$(nlines "$COORD")" "lines left"
}

# The environment: NVIDIA devices by UUID, the indexes, the lease id.
case_env() {
	it_setup_nofuse
	[[ -f $FAKE_LIB ]] || fail "$FAKE_LIB is missing (build tests/mock first)"
	export FAKE_NVML_GPUS=3
	printf '%s\n' 'external-resources: gpu' 'external-resource.gpu.amount: 1' \
		'external-resource.gpu.driver: nvml' \
		"external-resource.gpu.param.library: $FAKE_LIB" \
		"external-resource.gpu.coordination-file: $WORK/gpu.coord" >"$WORK/extres.yaml"
	COORD=$WORK/gpu.coord
	local got pid st u=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c
	got=$(run gpu=2 -- sh -c 'echo "pid=$$"; env | grep -E "^(CUDA_DEVICE_ORDER|CUDA_VISIBLE_DEVICES|EXTRES_GPU_INDEXES|EXTRES_LEASE)=" | sort')
	pid=$(sed -n 's/^pid=//p' <<<"$got")
	st=$(awk -v p="$pid" '$0 ~ "EXTRES_LEASE=" { split($0, a, "="); split(a[2], b, "-"); print b[2] }' <<<"$got")
	assert_eq "pid=$pid
CUDA_DEVICE_ORDER=PCI_BUS_ID
CUDA_VISIBLE_DEVICES=${u}0000,${u}0001
EXTRES_GPU_INDEXES=0,1
EXTRES_LEASE=$pid-$st" "$got" "the command's environment"
	[[ $st =~ ^[0-9]+$ ]] || fail "no start time in the lease id"
	# A configured variable holds the indexes; quotes in values survive.
	lease_config 1 'external-resource.gpu.env-var: MY_DEVICES'
	sed -i "s/param.indexes: 0/param.indexes: \"it's\"/" "$WORK/extres.yaml"
	got=$(run gpu -- sh -c 'env | grep -E "^(MY_DEVICES|EXTRES_GPU_INDEXES)=" | sort')
	assert_eq "EXTRES_GPU_INDEXES=it's
MY_DEVICES=it's" "$got" "a configured variable"
}

# --bind-cpus: the command runs on its devices' local CPUs; without a
# local_cpulist, unbound, and said so.
case_bind_cpus() {
	it_setup_nofuse
	local cpus got mine
	cpus=$(nproc)
	mine=$(awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)
	{
		printf '%s\n' 'external-resources: gpu' 'external-resource.gpu.amount: 1' \
			'external-resource.gpu.driver: static' \
			"external-resource.gpu.coordination-file: $WORK/gpu.coord" \
			'external-resource.gpu.param.devices:'
		printf '  - {index: "0", local_cpulist: "0"}\n'
		printf '  - {index: "1", local_cpulist: "%s"}\n' "$((cpus - 1))"
	} >"$WORK/extres.yaml"
	got=$(run --bind-cpus gpu=1 -- awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)
	assert_eq 0 "$got" "the CPUs of a command on device 0"
	got=$(run --bind-cpus gpu=2 -- awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status)
	if ((cpus > 1)); then
		assert_eq "0,$((cpus - 1))" "$(tr '-' ',' <<<"$got")" "the CPUs of a command on devices 0 and 1"
	fi
	lease_config 2
	got=$(run --bind-cpus gpu=1 -- awk '/^Cpus_allowed_list/ { print $2 }' /proc/self/status 2>"$RUN_ERR")
	assert_eq "$mine" "$got" "the CPUs of a command whose device has no local_cpulist"
	assert_contains "$(cat "$RUN_ERR")" "has no local_cpulist property; running COMMAND unbound" "the warning"
}

# Another user: a coordination file it could not trust is refused; a
# file shared with its group (root's, group-writable) is used.
case_shared_group() {
	it_setup_nofuse
	command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
	[[ $(id -u) == 0 ]] || fail "this case needs root (setpriv)"
	chmod 0755 "$WORK"
	mkdir -m 0755 "$WORK/shared"
	lease_config 2
	sed -i "s|$WORK/gpu.coord|$WORK/shared/gpu|" "$WORK/extres.yaml"
	install -m 0664 -o root -g 4242 /dev/null "$WORK/shared/gpu"
	install -m 0664 -o root -g 4242 /dev/null "$WORK/shared/gpu.queue"
	local as=(setpriv --reuid="$NOBODY" --regid="$NOBODY" --groups=4242 --)
	local got rc
	got=$("${as[@]}" "$EXTRESCTL" -c "$WORK/extres.yaml" run --wait=5 gpu -- sh -c "cat '$WORK/shared/gpu'") ||
		fail "a run by a member of the file's group failed: $got"
	[[ $got == "0 "*"lease="* ]] || fail "no lease line while the command ran: $got"
	assert_eq 0 "$(nlines "$WORK/shared/gpu")" "lines left"
	# Group-writable by a group the caller is not in: refused.
	chgrp 4243 "$WORK/shared/gpu"
	rc=0
	"${as[@]}" "$EXTRESCTL" -c "$WORK/extres.yaml" run gpu -- touch "$WORK/shared/ran" 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "a file another group may write"
	assert_contains "$(cat "$RUN_ERR")" "could be modified by another user: it is group-writable" "the refusal"
	# Owned by another user: refused.
	chown 4243:4242 "$WORK/shared/gpu"
	rc=0
	"${as[@]}" "$EXTRESCTL" -c "$WORK/extres.yaml" run gpu -- true 2>"$RUN_ERR" || rc=$?
	assert_eq 1 "$rc" "a file another user owns"
	assert_contains "$(cat "$RUN_ERR")" "it is owned by uid 4243" "the refusal"
	assert_eq 0 "$(nlines "$WORK/shared/gpu")" "lines after the refusals"
}

# The issue's floor, through an extresd: a node pool of 8 devices, 32
# commands at a time waiting for one each, 10 rounds. Every command reads
# its own device's uuid through self/ (which extresctl run waits for the
# mount to show), never more than 8 hold devices at once, no device is held
# twice, and no lease line is left.
case_self_rounds() {
	it_setup
	local log=$WORK/log round i pids=() rc max bad
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.driver: static' \
			'external-resource.gpu.pool: true' \
			"external-resource.gpu.coordination-file: $WORK/gpu.coord" \
			"extres.mountpoint: $MNT" \
			'external-resource.gpu.param.devices:'
		for i in $(seq 0 7); do
			echo "  - {index: \"$i\", uuid: \"GPU-self-$i\"}"
		done
	} >"$WORK/extres.yaml"
	COORD=$WORK/gpu.coord
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	for round in $(seq 10); do
		pids=()
		for i in $(seq 0 31); do
			run_bg --wait=60 gpu=1 -- sh -c "u=\$(cat '$MNT/self/gpu/0/uuid'); echo \"\$(date +%s.%N) start \$EXTRES_GPU_INDEXES \$u\" >>'$log'; sleep 0.2; echo \"\$(date +%s.%N) end \$EXTRES_GPU_INDEXES\" >>'$log'" \
				2>>"$WORK/waiters.err" &
			pids+=($!)
		done
		for i in "${!pids[@]}"; do
			rc=0
			wait "${pids[$i]}" || rc=$?
			[[ $rc == 0 ]] || fail "round $round, command $i exited with status $rc: $(cat "$WORK/waiters.err")"
		done
	done
	(($(grep -c start "$log") == 320 && $(grep -c end "$log") == 320)) ||
		fail "not every command ran: $(grep -c start "$log") starts, $(grep -c end "$log") ends"
	bad=$(awk '$2 == "start" && $4 != "GPU-self-" $3' "$log")
	[[ -z $bad ]] || fail "commands read another device's uuid through self/: $bad"
	read -r max bad < <(sort -n "$log" | awk '
		$2 == "start" { if (++cur > max) max = cur; if (busy[$3]++) bad = bad "dev" $3 "@" $1 "," }
		$2 == "end" { cur--; busy[$3]-- }
		END { print max, (bad == "" ? "-" : bad) }')
	((max <= 8)) || fail "$max commands held devices at once"
	[[ $bad == - ]] || fail "a device was held twice: $bad"
	assert_eq 0 "$(nlines "$COORD")" "lines left in the coordination file"
	it_log "320 commands in 10 rounds, at most $max at once, each read its own uuid through self/"
	daemon_stop
}

# A lease beside a daemon with its own amount (no pool): the daemon takes
# device 0, the lease 1 and 2, and the command finds through self/ every
# property the daemon discovered for them, not their index alone.
case_self_beside() {
	it_setup
	local out
	printf '%s\n' 'external-resources: gpu' \
		'external-resource.gpu.amount: 1' \
		'external-resource.gpu.driver: static' \
		"external-resource.gpu.coordination-file: $WORK/gpu.coord" \
		"extres.mountpoint: $MNT" \
		'external-resource.gpu.param.devices:' \
		'  - {index: "0", uuid: GPU-beside-0}' \
		'  - {index: "1", uuid: GPU-beside-1, name: Beside}' \
		'  - {index: "2", uuid: GPU-beside-2}' >"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	out=$(run gpu=2 -- sh -c "cd '$MNT/self/gpu' && ls 0 1 && cat 0/uuid 0/name 1/uuid" 2>"$RUN_ERR") ||
		fail "the lease's command failed: $out"
	assert_eq "0:
index
name
uuid

1:
index
uuid
GPU-beside-1
Beside
GPU-beside-2" "$out" "self/ of a lease beside the daemon's own device"
	assert_eq "0" "$(cat "$MNT/gpu/0/index")" "the daemon's own device"
	daemon_stop
}

# extresctl run beside a stopped extresd (SIGSTOP): the wait for self/ to
# show the lease gives up within its 2 s deadline (the bound only catches
# a hang: the old wait took 5 s), says so, and the command runs with its
# lease all the same.
case_stopped_daemon() {
	it_setup
	local t0 ms out rc=0
	lease_config 2 "extres.mountpoint: $MNT"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	kill -STOP "$DAEMON_PID"
	t0=$(now_ms)
	out=$(run gpu=1 -- sh -c "echo \"\$EXTRES_GPU_INDEXES \$EXTRES_LEASE\"; grep -c 'lease=' '$COORD'" \
		2>"$RUN_ERR") || rc=$?
	ms=$(($(now_ms) - t0))
	kill -CONT "$DAEMON_PID"
	it_log "run returned after $ms ms with the daemon stopped"
	[[ $rc == 0 ]] || fail "run exited with status $rc: $out"
	((ms < 4000)) || fail "run took $ms ms beside a stopped daemon (its wait is 2 s)"
	[[ $out =~ ^1\ [0-9]+-[0-9]+$'\n'1$ ]] || fail "the command did not run with its lease: $out"
	assert_contains "$(cat "$RUN_ERR")" "extresd at $MNT is not responding" "run's stderr"
	assert_eq 0 "$(lease_lines)" "lease lines left after the command"
	daemon_stop
}

it_main "$@"
