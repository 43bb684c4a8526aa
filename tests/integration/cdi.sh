# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# CDI: the .meta/cdi.json view byte for byte and after a reload, `extresctl
# cdi` writing one spec file per resource (and refusing a directory others
# could write), the specs validated against our JSON Schema of the CDI
# spec (tests/fixtures/cdi, with ajv from the npm registry), and podman
# giving a container the device of gpu/0 through the spec.
#
# usage: cdi.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SCHEMA=$SRCDIR/tests/fixtures/cdi/spec.schema.json
PODMAN_DIR=

# write_cdi_config FILE KIND [WITH_FPGA]: gpu, static, 2 of 3 devices whose
# `device` stands in for a GPU node; the device variable GPU_DEVICES holds
# indexes (static declares no form). fpga: one device, nothing but index.
write_cdi_config() {
	{
		if [[ ${3:-yes} == yes ]]; then
			echo 'external-resources: gpu;fpga'
		else
			echo 'external-resources: gpu'
		fi
		cat <<-EOF
		external-resource.gpu.amount: 2
		external-resource.gpu.driver: static
		external-resource.gpu.env-var: GPU_DEVICES
		external-resource.gpu.cdi.kind: $2
		external-resource.gpu.param.devices:
		  - index: "4"
		    device: /dev/null
		  - index: "6"
		    device: /dev/fuse
		  - index: "7"
		    device: /dev/zero
		external-resource.fpga.amount: 1
		external-resource.fpga.driver: static
		external-resource.fpga.param.indexes: "0"
		EOF
	} >"$1"
}

GPU_SPEC='{"cdiVersion": "0.5.0", "kind": "extres.dev/gpu", "devices": [{"name": "0", "containerEdits": {"env": ["EXTRES_GPU_INDEXES=4", "GPU_DEVICES=4"], "deviceNodes": [{"path": "/dev/null"}]}}, {"name": "4", "containerEdits": {"env": ["EXTRES_GPU_INDEXES=4", "GPU_DEVICES=4"], "deviceNodes": [{"path": "/dev/null"}]}}, {"name": "1", "containerEdits": {"env": ["EXTRES_GPU_INDEXES=6", "GPU_DEVICES=6"], "deviceNodes": [{"path": "/dev/fuse"}]}}, {"name": "6", "containerEdits": {"env": ["EXTRES_GPU_INDEXES=6", "GPU_DEVICES=6"], "deviceNodes": [{"path": "/dev/fuse"}]}}, {"name": "all", "containerEdits": {"env": ["EXTRES_GPU_INDEXES=4,6", "GPU_DEVICES=4,6"], "deviceNodes": [{"path": "/dev/null"}, {"path": "/dev/fuse"}]}}]}'
FPGA_SPEC='{"cdiVersion": "0.5.0", "kind": "extres.dev/fpga", "devices": [{"name": "0", "containerEdits": {"env": ["EXTRES_FPGA_INDEXES=0"]}}, {"name": "all", "containerEdits": {"env": ["EXTRES_FPGA_INDEXES=0"]}}]}'

cdi_start() {
	it_setup
	write_cdi_config "$WORK/extres.yaml" extres.dev/gpu
	daemon_start -c "$WORK/extres.yaml" "$MNT"
}

# .meta/cdi.json: a spec per resource, one per line, exactly.
case_view() {
	cdi_start
	assert_file "$MNT/.meta/cdi.json" "{
\"gpu\": $GPU_SPEC,
\"fpga\": $FPGA_SPEC
}
"
	assert_probe "reg 0444 $(($(file_bytes "$MNT/.meta/cdi.json" | wc -c)))" stat "$MNT/.meta/cdi.json"
	daemon_stop
}

# The view follows a reload: one resource fewer, another kind.
case_reload() {
	cdi_start
	write_cdi_config "$WORK/extres.yaml" example.com/accel no
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload failed: $out"
	assert_file "$MNT/.meta/cdi.json" "{
\"gpu\": ${GPU_SPEC/extres.dev\/gpu/example.com\/accel}
}
"
	daemon_stop
}

