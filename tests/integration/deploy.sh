# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# Deployment: mount(8) and fstab through /sbin/mount.fuse3, the systemd
# unit (systemd-analyze verify and security, its contents, its stale-mount
# command run for real, the unit itself run by a real systemd booted as
# PID 1 of a namespace of the case's), and the Kubernetes manifests (the OpenAPI schema, the
# DaemonSet's promises).
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
	local mp=$1 pid start opts o utab
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
	assert_eq "0 $pid$T$start$(std_uuid 0)
1 $pid$T$start$(std_uuid 1)" "$(coord_lines "$WORK/gpu.coord")" "coordination file while mounted"

	umount "$mp" || fail "umount $mp failed"
	wait_until 10 "extresd ($pid) gone after umount $mp" pid_gone "$pid"
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

# `meson install` into $WORK/dest.
stage_install() {
	"${MESON:-meson}" install -C "$BUILDDIR" --no-rebuild --destdir "$WORK/dest" \
		>"$WORK/install.log" 2>&1 ||
		fail "meson install failed: $(tail -n 20 "$WORK/install.log")"
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
	stage_install
	units=$(cd "$dest" && find . -name extresd.service)
	# systemd's pkg-config names the directory where there is one
	# (Debian 12: /lib/systemd/system, whatever the prefix).
	want=$(pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || true)
	want=.${want:-/*/lib/systemd/system}/extresd.service
	# shellcheck disable=SC2053 # $want may be a pattern
	[[ $units == $want && $units != *$'\n'* ]] ||
		fail "wanted one ${want#.}, found: '$units'"
	unit=$dest${units#.}
	! grep -nE '@[A-Za-z_]+@' "$unit" || fail "a placeholder is left in $unit"
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
		OOMScoreAdjust=-1000 WantedBy=multi-user.target; do
		grep -qxF -- "$key" "$UNIT" || fail "$UNIT has no line '$key'"
		assert_eq 1 "$(grep -c "^${key%%=*}=" "$UNIT")" "number of ${key%%=*}= lines in $UNIT"
	done
	# The stop detaches a dead mount of ours, and nothing else; the start
	# leaves it for extresd to replace in place (no gap for readers).
	grep -q "^ExecStopPost=-/bin/sh -c '.*fuse\.extresd.*stat -f /run/extres.*umount -l /run/extres" "$UNIT" ||
		fail "$UNIT: no ExecStopPost line that detaches a dead fuse.extresd mount at /run/extres"
	assert_eq "" "$(grep '^ExecStartPre=.*umount' "$UNIT" || true)" "ExecStartPre lines that detach"
	assert_eq "ExecStartPre=/bin/sh" "$(grep -o '^ExecStartPre=-\?/bin/[a-z]*' "$UNIT")" "the ExecStartPre lines"
	# No option that makes systemd give the service a mount namespace of
	# its own (the mount would be invisible to the host).
	bad=$(grep -En '^[[:space:]]*(PrivateTmp|ProtectSystem|ProtectHome|PrivateDevices|PrivateMounts|PrivateUsers|PrivateNetwork|PrivateIPC|ReadOnlyPaths|ReadWritePaths|InaccessiblePaths|ExecPaths|NoExecPaths|TemporaryFileSystem|BindPaths|BindReadOnlyPaths|MountFlags|MountAPIVFS|RootDirectory|RootImage|DynamicUser|ProtectKernelTunables|ProtectKernelModules|ProtectKernelLogs|ProtectControlGroups|ProtectClock|ProtectHostname|ProtectProc|ProcSubset|LogsDirectory|RuntimeDirectory|StateDirectory|CacheDirectory|ConfigurationDirectory|NetworkNamespacePath|IPCNamespacePath)=' "$UNIT" || true)
	[[ -z $bad ]] || fail "$UNIT sets an option that gives the service its own mount namespace: $bad"
}

# unit_script KEY MOUNTPOINT: the `sh -c` script of the unit's KEY line as
# systemd runs it ($$ is a literal $), for MOUNTPOINT instead of /run/extres.
unit_script() {
	local line
	line=$(grep "^$1=-\?/bin/sh -c '" "$UNIT") || fail "$UNIT: no $1=/bin/sh -c line"
	line=${line#*-c \'}
	line=${line%\'}
	line=${line//\$\$/\$}
	printf '%s' "${line//\/run\/extres/$2}"
}

# The unit's stale-mount command, run for real: it detaches a dead extresd
# mount, and leaves a live one, another file system and an empty directory
# alone; after a crash (Restart= follows) it leaves the dead mount for the
# next extresd to replace. The start's mkdir passes over a dead mount.
case_unit_stale_mount() {
	it_setup
	local script start
	write_std_config "$WORK/extres.yaml"
	script=$(unit_script ExecStopPost "$MNT")
	start=$(unit_script ExecStartPre "$MNT/sub")
	# Nothing mounted: nothing to do.
	sh -c "$script" 2>"$RUN_ERR" || fail "ExecStopPost failed with nothing mounted: $(cat "$RUN_ERR")"
	! is_mounted "$MNT" || fail "ExecStopPost mounted something"
	sh -c "$start" 2>"$RUN_ERR" || fail "ExecStartPre failed: $(cat "$RUN_ERR")"
	[[ -d $MNT/sub ]] || fail "ExecStartPre did not make $MNT/sub"
	rmdir "$MNT/sub"

	# A live extresd: left alone.
	daemon_start -c "$WORK/extres.yaml" "$MNT"
	sh -c "$script" 2>"$RUN_ERR" || fail "ExecStopPost failed on a live mount: $(cat "$RUN_ERR")"
	is_our_mount "$MNT" || fail "ExecStopPost detached a live extresd mount"
	assert_file "$MNT/gpu/1/index" $'1\n'

	# The same daemon killed: a dead mount, left for a restart, else
	# detached.
	kill -KILL "$DAEMON_PID"
	daemon_reap
	is_our_mount "$MNT" || fail "no dead mount left at $MNT after SIGKILL"
	! stat -f "$MNT" >/dev/null 2>&1 || fail "statfs of the dead mount succeeded"
	start=$(unit_script ExecStartPre "$MNT")
	sh -c "$start" 2>"$RUN_ERR" || fail "ExecStartPre failed on a dead mount: $(cat "$RUN_ERR")"
	SERVICE_RESULT=signal sh -c "$script" 2>"$RUN_ERR" || fail "ExecStopPost failed on a dead mount: $(cat "$RUN_ERR")"
	is_our_mount "$MNT" || fail "ExecStopPost after a crash detached the dead mount"
	SERVICE_RESULT=exit-code sh -c "$script" 2>"$RUN_ERR" || fail "ExecStopPost failed on a dead mount: $(cat "$RUN_ERR")"
	! is_mounted "$MNT" || fail "ExecStopPost left $(mount_info "$MNT") at $MNT"

	# Another file system: left alone.
	mount -t tmpfs extres-test "$MNT" || fail "cannot mount a tmpfs on $MNT"
	sh -c "$script" 2>"$RUN_ERR" || fail "ExecStopPost failed on a tmpfs: $(cat "$RUN_ERR")"
	assert_eq "tmpfs extres-test" "$(mount_info "$MNT" | cut -d' ' -f1,2)" "ExecStopPost on a tmpfs"
	umount "$MNT"
}

# ---------------------------------------------------------------------------
# The hardened unit

# `meson install` into $WORK/dest; print the installed unit's path.
staged_unit() {
	local units
	stage_install
	units=$(find "$WORK/dest" -name extresd.service)
	[[ -n $units && $units != *$'\n'* ]] || fail "wanted one installed extresd.service, found: '$units'"
	echo "$units"
}

# systemd-analyze's offline rating of the unit as `meson install` leaves
# it: an exposure of 5.0 at most ("OK"). Every option that earns it is
# one that keeps the mount visible to the host (unit-contents, systemd-unit).
case_unit_security() {
	it_setup_nofuse
	local unit out st=0 score
	if ! command -v systemd-analyze >/dev/null; then
		echo "SKIP: $IT_CASE: systemd-analyze is not installed"
		exit 77
	fi
	if ! systemd-analyze security --help 2>&1 | grep -q -- --offline; then
		echo "SKIP: $IT_CASE: this systemd-analyze has no security --offline (systemd < 250)"
		exit 77
	fi
	unit=$(staged_unit)
	out=$(systemd-analyze security --offline=yes --no-pager "$unit" 2>&1) || st=$?
	score=$(sed -n 's/^.*Overall exposure level for extresd\.service: \([0-9][0-9]*\.[0-9]\) .*$/\1/p' <<<"$out")
	[[ -n $score ]] || fail "systemd-analyze security (status $st) printed no exposure level: $out"
	it_log "exposure $score"
	awk -v s="$score" 'BEGIN { exit !(s <= 5.0) }' ||
		fail "$unit: exposure $score, over 5.0; what it counts:
$(grep '^- ' <<<"$out")"
}

# The unit, with the build's programs, a config in $WORK and $MNT for
# /run/extres, run by a real systemd: the host's own, booted as PID 1 of a
# PID, mount and cgroup namespace of the case's (systemd-root.sh), with a
# root of its own and a target that starts nothing. $WORK is shared with the
# host's namespace, so the mount the service makes there reaches the host,
# which checks it; it starts, reloads, comes back after a SIGKILL and stops.
SD_PID1=
SD_UNSHARE=
SD_CGROUP=
SD_ROOT=
SD_SHARED=

# sd_run CMD...: CMD inside the namespace, as a process of its systemd's.
sd_run() {
	timeout -s KILL 90 nsenter -t "$SD_PID1" -m -p -C -r -w timeout 60 "$@"
}

sd_ctl() {
	sd_run systemctl --no-pager "$@"
}

# 0 once the namespace's systemd has booted, or its unshare is gone.
sd_booted() {
	local state
	pid_alive "$SD_UNSHARE" || return 0
	[[ -z $SD_PID1 ]] && SD_PID1=$(cat "/proc/$SD_UNSHARE/task/$SD_UNSHARE/children" 2>/dev/null | awk '{ print $1 }')
	[[ -n $SD_PID1 && $(cat "/proc/$SD_PID1/comm" 2>/dev/null) == systemd ]] || return 1
	state=$(nsenter -t "$SD_PID1" -m -p -C -r -w timeout 5 systemctl is-system-running 2>/dev/null) || true
	[[ $state == running || $state == degraded ]]
}

sd_skip() {
	echo "SKIP: $IT_CASE: cannot boot systemd in a namespace: $*"
	exit 77
}

# Boot systemd (skip with the reason when it cannot): the units in
# $WORK/units, booting $1.
sd_boot() {
	local target=$1 cg2 cg
	for cg in unshare nsenter pivot_root findmnt /lib/systemd/systemd; do
		command -v "$cg" >/dev/null || sd_skip "$cg is not installed"
	done
	cg2=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
	[[ -n $cg2 ]] || sd_skip "no cgroup2 hierarchy is mounted"
	cg=$(awk -F: '$1 == "0" { print $3 }' /proc/self/cgroup)
	SD_CGROUP=${cg2%/}${cg%/}/extres-it.${WORK##*.}
	mkdir "$SD_CGROUP" 2>"$RUN_ERR" || sd_skip "mkdir $SD_CGROUP: $(cat "$RUN_ERR")"
	SD_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/extres-sdroot.XXXXXX")
	# A peer group of $WORK's own: the namespace's mounts under it come back.
	mount --bind "$WORK" "$WORK"
	SD_SHARED=$WORK
	mount --make-private "$WORK"
	mount --make-shared "$WORK"
	# The namespace's cgroup is the one unshare starts in.
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$SD_CGROUP" \
		unshare --pid --fork --kill-child --mount --cgroup --propagation unchanged \
		"$SRCDIR/tests/integration/systemd-root.sh" "$SD_ROOT" "$WORK" "$target" "$SRCDIR" "$BUILDDIR" \
		</dev/null >"$WORK/systemd.log" 2>&1 &
	SD_UNSHARE=$!
	( wait_until 60 "systemd's boot" sd_booted ) 2>/dev/null ||
		sd_skip "not booted within 60 s: $(tail -n 20 "$WORK/systemd.log")"
	# wait_until ran in a subshell: find PID 1 here.
	sd_booted || true
	pid_alive "$SD_UNSHARE" || sd_skip "its namespace ended: $(tail -n 20 "$WORK/systemd.log")"
	it_log "systemd $(sd_ctl --version | head -n 1) as PID 1 of a namespace, host PID $SD_PID1"
}

# Remove the cgroup $1 and those under it; 0 once it is gone (it goes once
# its last process has).
cgroup_removed() {
	find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
	[[ ! -d $1 ]]
}

# Take down everything sd_boot made, then require that nothing is left.
sd_cleanup() {
	local rc=$? mp left=
	set +e
	# SIGKILL to a PID namespace's init kills every process in it; without
	# one yet, unshare's --kill-child does.
	if [[ -n $SD_PID1 ]]; then
		kill -KILL "$SD_PID1" 2>/dev/null
	elif [[ -n $SD_UNSHARE ]]; then
		kill -KILL "$SD_UNSHARE" 2>/dev/null
	fi
	if [[ -n $SD_UNSHARE ]]; then
		poll_until 30 pid_gone "$SD_UNSHARE" ||
			left+=" process $SD_UNSHARE (unshare) alive 30 s after SIGKILL to PID 1;"
	fi
	if [[ -n $SD_SHARED ]]; then
		for mp in $(mounts_in_work); do
			umount -l "$mp" 2>/dev/null
		done
		umount -l "$WORK" 2>/dev/null
		is_mounted "$WORK" && left+=" a mount at $WORK;"
	fi
	if [[ -n $SD_ROOT ]]; then
		rmdir "$SD_ROOT" 2>/dev/null || left+=" $SD_ROOT: $(ls -A "$SD_ROOT" 2>&1 | head -n 3);"
	fi
	if [[ -n $SD_CGROUP && -d $SD_CGROUP ]]; then
		poll_until 10 cgroup_removed "$SD_CGROUP" ||
			left+=" cgroup $SD_CGROUP ($(cat "$SD_CGROUP/cgroup.procs" 2>&1 | head -n 3));"
	fi
	if [[ -n $left ]]; then
		printf 'FAIL: %s: left behind:%s\n' "$IT_CASE" "$left" >&2
		[[ $rc == 0 || $rc == 77 ]] && rc=1
	fi
	it_cleanup "$rc"
}

# The main PID of the unit $1 (in the namespace), once active with one.
sd_main_pid() {
	local pid
	[[ $(sd_ctl show -p ActiveState --value "$1") == active ]] || return 1
	pid=$(sd_ctl show -p MainPID --value "$1")
	[[ $pid -gt 0 ]] || return 1
	echo "$pid"
}

# 0 once $1 runs again with a main process other than $2, its tree at $MNT.
sd_restarted() {
	local pid
	pid=$(sd_main_pid "$1") || return 1
	[[ $pid != "$2" ]] && is_our_mount "$MNT" && [[ $(cat "$MNT/fpga/0/index" 2>/dev/null) == 5 ]]
}

case_systemd_unit() {
	it_setup
	local name=extresd.service sbindir pid pid2 t0 t1 st=0 status
	sbindir=$(sed -n 's|^ExecStart=\(/.*\)/extresd .*|\1|p' "$UNIT")
	[[ -n $sbindir ]] || fail "$UNIT: no ExecStart= with an absolute path"
	mkdir "$WORK/bin" "$WORK/units"
	printf '#!/bin/sh\necho 4,6\n' >"$WORK/bin/discover.sh"
	chmod 0755 "$WORK/bin/discover.sh"
	write_std_config "$WORK/extres.yaml" "$WORK/gpu.coord"
	sed -i 's/^external-resources: gpu;nic$/&;fpga/' "$WORK/extres.yaml"
	grep -qx 'external-resources: gpu;nic;fpga' "$WORK/extres.yaml" || fail "no fpga in $WORK/extres.yaml"
	printf '%s\n' 'external-resource.fpga.amount: 2' \
		'external-resource.fpga.driver: script' \
		"external-resource.fpga.param.discovery-script.path: $WORK/bin/discover.sh" \
		>>"$WORK/extres.yaml"
	sed -e "s|^ExecStart=$sbindir/extresd |ExecStart=$EXTRESD |" \
		-e "s|^ExecReload=$sbindir/extresctl |ExecReload=$EXTRESCTL |" \
		-e "s|/etc/extres/extres.yaml|$WORK/extres.yaml|g" \
		-e "s|/run/extres|$MNT|g" "$UNIT" >"$WORK/units/$name"
	# Boots with nothing started: the case starts the unit.
	printf '[Unit]\nDescription=extres test: nothing\n' >"$WORK/units/extres-it.target"
	# No journald in there: the service's stderr goes to a file the
	# failures show. LeakSanitizer stops the world with ptrace, which the
	# unit's seccomp filter refuses (EPERM): off in a sanitized build.
	mkdir "$WORK/units/$name.d"
	printf '[Service]\nStandardError=append:%s\n' "$WORK/unit.err" >"$WORK/units/$name.d/test.conf"
	if it_sanitized; then
		printf 'Environment=ASAN_OPTIONS=detect_leaks=0\n' >>"$WORK/units/$name.d/test.conf"
	fi
	DAEMON_ERR=$WORK/unit.err
	trap sd_cleanup EXIT
	sd_boot extres-it.target
	assert_eq inactive "$(sd_ctl show -p ActiveState --value "$name")" "state of $name after boot"

	# Type=notify: start returns once the tree is mounted.
	sd_ctl start "$name" 2>"$RUN_ERR" || st=$?
	[[ $st == 0 ]] || fail "systemctl start $name: status $st: $(sd_ctl status "$name" 2>&1)"
	pid=$(sd_main_pid "$name") || fail "$name is not active with a main process after start"
	status=$(sd_run cat "/proc/$pid/status")
	# The sandbox took hold, and no mount namespace of its own: systemd's.
	grep -qx 'Seccomp:[[:space:]]*2' <<<"$status" || fail "$name runs without a seccomp filter"
	grep -qx 'NoNewPrivs:[[:space:]]*1' <<<"$status" || fail "$name runs without NoNewPrivs"
	assert_eq "$(sd_run readlink /proc/1/ns/mnt)" "$(sd_run readlink "/proc/$pid/ns/mnt")" "mount namespace of $name"
	[[ $(readlink "/proc/$SD_PID1/ns/mnt") != "$(readlink /proc/self/ns/mnt)" ]] ||
		fail "the namespace's systemd shares the case's mount namespace"
	# CAP_SYS_ADMIN (21) only.
	assert_eq $((1 << 21)) "$((16#$(awk '/^CapBnd:/ { print $2 }' <<<"$status")))" \
		"capability bounding set of $name"
	# Seen from here, the host's namespace.
	is_our_mount "$MNT" || fail "$MNT is not an extresd mount in the host's namespace: '$(mount_info "$MNT")'"
	assert_file "$MNT/gpu/1/uuid" $'GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001\n'
	assert_file "$MNT/fpga/0/index" $'4\n'
	assert_file "$MNT/fpga/1/index" $'6\n'

	# ExecReload: the script runs again, the tree follows.
	printf '#!/bin/sh\necho 5,7\n' >"$WORK/bin/discover.sh"
	sd_ctl reload "$name" 2>"$RUN_ERR" || fail "systemctl reload $name failed: $(sd_ctl status "$name" 2>&1)"
	assert_file "$MNT/fpga/0/index" $'5\n'
	assert_file "$MNT/fpga/1/index" $'7\n'
	assert_eq "$pid" "$(sd_ctl show -p MainPID --value "$name")" "main process after reload"

	# SIGKILL: Restart=on-failure (RestartSec=5s) brings extresd back, which
	# replaces the dead mount in place; the host sees the new tree.
	sd_run kill -KILL "$pid" || fail "cannot kill $name's main process $pid"
	wait_until 60 "$name back with a new main process and its tree at $MNT" sd_restarted "$name" "$pid"
	pid2=$(sd_main_pid "$name") || fail "$name is not active after its restart"
	assert_eq 1 "$(sd_ctl show -p NRestarts --value "$name")" "restarts of $name"
	assert_file "$MNT/fpga/1/index" $'7\n'
	assert_file "$MNT/gpu/1/uuid" $'GPU-0f4c6d3e-1a2b-4c5d-8e9f-000000000001\n'
	[[ $(awk -v mp="$MNT" '$5 == mp' /proc/self/mountinfo | wc -l) == 1 ]] ||
		fail "$MNT after the restart: not one mount: $(awk -v mp="$MNT" '$5 == mp' /proc/self/mountinfo)"
	it_log "restarted: main process $pid, then $pid2"

	# Stop: unmounted, devices released; the bound only catches a hang.
	t0=$(date +%s)
	sd_ctl stop "$name" || fail "systemctl stop $name failed"
	t1=$(date +%s)
	[[ $((t1 - t0)) -le 20 ]] || fail "systemctl stop $name took $((t1 - t0)) s"
	! is_mounted "$MNT" || fail "$MNT still mounted after systemctl stop: $(mount_info "$MNT")"
	assert_eq "" "$(coord_lines "$WORK/gpu.coord")" "coordination file after systemctl stop"
	assert_eq inactive "$(sd_ctl show -p ActiveState --value "$name")" "state of $name after stop"
}

# ---------------------------------------------------------------------------
# Kubernetes manifests

# What validates them, from the npm registry (pinned: a new schema is a
# deliberate change).
K8S_NPM_PACKAGES='kubernetes-models@4.5.1 @kubernetes/client-node@1.4.0 yaml@2.9.1'
K8S_MODULES=

# Install K8S_NPM_PACKAGES once per build tree into K8S_MODULES; skip (77)
# without node and npm, or when the registry cannot be reached.
k8s_modules() {
	local dir=$BUILDDIR/tests/k8s-npm fd
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		echo "SKIP: $IT_CASE: node or npm is not installed"
		exit 77
	fi
	mkdir -p "$dir"
	# Two cases may install at once.
	exec {fd}>"$dir.lock"
	flock -w 280 "$fd" || fail "$dir.lock: still locked after 280 s"
	if [[ $(cat "$dir/installed" 2>/dev/null) != "$K8S_NPM_PACKAGES" ]]; then
		rm -f "$dir/installed"
		# shellcheck disable=SC2086 # a list of packages
		if ! timeout 240 npm install --no-save --no-audit --no-fund --no-package-lock \
			--prefix "$dir" $K8S_NPM_PACKAGES >"$WORK/npm.log" 2>&1; then
			echo "SKIP: $IT_CASE: cannot install $K8S_NPM_PACKAGES from npm: $(tail -n 5 "$WORK/npm.log")"
			exit 77
		fi
		echo "$K8S_NPM_PACKAGES" >"$dir/installed"
	fi
	exec {fd}>&-
	K8S_MODULES=$dir
}

# k8s_validate MANIFEST...: the validator's output; its status in $?.
k8s_validate() {
	node "$SRCDIR/tests/integration/k8s-validate.mjs" "$K8S_MODULES" "$@" 2>&1
}

# Every manifest of conf/kubernetes is valid against the Kubernetes OpenAPI
# schema, strictly (an unknown field is an error); and the validator
# catches what it should.
case_kubernetes_schema() {
	it_setup_nofuse
	local out st=0 ds=$SRCDIR/conf/kubernetes/extres-daemonset.yaml
	k8s_modules
	out=$(k8s_validate "$SRCDIR"/conf/kubernetes/*.yaml) || st=$?
	[[ $st == 0 && -z $out ]] || fail "conf/kubernetes (status $st): $out"

	# A misspelt field, a bad quantity, a wrong type: each named.
	sed 's/mountPropagation: Bidirectional/mountPropogation: Bidirectional/' "$ds" >"$WORK/field.yaml"
	sed 's/memory: 128Mi$/memory: 128MiB/' "$ds" >"$WORK/quantity.yaml"
	sed 's/periodSeconds: 10$/periodSeconds: ten/' "$ds" >"$WORK/type.yaml"
	for f in field quantity type; do
		! cmp -s "$ds" "$WORK/$f.yaml" || fail "the $f edit changed nothing in $ds"
	done
	st=0
	out=$(k8s_validate "$WORK/field.yaml") || st=$?
	assert_eq 1 "$st" "validator status on a misspelt field"
	assert_contains "$out" "$WORK/field.yaml: document 1 (DaemonSet/extresd): .spec.template.spec.containers[0].volumeMounts[2].mountPropogation: unknown field" "validator on a misspelt field"
	st=0
	out=$(k8s_validate "$WORK/quantity.yaml") || st=$?
	assert_eq 1 "$st" "validator status on a bad quantity"
	assert_contains "$out" '/spec/template/spec/containers/0/resources/limits/memory must match format "quantity"' "validator on a bad quantity"
	st=0
	out=$(k8s_validate "$WORK/type.yaml") || st=$?
	assert_eq 1 "$st" "validator status on a wrong type"
	assert_contains "$out" '/spec/template/spec/containers/0/readinessProbe/periodSeconds must be integer' "validator on a wrong type"
}

# The DaemonSet's promises (extresd(8), KUBERNETES): scheduled by NFD's PCI
# vendor labels or the override label, Guaranteed QoS, privileged only as
# Bidirectional propagation requires, read-only root, no API token.
case_kubernetes_policy() {
	it_setup_nofuse
	local out st=0
	k8s_modules
	out=$(node "$SRCDIR/tests/integration/k8s-policy.mjs" "$K8S_MODULES" \
		"$SRCDIR/conf/kubernetes/extres-daemonset.yaml" 2>&1) || st=$?
	[[ $st == 0 && -z $out ]] || fail "extres-daemonset.yaml (status $st): $out"
}

if [[ ${1:-} == --in-namespace ]]; then
	ns_main "$2" "$3"
else
	it_main "$@"
fi
