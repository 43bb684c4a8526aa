# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The hidden views under .meta: the shell env file, Spark's resources file
# and the whole-mount JSON document, byte for byte, for a static resource,
# an nvml resource (the stand-in NVML of tests/mock) and a resource with
# env-var set; sourcing the env file; .meta staying out of ls and globs; and
# the views following a reload that changes the devices.
#
# usage: views.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FAKE_LIB=$BUILDDIR/tests/mock/libnvidia-ml.so.1
UUID0=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0000
UUID1=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0001
UUID2=GPU-5b1c3f7a-92d4-4e1b-8c6a-3f0e2d1c0002

# A device index a shell would love to run: quotes, $(...), backticks, a
# backslash. Sourcing the env file must give it back verbatim and run
# nothing. (Set by views_setup: it names a file in the work dir.)
NASTY=

# The work dir, the stand-in NVML (3 GPUs) and the config:
#   fpga  static, 2 of 3, several properties, a value with a single quote
#   gpu   nvml, 2 of 3 (CUDA_VISIBLE_DEVICES by default)
#   nic   static, env-var NIC_DEVICES, an index full of shell syntax
views_setup() {
	it_setup
	[[ -f $FAKE_LIB ]] || fail "$FAKE_LIB is missing (build tests/mock first)"
	unset FAKE_NVML_FAIL_INIT FAKE_NVML_FAIL_COUNT FAKE_NVML_UNSUPPORTED FAKE_NVML_LOG
	export FAKE_NVML_GPUS=3
	NASTY="it's \$(touch $WORK/pwned) \`touch $WORK/pwned\` \"q\" \\ end"
	write_views_config 2 2 yes
}

