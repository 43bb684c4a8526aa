# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# .meta/metrics.prom, the Prometheus view: its series under a real mount,
# the reload counters (extresctl reload, SIGHUP, a failed reload), holders
# and leases from a coordination file,
# `promtool check metrics` where Debian's prometheus package is installed,
# and node_exporter's textfile collector reading the mount's .meta as it is,
# scraped over loopback.
#
# usage: metrics.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NODE_EXPORTER=${NODE_EXPORTER:-prometheus-node-exporter}
PORT=
NE_PID=

# The standard tree (gpu: 2 of 3, nic: 1) plus a resource whose static
# devices say how healthy they are (both well: a sick device is not taken;
# sicken() makes one sick, to be seen after a reload).
write_metrics_config() {
	write_std_config "$1"
	sed -i 's/^external-resources: gpu;nic$/external-resources: gpu;nic;fpga/' "$1"
	cat >>"$1" <<-'EOF'
	external-resource.fpga.amount: 2
	external-resource.fpga.driver: static
	external-resource.fpga.param.devices:
	  - {index: "0", health: ok, pci.bus_id: "0000:3b:00.0"}
	  - {index: "1", health: ok}
	EOF
}

# Device 1 of fpga, held, turns sick in config $1 (a reload keeps it).
sicken() {
	sed -i 's/^  - {index: "1", health: ok}$/  - {index: "1", health: "xid 79: fell \\"off\\" the bus"}/' "$1"
	grep -q 'fell' "$1" || fail "sicken: no change in $1"
}

# The samples of the series whose names match the ERE $1.
metric() {
	grep -E "^($1)( |\{)" "$MNT/.meta/metrics.prom" || true
}

# The value of the unlabelled series $1 in .meta/metrics.prom.
metric_value() {
	local line
	line=$(metric "$1")
	[[ -n $line ]] || fail "no $1 in .meta/metrics.prom: $(cat "$MNT/.meta/metrics.prom")"
	echo "${line##* }"
}



# `promtool check metrics` on the view, when promtool is installed.
check_promtool() {
	local out
	if ! command -v promtool >/dev/null; then
		it_log "promtool is not installed (Debian: apt-get install prometheus): not checked with it"
		return 0
	fi
	out=$(promtool check metrics <"$MNT/.meta/metrics.prom" 2>&1) ||
		fail "promtool check metrics: $out"
}

