#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Errors that suggest the fix, as a new user meets them: a misspelt key
# names the key meant, an unknown driver lists the drivers found and where,
# an unknown resource in `extresctl run` lists the configured ones, and a
# permission error on a coordination file says which user and mode work.
# Each message is checked whole.
#
# usage: hints.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NOBODY=65534

# ctl_err ARGS...: extresctl's stderr (it must fail).
ctl_err() {
	local out
	if out=$("$EXTRESCTL" "$@" 2>&1 >/dev/null); then
		fail "extresctl $* succeeded"
	fi
	printf '%s\n' "$out"
}

# A one-resource config of static devices; extra lines appended.
hint_config() {
	{
		printf '%s\n' 'external-resources: gpu' \
			'external-resource.gpu.driver: static' \
			'external-resource.gpu.param.devices: [{index: "0"}, {index: "1"}]'
		printf '%s\n' "$@"
	} >"$WORK/extres.yaml"
}

case_unknown_key() {
	it_setup_nofuse
	hint_config 'external-resource.gpu.amout: 1'
	assert_eq "extresctl: error: $WORK/extres.yaml:4:1: unknown key 'external-resource.gpu.amout'; did you mean external-resource.gpu.amount? (resource 'gpu': external-resource.gpu.amount is not set)" \
		"$(ctl_err -c "$WORK/extres.yaml" check)" "a misspelt amount"
	hint_config 'external-resource.gpu.amount: 1' 'external-resource.gpu.coordination-fiel: /x' \
		'extres.mount-point: /x'
	local out
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>&1 >/dev/null) || fail "check: $out"
	assert_eq "extresctl: warning: $WORK/extres.yaml:5:1: unknown key 'external-resource.gpu.coordination-fiel' (ignored); did you mean external-resource.gpu.coordination-file?
extresctl: warning: $WORK/extres.yaml:6:1: unknown key 'extres.mount-point' (ignored); did you mean extres.mountpoint?" \
		"$out" "misspelt keys that are not required"
}

case_unknown_driver() {
	it_setup_nofuse
	hint_config 'external-resource.gpu.amount: 1'
	sed -i 's/driver: static/driver: statc/' "$WORK/extres.yaml"
	local found f out
	found=$(for f in "$BUILDDIR"/drivers/*.so; do
		f=${f##*/}
		echo "${f%.so}"
	done | sort | paste -sd, | sed 's/,/, /g')
	assert_contains "$found" static "drivers built"
	out=$(ctl_err -c "$WORK/extres.yaml" check)
	# The second place looked in is the install's: whatever it holds.
	assert_contains "$out" "extresctl: error: resource 'gpu': driver 'statc' not found; did you mean static? drivers found: $found in $BUILDDIR/drivers; " \
		"an unknown driver"
	sed -i 's/driver: statc/driver: nvidai/' "$WORK/extres.yaml"
	out=$(ctl_err -c "$WORK/extres.yaml" check)
	assert_contains "$out" "extresctl: error: resource 'gpu': driver 'nvidai' not found; drivers found: $found in $BUILDDIR/drivers; " \
		"a driver with none near"
}

case_unknown_resource() {
	it_setup_nofuse
	hint_config 'external-resource.gpu.amount: 1' \
		"external-resource.gpu.coordination-file: $WORK/gpu.coord"
	sed -i 's/^external-resources: gpu$/external-resources: gpu;nic/' "$WORK/extres.yaml"
	printf '%s\n' 'external-resource.nic.amount: 1' 'external-resource.nic.driver: static' \
		'external-resource.nic.param.devices: [{index: "0"}]' >>"$WORK/extres.yaml"
	assert_eq "extresctl: error: run: fpga: no such resource in $WORK/extres.yaml; configured: gpu, nic
Try 'extresctl run --help'." "$(ctl_err -c "$WORK/extres.yaml" run fpga=1 -- true)" "an unknown resource"
	assert_eq "extresctl: error: run: gpus: no such resource in $WORK/extres.yaml; did you mean gpu? configured: gpu, nic
Try 'extresctl run --help'." "$(ctl_err -c "$WORK/extres.yaml" run gpus=1 -- true)" "a misspelt resource"
}

# run as nobody: extresctl's stderr (it must fail).
nobody_err() {
	local out
	if out=$(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- \
		"$EXTRESCTL" "$@" 2>&1 >/dev/null); then
		fail "extresctl $* as nobody succeeded"
	fi
	printf '%s\n' "$out"
}

case_coord_permission() {
	it_setup_nofuse
	local coord=$WORK/gpu.coord who out
	[[ $(id -u) == 0 ]] || { echo "SKIP: $IT_CASE: needs root to act as another user"; exit 77; }
	chmod 0755 "$WORK"
	# nobody must reach extresctl and its drivers to get that far.
	out=$(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups -- "$EXTRESCTL" --version 2>&1) ||
		{ echo "SKIP: $IT_CASE: nobody cannot run $EXTRESCTL: $out"; exit 77; }
	hint_config 'external-resource.gpu.amount: 1' "external-resource.gpu.coordination-file: $coord"
	who=$(id -un 0)
	: >"$coord"
	chmod 0644 "$coord"
	assert_eq "extresctl: error: resource 'gpu': cannot open coordination file $coord: Permission denied: user nobody (uid $NOBODY) may not write it (owner $who, group $(id -gn 0), mode 0644); it works as root, or for members of group $(id -gn 0) with mode 0660 (chmod g+rw,o-rwx $coord)" \
		"$(nobody_err -c "$WORK/extres.yaml" run gpu=1 -- true)" "a file nobody may not write"
	rm "$coord"
	assert_eq "extresctl: error: resource 'gpu': cannot create coordination file $coord: Permission denied: user nobody (uid $NOBODY) may not create files in $WORK (owner $who, group $(id -gn 0), mode 0755); it works as root, or for members of group $(id -gn 0) with mode 0775 (chmod g+wx $WORK)" \
		"$(nobody_err -c "$WORK/extres.yaml" run gpu=1 -- true)" "a directory nobody may not write"
	# The trust rule's refusal, as root: the owner and mode it accepts.
	: >"$coord"
	chmod 0666 "$coord"
	assert_eq "extresctl: error: resource 'gpu': coordination file $coord could be modified by another user: it is world-writable (mode 0666); it is accepted owned by root, mode 0640 (chmod 0640 $coord)" \
		"$(ctl_err -c "$WORK/extres.yaml" run gpu=1 -- true)" "a world-writable file"
	chown $NOBODY "$coord"
	assert_eq "extresctl: error: resource 'gpu': coordination file $coord could be modified by another user: it is owned by uid $NOBODY (mode 0666); it is accepted owned by root, mode 0640 (chown root $coord; chmod 0640 $coord)" \
		"$(ctl_err -c "$WORK/extres.yaml" run gpu=1 -- true)" "a file of another user"
}

it_main "$@"