# not_in_file TEXT FILE: FILE is there and does not hold TEXT.
not_in_file() {
	[[ -e $2 ]] && ! grep -qF -- "$1" "$2"
}

# extres.cdi-spec-dir: extresd writes extres-<resource>.json itself when it
# has mounted, rewrites a file after a reload that drops a device (within a
# second: the wait allows no more) and removes one whose resource went, and
# removes its files when it stops; another file in the directory stays.
case_spec_dir() {
	local dir out
	it_setup
	dir=$WORK/cdi
	mkdir -m 0755 "$dir"
	echo '{}' >"$dir/other.json"
	write_cdi_config "$WORK/extres.yaml" extres.dev/gpu
	echo "extres.cdi-spec-dir: $dir" >>"$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$dir/extres-gpu.json" "$GPU_SPEC"$'\n'
	assert_file "$dir/extres-fpga.json" "$FPGA_SPEC"$'\n'
	assert_eq "644 644" "$(stat -c %a "$dir/extres-gpu.json" "$dir/extres-fpga.json" | xargs)" "modes"

	# gpu keeps device 4 alone, fpga goes.
	sed -i -e 's/^external-resources: gpu;fpga$/external-resources: gpu/' \
		-e 's/^external-resource.gpu.amount: 2$/external-resource.gpu.amount: 1/' "$WORK/extres.yaml"
	kill -HUP "$DAEMON_PID"
	wait_until 1 "extres-gpu.json to follow the reload" \
		not_in_file /dev/fuse "$dir/extres-gpu.json"
	wait_until 1 "extres-fpga.json to go" test ! -e "$dir/extres-fpga.json"
	out=$(cat "$MNT/.meta/cdi.json")
	assert_eq "{
\"gpu\": $(cat "$dir/extres-gpu.json")
}" "$out" "extres-gpu.json after the reload"
	daemon_stop
	assert_eq "other.json" "$(ls -A "$dir")" "files after the stop"
}

# extresctl cdi: extres-<resource>.json, 0644, each the view's spec; with
# --prune, a resource gone after a reload takes its file with it; another
# file in the directory stays.
case_ctl() {
	local out dir
	cdi_start
	dir=$WORK/cdi
	mkdir -m 0755 "$dir"
	echo '{}' >"$dir/other.json"
	out=$("$EXTRESCTL" cdi --output "$dir" "$MNT" 2>&1) || fail "extresctl cdi failed: $out"
	assert_eq "$dir/extres-gpu.json
$dir/extres-fpga.json" "$out" "extresctl cdi output"
	assert_file "$dir/extres-gpu.json" "$GPU_SPEC"$'\n'
	assert_file "$dir/extres-fpga.json" "$FPGA_SPEC"$'\n'
	assert_eq "644 644" "$(stat -c %a "$dir/extres-gpu.json" "$dir/extres-fpga.json" | xargs)" "modes"
	assert_eq $'extres-fpga.json\nextres-gpu.json\nother.json' "$(ls -A "$dir")" "files"

	write_cdi_config "$WORK/extres.yaml" extres.dev/gpu no
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) || fail "extresctl reload failed: $out"
	# Without --prune another mount's files are safe: nothing goes.
	out=$("$EXTRESCTL" cdi --output "$dir" "$MNT" 2>&1) || fail "extresctl cdi failed: $out"
	assert_eq "$dir/extres-gpu.json" "$out" "extresctl cdi after the reload"
	assert_eq $'extres-fpga.json\nextres-gpu.json\nother.json' "$(ls -A "$dir")" "files after the reload"
	out=$("$EXTRESCTL" cdi --prune --output "$dir" "$MNT" 2>&1) || fail "extresctl cdi --prune failed: $out"
	assert_eq "$dir/extres-gpu.json
removed $dir/extres-fpga.json" "$out" "extresctl cdi --prune after the reload"
	assert_eq $'extres-gpu.json\nother.json' "$(ls -A "$dir")" "files after the reload"
	daemon_stop
}