# Every device in the mount has its extres_device_info series, with the
# labels its files give; in $1 (a file), labels in any order.
check_device_info() {
	local text=$1 dir res n line k label want count=0
	for dir in "$MNT"/*/[0-9]*; do
		res=${dir%/*}
		res=${res##*/}
		[[ $res == self ]] && continue
		n=${dir##*/}
		count=$((count + 1))
		line=$(grep -E '^extres_device_info\{' "$text" |
			grep -F "resource=\"$res\"" | grep -F "info=\"$n\"" || true)
		[[ $(printf '%s' "$line" | grep -c .) == 1 ]] ||
			fail "wanted one extres_device_info for $res/$n, got: '$line'"
		[[ $line == *"} 1" ]] || fail "extres_device_info for $res/$n is not 1: $line"
		for k in index uuid pci.bus_id name; do
			[[ -f $dir/$k ]] || continue
			label=${k//./_}
			want="$label=\"$(cat "$dir/$k")\""
			assert_contains "$line" "$want" "extres_device_info of $res/$n"
		done
	done
	assert_eq "$count" "$(grep -c '^extres_device_info{' "$text")" "extres_device_info series"
	[[ $count -gt 0 ]] || fail "no devices in $MNT"
}

# The view, its counters through reloads that succeed and fail, and
# promtool's opinion of it.
case_view() {
	it_setup
	local cfg=$WORK/extres.yaml before out why
	write_metrics_config "$cfg"
	daemon_start -c "$cfg" "$MNT"
	assert_eq "444 $(wc -c <"$MNT/.meta/metrics.prom")" \
		"$(stat -c '%a %s' "$MNT/.meta/metrics.prom")" "mode and size of .meta/metrics.prom"
	check_device_info "$MNT/.meta/metrics.prom"
	assert_eq 'extres_device_healthy{resource="fpga",info="0",index="0"} 1
extres_device_healthy{resource="fpga",info="1",index="1"} 1' \
		"$(metric extres_device_healthy)" "extres_device_healthy"
	assert_eq 'extres_devices{resource="gpu"} 2
extres_devices{resource="nic"} 1
extres_devices{resource="fpga"} 2' "$(metric extres_devices)" "extres_devices"
	assert_eq 0 "$(metric_value extres_reloads_total)" "reloads at start"
	assert_eq 0 "$(metric_value extres_reload_failures_total)" "failures at start"
	before=$(metric_value extres_last_reload_success_timestamp_seconds)
	# Loaded just now, by this machine's clock.
	[[ $before -gt $(($(date +%s) - 600)) && $before -le $(date +%s) ]] ||
		fail "extres_last_reload_success_timestamp_seconds $before is not now ($(date +%s))"
	check_promtool

	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload failed: $out"
	assert_eq 1 "$(metric_value extres_reloads_total)" "reloads after extresctl reload"
	reload_hup
	assert_eq 2 "$(metric_value extres_reloads_total)" "reloads after SIGHUP"
	assert_eq 0 "$(metric_value extres_reload_failures_total)" "failures after two good reloads"
	sicken "$cfg"
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload failed: $out"
	assert_eq 'extres_device_healthy{resource="fpga",info="0",index="0"} 1
extres_device_healthy{resource="fpga",info="1",index="1",reason="xid 79: fell \"off\" the bus"} 0' \
		"$(metric extres_device_healthy)" "extres_device_healthy of a held device turned sick"

	# A failed reload keeps the old tree, yet counts. The clock first
	# moves past the last success, so that a failure taken for one shows.
	before=$(metric_value extres_last_reload_success_timestamp_seconds)
	wait_until 5 "the clock past the last success ($before)" clock_past "$before"
	echo 'external-resource.gpu.amount: [2' >>"$cfg"
	"$EXTRESCTL" reload "$MNT" >/dev/null 2>&1 && fail "extresctl reload of a broken config succeeded"
	why="extresd: error: reload failed, still serving generation 3: $cfg:30:1: did not find expected ',' or ']' (while parsing a flow sequence at line 29, column 31)"
	assert_eq 4 "$(metric_value extres_reloads_total)" "reloads after a failed reload"
	assert_eq 1 "$(metric_value extres_reload_failures_total)" "failures after a failed reload"
	reload_hup
	assert_eq 5 "$(metric_value extres_reloads_total)" "reloads after a failed SIGHUP"
	assert_eq 2 "$(metric_value extres_reload_failures_total)" "failures after a failed SIGHUP"
	assert_eq "$before" "$(metric_value extres_last_reload_success_timestamp_seconds)" \
		"last success after failures"
	check_promtool
	daemon_stop_expecting "$(printf '%s\n' "$why" "$why")"
}

# Whether the clock (whole seconds) is past the time $1.
clock_past() {
	local now
	now=$(date +%s)
	((now > ${1%.*}))
}

# Whether the series matching $1 are $2.
metrics_are() {
	[[ $(metric "$1") == "$2" ]]
}

# Holders and leases from the coordination file: the daemon's two lines, a
# live lease of one device, a dead lease's line.
case_holders() {
	it_setup
	local cfg=$WORK/extres.yaml sleeper st gone want
	write_std_config "$cfg" "$WORK/gpu.coord"
	daemon_start -c "$cfg" "$MNT"
	# It proves its lease as a lease's command does (lease/lease.h).
	"$PROBE" lockexec "$WORK/gpu.coord" 4611686018427387904 sleep 300 &
	sleeper=$!
	echo "$sleeper" >"$WORK/sleeper.pid"
	wait_until 10 "the sleeper ($sleeper) exec'ing sleep" comm_is "$sleeper" sleep
	st=$(proc_starttime "$sleeper")
	gone=$(dead_pid)
	printf '2 %s\t%s\tlease=%s-%s\n5 %s\t1\tlease=%s-1\n' \
		"$sleeper" "$st" "$sleeper" "$st" "$gone" "$gone" >>"$WORK/gpu.coord"
	want='extres_holders{resource="gpu",kind="daemon"} 2
extres_holders{resource="gpu",kind="lease"} 1
extres_holders{resource="gpu",kind="extresd"} 0
extres_holders{resource="gpu",kind="other"} 0
extres_holders{resource="nic",kind="daemon"} 0
extres_holders{resource="nic",kind="lease"} 0
extres_holders{resource="nic",kind="extresd"} 0
extres_holders{resource="nic",kind="other"} 0
extres_stale_holders{resource="gpu"} 1
extres_stale_holders{resource="nic"} 0
extres_leases 1'
	# The daemon re-reads the file soon after it changed.
	poll_until 10 metrics_are 'extres_(stale_)?holders|extres_leases' "$want" || true
	assert_eq "$want" "$(metric 'extres_(stale_)?holders|extres_leases')" "holders and leases in .meta/metrics.prom"
	check_promtool
	kill "$sleeper"
	wait "$sleeper" 2>/dev/null || true
	daemon_stop
}

# A loopback port nobody listens on now (the caller retries when another
# process takes it first).
pick_port() {
	local port hex _
	for _ in $(seq 50); do
		port=$((20000 + RANDOM % 40000))
		printf -v hex ':%04X ' "$port"
		grep -qsF -- "$hex" /proc/net/tcp /proc/net/tcp6 || { echo "$port"; return 0; }
	done
	fail "no free loopback port found"
}

# GET /metrics from node_exporter into $1 (10 s at most), by bash alone.
scrape() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	timeout 10 bash -c '
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3
		cat <&3' scrape "$PORT" >"$1.http" 2>/dev/null || return 1
	head -n 1 "$1.http" | grep -q '^HTTP/1\.[01] 200' || return 1
	# The body: after the first empty line.
	tr -d '\r' <"$1.http" | sed '1,/^$/d' >"$1"
}

