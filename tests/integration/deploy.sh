# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Deployment: mount(8) and fstab through /sbin/mount.fuse3, and the systemd
# unit (systemd-analyze verify, its contents, its stale-mount command run
# for real).
#
# mount.fuse3 runs the program it names through /bin/sh with a fixed PATH
# (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin), so the
# `-t fuse.extresd` form only finds an installed extresd. Those cases run in
# a private mount namespace (unshare -m) in which a copy of /usr/local/sbin
# with an `extresd` link to the build tree is bind-mounted over the real
# one: nothing outside the namespace ever sees it, and the namespace, with
# all its mounts, goes away with its last process, even after a SIGKILL.
#
# usage: deploy.sh CASE   (run by meson with the harness environment)

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The unit as the build makes it from conf/systemd/extresd.service (sbindir,
# default config and mount point filled in).
UNIT=$BUILDDIR/conf/extresd.service

# The options the mount must have however it was made: extresd's tree holds
# values, never programs or devices, and takes no writes.
MOUNT_POLICY='ro nosuid nodev noexec'

# The daemon serving the mount at $1: the one extresd whose command line
# mentions the work dir.
daemon_of_work() {
	local pid found=
	for pid in $(pids_in_work); do
		[[ $(cat "/proc/$pid/comm" 2>/dev/null) == extresd ]] || continue
		[[ -z $found ]] || fail "two extresd processes in $WORK: $found and $pid"
		found=$pid
	done
	[[ -n $found ]] || fail "no extresd process serves $1"
	echo "$found"
}

# check_mount MOUNTPOINT CMD ARGS...: CMD mounts the standard config (with
# the coordination file $WORK/gpu.coord) at MOUNTPOINT; check the tree, the
# options, the recorded owner, then umount(8) it and require the daemon to
# exit having released its devices.
check_mount() {
	local mp=$1 pid start opts o _ utab
	shift
	: >"$RUN_ERR"
	# libmount keeps userspace mount options there: none may stay behind.
	utab=$(cat /run/mount/utab 2>/dev/null || true)
	"$@" >"$WORK/mount.out" 2>"$RUN_ERR" || fail "$* failed with status $?"
	is_our_mount "$mp" || fail "after $*: $mp is mounted as '$(mount_info "$mp")', not fuse.extresd"
	assert_eq "$STD_LISTING" "$(tree_listing "$mp")" "tree at $mp"
	assert_eq "$STD_CONTENTS" "$(tree_contents "$mp")" "contents at $mp"
	opts=$(awk -v mp="$mp" '$5 == mp { o = $6 } END { print o }' /proc/self/mountinfo)
	for o in $MOUNT_POLICY; do
		[[ ,$opts, == *,$o,* ]] || fail "$mp mounted by '$*' has the options '$opts': $o is missing"
	done
	pid=$(daemon_of_work "$mp")
	start=$(proc_starttime "$pid")
	assert_eq "0 $pid$T$start
1 $pid$T$start" "$(coord_lines "$WORK/gpu.coord")" "coordination file while mounted"

	umount "$mp" || fail "umount $mp failed"
	for _ in $(seq 200); do
		pid_alive "$pid" || break
		sleep 0.05
	done
	! pid_alive "$pid" || fail "extresd ($pid) still runs 10 s after umount $mp"
	! is_mounted "$mp" || fail "$mp still mounted after umount: $(mount_info "$mp")"
	assert_eq "$utab" "$(cat /run/mount/utab 2>/dev/null || true)" "/run/mount/utab after umount"
	# Released: only a clean exit removes the daemon's lines.
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after umount"
	# What the helper and extresd said before it went to the background.
	o=$(grep -i 'error\|warn' "$RUN_ERR" || true)
	[[ -z $o ]] || fail "unexpected message from '$*': $o"
}

# ---------------------------------------------------------------------------
# Private mount namespace

# in_namespace CASE: run the inner half of CASE (ns_CASE) in a private mount
# namespace, with this case's work dir. The outer half's EXIT trap kills a
# daemon left behind (its command line names the work dir), which ends the
# namespace.
in_namespace() {
	local st=0 before after
	before=$(ls -la /usr/local/sbin /usr/local/bin 2>&1)
	unshare --mount --propagation private -- \
		bash "${BASH_SOURCE[0]}" --in-namespace "$1" "$WORK" || st=$?
	[[ $st == 0 ]] || fail "the case failed in its mount namespace (status $st)"
	after=$(ls -la /usr/local/sbin /usr/local/bin 2>&1)
	assert_eq "$before" "$after" "/usr/local/sbin and /usr/local/bin outside the namespace"
	! is_mounted "$MNT" || fail "$MNT is mounted outside the namespace: $(mount_info "$MNT")"
}

ns_cleanup() {
	local rc=$? mp
	set +e
	trap - EXIT
	for mp in $(mounts_in_work); do
		umount -l "$mp" 2>/dev/null
	done
	exit "$rc"
}

# Make `extresd` in mount.fuse3's PATH the build tree's: a copy of the
# first directory of that PATH (links to what is there) plus the link, bound
# over it in this namespace only.
ns_put_extresd_in_path() {
	local dir=/usr/local/sbin f
	[[ -d $dir ]] || fail "$dir is missing: it is the first directory of mount.fuse3's PATH"
	mkdir "$WORK/sbin"
	for f in "$dir"/* "$dir"/.[!.]*; do
		[[ -e $f || -L $f ]] || continue
		ln -s "$f" "$WORK/sbin/${f##*/}"
	done
	ln -sfn "$EXTRESD" "$WORK/sbin/extresd"
	mount --bind "$WORK/sbin" "$dir" || fail "cannot bind $WORK/sbin over $dir"
	assert_eq "$(realpath "$EXTRESD")" \
		"$(realpath "$(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v extresd)")" \
		"extresd in mount.fuse3's PATH"
}

