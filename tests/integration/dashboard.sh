#!/bin/bash
# SPDX-License-Identifier: MIT
#
# conf/grafana/extres-dashboard.json against the series a running extresd
# really writes in .meta/metrics.prom: every metric name its queries use
# must be there, so that renaming a metric fails here.
#
# usage: dashboard.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DASHBOARD=$SRCDIR/conf/grafana/extres-dashboard.json
CHECK=$SRCDIR/tests/integration/dashboard_check.py

case_metrics() {
	it_setup
	command -v python3 >/dev/null || { echo "SKIP: $IT_CASE: python3 is missing"; exit 77; }
	# Every series present: devices with health, a coordination file
	# with a lease in it.
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	sed -i 's/^    name: Test GPU$/    name: Test GPU\n    health: ok/' "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	env --default-signal=INT,QUIT "$EXTRESCTL" -c "$WORK/extres.yaml" run gpu=1 -- \
		sh -c "while [ ! -e '$WORK/go' ]; do sleep 0.01; done" 2>"$WORK/lease.err" &
	local lease=$! out
	wait_until 20 "the lease in .meta/metrics.prom" grep -qx 'extres_leases 1' "$MNT/.meta/metrics.prom"
	grep -q '^extres_device_healthy{' "$MNT/.meta/metrics.prom" ||
		fail "no extres_device_healthy: $(cat "$MNT/.meta/metrics.prom")"
	cp "$MNT/.meta/metrics.prom" "$WORK/metrics.prom"
	out=$(python3 "$CHECK" "$DASHBOARD" "$WORK/metrics.prom" 2>&1) || fail "$out"
	# Each series the dashboard was built on is among those checked.
	local want
	for want in extres_devices extres_device_healthy extres_device_info extres_holders \
		extres_leases extres_reload_failures_total extres_coordination_conflicts \
		extres_last_reload_success_timestamp_seconds; do
		[[ " ${out#*: } " == *" $want "* ]] || fail "the dashboard does not query $want: $out"
	done
	# A renamed metric fails, naming it.
	sed 's/^extres_leases /extres_lease_count /' "$WORK/metrics.prom" >"$WORK/renamed.prom"
	if out=$(python3 "$CHECK" "$DASHBOARD" "$WORK/renamed.prom" 2>&1); then
		fail "a renamed extres_leases passed: $out"
	fi
	assert_eq "dashboard: panel 'Leases over time': extres_leases is not written by extresd (in 'sum by (instance) (extres_leases{instance=~\"\$instance\"})')" \
		"$out" "the renamed metric"
	touch "$WORK/go"
	wait "$lease" || fail "the lease failed: $(cat "$WORK/lease.err")"
	daemon_stop
}

it_main "$@"
