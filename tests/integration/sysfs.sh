# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The sysfs and amdgpu drivers under a real mount, on fake sysfs trees made
# in the case's work dir: devices in natural order, attributes that are
# missing on one device, a glob that finds nothing, AMD GPUs from a KFD
# topology, and a host without KFD.
#
# usage: sysfs.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# make_rdma NAME FN: an RDMA device as the kernel shows it, a link in
# class/infiniband to its directory under PCI function FN.
make_rdma() {
	local name=$1 fn=$2 pci ib
	pci=devices/pci0000:00/0000:00:0$fn.0
	ib=$pci/infiniband/$name
	mkdir -p "$WORK/sys/$ib/ports/1" "$WORK/sys/class/infiniband"
	ln -s "../../$ib" "$WORK/sys/class/infiniband/$name"
	ln -s ../.. "$WORK/sys/$ib/device"
	printf '%s\n' "$fn" >"$WORK/sys/$pci/numa_node"
	printf '0c42:a103:0016:5d2%s\n' "$fn" >"$WORK/sys/$ib/node_guid"
	printf '4: ACTIVE\n' >"$WORK/sys/$ib/ports/1/state"
}

# write_sysfs_config AMOUNT GLOB ATTRIBUTES: one resource "nic".
write_sysfs_config() {
	printf '%s\n' \
		'external-resources: nic' \
		"external-resource.nic.amount: $1" \
		'external-resource.nic.driver: sysfs' \
		"external-resource.nic.param.glob: $2" \
		"external-resource.nic.param.attributes: $3" >"$WORK/extres.yaml"
}

# Natural order (mlx5_2 before mlx5_10), the built-in properties, and
# attributes in a subdirectory and behind a link, with '/' made '.'.
case_rdma() {
	it_setup
	make_rdma mlx5_10 0
	make_rdma mlx5_2 1
	make_rdma mlx5_1 2
	write_sysfs_config 3 "$WORK/sys/class/infiniband/*" \
		"node_guid, ports/1/state, device/numa_node"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1\n2' "$(ls -1 "$MNT/nic")" "ls nic"
	assert_eq "device.numa_node
index
name
node_guid
path
ports.1.state" "$(ls -1 "$MNT/nic/0")" "ls nic/0"
	assert_file "$MNT/nic/0/name" $'mlx5_1\n'
	assert_file "$MNT/nic/1/name" $'mlx5_2\n'
	assert_file "$MNT/nic/2/name" $'mlx5_10\n'
	assert_file "$MNT/nic/2/index" $'2\n'
	assert_file "$MNT/nic/0/path" "$WORK/sys/class/infiniband/mlx5_1"$'\n'
	assert_file "$MNT/nic/0/node_guid" $'0c42:a103:0016:5d22\n'
	assert_file "$MNT/nic/1/ports.1.state" $'4: ACTIVE\n'
	assert_file "$MNT/nic/2/device.numa_node" $'0\n'
	assert_probe "reg 0444 2" stat "$MNT/nic/1/device.numa_node"
	daemon_stop
}

# An attribute one device lacks is absent there (ENOENT), with a warning
# naming the device and the attribute; the other device keeps it.
case_missing_attribute() {
	it_setup
	make_rdma mlx5_0 0
	make_rdma mlx5_1 1
	rm "$WORK/sys/class/infiniband/mlx5_1/node_guid"
	write_sysfs_config 2 "$WORK/sys/class/infiniband/mlx5_*" "node_guid"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/nic/0/node_guid" $'0c42:a103:0016:5d20\n'
	assert_eq $'index\nname\npath' "$(ls -1 "$MNT/nic/1")" "ls nic/1"
	[[ ! -e $MNT/nic/1/node_guid ]] || fail "nic/1/node_guid exists"
	assert_contains "$(cat "$DAEMON_ERR")" \
		"warning: resource 'nic': driver 'sysfs': device mlx5_1: attribute node_guid ($WORK/sys/class/infiniband/mlx5_1/node_guid): No such file or directory; property node_guid left out" \
		"daemon stderr"
	daemon_stop
}

# A glob that finds nothing is the core's "wanted 1, found 0" at start-up.
case_no_match() {
	it_setup
	mkdir -p "$WORK/sys/class/infiniband"
	write_sysfs_config 1 "$WORK/sys/class/infiniband/*" "node_guid"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error nic "wanted 1" "found 0"
}

