#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Sharing a device (replicas, extresctl run gpu=0.25): shares of one device
# never exceed replicas, a whole-device holder (a lease, extresd, Flink's
# script) never sits beside a share, kill -9 frees a share, and a changed
# share count applies to new shares only. The `static` driver needs no GPU.
# The commands' variables are expanded by their own shells.
# shellcheck disable=SC2016
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=tests/integration/lease_lib.sh
source "$(dirname "$0")/lease_lib.sh"

WRITER=$(dirname "$0")/flink-writer.sh

# share_config DEVICES REPLICAS [EXTRA...]: a static gpu pool of devices
# 0..DEVICES-1 shared REPLICAS ways, coordination file $WORK/gpu.coord.
share_config() {
	local n=$1 replicas=$2
	shift 2
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.driver: static' \
			'external-resource.gpu.pool: true' \
			"external-resource.gpu.param.indexes: $(seq -s, 0 $((n - 1)))" \
			"external-resource.gpu.coordination-file: $WORK/gpu.coord" \
			"external-resource.gpu.replicas: $replicas" \
			"extres.mountpoint: $MNT"
		printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
	COORD=$WORK/gpu.coord
}

# The command (sleep) of extresctl PID into CMD: it execs only once the
# lease is taken, and, with a daemon, shown in the mount.
command_of() {
	wait_until 10 "the command of extresctl $1" eval "CMD=\$(pgrep -P $1 -x sleep)"
}

# Until $WORK/stop, snapshot FILE under a shared lock and append to OUT
# each violation among live lines: a key held whole twice, held whole
# beside a share, or by more than MAX shares (share=I/N lines).
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
				NF >= 2 && live($2, NF >= 3 && $3 ~ /^[0-9]+$/ ? $3 : "") {
					if ($0 ~ /\tshare=/)
						shares[$1]++
					else
						whole[$1]++
				}
				END {
					for (k in whole)
						if (whole[k] > 1 || shares[k] > 0)
							print "key " k ": " whole[k] " whole, " shares[k] " shares"
					for (k in shares)
						if (shares[k] > max)
							print "key " k ": " shares[k] " shares"
				}
			' "$WORK/sample" >>"$out" || true
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

