#!/bin/bash
# SPDX-License-Identifier: MIT
#
# For scripts/bench: take one GPU through a coordination file the way
# Flink's coordinating discovery scripts go about it (written here from
# their documented behaviour), as the baseline for `extresctl run`.
#
# usage: flink-style-alloc.sh FILE INDEX...
#
# Under an exclusive flock on FILE: forget the lines of owners that are
# gone, record the first INDEX nobody holds as `INDEX PID` for this
# script's own PID (so that the next run finds it free again), print it.
# Exit 1 when none is free.
set -eu
file=$1
shift
exec {fd}<>"$file"
flock -x "$fd"
live=()
declare -A held=()
while read -r index pid _; do
	[[ -n ${pid:-} ]] || continue
	if kill -0 "$pid" 2>/dev/null; then
		live+=("$index $pid")
		held[$index]=1
	fi
done <"$file"
for index in "$@"; do
	if [[ -z ${held[$index]:-} ]]; then
		{ [[ ${#live[@]} -eq 0 ]] || printf '%s\n' "${live[@]}"; echo "$index $$"; } >"$file"
		echo "$index"
		exit 0
	fi
done
echo "${0##*/}: no free index in $file" >&2
exit 1
