# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The nvml driver under a real mount, against the stand-in NVML library
# built in tests/mock (libnvidia-ml.so.1, driven by FAKE_NVML_* variables):
# the properties as files, start-up failures, the default library found
# through the dynamic loader's search path; MIG instances, NVLink peers and
# topology on a 4-GPU node; health following an injected Xid.
#
# usage: nvml.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAKE_DIR=$BUILDDIR/tests/mock
FAKE_LIB=$FAKE_DIR/libnvidia-ml.so.1

# The keys of one GPU as `ls` shows them.
NVML_KEYS='architecture
brand
compute_cap
cuda_version
device
driver_version
health
health.reset-required
index
memory.total
minor_number
name
pci.bus_id
serial
uuid
vbios_version'

# Every property of the first two stand-in GPUs, as tree_contents prints them.
NVML_CONTENTS='./gpu/0/architecture=Hopper
./gpu/0/brand=NVIDIA
./gpu/0/compute_cap=9.0
./gpu/0/cuda_version=12.4
./gpu/0/device=/dev/nvidia0
./gpu/0/driver_version=550.54.15
./gpu/0/health=ok
./gpu/0/health.reset-required=no
./gpu/0/index=0
./gpu/0/memory.total=81559
./gpu/0/minor_number=0
./gpu/0/name=NVIDIA H100 80GB HBM3
./gpu/0/pci.bus_id=00000000:3B:00.0
./gpu/0/serial=1654922001000
./gpu/0/uuid=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0000
./gpu/0/vbios_version=96.00.74.00.01
./gpu/1/architecture=Hopper
./gpu/1/brand=NVIDIA
./gpu/1/compute_cap=9.0
./gpu/1/cuda_version=12.4
./gpu/1/device=/dev/nvidia1
./gpu/1/driver_version=550.54.15
./gpu/1/health=ok
./gpu/1/health.reset-required=no
./gpu/1/index=1
./gpu/1/memory.total=81559
./gpu/1/minor_number=1
./gpu/1/name=NVIDIA H100 80GB HBM3
./gpu/1/pci.bus_id=00000000:3C:00.0
./gpu/1/serial=1654922001001
./gpu/1/uuid=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0001
./gpu/1/vbios_version=96.00.74.00.01'

# The work dir, the stand-in's defaults (3 GPUs) and its init/shutdown log
# in $WORK/nvml.log.
nvml_setup() {
	it_setup
	[[ -f $FAKE_LIB ]] || fail "$FAKE_LIB is missing (build tests/mock first)"
	unset FAKE_NVML_FAIL_INIT FAKE_NVML_FAIL_COUNT FAKE_NVML_UNSUPPORTED \
		FAKE_NVML_MIG FAKE_NVML_NVLINK FAKE_NVML_EVENTS FAKE_NVML_ECC \
		FAKE_NVML_RETIRED FAKE_NVML_REMAP
	export FAKE_NVML_GPUS=3
	export FAKE_NVML_LOG=$WORK/nvml.log
}

# write_nvml_config AMOUNT [LIBRARY [COORD]]: a gpu resource served by the
# nvml driver; no LIBRARY (or "") leaves param.library unset.
write_nvml_config() {
	{
		printf '%s\n' \
			'external-resources: gpu' \
			"external-resource.gpu.amount: $1" \
			'external-resource.gpu.driver: nvml'
		[[ -z ${2:-} ]] || printf 'external-resource.gpu.param.library: %s\n' "$2"
		[[ -z ${3:-} ]] || printf 'external-resource.gpu.coordination-file: %s\n' "$3"
	} >"$WORK/extres.yaml"
}

# The NVML init/shutdown calls the stand-in logged, one per line.
nvml_calls() {
	[[ -e $WORK/nvml.log ]] || return 0
	cat -- "$WORK/nvml.log"
}

