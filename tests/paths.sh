#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The default config file and mount point are set once, by meson
# (-Dconfig_file, -Dmountpoint, into extres_build.h and the systemd unit);
# the README and the man pages must name the same ones.
#
# usage: paths.sh SRCDIR BUILDDIR
set -u
src=${1:?usage: paths.sh SRCDIR BUILDDIR} build=${2:?usage: paths.sh SRCDIR BUILDDIR}
def() { sed -n "s/^#define $1 \"\\(.*\\)\"\$/\\1/p" "$build/extres_build.h"; }
config=$(def EXTRES_DEFAULT_CONFIG)
mountpoint=$(def EXTRES_DEFAULT_MOUNTPOINT)
bad=0
[[ -n $config && -n $mountpoint ]] || { echo "no defaults in $build/extres_build.h"; exit 1; }
for f in README.md man/extresd.8 man/extresctl.8 conf/extresd.service; do
	case $f in conf/*) path=$build/$f ;; *) path=$src/$f ;; esac
	for want in "$config" "$mountpoint"; do
		if ! grep -qF -- "$want" "$path"; then
			echo "$f does not name the default $want"
			bad=1
		fi
	done
done
if grep -q '@[a-z]*@' "$build/conf/extresd.service"; then
	echo "conf/extresd.service: a placeholder was not filled in: $(grep -o '@[a-z]*@' "$build/conf/extresd.service" | head -n 1)"
	bad=1
fi
((bad == 0)) && echo "paths: $config, $mountpoint"
exit "$bad"
