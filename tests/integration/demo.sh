# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# conf/demo.yaml and scripts/discovery/demo-discovery.sh, as shipped.
#
# usage: demo.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DEMO_COORD=/tmp/extres-demo-gpu.coordination

# Mount conf/demo.yaml itself (into a temp mount point) and check its tree.
case_demo() {
	it_setup
	local cfg=$SRCDIR/conf/demo.yaml gpu_keys st existed=0
	[[ ! -e $DEMO_COORD ]] || existed=1
	gpu_keys=$'compute_cap\nindex\nmemory.total\nname\npci.bus_id\nuuid'
	grep -q "^external-resource.gpu.coordination-file: $DEMO_COORD\$" "$cfg" ||
		fail "$cfg does not use $DEMO_COORD"
	daemon_start -c "$cfg" "$MNT"
	assert_eq $'fpga\ngpu\nself' "$(ls -1 "$MNT")" "ls $MNT"
	assert_eq $'0\n1' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_eq "$gpu_keys" "$(ls -1 "$MNT/gpu/0")" "ls gpu/0"
	assert_eq "$gpu_keys" "$(ls -1 "$MNT/gpu/1")" "ls gpu/1"
	assert_file "$MNT/gpu/0/index" $'0\n'
	assert_file "$MNT/gpu/1/index" $'1\n'
	assert_file "$MNT/gpu/1/name" $'Demo GPU\n'
	assert_file "$MNT/gpu/0/uuid" $'GPU-00000000-0000-4000-8000-000000000000\n'
	assert_file "$MNT/gpu/1/pci.bus_id" $'00000000:86:00.0\n'
	assert_file "$MNT/gpu/0/memory.total" $'16384\n'
	assert_eq 0 "$(ls -1 "$MNT/fpga")" "ls fpga"
	assert_eq index "$(ls -1 "$MNT/fpga/0")" "ls fpga/0"
	assert_file "$MNT/fpga/0/index" $'0\n'
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st${T}uuid=GPU-00000000-0000-4000-8000-000000000000
1 $DAEMON_PID$T$st${T}uuid=GPU-00000000-0000-4000-8000-000000000001" "$(awk -v p="$DAEMON_PID" '$2 == p' "$DEMO_COORD" | sort)" "$DEMO_COORD while running"
	daemon_stop
	assert_eq "" "$(awk -v p="$DAEMON_PID" '$2 == p' "$DEMO_COORD")" "$DEMO_COORD after a clean exit"
	# Leave /tmp as it was when the file is ours and now empty.
	if [[ $existed == 0 && ! -s $DEMO_COORD ]]; then
		rm -f "$DEMO_COORD"
	fi
}

# The demo script keeps Flink's contract on its own.
case_demo_script() {
	it_setup_nofuse
	local s=$SRCDIR/scripts/discovery/demo-discovery.sh out status
	[[ -x $s ]] || fail "$s is not executable"
	assert_eq 0,1 "$("$s" 2 --indexes 0,1,2,3)" "demo-discovery.sh 2 --indexes 0,1,2,3"
	assert_eq 2,3,0 "$("$s" 3 --indexes 2,3,0,1)" "demo-discovery.sh 3 --indexes 2,3,0,1"
	assert_eq 0 "$("$s" 1)" "demo-discovery.sh 1"
	for args in "3 --indexes 0,1" "0" "x" "-1" "1 --bogus"; do
		status=0
		# shellcheck disable=SC2086
		out=$("$s" $args 2>&1 >/dev/null) || status=$?
		assert_eq 1 "$status" "exit status of demo-discovery.sh $args"
		[[ $out == demo-discovery.sh:* ]] || fail "demo-discovery.sh $args: no message on stderr: '$out'"
	done
	out=$("$s" 3 --indexes 0,1 2>&1 >/dev/null) || true
	assert_eq "demo-discovery.sh: wanted 3 device(s), found 2 in '0,1'" "$out" "demo-discovery.sh 3 --indexes 0,1"
}

it_main "$@"
