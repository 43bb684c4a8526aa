#!/bin/bash
# SPDX-License-Identifier: MIT
# The scale mode of scripts/bench (scripts/bench --scale [INFOS[xPROPS]]):
# a static resource of INFOS devices with PROPS properties each, served by
# extresd and laid out on tmpfs, in one run. Run through scripts/bench,
# which checks root and the build and passes: BUILD_DIR INFOS PROPS.
set -euo pipefail

readonly prog="bench --scale"
build_dir=$1
infos=$2
props=$3
readonly reload_count=100
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
helper=$script_dir/bench_scale.py
extresd=$build_dir/fs/extresd

die() {
	echo "$prog: $*" >&2
	exit 1
}

command -v python3 >/dev/null ||
	die "python3 is needed to write the configs and time reloads (apt-get install python3-minimal)"

tmp=
daemon_pid=
mnt=
ref=

stop_daemon() {
	local i
	[ -n "$daemon_pid" ] || return 0
	kill -TERM "$daemon_pid" 2>/dev/null || true
	for ((i = 0; i < 200; i++)); do
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$daemon_pid" 2>/dev/null || true
	wait "$daemon_pid" 2>/dev/null || true
	daemon_pid=
	if mountpoint -q "$mnt" 2>/dev/null || ! stat "$mnt" >/dev/null 2>&1; then
		umount -l "$mnt" 2>/dev/null || true
	fi
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	stop_daemon
	if [ -n "$ref" ] && mountpoint -q "$ref" 2>/dev/null; then
		umount "$ref" 2>/dev/null || umount -l "$ref" 2>/dev/null || true
	fi
	if [ -n "$tmp" ]; then
		if mountpoint -q "$mnt" 2>/dev/null || mountpoint -q "$ref" 2>/dev/null; then
			echo "$prog: could not unmount everything; left $tmp in place" >&2
		else
			rm -rf --one-file-system "$tmp"
		fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

tmp=$(mktemp -d /tmp/extres-bench-scale.XXXXXX)
config=$tmp/extres.yaml
mnt=$tmp/mnt
ref=$tmp/tmpfs
log=$tmp/extresd.log
mkdir "$mnt" "$ref"
files=$((infos * props))
dirs=$((infos + 1)) # gpu/ and one per info
probe_file=$mnt/gpu/0/index

now_ns() { date +%s%N; }

# Starts extresd (extra arguments first, e.g. -d) and waits for the first
# read; sets start_ms, from start to that read. (Not in $(...): the daemon's
# pid must stay in this shell.)
start_daemon() {
	local i t0
	t0=$(now_ns)
	"$extresd" -f "$@" -c "$config" "$mnt" >"$log" 2>&1 &
	daemon_pid=$!
	for ((i = 0; i < 6000; i++)); do
		kill -0 "$daemon_pid" 2>/dev/null || {
			daemon_pid=
			tail -n 20 "$log" >&2
			die "extresd exited before serving $mnt"
		}
		if [ "$(cat "$probe_file" 2>/dev/null)" = 0 ]; then
			start_ms=$((($(now_ns) - t0) / 1000000))
			return 0
		fi
		sleep 0.01
	done
	die "extresd did not serve $probe_file within 60 s"
}

rss_kib() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$daemon_pid/status"; }

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# ms that CMD... takes.
time_ms() {
	local t0
	t0=$(now_ns)
	"$@" >/dev/null
	echo $((($(now_ns) - t0) / 1000000))
}

find_files() { find "$1" -type f | wc -l; }
cat_all() { find "$1" -type f -print0 | xargs -0 cat | wc -c; }

# The requests extresd logged (-d) since line $1, per opcode: "OP COUNT...".
requests_since() {
	tail -n +"$(($1 + 1))" "$log" | sed -n 's/.*opcode: \([A-Z_]*\) .*/\1/p' |
		sort | uniq -c | awk '{ printf "%s%s=%d", (NR > 1 ? " " : ""), $2, $1 }'
}
count_op() { # REQUESTS OP
	tr ' ' '\n' <<<"$1" | awk -F= -v op="$2" '$1 == op { n = $2 } END { print n + 0 }'
}

echo "extres bench --scale: $infos infos x $props properties = $files files, $reload_count reloads"
echo "kernel $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "build $build_dir"
echo

echo "writing the config and the tmpfs tree ..." >&2
python3 "$helper" config "$infos" "$props" 0 "$config"
config_bytes=$(stat -c %s "$config")
mount -t tmpfs -o mode=0755 extres-bench-scale "$ref" || die "cannot mount tmpfs on $ref"
python3 "$helper" tree "$infos" "$props" "$ref"
tmpfs_bytes=$(cat_all "$ref/gpu")

echo "start, memory and reloads ..." >&2
start_daemon
got=$(find_files "$mnt/gpu")
[ "$got" -eq "$files" ] || die "the mount holds $got files, wanted $files"
got_bytes=$(cat_all "$mnt/gpu")
[ "$got_bytes" -eq "$tmpfs_bytes" ] || die "the mount holds $got_bytes bytes, tmpfs $tmpfs_bytes"
rss_start=$(rss_kib)
reload_out=$(python3 "$helper" reloads "$daemon_pid" "$config" "$infos" "$props" \
	"$mnt" "$reload_count") || { tail -n 20 "$log" >&2; die "the reload measurement failed"; }
sleep 1 # retired trees may be freed after the last reader
rss_reloads=$(rss_kib)
read -r _ _ reload_med reload_min reload_max <<<"$reload_out"

echo "listings and first reads, timed ..." >&2
t=()
for d in "$mnt/gpu" "$ref/gpu"; do
	drop_caches
	t+=("$(time_ms find_files "$d")")
	t+=("$(time_ms find_files "$d")")
	t+=("$(time_ms cat_all "$d")")
done
stop_daemon

echo "the same, counting requests (-d) ..." >&2
start_daemon -d
drop_caches
n0=$(wc -l <"$log")
find_files "$mnt/gpu" >/dev/null
find_reqs=$(requests_since "$n0")
n0=$(wc -l <"$log")
cat_all "$mnt/gpu" >/dev/null
cat_reqs=$(requests_since "$n0")
stop_daemon

cold_find_total=0
for kv in $find_reqs; do cold_find_total=$((cold_find_total + ${kv#*=})); done

awk -v infos="$infos" -v props="$props" -v files="$files" -v dirs="$dirs" \
	-v cbytes="$config_bytes" -v start="$start_ms" \
	-v rs="$rss_start" -v rr="$rss_reloads" -v nrel="$reload_count" \
	-v rmed="$reload_med" -v rmin="$reload_min" -v rmax="$reload_max" \
	-v fcx="${t[0]}" -v fwx="${t[1]}" -v cx="${t[2]}" \
	-v fct="${t[3]}" -v fwt="${t[4]}" -v ct="${t[5]}" \
	-v fr="$cold_find_total" -v reads="$(count_op "$cat_reqs" READ)" 'BEGIN {
	printf "config: %d bytes; start to first read: %d ms\n\n", cbytes, start
	printf "%-46s %12s %12s %8s\n", "what", "extres", "tmpfs", "ratio"
	printf "%-46s %9.1f MB %12s %8s\n", "daemon RSS after start", rs / 1024, "-", "-"
	printf "%-46s %9.1f MB %12s %7.2fx\n", "daemon RSS after " nrel " reloads (vs start)",
		rr / 1024, "-", rr / rs
	printf "%-46s %9.1f ms %12s %8s\n", "SIGHUP -> changed value readable (median)",
		rmed / 1e6, "-", "-"
	printf "%-46s %9.1f ms\n", "  min", rmin / 1e6
	printf "%-46s %9.1f ms\n", "  max", rmax / 1e6
	printf "%-46s %9d ms %9d ms %7.2fx\n", "find -type f after drop_caches", fcx, fct, fcx / fct
	printf "%-46s %9d ms %9d ms %7.2fx\n", "find -type f, warm", fwx, fwt, fwx / fwt
	printf "%-46s %9d ms %9d ms %7.2fx\n", "first cat of all " files " files", cx, ct, cx / ct
	printf "%-46s %12d %12s %8s\n", "READ requests during that cat (-d)", reads, "-", "-"
	printf "%-46s %12.2f %12s %8s\n", "requests per directory, cold find (-d)", fr / dirs, "-", "-"
}'
echo
echo "cold find requests (-d), $dirs directories: $find_reqs"
echo "first cat requests (-d): ${cat_reqs:-none}"
