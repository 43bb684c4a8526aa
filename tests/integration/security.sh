# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# The security rules: no script, driver module or NVML library that another
# user could modify is run or loaded; the mount is read-only, nosuid, nodev
# and noexec, readable by every user and writable by none; a driver's
# garbage is refused with the driver named.
#
# usage: security.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MOCK_DIR=$BUILDDIR/tests/mock
NOBODY=65534

# write_script_config PATH: an fpga resource (amount 2) found by the script
# at PATH.
write_script_config() {
	printf '%s\n' \
		'external-resources: fpga' \
		'external-resource.fpga.amount: 2' \
		'external-resource.fpga.driver: script' \
		"external-resource.fpga.param.discovery-script.path: $1" \
		>"$WORK/extres.yaml"
}

# make_script PATH MODE: a discovery script that finds devices 4 and 6.
make_script() {
	printf '#!/bin/sh\necho 4,6\n' >"$1"
	chmod "$2" "$1"
}

# write_module_config MODULE [PARAM=VALUE...]: a gpu resource (amount 1)
# served by the driver module at the absolute path MODULE.
write_module_config() {
	local module=$1 kv
	shift
	{
		printf '%s\n' \
			'external-resources: gpu' \
			'external-resource.gpu.amount: 1' \
			"external-resource.gpu.driver: $module"
		for kv in "$@"; do
			printf 'external-resource.gpu.param.%s: %s\n' "${kv%%=*}" "${kv#*=}"
		done
	} >"$WORK/extres.yaml"
}

# write_nvml_library_config MODE: a gpu resource (amount 1) served by the
# nvml driver with a copy of the fake NVML library, of mode MODE, given by
# path in $WORK/lib.
write_nvml_library_config() {
	mkdir -p "$WORK/lib"
	cp "$MOCK_DIR/libnvidia-ml.so.1" "$WORK/lib/libnvidia-ml.so.1"
	chmod "$1" "$WORK/lib/libnvidia-ml.so.1"
	printf '%s\n' \
		'external-resources: gpu' \
		'external-resource.gpu.amount: 1' \
		'external-resource.gpu.driver: nvml' \
		"external-resource.gpu.param.library: $WORK/lib/libnvidia-ml.so.1" \
		>"$WORK/extres.yaml"
}

# as_nobody CMD ARGS...: run a command as uid/gid 65534 with no groups.
as_nobody() {
	setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups -- "$@"
}

# assert_probe_nobody EXPECTED OP ARGS...: the probe, run as nobody.
assert_probe_nobody() {
	local want=$1 got
	shift
	got=$(as_nobody "$PROBE" "$@" 2>&1) || fail "probe $* as nobody failed: $got"
	[[ $got == "$want" ]] || fail "probe $* as nobody: wanted '$want', got '$got'"
}

# A world-writable script is refused, with its path; nothing is mounted.
case_script_writable() {
	it_setup
	mkdir "$WORK/bin"
	make_script "$WORK/bin/discover.sh" 0757
	write_script_config "$WORK/bin/discover.sh"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'fpga': driver 'script': discovery script $WORK/bin/discover.sh could be modified by another user: it is world-writable (mode 0757)"

	# Group-writable is refused as well.
	chmod 0775 "$WORK/bin/discover.sh"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "discovery script $WORK/bin/discover.sh could be modified by another user: it is group-writable (mode 0775)"
}

# A safe script in a directory anyone may write (no sticky bit) could be
# replaced: refused, naming the directory.
case_script_open_dir() {
	it_setup
	mkdir "$WORK/open"
	chmod 0777 "$WORK/open"
	make_script "$WORK/open/discover.sh" 0755
	write_script_config "$WORK/open/discover.sh"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "discovery script $WORK/open/discover.sh could be modified by another user: directory $WORK/open is world-writable without the sticky bit (mode 0777)"

	# A link to a safe script, from such a directory: the link could be
	# pointed elsewhere.
	mkdir "$WORK/bin"
	mv "$WORK/open/discover.sh" "$WORK/bin/discover.sh"
	ln -s ../bin/discover.sh "$WORK/open/link.sh"
	write_script_config "$WORK/open/link.sh"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "discovery script $WORK/open/link.sh could be modified by another user: directory $WORK/open is world-writable without the sticky bit (mode 0777)"
}

# In a /tmp-like directory (world-writable, sticky) a script of root's is
# safe: only its owner may rename or remove it.
case_script_sticky_dir() {
	it_setup
	mkdir "$WORK/tmp"
	chmod 1777 "$WORK/tmp"
	make_script "$WORK/tmp/discover.sh" 0755
	write_script_config "$WORK/tmp/discover.sh"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq $'0\n1' "$(ls -1 "$MNT/fpga")" "ls fpga"
	assert_file "$MNT/fpga/0/index" $'4\n'
	assert_file "$MNT/fpga/1/index" $'6\n'
	daemon_stop
}