ns_main() {
	IT_CASE=$1
	WORK=$2
	MNT=$WORK/mnt
	RUN_ERR=$WORK/run.err
	DAEMON_ERR=
	trap ns_cleanup EXIT
	"ns_${1//-/_}"
}

# ---------------------------------------------------------------------------
# Cases

# mount -t fuse 'PROGRAM#CONFIG' MNT: mount.fuse3 runs PROGRAM CONFIG MNT
# -o rw,dev,suid (mount(8) adds rw, mount.fuse3 dev and suid). extresd takes
# the source as its config and still mounts ro,nosuid,nodev,noexec.
case_mount_named_program() {
	it_setup
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	check_mount "$MNT" mount -t fuse "$EXTRESD#$WORK/extres.yaml" "$MNT"

	# A start-up error: mount fails with extresd's reason, nothing mounted.
	printf 'external-resources: gpu\nexternal-resource.gpu.amount: 0\n' >"$WORK/bad.yaml"
	local st=0
	mount -t fuse "$EXTRESD#$WORK/bad.yaml" "$MNT" 2>"$RUN_ERR" || st=$?
	[[ $st != 0 ]] || fail "mount with a bad config succeeded"
	assert_eq "extresd: error: $WORK/bad.yaml:2:31: external-resource.gpu.amount is '0'; it must be at least 1" \
		"$(cat "$RUN_ERR")" "stderr of mount with a bad config"
	! is_mounted "$MNT" || fail "a mount was left at $MNT: $(mount_info "$MNT")"
}

# mount -t fuse.extresd CONFIG MNT: mount.fuse3 runs `extresd` from its
# PATH.
case_mount_fuse_type() {
	it_setup
	in_namespace mount-fuse-type
}

ns_mount_fuse_type() {
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	ns_put_extresd_in_path
	check_mount "$MNT" mount -t fuse.extresd "$WORK/extres.yaml" "$MNT"
}

# The fstab line README documents, with the paths of this case: `mount
# MOUNTPOINT` creates the missing mount point (X-mount.mkdir) and mounts.
case_fstab() {
	it_setup
	in_namespace fstab
}

ns_fstab() {
	local mp=$WORK/run/extres
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	ns_put_extresd_in_path
	printf '# <file system> <mount point> <type> <options> <dump> <pass>\n%s  %s  fuse.extresd  ro,nosuid,nodev,noexec,nofail,X-mount.mkdir  0  0\n' \
		"$WORK/extres.yaml" "$mp" >"$WORK/fstab"
	[[ ! -e $mp ]] || fail "$mp exists before mount"
	check_mount "$mp" mount -T "$WORK/fstab" "$mp"
}