# A resource name that JSON escapes (a quote, a backslash, U+2028) comes
# back as it is in the file name.
case_ctl_names() {
	local out name=$'a"b\\c\xe2\x80\xa8d' # U+2028 in UTF-8
	it_setup
	cat >"$WORK/extres.yaml" <<-'EOF'
	external-resources: "a\"b\\c\u2028d"
	"external-resource.a\"b\\c\u2028d.amount": 1
	"external-resource.a\"b\\c\u2028d.driver": static
	"external-resource.a\"b\\c\u2028d.cdi.kind": x.io/y
	"external-resource.a\"b\\c\u2028d.param.devices":
	  - device: /dev/null
	EOF
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq "$name"$'\nself' "$(ls "$MNT")" "the resource and self"
	assert_contains "$(cat "$MNT/.meta/cdi.json")" '"a\"b\\c\u2028d": {' "the escaped name in the view"
	mkdir "$WORK/cdi"
	out=$("$EXTRESCTL" cdi --output "$WORK/cdi" "$MNT" 2>&1) || fail "extresctl cdi failed: $out"
	assert_eq "extres-$name.json" "$(ls "$WORK/cdi")" "the file"
	assert_file "$WORK/cdi/extres-$name.json" '{"cdiVersion": "0.5.0", "kind": "x.io/y", "devices": [{"name": "0", "containerEdits": {"deviceNodes": [{"path": "/dev/null"}]}}, {"name": "all", "containerEdits": {"deviceNodes": [{"path": "/dev/null"}]}}]}'$'\n'
	daemon_stop
}

# A directory that another user could write is refused, and nothing is
# written there; so is a missing parent. A mount that is no extresd's fails.
case_ctl_refuse() {
	local out dir
	cdi_start
	dir=$WORK/open
	mkdir "$dir"
	chmod 0777 "$dir"
	out=$("$EXTRESCTL" cdi --output "$dir" "$MNT" 2>&1) && fail "extresctl cdi took a world-writable directory: $out"
	assert_contains "$out" "CDI directory $dir could be modified by another user" "refusal"
	assert_eq "" "$(ls -A "$dir")" "files in the refused directory"
	out=$("$EXTRESCTL" cdi --output "$WORK/no/such" "$MNT" 2>&1) && fail "extresctl cdi took a missing parent: $out"
	assert_contains "$out" "$WORK/no/such: No such file or directory" "missing parent"
	out=$("$EXTRESCTL" cdi --output "$WORK/cdi" "$WORK" 2>&1) && fail "extresctl cdi took a directory that is no mount: $out"
	daemon_stop
}

# A kind that is no CDI kind is an error at its value.
case_bad_kind() {
	it_setup
	write_cdi_config "$WORK/extres.yaml" 'Extres.dev/gpu'
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>&1) && fail "check took a bad kind: $out"
	assert_contains "$out" "extres.yaml:5:33: external-resource.gpu.cdi.kind is 'Extres.dev/gpu', which has a vendor that is not a DNS subdomain" "bad kind"
}

# ajv (npm) in a cache under the build dir; 77 when it cannot be had.
ajv_install() {
	local dir=$BUILDDIR/tests/npm-ajv
	AJV=$dir/node_modules/.bin/ajv
	[[ -x $AJV ]] && return 0
	if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
		echo "SKIP: $IT_CASE: npm or node is missing"
		exit 77
	fi
	mkdir -p "$dir"
	if ! timeout 300 npm install --no-save --no-audit --no-fund --prefix "$dir" ajv-cli@5 >"$WORK/npm.log" 2>&1; then
		echo "SKIP: $IT_CASE: cannot install ajv-cli from the npm registry: $(tail -n 3 "$WORK/npm.log")"
		exit 77
	fi
}