# A group-writable copy of a good module is refused before it is loaded.
case_module_writable() {
	it_setup
	mkdir "$WORK/modules"
	cp "$MOCK_DIR/mock_good.so" "$WORK/modules/mock_good.so"
	chmod 0775 "$WORK/modules/mock_good.so"
	write_module_config "$WORK/modules/mock_good.so"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': driver module $WORK/modules/mock_good.so could be modified by another user: it is group-writable (mode 0775)"

	# The same file, made safe, loads and serves.
	chmod 0755 "$WORK/modules/mock_good.so"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_eq 0 "$(ls -1 "$MNT/gpu")" "ls gpu"
	assert_file "$MNT/gpu/0/index" $'0\n'
	daemon_stop

	# So does a safe module in a directory others may write.
	chmod 0777 "$WORK/modules"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': driver module $WORK/modules/mock_good.so could be modified by another user: directory $WORK/modules is world-writable without the sticky bit (mode 0777)"
}

# param.library given as a path is held to the same rule.
case_nvml_library_writable() {
	it_setup
	write_nvml_library_config 0757
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': driver 'nvml': NVML library $WORK/lib/libnvidia-ml.so.1 could be modified by another user: it is world-writable (mode 0757)"
}

# A config another user could modify names what root runs, and with
# which arguments: nothing it names is run or loaded, however trusted the
# file it names. The attack: a config of nobody's has root's own
# /usr/bin/timeout take the amount as its duration and run a shell.
case_config_other_user() {
	it_setup
	local attack proof=$WORK/proof msg out status
	attack="id -u > $proof; echo 0"
	printf '%s\n' \
		'external-resources: gpu' \
		'external-resource.gpu.amount: 1' \
		'external-resource.gpu.driver: script' \
		'external-resource.gpu.param.discovery-script.path: /usr/bin/timeout' \
		"external-resource.gpu.param.discovery-script.args: [/bin/sh, -c, \"$attack\"]" \
		>"$WORK/extres.yaml"
	chown "$NOBODY:$NOBODY" "$WORK/extres.yaml"
	msg="resource 'gpu': driver 'script': refusing discovery script /usr/bin/timeout, named by a config root does not trust: config file $WORK/extres.yaml could be modified by another user: it is owned by uid $NOBODY (mode 0644)"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "$msg"
	[[ ! -e $proof ]] || fail "the config's command ran as uid $(cat "$proof")"
	# Nor through the tool that runs drivers by hand.
	status=0
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" discover 2>&1) || status=$?
	assert_eq 1 "$status" "exit status of extresctl discover"
	assert_contains "$out" "$msg" "extresctl discover"
	status=0
	out=$("$EXTRESCTL" -c "$WORK/extres.yaml" check 2>&1) || status=$?
	assert_eq 1 "$status" "exit status of extresctl check"
	assert_contains "$out" "$msg" "extresctl check"
	assert_contains "$out" "$WORK/extres.yaml: config file $WORK/extres.yaml could be modified by another user: it is owned by uid $NOBODY (mode 0644): no script, module or library it names is run or loaded" "extresctl check"
	[[ ! -e $proof ]] || fail "the config's command ran as uid $(cat "$proof")"

	# Writable by others though root's: the same.
	chown 0:0 "$WORK/extres.yaml"
	chmod 0666 "$WORK/extres.yaml"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "named by a config root does not trust: config file $WORK/extres.yaml could be modified by another user: it is world-writable (mode 0666)"
	# Or in a directory another user owns.
	mkdir "$WORK/conf"
	cp "$WORK/extres.yaml" "$WORK/conf/extres.yaml"
	chmod 0644 "$WORK/conf/extres.yaml"
	chown "$NOBODY" "$WORK/conf"
	daemon_run_fail -f -c "$WORK/conf/extres.yaml" "$MNT"
	assert_startup_error "named by a config root does not trust: config file $WORK/conf/extres.yaml could be modified by another user: directory $WORK/conf is owned by uid $NOBODY"
	[[ ! -e $proof ]] || fail "the config's command ran as uid $(cat "$proof")"

	# The same config, root's: root runs what root chose.
	chmod 0644 "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$proof" $'0\n'
	daemon_stop
}

