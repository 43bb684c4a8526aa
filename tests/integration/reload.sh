# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Reloading the configuration (extresctl reload, SIGHUP) under a real mount:
# new values and sizes seen through the kernel's cache, devices that stay
# put, resources and devices that come and go, failed reloads that change
# nothing, periodic refresh of a sysfs resource, and readers that never see
# a torn value while the tree is swapped under them.
#
# usage: reload.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"


# extresctl reload MNT must succeed (exit 0, one line on stdout, nothing on
# stderr) and the generation move up by one.
reload_ok() {
	local gen out rc=0
	gen=$(($(status_field generation) + 1))
	out=$("$EXTRESCTL" reload "$MNT" 2>"$WORK/ctl.err") || rc=$?
	[[ $rc == 0 ]] || fail "extresctl reload $MNT exited with status $rc: $(cat "$WORK/ctl.err")"
	assert_eq "$MNT: reloaded, generation $gen" "$out" "extresctl reload stdout"
	assert_eq "" "$(cat "$WORK/ctl.err")" "extresctl reload stderr"
	assert_eq "$gen" "$(status_field generation)" "generation in .meta/status"
	assert_eq ok "$(status_field last-reload)" "last-reload in .meta/status"
}

# extresctl reload MNT must fail with WHY: exit 1, the reason on stderr (we
# are root), and nothing served changes (the caller compares the tree).
# .meta/status says only when; .meta/error (root only) says why.
reload_fails() {
	local why=$1 gen out rc=0 last
	gen=$(status_field generation)
	out=$("$EXTRESCTL" reload "$MNT" 2>"$WORK/ctl.err") || rc=$?
	[[ $rc == 1 ]] || fail "extresctl reload $MNT exited with status $rc, wanted 1; stderr: $(cat "$WORK/ctl.err")"
	assert_eq "" "$out" "extresctl reload stdout after a failed reload"
	last=$(status_field last-reload)
	[[ $last =~ ^failed\ at\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] ||
		fail "last-reload after a failed reload: wanted 'failed at TIME', got '$last'"
	assert_eq "extresctl: error: $MNT: reload $last: $why; still serving generation $gen" \
		"$(cat "$WORK/ctl.err")" "extresctl reload stderr"
	assert_eq "$gen" "$(status_field generation)" "generation after a failed reload"
	assert_file "$MNT/.meta/error" "$why
"
}


# The exact bytes of FILE read by this shell itself (no child process), as
# printf %q shows them.
shell_read() {
	local v=
	IFS= read -r -d '' v <"$1" || true
	printf '%q' "$v"
}

# Modification time in nanoseconds since the epoch.
mtime_ns() {
	local t
	t=$(stat -c %.9Y -- "$1") || fail "cannot stat $1"
	echo "${t/./}"
}

# static_resource NAME AMOUNT COORD INDEX...: the keys of a static
# resource whose devices have an index and a serial; COORD may be "".
static_resource() {
	local name=$1 amount=$2 coord=$3 i
	shift 3
	printf '%s\n' \
		"external-resource.$name.amount: $amount" \
		"external-resource.$name.driver: static" \
		"external-resource.$name.param.devices:"
	for i in "$@"; do
		printf '  - {index: "%s", serial: "SN-%s-%s"}\n' "$i" "$name" "$i"
	done
	[[ -z $coord ]] || printf 'external-resource.%s.coordination-file: %s\n' "$name" "$coord"
}

# Replace the config atomically, so that a reload never reads half a file.
install_config() {
	cat >"$WORK/extres.yaml.new"
	mv -f "$WORK/extres.yaml.new" "$WORK/extres.yaml"
}

# ---------------------------------------------------------------------------

# write_dev_config LABEL: one static device with a label and a serial.
write_dev_config() {
	install_config <<-EOF
	external-resources: dev
	external-resource.dev.amount: 1
	external-resource.dev.driver: static
	external-resource.dev.param.devices:
	  - {index: "0", label: "$1", serial: "SN-0001"}
	EOF
}

# A changed value shows at once with its new size, to a process that had it
# cached and through a descriptor opened before the reload; only the
# changed file gets a newer mtime. Once through extresctl, once through
# SIGHUP.
case_values_and_sizes() {
	it_setup
	local f serial label_t0 serial_t0 t fd fd2 got
	write_dev_config A
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	f=$MNT/dev/0/label
	serial=$MNT/dev/0/serial

	# A long-lived process that reads the file on request.
	coproc READER {
		while IFS= read -r p; do
			v=
			IFS= read -r -d '' v <"$p" || true
			printf '%q\n' "$v"
		done
	}
	reader_read() {
		local got
		printf '%s\n' "$1" >&"${READER[1]}"
		IFS= read -r got <&"${READER[0]}" || fail "the reader process is gone"
		printf '%s' "$got"
	}

	assert_eq "$(printf '%q' $'A\n')" "$(reader_read "$f")" "reader: label before"
	assert_eq "$(printf '%q' $'A\n')" "$(shell_read "$f")" "label before"
	assert_eq 2 "$(stat -c %s "$f")" "size of label before"
	assert_file "$serial" $'SN-0001\n'
	label_t0=$(mtime_ns "$f")
	serial_t0=$(mtime_ns "$serial")
	exec {fd}<"$f"

	write_dev_config Bee-changed
	reload_ok
	assert_eq "$(printf '%q' $'Bee-changed\n')" "$(reader_read "$f")" "reader: label after extresctl reload"
	assert_file "$f" $'Bee-changed\n'
	assert_eq 12 "$(stat -c %s "$f")" "stat -c %s label after extresctl reload"
	assert_eq 12 "$(wc -c <"$f")" "wc -c label after extresctl reload"
	assert_probe "reg 0444 12" stat "$f"
	# A descriptor opened before the reload (nothing read yet) gets one
	# whole value, old or new.
	got=
	IFS= read -r -d '' got <&"$fd" || true
	exec {fd}<&-
	[[ $got == $'A\n' || $got == $'Bee-changed\n' ]] ||
		fail "read through a descriptor opened before the reload got $(printf '%q' "$got")"
	t=$(mtime_ns "$f")
	((t > label_t0)) || fail "mtime of the changed label did not move: $label_t0 -> $t"
	assert_eq "$serial_t0" "$(mtime_ns "$serial")" "mtime of the unchanged serial"
	assert_file "$serial" $'SN-0001\n'
	label_t0=$t

	# Shorter this time, through SIGHUP.
	exec {fd2}<"$f"
	write_dev_config Z
	reload_hup
	assert_eq ok "$(status_field last-reload)" "last-reload after SIGHUP"
	assert_eq 2 "$(status_field generation)" "generation after SIGHUP"
	assert_eq 2 "$(status_field reloads)" "reloads after SIGHUP"
	assert_eq "$(printf '%q' $'Z\n')" "$(reader_read "$f")" "reader: label after SIGHUP"
	assert_eq "$(printf '%q' $'Z\n')" "$(shell_read "$f")" "label after SIGHUP"
	assert_eq 2 "$(stat -c %s "$f")" "stat -c %s label after SIGHUP"
	assert_probe '2:Z\n' pread "$f" 0 100
	assert_probe '0:' pread "$f" 2 100
	got=
	IFS= read -r -d '' got <&"$fd2" || true
	exec {fd2}<&-
	[[ $got == $'Bee-changed\n' || $got == $'Z\n' ]] ||
		fail "read through a descriptor opened before SIGHUP got $(printf '%q' "$got")"
	t=$(mtime_ns "$f")
	((t > label_t0)) || fail "mtime of the changed label did not move: $label_t0 -> $t"
	assert_eq "$serial_t0" "$(mtime_ns "$serial")" "mtime of the unchanged serial after SIGHUP"
	eval "exec ${READER[1]}>&-"
	daemon_stop
}

# Devices the driver still offers stay held at the same info numbers, with
# the coordination file untouched, whatever else changes.
case_no_churn() {
	it_setup
	local coord=$WORK/gpu.coord tree0 ino0 ino1 t0 t1
	{
		echo 'external-resources: gpu;nic'
		static_resource gpu 2 "$coord" 0 1 2
		echo 'external-resource.nic.amount: 1'
		echo 'external-resource.nic.driver: static'
		echo 'external-resource.nic.param.devices:'
		echo '  - {index: "0", link_layer: InfiniBand}'
	} | install_config
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local st
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st
1 $DAEMON_PID$T$st" "$(coord_lines "$coord")" "coordination file"
	cp -- "$coord" "$WORK/coord.before"
	gpu_tree() {
		tree_listing "$MNT/gpu"
		tree_contents "$MNT/gpu"
	}
	tree0=$(gpu_tree)
	assert_contains "$tree0" "./1/serial=SN-gpu-1" "gpu tree"
	ino0=$(stat -c %i "$MNT/gpu/0") ino1=$(stat -c %i "$MNT/gpu/1")
	t0=$(mtime_ns "$MNT/gpu/0/serial") t1=$(mtime_ns "$MNT/gpu/1/serial")
	local coord_ino
	coord_ino=$(stat -c %i "$coord")

	# An unrelated change: the nic's property.
	{
		echo 'external-resources: gpu;nic'
		static_resource gpu 2 "$coord" 0 1 2
		echo 'external-resource.nic.amount: 1'
		echo 'external-resource.nic.driver: static'
		echo 'external-resource.nic.param.devices:'
		echo '  - {index: "0", link_layer: Ethernet}'
	} | install_config
	reload_ok
	assert_file "$MNT/nic/0/link_layer" $'Ethernet\n'
	assert_eq "$tree0" "$(gpu_tree)" "gpu after an unrelated change"
	cmp -s -- "$WORK/coord.before" "$coord" ||
		fail "coordination file changed: $(cat "$coord")"
	assert_eq "$coord_ino" "$(stat -c %i "$coord")" "inode of the coordination file"
	assert_eq "$ino0 $ino1" "$(stat -c %i "$MNT/gpu/0") $(stat -c %i "$MNT/gpu/1")" "inodes of gpu/0 and gpu/1"
	assert_eq "$t0 $t1" "$(mtime_ns "$MNT/gpu/0/serial") $(mtime_ns "$MNT/gpu/1/serial")" \
		"mtimes of the gpu files"

	# The driver now offers the same devices in another order, one of
	# them last: a fresh allocation would take 2 and 1; the held 0 and 1
	# stay, at the same numbers.
	{
		echo 'external-resources: gpu;nic'
		static_resource gpu 2 "$coord" 2 1 0
		echo 'external-resource.nic.amount: 1'
		echo 'external-resource.nic.driver: static'
		echo 'external-resource.nic.param.devices:'
		echo '  - {index: "0", link_layer: Ethernet}'
	} | install_config
	reload_ok
	assert_eq "$tree0" "$(gpu_tree)" "gpu after the candidates were reordered"
	cmp -s -- "$WORK/coord.before" "$coord" ||
		fail "coordination file changed: $(cat "$coord")"
	assert_eq "$t0 $t1" "$(mtime_ns "$MNT/gpu/0/serial") $(mtime_ns "$MNT/gpu/1/serial")" \
		"mtimes of the gpu files after the reorder"
	daemon_stop
	assert_eq "" "$(coord_lines "$coord")" "coordination file after exit"
}

# A resource added appears (and is recorded); one removed is gone (ENOENT,
# its lines released); the one that stays is untouched.
case_add_remove() {
	it_setup
	local st nic_tree
	{
		echo 'external-resources: gpu;nic'
		static_resource gpu 2 "$WORK/gpu.coord" 0 1 2
		static_resource nic 1 "$WORK/nic.coord" 0
	} | install_config
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq $'gpu\nnic\nself' "$(ls -1 "$MNT")" "ls before"
	assert_probe ENOENT stat "$MNT/fpga"
	assert_probe ENOENT stat "$MNT/fpga/0/index"
	nic_tree=$(tree_contents "$MNT/nic")

	{
		echo 'external-resources: gpu;nic;fpga'
		static_resource gpu 2 "$WORK/gpu.coord" 0 1 2
		static_resource nic 1 "$WORK/nic.coord" 0
		static_resource fpga 2 "$WORK/fpga.coord" 4 6 7
	} | install_config
	reload_ok
	assert_eq $'fpga\ngpu\nnic\nself' "$(ls -1 "$MNT")" "ls after adding fpga"
	assert_eq "$MNT/fpga $MNT/gpu $MNT/nic $MNT/self" "$(echo "$MNT"/*)" "glob after adding fpga"
	assert_eq $'0\n1' "$(ls -1 "$MNT/fpga")" "ls fpga"
	assert_file "$MNT/fpga/0/index" $'4\n'
	assert_file "$MNT/fpga/1/serial" $'SN-fpga-6\n'
	assert_probe "reg 0444 10" stat "$MNT/fpga/1/serial"
	assert_eq "4 $DAEMON_PID$T$st
6 $DAEMON_PID$T$st" "$(coord_lines "$WORK/fpga.coord")" "fpga coordination file"
	assert_eq "0 $DAEMON_PID$T$st
1 $DAEMON_PID$T$st" "$(coord_lines "$WORK/gpu.coord")" "gpu coordination file"

	# gpu goes; its names were looked up (and cached) just before.
	assert_file "$MNT/gpu/0/index" $'0\n'
	assert_eq $'0\n1' "$(ls -1 "$MNT/gpu")" "ls gpu before removing it"
	{
		echo 'external-resources: nic;fpga'
		static_resource nic 1 "$WORK/nic.coord" 0
		static_resource fpga 2 "$WORK/fpga.coord" 4 6 7
	} | install_config
	reload_ok
	assert_eq $'fpga\nnic\nself' "$(ls -1 "$MNT")" "ls after removing gpu"
	assert_eq $'.leases\n.meta\nfpga\nnic\nself' "$(ls -1A "$MNT")" "ls -A after removing gpu"
	assert_probe ENOENT stat "$MNT/gpu"
	assert_probe ENOENT stat "$MNT/gpu/0"
	assert_probe ENOENT stat "$MNT/gpu/0/index"
	assert_probe ENOENT pread "$MNT/gpu/1/serial" 0 10
	[[ ! -e $MNT/gpu ]] || fail "$MNT/gpu still exists"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "gpu coordination file after removing gpu"
	assert_eq 0 "$(stat -c %s "$WORK/gpu.coord")" "size of the gpu coordination file"
	assert_eq "4 $DAEMON_PID$T$st
6 $DAEMON_PID$T$st" "$(coord_lines "$WORK/fpga.coord")" "fpga coordination file after removing gpu"
	assert_eq "0 $DAEMON_PID$T$st" "$(coord_lines "$WORK/nic.coord")" "nic coordination file"
	assert_eq "$nic_tree" "$(tree_contents "$MNT/nic")" "nic throughout"
	daemon_stop
	assert_eq "" "$(coord_lines "$WORK/fpga.coord")" "fpga coordination file after exit"
	assert_eq "" "$(coord_lines "$WORK/nic.coord")" "nic coordination file after exit"
}

# Whether the second extresd (PID $1) has mounted $WORK/mnt2; fail if it
# exited.
second_mounted() {
	is_our_mount "$WORK/mnt2" && return 0
	pid_alive "$1" || fail "the second extresd exited: $(cat "$WORK/second.err")"
	return 1
}

# amount 1 -> 3 -> 2: more devices are taken and recorded, then the last
# one is dropped and released; the first ones never move.
case_amount_up_down() {
	it_setup
	local coord=$WORK/gpu.coord st t0 pid2
	write_amount() {
		{
			echo 'external-resources: gpu'
			static_resource gpu "$1" "$coord" 0 1 2 3
		} | install_config
	}
	write_amount 1
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq 0 "$(ls -1 "$MNT/gpu")" "ls gpu with amount 1"
	assert_eq "0 $DAEMON_PID$T$st" "$(coord_lines "$coord")" "coordination file with amount 1"
	t0=$(mtime_ns "$MNT/gpu/0/serial")

	write_amount 3
	reload_ok
	assert_eq $'0\n1\n2' "$(ls -1 "$MNT/gpu")" "ls gpu with amount 3"
	assert_eq $'0\n1\n2' "$(cat "$MNT"/gpu/*/index)" "indexes with amount 3"
	assert_file "$MNT/gpu/2/serial" $'SN-gpu-2\n'
	assert_eq "0 $DAEMON_PID$T$st
1 $DAEMON_PID$T$st
2 $DAEMON_PID$T$st" "$(coord_lines "$coord")" "coordination file with amount 3"
	assert_eq "$t0" "$(mtime_ns "$MNT/gpu/0/serial")" "mtime of gpu/0/serial"

	# Look gpu/2 up first, so that the kernel has it to forget.
	assert_file "$MNT/gpu/2/index" $'2\n'
	write_amount 2
	reload_ok
	assert_eq $'0\n1' "$(ls -1 "$MNT/gpu")" "ls gpu with amount 2"
	assert_file "$MNT/gpu/0/index" $'0\n'
	assert_file "$MNT/gpu/1/index" $'1\n'
	assert_file "$MNT/gpu/1/serial" $'SN-gpu-1\n'
	assert_probe ENOENT stat "$MNT/gpu/2"
	assert_probe ENOENT stat "$MNT/gpu/2/index"
	assert_eq "0 $DAEMON_PID$T$st
1 $DAEMON_PID$T$st" "$(coord_lines "$coord")" "coordination file with amount 2"
	assert_eq "$t0" "$(mtime_ns "$MNT/gpu/0/serial")" "mtime of gpu/0/serial"

	# Released for real: another daemon on the same file gets 2 and 3.
	mkdir "$WORK/mnt2"
	{
		echo 'external-resources: gpu'
		static_resource gpu 2 "$coord" 0 1 2 3
	} >"$WORK/second.yaml"
	env --default-signal=INT,QUIT "$EXTRESD" -f -c "$WORK/second.yaml" "$WORK/mnt2" \
		>/dev/null 2>"$WORK/second.err" &
	pid2=$!
	wait_until 10 "the second extresd's mount" second_mounted "$pid2"
	assert_eq $'2\n3' "$(cat "$WORK"/mnt2/gpu/*/index)" "devices of the second daemon"
	kill -TERM "$pid2"
	wait "$pid2" || fail "the second extresd exited with status $?: $(cat "$WORK/second.err")"
	daemon_stop
	assert_eq "" "$(coord_lines "$coord")" "coordination file after both exits"
}

# Each bad config leaves the tree, the coordination file and the status
# generation as they were; the daemon keeps serving; a good reload after
# them works.
case_bad_config() {
	it_setup
	local coord=$WORK/gpu.coord cfg=$WORK/extres.yaml listing contents
	local errors=() why
	write_std_config "$cfg" "$coord"
	cp -- "$cfg" "$WORK/good.yaml"
	mkdir "$WORK/bin"
	printf '%s\n' '#!/bin/sh' \
		'echo "discover.sh: no FPGA on this host (marker 5c1d)" >&2' \
		'exit 1' >"$WORK/bin/discover.sh"
	chmod 0755 "$WORK/bin/discover.sh"
	daemon_start -c "$cfg" "$MNT"
	listing=$(tree_listing "$MNT")
	contents=$(tree_contents "$MNT")
	assert_eq "$STD_LISTING" "$listing" "tree at start"
	assert_eq "$STD_CONTENTS" "$contents" "contents at start"
	cp -- "$coord" "$WORK/coord.before"

	unchanged() {
		assert_eq "$listing" "$(tree_listing "$MNT")" "tree after: $1"
		assert_eq "$contents" "$(tree_contents "$MNT")" "contents after: $1"
		cmp -s -- "$WORK/coord.before" "$coord" ||
			fail "coordination file changed after: $1: $(cat "$coord")"
		assert_eq 0 "$(status_field generation)" "generation after: $1"
		assert_probe OK readloop "$MNT/gpu/1/uuid" 20 $'GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001\n'
	}

	# A YAML syntax error.
	sed 's/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: [2/' \
		"$WORK/good.yaml" | install_config
	why="$cfg:4:29: did not find expected ',' or ']' (while parsing a flow sequence at line 3, column 31)"
	reload_fails "$why"
	errors+=("extresd: error: reload failed, still serving generation 0: $why")
	unchanged "a syntax error"

	# A zero amount.
	sed 's/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: 0/' \
		"$WORK/good.yaml" | install_config
	why="$cfg:3:31: external-resource.gpu.amount is '0'; it must be at least 1"
	reload_fails "$why"
	errors+=("extresd: error: reload failed, still serving generation 0: $why")
	unchanged "a zero amount"

	# A discovery script that fails, in a resource added to a good config.
	{
		sed 's/^external-resources: gpu;nic$/external-resources: gpu;nic;fpga/' "$WORK/good.yaml"
		echo 'external-resource.fpga.amount: 1'
		echo 'external-resource.fpga.driver: script'
		echo "external-resource.fpga.param.discovery-script.path: $WORK/bin/discover.sh"
	} | install_config
	why="resource 'fpga': driver 'script': discovery script $WORK/bin/discover.sh exited with status 1: discover.sh: no FPGA on this host (marker 5c1d)"
	reload_fails "$why"
	errors+=("extresd: error: reload failed, still serving generation 0: $why")
	unchanged "a failing discovery script"
	assert_probe ENOENT stat "$MNT/fpga"

	# More devices than the driver has.
	sed 's/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: 4/' \
		"$WORK/good.yaml" | install_config
	why="resource 'gpu': wanted 4, found 3 free of 3 (coordination file $coord)"
	reload_fails "$why"
	errors+=("extresd: error: reload failed, still serving generation 0: $why")
	unchanged "too few devices"
	assert_eq 4 "$(status_field reloads)" "reloads after four failures"

	# A good config again, with one change: it takes.
	sed 's/link_layer: InfiniBand/link_layer: Ethernet/' "$WORK/good.yaml" | install_config
	reload_ok
	assert_eq 1 "$(status_field generation)" "generation after the good reload"
	assert_file "$MNT/nic/0/link_layer" $'Ethernet\n'
	assert_eq "${contents/InfiniBand/Ethernet}" "$(tree_contents "$MNT")" "contents after the good reload"
	cmp -s -- "$WORK/coord.before" "$coord" ||
		fail "coordination file changed after the good reload: $(cat "$coord")"
	daemon_stop_expecting "$(printf '%s\n' "${errors[@]}")"
}

# A failed reload's reason may quote what a discovery script printed and a
# config that only root reads: every user sees when it failed
# (.meta/status, extresctl status), only root sees why (.meta/error,
# extresctl), and the log.
case_private_error() {
	it_setup
	command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
	[[ $(id -u) == 0 ]] || fail "this case needs root (allow_other, setpriv)"
	local cfg=$WORK/extres.yaml secret=tok-$RANDOM$RANDOM-s3cret why out last f
	local errors=()
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
	# nobody must be able to reach the mount point.
	chmod 0755 "$WORK"
	write_std_config "$cfg"
	cp -- "$cfg" "$WORK/good.yaml"
	chmod 0600 "$cfg"
	mkdir "$WORK/bin"
	printf '%s\n' '#!/bin/sh' "echo \"discover.sh: token=$secret\" >&2" 'exit 1' \
		>"$WORK/bin/discover.sh"
	chmod 0755 "$WORK/bin/discover.sh"
	daemon_start -c "$cfg" "$MNT"
	assert_file "$MNT/.meta/error" ""

	# A script that prints a secret and fails.
	{
		sed 's/^external-resources: gpu;nic$/external-resources: gpu;nic;fpga/' "$WORK/good.yaml"
		echo 'external-resource.fpga.amount: 1'
		echo 'external-resource.fpga.driver: script'
		echo "external-resource.fpga.param.discovery-script.path: $WORK/bin/discover.sh"
	} | install_config
	chmod 0600 "$cfg"
	reload_hup
	why="resource 'fpga': driver 'script': discovery script $WORK/bin/discover.sh exited with status 1: discover.sh: token=$secret"
	errors+=("extresd: error: reload failed, still serving generation 0: $why")

	# nobody: when, never why.
	out=$(nobody cat "$MNT/.meta/status") || fail "nobody cannot read .meta/status"
	[[ $out != *"$secret"* ]] || fail ".meta/status shows the secret to nobody: $out"
	last=$(status_field last-reload)
	[[ $last =~ ^failed\ at\ [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$ ]] ||
		fail "last-reload: wanted 'failed at TIME', got '$last'"
	assert_contains "$out" "last-reload $last" ".meta/status as nobody"
	out=$(nobody cat "$MNT/.meta/error" 2>&1) && fail "nobody read .meta/error: $out"
	assert_contains "$out" "Permission denied" "cat .meta/error as nobody"
	assert_eq "400 0 0" "$(stat -c '%a %u %g' "$MNT/.meta/error")" "mode and owner of .meta/error"
	out=$(nobody grep -r -- "$secret" "$MNT" 2>&1 || true)
	[[ $out != *"$secret"* ]] || fail "nobody found the secret in the mount: $out"
	out=$(nobody "$EXTRESCTL" status "$MNT" 2>&1) || fail "extresctl status as nobody failed: $out"
	[[ $out != *"$secret"* ]] || fail "extresctl status shows the secret to nobody: $out"
	assert_contains "$out" "extresctl: warning: $MNT: last reload $last (why: in the daemon's log, and in $MNT/.meta/error for root: Permission denied)" \
		"extresctl status as nobody"

	# root: why.
	assert_file "$MNT/.meta/error" "$why
"
	out=$("$EXTRESCTL" status "$MNT" 2>&1) || fail "extresctl status failed: $out"
	assert_contains "$out" "extresctl: warning: $MNT: last reload $last: $why" "extresctl status as root"

	# A config value only root reads, quoted in the error: the same.
	sed "s/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: $secret/" \
		"$WORK/good.yaml" | install_config
	chmod 0600 "$cfg"
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) && fail "the reload of a bad amount took: $out"
	assert_contains "$out" "$secret" "extresctl reload as root"
	why=$(cat "$MNT/.meta/error")
	assert_contains "$why" "$secret" ".meta/error after a bad amount"
	errors+=("extresd: error: reload failed, still serving generation 0: $why")
	for f in status env resources.json extres.json; do
		out=$(nobody cat "$MNT/.meta/$f") || fail "nobody cannot read .meta/$f"
		[[ $out != *"$secret"* ]] || fail ".meta/$f shows the secret to nobody: $out"
	done

	# A good reload: nothing left to tell.
	install_config <"$WORK/good.yaml"
	reload_ok
	assert_file "$MNT/.meta/error" ""
	daemon_stop_expecting "$(printf '%s\n' "${errors[@]}")"
}

# A listing is a snapshot of one generation, as an open file is: 8 readers
# list a directory while 1,000 reloads toggle its size between 3 and many
# entries; every count is one a generation had, never a mix of two.
# shellcheck disable=SC2012,SC2016 # `ls | wc -l` is the idiom under test
case_listing_snapshot() {
	it_setup
	local big=1000 reloads=1000 i r n before bad t0 counts fd line errors
	local text=()
	for n in 3 "$big"; do
		text[n]=$(
			echo 'external-resources: gpu'
			# shellcheck disable=SC2046 # one index per argument
			static_resource gpu "$n" "" $(seq 0 $((big - 1)))
		)
	done
	printf '%s\n' "${text[big]}" >"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "$big" "$(ls "$MNT/gpu" | wc -l)" "entries at start"

	# The readers fill the time the daemon and the reloads leave (nice),
	# so that 1,000 reloads take seconds, not minutes, on two CPUs.
	for r in $(seq 8); do
		# A listing that outlives 16 reloads ends in ESTALE (extresd(8), SIGHUP):
		# reported as such, never as a count, so that only a torn
		# listing counts as one no generation had. ls may print names
		# before its error: the error is its "ls: " line.
		nice -n 19 bash -c 'while [[ ! -e $1/done && -d $2 ]]; do
				if out=$(ls "$2" 2>&1); then wc -l <<<"$out"; else echo "error: $(grep -m 1 "^ls: " <<<"$out" || tr "\n" " " <<<"$out")"; fi
			done' \
			reader "$WORK" "$MNT/gpu" >"$WORK/counts.$r" &
		echo $! >"$WORK/reader.$r.pid"
	done
	# Short waits without a process each: read with a timeout from a FIFO
	# nobody writes. The config is written in place, without a process:
	# the daemon reads it only when signalled, after the write.
	mkfifo "$WORK/never"
	exec {fd}<>"$WORK/never"
	# The "reloads N" line of .meta/status into $line, without a process.
	reloads_line() {
		while IFS= read -r line && [[ $line != "reloads "* ]]; do :; done <"$MNT/.meta/status"
	}
	t0=$SECONDS
	for ((i = 1; i <= reloads; i++)); do
		n=$((i % 2 ? 3 : big))
		printf '%s\n' "${text[n]}" >"$WORK/extres.yaml"
		reloads_line
		before=$line
		kill -HUP "$DAEMON_PID" || fail "cannot send SIGHUP to extresd"
		while reloads_line && [[ $line == "$before" ]]; do
			((SECONDS - t0 < 240)) || fail "only $i of $reloads reloads done after 240 s"
			read -r -t 0.002 -u "$fd" _ || true
		done
	done
	exec {fd}<&-
	touch "$WORK/done"
	for r in $(seq 8); do
		wait "$(cat "$WORK/reader.$r.pid")" || fail "reader $r failed"
	done
	assert_eq ok "$(status_field last-reload)" "last reload"
	assert_eq "$reloads" "$(status_field generation)" "generation after $reloads reloads"
	assert_eq "$big" "$(ls "$MNT/gpu" | wc -l)" "entries at the end"
	errors=$(cat "$WORK"/counts.* | grep '^error: ' | sort | uniq -c || true)
	[[ -z $errors ]] && it_log "no listing failed" || it_log "failed listings: $errors"
	[[ -z $(grep -v 'Stale file handle' <<<"$errors") ]] ||
		fail "listings failed otherwise than with ESTALE: $errors"
	counts=$(cat "$WORK"/counts.* | grep -v '^error: ' | sort -n | uniq -c)
	n=$(cat "$WORK"/counts.* | grep -vc '^error: ' || true)
	it_log "$reloads reloads in $((SECONDS - t0)) s, $n listings (how many, count): $(tr -s ' \n' ' ' <<<"$counts")"
	bad=$(awk -v big="$big" '$2 != 3 && $2 != big' <<<"$counts")
	[[ -z $bad ]] || fail "listings that no generation had (how many, count): $bad"
	((n >= 100)) || fail "only $n listings ran during the reloads"
	daemon_stop
}

# ---------------------------------------------------------------------------
# refresh-interval over a fake sysfs tree

# make_dev NAME TEMP: a device directory with two attribute files.
make_dev() {
	mkdir -p "$WORK/sys/$1"
	printf '%s\n' "$2" >"$WORK/sys/$1/temp"
	printf 'up\n' >"$WORK/sys/$1/state"
}

# Replace an attribute file's content in one step.
set_attr() {
	printf '%s\n' "$2" >"$1.new"
	mv -f "$1.new" "$1"
}

# write_refresh_config AMOUNT [COORDINATION_KEY]
write_refresh_config() {
	{
		printf '%s\n' \
			'external-resources: nic' \
			"external-resource.nic.amount: $1" \
			'external-resource.nic.driver: sysfs' \
			'external-resource.nic.refresh-interval: 0.2' \
			"external-resource.nic.coordination-file: $WORK/nic.coord" \
			"external-resource.nic.param.glob: $WORK/sys/dev*" \
			'external-resource.nic.param.attributes: temp,state'
		[[ -z ${2:-} ]] || echo "external-resource.nic.coordination-key: $2"
	} | install_config
}

# wait_value FILE BYTES: poll (10 s at most, 50 refresh intervals) until
# FILE holds exactly BYTES.
wait_value() {
	local want
	want=$(printf '%q' "$2")
	poll_until 10 holds_quoted "$1" "$want" ||
		fail "$1 still holds $(shell_read "$1") 10 s after the change, wanted $want"
}

holds_quoted() {
	[[ $(shell_read "$1") == "$2" ]]
}

# A changed attribute shows within about a second, with its new size;
# nothing else changes (allocation, other files' mtimes); a device that
# disappears keeps its last values, with a warning; when it comes back its
# values are followed again.
case_refresh() {
	it_setup
	local st t_state t_dev1 coord=$WORK/nic.coord
	make_dev dev0 40
	make_dev dev1 41
	write_refresh_config 2
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	st=$(proc_starttime "$DAEMON_PID")
	assert_file "$MNT/nic/0/temp" $'40\n'
	assert_file "$MNT/nic/1/temp" $'41\n'
	assert_eq "0 $DAEMON_PID$T$st
1 $DAEMON_PID$T$st" "$(coord_lines "$coord")" "coordination file"
	cp -- "$coord" "$WORK/coord.before"
	t_state=$(mtime_ns "$MNT/nic/0/state")
	t_dev1=$(mtime_ns "$MNT/nic/1/temp")

	set_attr "$WORK/sys/dev0/temp" 41234
	wait_value "$MNT/nic/0/temp" $'41234\n'
	assert_eq 6 "$(stat -c %s "$MNT/nic/0/temp")" "size of nic/0/temp after the change"
	assert_file "$MNT/nic/0/state" $'up\n'
	assert_file "$MNT/nic/1/temp" $'41\n'
	assert_eq "$t_state" "$(mtime_ns "$MNT/nic/0/state")" "mtime of the unchanged nic/0/state"
	assert_eq "$t_dev1" "$(mtime_ns "$MNT/nic/1/temp")" "mtime of the unchanged nic/1/temp"
	cmp -s -- "$WORK/coord.before" "$coord" || fail "coordination file changed: $(cat "$coord")"
	assert_eq 0 "$(status_field generation)" "generation: a refresh is no reload"

	# Shorter again.
	set_attr "$WORK/sys/dev0/temp" 7
	wait_value "$MNT/nic/0/temp" $'7\n'
	assert_eq 2 "$(stat -c %s "$MNT/nic/0/temp")" "size of nic/0/temp after the second change"

	# dev1 disappears: info 1 keeps its last values.
	mv "$WORK/sys/dev1" "$WORK/gone-dev1"
	wait_until 10 "the refresh's warning" grep -q "refresh of 'nic'" "$DAEMON_ERR"
	assert_contains "$(cat "$DAEMON_ERR")" \
		"extresd: warning: refresh of 'nic': 1 of its devices are no longer reported as they were; keeping their last values" \
		"daemon stderr after dev1 disappeared"
	assert_eq $'0\n1' "$(ls -1 "$MNT/nic")" "ls nic after dev1 disappeared"
	assert_file "$MNT/nic/1/temp" $'41\n'
	assert_file "$MNT/nic/1/name" $'dev1\n'
	assert_file "$MNT/nic/1/path" "$WORK/sys/dev1"$'\n'
	cmp -s -- "$WORK/coord.before" "$coord" || fail "coordination file changed: $(cat "$coord")"

	# Back, with another value: followed again.
	mv "$WORK/gone-dev1" "$WORK/sys/dev1"
	set_attr "$WORK/sys/dev1/temp" 99
	wait_value "$MNT/nic/1/temp" $'99\n'
	assert_file "$MNT/nic/0/temp" $'7\n'
	cmp -s -- "$WORK/coord.before" "$coord" || fail "coordination file changed: $(cat "$coord")"
	daemon_stop
}

# The sysfs driver numbers devices by position, so when the first device
# disappears every later one moves down an index. The refresh must still
# give each info its own device's values: info 0 keeps dev0's last values,
# info 1 stays dev1, and no info takes the values of dev2, which this
# daemon never allocated.
case_refresh_shift() {
	it_setup
	make_dev dev0 40
	make_dev dev1 41
	make_dev dev2 42
	write_refresh_config 2
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/nic/0/name" $'dev0\n'
	assert_file "$MNT/nic/1/name" $'dev1\n'
	mv "$WORK/sys/dev0" "$WORK/gone-dev0"
	# The refresh that finds the shifted listing says so; those after it
	# find the same.
	wait_until 10 "the refresh's warning" grep -q "refresh of 'nic'" "$DAEMON_ERR"
	assert_file "$MNT/nic/0/name" $'dev0\n'
	assert_file "$MNT/nic/0/path" "$WORK/sys/dev0"$'\n'
	assert_file "$MNT/nic/0/temp" $'40\n'
	assert_file "$MNT/nic/1/name" $'dev1\n'
	assert_file "$MNT/nic/1/path" "$WORK/sys/dev1"$'\n'
	assert_file "$MNT/nic/1/temp" $'41\n'
	daemon_stop
}

# counter_resource NAME TAG [INTERVAL]: a resource served by the counting
# mock driver, which logs its open() and close() calls to $WORK/opens.log.
counter_resource() {
	printf '%s\n' \
		"external-resource.$1.amount: 1" \
		"external-resource.$1.driver: $BUILDDIR/tests/mock/mock_counter.so" \
		"external-resource.$1.param.log: $WORK/opens.log" \
		"external-resource.$1.param.tag: $2"
	[[ -z ${3:-} ]] || echo "external-resource.$1.refresh-interval: $3"
}

# wait_discoveries FILE N: poll (10 s at most) until the counter in FILE
# reaches N.
wait_discoveries() {
	poll_until 10 discoveries_reach "$1" "$2" || fail "$1 still says $(cat -- "$1") 10 s on, wanted at least $2"
}

discoveries_reach() {
	local v
	v=$(cat -- "$1") || fail "cannot read $1"
	((v >= $2))
}

# A driver instance lives as long as its resource's settings: refreshes
# call discover() on the handle opened at start-up (its count goes on), a
# reload opens only the resource whose params changed and closes the
# instance it replaces, one that changes only the refresh interval or
# nothing reopens nothing, a resource that goes is closed, and the rest
# at exit.
case_refresh_keeps_driver() {
	it_setup
	local log=$WORK/opens.log n
	[[ -f $BUILDDIR/tests/mock/mock_counter.so ]] || fail "mock_counter.so is missing (build tests/mock first)"
	{
		echo 'external-resources: a;b'
		counter_resource a a1 0.1
		counter_resource b b1
	} | install_config
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	wait_discoveries "$MNT/a/0/discoveries" 10
	assert_file "$MNT/b/0/discoveries" $'1\n'
	assert_eq $'open a a1\nopen b b1' "$(cat "$log")" "open/close calls after 10 refreshes"

	# b's params change: only b is opened again, the old b closed.
	n=$(cat "$MNT/a/0/discoveries")
	{
		echo 'external-resources: a;b'
		counter_resource a a1 0.1
		counter_resource b b2
	} | install_config
	reload_ok
	assert_eq $'open a a1\nopen b b1\nopen b b2\nclose b b1' "$(cat "$log")" "open/close calls after a reload that changed b"
	assert_file "$MNT/b/0/tag" $'b2\n'
	assert_file "$MNT/b/0/discoveries" $'1\n'
	wait_discoveries "$MNT/a/0/discoveries" $((n + 3))

	# Only a's refresh interval changes, then nothing: nothing reopens.
	{
		echo 'external-resources: a;b'
		counter_resource a a1 0.2
		counter_resource b b2
	} | install_config
	reload_ok
	reload_ok
	assert_file "$MNT/b/0/discoveries" $'3\n'

	# b goes: its instance is closed.
	{
		echo 'external-resources: a'
		counter_resource a a1 0.2
	} | install_config
	reload_ok
	assert_eq $'open a a1\nopen b b1\nopen b b2\nclose b b1\nclose b b2' "$(cat "$log")" "open/close calls after b went"
	daemon_stop
	assert_eq $'open a a1\nopen b b1\nopen b b2\nclose b b1\nclose b b2\nclose a a1' "$(cat "$log")" "open/close calls after exit"
}

# Readers hammer a file while 20 reloads alternate its value between two
# strings of different lengths: every read is exactly one of them.
case_concurrent_readers() {
	it_setup
	local short='short' long='a-considerably-longer-value-0123456789'
	local f=$MNT/dev/0/label i pids=() n total=0 out
	write_dev_config "$short"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$f" "$short"$'\n'

	# Each reader: open+read+close in a loop until told to stop; prints
	# "OK <reads>", or what went wrong and exits 1.
	reader() {
		local n=0 a
		while [[ ! -e $WORK/stop ]]; do
			a=()
			if ! mapfile a 2>/dev/null <"$f"; then
				echo "read $n failed: $( (: <"$f") 2>&1)"
				exit 1
			fi
			if [[ ${#a[@]} != 1 || (${a[0]} != "$short"$'\n' && ${a[0]} != "$long"$'\n') ]]; then
				echo "read $n got $(printf '%q ' "${a[@]}")"
				exit 1
			fi
			n=$((n + 1))
		done
		echo "OK $n"
	}
	for i in 0 1 2 3; do
		reader >"$WORK/reader.$i" 2>&1 &
		pids+=($!)
	done

	for i in $(seq 1 20); do
		if ((i % 2)); then
			write_dev_config "$long"
			reload_ok
			assert_file "$f" "$long"$'\n'
			assert_eq 39 "$(stat -c %s "$f")" "size after reload $i"
		else
			write_dev_config "$short"
			reload_ok
			assert_file "$f" "$short"$'\n'
			assert_eq 6 "$(stat -c %s "$f")" "size after reload $i"
		fi
	done
	: >"$WORK/stop"
	for i in 0 1 2 3; do
		wait "${pids[i]}" || fail "reader $i: $(cat "$WORK/reader.$i")"
		out=$(cat "$WORK/reader.$i")
		[[ $out =~ ^OK\ ([0-9]+)$ ]] || fail "reader $i: $out"
		n=${BASH_REMATCH[1]}
		((n > 0)) || fail "reader $i made no reads"
		total=$((total + n))
	done
	it_log "$total reads by 4 readers during 20 reloads"
	assert_eq 20 "$(status_field generation)" "generation after 20 reloads"
	daemon_stop
}

# A reader that has read part of a value when a reload changes it ends up
# with one whole value, old or new, never the old head spliced to the new
# tail: what cat does (read until a read returns 0) over a value that grows,
# made deterministic by stopping after 3 bytes.
case_straddle() {
	it_setup
	local short='short' long='a-considerably-longer-value-0123456789'
	local f=$MNT/dev/0/label from to head rest fd
	write_dev_config "$short"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	for from in "$short" "$long"; do
		if [[ $from == "$short" ]]; then to=$long; else to=$short; fi
		assert_file "$f" "$from"$'\n'
		exec {fd}<"$f"
		head=
		IFS= read -r -N 3 head <&"$fd" || fail "cannot read 3 bytes of $f"
		assert_eq "${from:0:3}" "$head" "the first 3 bytes of $f"
		write_dev_config "$to"
		reload_ok
		rest=
		IFS= read -r -d '' rest <&"$fd" || true
		exec {fd}<&-
		[[ $head$rest == "$from"$'\n' || $head$rest == "$to"$'\n' ]] ||
			fail "a read of $f across a reload from '$from' to '$to' got $(printf '%q' "$head$rest")"
		assert_file "$f" "$to"$'\n'
	done
	daemon_stop
}

# A held device whose coordination line went missing (truncated by hand, or
# by Flink's sed) is recorded again (by the guard at once, by a reload at
# the latest), and so is not handed to the next allocator; one that somebody
# else recorded meanwhile is a conflict that a reload refuses to paper over.
case_lost_line() {
	it_setup
	local coord=$WORK/gpu.coord st
	cat >"$WORK/extres.yaml" <<-EOF
	external-resources: gpu
	external-resource.gpu.amount: 1
	external-resource.gpu.driver: static
	external-resource.gpu.param.indexes: 0,1,2
	external-resource.gpu.coordination-file: $coord
	EOF
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st" "$(coord_lines "$coord")" "coordination file at start"
	# Under the lock, as every writer of the file: the guard may be
	# rewriting it at this very moment.
	flock "$coord" truncate -s 0 "$coord"
	reload_ok
	assert_eq "0 $DAEMON_PID$T$st" "$(coord_lines "$coord")" "coordination file after a reload over a lost line"
	assert_file "$MNT/gpu/0/index" $'0\n'
	# Now someone else (alive: this shell) records 0 in our place: a
	# conflict, which a reload must not quietly resolve by moving to 1.
	flock "$coord" sh -c 'printf "0 %s\n" "$2" >"$1"' sh "$coord" "$$"
	"$EXTRESCTL" reload "$MNT" >"$WORK/reload.out" 2>&1 && fail "a reload over a taken line succeeded"
	assert_contains "$(cat "$WORK/reload.out")" "resource 'gpu': device index 0 is held by PID $$" "extresctl reload over a taken line"
	assert_file "$MNT/gpu/0/index" $'0\n'
	assert_eq "0 $$" "$(coord_lines "$coord")" "coordination file after a reload over a taken line"
	sed -i "/reload failed/d; /conflict: resource 'gpu': device index 0 is held by PID $$ /d" "$DAEMON_ERR"
	daemon_stop
	assert_eq "0 $$" "$(coord_lines "$coord")" "coordination file after a clean exit"
}

it_main "$@"