# Two of three GPUs mounted: exact listings, contents and sizes; NVML was
# initialised for discovery and shut down again before the mount was
# served, and the event thread's own init is shut down when it exits.
case_mount() {
	nvml_setup
	write_nvml_config 2 "$FAKE_LIB"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'gpu\nself' "$(ls -1 "$MNT")" "ls"
	assert_eq $'0\n1' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_eq "$NVML_KEYS" "$(ls -1 "$MNT/gpu/0")" "ls gpu/0"
	assert_eq "$NVML_KEYS" "$(ls -1 "$MNT/gpu/1")" "ls gpu/1"
	assert_file "$MNT/gpu/0/pci.bus_id" $'00000000:3B:00.0\n'
	assert_file "$MNT/gpu/1/pci.bus_id" $'00000000:3C:00.0\n'
	assert_file "$MNT/gpu/1/memory.total" $'81559\n'
	assert_file "$MNT/gpu/1/compute_cap" $'9.0\n'
	assert_file "$MNT/gpu/1/device" $'/dev/nvidia1\n'
	assert_file "$MNT/gpu/1/name" $'NVIDIA H100 80GB HBM3\n'
	assert_eq "$NVML_CONTENTS" "$(tree_contents "$MNT")" "every property file"
	assert_probe "reg 0444 17" stat "$MNT/gpu/0/pci.bus_id"
	assert_probe "reg 0444 13" stat "$MNT/gpu/1/device"
	assert_eq $'init\ninit\nshutdown' "$(nvml_calls)" "NVML calls while mounted"
	daemon_stop
	assert_eq $'init\ninit\nshutdown\nshutdown' "$(nvml_calls)" "NVML calls after exit"
}

# A field the board does not support is no file at all on that GPU.
case_unsupported() {
	nvml_setup
	export FAKE_NVML_UNSUPPORTED=serial:1,arch:2,brand:2,vbios:2,cudaver:0
	write_nvml_config 3 "$FAKE_LIB"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local keys
	keys=$(grep -vx cuda_version <<<"$NVML_KEYS")
	assert_eq "$keys" "$(ls -1 "$MNT/gpu/0")" "ls gpu/0"
	assert_eq "$(grep -vx serial <<<"$keys")" "$(ls -1 "$MNT/gpu/1")" "ls gpu/1"
	assert_eq "$(grep -vxE 'architecture|brand|vbios_version' <<<"$keys")" \
		"$(ls -1 "$MNT/gpu/2")" "ls gpu/2"
	assert_probe "ENOENT" stat "$MNT/gpu/1/serial"
	assert_file "$MNT/gpu/2/serial" $'1654922001002\n'
	daemon_stop
}

# The devices taken are recorded in the coordination file by NVML index.
case_coord() {
	nvml_setup
	write_nvml_config 2 "$FAKE_LIB" "$WORK/gpu.coord"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local st
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st${T}uuid=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0000
1 $DAEMON_PID$T$st${T}uuid=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0001" "$(sort "$WORK/gpu.coord")" "coordination file while running"
	daemon_stop
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after a clean exit"
}

# NVML failing to initialise: exit 1, the library and NVML's own words,
# nothing mounted, nothing left initialised.
case_init_fail() {
	nvml_setup
	export FAKE_NVML_FAIL_INIT=1
	write_nvml_config 1 "$FAKE_LIB"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu nvml "$FAKE_LIB: nvmlInit_v2 failed: Driver Not Loaded"
	assert_eq "" "$(nvml_calls)" "NVML calls"
}

# The same in the background: the parent reports it and exits 1.
case_init_fail_background() {
	nvml_setup
	export FAKE_NVML_FAIL_INIT=1
	write_nvml_config 1 "$FAKE_LIB"
	daemon_run_fail -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu "$FAKE_LIB: nvmlInit_v2 failed: Driver Not Loaded"
}

# A configured library that is not there: its path and the loader's reason.
case_missing_library() {
	nvml_setup
	write_nvml_config 1 "$WORK/lib/libnvidia-ml.so.1"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu \
		"cannot load the NVML library $WORK/lib/libnvidia-ml.so.1: $WORK/lib/libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
}

# Without param.library the driver asks the loader for libnvidia-ml.so.1,
# so LD_LIBRARY_PATH finds the stand-in.
case_default_library() {
	nvml_setup
	write_nvml_config 3
	LD_LIBRARY_PATH=$FAKE_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
		daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1\n2' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_file "$MNT/gpu/2/uuid" $'GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0002\n'
	assert_file "$MNT/gpu/2/pci.bus_id" $'00000000:3D:00.0\n'
	assert_eq $'init\ninit\nshutdown' "$(nvml_calls)" "NVML calls while mounted"
	daemon_stop
}

