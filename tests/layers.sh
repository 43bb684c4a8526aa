#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The layers of fs/ (README "Architecture") as a test: each folder includes
# only the folders below it, libfuse only in the daemon's FUSE files, and
# drivers see only the ABI. No bound on a file's length: a file holds one
# concept, whole.
#
# usage: layers.sh SRCDIR
set -u
src=${1:?usage: layers.sh SRCDIR}
cd "$src/fs" || exit 1

declare -A allowed=(
	[base]="base"
	[os]="os base"
	[config]="config os base"
	[host]="host config os base"
	[alloc]="alloc host config os base"
	[views]="views alloc host config os base"
	[lease]="lease views alloc host config os base"
	[tree]="tree views alloc host config base"
	[daemon]="daemon tree lease views alloc host config os base"
	[ctl]="ctl lease views alloc host config os base"
)
bad=0
for layer in "${!allowed[@]}"; do
	for f in "$layer"/*.[ch]; do
		while IFS= read -r inc; do
			dir=${inc%%/*}
			[[ " ${allowed[$layer]} " == *" $dir "* ]] && continue
			echo "fs/$f includes \"$inc\": $layer may include only ${allowed[$layer]}"
			bad=1
		done < <(sed -n 's/^#include "\([a-z_]*\/[a-z_.]*\)".*/\1/p' "$f")
	done
done
for f in */*.[ch]; do
	[[ -d ${f%%/*} && -n ${allowed[${f%%/*}]:-} ]] ||
		{ echo "fs/$f is in no layer"; bad=1; }
	case $f in
	daemon/main.c | daemon/fuse_ops.[ch] | daemon/served.[ch] | daemon/polled.[ch] | daemon/fuse_log.[ch] | daemon/transport.[ch]) ;;
	*)
		if grep -q '^#include <fuse' "$f"; then
			echo "fs/$f includes libfuse: only daemon/main.c, daemon/fuse_ops.*, daemon/served.*, daemon/polled.* daemon/fuse_log.* and daemon/transport.* may"
			bad=1
		fi
		;;
	esac
done
# Drivers see the ABI header and drivers/lib/, never fs/.
for f in ../drivers/*.[ch] ../drivers/lib/*.[ch]; do
	if grep -qE '^#include "(base|os|config|host|alloc|lease|views|tree|daemon|ctl)/' "$f"; then
		echo "${f#../} includes a header of fs/: drivers may include only <extres/...> and lib/"
		bad=1
	fi
done
# Nothing in fs/ names a device vendor, its runtime or a vendor's driver:
# what a device needs comes from its driver through the ABI
# (include/extres/driver.h), and the build names the driver and script
# Flink's GPU factory stands for (meson.build). Whole words, code and
# comments alike, in any case.
vendor='nvidia|nvidia-smi|cuda|nvml|mig|rocm|rocr|rocminfo|hip|amd|amdgpu|kfd|gpu-discovery'
# The one exception, as FILE:WORDS-ON-THE-LINE: sharing-strategy mps is
# NVIDIA's Multi-Process Service by name (the key NVIDIA's Kubernetes device
# plugin uses); the variables its clients read and its default directories
# are that service's contract, which no driver declares (yet).
allowed_vendor=(
	'config/config.h:NVIDIA.s defaults for the MPS|/nvidia-mps"'
	'alloc/share.[ch]:CUDA_MPS_|CUDA.s MPS client'
)
while IFS= read -r hit; do
	f=${hit%%:*}
	num=${hit#*:}
	num=${num%%:*}
	line=${hit#*:*:}
	excused=0
	for a in "${allowed_vendor[@]}"; do
		# shellcheck disable=SC2053 # the file part is a glob
		[[ $f == ${a%%:*} ]] && [[ $line =~ ${a#*:} ]] && excused=1
	done
	((excused)) && continue
	echo "fs/$f:$num names a vendor or a vendor's driver (take it from the driver through the ABI):$line"
	bad=1
done < <(grep -niE "(^|[^a-z0-9])($vendor)([^a-z0-9]|$)" -- */*.[ch])
# common/include/ holds header-only helpers that fs/ and drivers share: it
# includes neither.
for f in ../common/include/*.h; do
	if grep -q '^#include "' "$f"; then
		echo "${f#../} includes a header of extres: common/include/ may include only system headers"
		bad=1
	fi
done
# The headers of fs/ that bring a system header matching $1 (an ERE after
# "#include <"), directly or through another header, space-separated.
headers_bringing() {
	local found h inc grew=1
	found=" $(grep -lE "^#include <$1" -- */*.h | tr '\n' ' ')"
	while ((grew)); do
		grew=0
		for h in */*.h; do
			[[ $found == *" $h "* ]] && continue
			while IFS= read -r inc; do
				if [[ $found == *" $inc "* ]]; then
					found+="$h "
					grew=1
					break
				fi
			done < <(sed -n 's/^#include "\([a-z_]*\/[a-z_.]*\)".*/\1/p' "$h")
		done
	done
	echo "$found"
}

