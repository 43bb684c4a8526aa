#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Who holds each device: .meta/holders, the "holders" array of
# .meta/extres.json, `extresctl status` and `extresctl leases`, following
# the coordination file as other processes change it; and node pools
# (external-resource.<name>.pool), which serve every device and take none.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

WRITER=$(dirname "$0")/flink-writer.sh
NOBODY=65534

# A static gpu resource over INDEXES taking AMOUNT (or "pool"), through
# $WORK/gpu.coord; EXTRA lines are appended.
gpu_config() {
	local amount=$1 indexes=$2
	shift 2
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.driver: static' \
			"external-resource.gpu.param.indexes: $indexes" \
			"external-resource.gpu.coordination-file: $WORK/gpu.coord"
		if [[ $amount == pool ]]; then
			echo 'external-resource.gpu.pool: true'
		else
			echo "external-resource.gpu.amount: $amount"
		fi
		printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
}

# The date .meta/holders shows for PID's start time.
since_of() {
	local st bt tck
	st=$(proc_starttime "$1")
	bt=$(awk '$1 == "btime" { print $2 }' /proc/stat)
	tck=$(getconf CLK_TCK)
	date -u -d "@$((bt + st / tck))" +%Y-%m-%dT%H:%M:%SZ
}

# A process that sleeps until the cleanup (or the case) ends it, as
# user $1 (default: ours); its PID in SLEEPER.
start_sleeper() {
	# As a lease's command would, it proves its lease lines (lease/lease.h):
	# without that lock, a lease line is only a holder's.
	[[ -e $WORK/gpu.coord ]] || : >"$WORK/gpu.coord"
	local prove=("$PROBE" lockexec "$WORK/gpu.coord" 4611686018427387904)
	if [[ -n ${1:-} ]]; then
		"${prove[@]}" setpriv --reuid="$1" --regid="$1" --clear-groups -- sleep 300 </dev/null >/dev/null 2>&1 &
	else
		"${prove[@]}" sleep 300 </dev/null >/dev/null 2>&1 &
	fi
	SLEEPER=$!
	echo "$SLEEPER" >"$WORK/sleeper.$SLEEPER.pid"
	wait_until 10 "sleeper $SLEEPER exec'ing sleep" comm_is "$SLEEPER" sleep
}

# Append a lease's lines (KEY PID<tab>STARTTIME<tab>lease=PID-STARTTIME)
# for PID and each KEY, under the file's lock, as extresctl run does.
add_lease() {
	local pid=$1 st
	shift
	st=$(proc_starttime "$pid")
	(
		flock -x 9
		for k in "$@"; do
			printf '%s %s\t%s\tlease=%s-%s\n' "$k" "$pid" "$st" "$pid" "$st" >&9
		done
	) 9>>"$WORK/gpu.coord"
}

# One expected line of .meta/holders for a live owner.
line_of() {
	local key=$1 pid=$2 user=$3 cmd=$4 kind=$5 lease=${6:--}
	printf 'gpu\t%s\t%s\t%s\t%s\t%s\t%s\t%s\tlive\t-\n' "$key" "$pid" "$user" "$cmd" "$(since_of "$pid")" "$kind" "$lease"
}

# Whether .meta/holders holds exactly $1.
holders_are() {
	local got
	got=$(file_bytes "$MNT/.meta/holders" && printf x) || fail "cannot read .meta/holders"
	[[ ${got%x} == "$1" ]]
}

# Whether extresctl leases lists none.
no_leases() {
	local out
	out=$("$EXTRESCTL" leases "$MNT") || fail "extresctl leases failed: $out"
	[[ -z $out ]]
}