# And where the loader finds none, the error names the library it looked
# for. (Meaningless on a host with NVIDIA's driver installed: skipped.)
case_no_library() {
	nvml_setup
	local cache
	# Read whole: `grep -q` would quit early, and under pipefail the
	# writer's SIGPIPE would hide the match.
	cache=$(ldconfig -p 2>/dev/null || true)
	if grep -q 'libnvidia-ml\.so\.1 ' <<<"$cache"; then
		echo "SKIP: $IT_CASE: this host has a libnvidia-ml.so.1"
		exit 77
	fi
	write_nvml_config 1
	local lib_path=${LD_LIBRARY_PATH:-}
	lib_path=$(tr ':' '\n' <<<"$lib_path" | grep -vxF "$FAKE_DIR" | paste -sd: -)
	LD_LIBRARY_PATH=$lib_path daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu \
		"cannot load the NVML library libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared object file: No such file or directory (is the NVIDIA driver installed?)"
}

# The stand-in's uuid of a GPU (0..9) and of MIG device SLOT of GPU G.
gpu_uuid() { printf 'GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c000%s' "$1"; }
mig_uuid() { printf 'MIG-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c00%s%s' "$1" "$2"; }

# A fake sysfs with the PCI functions of stand-in GPUs 0..3 (bus 3b + i):
# GPUs 0 and 1 on NUMA node 0, 2 and 3 on node 1.
make_gpu_sysfs() {
	local i dir
	for i in 0 1 2 3; do
		dir=$WORK/sys/bus/pci/devices/0000:$(printf '%02x' $((0x3b + i))):00.0
		mkdir -p "$dir"
		printf '%s\n' $((i / 2)) >"$dir/numa_node"
		if ((i < 2)); then
			printf '0-7,16-23\n' >"$dir/local_cpulist"
		else
			printf '8-15,24-31\n' >"$dir/local_cpulist"
		fi
	done
}

