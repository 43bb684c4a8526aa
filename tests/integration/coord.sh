# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Allocation through the coordination file, seen from outside: the lines the
# running daemon records, what it skips, and what a failed start-up leaves.
#
# usage: coord.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# `INDEX PID STARTTIME` lines for the daemon while it runs; none after a
# clean exit.
case_coord_lines() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local st
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st$(std_uuid 0)
1 $DAEMON_PID$T$st$(std_uuid 1)" "$(sort "$WORK/gpu.coord")" "coordination file while running"
	assert_eq "-rw-rw----" "$(stat -c %A "$WORK/gpu.coord")" "mode of the new coordination file"
	daemon_stop
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after a clean exit"
}

# Devices held by a live owner are skipped, matched exactly (0 held says
# nothing about 1, and 10 held says nothing about 1); other owners' lines
# survive the daemon's whole life.
case_coord_skip_taken() {
	it_setup
	local me st dst foreign
	me=$$
	st=$(proc_starttime "$me")
	foreign="0 $me $st
10 $me"
	printf '%s\n' "$foreign" >"$WORK/gpu.coord"
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/index" $'1\n'
	assert_file "$MNT/gpu/1/index" $'2\n'
	assert_file "$MNT/gpu/0/uuid" $'GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001\n'
	assert_file "$MNT/gpu/1/memory.total" $'8192 MiB\n'
	dst=$(proc_starttime "$DAEMON_PID")
	assert_eq "$(sort <<<"$foreign
1 $DAEMON_PID$T$dst$(std_uuid 1)
2 $DAEMON_PID$T$dst$(std_uuid 2)")" "$(sort "$WORK/gpu.coord")" "coordination file while running"
	daemon_stop
	assert_eq "$foreign" "$(coord_lines "$WORK/gpu.coord")" "coordination file after a clean exit"
}

# Fewer candidates than the amount: a start-up error naming the resource,
# wanted and found; nothing recorded, no mount.
case_too_few() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	sed -i 's/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: 5/' "$WORK/extres.yaml"
	grep -q 'gpu.amount: 5' "$WORK/extres.yaml" || fail "cannot edit the config"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu "wanted 5" "found 3"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file"
}

# The second resource is short: what the first one took is released, and a
# foreign line is kept as it was.
case_coord_short_second() {
	it_setup
	local me st foreign
	me=$$
	st=$(proc_starttime "$me")
	foreign="7 $me $st"
	printf '%s\n' "$foreign" >"$WORK/gpu.coord"
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	cat >>"$WORK/extres.yaml" <<-EOF
	external-resource.nic.coordination-file: $WORK/nic.coord
	EOF
	sed -i 's/^external-resource.nic.amount: 1$/external-resource.nic.amount: 2/' "$WORK/extres.yaml"
	grep -q 'nic.amount: 2' "$WORK/extres.yaml" || fail "cannot edit the config"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error nic "wanted 2" "found 1"
	assert_eq "$foreign" "$(coord_lines "$WORK/gpu.coord")" "gpu coordination file"
	assert_eq "" "$(coord_lines "$WORK/nic.coord")" "nic coordination file"
}

# Two daemons share one coordination file: the second gets what is left,
# and a third that wants more than is left fails without touching it.
case_coord_two_daemons() {
	it_setup
	local a st_a st_b mnt2=$WORK/mnt2 cfg2=$WORK/second.yaml
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	a=$DAEMON_PID

	mkdir "$mnt2"
	write_std_config "$cfg2" "$WORK/gpu.coord"
	sed -i 's/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: 1/' "$cfg2"
	grep -q 'gpu.amount: 1' "$cfg2" || fail "cannot edit the config"
	# Still 2 wanted, 1 left: fails, records nothing.
	local saved_mnt=$MNT
	MNT=$mnt2
	daemon_run_fail -f -c "$WORK/extres.yaml" "$mnt2"
	assert_startup_error gpu "wanted 2" "found 1"
	MNT=$saved_mnt

	DAEMON_ERR=$WORK/daemon2.err
	daemon_spawn -f -c "$cfg2" "$mnt2"
	wait_mounted "$mnt2"
	assert_eq 0 "$(ls -1 "$mnt2/gpu")" "ls gpu of the second daemon"
	assert_file "$mnt2/gpu/0/index" $'2\n'
	assert_file "$MNT/gpu/1/index" $'1\n'
	st_a=$(proc_starttime "$a")
	st_b=$(proc_starttime "$DAEMON_PID")
	assert_eq "$(sort <<<"0 $a$T$st_a$(std_uuid 0)
1 $a$T$st_a$(std_uuid 1)
2 $DAEMON_PID$T$st_b$(std_uuid 2)")" "$(sort "$WORK/gpu.coord")" "coordination file with two daemons"

	MNT=$mnt2
	daemon_stop
	MNT=$saved_mnt
	DAEMON_PID=$a
	DAEMON_ERR=$WORK/daemon.err
	st_a=$(proc_starttime "$a")
	assert_eq "0 $a$T$st_a$(std_uuid 0)
1 $a$T$st_a$(std_uuid 1)" "$(sort "$WORK/gpu.coord")" "coordination file after the second daemon left"
	daemon_stop
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after both left"
}

it_main "$@"