# Wait until .meta/holders is $1, for $2 seconds at most (default 2): a
# daemon that never follows the file fails here, not by hanging. WAITED_MS
# says how long it took.
wait_holders() {
	local want=$1 secs=${2:-2} t0 t1
	t0=$(date +%s%N)
	poll_until "$secs" holders_are "$want" || fail ".meta/holders after ${secs} s: wanted
$want
got
$(file_bytes "$MNT/.meta/holders")"
	t1=$(date +%s%N)
	WAITED_MS=$(((t1 - t0) / 1000000))
}

# Every kind: this daemon's lines, a lease's, another extresd's, a Flink
# script's; in .meta/holders, extres.json and extresctl status.
case_kinds() {
	it_setup
	local want st out
	gpu_config 2 0,1,2,3,4,5
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	wait_holders "$(line_of 0 "$DAEMON_PID" root extresd daemon; line_of 1 "$DAEMON_PID" root extresd daemon)
"
	# Another extres daemon on the same file takes 2 and 3.
	mkdir "$WORK/mnt2"
	env --default-signal=INT,QUIT "$EXTRESD" -f -c "$WORK/extres.yaml" "$WORK/mnt2" \
		>/dev/null 2>"$WORK/d2.err" &
	PID2=$!
	echo "$PID2" >"$WORK/d2.pid"
	wait_mounted "$WORK/mnt2"
	# Flink's script takes 4 for a sleeper; a lease takes 5.
	start_sleeper
	local flink=$SLEEPER
	out=$("$WRITER" "$WORK/gpu.coord" "$flink" 1 4 5) || fail "flink writer failed"
	assert_eq 4 "$out" "Flink's pick"
	start_sleeper "$NOBODY"
	local leaser=$SLEEPER
	add_lease "$leaser" 5
	st=$(proc_starttime "$leaser")
	want="$(line_of 0 "$DAEMON_PID" root extresd daemon
		line_of 1 "$DAEMON_PID" root extresd daemon
		line_of 2 "$PID2" root extresd extresd
		line_of 3 "$PID2" root extresd extresd
		line_of 4 "$flink" root sleep other
		line_of 5 "$leaser" nobody sleep lease "$leaser-$st")
"
	wait_holders "$want"
	out=$(cat "$MNT/.meta/extres.json")
	assert_contains "$out" "\"holders\": [{\"resource\": \"gpu\", \"key\": \"0\", \"pid\": $DAEMON_PID, \"uid\": 0, \"user\": \"root\", \"command\": \"extresd\", \"since\": \"$(since_of "$DAEMON_PID")\", \"kind\": \"daemon\", \"lease\": null, \"state\": \"live\", \"share\": null}" "extres.json"
	assert_contains "$out" "{\"resource\": \"gpu\", \"key\": \"5\", \"pid\": $leaser, \"uid\": $NOBODY, \"user\": \"nobody\", \"command\": \"sleep\", \"since\": \"$(since_of "$leaser")\", \"kind\": \"lease\", \"lease\": \"$leaser-$st\", \"state\": \"live\", \"share\": null}]}" "extres.json"
	out=$("$EXTRESCTL" status "$MNT") || fail "extresctl status failed: $out"
	assert_contains "$out" "holders:
  gpu 0: PID $DAEMON_PID root extresd since $(since_of "$DAEMON_PID") (daemon)" "extresctl status"
	assert_contains "$out" "  gpu 5: PID $leaser nobody sleep since $(since_of "$leaser") (lease $leaser-$st)" "extresctl status"
	# The second daemon goes: its lines go, and the first one sees it.
	kill "$PID2"
	wait "$PID2" || fail "second extresd exited with status $?"
	want="$(line_of 0 "$DAEMON_PID" root extresd daemon
		line_of 1 "$DAEMON_PID" root extresd daemon
		line_of 4 "$flink" root sleep other
		line_of 5 "$leaser" nobody sleep lease "$leaser-$st")
"
	wait_holders "$want"
	daemon_stop
}

