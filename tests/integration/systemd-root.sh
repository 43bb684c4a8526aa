#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Runs as PID 1 of a fresh PID, mount and cgroup namespace (deploy.sh's
# systemd-unit case starts it with unshare): builds a root of its own at
# ROOT and execs the host's systemd there as the namespace's init, in
# container mode, booting only TARGET; the units in SHARED/units are
# copied to its /run/systemd/system. Nothing of the host's units runs: the host's /usr
# and /etc are there read-only, /run, /tmp, /var and /dev are fresh, and
# /proc, /sys and /sys/fs/cgroup (cgroup2, rooted at the namespace's
# cgroup) are the namespace's own.
#
# SHARED (the case's work dir) is a mount the host made shared in a peer
# group of its own: bound at the same path in the root, the FUSE mount
# systemd's service makes under it reaches the host. Every other mount made
# here stays here: the mount holding ROOT's directory is made private
# first, and the root's binds before anything is mounted on them.
#
# Each RO_DIR (the source and build trees) is there read-only at its path.
#
# usage: systemd-root.sh ROOT SHARED TARGET [RO_DIR...]   (stdout, stderr: a log)

set -eu -o pipefail
root=$1 shared=$2 target=$3
shift 3

[[ $$ == 1 ]] || { echo "systemd-root.sh: PID $$, not 1 of a PID namespace" >&2; exit 1; }
# Before mounting anything: the mount holding ROOT's directory may be
# shared with the host's namespace.
mount --make-private "$(findmnt -n -o TARGET --target "$root")"
mount -t tmpfs -o mode=0755 extres-root "$root"
for d in usr etc bin sbin lib lib32 lib64 libx32; do
	if [[ -L /$d ]]; then
		ln -s "$(readlink "/$d")" "$root/$d"
	elif [[ -d /$d ]]; then
		mkdir "$root/$d"
		mount --rbind "/$d" "$root/$d"
	fi
done
ro=(/usr /etc)
# Sorted, a directory comes before those inside it, which it brings.
while read -r d; do
	[[ -d $root$d ]] && continue
	mkdir -p "$root$d"
	mount --rbind "$d" "$root$d"
	ro+=("$d")
done < <(printf '%s\n' "$@" | sort -u)
mount --make-rprivate "$root"
for d in "${ro[@]}"; do
	mount -o remount,bind,ro "$root$d"
done

# /etc is the host's, read-only: only what systemd reads at boot is its own.
mkdir -p "$root/run/extres-etc"
printf '%s\n' 'ID=extres-test' 'NAME=extres-test' >"$root/run/extres-etc/os-release"
head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$root/run/extres-etc/machine-id"
echo >>"$root/run/extres-etc/machine-id"
for f in os-release machine-id; do
	if [[ -e $root/etc/$f || -L $root/etc/$f ]] && [[ ! -L $root/etc/$f ]]; then
		mount --bind "$root/run/extres-etc/$f" "$root/etc/$f"
	fi
done
# os-release is a link on Debian (../usr/lib/os-release): shadow where it points.
if [[ -L $root/etc/os-release && -f $root/usr/lib/os-release ]]; then
	mount --bind "$root/run/extres-etc/os-release" "$root/usr/lib/os-release"
fi

mkdir -p "$root/proc" "$root/sys" "$root/dev" "$root/tmp" "$root/var/tmp" "$root/var/log" "$root/root"
chmod 1777 "$root/tmp" "$root/var/tmp"
mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
mount -t sysfs -o nosuid,nodev,noexec,ro sysfs "$root/sys"
mount -t cgroup2 -o nosuid,nodev,noexec cgroup2 "$root/sys/fs/cgroup"
mount -t tmpfs -o mode=0755,nosuid extres-dev "$root/dev"
mknod -m 0666 "$root/dev/null" c 1 3
mknod -m 0666 "$root/dev/zero" c 1 5
mknod -m 0666 "$root/dev/full" c 1 7
mknod -m 0666 "$root/dev/random" c 1 8
mknod -m 0666 "$root/dev/urandom" c 1 9
mknod -m 0666 "$root/dev/tty" c 5 0
mknod -m 0666 "$root/dev/fuse" c 10 229
mkdir "$root/dev/pts" "$root/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
ln -s pts/ptmx "$root/dev/ptmx"
mount -t tmpfs -o mode=1777,nosuid,nodev extres-shm "$root/dev/shm"
# The run dir is already on the root tmpfs; systemd wants a mount there.
mount -t tmpfs -o mode=0755,nosuid,nodev extres-run "$root/run"
mkdir -p "$root/run/systemd/system"
cp -r "$shared"/units/* "$root/run/systemd/system/"

# Last: the way back to the host, at its own path.
mkdir -p "$root$shared"
mount --bind "$shared" "$root$shared"

cd "$root"
mkdir .old
pivot_root . .old
umount -l /.old
rmdir /.old
export container=extres-test
exec /lib/systemd/systemd --system --unit="$target" --log-target=console --show-status=0