# Module paths and libraries a config names are refused the same way; a
# config that names nothing to run (the static driver) still serves.
case_config_other_user_load() {
	it_setup
	mkdir "$WORK/modules"
	cp "$MOCK_DIR/mock_good.so" "$WORK/modules/mock_good.so"
	chmod 0755 "$WORK/modules/mock_good.so"
	write_module_config "$WORK/modules/mock_good.so"
	chown "$NOBODY" "$WORK/extres.yaml"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': refusing driver module $WORK/modules/mock_good.so, named by a config root does not trust: config file $WORK/extres.yaml could be modified by another user: it is owned by uid $NOBODY (mode 0644)"

	write_nvml_library_config 0755
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': driver 'nvml': refusing NVML library $WORK/lib/libnvidia-ml.so.1, named by a config root does not trust: config file $WORK/extres.yaml could be modified by another user: it is owned by uid $NOBODY (mode 0644)"

	write_std_config "$WORK/extres.yaml"
	chown "$NOBODY" "$WORK/extres.yaml"
	grep -q 'driver: static' "$WORK/extres.yaml" || fail "the standard config is not static"
	grep -q 'driver: script\|driver: /' "$WORK/extres.yaml" && fail "the standard config runs something"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	daemon_stop
}

# A config that turns untrusted under a running daemon: the reload that
# would run what it names fails, and the daemon keeps serving.
case_config_other_user_reload() {
	it_setup
	mkdir "$WORK/bin"
	make_script "$WORK/bin/discover.sh" 0755
	write_script_config "$WORK/bin/discover.sh"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	assert_file "$MNT/fpga/0/index" $'4\n'
	chown "$NOBODY" "$WORK/extres.yaml"
	local out
	out=$("$EXTRESCTL" reload "$MNT" 2>&1) && fail "a reload from nobody's config succeeded: $out"
	assert_contains "$out" "refusing discovery script $WORK/bin/discover.sh, named by a config root does not trust" "extresctl reload"
	assert_file "$MNT/fpga/0/index" $'4\n'
	sed -i '/reload failed/d; /refusing discovery script/d' "$DAEMON_ERR"
	daemon_stop
}

# Another user reads every file of the mount, and can change nothing.
case_other_user() {
	it_setup
	command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
	[[ $(id -u) == 0 ]] || fail "this case needs root (allow_other, setpriv)"
	# nobody must be able to reach the mount point and the probe.
	chmod 0755 "$WORK"
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"

	# Everything root sees, hidden files included, and nothing less.
	local listing contents
	listing=$(tree_listing "$MNT")
	contents=$(tree_contents "$MNT")
	assert_eq "$STD_CONTENTS" "$(grep '^\./[^.]' <<<"$contents")" "the tree as root reads it"
	assert_eq "$listing" "$(as_nobody bash -c "$(declare -f tree_listing); tree_listing '$MNT'")" \
		"the tree as nobody sees it"
	assert_eq "$contents" "$(as_nobody bash -c "$(declare -f tree_contents); tree_contents '$MNT'")" \
		"every file, read by nobody"
	assert_probe_nobody "reg 0444 2" stat "$MNT/gpu/0/index"
	local st
	st=$(as_nobody "$PROBE" stat "$MNT/gpu")
	[[ $st == "dir 0555 "* ]] || fail "stat $MNT/gpu as nobody: $st"

	local f=$MNT/gpu/0/index
	assert_probe_nobody EROFS write "$f"
	assert_probe_nobody EROFS open-wr "$f"
	assert_probe_nobody EROFS truncate "$f"
	assert_probe_nobody EROFS create "$MNT/gpu/0/serial"
	assert_probe_nobody EROFS create "$MNT/fpga"
	assert_probe_nobody EROFS unlink "$f"
	assert_probe_nobody EROFS mkdir "$MNT/gpu/2"
	assert_probe_nobody EROFS rmdir "$MNT/gpu/1"
	assert_probe_nobody EROFS rename "$f" "$MNT/gpu/0/index2"
	assert_probe_nobody EROFS chmod "$f"
	assert_probe_nobody EROFS symlink index "$MNT/gpu/0/link"
	assert_eq "$contents" "$(tree_contents "$MNT")" "contents after nobody's attempts"
	daemon_stop
}

# The options in /proc/self/mountinfo: per mount (ro, nosuid, nodev,
# noexec) and per super block (allow_other, default_permissions, as root).
case_mount_options() {
	it_setup
	write_std_config "$WORK/extres.yaml"
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	local line mnt_opts super_opts o
	line=$(awk -v mp="$MNT" '$5 == mp' /proc/self/mountinfo | tail -n 1)
	[[ -n $line ]] || fail "no line for $MNT in /proc/self/mountinfo"
	mnt_opts=$(awk '{ print $6 }' <<<"$line")
	super_opts=$(awk '{ for (i = 7; $i != "-"; i++); print $(i + 3) }' <<<"$line")
	for o in ro nosuid nodev noexec; do
		[[ ,$mnt_opts, == *,$o,* ]] || fail "$MNT: per-mount options '$mnt_opts' lack $o"
	done
	for o in default_permissions allow_other; do
		[[ ,$super_opts, == *,$o,* ]] || fail "$MNT: super block options '$super_opts' lack $o"
	done
	daemon_stop
}