# Changes reach readers within a bounded wait: a line appended, a burst
# of lines, a holder that exits (the file does not change: shown stale),
# the file truncated.
case_follow() {
	it_setup
	local want st k
	gpu_config 1 0,1,2,3,4,5,6,7
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local mine
	mine=$(line_of 0 "$DAEMON_PID" root extresd daemon)
	wait_holders "$mine
"
	start_sleeper
	st=$(proc_starttime "$SLEEPER")
	add_lease "$SLEEPER" 1
	wait_holders "$mine
$(line_of 1 "$SLEEPER" root sleep lease "$SLEEPER-$st")
" 1
	it_log "one line shown after ${WAITED_MS} ms"
	# A burst: 200 writes, each under the lock; the last state shows.
	for k in $(seq 200); do
		add_lease "$SLEEPER" "x$k"
	done
	want="$mine
$(line_of 1 "$SLEEPER" root sleep lease "$SLEEPER-$st")"
	for k in $(seq 200); do
		want+="
$(line_of "x$k" "$SLEEPER" root sleep lease "$SLEEPER-$st")"
	done
	wait_holders "$want
" 1
	it_log "burst of 200 shown ${WAITED_MS} ms after the last write"
	# The owner exits: its lines stay in the file, shown stale.
	kill "$SLEEPER"
	wait "$SLEEPER" 2>/dev/null || true
	want="$mine
$(printf 'gpu\t1\t%s\t-\t-\t-\tlease\t%s\tdead\t-' "$SLEEPER" "$SLEEPER-$st")"
	for k in $(seq 200); do
		want+="
$(printf 'gpu\tx%s\t%s\t-\t-\t-\tlease\t%s\tdead\t-' "$k" "$SLEEPER" "$SLEEPER-$st")"
	done
	wait_holders "$want
" 3
	# Truncated by hand: the guard writes our line back, the rest is gone.
	: >"$WORK/gpu.coord"
	wait_holders "$mine
" 3
	daemon_stop
}

# extresctl leases lists live leases, one line per lease and resource;
# --kill ends one, only for root or its owner, and never a reused PID.
case_leases() {
	it_setup
	command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
	local a b sta stb out
	# nobody must reach the mount point.
	chmod 0755 "$WORK"
	gpu_config 1 0,1,2,3,4,5
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	start_sleeper
	a=$SLEEPER
	sta=$(proc_starttime "$a")
	add_lease "$a" 1 2
	start_sleeper "$NOBODY"
	b=$SLEEPER
	stb=$(proc_starttime "$b")
	add_lease "$b" 3
	# A lease whose command is gone is not live.
	local gone
	gone=$(dead_pid)
	printf '4 %s\t1\tlease=%s-1\n' "$gone" "$gone" >>"$WORK/gpu.coord"
	wait_holders "$(line_of 0 "$DAEMON_PID" root extresd daemon
		line_of 1 "$a" root sleep lease "$a-$sta"
		line_of 2 "$a" root sleep lease "$a-$sta"
		line_of 3 "$b" nobody sleep lease "$b-$stb")
$(printf 'gpu\t4\t%s\t-\t-\t-\tlease\t%s-1\tdead\t-' "$gone" "$gone")
"
	out=$("$EXTRESCTL" leases "$MNT") || fail "extresctl leases failed: $out"
	assert_eq "$a-$sta $a root sleep gpu 1,2