# make_kfd_node N SIMD MINOR UNIQUE: a KFD topology node; SIMD 0 is a CPU.
make_kfd_node() {
	local dir=$WORK/sys/class/kfd/kfd/topology/nodes/$1
	mkdir -p "$dir"
	if [[ $2 == 0 ]]; then
		printf '%s\n' 'cpu_cores_count 96' 'simd_count 0' \
			'gfx_target_version 0' 'vendor_id 0' 'device_id 0' \
			'drm_render_minor 0' 'unique_id 0' >"$dir/properties"
	else
		printf '%s\n' 'cpu_cores_count 0' "simd_count $2" \
			'gfx_target_version 90402' 'vendor_id 4098' \
			'device_id 29856' "drm_render_minor $3" \
			"unique_id $4" 'num_xcc 8' >"$dir/properties"
	fi
}

# make_amd_pci MINOR BDF VRAM NUMA: the PCI function behind renderD<MINOR>.
make_amd_pci() {
	local dev=devices/pci0000:00/0000:00:01.1/$2
	mkdir -p "$WORK/sys/$dev/drm/renderD$1" "$WORK/sys/class/drm"
	ln -s "../../../$2" "$WORK/sys/$dev/drm/renderD$1/device"
	ln -s "../../$dev/drm/renderD$1" "$WORK/sys/class/drm/renderD$1"
	printf '%s\n' "$3" >"$WORK/sys/$dev/mem_info_vram_total"
	printf '%s\n' "$4" >"$WORK/sys/$dev/numa_node"
}

write_amdgpu_config() {
	printf '%s\n' \
		'external-resources: gpu' \
		"external-resource.gpu.amount: $1" \
		'external-resource.gpu.driver: amdgpu' \
		"external-resource.gpu.param.sysfs-root: $WORK/sys" >"$WORK/extres.yaml"
}

# Two MI300X GPUs behind a CPU node: indexes count GPUs only.
case_amdgpu() {
	it_setup
	make_kfd_node 0 0
	make_kfd_node 1 1216 128 3230446468412483091
	make_kfd_node 2 1216 136 13579246801357924680
	make_amd_pci 128 0000:c1:00.0 206141652992 0
	make_amd_pci 136 0000:41:00.0 206141652992 1
	write_amdgpu_config 2
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1' "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_eq "device
device_id
drm_render_minor
gfx_target_version
index
memory.total
numa_node
pci.bus_id
unique_id
vendor_id" "$(ls -1 "$MNT/gpu/0")" "ls gpu/0"
	assert_eq "./gpu/0/device=/dev/dri/renderD128
./gpu/0/device_id=0x74a0
./gpu/0/drm_render_minor=128
./gpu/0/gfx_target_version=90402
./gpu/0/index=0
./gpu/0/memory.total=196592
./gpu/0/numa_node=0
./gpu/0/pci.bus_id=0000:c1:00.0
./gpu/0/unique_id=0x2cd4d9f287a42613
./gpu/0/vendor_id=0x1002
./gpu/1/device=/dev/dri/renderD136
./gpu/1/device_id=0x74a0
./gpu/1/drm_render_minor=136
./gpu/1/gfx_target_version=90402
./gpu/1/index=1
./gpu/1/memory.total=196592
./gpu/1/numa_node=1
./gpu/1/pci.bus_id=0000:41:00.0
./gpu/1/unique_id=0xbc732d05184c6948
./gpu/1/vendor_id=0x1002" "$(tree_contents "$MNT")" "tree contents"
	daemon_stop
}

# No KFD topology: a warning that says where the driver looked, then the
# core's start-up error.
case_amdgpu_no_kfd() {
	it_setup
	mkdir -p "$WORK/sys/class/drm"
	write_amdgpu_config 1
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error gpu "wanted 1" "found 0"
	assert_contains "$(cat "$RUN_ERR")" \
		"warning: resource 'gpu': driver 'amdgpu': no KFD topology at $WORK/sys/class/kfd/kfd/topology/nodes (is the amdgpu kernel driver loaded?); no AMD GPUs found" \
		"extresd stderr"
}

it_main "$@"