# `meson install` into a staging directory puts the unit in systemd's unit
# directory (else <prefix>/lib/systemd/system) with the install's sbindir in ExecStart and
# ExecReload; systemd-analyze verify accepts it, with those paths pointed at
# the staged programs (verify checks that they exist) and its man pages
# found in the source tree, and says nothing else.
case_systemd_verify() {
	it_setup_nofuse
	local dest=$WORK/dest unit units want start reload out st=0 man=--man=yes
	if ! command -v systemd-analyze >/dev/null; then
		echo "SKIP: $IT_CASE: systemd-analyze is not installed"
		exit 77
	fi
	"${MESON:-meson}" install -C "$BUILDDIR" --no-rebuild --destdir "$dest" \
		>"$WORK/install.log" 2>&1 ||
		fail "meson install failed: $(tail -n 20 "$WORK/install.log")"
	units=$(cd "$dest" && find . -name extresd.service)
	# systemd's pkg-config names the directory where there is one
	# (Debian 12: /lib/systemd/system, whatever the prefix).
	want=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || true)
	want=.${want:-/*/lib/systemd/system}/extresd.service
	# shellcheck disable=SC2053 # $want may be a pattern
	[[ $units == $want && $units != *$'\n'* ]] ||
		fail "wanted one ${want#.}, found: '$units'"
	unit=$dest${units#.}
	! grep -n '@' "$unit" | grep -v 'modprobe@fuse' || fail "a placeholder is left in $unit"
	start=$(sed -n 's|^ExecStart=\(/[^ ]*/extresd\) -f .*|\1|p' "$unit")
	reload=$(sed -n 's|^ExecReload=\(/[^ ]*/extresctl\) reload /run/extres$|\1|p' "$unit")
	[[ -n $start && -x $dest$start ]] || fail "$unit: ExecStart names '$start', which the install does not provide"
	[[ -n $reload && -x $dest$reload ]] || fail "$unit: ExecReload names '$reload', which the install does not provide"

	sed -e "s|^ExecStart=$start |ExecStart=$dest$start |" \
		-e "s|^ExecReload=$reload |ExecReload=$dest$reload |" "$unit" >"$WORK/extresd.service"
	mkdir -p "$WORK/man/man5" "$WORK/man/man8"
	ln -s "$SRCDIR/man/extresd.8" "$WORK/man/man8/extresd.8"
	ln -s "$SRCDIR/man/extres.yaml.5" "$WORK/man/man5/extres.yaml.5"
	command -v man >/dev/null || man=--man=no
	out=$(cd "$WORK" && MANPATH=$WORK/man \
		systemd-analyze verify "$man" "$WORK/extresd.service" 2>&1) || st=$?
	[[ $st == 0 ]] || fail "systemd-analyze verify exited with status $st: $out"
	assert_eq "" "$out" "output of systemd-analyze verify"
}