$b-$stb $b nobody sleep gpu 3" "$out" "extresctl leases"
	# nobody may not end root's lease.
	out=$(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- \
		"$EXTRESCTL" leases --kill "$a-$sta" "$MNT" 2>&1) &&
		fail "nobody ended root's lease: $out"
	assert_contains "$out" "lease $a-$sta belongs to uid 0; only root or that user may end it" "refusal"
	pid_alive "$a" || fail "root's lease command died"
	# A start time that does not match is no lease of the file.
	out=$("$EXTRESCTL" leases --kill "$a-$((sta + 1))" "$MNT" 2>&1) && fail "a wrong start time was accepted"
	assert_contains "$out" "no live lease $a-$((sta + 1)) at $MNT" "wrong start time"
	pid_alive "$a" || fail "root's lease command died of a wrong id"
	# nobody ends its own; root ends the other.
	out=$(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- \
		"$EXTRESCTL" leases --kill "$b-$stb" "$MNT" 2>&1) || fail "nobody could not end its lease: $out"
	assert_eq "sent SIGTERM to PID $b (sleep 300), the command of lease $b-$stb" "$out" "--kill output"
	out=$("$EXTRESCTL" leases --kill "$a-$sta" "$MNT" 2>&1) || fail "root could not end a lease: $out"
	wait_until 10 "lease command $a gone after --kill" pid_gone "$a"
	wait_until 10 "lease command $b gone after --kill" pid_gone "$b"
	wait "$a" "$b" 2>/dev/null || true
	wait_until 10 "no lease in extresctl leases once both ended" no_leases
	out=$("$EXTRESCTL" leases --kill "$a-$sta" "$MNT" 2>&1) && fail "an ended lease was killed again"
	daemon_stop
}

# A pool serves every device and takes none: the file holds no line of
# the daemon's, before, during and after; leases show in .meta/holders.
case_pool() {
	it_setup
	local st out
	gpu_config pool 0,1,2,3 'external-resource.gpu.amount: 1'
	start_sleeper
	local first=$SLEEPER
	add_lease "$first" 2
	st=$(proc_starttime "$first")
	local lease_line
	lease_line=$(printf '2 %s\t%s\tlease=%s-%s' "$first" "$st" "$first" "$st")
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1\n2\n3' "$(ls "$MNT/gpu")" "ls gpu of a pool"
	assert_file "$MNT/gpu/3/index" $'3\n'
	assert_file "$WORK/gpu.coord" "$lease_line"$'\n'
	wait_holders "$(line_of 2 "$first" root sleep lease "$first-$st")
"
	assert_file "$MNT/.meta/env" ""
	assert_file "$MNT/.meta/resources.json" $'[]\n'
	out=$(cat "$MNT/.meta/extres.json")
	assert_contains "$out" '{"resources": {"gpu": {"driver": "static", "amount": 4, "pool": true, "infos": [{"index": "0"}, {"index": "1"}, {"index": "2"}, {"index": "3"}]}}, "holders": [{"resource": "gpu", "key": "2", ' "extres.json of a pool"
	# A reload (one device more) keeps taking nothing.
	gpu_config pool 0,1,2,3,4
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload failed: $out"
	assert_eq $'0\n1\n2\n3\n4' "$(ls "$MNT/gpu")" "ls gpu after the reload"
	assert_file "$WORK/gpu.coord" "$lease_line"$'\n'
	# Leases come and go; the daemon only watches.
	start_sleeper
	local st2
	st2=$(proc_starttime "$SLEEPER")
	add_lease "$SLEEPER" 0 4
	wait_holders "$(line_of 2 "$first" root sleep lease "$first-$st"
		line_of 0 "$SLEEPER" root sleep lease "$SLEEPER-$st2"
		line_of 4 "$SLEEPER" root sleep lease "$SLEEPER-$st2")
"
	out=$("$EXTRESCTL" leases "$MNT") || fail "extresctl leases failed: $out"
	assert_contains "$out" "$SLEEPER-$st2 $SLEEPER root sleep gpu 0,4" "leases of a pool"
	daemon_stop
	assert_eq 3 "$(wc -l <"$WORK/gpu.coord")" "lines left by the leases"
	! grep -q "^[0-9]* $DAEMON_PID\b" "$WORK/gpu.coord" || fail "the pool recorded a line: $(cat "$WORK/gpu.coord")"
}

