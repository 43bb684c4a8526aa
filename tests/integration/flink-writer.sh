#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Takes devices through a coordination file the way Flink's GPU discovery
# script does in coordination mode (gpu-discovery-common.sh), so that the
# integration cases can check that extres and Flink share one file safely.
#
# usage: flink-writer.sh FILE OWNER_PID AMOUNT INDEX...
#        flink-writer.sh --reclaim FILE INDEX
#
# Under an exclusive flock on FILE (opened with `<>`, created if missing, as
# Flink does), picks the first AMOUNT of INDEX... not recorded for a live PID
# and appends one `INDEX OWNER_PID` line each: two fields, no start time.
# Prints the picked indexes joined by ',' (Flink's discovery output) and
# exits 0; with fewer free than AMOUNT it prints why on stderr, writes
# nothing and exits 1. Lines of dead owners are left in place: Flink removes
# them with `sed -i`, which replaces the file under waiting lockers, and this
# helper must not be the cause of a failure it is meant to find.
#
# With --reclaim, frees INDEX the way Flink's script frees a dead owner's
# device: under the same lock, `sed -i "/INDEX /d"`, which deletes every line
# with INDEX followed by a space anywhere in it, and replaces the file by a
# rename.
set -eu -o pipefail

if [[ ${1:-} == --reclaim ]]; then
	[[ $# == 3 ]] || { echo "usage: ${0##*/} --reclaim FILE INDEX" >&2; exit 2; }
	exec {lock}<>"$2"
	flock -x "$lock"
	sed -i "/${3} /d" "$2"
	exit 0
fi

if [[ $# -lt 3 ]]; then
	echo "usage: ${0##*/} FILE OWNER_PID AMOUNT INDEX..." >&2
	exit 2
fi
file=$1 owner=$2 amount=$3
shift 3
[[ $owner =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: bad owner pid '$owner'" >&2; exit 2; }
[[ $amount =~ ^[1-9][0-9]*$ ]] || { echo "${0##*/}: bad amount '$amount'" >&2; exit 2; }

# Flink's liveness test is `ps -p PID`, under which a zombie still counts.
alive() {
	kill -0 "$1" 2>/dev/null
}

exec {lock}<>"$file"
flock -x "$lock"

declare -A taken=()
while read -r index pid _; do
	[[ -n ${index:-} && ${pid:-} =~ ^[1-9][0-9]*$ ]] || continue
	if alive "$pid"; then
		taken[$index]=1
	fi
done <"$file"

picked=()
for index in "$@"; do
	[[ ${#picked[@]} -lt $amount ]] || break
	[[ -z ${taken[$index]:-} ]] && picked+=("$index")
done
if [[ ${#picked[@]} -lt $amount ]]; then
	echo "${0##*/}: wanted $amount, found ${#picked[@]} free in $file" >&2
	exit 1
fi
for index in "${picked[@]}"; do
	echo "$index $owner" >>"$file"
done
(IFS=,; echo "${picked[*]}")
