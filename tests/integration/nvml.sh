# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The nvml driver under a real mount, against the stand-in NVML library
# built in tests/mock (libnvidia-ml.so.1, driven by FAKE_NVML_* variables):
# the properties as files, start-up failures, and the default library found
# through the dynamic loader's search path.
#
# usage: nvml.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAKE_DIR=$BUILDDIR/tests/mock
FAKE_LIB=$FAKE_DIR/libnvidia-ml.so.1

# The keys of one GPU as `ls` shows them.
NVML_KEYS='compute_cap
device
driver_version
index
memory.total
minor_number
name
pci.bus_id
serial
uuid'

# Every property of the first two stand-in GPUs, as tree_contents prints them.
NVML_CONTENTS='./gpu/0/compute_cap=9.0
./gpu/0/device=/dev/nvidia0
./gpu/0/driver_version=550.54.15
./gpu/0/index=0
./gpu/0/memory.total=81559
./gpu/0/minor_number=0
./gpu/0/name=NVIDIA H100 80GB HBM3
./gpu/0/pci.bus_id=00000000:3B:00.0
./gpu/0/serial=1654922001000
./gpu/0/uuid=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0000
./gpu/1/compute_cap=9.0
./gpu/1/device=/dev/nvidia1
./gpu/1/driver_version=550.54.15
./gpu/1/index=1
./gpu/1/memory.total=81559
./gpu/1/minor_number=1
./gpu/1/name=NVIDIA H100 80GB HBM3
./gpu/1/pci.bus_id=00000000:3C:00.0
./gpu/1/serial=1654922001001
./gpu/1/uuid=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0001'

# The work dir, the stand-in's defaults (3 GPUs) and its init/shutdown log
# in $WORK/nvml.log.
nvml_setup() {
	it_setup
	[[ -f $FAKE_LIB ]] || fail "$FAKE_LIB is missing (build tests/mock first)"
	unset FAKE_NVML_FAIL_INIT FAKE_NVML_FAIL_COUNT FAKE_NVML_UNSUPPORTED
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
# initialised once and shut down again before the mount was served.
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
	assert_eq $'init\nshutdown' "$(nvml_calls)" "NVML calls while mounted"
	daemon_stop
	assert_eq $'init\nshutdown' "$(nvml_calls)" "NVML calls after exit"
}

# A field the board does not support is no file at all on that GPU.
case_unsupported() {
	nvml_setup
	export FAKE_NVML_UNSUPPORTED=serial:1
	write_nvml_config 3 "$FAKE_LIB"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "$NVML_KEYS" "$(ls -1 "$MNT/gpu/0")" "ls gpu/0"
	assert_eq "$(grep -vx serial <<<"$NVML_KEYS")" "$(ls -1 "$MNT/gpu/1")" "ls gpu/1"
	assert_eq "$NVML_KEYS" "$(ls -1 "$MNT/gpu/2")" "ls gpu/2"
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
	assert_eq "0 $DAEMON_PID$T$st
1 $DAEMON_PID$T$st" "$(sort "$WORK/gpu.coord")" "coordination file while running"
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
	assert_eq $'init\nshutdown' "$(nvml_calls)" "NVML calls while mounted"
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

it_main "$@"