# The unit's promises, line by line.
case_unit_contents() {
	it_setup_nofuse
	local key bad SBINDIR
	SBINDIR=$(sed -n 's|^ExecStart=\(/.*\)/extresd .*|\1|p' "$UNIT")
	[[ -n $SBINDIR ]] || fail "$UNIT: no ExecStart= with an absolute path"
	# One line each, so that a later line cannot undo it.
	for key in Type=notify NotifyAccess=main Restart=on-failure \
		"ExecStart=$SBINDIR/extresd -f -c /etc/extres/extres.yaml /run/extres" \
		"ExecReload=$SBINDIR/extresctl reload /run/extres" \
		WantedBy=multi-user.target; do
		grep -qxF -- "$key" "$UNIT" || fail "$UNIT has no line '$key'"
		assert_eq 1 "$(grep -c "^${key%%=*}=" "$UNIT")" "number of ${key%%=*}= lines in $UNIT"
	done
	# Both ends detach a dead mount of ours, and nothing else.
	for key in ExecStartPre ExecStopPost; do
		grep -q "^$key=-/bin/sh -c '.*fuse\.extresd.*stat -f /run/extres.*umount -l /run/extres" "$UNIT" ||
			fail "$UNIT: no $key line that detaches a dead fuse.extresd mount at /run/extres"
	done
	# The clearing comes before the mkdir (mkdir -p fails on a dead mount).
	assert_eq "ExecStartPre=-/bin/sh
ExecStartPre=/bin/mkdir" "$(grep -o '^ExecStartPre=-\?/bin/[a-z]*' "$UNIT")" "order of the ExecStartPre lines"
	# No option that makes systemd give the service a mount namespace of
	# its own (the mount would be invisible to the host).
	bad=$(grep -En '^[[:space:]]*(PrivateTmp|ProtectSystem|ProtectHome|PrivateDevices|PrivateMounts|PrivateUsers|PrivateNetwork|PrivateIPC|ReadOnlyPaths|ReadWritePaths|InaccessiblePaths|ExecPaths|NoExecPaths|TemporaryFileSystem|BindPaths|BindReadOnlyPaths|MountFlags|MountAPIVFS|RootDirectory|RootImage|DynamicUser|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ProtectClock|ProtectHostname|ProtectProc|ProcSubset|LogsDirectory|RuntimeDirectory|StateDirectory|CacheDirectory|ConfigurationDirectory|NetworkNamespacePath|IPCNamespacePath)=' "$UNIT" || true)
	[[ -z $bad ]] || fail "$UNIT sets an option that gives the service its own mount namespace: $bad"
}

# unit_script KEY MOUNTPOINT: the `sh -c` script of the unit's KEY line as
# systemd runs it ($$ is a literal $), for MOUNTPOINT instead of /run/extres.
unit_script() {
	local line
	line=$(grep "^$1=-/bin/sh -c '" "$UNIT") || fail "$UNIT: no $1=-/bin/sh -c line"
	line=${line#*-c \'}
	line=${line%\'}
	line=${line//\$\$/\$}
	printf '%s' "${line//\/run\/extres/$2}"
}

# The unit's stale-mount command, run for real: it detaches a dead extresd
# mount, and leaves a live one, another file system and an empty directory
# alone.
case_unit_stale_mount() {
	it_setup
	local key script
	write_std_config "$WORK/extres.yaml"
	for key in ExecStartPre ExecStopPost; do
		script=$(unit_script "$key" "$MNT")
		# Nothing mounted: nothing to do.
		sh -c "$script" 2>"$RUN_ERR" || fail "$key failed with nothing mounted: $(cat "$RUN_ERR")"
		! is_mounted "$MNT" || fail "$key mounted something"

		# A live extresd: left alone.
		daemon_start -c "$WORK/extres.yaml" "$MNT"
		sh -c "$script" 2>"$RUN_ERR" || fail "$key failed on a live mount: $(cat "$RUN_ERR")"
		is_our_mount "$MNT" || fail "$key detached a live extresd mount"
		assert_file "$MNT/gpu/1/index" $'1\n'

		# The same daemon killed: a dead mount, detached.
		kill -KILL "$DAEMON_PID"
		daemon_reap
		is_our_mount "$MNT" || fail "no dead mount left at $MNT after SIGKILL"
		! stat -f "$MNT" >/dev/null 2>&1 || fail "statfs of the dead mount succeeded"
		sh -c "$script" 2>"$RUN_ERR" || fail "$key failed on a dead mount: $(cat "$RUN_ERR")"
		! is_mounted "$MNT" || fail "$key left $(mount_info "$MNT") at $MNT"

		# Another file system: left alone.
		mount -t tmpfs extres-test "$MNT" || fail "cannot mount a tmpfs on $MNT"
		sh -c "$script" 2>"$RUN_ERR" || fail "$key failed on a tmpfs: $(cat "$RUN_ERR")"
		assert_eq "tmpfs extres-test" "$(mount_info "$MNT" | cut -d' ' -f1,2)" "$key on a tmpfs"
		umount "$MNT"
	done
}

if [[ ${1:-} == --in-namespace ]]; then
	ns_main "$2" "$3"
else
	it_main "$@"
fi