# write_views_config FPGA_AMOUNT GPU_AMOUNT WITH_NIC
write_views_config() {
	local nasty_yaml=${NASTY//\'/\'\'}
	{
		if [[ $3 == yes ]]; then
			echo 'external-resources: fpga;gpu;nic'
		else
			echo 'external-resources: fpga;gpu'
		fi
		cat <<-EOF
		external-resource.fpga.amount: $1
		external-resource.fpga.driver: static
		external-resource.fpga.param.devices:
		  - index: "0"
		    name: Alveo U250
		    vendor: O'Reilly & Sons
		    serial: XFL-0001
		  - index: "3"
		    name: 'Alveo "U280" \\ rev2'
		    vendor: Xilinx
		    serial: XFL-0003
		  - index: "5"
		    name: Alveo U55C
		    vendor: Xilinx
		    serial: XFL-0005
		external-resource.gpu.amount: $2
		external-resource.gpu.driver: nvml
		external-resource.gpu.param.library: $FAKE_LIB
		EOF
		if [[ $3 == yes ]]; then
			cat <<-EOF
			external-resource.nic.amount: 2
			external-resource.nic.driver: static
			external-resource.nic.env-var: NIC_DEVICES
			external-resource.nic.param.devices:
			  - {index: "mlx5_0", link_layer: InfiniBand}
			  - {index: '$nasty_yaml', link_layer: Ethernet}
			EOF
		fi
	} >"$WORK/extres.yaml.new"
	mv -f "$WORK/extres.yaml.new" "$WORK/extres.yaml"
}

# The shell-quoted form of a value, as .meta/env writes it: in single
# quotes, each ' as '\''.
sq() {
	local q="'\\''"
	printf "'%s'" "${1//\'/$q}"
}

expected_env() {
	printf '%s\n' \
		"export EXTRES_FPGA_INDEXES='0,3'" \
		"export EXTRES_GPU_INDEXES='0,1'" \
		"export CUDA_VISIBLE_DEVICES='$UUID0,$UUID1'" \
		"export CUDA_DEVICE_ORDER='PCI_BUS_ID'" \
		"export EXTRES_NIC_INDEXES=$(sq "mlx5_0,$NASTY")" \
		"export NIC_DEVICES=$(sq "mlx5_0,$NASTY")"
}

# One NVML GPU of the stand-in, as extres.json writes it.
gpu_json() {
	printf '{"index": "%s", "uuid": "%s", "name": "NVIDIA H100 80GB HBM3", "serial": "165492200100%s", "pci.bus_id": "%s", "memory.total": "81559", "driver_version": "550.54.15", "compute_cap": "9.0", "minor_number": "%s", "device": "/dev/nvidia%s", "health": "ok", "health.reset-required": "no", "brand": "NVIDIA", "architecture": "Hopper", "vbios_version": "96.00.74.00.01", "cuda_version": "12.4"}' \
		"$1" "$2" "$1" "$3" "$1" "$1"
}

FPGA0_JSON='{"index": "0", "name": "Alveo U250", "vendor": "O'\''Reilly & Sons", "serial": "XFL-0001"}'
FPGA1_JSON='{"index": "3", "name": "Alveo \"U280\" \\ rev2", "vendor": "Xilinx", "serial": "XFL-0003"}'

expected_extres_json() {
	local nasty_json=${NASTY//\\/\\\\}
	nasty_json=${nasty_json//\"/\\\"}
	printf '%s\n' "{\"resources\": {\"fpga\": {\"driver\": \"static\", \"amount\": 2, \"infos\": [$FPGA0_JSON, $FPGA1_JSON]}, \"gpu\": {\"driver\": \"nvml\", \"amount\": 2, \"infos\": [$(gpu_json 0 "$UUID0" 00000000:3B:00.0), $(gpu_json 1 "$UUID1" 00000000:3C:00.0)]}, \"nic\": {\"driver\": \"static\", \"amount\": 2, \"infos\": [{\"index\": \"mlx5_0\", \"link_layer\": \"InfiniBand\"}, {\"index\": \"$nasty_json\", \"link_layer\": \"Ethernet\"}]}}, \"holders\": []}"
}

# .meta/env, exactly, with st_size matching.
case_env() {
	views_setup
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local want
	want=$(expected_env; printf x)
	want=${want%x}
	assert_file "$MNT/.meta/env" "$want"
	assert_eq "${#want}" "$(stat -c %s "$MNT/.meta/env")" "st_size of .meta/env"
	# The values themselves, independently of the quoting above.
	assert_file "$MNT/gpu/0/uuid" "$UUID0"$'\n'
	assert_file "$MNT/gpu/1/uuid" "$UUID1"$'\n'
	assert_file "$MNT/nic/1/index" "$NASTY"$'\n'
	daemon_stop
}

# `. .meta/env` in sh (dash) and in bash: printenv, in a child, gives
# exactly the values; nothing in them was run.
case_source() {
	views_setup
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local sh got want
	want="EXTRES_FPGA_INDEXES=0,3
EXTRES_GPU_INDEXES=0,1
CUDA_VISIBLE_DEVICES=$UUID0,$UUID1
CUDA_DEVICE_ORDER=PCI_BUS_ID
EXTRES_NIC_INDEXES=mlx5_0,$NASTY
NIC_DEVICES=mlx5_0,$NASTY"
	for sh in sh bash; do
		# shellcheck disable=SC2016 # expanded by the inner shell
		got=$(cd "$WORK" && env -i PATH="$PATH" "$sh" -c '
			. "$1" || exit 1
			for v in EXTRES_FPGA_INDEXES EXTRES_GPU_INDEXES \
				CUDA_VISIBLE_DEVICES CUDA_DEVICE_ORDER \
				EXTRES_NIC_INDEXES NIC_DEVICES; do
				printf "%s=%s\n" "$v" "$(printenv "$v")"
			done' "$sh" "$MNT/.meta/env" 2>&1) ||
			fail "$sh could not source $MNT/.meta/env: $got"
		assert_eq "$want" "$got" "variables after sourcing .meta/env in $sh"
		[[ ! -e $WORK/pwned ]] || fail "sourcing .meta/env in $sh ran a command from a value"
	done
	daemon_stop
}

# Spark's resources file for NAME ADDRESSES pairs (ADDRESSES: the inside of
# the JSON array): the resources for spark.executor, then for spark.driver,
# then for spark.worker, so that each of Spark's resourcesFile settings
# finds its own.
spark_json() {
	local c i j out=
	for c in executor driver worker; do
		for ((i = 1; i < $#; i += 2)); do
			j=$((i + 1))
			out+="${out:+, }{\"id\": {\"componentName\": \"spark.$c\", \"resourceName\": \"${!i}\"}, \"addresses\": [${!j}]}"
		done
	done
	printf '[%s]\n' "$out"
}

# .meta/resources.json: Spark's resources file, exactly.
case_spark_json() {
	views_setup
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local nasty_json want
	nasty_json=${NASTY//\\/\\\\}
	nasty_json=${nasty_json//\"/\\\"}
	want=$(spark_json fpga '"0", "3"' gpu '"0", "1"' nic "\"mlx5_0\", \"$nasty_json\""; printf x)
	want=${want%x}
	assert_file "$MNT/.meta/resources.json" "$want"
	assert_eq "${#want}" "$(stat -c %s "$MNT/.meta/resources.json")" "st_size of .meta/resources.json"
	daemon_stop
}

# .meta/extres.json: every resource, info and property, exactly; each value
# is what its file holds without the newline.
case_extres_json() {
	views_setup
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local want
	want=$(expected_extres_json; printf x)
	want=${want%x}
	assert_file "$MNT/.meta/extres.json" "$want"
	assert_eq "${#want}" "$(stat -c %s "$MNT/.meta/extres.json")" "st_size of .meta/extres.json"
	assert_file "$MNT/fpga/0/vendor" $'O\'Reilly & Sons\n'
	assert_file "$MNT/fpga/1/name" $'Alveo "U280" \\ rev2\n'
	daemon_stop
}

# .meta is hidden: not in ls or globs, in ls -A; its files are read-only.
case_hidden() {
	views_setup
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'fpga\ngpu\nnic\nself' "$(ls "$MNT")" "ls"
	assert_eq $'.leases\n.meta\nfpga\ngpu\nnic\nself' "$(ls -A "$MNT")" "ls -A"
	assert_eq "$MNT/fpga $MNT/gpu $MNT/nic $MNT/self" "$(echo "$MNT"/*)" "echo MNT/*"
	assert_eq 3 "$(find "$MNT" -mindepth 1 -maxdepth 1 -type d -name '[!.]*' | wc -l)" "find -type d -name '[!.]*' | wc -l"
	assert_eq $'cdi.json\nenv\nerror\nextres.json\nholders\nhpc-jobs\nmetrics.prom\nnfd\nresources.json\nstatus' "$(ls "$MNT/.meta")" "ls .meta"
	local f
	for f in env extres.json metrics.prom resources.json status; do
		assert_eq "444 $(wc -c <"$MNT/.meta/$f")" "$(stat -c '%a %s' "$MNT/.meta/$f")" "mode and size of .meta/$f"
	done
	assert_eq "400 0" "$(stat -c '%a %s' "$MNT/.meta/error")" "mode and size of .meta/error"
	assert_eq 555 "$(stat -c %a "$MNT/.meta")" "mode of .meta"
	assert_probe EROFS write "$MNT/.meta/env"
	assert_probe EROFS create "$MNT/.meta/other"
	assert_probe EROFS unlink "$MNT/.meta/status"
	assert_probe ENOENT stat "$MNT/.meta/nothing"
	daemon_stop
}

# A reload that changes the devices changes every view: fpga 2 -> 1, gpu
# 2 -> 3, nic gone.
case_reload() {
	views_setup
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local want out
	want=$(expected_env)
	assert_eq "$want" "$(cat "$MNT/.meta/env")" ".meta/env before the reload"
	assert_eq "$(expected_extres_json)" "$(cat "$MNT/.meta/extres.json")" ".meta/extres.json before the reload"
	cat "$MNT/.meta/resources.json" >/dev/null

	write_views_config 1 3 no
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload failed: $out"
	assert_eq "$MNT: reloaded, generation 1" "$out" "extresctl reload"
	want="export EXTRES_FPGA_INDEXES='0'
export EXTRES_GPU_INDEXES='0,1,2'
export CUDA_VISIBLE_DEVICES='$UUID0,$UUID1,$UUID2'
export CUDA_DEVICE_ORDER='PCI_BUS_ID'
"
	assert_file "$MNT/.meta/env" "$want"
	assert_eq "${#want}" "$(stat -c %s "$MNT/.meta/env")" "st_size of .meta/env after the reload"
	assert_file "$MNT/.meta/resources.json" "$(spark_json fpga '"0"' gpu '"0", "1", "2"')"$'\n'
	assert_file "$MNT/.meta/extres.json" "{\"resources\": {\"fpga\": {\"driver\": \"static\", \"amount\": 1, \"infos\": [$FPGA0_JSON]}, \"gpu\": {\"driver\": \"nvml\", \"amount\": 3, \"infos\": [$(gpu_json 0 "$UUID0" 00000000:3B:00.0), $(gpu_json 1 "$UUID1" 00000000:3C:00.0), $(gpu_json 2 "$UUID2" 00000000:3D:00.0)]}}, \"holders\": []}"$'\n'
	assert_eq $'fpga\ngpu\nself' "$(ls "$MNT")" "ls after the reload"
	assert_file "$MNT/gpu/2/pci.bus_id" $'00000000:3D:00.0\n'
	# shellcheck disable=SC2016 # expanded by the inner shell
	out=$(env -i PATH="$PATH" sh -c '. "$1"; printenv CUDA_VISIBLE_DEVICES; printenv NIC_DEVICES || echo unset' \
		sh "$MNT/.meta/env")
	assert_eq "$UUID0,$UUID1,$UUID2
unset" "$out" "variables after sourcing the reloaded .meta/env"
	daemon_stop
}

it_main "$@"