# expect_garbage MODE MESSAGE: mock_bad_props in MODE is refused with
# MESSAGE, which names the resource and the driver.
expect_garbage() {
	write_module_config "$MOCK_DIR/mock_bad_props.so" "mode=$1"
	daemon_run_fail -f -c "$WORK/extres.yaml" "$MNT"
	assert_startup_error "resource 'gpu': driver 'mock_bad_props': $2"
}

case_garbage_slash() {
	it_setup
	expect_garbage slash "property name 'a/b' contains '/'"
}

case_garbage_many() {
	it_setup
	expect_garbage many "more than 4096 infos (the limit)"
}

case_garbage_other() {
	it_setup
	expect_garbage dot "property name '.x' starts with '.'"
	expect_garbage dup "property 'index' given twice in info 0"
	expect_garbage empty "property 'index' has an empty value (it names the device)"
	expect_garbage newline "property 'name' has a value with a newline"
	expect_garbage ignore-sink-error "property name 'a/b' contains '/'"
}

# run_nobody_fail VAR=VALUE...: run `extresd -f` as nobody with the
# environment changed so, expecting it to fail; as daemon_run_fail.
run_nobody_fail() {
	: >"$RUN_ERR"
	RUN_STATUS=0
	as_nobody timeout 10 env -u XDG_RUNTIME_DIR "$@" "$EXTRESD" -f -c "$WORK/extres.yaml" "$MNT" \
		>"$WORK/run.out" 2>"$RUN_ERR" </dev/null || RUN_STATUS=$?
	[[ $RUN_STATUS != 124 ]] || fail "extresd as nobody did not return within 10 s"
}

# Another user's extresd keeps its lock file in $XDG_RUNTIME_DIR/extresd
# (made 0700), and refuses to start without one it alone can write.
case_lock_dir_user() {
	it_setup
	command -v setpriv >/dev/null || fail "setpriv (util-linux) is missing"
	[[ $(id -u) == 0 ]] || fail "this case needs root (setpriv)"
	local xdg=$WORK/xdg
	chmod 0755 "$WORK"
	mkdir -m 0700 "$xdg"
	chown "$NOBODY:$NOBODY" "$xdg" "$MNT"
	write_std_config "$WORK/extres.yaml"
	chmod 0644 "$WORK/extres.yaml"

	run_nobody_fail
	assert_startup_error "XDG_RUNTIME_DIR is not set"
	run_nobody_fail XDG_RUNTIME_DIR=run/user
	assert_startup_error "XDG_RUNTIME_DIR=run/user is not an absolute path"
	chmod 0777 "$xdg"
	run_nobody_fail XDG_RUNTIME_DIR="$xdg"
	assert_startup_error "lock directory $xdg is writable by group or others (mode 0777); refusing it"
	chmod 0700 "$xdg"
	mkdir -m 0700 "$WORK/elsewhere"
	chown "$NOBODY:$NOBODY" "$WORK/elsewhere"
	ln -s "$WORK/elsewhere" "$xdg/extresd"
	run_nobody_fail XDG_RUNTIME_DIR="$xdg"
	assert_startup_error "lock directory $xdg/extresd is a symbolic link; refusing it"
	rm "$xdg/extresd"
	mkdir -m 0755 "$xdg/extresd"
	run_nobody_fail XDG_RUNTIME_DIR="$xdg"
	assert_startup_error "lock directory $xdg/extresd is owned by uid 0, not $NOBODY; refusing it"
	rmdir "$xdg/extresd"

	# Usable: made 0700, the lock taken there before the drivers ran
	# (this user cannot open /dev/fuse: the mount fails, after them), and
	# let go again.
	run_nobody_fail XDG_RUNTIME_DIR="$xdg"
	[[ $RUN_STATUS == 1 ]] || fail "extresd as nobody exited with status $RUN_STATUS, wanted 1"
	assert_eq "drwx------ $NOBODY" "$(stat -c '%A %u' "$xdg/extresd")" "mode and owner of $xdg/extresd"
	assert_eq "" "$(ls -A "$xdg/extresd")" "lock files left in $xdg/extresd"
}

it_main "$@"