# ROUNDS rounds of 64 quarter shares and 8 whole leases, all --wait, on 4
# devices, with a Flink-style writer taking devices beside them. From the
# commands' own log (each writes when it starts and before it ends, inside
# its lease): never more than 4 shares of a device, never a whole lease
# beside a share; from samples of the file: the same for every holder,
# the writer's lines too. Nothing left at the end.
case_stress() {
	it_setup
	local rounds=${EXTRES_SHARE_ROUNDS:-10} round i pids rc log=$WORK/log res
	share_config 4 4
	start_sampler "$COORD" 4 "$WORK/violations"
	(
		# Flink-style owners: a device now and then, held 0.1 s.
		while [[ ! -e $WORK/stop ]]; do
			sleep 0.1 &
			"$WRITER" "$COORD" "$!" 1 0 1 2 3 >>"$WORK/flink-took" 2>/dev/null || true
			sleep 0.05
		done
	) &
	local flink=$!
	for round in $(seq "$rounds"); do
		pids=()
		for i in $(seq 0 71); do
			if ((i % 9 == 4)); then
				res=gpu=1
			else
				res=gpu=0.25
			fi
			run_bg --wait=120 "$res" -- sh -c "echo \"\$(date +%s%N) start \$EXTRES_GPU_INDEXES \${EXTRES_GPU_SHARE:-whole}\" >>'$log'; sleep 0.02; echo \"\$(date +%s%N) end \$EXTRES_GPU_INDEXES \${EXTRES_GPU_SHARE:-whole}\" >>'$log'" \
				2>>"$WORK/waiters.err" &
			pids+=($!)
		done
		for i in "${!pids[@]}"; do
			rc=0
			wait "${pids[$i]}" || rc=$?
			[[ $rc == 0 ]] || fail "round $round, command $i exited with status $rc: $(tail -5 "$WORK/waiters.err")"
		done
	done
	stop_sampler "$WORK/violations"
	wait "$flink"
	local n=$((rounds * 72)) starts ends
	starts=$(grep -c start "$log")
	ends=$(grep -c end "$log")
	((starts == n && ends == n)) || fail "not every command ran: $starts starts, $ends ends of $n"
	(($(grep -c ' whole$' "$log") == rounds * 16)) || fail "$(grep -c ' whole$' "$log") whole-lease lines, wanted $((rounds * 16))"
	local out
	out=$(sort -n "$log" | awk '
		$2 == "start" && $4 == "whole" { if (whole[$3]++ || shares[$3]) bad = bad " whole@" $3 }
		$2 == "start" && $4 != "whole" {
			if (whole[$3]) bad = bad " share-beside-whole@" $3
			if (++shares[$3] > 4) bad = bad " " shares[$3] "-shares@" $3
			if (shares[$3] > max) max = shares[$3]
			if (taken[$3 " " $4]++) bad = bad " share-twice@" $3 ":" $4
		}
		$2 == "end" && $4 == "whole" { whole[$3]-- }
		$2 == "end" && $4 != "whole" { shares[$3]--; taken[$3 " " $4]-- }
		END { print (max ? max : 0), (bad == "" ? "-" : bad) }')
	[[ ${out#* } == - ]] || fail "overlaps in the commands' log:${out#* }"
	((${out%% *} >= 2)) || fail "no device was ever shared (at most ${out%% *} shares at once)"
	! grep -q 'lease=' "$COORD" || fail "lease lines left: $(cat "$COORD")"
	it_log "$n commands in $rounds rounds, at most ${out%% *} shares of a device at once; Flink-style owners took $(nlines "$WORK/flink-took") devices"
}

# A Flink-style writer reads a shared device as taken, whatever its share
# count, and its own line keeps shares off that device.
case_flink() {
	it_setup
	local owner took
	share_config 2 4
	run_bg gpu=0.25 -- sleep 300 2>>"$RUN_ERR" &
	local holder=$!
	wait_until 10 "the share's line" lines_are "$COORD" 1
	grep -q $'^0 [0-9]*\t[0-9]*\tlease=[0-9-]*\tshare=1/4$' "$COORD" || fail "unexpected line: $(cat "$COORD")"
	sleep 300 &
	owner=$!
	took=$("$WRITER" "$COORD" "$owner" 1 0 1) || fail "the writer found nothing free"
	assert_eq 1 "$took" "the Flink-style writer's device"
	"$WRITER" "$COORD" "$owner" 1 0 1 2>/dev/null && fail "the writer took a shared device"
	# Device 1 is Flink's whole: a second share goes to device 0.
	run gpu=1/4 -- sh -c 'echo "$EXTRES_GPU_INDEXES $EXTRES_GPU_SHARE"' >"$WORK/out" 2>>"$RUN_ERR" ||
		fail "a second share failed: $(cat "$RUN_ERR")"
	assert_eq "0 2/4" "$(cat "$WORK/out")" "the second share"
	# A whole lease finds nothing: one device shared, one Flink's.
	local rc=0
	run gpu=1 -- true 2>"$WORK/busy" || rc=$?
	assert_eq 75 "$rc" "a whole lease beside shares"
	assert_contains "$(cat "$WORK/busy")" "index 0 by PID" "the share holder named"
	kill "$holder" "$owner"
	wait "$holder" 2>/dev/null || true
}

# kill -9 of share holders (command and extresctl): their shares are free
# again for the next taker, and a whole lease gets the device once the last
# share is gone.
case_kill9() {
	it_setup
	local i pids=() cmds=() cmd
	share_config 1 4
	for i in 0 1 2 3; do
		run_bg gpu=0.25 -- sleep 300 2>>"$RUN_ERR" &
		pids+=($!)
		wait_until 10 "share $i" lines_are "$COORD" $((i + 1))
	done
	local rc=0
	run gpu=0.25 -- true 2>"$WORK/busy" || rc=$?
	assert_eq 75 "$rc" "a fifth quarter share"
	assert_contains "$(cat "$WORK/busy")" "busy: resource 'gpu': wanted a share (4 per device), found none free on 1 devices (coordination file $COORD); held: index 0 by PID " "busy message"
	for i in 0 1 2 3; do
		command_of "${pids[$i]}"
		cmds+=("$CMD")
	done
	# The commands of two, extresctl of another with its command.
	kill -9 "${cmds[0]}" "${cmds[1]}" "${pids[2]}" "${cmds[2]}"
	for cmd in "${cmds[@]:0:3}"; do
		wait_until 10 "PID $cmd gone" pid_gone "$cmd"
	done
	run gpu=0.25 -- sh -c 'echo $EXTRES_GPU_SHARE' >"$WORK/out" 2>>"$RUN_ERR" ||
		fail "no share after kill -9: $(cat "$RUN_ERR")"
	assert_eq 1/4 "$(cat "$WORK/out")" "the lowest free share"
	# A whole lease waits for the last share.
	run_bg --wait=60 gpu=1 -- sh -c 'echo "whole $EXTRES_GPU_INDEXES ${EXTRES_GPU_SHARE:-}"' >"$WORK/whole" 2>>"$RUN_ERR" &
	local whole=$!
	# In the queue, it waits: it found the device shared.
	wait_until 10 "the whole lease in the queue" lines_are "$COORD.queue" 1
	[[ ! -s $WORK/whole ]] || fail "a whole lease beside a share: $(cat "$WORK/whole")"
	kill -9 "${cmds[3]}"
	wait "$whole" || fail "the whole lease failed: $(cat "$RUN_ERR")"
	assert_eq "whole 0 " "$(cat "$WORK/whole")" "the whole lease"
	for i in 0 1 2 3; do wait "${pids[$i]}" 2>/dev/null || true; done
	assert_eq "" "$(cat "$COORD")" "lines left"
}

# A reload that lowers the share count while shares are held: they stay
# (the daemon's views show each as I/4), and no new share is taken until
# fewer than the new count are held.
case_reload() {
	it_setup
	local i pids=() cmds=()
	share_config 1 4
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	for i in 0 1 2; do
		run_bg gpu=0.25 -- sleep 300 2>>"$RUN_ERR" &
		pids+=($!)
		wait_until 10 "share $i" lines_are "$COORD" $((i + 1))
	done
	wait_until 10 "three shares in .meta/holders" eval '[[ $(grep -c "	lease	.*	live	[123]/4$" "$MNT/.meta/holders") == 3 ]]'
	for i in 0 1 2; do
		command_of "${pids[$i]}"
		cmds+=("$CMD")
	done
	out=$("$EXTRESCTL" leases "$MNT") || fail "extresctl leases failed"
	assert_contains "$out" "gpu 0[1/4]" "extresctl leases"
	assert_contains "$(cat "$MNT/.meta/extres.json")" '"share": {"index": 3, "of": 4}' "extres.json"
	assert_contains "$(cat "$MNT/.meta/metrics.prom")" 'extres_device_shares{resource="gpu",key="0"} 3' "metrics"
	# The fourth quarter sees which share it holds through self/.
	run gpu=0.25 -- cat "$MNT/self/gpu/0/share" "$MNT/self/gpu/0/index" >"$WORK/out" 2>>"$RUN_ERR" ||
		fail "the fourth quarter failed: $(cat "$RUN_ERR")"
	assert_eq $'4/4\n0' "$(cat "$WORK/out")" "self/ of the fourth share"
	sed -i 's/replicas: 4/replicas: 2/' "$WORK/extres.yaml"
	"$EXTRESCTL" -c "$WORK/extres.yaml" reload "$MNT" >/dev/null 2>&1 || reload_hup
	local rc=0
	run gpu=0.5 -- true 2>"$WORK/busy" || rc=$?
	assert_eq 75 "$rc" "a half share while three quarters are held"
	kill "${cmds[0]}" "${cmds[1]}"
	wait "${pids[0]}" "${pids[1]}" || true
	run gpu=0.5 -- sh -c 'echo $EXTRES_GPU_SHARE' >"$WORK/out" 2>>"$RUN_ERR" ||
		fail "no half share with one quarter held: $(cat "$RUN_ERR")"
	assert_eq 1/2 "$(cat "$WORK/out")" "the half share"
	# A share is half a device now: more than a quarter, less than 0.75.
	run gpu=0.25 -- sh -c 'echo $EXTRES_GPU_SHARE' >"$WORK/out" 2>>"$RUN_ERR" ||
		fail "no share for a quarter: $(cat "$RUN_ERR")"
	assert_eq 1/2 "$(cat "$WORK/out")" "the share for a quarter"
	rc=0
	run gpu=0.75 -- true 2>"$WORK/err" || rc=$?
	assert_eq 2 "$rc" "three quarters of a half-shared device"
	assert_contains "$(cat "$WORK/err")" "a share of resource 'gpu' is 1/2 of a device, less than 0.75" "message"
	kill "${cmds[2]}"
	wait "${pids[2]}" || true
	daemon_stop
}

# Flink's clean-up of a dead share holder, `sed -i "/0 /d"`, drops the
# other holders' lines too: the daemon following the file writes the live
# ones back, and only those.
case_flink_cleanup() {
	it_setup
	local i pids=() cmds=() st
	share_config 1 4
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	for i in 0 1 2; do
		run_bg gpu=0.25 -- sleep 300 2>>"$RUN_ERR" &
		pids+=($!)
		wait_until 10 "share $i" lines_are "$COORD" $((i + 1))
	done
	for i in 0 1 2; do
		command_of "${pids[$i]}"
		cmds+=("$CMD")
	done
	wait_until 10 "three shares in .meta/holders" eval '[[ $(grep -c "	live	[123]/4$" "$MNT/.meta/holders") == 3 ]]'
	# A dead holder's line stays: its extresctl dies with it.
	kill -9 "${pids[0]}" "${cmds[0]}"
	wait_until 10 "PID ${cmds[0]} gone" pid_gone "${cmds[0]}"
	wait_until 10 "the stale share in .meta/holders" eval '[[ $(grep -Ec "	(dead|zombie)	1/4$" "$MNT/.meta/holders") == 1 ]]'
	"$WRITER" --reclaim "$COORD" 0
	wait_until 10 "the live shares written back" lines_are "$COORD" 2
	for i in 1 2; do
		st=$(proc_starttime "${cmds[$i]}")
		grep -q "^0 ${cmds[$i]}	$st	lease=${cmds[$i]}-$st	share=$((i + 1))/4\$" "$COORD" ||
			fail "share $((i + 1)) not written back as it was: $(cat "$COORD")"
	done
	assert_contains "$(cat "$DAEMON_ERR")" "2 lines of live leases had gone from $COORD; written back" "the log"
	kill "${cmds[1]}" "${cmds[2]}"
	wait "${pids[1]}" "${pids[2]}" || true
	wait_until 10 "no lines left" lines_are "$COORD" 0
	daemon_stop
}

# CDI: a device extresd took for a shared resource comes as one device per
# share, "0-share-K", with the share's variables and the MPS pipe mounted;
# the spec validates where the CDI schema's validator is installed (the
# cdi-schema case installs it).
case_cdi() {
	it_setup
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.driver: static' \
			'external-resource.gpu.amount: 1' \
			'external-resource.gpu.param.indexes: 0,1' \
			"external-resource.gpu.coordination-file: $WORK/gpu.coord" \
			'external-resource.gpu.env-var: GPU_DEVICES' \
			'external-resource.gpu.replicas: 2' \
			'external-resource.gpu.sharing-strategy: mps' \
			"external-resource.gpu.mps.pipe-directory: $WORK/mps"
	} >"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local spec
	spec=$(grep '^"gpu": ' "$MNT/.meta/cdi.json") || fail "no gpu spec: $(cat "$MNT/.meta/cdi.json")"
	assert_contains "$spec" '{"name": "0-share-2", "containerEdits": {"env": ["EXTRES_GPU_INDEXES=0", "GPU_DEVICES=0", "EXTRES_GPU_SHARE=2/2", "CUDA_MPS_PIPE_DIRECTORY='"$WORK"'/mps", "CUDA_MPS_LOG_DIRECTORY=/var/log/nvidia-mps", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50"], "mounts": [{"hostPath": "'"$WORK"'/mps", "containerPath": "'"$WORK"'/mps", "options": ["rbind"]}]}}' "the second share"
	assert_contains "$spec" '"name": "0-share-1"' "the first share"
	local ajv=$BUILDDIR/tests/npm-ajv/node_modules/.bin/ajv
	if [[ -x $ajv ]]; then
		spec=${spec#\"gpu\": }
		printf '%s\n' "${spec%,}" >"$WORK/gpu.json"
		"$ajv" validate --spec=draft7 -s "$SRCDIR/tests/fixtures/cdi/spec.schema.json" -d "$WORK/gpu.json" >"$WORK/ajv.out" 2>&1 ||
			fail "the spec does not validate: $(cat "$WORK/ajv.out")"
		it_log "the spec validates against the CDI schema"
	fi
	daemon_stop
}

# What a share request may be, and what it may not.
case_usage() {
	it_setup_nofuse
	share_config 2 4
	local spec rc out
	for spec in gpu=0.25 gpu=1/4 gpu=0.1 gpu=1/8; do
		out=$(run "$spec" -- sh -c 'echo $EXTRES_GPU_SHARE' 2>&1) || fail "$spec failed: $out"
		assert_eq 1/4 "$out" "$spec"
	done
	for spec in gpu=0.5 gpu=1/2 gpu=0.3; do
		rc=0
		out=$(run "$spec" -- true 2>&1) || rc=$?
		assert_eq 2 "$rc" "$spec"
		assert_contains "$out" "run: '$spec': a share of resource 'gpu' is 1/4 of a device, less than" "$spec"
	done
	for spec in gpu=1.0 gpu=.5 gpu=0 gpu=1/1 gpu=1/0 gpu=2/4 gpu=0.25x gpu=-0.5; do
		rc=0
		out=$(run "$spec" -- true 2>&1) || rc=$?
		assert_eq 2 "$rc" "$spec"
		assert_contains "$out" "run: '$spec': N must be a whole number from 1 to" "$spec"
	done
	share_config 2 1
	rc=0
	out=$(run gpu=0.5 -- true 2>&1) || rc=$?
	assert_eq 2 "$rc" "a share of an unshared resource"
	assert_contains "$out" "resource 'gpu' is not shared (external-resource.gpu.replicas is not set above 1)" "unshared"
	[[ ! -s $COORD ]] || fail "lines left: $(cat "$COORD")"
}

# Beside a daemon that holds a device of the resource itself (amount 1):
# shares go to the other device, several owners of one key are no
# conflict (extresctl status, .meta/status), and the daemon's own device
# takes no share.
case_beside_daemon() {
	it_setup
	local i pids=() rc out
	share_config 2 4
	sed -i 's/^external-resource.gpu.pool: true$/external-resource.gpu.amount: 1/' "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	wait_until 10 "the daemon's line" lines_are "$COORD" 1
	for i in 0 1 2 3; do
		run_bg gpu=0.25 -- sleep 300 2>>"$RUN_ERR" &
		pids+=($!)
		wait_until 10 "share $i" lines_are "$COORD" $((i + 2))
	done
	assert_eq 4 "$(grep -c $'^1 .*\tshare=[1-4]/4$' "$COORD")" "shares of device 1"
	rc=0
	run gpu=0.25 -- true 2>/dev/null || rc=$?
	assert_eq 75 "$rc" "a fifth share (device 0 is the daemon's)"
	wait_until 10 "four shares in .meta/holders" eval '[[ $(grep -c "	live	[1-4]/4$" "$MNT/.meta/holders") == 4 ]]'
	out=$("$EXTRESCTL" status "$MNT" 2>&1) || fail "extresctl status beside shares: $out"
	grep -q '^conflicts 0$' "$MNT/.meta/status" || fail "conflicts beside shares: $(cat "$MNT/.meta/status")"
	kill "${pids[@]}"
	for i in 0 1 2 3; do wait "${pids[$i]}" || true; done
	wait_until 10 "the shares gone" lines_are "$COORD" 1
	daemon_stop
}

# A share that waits sleeps until something moves: its CPU time while
# the device is held whole stays near nothing (a waiter woken by its own
# attempts would use a CPU for the whole wait).
case_wait_sleeps() {
	it_setup_nofuse
	share_config 1 2
	local whole waiter t0 t1
	run_bg gpu=1 -- sh -c "while [ ! -e '$WORK/go' ]; do sleep 0.05; done" 2>>"$RUN_ERR" &
	whole=$!
	wait_until 10 "the whole lease" lines_are "$COORD" 1
	run_bg --wait=60 gpu=0.5 -- true 2>>"$RUN_ERR" &
	waiter=$!
	wait_until 10 "the share in the queue" lines_are "$COORD.queue" 1
	t0=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$waiter/stat")
	sleep 3
	t1=$(awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$waiter/stat")
	touch "$WORK/go"
	wait "$whole" || fail "the whole lease failed"
	wait "$waiter" || fail "the waiting share failed: $(cat "$RUN_ERR")"
	it_log "the waiting share used $((t1 - t0)) clock ticks in 3 s"
	(((t1 - t0) < 30)) || fail "the waiting share used $((t1 - t0)) clock ticks of CPU in 3 s"
}

# MPS: the share's command gets what CUDA's MPS client reads.
case_mps() {
	it_setup_nofuse
	share_config 2 4 'external-resource.gpu.sharing-strategy: mps' \
		'external-resource.gpu.mps.pipe-directory: /run/mps-pipe'
	run gpu=0.25 -- env >"$WORK/env" 2>>"$RUN_ERR" || fail "run failed: $(cat "$RUN_ERR")"
	assert_contains "$(cat "$WORK/env")" "CUDA_MPS_PIPE_DIRECTORY=/run/mps-pipe" "pipe directory"
	assert_contains "$(cat "$WORK/env")" "CUDA_MPS_LOG_DIRECTORY=/var/log/nvidia-mps" "log directory"
	assert_contains "$(cat "$WORK/env")" "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25" "thread percentage"
	assert_contains "$(cat "$WORK/env")" "EXTRES_GPU_SHARE=1/4" "the share"
	# A whole lease gets none of them.
	run gpu=1 -- env >"$WORK/env" 2>>"$RUN_ERR" || fail "run failed"
	! grep -q 'CUDA_MPS\|EXTRES_GPU_SHARE' "$WORK/env" || fail "a whole lease got share variables"
}

it_main "$@"