# Whether node_exporter answers (then $WORK/scrape.ok exists) or has exited.
ne_answers_or_exited() {
	if scrape "$WORK/scrape"; then
		touch "$WORK/scrape.ok"
		return 0
	fi
	pid_gone "$NE_PID"
}

# Start node_exporter with only its textfile collector on the mount's
# .meta, on a free loopback port; wait (20 s at most) until it answers.
node_exporter_start() {
	local try
	for try in 1 2 3 4 5; do
		PORT=$(pick_port)
		"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$PORT" \
			--web.disable-exporter-metrics \
			--collector.disable-defaults --collector.textfile \
			--collector.textfile.directory="$MNT/.meta" \
			>"$WORK/node_exporter.log" 2>&1 &
		NE_PID=$!
		echo "$NE_PID" >"$WORK/node_exporter.pid"
		rm -f "$WORK/scrape.ok"
		poll_until 20 ne_answers_or_exited || true
		[[ -e $WORK/scrape.ok ]] && return 0
		if pid_alive "$NE_PID"; then
			fail "node_exporter does not answer on 127.0.0.1:$PORT after 20 s: $(tail -n 5 "$WORK/node_exporter.log")"
		fi
		grep -q 'address already in use' "$WORK/node_exporter.log" ||
			fail "node_exporter exited (try $try): $(tail -n 5 "$WORK/node_exporter.log")"
	done
	fail "node_exporter found no free port in 5 tries"
}

node_exporter_stop() {
	kill -TERM "$NE_PID" 2>/dev/null || true
	wait "$NE_PID" 2>/dev/null || true
	rm -f "$WORK/node_exporter.pid"
}

# node_exporter's textfile collector reads the mount's .meta as it is: a
# series for every device, no collector error, and extres_reloads_total
# one higher after extresctl reload.
case_node_exporter() {
	if ! command -v "$NODE_EXPORTER" >/dev/null; then
		echo "SKIP: $IT_CASE: $NODE_EXPORTER is not installed (Debian: apt-get install prometheus-node-exporter)"
		exit 77
	fi
	it_setup
	local cfg=$WORK/extres.yaml out s=$WORK/scrape reloads
	write_metrics_config "$cfg"
	daemon_start -c "$cfg" "$MNT"
	node_exporter_start
	assert_contains "$(cat "$s")" "node_textfile_scrape_error 0" "first scrape"
	check_device_info "$s"
	reloads=$(awk '$1 == "extres_reloads_total" { print $2 }' "$s")
	assert_eq 0 "$reloads" "extres_reloads_total scraped at start"

	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload failed: $out"
	scrape "$s" || fail "second scrape failed: $(cat "$s.http")"
	assert_contains "$(cat "$s")" "node_textfile_scrape_error 0" "second scrape"
	assert_eq 1 "$(awk '$1 == "extres_reloads_total" { print $2 }' "$s")" \
		"extres_reloads_total scraped after extresctl reload"
	check_device_info "$s"
	node_exporter_stop
	daemon_stop
}

it_main "$@"