# Pools that make no sense are refused, naming the key.
case_pool_bad() {
	it_setup
	# No coordination file.
	printf '%s\n' 'external-resources: gpu' \
		'external-resource.gpu.driver: static' \
		'external-resource.gpu.param.indexes: 0,1' \
		'external-resource.gpu.pool: true' >"$WORK/extres.yaml"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "$WORK/extres.yaml:4:29: external-resource.gpu.pool is true, but external-resource.gpu.coordination-file is not set: a pool's devices are shared through its coordination file"
	# Not a boolean.
	gpu_config 1 0,1 'external-resource.gpu.pool: yes'
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "external-resource.gpu.pool is 'yes'; expected true or false"
	# Without pool, amount is still required.
	printf '%s\n' 'external-resources: gpu' \
		'external-resource.gpu.driver: static' \
		'external-resource.gpu.param.indexes: 0,1' \
		'external-resource.gpu.pool: false' >"$WORK/extres.yaml"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': external-resource.gpu.amount is not set"
	# A script that records every device it returns for the daemon.
	printf '#!/bin/sh\necho 0,1\n' >"$WORK/discover.sh"
	chmod 0755 "$WORK/discover.sh"
	printf '%s\n' 'external-resources: gpu' \
		'external-resource.gpu.driver: script' \
		'external-resource.gpu.pool: true' \
		"external-resource.gpu.coordination-file: $WORK/gpu.coord" \
		"external-resource.gpu.param.discovery-script.path: $WORK/discover.sh" \
		"external-resource.gpu.param.discovery-script.args: --enable-coordination-mode --coordination-file $WORK/script.coord" \
		>"$WORK/extres.yaml"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': external-resource.gpu.pool is true, but its discovery script coordinates by itself (in $WORK/script.coord)"
	[[ ! -s $WORK/gpu.coord ]] || fail "a refused pool recorded: $(cat "$WORK/gpu.coord")"
	[[ ! -s $WORK/script.coord ]] || fail "lines left in the script's file: $(cat "$WORK/script.coord")"
}