# Each spec of the view validates against the schema; a spec with a bad
# kind, a device without a name or a misspelt field does not (so the check
# can fail).
case_schema() {
	local name line n=0
	cdi_start
	ajv_install
	while IFS= read -r line; do
		[[ $line == '"'* ]] || continue
		name=${line%%\":*}
		name=${name#\"}
		line=${line#*\": }
		printf '%s\n' "${line%,}" >"$WORK/$name.json"
		"$AJV" validate --spec=draft7 -s "$SCHEMA" -d "$WORK/$name.json" >"$WORK/ajv.out" 2>&1 ||
			fail "the $name spec does not validate: $(cat "$WORK/ajv.out")"
		n=$((n + 1))
	done <"$MNT/.meta/cdi.json"
	assert_eq 2 "$n" "specs validated"
	sed 's|"kind": "extres.dev/gpu"|"kind": "gpu"|' "$WORK/gpu.json" >"$WORK/bad-kind.json"
	sed 's|"name": "0", ||' "$WORK/gpu.json" >"$WORK/bad-name.json"
	sed 's|"deviceNodes"|"devicenodes"|' "$WORK/gpu.json" >"$WORK/bad-field.json"
	for name in bad-kind bad-name bad-field; do
		cmp -s "$WORK/gpu.json" "$WORK/$name.json" && fail "$name.json was not changed"
		"$AJV" validate --spec=draft7 -s "$SCHEMA" -d "$WORK/$name.json" >"$WORK/ajv.out" 2>&1 &&
			fail "$name.json validates: $(cat "$WORK/ajv.out")"
	done
	daemon_stop
}

# ---- podman ----

# podman ARGS... as root with runc and cgroupfs, its storage in
# $PODMAN_DIR, in a mount namespace of its own where /run (runc's state,
# and /run/cdi holding only the specs in $WORK/cdi) and /var/lib (podman's
# blob cache) are empty tmpfs: Debian 12's podman (4.3) has no
# --cdi-spec-dir and reads specs from /etc/cdi and /var/run/cdi, and
# nothing of the host's podman or CDI state is read or written.
pm() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	CONTAINERS_CONF=$PODMAN_DIR/containers.conf timeout 120 \
		unshare --mount --propagation private "$BASH" -c '
		mount -t tmpfs -o mode=0755 tmpfs /run &&
		mkdir -m 0755 /run/cdi &&
		{ [ ! -e "$1/extres-gpu.json" ] || cp "$1"/*.json /run/cdi/; } &&
		mount -t tmpfs -o mode=0755 tmpfs /var/lib &&
		shift && exec "$@"' pm "$WORK/cdi" \
		podman --root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/run" \
		--storage-driver vfs --runtime runc --cgroup-manager=cgroupfs "$@"
}

# The issue's check: a container started with the CDI device of gpu/0 (a
# static resource whose device is /dev/null) prints that device's variable
# and lists the node; gpu/1 by its key (index 6) gets /dev/fuse, which no
# container has by default, so the node check can fail.
# podman_prepare: skip (77) where podman cannot run here; else the work
# dir, the podman config and the image extres-it:cdi (a static busybox).
podman_prepare() {
	local bin
	for bin in podman runc unshare; do
		command -v "$bin" >/dev/null || { echo "SKIP: $IT_CASE: $bin is missing"; exit 77; }
	done
	if [[ ! -x /bin/busybox ]] || ldd /bin/busybox >/dev/null 2>&1; then
		echo "SKIP: $IT_CASE: no static /bin/busybox (busybox-static) to make an image of"
		exit 77
	fi
	[[ $(id -u) == 0 ]] || { echo "SKIP: $IT_CASE: podman with runc and cgroupfs needs root here"; exit 77; }
	it_setup
	# The namespace hides /run and /var/lib: the work dir must be elsewhere.
	[[ $WORK != /run/* && $WORK != /var/* ]] || { echo "SKIP: $IT_CASE: work dir $WORK is under /run or /var"; exit 77; }
	PODMAN_DIR=$WORK/podman
	mkdir -p "$PODMAN_DIR/img/bin" "$PODMAN_DIR/tmp" "$WORK/cdi"
	printf '[containers]\ndefault_ulimits = []\n[engine]\nevents_logger = "none"\ntmp_dir = "%s"\n' \
		"$PODMAN_DIR/tmp" >"$PODMAN_DIR/containers.conf"
	cp /bin/busybox "$PODMAN_DIR/img/bin/busybox"
	for bin in sh env ls cat; do
		ln -s busybox "$PODMAN_DIR/img/bin/$bin"
	done
	tar -C "$PODMAN_DIR/img" -cf "$PODMAN_DIR/img.tar" .
	pm import "$PODMAN_DIR/img.tar" extres-it:cdi >"$WORK/podman.out" 2>&1 ||
		fail "podman import failed: $(cat "$WORK/podman.out")"
}

case_podman() {
	local out t0 t1
	t0=$(date +%s%N)
	podman_prepare
	write_cdi_config "$WORK/extres.yaml" extres.dev/gpu no
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	out=$("$EXTRESCTL" cdi --output "$WORK/cdi" "$MNT" 2>&1) || fail "extresctl cdi failed: $out"
	out=$(pm run --rm --network none --ulimit host --device extres.dev/gpu=0 extres-it:cdi \
		sh -c 'env | grep -E "^(GPU_DEVICES|EXTRES_GPU_INDEXES)=" | sort; ls -l /dev/null' 2>&1) ||
		fail "podman run --device extres.dev/gpu=0 failed: $out"
	assert_eq "EXTRES_GPU_INDEXES=4
GPU_DEVICES=4" "$(grep -F "=" <<<"$out")" "the variables in the container of gpu/0"
	[[ $(grep /dev/null <<<"$out") =~ ^crw.*\ 1,\ +3\ .*/dev/null$ ]] ||
		fail "no char device 1,3 at /dev/null in the container: $out"
	# shellcheck disable=SC2016 # expanded in the container
	out=$(pm run --rm --network none --ulimit host --device extres.dev/gpu=6 extres-it:cdi \
		sh -c 'echo "GPU_DEVICES=$GPU_DEVICES"; ls -l /dev/fuse' 2>&1) ||
		fail "podman run --device extres.dev/gpu=6 failed: $out"
	assert_contains "$out" "GPU_DEVICES=6" "the variable in the container of gpu/1 (key 6)"
	[[ $(grep /dev/fuse <<<"$out") =~ ^crw.*\ 10,\ +229\ .*/dev/fuse$ ]] ||
		fail "no char device 10,229 at /dev/fuse in the container: $out"
	# Without the device the container has no /dev/fuse: the check above
	# sees what the spec did.
	out=$(pm run --rm --network none --ulimit host extres-it:cdi ls -l /dev/fuse 2>&1) &&
		fail "a container without the CDI device has /dev/fuse: $out"
	daemon_stop
	t1=$(date +%s%N)
	it_log "took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') s"
}

# write_vendor_spec FILE: a spec in the shape `nvidia-ctk cdi generate`
# writes (kind nvidia.com/gpu, devices by index and by UUID, common edits
# with the driver's libraries and a createContainer hook), standing in for
# a node's: a fake libcuda under $WORK/driver, $WORK/hook (which leaves
# $WORK/hook.ran), /dev/full for GPU-aaa's node and, for MIG-bbb, a caps
# node /dev/nvidia-caps/nvidia-cap12 made from $WORK/caps/nvidia-cap12.
write_vendor_spec() {
	mkdir -p "$WORK/driver" "$WORK/caps"
	echo 'fake libcuda' >"$WORK/driver/libcuda.so.550.54.15"
	mknod "$WORK/caps/nvidia-cap12" c 1 5
	printf '#!/bin/sh\ncat >/dev/null\necho ran >>"%s"\n' "$WORK/hook.ran" >"$WORK/hook"
	chmod 0755 "$WORK/hook"
	cat >"$1" <<-EOF
	---
	cdiVersion: 0.5.0
	containerEdits:
	  env:
	  - NVIDIA_VISIBLE_DEVICES=void
	  hooks:
	  - args:
	    - nvidia-cdi-hook
	    - create-symlinks
	    - --link
	    - libcuda.so.1::/usr/lib/x86_64-linux-gnu/libcuda.so
	    hookName: createContainer
	    path: $WORK/hook
	  mounts:
	  - containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
	    hostPath: $WORK/driver/libcuda.so.550.54.15
	    options:
	    - ro
	    - nosuid
	    - nodev
	    - rbind
	    - rprivate
	devices:
	- containerEdits:
	    deviceNodes:
	    - path: /dev/full
	  name: "0"
	- containerEdits:
	    deviceNodes:
	    - path: /dev/full
	  name: GPU-aaa
	- containerEdits:
	    deviceNodes:
	    - hostPath: $WORK/caps/nvidia-cap12
	      path: /dev/nvidia-caps/nvidia-cap12
	  name: MIG-bbb
	kind: nvidia.com/gpu
	EOF
}

# The spec composed with the vendor's (cdi.base-spec; the nvml driver
# names /etc/cdi/nvidia.yaml and the like itself), written by extresd into
# extres.cdi-spec-dir: the container of gpu/0 (GPU-aaa) sees the library
# at its path, its own node and the vendor's, the variables, and the hook
# ran; the container of the MIG instance sees its caps node.
case_podman_base() {
	local out t0 t1
	t0=$(date +%s%N)
	podman_prepare
	write_vendor_spec "$WORK/nvidia.yaml"
	cat >"$WORK/extres.yaml" <<-EOF
	external-resources: gpu
	extres.cdi-spec-dir: $WORK/cdi
	external-resource.gpu.amount: 2
	external-resource.gpu.driver: static
	external-resource.gpu.env-var: GPU_DEVICES
	external-resource.gpu.cdi.base-spec: $WORK/nvidia.yaml
	external-resource.gpu.param.devices:
	  - index: "0"
	    uuid: GPU-aaa
	    device: /dev/null
	  - index: "1"
	    uuid: MIG-bbb
	EOF
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	[[ -f $WORK/cdi/extres-gpu.json ]] || fail "extresd wrote no $WORK/cdi/extres-gpu.json"
	# shellcheck disable=SC2016 # expanded in the container
	out=$(pm run --rm --network none --ulimit host --device extres.dev/gpu=0 extres-it:cdi \
		sh -c 'env | grep -E "^(GPU_DEVICES|EXTRES_GPU_INDEXES|NVIDIA_VISIBLE_DEVICES)=" | sort
			cat /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15; ls -l /dev/null /dev/full' 2>&1) ||
		fail "podman run --device extres.dev/gpu=0 failed: $out"
	assert_eq "EXTRES_GPU_INDEXES=0
GPU_DEVICES=0
NVIDIA_VISIBLE_DEVICES=void" "$(grep -F "=" <<<"$out")" "the variables in the container of gpu/0"
	assert_contains "$out" "fake libcuda" "the vendor's library in the container"
	[[ $(grep /dev/full <<<"$out") =~ ^crw.*\ 1,\ +7\ .*/dev/full$ ]] ||
		fail "no char device 1,7 at /dev/full (the vendor's node of GPU-aaa) in the container: $out"
	[[ $(grep /dev/null <<<"$out") =~ ^crw.*\ 1,\ +3\ .*/dev/null$ ]] ||
		fail "no char device 1,3 at /dev/null in the container: $out"
	assert_eq ran "$(cat "$WORK/hook.ran" 2>/dev/null)" "the vendor's hook's marker"
	out=$(pm run --rm --network none --ulimit host --device extres.dev/gpu=1 extres-it:cdi \
		ls -l /dev/nvidia-caps/nvidia-cap12 2>&1) ||
		fail "podman run --device extres.dev/gpu=1 failed: $out"
	[[ $out =~ ^crw.*\ 1,\ +5\ .*/dev/nvidia-caps/nvidia-cap12$ ]] ||
		fail "no caps node 1,5 at /dev/nvidia-caps/nvidia-cap12 in the container of the MIG instance: $out"
	daemon_stop
	t1=$(date +%s%N)
	it_log "took $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }') s"
}

it_main "$@"