# Whether fs/$1 includes a header of fs/ listed in $2; says which, and
# that $3.
includes_one_of() {
	local inc hit=1
	while IFS= read -r inc; do
		[[ $2 == *" $inc "* ]] || continue
		echo "fs/$1 includes \"$inc\", which $3"
		hit=0
	done < <(sed -n 's/^#include "\([a-z_]*\/[a-z_.]*\)".*/\1/p' "$1")
	return $hit
}

# libyaml stays inside fs/config, and libfuse in the daemon's FUSE files
# (the daemon's jobs build and are unit-tested without it): no other file
# includes them, nor a header of fs/ that brings them along.
yaml_headers=" $(headers_bringing 'yaml\.h>')"
fuse_headers=" $(headers_bringing 'fuse')"
for f in */*.[ch]; do
	if [[ $f != config/* ]]; then
		if grep -q '^#include <yaml.h>' "$f"; then
			echo "fs/$f includes <yaml.h>: libyaml's types stay in fs/config (its own .c files and private headers)"
			bad=1
		fi
		includes_one_of "$f" "$yaml_headers" "brings <yaml.h>: libyaml's types stay in fs/config" && bad=1
	fi
	case $f in
	daemon/main.c | daemon/fuse_ops.[ch] | daemon/served.[ch] | daemon/polled.[ch] | daemon/fuse_log.[ch] | daemon/transport.[ch]) ;;
	*) includes_one_of "$f" "$fuse_headers" "brings libfuse: only the daemon's FUSE files may" && bad=1 ;;
	esac
done
# A header's include guard is named after it (EXTRES_..._NAME_H for
# NAME.h), so that a guard copied with a header's text shows.
for h in */*.h ../drivers/*.h ../drivers/lib/*.h ../include/extres/*.h; do
	name=$(basename "$h" .h | tr 'a-z' 'A-Z')
	guard=$(sed -n 's/^#ifndef \([A-Za-z0-9_]*\)$/\1/p' "$h" | head -n 1)
	if [[ $guard != "${name}_H" && $guard != *"_${name}_H" ]]; then
		[[ $h == ../* ]] && h=${h#../} || h=fs/$h
		echo "$h has the include guard '$guard': name it after the file (..._${name}_H)"
		bad=1
	fi
done
# A path that a comment names exists, so that a file that moved leaves no
# comment pointing at its old place: fs/DIR/NAME.[ch], and DIR/NAME.[ch]
# for a folder DIR of fs/. Linux's fs/fuse/ is not ours.
while IFS=: read -r file line path; do
	case $path in
	fs/fuse/*) continue ;;
	fs/*) rel=${path#fs/} ;;
	*)
		[[ -d ${path%%/*} ]] || continue
		rel=$path
		;;
	esac
	[[ $file == ../* ]] && file=${file#../} || file=fs/$file
	if [[ ! -e $rel ]]; then
		echo "$file:$line names $path in a comment, and there is no fs/$rel"
		bad=1
	fi
done < <(awk '
	/^[ \t]*#[ \t]*include/ { next }
	/^[ \t]*(\/\*|\*)/ || /\/\*/ || /\/\// {
		s = $0
		while (match(s, /(^|[^A-Za-z0-9_.\/-])(fs\/)?[a-z_]+\/[A-Za-z0-9_]+\.[ch]([^A-Za-z0-9_]|$)/)) {
			t = substr(s, RSTART, RLENGTH)
			s = substr(s, RSTART + RLENGTH)
			match(t, /(fs\/)?[a-z_]+\/[A-Za-z0-9_]+\.[ch]/)
			print FILENAME ":" FNR ":" substr(t, RSTART, RLENGTH)
		}
	}' */*.[ch] ../drivers/*.[ch] ../drivers/lib/*.[ch] ../include/extres/*.h \
	../tests/unit/*.[ch] ../tests/fuzz/*.[ch])
((bad == 0)) && echo "layers: ok"
exit "$bad"