# Start a process tree under a lease of KEYS: a leaser shell that waits
# for $WORK/go, then runs a child that runs a grandchild, which reads
# $MNT/self into $WORK/self.out. Its PID in LEASER.
start_leaser() {
	[[ -e $WORK/gpu.coord ]] || : >"$WORK/gpu.coord"
	# shellcheck disable=SC2016 # expanded by the inner shells
	"$PROBE" lockexec "$WORK/gpu.coord" 4611686018427387904 bash -c 'while [[ ! -e $1/go ]]; do sleep 0.01; done
		bash -c "bash -c '"'"'m=\$1; { readlink \$m/self; ls \$m/self/gpu; cat \$m/self/gpu/*/* ; } >\$2/self.out 2>&1'"'"' gc \$1 \$2" child "$2" "$1"' \
		leaser "$WORK" "$MNT" </dev/null >/dev/null 2>&1 &
	LEASER=$!
	echo "$LEASER" >"$WORK/leaser.pid"
	# Its lock is taken once probe has become bash.
	wait_until 10 "the leaser ($LEASER) exec'ing bash" comm_is "$LEASER" bash
	add_lease "$LEASER" "$@"
}

# A grandchild of a leased process reads its lease's devices through
# self/, with every property the pool serves; an unrelated process finds
# nothing there, before and after.
case_self() {
	it_setup
	local st _
	gpu_config pool 0,1,2,3
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq .leases/none "$(readlink "$MNT/self")" "self of a process without a lease"
	assert_eq "" "$(ls -A "$MNT/self/")" "ls self/ without a lease"
	start_leaser 3 1
	st=$(proc_starttime "$LEASER")
	wait_holders "$(line_of 3 "$LEASER" root bash lease "$LEASER-$st"
		line_of 1 "$LEASER" root bash lease "$LEASER-$st")
"
	touch "$WORK/go"
	wait "$LEASER" || fail "the leased process tree failed: $(cat "$WORK/self.out")"
	assert_file "$WORK/self.out" ".leases/$LEASER-$st
0
1
3
1
"
	assert_eq .leases/none "$(readlink "$MNT/self")" "self of an unrelated process after a leased one"
	assert_probe ENOENT stat "$MNT/self/gpu"
	daemon_stop
}

# Whether the reader of case_self_orphan has answered $1 times.
answered() {
	[[ $(wc -l <"$WORK/seen") -ge $1 ]]
}

# Have it ask self once more, the $1th time, and wait for its answer.
ask_self() {
	echo >&"$ASK"
	wait_until 10 "the reader's answer $1" answered "$1"
}

# Whether process $1's parent is $2.
parent_is() {
	[[ $(awk '{ sub(/.*\) /, ""); print $2 }' "/proc/$1/stat" 2>/dev/null) == "$2" ]]
}

# The reader's $1th answer.
answer_of() {
	sed -n "$1p" "$WORK/seen"
}

# A reader asks self (the daemon keeps what /proc says of it and its
# ancestors: os/proc_cache.h) under B, under M (which holds a lease),
# under A (another lease, and a subreaper). Once B has exited, the reader
# is A's child: its next ask leads to A's lease, not to M's, though M
# lives on and holds its lease.
case_self_orphan() {
	it_setup
	local a m b r sta stm i
	gpu_config pool 0,1,2,3
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	: >"$WORK/gpu.coord"
	: >"$WORK/seen"
	mkfifo "$WORK/ask"
	# Open for writing without waiting for the reader.
	exec {ASK}<>"$WORK/ask"
	# shellcheck disable=SC2016 # expanded by the scripts
	printf '%s\n' '"$3" lockexec "$1/gpu.coord" 4611686018427387904 bash "$1/m.sh" "$1" "$2" &' \
		'exec sleep 300' >"$WORK/a.sh"
	# shellcheck disable=SC2016
	printf '%s\n' 'echo $$ >"$1/m.pid"' 'bash "$1/b.sh" "$1" "$2" &' 'exec sleep 300' >"$WORK/m.sh"
	# shellcheck disable=SC2016
	printf '%s\n' 'echo $$ >"$1/b.pid"' 'bash "$1/reader.sh" "$1" "$2" &' 'wait' >"$WORK/b.sh"
	# shellcheck disable=SC2016
	printf '%s\n' 'echo $$ >"$1/r.pid"' \
		'while read -r _; do echo "$(readlink "$2/self")" >>"$1/seen"; done <"$1/ask"' >"$WORK/reader.sh"
	"$PROBE" lockexec "$WORK/gpu.coord" 4611686018427387904 "$PROBE" subreaper \
		bash "$WORK/a.sh" "$WORK" "$MNT" "$PROBE" </dev/null >/dev/null 2>&1 {ASK}>&- &
	a=$!
	echo "$a" >"$WORK/a.pid"
	wait_until 10 "A ($a) exec'ing sleep" comm_is "$a" sleep
	wait_until 10 "M started" test -s "$WORK/m.pid"
	m=$(<"$WORK/m.pid")
	wait_until 10 "M ($m) exec'ing sleep" comm_is "$m" sleep
	wait_until 10 "the reader started" test -s "$WORK/r.pid"
	b=$(<"$WORK/b.pid")
	r=$(<"$WORK/r.pid")
	add_lease "$a" 0
	add_lease "$m" 1
	sta=$(proc_starttime "$a")
	stm=$(proc_starttime "$m")
	wait_holders "$(line_of 0 "$a" root sleep lease "$a-$sta"
		line_of 1 "$m" root sleep lease "$m-$stm")
"
	# By the third ask, what the reader's ancestors are is kept.
	for i in 1 2 3 4; do
		ask_self "$i"
		assert_eq ".leases/$m-$stm" "$(answer_of "$i")" "self of the reader under M, ask $i"
	done
	kill -KILL "$b"
	wait_until 10 "the reader ($r) given to A ($a)" parent_is "$r" "$a"
	for i in 5 6; do
		ask_self "$i"
		assert_eq ".leases/$a-$sta" "$(answer_of "$i")" "self of the reader under A, ask $i"
	done
	exec {ASK}>&-
	wait_until 10 "the reader ($r) stopping" pid_gone "$r"
	daemon_stop
}

# A lease of a device the daemon discovered and does not serve shows its
# properties; one of a device the driver never reported, only its key.
case_self_unserved() {
	it_setup
	local st
	printf '%s\n' 'external-resources: gpu' \
		'external-resource.gpu.amount: 1' \
		'external-resource.gpu.driver: static' \
		"external-resource.gpu.coordination-file: $WORK/gpu.coord" \
		'external-resource.gpu.param.devices:' \
		'  - {index: "0", uuid: GPU-0}' \
		'  - {index: "1", uuid: GPU-1}' >"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	start_leaser 1 7
	st=$(proc_starttime "$LEASER")
	wait_holders "$(line_of 0 "$DAEMON_PID" root extresd daemon
		line_of 1 "$LEASER" root bash lease "$LEASER-$st"
		line_of 7 "$LEASER" root bash lease "$LEASER-$st")
"
	assert_eq "index
uuid" "$(ls "$MNT/.leases/$LEASER-$st/gpu/0")" "properties of a discovered device the daemon does not serve"
	assert_eq "index" "$(ls "$MNT/.leases/$LEASER-$st/gpu/1")" "properties of a device never discovered"
	touch "$WORK/go"
	wait "$LEASER" || fail "the leased process tree failed: $(cat "$WORK/self.out")"
	assert_file "$WORK/self.out" ".leases/$LEASER-$st
0
1
1
GPU-1
7
"
	daemon_stop
}

# Fail unless every file given is valid UTF-8 text, as Python reads it.
assert_utf8() {
	local f out
	command -v python3 >/dev/null || fail "python3 is missing"
	for f in "$@"; do
		out=$(python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' "$f" 2>&1) ||
			fail "$f is not valid UTF-8: $out: $(od -c "$f" | head -n 20)"
	done
}

# extresctl run records its command's process before that process execs
# (so that the lease can name it): every view shows the command that
# runs, not extresctl, once it runs.
case_lease_command() {
	it_setup
	local line key pid st out
	gpu_config pool 0,1 'external-resource.gpu.amount: 1' "extres.mountpoint: $MNT"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	env --default-signal=INT,QUIT "$EXTRESCTL" -c "$WORK/extres.yaml" run gpu=1 -- sleep 300 \
		</dev/null >/dev/null 2>"$RUN_ERR" &
	echo "$!" >"$WORK/run.pid"
	wait_until 10 "a lease recorded in $WORK/gpu.coord" grep -q 'lease=' "$WORK/gpu.coord"
	line=$(grep -m 1 'lease=' "$WORK/gpu.coord")
	key=${line%% *}
	pid=${line#* }
	pid=${pid%%"$T"*}
	echo "$pid" >"$WORK/cmd.pid"
	st=$(proc_starttime "$pid")
	wait_holders "$(line_of "$key" "$pid" root sleep lease "$pid-$st")
" 10
	it_log "the command's name shown ${WAITED_MS} ms after the lease was recorded"
	out=$(cat "$MNT/.meta/extres.json")
	assert_contains "$out" "{\"resource\": \"gpu\", \"key\": \"$key\", \"pid\": $pid, \"uid\": 0, \"user\": \"root\", \"command\": \"sleep\", " "extres.json"
	out=$("$EXTRESCTL" leases "$MNT") || fail "extresctl leases failed: $out"
	assert_eq "$pid-$st $pid root sleep gpu $key" "$out" "extresctl leases"
	out=$("$EXTRESCTL" status "$MNT") || fail "extresctl status failed: $out"
	assert_contains "$out" "  gpu $key: PID $pid root sleep since $(since_of "$pid") (lease $pid-$st)" "extresctl status"
	kill "$pid"
	wait "$(cat "$WORK/run.pid")" 2>/dev/null || true
	daemon_stop
}

# A holder whose name and command line are not UTF-8 and hold tabs and
# newlines: every view stays valid UTF-8 (U+FFFD for what is not, '?' for
# a control character) and keeps its line format.
case_bad_bytes() {
	it_setup
	local name=$'sl\xff\xfe\tep' argv0=$'a\xff\tb\nc\xe2\x82' pid st shown out status=0
	local u=$'\xef\xbf\xbd'
	gpu_config 1 0,1,2
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	wait_holders "$(line_of 0 "$DAEMON_PID" root extresd daemon)
"
	cp "$(command -v sleep)" "$WORK/$name"
	# The lease's proof (a read lock of its own, extresctl(8) run) on the file that
	# replaces the coordination file below.
	: >"$WORK/gpu.coord.new"
	"$PROBE" lockexec "$WORK/gpu.coord.new" 4611686018427387904 \
		bash -c 'exec -a "$0" "$1" 300' "$argv0" "$WORK/$name" </dev/null >/dev/null 2>&1 &
	pid=$!
	echo "$pid" >"$WORK/bad.pid"
	wait_until 10 "the process exec'ing $name" comm_is "$pid" "$name"
	st=$(proc_starttime "$pid")
	# In one rename, as sed -i does: our line gone, device 0 taken (a
	# conflict, which .meta/status shows with the command line), and a
	# lease of device 2.
	printf '0 %s\n2 %s\t%s\tlease=%s-%s\n' "$pid" "$pid" "$st" "$pid" "$st" >>"$WORK/gpu.coord.new"
	mv "$WORK/gpu.coord.new" "$WORK/gpu.coord"
	shown="sl$u$u?ep"
	wait_holders "$(line_of 0 "$pid" root "$shown" other)
$(line_of 2 "$pid" root "$shown" lease "$pid-$st")
" 5
	wait_until 10 "a conflict in .meta/status" grep -q '^conflict ' "$MNT/.meta/status"
	assert_contains "$(cat "$MNT/.meta/status")" "
conflict resource 'gpu': device index 0 is held by PID $pid (a$u?b?c$u$u 300) in coordination file $WORK/gpu.coord
" ".meta/status"
	out=$(cat "$MNT/.meta/extres.json")
	assert_contains "$out" "\"command\": \"$shown\"" "extres.json"
	"$EXTRESCTL" status "$MNT" >"$WORK/status.out" 2>&1 || status=$?
	assert_eq 1 "$status" "exit status of extresctl status with a conflict"
	assert_contains "$(cat "$WORK/status.out")" "  gpu 2: PID $pid root $shown since $(since_of "$pid") (lease $pid-$st)" "extresctl status"
	"$EXTRESCTL" leases "$MNT" >"$WORK/leases.out" 2>&1 || fail "extresctl leases failed: $(cat "$WORK/leases.out")"
	assert_file "$WORK/leases.out" "$pid-$st $pid root $shown gpu 2"$'\n'
	"$EXTRESCTL" status --json "$MNT" >"$WORK/status.json" 2>&1 || true
	assert_utf8 "$MNT/.meta/holders" "$MNT/.meta/status" "$MNT/.meta/extres.json" \
		"$MNT/.meta/metrics.prom" "$WORK/status.out" "$WORK/leases.out" "$WORK/status.json"
	kill "$pid"
	wait_until 10 "no conflict in .meta/status" grep -q '^conflicts 0$' "$MNT/.meta/status"
	assert_contains "$(cat "$MNT/.meta/status")" "conflicts 0" ".meta/status once the holder is gone"
	assert_utf8 "$DAEMON_ERR"
	sed -i '/conflict: resource/d' "$DAEMON_ERR"
	daemon_stop
}

it_main "$@"