# write_node_config AMOUNT [EXTRA-LINE...]: the 4-GPU node's gpu resource,
# over the fake sysfs.
write_node_config() {
	local amount=$1
	shift
	[[ -d $WORK/sys ]] || make_gpu_sysfs
	{
		printf '%s\n' \
			'external-resources: gpu' \
			"external-resource.gpu.amount: $amount" \
			'external-resource.gpu.driver: nvml' \
			"external-resource.gpu.param.library: $FAKE_LIB" \
			"external-resource.gpu.param.sysfs-root: $WORK/sys"
		[[ $# -eq 0 ]] || printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
}

# The issue's node: 4 GPUs, GPU 1 in MIG mode with 3 instances, NVLink
# pairs (0,1) and (2,3). The mount shows GPU 0, GPU 1's instances in its
# place, GPUs 2 and 3; nvlink.peers and the topology of each; .meta/env
# names the instances by their MIG uuids.
case_mig_nvlink() {
	nvml_setup
	export FAKE_NVML_GPUS=4 FAKE_NVML_MIG='1:1g.10gb,2g.20gb,3g.40gb'
	export FAKE_NVML_NVLINK='0-1,2-3'
	write_node_config 6
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1\n2\n3\n4\n5' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_file "$MNT/gpu/0/uuid" "$(gpu_uuid 0)"$'\n'
	assert_file "$MNT/gpu/0/nvlink.peers" $'1\n'
	assert_file "$MNT/gpu/4/nvlink.peers" $'3\n'
	assert_file "$MNT/gpu/5/nvlink.peers" $'2\n'
	assert_file "$MNT/gpu/0/numa_node" $'0\n'
	assert_file "$MNT/gpu/0/local_cpulist" $'0-7,16-23\n'
	assert_file "$MNT/gpu/5/numa_node" $'1\n'
	assert_file "$MNT/gpu/5/local_cpulist" $'8-15,24-31\n'
	local i slot
	for i in 1 2 3; do
		slot=$((i - 1))
		assert_file "$MNT/gpu/$i/uuid" "$(mig_uuid 1 "$slot")"$'\n'
		assert_file "$MNT/gpu/$i/index" "$(mig_uuid 1 "$slot")"$'\n'
		assert_file "$MNT/gpu/$i/parent.index" $'1\n'
		assert_file "$MNT/gpu/$i/parent.uuid" "$(gpu_uuid 1)"$'\n'
		assert_file "$MNT/gpu/$i/gi.id" "$i"$'\n'
		assert_file "$MNT/gpu/$i/ci.id" $'0\n'
		assert_file "$MNT/gpu/$i/numa_node" $'0\n'
		assert_file "$MNT/gpu/$i/health" $'ok\n'
		assert_probe ENOENT stat "$MNT/gpu/$i/nvlink.peers"
	done
	assert_file "$MNT/gpu/1/profile" $'1g.10gb\n'
	assert_file "$MNT/gpu/2/profile" $'2g.20gb\n'
	assert_file "$MNT/gpu/3/profile" $'3g.40gb\n'
	assert_file "$MNT/gpu/3/memory.total" $'40000\n'
	# Slices, engines and placement: instance k of G slices starts after
	# the earlier ones' (the stand-in packs them).
	local g start=0
	for i in 1 2 3; do
		g=$i
		assert_file "$MNT/gpu/$i/gi.slices" "$g"$'\n'
		assert_file "$MNT/gpu/$i/ci.slices" "$g"$'\n'
		assert_file "$MNT/gpu/$i/multiprocessors" "$((16 * g))"$'\n'
		assert_file "$MNT/gpu/$i/engines.copy" "$g"$'\n'
		assert_file "$MNT/gpu/$i/engines.decoder" "$g"$'\n'
		assert_file "$MNT/gpu/$i/engines.encoder" $'0\n'
		assert_file "$MNT/gpu/$i/engines.jpeg" "$g"$'\n'
		assert_file "$MNT/gpu/$i/engines.ofa" $'0\n'
		assert_file "$MNT/gpu/$i/gi.placement.start" "$start"$'\n'
		assert_file "$MNT/gpu/$i/gi.placement.size" "$g"$'\n'
		assert_file "$MNT/gpu/$i/architecture" $'Hopper\n'
		assert_file "$MNT/gpu/$i/brand" $'NVIDIA\n'
		assert_file "$MNT/gpu/$i/cuda_version" $'12.4\n'
		assert_file "$MNT/gpu/$i/vbios_version" $'96.00.74.00.01\n'
		start=$((start + g))
	done
	local want
	want="CUDA_VISIBLE_DEVICES='$(gpu_uuid 0),$(mig_uuid 1 0),$(mig_uuid 1 1),$(mig_uuid 1 2),$(gpu_uuid 2),$(gpu_uuid 3)'"
	grep -qxF "export $want" "$MNT/.meta/env" ||
		fail ".meta/env has no line 'export $want': $(cat "$MNT/.meta/env")"
	daemon_stop
}

# extres_device_info carries DCGM-exporter's labels with its values: a
# whole GPU's own, a MIG instance's its GPU's plus GPU_I_PROFILE and
# GPU_I_ID; Hostname from NODE_NAME. promtool, where installed, checks the
# text.
case_dcgm_labels() {
	nvml_setup
	export FAKE_NVML_GPUS=2 FAKE_NVML_MIG='1:1g.10gb,2g.20gb'
	export NODE_NAME=node-a
	write_node_config 3
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local name='NVIDIA H100 80GB HBM3' want got
	want="extres_device_info{resource=\"gpu\",info=\"0\",index=\"0\",uuid=\"$(gpu_uuid 0)\",pci_bus_id=\"00000000:3B:00.0\",name=\"$name\",gpu=\"0\",UUID=\"$(gpu_uuid 0)\",device=\"nvidia0\",modelName=\"$name\",Hostname=\"node-a\"} 1
extres_device_info{resource=\"gpu\",info=\"1\",index=\"$(mig_uuid 1 0)\",uuid=\"$(mig_uuid 1 0)\",pci_bus_id=\"00000000:3C:00.0\",name=\"$name\",gpu=\"1\",UUID=\"$(gpu_uuid 1)\",device=\"nvidia1\",modelName=\"$name\",Hostname=\"node-a\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"1\"} 1
extres_device_info{resource=\"gpu\",info=\"2\",index=\"$(mig_uuid 1 1)\",uuid=\"$(mig_uuid 1 1)\",pci_bus_id=\"00000000:3C:00.0\",name=\"$name\",gpu=\"1\",UUID=\"$(gpu_uuid 1)\",device=\"nvidia1\",modelName=\"$name\",Hostname=\"node-a\",GPU_I_PROFILE=\"2g.20gb\",GPU_I_ID=\"2\"} 1"
	got=$(grep '^extres_device_info{' "$MNT/.meta/metrics.prom")
	assert_eq "$want" "$got" "extres_device_info"
	if command -v promtool >/dev/null; then
		local out
		# DCGM-exporter's own names are camelCase (modelName), which
		# promtool's lint flags: that and nothing else is expected.
		out=$(promtool check metrics <"$MNT/.meta/metrics.prom" 2>&1) ||
			out=$(grep -vx "extres_device_info label names should be written in 'snake_case' not 'camelCase'" <<<"$out" || true)
		[[ -z $out ]] || fail "promtool check metrics: $out"
	else
		it_log "promtool is not installed (Debian: apt-get install prometheus): not checked with it"
	fi
	daemon_stop
}

# param.mig: both lists GPU 1 itself, marked, before its instances.
case_mig_both() {
	nvml_setup
	export FAKE_NVML_GPUS=2 FAKE_NVML_MIG='1:3g.40gb,3g.40gb'
	write_node_config 4 'external-resource.gpu.param.mig: both'
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1\n2\n3' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_file "$MNT/gpu/1/index" $'1\n'
	assert_file "$MNT/gpu/1/mig.mode" $'enabled\n'
	assert_file "$MNT/gpu/2/index" "$(mig_uuid 1 0)"$'\n'
	assert_file "$MNT/gpu/3/index" "$(mig_uuid 1 1)"$'\n'
	daemon_stop
}

# NVLink answered and no link is up: nvlink.peers is empty, not absent.
# (Needs the core that accepts empty values, issue 14.)
case_nvlink_none() {
	nvml_setup
	export FAKE_NVML_GPUS=3 FAKE_NVML_NVLINK='0-1'
	write_node_config 3
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/nvlink.peers" $'1\n'
	assert_file "$MNT/gpu/2/nvlink.peers" $'\n'
	daemon_stop
}

# wait_health FILE VALUE: poll FILE until it reads VALUE; 5 s only catch a
# hang. Sets WAITED to how long it took, in ms.
wait_health() {
	local start
	start=$(date +%s%3N)
	poll_until 5 content_is "$1" "$2" || fail "$1 reads '$(cat -- "$1")', not '$2', 5 s on"
	WAITED=$(($(date +%s%3N) - start))
}

# An Xid 79 on GPU 1 turns its health to xid-79 (an application's Xid 13
# on GPU 0 changes nothing), and after the 1 s hold-down it reads ok again;
# a reader polling the file wakes both times. No refresh-interval: the
# driver's event thread asks for the refresh (host->request_refresh()).
case_health_xid() {
	nvml_setup
	export FAKE_NVML_GPUS=3 FAKE_NVML_EVENTS=$WORK/events
	: >"$FAKE_NVML_EVENTS"
	write_node_config 3 'external-resource.gpu.param.health-recovery: 1'
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/1/health" $'ok\n'
	"$PROBE" poll "$MNT/gpu/1/health" 20000 >"$WORK/poll1.out" &
	local prober=$!
	wait_until 10 "the probe's first read" test -s "$WORK/poll1.out"
	printf '0 13\n1 79\n' >>"$FAKE_NVML_EVENTS"
	wait_health "$MNT/gpu/1/health" xid-79
	# The issue asks for 1 s; only a hang fails here (wait_health: 5 s).
	it_log "health went to xid-79 after $WAITED ms"
	wait "$prober" || fail "probe poll failed"
	assert_eq $'read ok\npoll POLLPRI POLLERR\nsame ok\nreopen xid-79' \
		"$(cat "$WORK/poll1.out")" "a poll() on health when it went to xid-79"
	assert_file "$MNT/gpu/0/health" $'ok\n'
	assert_file "$MNT/gpu/1/health.reset-required" $'no\n'
	"$PROBE" poll "$MNT/gpu/1/health" 20000 >"$WORK/poll2.out" &
	prober=$!
	wait_health "$MNT/gpu/1/health" ok
	it_log "health back to ok $WAITED ms later"
	wait "$prober" || fail "probe poll failed"
	assert_contains "$(cat "$WORK/poll2.out")" $'poll POLLPRI POLLERR\nsame xid-79\nreopen ok' \
		"a poll() on health when it went back to ok"
	daemon_stop
}

# A volatile uncorrected ECC error and pending retired pages: health says
# so, with reset-required, and those GPUs are not taken.
case_health_state() {
	nvml_setup
	export FAKE_NVML_GPUS=3 FAKE_NVML_ECC=0:1 FAKE_NVML_RETIRED=2
	write_node_config 1
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" discover 2>&1) || fail "discover: $out"
	assert_contains "$out" "index=0 " "discover"
	[[ $out == *"health=ecc-dbe health.reset-required=yes"* ]] || fail "GPU 0 in discover: $out"
	[[ $out == *"health=retired-pages-pending health.reset-required=yes"* ]] || fail "GPU 2 in discover: $out"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/0/index" $'1\n'
	assert_file "$MNT/gpu/0/health" $'ok\n'
	# Both sick ones held elsewhere or not: too few healthy for two.
	daemon_stop
	write_node_config 2
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': wanted 2, found 1; 2 not healthy (health)"
}

# GPU 1 falls off the bus between two discoveries and GPU 2 answers at
# index 1. The daemon's line for index 1 records GPU 1's uuid: it is a
# conflict in .meta/status, `extresctl status` and the metrics, and gpu/1
# still shows GPU 1, never the GPU now at that index.
case_renumber() {
	nvml_setup
	: >"$WORK/gone"
	export FAKE_NVML_GONE=$WORK/gone
	write_nvml_config 2 "$FAKE_LIB" "$WORK/gpu.coord"
	echo 'external-resource.gpu.refresh-interval: 0.1' >>"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local st u1=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0001 out status=0
	local u2=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0002
	st=$(proc_starttime "$DAEMON_PID")
	assert_eq "0 $DAEMON_PID$T$st${T}uuid=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0000
1 $DAEMON_PID$T$st${T}uuid=$u1" "$(sort "$WORK/gpu.coord")" "coordination file"
	assert_contains "$(cat "$MNT/.meta/status")" "conflicts 0" ".meta/status before"
	echo 1 >"$WORK/gone"
	wait_until 10 "the renumbering seen as a conflict" \
		grep -q '^conflicts 1$' "$MNT/.meta/status"
	out=$(cat "$MNT/.meta/status")
	assert_contains "$out" "conflict resource 'gpu': device index 1 recorded as uuid=$u1 by PID $DAEMON_PID (" ".meta/status"
	assert_contains "$out" ") now names uuid=$u2 in coordination file $WORK/gpu.coord" ".meta/status"
	assert_file "$MNT/gpu/1/uuid" "$u1"$'\n'
	assert_file "$MNT/gpu/1/index" $'1\n'
	assert_contains "$(cat "$MNT/.meta/metrics.prom")" "extres_coordination_conflicts 1" "metrics"
	out=$("$EXTRESCTL" status "$MNT" 2>&1) || status=$?
	assert_eq 1 "$status" "exit status of extresctl status"
	assert_contains "$out" "conflict: resource 'gpu': device index 1 recorded as uuid=$u1" "extresctl status"
	# The line keeps naming the GPU that was taken.
	assert_contains "$(cat "$WORK/gpu.coord")" "1 $DAEMON_PID$T$st${T}uuid=$u1" "coordination file after"
	# GPU 1 back: the conflict ends.
	: >"$WORK/gone"
	wait_until 10 "the conflict ending" \
		grep -q '^conflicts 0$' "$MNT/.meta/status"
	grep -q "conflict: resource 'gpu': device index 1" "$DAEMON_ERR" ||
		fail "the conflict was not logged"
	sed -i '/conflict: resource/d' "$DAEMON_ERR"
	daemon_stop
}

# No spec from `nvidia-ctk cdi generate` on the node: `extresctl check`
# and `extresctl cdi` say so and name the command that makes it; the
# spec still gives the variables. With one (cdi.base-spec standing in for
# /etc/cdi/nvidia.yaml), check names it.
case_cdi_base() {
	local f out hint='nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml'
	for f in /etc/cdi/nvidia.yaml /etc/cdi/nvidia.json /var/run/cdi/nvidia.yaml /var/run/cdi/nvidia.json; do
		[[ ! -e $f ]] || { echo "SKIP: $IT_CASE: this node has $f"; exit 77; }
	done
	nvml_setup
	write_nvml_config 1 "$FAKE_LIB"
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>&1) || fail "extresctl check failed: $out"
	assert_contains "$out" "extresctl: warning: gpu: no CDI spec from its devices' vendor in /etc/cdi/nvidia.yaml, /etc/cdi/nvidia.json, /var/run/cdi/nvidia.yaml, /var/run/cdi/nvidia.json: a container given its devices gets their nodes and variables, not the driver's libraries; make one with: $hint" "extresctl check"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_contains "$(cat "$MNT/.meta/status")" "cdi-base-missing gpu $hint" ".meta/status"
	out=$("$EXTRESCTL" cdi --output "$WORK/cdi" "$MNT" 2>&1) || fail "extresctl cdi failed: $out"
	assert_contains "$out" "extresctl: warning: resource 'gpu': no CDI spec from its devices' vendor on this node: a container given its devices gets their nodes and variables, not the driver's libraries; make one with: $hint, then extresctl reload" "extresctl cdi"
	assert_contains "$(cat "$WORK/cdi/extres-gpu.json")" '"CUDA_DEVICE_ORDER=PCI_BUS_ID"' "the spec"
	daemon_stop
	printf 'kind: nvidia.com/gpu\ndevices: []\n' >"$WORK/nvidia.yaml"
	echo "external-resource.gpu.cdi.base-spec: $WORK/nvidia.yaml" >>"$WORK/extres.yaml"
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>&1) || fail "extresctl check failed: $out"
	assert_contains "$out" "gpu: CDI spec to build on: $WORK/nvidia.yaml" "extresctl check with a spec"
	[[ $out != *warning* ]] || fail "extresctl check warned: $out"
}

# A MIG instance's caps nodes, from the kernel module's capability files
# (a fake /proc, param.proc-root, standing in for the host's, as
# nvidia-smi and the container toolkit read them): mig.gi.device and
# mig.ci.device name /dev/nvidia-caps/nvidia-cap<DeviceFileMinor>; a full
# GPU has neither; an instance without the files has neither.
case_mig_caps() {
	nvml_setup
	export FAKE_NVML_GPUS=2 FAKE_NVML_MIG='1:1g.10gb,2g.20gb,3g.40gb'
	local caps=$WORK/proc/driver/nvidia/capabilities/gpu1/mig gi
	for gi in 1 2; do
		mkdir -p "$caps/gi$gi/ci0"
		printf 'DeviceFileMinor: %d\nDeviceFileMode: 292\nDeviceFileModify: 1\n' $((gi * 9 + 3)) >"$caps/gi$gi/access"
		printf 'DeviceFileMinor: %d\nDeviceFileMode: 292\nDeviceFileModify: 1\n' $((gi * 9 + 4)) >"$caps/gi$gi/ci0/access"
	done
	write_node_config 4 "external-resource.gpu.param.proc-root: $WORK/proc"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/gpu/1/uuid" "$(mig_uuid 1 0)"$'\n'
	assert_file "$MNT/gpu/1/mig.gi.device" $'/dev/nvidia-caps/nvidia-cap12\n'
	assert_file "$MNT/gpu/1/mig.ci.device" $'/dev/nvidia-caps/nvidia-cap13\n'
	assert_file "$MNT/gpu/2/mig.gi.device" $'/dev/nvidia-caps/nvidia-cap21\n'
	assert_file "$MNT/gpu/2/mig.ci.device" $'/dev/nvidia-caps/nvidia-cap22\n'
	assert_probe ENOENT stat "$MNT/gpu/0/mig.gi.device"
	assert_probe ENOENT stat "$MNT/gpu/3/mig.gi.device"
	assert_probe ENOENT stat "$MNT/gpu/3/mig.ci.device"
	daemon_stop
}

# The same for a lease beside the daemon: its line for index 1 (GPU 1) is
# a conflict once GPU 1 is gone, and the lease's self/ never shows the GPU
# now at index 1, only the key its line records.
case_renumber_lease() {
	nvml_setup
	: >"$WORK/gone"
	export FAKE_NVML_GONE=$WORK/gone
	write_nvml_config 1 "$FAKE_LIB" "$WORK/gpu.coord"
	printf '%s\n' 'external-resource.gpu.refresh-interval: 0.1' \
		"extres.mountpoint: $MNT" >>"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local u1=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0001 u2=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0002 lease
	mkfifo "$WORK/go"
	# shellcheck disable=SC2016 # expanded by the lease's shell
	"$EXTRESCTL" -c "$WORK/extres.yaml" run gpu=1 -- sh -c '
		cat "$1/self/gpu/0/uuid" >"$2/before"
		read -r _ <"$2/go"
		ls "$1/self/gpu/0" >"$2/after"' sh "$MNT" "$WORK" 2>"$WORK/run.err" &
	lease=$!
	wait_until 10 "the lease's first look" test -s "$WORK/before"
	assert_file "$WORK/before" "$u1"$'\n'
	echo 1 >"$WORK/gone"
	wait_until 10 "the renumbering seen as a conflict" \
		grep -q "^conflict resource 'gpu': device index 1 recorded as uuid=$u1 by PID [0-9]* (.*) now names uuid=$u2 " "$MNT/.meta/status"
	# shellcheck disable=SC2016 # expanded by the inner shell
	timeout 10 sh -c 'echo go >"$1"' sh "$WORK/go" || fail "the lease's command is not waiting"
	wait "$lease" || fail "the lease's command failed: $(cat "$WORK/run.err")"
	assert_file "$WORK/after" $'index\n'
	assert_file "$MNT/gpu/0/uuid" "GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0000"$'\n'
	wait_until 10 "the conflict ending with the lease" \
		grep -q '^conflicts 0$' "$MNT/.meta/status"
	sed -i '/conflict: resource/d' "$DAEMON_ERR"
	daemon_stop
}

# The lease of a resource's holders, as .meta/holders shows it (the first).
holders_lease() {
	awk -F '\t' -v r="$1" '$1 == r && $8 != "-" { print $8; exit }' "$MNT/.meta/holders"
}

has_holders_lease() { [[ -n $(holders_lease "$1") ]]; }

# .meta/hpc-jobs/ in DCGM-exporter's --hpc-job-mapping-dir form: a file per
# held GPU, named by its `gpu` label (a MIG instance's: its parent GPU's),
# one job per line: the daemon's own GPU 0 as daemon-PID, and a lease on
# both instances of GPU 1 once, by its id, from its start to its end.
case_hpc_jobs() {
	nvml_setup
	export FAKE_NVML_GPUS=3 FAKE_NVML_MIG='1:1g.10gb,2g.20gb'
	write_node_config 1 "external-resource.gpu.coordination-file: $WORK/gpu.coord" \
		"extres.mountpoint: $MNT"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq 0 "$(ls "$MNT/.meta/hpc-jobs")" "ls .meta/hpc-jobs"
	assert_file "$MNT/.meta/hpc-jobs/0" "daemon-$DAEMON_PID"$'\n'
	assert_probe "dir 0555 0" stat "$MNT/.meta/hpc-jobs"
	mkfifo "$WORK/go"
	# shellcheck disable=SC2016 # expanded by the lease's shell
	"$EXTRESCTL" -c "$WORK/extres.yaml" run gpu=2 -- sh -c '
		cat "$1/self/gpu/0/parent.index" "$1/self/gpu/1/parent.index" >"$2/in"
		read -r _ <"$2/go"' sh "$MNT" "$WORK" 2>"$WORK/run.err" &
	local lease=$! id
	wait_until 10 "the lease's start" test -s "$WORK/in"
	assert_file "$WORK/in" $'1\n1\n'
	wait_until 10 "the lease in .meta/holders" has_holders_lease gpu
	id=$(holders_lease gpu)
	wait_until 10 "hpc-jobs/1 naming the lease" test -e "$MNT/.meta/hpc-jobs/1"
	assert_eq $'0\n1' "$(ls "$MNT/.meta/hpc-jobs")" "ls .meta/hpc-jobs with the lease"
	assert_file "$MNT/.meta/hpc-jobs/1" "$id"$'\n'
	assert_file "$MNT/.meta/hpc-jobs/0" "daemon-$DAEMON_PID"$'\n'
	# shellcheck disable=SC2016 # expanded by the inner shell
	timeout 10 sh -c 'echo go >"$1"' sh "$WORK/go" || fail "the lease's command is not waiting"
	wait "$lease" || fail "the lease's command failed: $(cat "$WORK/run.err")"
	wait_until 10 "hpc-jobs/1 gone with the lease" test ! -e "$MNT/.meta/hpc-jobs/1"
	assert_eq 0 "$(ls "$MNT/.meta/hpc-jobs")" "ls .meta/hpc-jobs after the lease"
	daemon_stop
}

# .meta/nfd: NFD's local-source feature file: the expiry line, ten minutes
# ahead, then GFD-style labels under extres.dev/ for each resource.
case_nfd() {
	nvml_setup
	export FAKE_NVML_GPUS=2
	write_nvml_config 2 "$FAKE_LIB"
	local before after first expiry
	before=$(date +%s)
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	after=$(date +%s)
	first=$(head -n 1 "$MNT/.meta/nfd")
	[[ $first =~ ^'# +expiry-time='([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)$ ]] ||
		fail "the first line of .meta/nfd is no expiry line: '$first'"
	expiry=$(date -u -d "${BASH_REMATCH[1]}" +%s)
	((expiry >= before + 600 && expiry <= after + 600)) ||
		fail "expiry $expiry is not 600 s after the start ($before..$after)"
	assert_eq 'extres.dev/gpu.count=2
extres.dev/gpu.product=NVIDIA-H100-80GB-HBM3
extres.dev/gpu.memory=81559
extres.dev/gpu.compute.major=9
extres.dev/gpu.compute.minor=0' "$(tail -n +2 "$MNT/.meta/nfd")" ".meta/nfd's labels"
	assert_probe "reg 0444 $(wc -c <"$MNT/.meta/nfd")" stat "$MNT/.meta/nfd"
	daemon_stop
}

it_main "$@"
